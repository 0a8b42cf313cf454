"""The warehouse: directories of managed databases, tables and partitions on the local file system.

Locations are URIs as Hive writes them (`file:/path`). Locations on other file systems (hdfs:, s3a:, ...)
are recorded but not touched: this server has no client for them.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from .errors import MetaError

log = logging.getLogger(__name__)

# Below this many new directories a batch is made in-process: starting the helper costs a few milliseconds.
CHILD_MKDIR_MIN = 200
_XARGS = shutil.which("xargs")
_MKDIR = shutil.which("mkdir")


class DirBatch:
    """Directories being created for one catalog write (see Warehouse.start_mkdirs).

    `made`: the locations that did not exist when the batch started. `wait()` returns once they all exist and
    raises MetaError, as Hive does, for one that could not be made; `discard()` removes what the batch made
    (when the write fails), the parent directories it had to create included.
    """

    def __init__(self, made: list[str], paths: list[str], roots: list[str],
                 proc: subprocess.Popen[bytes] | None) -> None:
        self.made, self._paths, self._roots, self._proc = made, paths, roots, proc

    def wait(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:  # made in-process, or waited for already
            return
        _, stderr = proc.communicate()
        if proc.returncode == 0:
            return
        err = stderr.decode(errors="replace").strip()
        for loc, path in zip(self.made, self._paths):
            if not os.path.isdir(path):
                detail = f" ({err.splitlines()[0]})" if err else ""
                raise MetaError(f"{loc} is not a directory or unable to create one{detail}")

    def discard(self) -> None:
        try:
            self.wait()  # the helper may still be making them
        except MetaError:
            pass
        for root in self._roots:
            try:
                shutil.rmtree(root)
            except FileNotFoundError:
                pass
            except OSError as e:
                log.warning("could not delete %s: %s", root, e)


def _new_root(path: str, exists: dict[str, bool]) -> str | None:
    """The topmost directory that making `path` creates (the path or its highest missing ancestor), or None when
    a path met before creates that ancestor already. `exists` remembers what was looked at (False: to be made)."""
    exists[path] = False
    top, parent = path, os.path.dirname(path)
    while parent != top:
        there = exists.get(parent)
        if there is None:
            there = exists[parent] = os.path.isdir(parent)
            if not there:
                top, parent = parent, os.path.dirname(parent)
                continue
        return top if there else None
    return top


class Warehouse:
    def __init__(self, root: str, child_mkdir_min: int = CHILD_MKDIR_MIN) -> None:
        self.root = os.path.abspath(root)
        self.child_mkdir_min = child_mkdir_min

    @staticmethod
    def to_uri(path: str) -> str:
        return "file:" + os.path.abspath(path)

    @staticmethod
    def local_path(location: str | None) -> str | None:
        """The local path of a location, or None when it is not on the local file system.

        A location is a Hadoop path string, not an encoded URI: its characters are the file's own (Hive
        escapes partition values itself, so `s=a%2Fb` is a directory of that very name, and `sp ace` has
        a space). Nothing is percent-decoded, and `#` or `?` are part of the name.
        """
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

    def database_location(self, name: str) -> str:
        if name == "default":
            return self.to_uri(self.root)
        return self.to_uri(os.path.join(self.root, f"{name}.db"))

    @staticmethod
    def child(location: str, name: str) -> str:
        return location.rstrip("/") + "/" + name

    def mkdirs(self, location: str | None) -> bool:
        """Create a location's directory; True if it was made by this call."""
        path = self.local_path(location)
        if path is None:
            return False
        try:
            os.mkdir(path)  # the usual case (a new table's directory) in one system call
            return True
        except FileExistsError:
            if os.path.isdir(path):
                return False
            raise
        except FileNotFoundError:  # missing parents
            os.makedirs(path, exist_ok=True)
            return True

    def start_mkdirs(self, locations: Sequence[str | None]) -> DirBatch:
        """Start creating the directories of many locations (a batch of partitions); the caller goes on with its
        database work and calls wait() before it commits.

        A directory is one system call, and a thread making thousands of them gets the GIL back after each one
        only when the request's own Python work lets it go, so threads do not overlap the two; a child process
        does (10,000 partitions on this project's test host: 0.3 to 1.5 s of mkdir calls, which had been
        added to the request's time). Small batches, and hosts without xargs and mkdir, are made in-process.
        """
        made: list[str] = []
        paths: list[str] = []
        roots: list[str] = []  # the topmost directory each new path creates (itself or a missing ancestor)
        exists: dict[str, bool] = {}
        for loc in locations:
            path = self.local_path(loc)
            if path is None:
                continue
            path = os.path.normpath(path)
            if path in exists or os.path.isdir(path):
                continue
            made.append(loc)  # type: ignore[arg-type]
            paths.append(path)
            root = _new_root(path, exists)
            if root is not None:
                roots.append(root)
        batch = DirBatch(made, paths, roots, None)
        if len(paths) < self.child_mkdir_min or _XARGS is None or _MKDIR is None:
            for loc, path in zip(made, paths):
                try:
                    os.makedirs(path, exist_ok=True)
                except OSError as e:
                    batch.discard()
                    raise MetaError(f"{loc} is not a directory or unable to create one ({e.strerror})") from None
            return batch
        with tempfile.TemporaryFile() as listing:  # the child reads it from its own descriptor after we close ours
            listing.write(b"\0".join(os.fsencode(p) for p in paths))
            listing.seek(0)
            per_child = min(2000, -(-len(paths) // 2))  # two at a time: a slow disk's waits overlap too
            proc = subprocess.Popen([_XARGS, "-0", "-P", "2", "-n", str(per_child), _MKDIR, "-p", "--"], stdin=listing,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        batch._proc = proc
        return batch

    def exists(self, location: str | None) -> bool:
        path = self.local_path(location)
        return path is not None and os.path.exists(path)

    def delete(self, location: str | None) -> None:
        path = self.local_path(location)
        if path is None:
            return
        try:
            try:
                os.rmdir(path)  # the usual case (an empty directory) in one system call
            except FileNotFoundError:
                return
            except OSError:
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        except FileNotFoundError:
            pass
        except OSError as e:  # the metadata change has committed; a leftover directory is only logged
            log.warning("could not delete %s: %s", path, e)

    def delete_empty_parents(self, location: str | None, depth: int) -> None:
        """Remove up to `depth` ancestors of a location while each is an empty directory (as Hive does
        after dropping a partition: ds=1 goes with the last ds=1/h=*)."""
        path = self.local_path(location)
        if path is None:
            return
        parent = os.path.dirname(path.rstrip("/"))
        for _ in range(depth):
            try:
                if not parent or not os.path.isdir(parent) or os.listdir(parent):
                    return
                os.rmdir(parent)
            except OSError as e:
                log.warning("could not delete %s: %s", parent, e)
                return
            parent = os.path.dirname(parent)

    def rename(self, src: str | None, dst: str | None) -> bool:
        """Move a directory; False when either side is not local or the source does not exist."""
        a, b = self.local_path(src), self.local_path(dst)
        if a is None or b is None or not os.path.exists(a):
            return False
        if os.path.exists(b):
            raise FileExistsError(b)
        os.makedirs(os.path.dirname(b), exist_ok=True)
        os.rename(a, b)
        return True

    def quick_stats(self, location: str | None) -> tuple[int, int] | None:
        """(number of files, total bytes) under a location, skipping hidden files as Hive does; None if absent."""
        path = self.local_path(location)
        if path is None or not os.path.isdir(path):
            return None
        files = total = 0
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "_"))]
            for f in filenames:
                if f.startswith((".", "_")):
                    continue
                try:
                    total += os.path.getsize(os.path.join(dirpath, f))
                    files += 1
                except OSError:
                    pass
        return files, total
