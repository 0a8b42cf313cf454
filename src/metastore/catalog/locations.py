"""The location policy: which places the server may create, move, delete and read on a client's behalf.

Every location a client sends is hostile until checked. A location is normalized (its path's `.` and `..`
resolved, its scheme checked) before it is stored or touched; the server creates, moves and deletes only
under its allowed roots (default: the warehouse), and reads Iceberg metadata only under those and its read
roots. Locations on file systems this server has no client for (hdfs:, s3a:, ...) are recorded, never touched.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Iterable, Sequence

from ..core.errors import InvalidObject

# Schemes a location may have. Others (javascript:, http:, ...) are refused when stored.
KNOWN_SCHEMES = frozenset({
    "file", "hdfs", "viewfs", "s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "adl", "oss", "cos",
    "cosn", "ofs", "o3fs", "jfs", "alluxio", "pvfs2", "har", "pfile", "maprfs", "obs", "tos", "lakefs", "webhdfs",
    "swebhdfs",
})

# A location needs work when it has a control character, a `.` or `..` segment, an empty segment after the
# scheme's own `//`, or a trailing slash; most locations have none and are returned as given.
# the same for a bare path (a single leading slash is the root; `//x` is untidy)
_UNTIDY_PATH = re.compile(r"/\.\.?(?:/|$)|//|./$")
_UNTIDY = re.compile(r"[\x00-\x1f\x7f]|/\.\.?(?:/|$)|^//|[^:/]//|:///?/|./$")


def _both(paths: Iterable[str]) -> list[str]:
    """Normalized local paths as configured and resolved (the same directory may be written either way)."""
    out: list[str] = []
    for p in paths:
        path = posixpath.normpath(os.path.abspath(local_path(p) or p))
        for x in (path, os.path.realpath(path)):
            if x not in out:
                out.append(x)
    return out


def split_roots(text: str | None) -> list[str]:
    return [r.strip() for r in (text or "").split(",") if r.strip()]


def scheme_of(location: str) -> str | None:
    """The lower-cased scheme of a location (`file` for a bare absolute path), None for a relative one."""
    if location.startswith("/"):
        return "file"
    head, colon, _ = location.partition(":")
    if not colon or not head or not (head[0].isalpha() and all(c.isalnum() or c in "+-." for c in head)):
        return None
    return head.lower()


def local_path(location: str | None) -> str | None:
    """The local path of a location (`/x`, `file:/x`, `file:///x`, `file://localhost/x`), None otherwise.

    A location is a Hadoop path string, not an encoded URI: nothing is percent-decoded."""
    if not location:
        return None
    if location.startswith("/"):
        return location
    if location[:5].lower() != "file:":
        return None
    rest = location[5:]
    if rest.startswith("//"):  # file://authority/path: only the local host's
        authority, slash, path = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            return None
        return "/" + path if slash else "/"
    return rest if rest.startswith("/") else None


def normalize(location: str, what: str = "location") -> str:
    """The location with its path's `.`, `..` and repeated slashes resolved; local ones as `file:/path`.

    Raises InvalidObject for a location that is not absolute, has an unknown scheme, contains control
    characters, or whose `..` climbs above its root."""
    if not isinstance(location, str) or not location.strip():
        raise InvalidObject(f"{what} is empty")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in location):
        raise InvalidObject(f"{what} contains control characters")
    if not location.isascii() and not _encodable(location):
        raise InvalidObject(f"{what} is not valid Unicode text (a lone surrogate)")
    scheme = scheme_of(location)
    if scheme is None:
        raise InvalidObject(f"{what} {_shown(location)} is not an absolute location with a scheme (file:/..., hdfs://...)")
    if scheme not in KNOWN_SCHEMES:
        raise InvalidObject(f"{what} {_shown(location)} has an unsupported scheme {_shown(scheme)}")
    path = local_path(location)
    if scheme == "file":
        if path is None:
            raise InvalidObject(f"{what} {_shown(location)} is not on this host")
        return "file:" + _clean(path, location, what)
    # scheme://authority/path: the path part is cleaned, the authority kept as given
    rest = location[len(scheme) + 1:]
    if rest.startswith("//"):
        authority, slash, p = rest[2:].partition("/")
        return f"{location[:len(scheme)]}://{authority}" + (_clean("/" + p, location, what) if slash else "")
    if not rest.startswith("/"):
        raise InvalidObject(f"{what} {_shown(location)} is not absolute")
    return f"{location[:len(scheme)]}:" + _clean(rest, location, what)


def resolve(location: str, what: str = "location") -> str:
    """The location with its path's `.`, `..`, repeated and trailing slashes resolved, in the form the client
    wrote it (`file:/x`, `file:///x`, `/x`, `hdfs://nn/x` stay so: clients read their own form back).

    Raises InvalidObject as normalize() does (not absolute, unknown scheme, control characters, `..` above
    the root)."""
    if isinstance(location, str) and (location.startswith("file:/") or location.startswith("/")) \
            and not _UNTIDY.search(location) and (location.isascii() or _encodable(location)):
        return location  # the usual case, checked in one pass
    if not isinstance(location, str) or not location.strip():
        raise InvalidObject(f"{what} is empty")
    norm = normalize(location, what)  # every check
    scheme = scheme_of(location)
    if scheme == "file":
        path = norm[len("file:"):]
        if location.startswith("/"):
            return path
        # the scheme in lower case: stored locations are compared as text (the overlap check), and `FILE:/x`
        # is the same directory as `file:/x`
        rest = location[5:]
        if rest.startswith("//"):  # file:///x or file://localhost/x: keep the authority part
            return "file://" + rest[2:].partition("/")[0] + path
        return "file:" + path
    return norm


_SHOWN = 256  # characters of a client's location an error message repeats


def _shown(text: str) -> str:
    """A client's text as an error message shows it: quoted, and cut after _SHOWN characters (a location may be
    as long as a request)."""
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + "..."


def _encodable(location: str) -> bool:
    """Whether the location can name a file (a lone surrogate, which JSON can carry, cannot be encoded)."""
    try:
        location.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _clean(path: str, location: str, what: str) -> str:
    if _climbs(path):
        raise InvalidObject(f"{what} {_shown(location)} climbs above the root with '..'")
    return _normpath(path)


def _normpath(path: str) -> str:
    """posixpath.normpath of a path whose `..` stays below the root, with one leading slash (normpath keeps a
    leading double slash, as POSIX allows; a path here has one root)."""
    out = posixpath.normpath(path)
    return "/" + out.lstrip("/") if out.startswith("//") else out


def is_under(path: str, root: str) -> bool:
    """Whether a normalized local path is the root or inside it."""
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root if root == "/" else root + "/")


class LocationPolicy:
    """Where the server may act. `roots`: directories under which it creates, moves and deletes;
    `read_roots`: directories it may read Iceberg metadata from besides those; `protected`: paths that no
    location it acts on may contain (the store's files, the data directory: a warehouse inside the data
    directory is fine, a table whose directory holds the data directory is not), and never read."""

    def __init__(self, roots: Sequence[str], read_roots: Iterable[str] = (), protected: Iterable[str] = ()) -> None:
        self.roots = [self._real(r) for r in roots]
        self.read_roots = self.roots + [self._real(r) for r in read_roots]
        self.protected = [self._real(p) for p in protected]
        # each root and protected path as configured and as resolved: the write path compares strings and looks
        # for links below a root with lstat (a few system calls) instead of resolving every location
        self._roots = _both(roots)
        self._protected = _both(protected)
        # every directory that holds a root or a protected path (themselves included): "does this location hold
        # one?" is then one set lookup on the write path, not a scan of the lists
        self._holding_protected = _ancestors(self._protected)
        self._holding_root = _ancestors(self._roots)

    @staticmethod
    def _real(location: str) -> str:
        path = local_path(location) or location
        return os.path.realpath(path)

    def _inside_root(self, path: str, strictly: bool, links: bool = True) -> bool:
        """Whether a normalized local path is inside an allowed root (or is one, unless `strictly`) and, with
        `links`, no symbolic link is between the root and it: a link could lead anywhere."""
        for root in self._roots:
            if not is_under(path, root):
                continue
            if path == root:
                if strictly:
                    continue
                return True
            if not links:
                return True
            cur = root.rstrip("/")
            for part in path[len(cur) + 1:].split("/"):
                cur += "/" + part
                try:
                    if stat.S_ISLNK(os.lstat(cur).st_mode):
                        return False
                except FileNotFoundError:
                    break  # the rest does not exist yet: nothing to follow
                except OSError:
                    return False
            return True
        return False

    def _holds_protected(self, path: str) -> bool:
        return (path.rstrip("/") or "/") in self._holding_protected

    def protected_below(self, path: str) -> bool:
        """Whether a protected path is strictly inside a normalized local path."""
        return any(p != path and is_under(p, path) for p in self._protected)

    def owns(self, location: str | None) -> bool:
        """Whether the server may create, move or delete at this location: a local path strictly inside an
        allowed root (no symbolic link below the root), not containing and not inside a protected path."""
        path = lexical_path(location)
        if path is None or not self._inside_root(path, strictly=True):
            return False
        return not self._holds_protected(path)

    def may_create(self, location: str | None) -> bool:
        """Whether the server may make this location's directory: inside an allowed root (the root itself
        included), never in or around the store's files. Outside the roots the location is recorded and no
        directory made (Hive would make it; a client's writer makes its own directories there)."""
        path = lexical_path(location)
        if path is None:
            return False
        # inside a root, links are not looked for: a directory made through one is empty and has a table's or
        # a partition's name (never a store file's); deletes and moves do look (owns)
        return self._inside_root(path, strictly=False, links=False) and not self._holds_protected(path)

    def managed_problem(self, location: str | None) -> str | None:
        """Why a managed object (database, table, partition) may not be at this location, or None. One the
        server would delete with its data: not the store's files or a directory holding them, not an allowed
        root or a directory holding one. (Through a link it could not be deleted: owns() refuses links.)"""
        path = lexical_path(location)
        if path is None:
            return None
        if self._holds_protected(path):
            return "holds the metastore's own data directory or store"
        if (path.rstrip("/") or "/") in self._holding_root:
            return "is the warehouse root or holds it"
        return None

    def may_read(self, location: str | None) -> bool:
        """Whether the server may read (Iceberg metadata) at this location."""
        path = local_path(location)
        if path is None:
            return False
        real = os.path.realpath(path)
        if not any(is_under(real, r) for r in self.read_roots):
            return False
        # inside the data directory (the default warehouse is) is fine; a protected file itself is not
        return not any(is_under(p, real) for p in self.protected)


def _ancestors(paths: Iterable[str]) -> frozenset[str]:
    """Each path and every directory above it (normalized local paths)."""
    out: set[str] = set()
    for p in paths:
        p = p.rstrip("/") or "/"
        while True:
            out.add(p)
            if p == "/":
                break
            p = posixpath.dirname(p)
    return frozenset(out)


def lexical_path(location: str | None) -> str | None:
    """A location's local path with `.`, `..` and repeated slashes resolved on the string (no file system
    access), None when it is not local or `..` climbs above the root."""
    path = local_path(location)
    if path is None:
        return None
    if not _UNTIDY_PATH.search(path):
        return path  # the usual case: nothing to resolve
    return None if _climbs(path) else _normpath(path)


def _climbs(path: str) -> bool:
    """Whether a `..` of the path climbs above its root."""
    depth = 0
    for part in path.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


def spellings(path: str) -> list[str]:
    """The ways a local path is written in stored locations (`file:/x`, `file:///x`, `file://localhost/x`, `/x`)."""
    return ["file:" + path, "file://" + path, "file://localhost" + path, path]


class Occupant:
    """Another object found near a location: a database (`table` None) or a table, with its type and location."""

    __slots__ = ("db", "table", "table_type", "location")

    def __init__(self, db: str, table: str | None, table_type: str | None, location: str | None) -> None:
        self.db, self.table, self.table_type, self.location = db, table, table_type, location

    def describe(self) -> str:
        return f"database {self.db}" if self.table is None else f"table {self.db}.{self.table}"


def overlap(path: str, occupants: Iterable[Occupant], own_db: str | None = None,
            own_table: str | None = None, kind: str = "table") -> str | None:
    """Why a managed database, table or partition (`kind`) at `path` (a normalized local path) would share data
    with one of `occupants`, or None. Sharing: the same directory, or another object inside it (dropping this
    one would delete that one's data), or this one inside another managed table (dropping that one would
    delete this). Inside a database's directory is the usual place of a table, and a partition may be anywhere
    (Spark's ALTER TABLE ... PARTITION ... SET LOCATION). The object itself (`own_db` / `own_table`: a database
    or table being altered, or the table of a partition) is skipped."""
    for o in occupants:
        if o.table_type == "VIRTUAL_VIEW":
            continue
        if o.table is None and kind == "database" and o.db == own_db:
            continue
        if o.table is not None and (o.db, o.table) == (own_db, own_table):
            continue
        q = lexical_path(o.location)
        if q is None:
            continue
        if q == path:
            return f"is the location of {o.describe()}"
        if is_under(q, path):
            return f"holds the location of {o.describe()} ({o.location})"
        if o.table is not None and o.table_type == "MANAGED_TABLE" and is_under(path, q):
            return f"is inside the directory of managed {o.describe()}"
    return None
