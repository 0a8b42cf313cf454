"""The versioned catalog cache: databases, tables, partitions, functions and file metadata.

Every add, change or removal takes the next global catalog version, and the object keeps it; removals also go
to the delete log, which topic updates read (topics.py).

Locking order (documented, and the only one used): a table's lock first, then the catalog's version lock.
The version lock is held only to take a version and change the maps, never while waiting for anything else,
so no thread holding it ever waits for a table lock. Several tables are write-locked all-or-nothing
(lock_tables): each is tried with a short timeout and, on a miss, everything taken is released and the whole
set retried, a bounded number of times.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

TableKey = tuple[str, str]


class LockTimeout(RuntimeError):
    """Write locks on a set of tables could not all be taken within the bounded retries."""


@dataclass(frozen=True)
class FileMeta:
    name: str
    size: int
    mtime: float


@dataclass
class CachedDatabase:
    name: str
    obj: Any  # hms.Database
    version: int
    functions: dict[str, Any] = field(default_factory=dict)  # name -> hms.Function


@dataclass
class CachedTable:
    db: str
    name: str
    version: int
    obj: Any = None  # hms.Table; None while the table is incomplete (only its name is known)
    partitions: dict[str, Any] = field(default_factory=dict)  # partition name -> hms.Partition
    files: dict[str, list[FileMeta]] = field(default_factory=dict)  # location -> its files
    # every event id up to this one is reflected (set by a load; events at or below it are skipped)
    synced_event: int = 0
    # greatest event id skipped because the table was incomplete: a load older than it must be redone
    skipped_event: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def key(self) -> TableKey:
        return (self.db, self.name)

    @property
    def complete(self) -> bool:
        return self.obj is not None


@dataclass(frozen=True)
class Deletion:
    version: int
    kind: str  # "database" | "table" | "function"
    key: str


def list_files(location: str | None, delay: float = 0.0) -> list[FileMeta]:
    """The files directly under a location (file: URIs and local paths; other schemes list nothing).

    `delay`: seconds each listing takes on top, a benchmark setting (bench/catalogd.py) that stands for the cost
    of listing a remote store (HDFS, S3), which local listings do not show; catalogd itself never sets it."""
    if delay:
        time.sleep(delay)
    if not location:
        return []
    path = location[len("file:"):] if location.startswith("file:") else location
    if "://" in path:
        return []
    while path.startswith("//"):
        path = path[1:]
    try:
        with os.scandir(path) as it:
            out = []
            for e in it:
                if e.is_file(follow_symlinks=False) and not e.name.startswith((".", "_")):
                    st = e.stat()
                    out.append(FileMeta(e.name, st.st_size, st.st_mtime))
    except OSError:
        return []
    return sorted(out, key=lambda f: f.name)


class CatalogCache:
    def __init__(self, file_lister: Callable[[str | None], list[FileMeta]] | None = None,
                 blacklist_dbs: set[str] | None = None, blacklist_tables: set[str] | None = None,
                 keep_history: bool = True) -> None:
        self._version_lock = threading.Lock()
        self._version = 0
        self.dbs: dict[str, CachedDatabase] = {}
        self.tables: dict[TableKey, CachedTable] = {}
        self.delete_log: list[Deletion] = []
        self.list_files = file_lister or list_files
        self.blacklist_dbs = {d.lower() for d in blacklist_dbs or ()}
        self.blacklist_tables = {t.lower() for t in blacklist_tables or ()}
        # per table, the ids of the events applied to it, in the order applied (checked by the tests)
        self.keep_history = keep_history
        self.history: dict[TableKey, list[int]] = {}
        self.changed = threading.Condition(threading.Lock())

    # -- versions ------------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        return self._version

    def _next(self) -> int:
        # caller holds the version lock
        self._version += 1
        return self._version

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def excluded(self, db: str, table: str | None = None) -> bool:
        if db.lower() in self.blacklist_dbs:
            return True
        return table is not None and f"{db}.{table}".lower() in self.blacklist_tables

    # -- locks ----------------------------------------------------------------------------------------
    @contextmanager
    def lock_tables(self, keys: list[TableKey], attempts: int = 20, wait: float = 0.05) -> Iterator[list[CachedTable]]:
        """Write locks on all of these tables, or none: LockTimeout after `attempts` tries."""
        for n in range(attempts):
            tables = [t for t in (self.tables.get(k) for k in sorted(set(keys))) if t is not None]
            taken: list[CachedTable] = []
            for t in tables:
                if not t.lock.acquire(timeout=wait):
                    break
                taken.append(t)
            if len(taken) == len(tables):
                try:
                    yield tables
                finally:
                    for t in reversed(taken):
                        t.lock.release()
                return
            for t in reversed(taken):
                t.lock.release()
            time.sleep(wait * (n + 1) / attempts)
        raise LockTimeout(f"could not lock tables {sorted(set(keys))} after {attempts} attempts")

    # -- databases ------------------------------------------------------------------------------------
    def put_database(self, obj: Any) -> CachedDatabase | None:
        name = obj.name.lower()
        if self.excluded(name):
            return None
        with self._version_lock:
            old = self.dbs.get(name)
            d = CachedDatabase(name, obj, self._next(), dict(old.functions) if old else {})
            self.dbs[name] = d
        self._notify()
        return d

    def remove_database(self, name: str) -> list[TableKey]:
        """Drops the database, its functions and its tables; the tables dropped."""
        name = name.lower()
        keys = [k for k in list(self.tables) if k[0] == name]
        for k in keys:
            self.remove_table(*k)
        with self._version_lock:
            d = self.dbs.pop(name, None)
            if d is not None:
                for fn in d.functions:
                    self.delete_log.append(Deletion(self._next(), "function", f"{name}.{fn}"))
                self.delete_log.append(Deletion(self._next(), "database", name))
        self._notify()
        return keys

    def put_function(self, db: str, obj: Any) -> None:
        with self._version_lock:
            d = self.dbs.get(db.lower())
            if d is None:
                return
            d.functions[obj.functionName.lower()] = obj
            d.version = self._next()
        self._notify()

    def remove_function(self, db: str, name: str) -> None:
        with self._version_lock:
            d = self.dbs.get(db.lower())
            if d is None or d.functions.pop(name.lower(), None) is None:
                return
            d.version = self._next()
            self.delete_log.append(Deletion(self._next(), "function", f"{db.lower()}.{name.lower()}"))
        self._notify()

    # -- tables ---------------------------------------------------------------------------------------
    def table(self, db: str, name: str) -> CachedTable | None:
        return self.tables.get((db.lower(), name.lower()))

    def add_table(self, db: str, name: str, obj: Any = None, synced_event: int = 0) -> CachedTable | None:
        """Adds (or replaces) a table: incomplete when obj is None."""
        db, name = db.lower(), name.lower()
        if self.excluded(db, name) or db not in self.dbs:
            return None
        with self._version_lock:
            t = CachedTable(db, name, self._next(), obj, synced_event=synced_event)
            old = self.tables.get((db, name))
            if old is not None:
                t.lock = old.lock  # a holder of the old entry's lock still excludes writers of the new one
            self.tables[(db, name)] = t
        self._notify()
        return t

    def touch(self, t: CachedTable) -> int:
        """A change to a table (under its lock): it takes the next version."""
        with self._version_lock:
            t.version = self._next()
            v = t.version
        self._notify()
        return v

    def remove_table(self, db: str, name: str) -> CachedTable | None:
        key = (db.lower(), name.lower())
        with self._version_lock:
            t = self.tables.pop(key, None)
            if t is not None:
                self.delete_log.append(Deletion(self._next(), "table", f"{key[0]}.{key[1]}"))
        self._notify()
        return t

    def invalidate(self, db: str, name: str) -> CachedTable | None:
        """Forget what is known of a table but its name: it will be loaded again."""
        t = self.table(db, name)
        if t is None:
            return None
        with t.lock:
            t.obj = None
            t.partitions = {}
            t.files = {}
            t.synced_event = 0
            self.touch(t)
        return t

    def record(self, key: TableKey, event_id: int) -> None:
        if self.keep_history:
            self.history.setdefault(key, []).append(event_id)

    # -- deletions ------------------------------------------------------------------------------------
    def deletions_since(self, version: int) -> list[Deletion]:
        with self._version_lock:
            return [d for d in self.delete_log if d.version > version]

    def trim_delete_log(self, upto: int) -> None:
        """Drops deletions every subscriber has been sent."""
        with self._version_lock:
            self.delete_log = [d for d in self.delete_log if d.version > upto]

    # -- views ----------------------------------------------------------------------------------------
    def incomplete(self) -> list[TableKey]:
        return [k for k, t in list(self.tables.items()) if not t.complete]

    def database_names(self) -> list[str]:
        return sorted(self.dbs)

    def table_names(self, db: str) -> list[str]:
        db = db.lower()
        return sorted(k[1] for k in list(self.tables) if k[0] == db)

    def stats(self) -> dict[str, int]:
        tables = list(self.tables.values())
        return {"version": self._version, "databases": len(self.dbs), "tables": len(tables),
                "incomplete_tables": sum(1 for t in tables if not t.complete),
                "partitions": sum(len(t.partitions) for t in tables),
                "files": sum(len(f) for t in tables for f in t.files.values()),
                "delete_log": len(self.delete_log)}
