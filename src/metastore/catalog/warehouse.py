"""The warehouse: directories of managed databases, tables and partitions on the local file system.

Locations are URIs as Hive writes them (`file:/path`). Locations on other file systems (hdfs:, s3a:, ...)
are recorded but not touched: this server has no client for them.
"""

from __future__ import annotations

import logging
import os
import shutil

log = logging.getLogger(__name__)


class Warehouse:
    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)

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
        if path is None or os.path.isdir(path):
            return False
        os.makedirs(path, exist_ok=True)
        return True

    def exists(self, location: str | None) -> bool:
        path = self.local_path(location)
        return path is not None and os.path.exists(path)

    def delete(self, location: str | None) -> None:
        path = self.local_path(location)
        if path is None or not os.path.exists(path):
            return
        try:
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
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
