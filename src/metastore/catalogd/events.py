"""From a notification event to operations on the cache.

plan() splits an event into tasks, each with the one scope it touches: a database, or a table. An ALTER_TABLE
that renames becomes two tasks sharing a Rename barrier (the source drops the table, then the target adds
it); COMMIT_TXN / ABORT_TXN become one pseudo task per table the transaction wrote.

Transactions: our metastore writes no OPEN_TXN/COMMIT_TXN/ABORT_TXN events (its transactions are visible in the
log only through the events of the changes made in them, e.g. ALTER_TABLE). Hive 3/4 write them with the
message {"txnid": N, "databases": [...], "tables": [...]} (tables named as "db.table" or paired with databases
by index), which is what is read here when a metastore does write them; a commit event naming no tables
applies to nothing.

Applier.apply() is idempotent per event: objects come from the message (the state as of the event); an event at
or below a loaded table's synced id is skipped (the load already saw it); an event on an incomplete table is
skipped and noted, since the table's load reads the latest state.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..thrift import hms, tjson
from .catalog import CachedTable, CatalogCache, TableKey
from .client import Metastore
from .loader import TableLoader, load_files, partition_name

log = logging.getLogger(__name__)

DB_EVENTS = {"CREATE_DATABASE", "ALTER_DATABASE", "DROP_DATABASE"}
FUNCTION_EVENTS = {"CREATE_FUNCTION", "DROP_FUNCTION"}
TABLE_EVENTS = {"CREATE_TABLE", "ALTER_TABLE", "DROP_TABLE", "ADD_PARTITION", "ALTER_PARTITION",
                "DROP_PARTITION", "INSERT"}
TXN_END_EVENTS = {"COMMIT_TXN", "ABORT_TXN"}


class Rename:
    """The barrier of a rename: the target may add the table only once the source has dropped it."""

    def __init__(self) -> None:
        self.source_done = threading.Event()
        self.source_table: CachedTable | None = None
        self.source_at = 0.0
        self.target_at = 0.0


@dataclass
class Task:
    event: Any  # hms.NotificationEvent
    scope: str  # "db" | "table"
    db: str
    table: str | None = None
    part: str = ""  # "" | "source" | "target" | "commit" | "abort"
    rename: Rename | None = None
    barrier: bool = False  # a database task that waits for all the database's table tasks before it
    done: Callable[[Task], None] | None = field(default=None, repr=False)

    @property
    def key(self) -> TableKey:
        assert self.table is not None
        return (self.db, self.table)


def message(e: Any) -> dict[str, Any]:
    try:
        return json.loads(e.message or "{}")
    except ValueError:
        return {}


def _names(db: str | None, table: str | None) -> tuple[str, str | None]:
    return (db or "").lower(), table.lower() if table else None


def txn_tables(msg: dict[str, Any]) -> list[TableKey]:
    tables, dbs = msg.get("tables") or [], msg.get("databases") or []
    out: list[TableKey] = []
    for i, t in enumerate(tables):
        if "." in t:
            d, n = t.split(".", 1)
        elif i < len(dbs):
            d, n = dbs[i], t
        else:
            continue
        if (d.lower(), n.lower()) not in out:
            out.append((d.lower(), n.lower()))
    return out


def plan(e: Any) -> list[Task]:
    kind = e.eventType
    db, table = _names(e.dbName, e.tableName)
    if kind in DB_EVENTS:
        return [Task(e, "db", db, barrier=True)]
    if kind in FUNCTION_EVENTS:
        return [Task(e, "db", db)]
    if kind == "ALTER_TABLE":
        m = message(e)
        before = m.get("tableObjBeforeJson")
        after = m.get("tableObjAfterJson")
        if before and after:
            b, a = tjson.loads(before, hms.Table), tjson.loads(after, hms.Table)
            src, dst = _names(b.dbName, b.tableName), _names(a.dbName, a.tableName)
            if src != dst:
                r = Rename()
                return [Task(e, "table", src[0], src[1], "source", r), Task(e, "table", dst[0], dst[1], "target", r)]
        return [Task(e, "table", db, table)]
    if kind in TABLE_EVENTS and table:
        return [Task(e, "table", db, table)]
    if kind in TXN_END_EVENTS:
        part = "commit" if kind == "COMMIT_TXN" else "abort"
        return [Task(e, "table", d, t, part) for d, t in txn_tables(message(e))]
    return []  # OPEN_TXN, ALLOC_WRITE_ID and types that change nothing cached


class Applier:
    """Applies tasks to the cache. Safe for concurrent tasks on different tables."""

    def __init__(self, cache: CatalogCache, metastore: Metastore, loader: TableLoader | None = None,
                 rename_timeout: float = 60.0) -> None:
        self.cache = cache
        self.ms = metastore
        self.loader = loader
        self.rename_timeout = rename_timeout
        # test hook: seconds to sleep before applying a task on this table (or database, key (db, None))
        self.delays: dict[tuple[str, str | None], float] = {}
        # test hook: a function called with each task before it is applied (it may raise, to fail the task)
        self.before: Callable[[Task], None] | None = None
        # when a list: (event id, event type, db, table, part, start, end, thread) of every task applied
        self.trace: list[tuple[int, str, str, str | None, str, float, float, str]] | None = None
        self.applied = 0
        self.skipped = 0

    def apply(self, task: Task) -> None:
        start = time.monotonic()
        d = self.delays.get((task.db, task.table))
        if d:
            time.sleep(d)
        if self.before is not None:
            self.before(task)
        if task.scope == "db":
            self._apply_db(task)
        else:
            self._apply_table(task)
        if self.trace is not None:
            self.trace.append((task.event.eventId, task.event.eventType, task.db, task.table, task.part, start,
                               time.monotonic(), threading.current_thread().name))

    # -- databases ------------------------------------------------------------------------------------
    def _apply_db(self, task: Task) -> None:
        e, kind, c = task.event, task.event.eventType, self.cache
        if c.excluded(task.db):
            self.skipped += 1
            return
        if kind == "CREATE_DATABASE":
            try:
                c.put_database(self.ms.get_database(task.db))
            except hms.NoSuchObjectException:
                pass  # dropped since: its DROP_DATABASE follows
        elif kind == "ALTER_DATABASE":
            after = message(e).get("dbObjAfterJson")
            if after:
                c.put_database(tjson.loads(after, hms.Database))
        elif kind == "DROP_DATABASE":
            # all its tables write-locked at once (all-or-nothing), so no reader sees half a database gone
            keys = [k for k in list(c.tables) if k[0] == task.db]
            with c.lock_tables(keys):
                c.remove_database(task.db)
        elif kind == "CREATE_FUNCTION":
            fn = message(e).get("functionObjJson")
            if fn:
                c.put_function(task.db, tjson.loads(fn, hms.Function))
        elif kind == "DROP_FUNCTION":
            c.remove_function(task.db, message(e).get("functionName") or "")
        self.applied += 1

    # -- tables ---------------------------------------------------------------------------------------
    def _apply_table(self, task: Task) -> None:
        e, c = task.event, self.cache
        if c.excluded(task.db, task.table):
            if task.rename is not None and task.part == "source":
                task.rename.source_done.set()
            self.skipped += 1
            return
        c.record(task.key, e.eventId)
        if task.part == "source":
            self._rename_source(task)
        elif task.part == "target":
            self._rename_target(task)
        elif e.eventType == "CREATE_TABLE":
            self._create(task)
        else:
            t = c.table(task.db, task.table or "")
            if t is None:
                if e.eventType != "DROP_TABLE" and task.part == "":
                    # not known (created before a blacklist change, or a missed event): load it afresh
                    t = c.add_table(task.db, task.table or "")
                    if t is not None and self.loader:
                        self.loader.request(t.key)
                self.skipped += 1
                return
            with t.lock:
                if c.tables.get(t.key) is not t:
                    self.skipped += 1
                    return
                if not t.complete:
                    t.skipped_event = max(t.skipped_event, e.eventId)
                    if e.eventType == "DROP_TABLE":
                        c.remove_table(*t.key)
                    self.skipped += 1
                    return
                if e.eventId <= t.synced_event:
                    self.skipped += 1
                    return
                self._apply_loaded(task, t)
        self.applied += 1

    def _create(self, task: Task) -> None:
        e, c = task.event, self.cache
        m = message(e)
        obj = tjson.loads(m["tableObjJson"], hms.Table) if m.get("tableObjJson") else None
        old = c.table(task.db, task.table or "")
        if old is not None and old.complete and e.eventId <= old.synced_event:
            return  # a load already read this table as it is after this event (a later incarnation, maybe)
        if obj is None:
            t = c.add_table(task.db, task.table or "")
        else:
            files = load_files(c, obj, [])
            t = c.add_table(task.db, task.table or "", obj, synced_event=e.eventId)
            if t is not None:
                with t.lock:
                    t.files = files
        if t is not None:
            if not t.complete and self.loader:
                self.loader.request(t.key)

    def _apply_loaded(self, task: Task, t: CachedTable) -> None:
        e, c, kind = task.event, self.cache, task.event.eventType
        m = message(e)
        if kind == "DROP_TABLE":
            c.remove_table(*t.key)
            return
        if task.part in ("commit", "abort"):
            if task.part == "commit":  # the transaction's writes: list the table's files again
                t.files = load_files(c, t.obj, list(t.partitions.values()))
            c.touch(t)
            return
        if kind == "ALTER_TABLE":
            obj = tjson.loads(m["tableObjAfterJson"], hms.Table)
            if obj.partitionKeys and _cols(obj) != _cols(t.obj):
                # ALTER TABLE ... CASCADE changes the partitions' columns too, with no events of their own:
                # the table is loaded again rather than guessed
                t.obj, t.partitions, t.files = None, {}, {}
                t.skipped_event = max(t.skipped_event, e.eventId)
                c.touch(t)
                if self.loader:
                    self.loader.request(t.key)
                return
            old_loc = t.obj.sd.location if t.obj.sd else None
            t.obj = obj
            if not obj.partitionKeys and (obj.sd.location if obj.sd else None) != old_loc:
                t.files = load_files(c, obj, [])
        elif kind == "ADD_PARTITION":
            for pj in m.get("partitionListJson") or []:
                p = tjson.loads(pj, hms.Partition)
                name = partition_name(t.obj, p)
                t.partitions[name] = p
                t.files[p.sd.location] = c.list_files(p.sd.location)
        elif kind == "ALTER_PARTITION":
            before = tjson.loads(m["partitionObjBeforeJson"], hms.Partition)
            after = tjson.loads(m["partitionObjAfterJson"], hms.Partition)
            old = t.partitions.pop(partition_name(t.obj, before), None)
            if old is not None and old.sd and old.sd.location != after.sd.location:
                t.files.pop(old.sd.location, None)
            t.partitions[partition_name(t.obj, after)] = after
            t.files[after.sd.location] = c.list_files(after.sd.location)
        elif kind == "DROP_PARTITION":
            keys = [k.name for k in t.obj.partitionKeys]
            for spec in m.get("partitions") or []:
                p = t.partitions.pop(partition_name_of(keys, spec), None)
                if p is not None and p.sd is not None:
                    t.files.pop(p.sd.location, None)
        elif kind == "INSERT":
            kv = m.get("partKeyVals")
            if kv:
                p = t.partitions.get(partition_name_of([k.name for k in t.obj.partitionKeys], kv))
                if p is not None:
                    t.files[p.sd.location] = c.list_files(p.sd.location)
            else:
                t.files = load_files(c, t.obj, list(t.partitions.values()))
        c.touch(t)

    def _rename_source(self, task: Task) -> None:
        r = task.rename
        assert r is not None
        try:
            t = self.cache.table(task.db, task.table or "")
            if t is not None:
                with t.lock:
                    if self.cache.tables.get(t.key) is t:
                        r.source_table = self.cache.remove_table(*t.key)
        finally:
            r.source_at = time.monotonic()
            r.source_done.set()

    def _rename_target(self, task: Task) -> None:
        r = task.rename
        assert r is not None
        if not r.source_done.wait(self.rename_timeout):
            raise TimeoutError(f"rename of event {task.event.eventId}: the source was not dropped within "
                               f"{self.rename_timeout:g}s")
        r.target_at = time.monotonic()
        # The renamed table's partitions moved with it (their locations too, without events of their own):
        # it starts incomplete and is loaded from the metastore.
        t = self.cache.add_table(task.db, task.table or "")
        if t is not None:
            with t.lock:
                t.skipped_event = task.event.eventId
            if self.loader:
                self.loader.request(t.key)


def _cols(t: Any) -> list[tuple[str, str]]:
    return [(c.name, c.type) for c in (t.sd.cols or [])] if t.sd else []


def partition_name_of(keys: list[str], spec: dict[str, str]) -> str:
    from ..core.names import make_part_name
    return make_part_name(keys, [spec.get(k, "") for k in keys])
