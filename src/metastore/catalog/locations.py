"""The location policy: which places the server may create, move, delete and read on a client's behalf.

Every location a client sends is hostile until checked. A location is normalized (its path's `.` and `..`
resolved, its scheme checked) before it is stored or touched; the server creates, moves and deletes only
under its allowed roots (default: the warehouse), and reads Iceberg metadata only under those and its read
roots. Locations on file systems this server has no client for (hdfs:, s3a:, ...) are recorded, never touched.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence

from .errors import InvalidObject, MetaError

# Schemes a location may have. Others (javascript:, http:, ...) are refused when stored.
KNOWN_SCHEMES = frozenset({
    "file", "hdfs", "viewfs", "s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "adl", "oss", "cos",
    "cosn", "ofs", "o3fs", "jfs", "alluxio", "pvfs2", "har",
})


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
    scheme = scheme_of(location)
    if scheme is None:
        raise InvalidObject(f"{what} {location!r} is not an absolute location with a scheme (file:/..., hdfs://...)")
    if scheme not in KNOWN_SCHEMES:
        raise InvalidObject(f"{what} {location!r} has an unsupported scheme {scheme!r}")
    path = local_path(location)
    if scheme == "file":
        if path is None:
            raise InvalidObject(f"{what} {location!r} is not on this host")
        return "file:" + _clean(path, location, what)
    # scheme://authority/path: the path part is cleaned, the authority kept as given
    rest = location[len(scheme) + 1:]
    if rest.startswith("//"):
        authority, slash, p = rest[2:].partition("/")
        return f"{location[:len(scheme)]}://{authority}" + (_clean("/" + p, location, what) if slash else "")
    if not rest.startswith("/"):
        raise InvalidObject(f"{what} {location!r} is not absolute")
    return f"{location[:len(scheme)]}:" + _clean(rest, location, what)


def _clean(path: str, location: str, what: str) -> str:
    depth = 0
    for part in path.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                raise InvalidObject(f"{what} {location!r} climbs above the root with '..'")
        elif part not in ("", "."):
            depth += 1
    out = posixpath.normpath(path)
    if out.startswith("//"):  # normpath keeps a leading double slash (POSIX); a path has one root
        out = "/" + out.lstrip("/")
    return out


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

    @staticmethod
    def _real(location: str) -> str:
        path = local_path(location) or location
        return os.path.realpath(path)

    def owns(self, location: str | None) -> bool:
        """Whether the server may create, move or delete at this location: a local path strictly inside an
        allowed root (symbolic links resolved), not containing and not inside a protected path."""
        path = local_path(location)
        if path is None:
            return False
        real = os.path.realpath(path)
        if not any(is_under(real, r) and real != r for r in self.roots):
            return False
        return not any(is_under(p, real) for p in self.protected)

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

    def check_read(self, location: str | None, what: str = "metadata location") -> str:
        if not self.may_read(location):
            raise MetaError(f"{what} {location!r} is outside the locations this server may read")
        assert location is not None
        return location
