"""The warehouse: directories of managed databases, tables and partitions on the local file system.

Locations are URIs as Hive writes them (`file:/path`). Locations on other file systems (hdfs:, s3a:, ...)
are recorded but not touched: this server has no client for them. With a location policy (the catalog sets
one), nothing is deleted or moved outside the policy's roots, and no directory is made in or around the
store's own files, whatever the caller asks: the last line of defence behind the catalog's checks.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence

from ..core.errors import MetaError
from .locations import LocationPolicy, local_path

log = logging.getLogger(__name__)

# Below this many new directories a batch is made in-process: starting the helper costs a few milliseconds.
CHILD_MKDIR_MIN = 200
_XARGS = shutil.which("xargs")
_MKDIR = shutil.which("mkdir")

# The rmdir helper's program: for each NUL-terminated path on stdin, rmdir it and answer its errno (0: removed)
# in two bytes. It ends when the server's end of the pipe closes.
_RMDIR_HELPER = """
import os
buf = b""
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    buf += chunk
    while b"\\0" in buf:
        path, _, buf = buf.partition(b"\\0")
        try:
            os.rmdir(path)
            err = 0
        except OSError as e:
            err = e.errno or 1
        os.write(1, err.to_bytes(2, "big"))
"""



def remove_quietly(remove: Callable[[str], object], path: str, shown: str | None = None) -> None:
    """A best-effort removal of what nothing points to: a path gone already is fine; another failure is logged
    (as `shown`, or the path), never raised, as the change it follows has committed or been abandoned."""
    try:
        remove(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        log.warning("could not delete %s: %s", shown or path, e)


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
            remove_quietly(shutil.rmtree, root)


class EarlyRmdir:
    """An empty directory being removed by the helper process while its drop's transaction runs
    (see Warehouse.start_rmdir). `gone()` once the transaction committed; `restore()` when it failed."""

    def __init__(self, helper: _RmdirHelper, path: str) -> None:
        self.helper, self.path = helper, path
        self._err: int | None = None

    def _result(self) -> int:
        if self._err is None:
            self._err = self.helper.answer()
        return self._err

    def gone(self) -> bool:
        """Whether the directory no longer exists (False: not empty, or an error; delete it the usual way)."""
        return self._result() in (0, errno.ENOENT)

    def restore(self) -> None:
        """Make the directory again if this removed it: the drop did not happen, so its empty directory stays."""
        if self._result() == 0:
            try:
                os.mkdir(self.path)
            except FileExistsError:
                pass
            except OSError as e:
                log.warning("could not restore %s after a failed drop: %s", self.path, e)


class _RmdirHelper:
    """A child process that removes one directory at a time for this process.

    Removing a table's directory takes ~80-190 us on this project's test hosts (ext4 with online discard), spent
    blocked in the kernel; a drop_table hands it to the helper right after reading the table and collects the
    answer after its commit, so the two overlap on another core. Threads do not help: the request's thread must
    get the GIL back from the remover. One request at a time; a second concurrent drop removes its own directory
    after its commit, as without the helper.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()  # a forked worker starts its own helper: the pipes are not shared across fork
        self.busy = threading.Lock()
        # -I -S: no site packages or environment: the helper needs os alone (~9 MB resident instead of ~14)
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _RMDIR_HELPER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0,
                                     close_fds=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.wfd, self.rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self.dead = False

    def start(self, path: str) -> EarlyRmdir | None:
        if self.dead or not self.busy.acquire(blocking=False):
            return None
        try:
            os.write(self.wfd, os.fsencode(path) + b"\0")
        except OSError:  # the helper is gone: the caller removes the directory itself
            self.dead = True
            self.busy.release()
            return None
        return EarlyRmdir(self, path)

    def answer(self) -> int:
        try:
            got = b""
            while len(got) < 2:
                chunk = os.read(self.rfd, 2 - len(got))
                if not chunk:
                    raise OSError(errno.EPIPE, "rmdir helper ended")
                got += chunk
            return int.from_bytes(got, "big")
        except OSError:  # unknown whether it removed the directory: report "not removed", the caller checks
            self.dead = True
            return errno.EIO
        finally:
            self.busy.release()

    def close(self) -> None:
        self.dead = True
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


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
    def __init__(self, root: str, child_mkdir_min: int = CHILD_MKDIR_MIN, early_rmdir: bool = True) -> None:
        self.root = os.path.abspath(root)
        self.child_mkdir_min = child_mkdir_min
        self.early_rmdir = early_rmdir
        self._rmdir_helper: _RmdirHelper | None = None
        self._helper_lock = threading.Lock()
        self.policy: LocationPolicy | None = None  # where directories may be made, moved and deleted

    def owns(self, location: str | None) -> bool:
        """Whether this server may delete or move the location's directory."""
        return self.policy is None or self.policy.owns(location)

    def _refused(self, what: str, location: str | None) -> bool:
        """True (and a warning) when the policy forbids deleting or moving the location."""
        if self.owns(location):
            return False
        log.warning("not %s %s: outside the directories this server owns (left as it is)", what, location)
        return True

    @staticmethod
    def to_uri(path: str) -> str:
        return "file:" + os.path.abspath(path)

    # the local path of a location, or None when it is not on this host's file system (see locations.local_path)
    local_path = staticmethod(local_path)

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
        if path is None or (self.policy is not None and not self.policy.may_create(location)):
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
        allowed: dict[str, bool | None] = {}  # parent directory -> the policy allows making directories in it
        for loc in locations:
            path = self.local_path(loc)
            if path is None:
                continue
            path = os.path.normpath(path)
            if path in exists or os.path.isdir(path):
                continue
            if self.policy is not None and not self._may_create(path, allowed):
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
        # mkdir -p tries (and changes into) every component of a path it is given; relative to a directory that
        # exists above all of them, it walks two components instead of ten (a 1,000-partition batch: -28%)
        cwd = os.path.commonpath([os.path.dirname(r) for r in roots])
        with tempfile.TemporaryFile() as listing:  # the child reads it from its own descriptor after we close ours
            skip = len(cwd) + (not cwd.endswith("/"))  # every path is normalized and under cwd
            listing.write(b"\0".join(os.fsencode(p[skip:]) for p in paths))
            listing.seek(0)
            per_child = min(2000, -(-len(paths) // 2))  # two at a time: a slow disk's waits overlap too
            proc = subprocess.Popen([_XARGS, "-0", "-P", "2", "-n", str(per_child), _MKDIR, "-p", "--"], stdin=listing,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
        batch._proc = proc
        return batch

    def _may_create(self, path: str, allowed: dict[str, bool | None]) -> bool:
        """policy.may_create for a normalized path, its parent's answer kept for the batch's next paths (a batch's
        partitions share a few parents): a child may be made where its parent may, unless it holds a protected path."""
        assert self.policy is not None
        parent = os.path.dirname(path)
        ok = allowed.get(parent)
        if ok is None:
            ok = self.policy.may_create("file:" + parent)
            # None: allowed, and a child may be (or hold) a protected path: each child is looked at
            near = self.policy.protected_below(parent)
            ok = allowed[parent] = None if ok and near else ok
        if ok is None:
            return self.policy.may_create("file:" + path)
        return ok

    def start_rmdir(self, location: str | None) -> EarlyRmdir | None:
        """Start removing a location's directory if it is empty, while the caller's drop transaction runs; None
        when that is not done (not local, helper busy or unavailable). The caller calls gone() after its commit
        (and delete() when it says False) or restore() when the transaction failed."""
        path = self.local_path(location)
        if path is None or not self.early_rmdir or not self.owns(location):
            return None
        helper = self._rmdir_helper
        if helper is None or helper.pid != os.getpid() or helper.dead:
            with self._helper_lock:
                helper = self._rmdir_helper
                if helper is None or helper.pid != os.getpid() or helper.dead:
                    if helper is not None and helper.pid == os.getpid():
                        helper.close()
                    try:
                        helper = self._rmdir_helper = _RmdirHelper()
                    except OSError as e:
                        log.warning("no rmdir helper (%s): directories are removed after each commit", e)
                        self.early_rmdir = False
                        return None
        return helper.start(path)

    def close(self) -> None:
        """End the rmdir helper (it also ends by itself when this process exits)."""
        helper, self._rmdir_helper = self._rmdir_helper, None
        if helper is not None and helper.pid == os.getpid():
            helper.close()

    def exists(self, location: str | None) -> bool:
        path = self.local_path(location)
        return path is not None and os.path.exists(path)

    def delete(self, location: str | None) -> None:
        path = self.local_path(location)
        if path is None or self._refused("deleting", location):
            return
        if self.policy is not None:
            path = os.path.realpath(path)  # the directory the policy allowed, not where a '..' or link leads
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

    def empty(self, location: str | None) -> None:
        """Delete what a location's directory holds and keep the directory (a truncate), when the policy allows
        deleting there; entries are removed without following links."""
        path = self.local_path(location)
        if path is None or self._refused("emptying", location):
            return
        path = os.path.realpath(path)
        try:
            entries = list(os.scandir(path))
        except (FileNotFoundError, NotADirectoryError):
            return
        for e in entries:
            try:
                shutil.rmtree(e.path) if e.is_dir(follow_symlinks=False) else os.remove(e.path)
            except FileNotFoundError:
                pass
            except OSError as err:  # as delete: what is left is only logged
                log.warning("could not delete %s: %s", e.path, err)

    def delete_if_empty(self, location: str | None) -> None:
        """Remove a location's directory only when it is empty (and the policy allows deleting it)."""
        path = self.local_path(location)
        if path is None or self._refused("deleting", location):
            return
        try:
            os.rmdir(os.path.realpath(path))
        except FileNotFoundError:
            pass
        except OSError as e:
            log.warning("left %s: %s", path, e.strerror)

    def delete_empty_parents(self, location: str | None, depth: int) -> None:
        """Remove up to `depth` ancestors of a location while each is an empty directory (as Hive does
        after dropping a partition: ds=1 goes with the last ds=1/h=*)."""
        path = self.local_path(location)
        if path is None:
            return
        parent = os.path.dirname(path.rstrip("/"))
        for _ in range(depth):
            if not self.owns("file:" + parent):
                return
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
        if self._refused("moving", src) or self._refused("moving into", dst):
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
