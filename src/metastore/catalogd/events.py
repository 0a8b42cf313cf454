"""From a notification event to the tasks the executors run, and from a task to changes of the cache.

plan(event) decodes the event's message once (core.messages.decode) and, dispatching on the message's type,
derives the tasks the processors run. They are named as the design names them (shared/design/000, Impala's
hierarchical event processing):

  DbTask               a database-scope event that is no barrier (CREATE_FUNCTION, DROP_FUNCTION): run by the
                       database's DbEventExecutor.
  DbBarrierTask        CREATE/ALTER/DROP_DATABASE: the database synchronization barrier. Its DbEventExecutor
                       runs it only once every table task of that database dispatched before it has finished,
                       and forwards none of the database's later table tasks until it has run.
  TableTask            one table's event (CREATE/ALTER/DROP_TABLE, ADD/ALTER/DROP_PARTITION, INSERT): run by
                       the table's processor in a TableEventExecutor, in event order per table.
  RenameSourceTask,    an ALTER_TABLE that renames: the two sides of the rename synchronization barrier, sharing
  RenameTargetTask     a RenameBarrier. The source drops the table; the target is not ready (its table
                       processor holds it) until the source has, so the table is never in both places.
  PseudoCommitTxnTask, COMMIT_TXN / ABORT_TXN: one pseudo event per table the transaction wrote (a transaction
  PseudoAbortTxnTask   involves several tables), sharing a TxnBarrier; each runs at its own table's processor,
                       after that table's earlier events, independently of the other tables. The transaction's
                       event counts as applied once all of them have run.

Transactions: the metastore writes OPEN_TXN, ALLOC_WRITE_ID, COMMIT_TXN and ABORT_TXN events in Hive 3/4's
formats (catalog/locks.py; core.messages TxnMessage). A COMMIT_TXN names the tables the transaction recorded
writes to (its write notifications, as Hive's), each given a pseudo event; a commit naming no tables, an
ABORT_TXN (Hive's names no tables), OPEN_TXN and ALLOC_WRITE_ID apply to nothing cached.

Applier.apply() is idempotent per event: objects come from the message (the state as of the event); an event at
or below a loaded table's synced id is skipped (the load already saw it); an event on an incomplete table is
skipped and noted, since the table's load reads the latest state. A message that cannot be read (not JSON, or
an object missing from it) makes the table load again from the metastore, or the database be read again.

Testing seam: Applier.apply(task) is the one call through which every task reaches the cache. The tests slow
down, trace or fail tasks by wrapping it on a processor's applier in-process (tests/test_catalogd_barriers.py,
`Traced`); nothing here exists for them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.events import DATABASE_EVENTS, FUNCTION_EVENTS, TABLE_EVENTS, TXN_END_EVENTS, EventType
from ..core.messages import (
    AddPartition,
    AlterDatabase,
    AlterPartition,
    AlterTable,
    CreateDatabase,
    CreateFunction,
    CreateTable,
    DropDatabase,
    DropFunction,
    DropPartition,
    DropTable,
    Insert,
    Message,
    MessageError,
    TxnMessage,
    Unknown,
    decode,
)
from ..core.names import make_part_name
from ..thrift import hms
from ..thrift.client import MetastoreClient
from .catalog import CachedTable, CatalogCache, TableKey
from .loader import TableLoader, load_files, partition_name

log = logging.getLogger(__name__)


# ---- barriers ---------------------------------------------------------------------------------------------

class RenameBarrier:
    """The rename synchronization barrier: the target side may add the table only once the source side has
    dropped it (or given up: failed, or excluded). Waiters are called when the source is done, from the
    source's thread, so an executor holding the target wakes at once."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._waiters: list[Callable[[], None]] = []
        self.source_table: CachedTable | None = None  # what the source dropped
        self.source_at = 0.0  # monotonic time the source finished (0: not yet)

    @property
    def source_done(self) -> bool:
        return self._done.is_set()

    def finish_source(self) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self.source_at = time.monotonic()
            self._done.set()
            waiters, self._waiters = self._waiters, []
        for w in waiters:
            w()

    def when_source_done(self, fn: Callable[[], None]) -> None:
        """Calls fn once the source is done (at once if it is)."""
        with self._lock:
            if not self._done.is_set():
                self._waiters.append(fn)
                return
        fn()

    def wait_source(self, timeout: float) -> bool:
        return self._done.wait(timeout)


@dataclass(frozen=True)
class TxnBarrier:
    """The transaction synchronization barrier of one COMMIT_TXN/ABORT_TXN: the tables it wrote, each given a
    pseudo event. The processor counts the event applied only when every pseudo event has run."""

    txn_id: int | None
    committed: bool
    tables: tuple[TableKey, ...]


# ---- tasks --------------------------------------------------------------------------------------------------

@dataclass(eq=False, kw_only=True)
class Task:
    """What an executor runs: the notification event, its decoded message, and the database it belongs to."""

    event: Any  # hms.NotificationEvent
    message: Message = field(repr=False)
    db: str

    @property
    def event_id(self) -> int:
        return self.message.event_id

    @property
    def event_type(self) -> str:
        return self.message.event_type


@dataclass(eq=False, kw_only=True)
class DbTask(Task):
    """A database-scope event that is no barrier (a function's): run by the database's DbEventExecutor."""


@dataclass(eq=False, kw_only=True)
class DbBarrierTask(DbTask):
    """A database event: waits for the database's earlier table tasks, and holds back its later ones."""


@dataclass(eq=False, kw_only=True)
class TableTask(Task):
    """One table's event, run by the table's processor in its TableEventExecutor."""

    table: str

    @property
    def key(self) -> TableKey:
        return (self.db, self.table)

    def ready(self) -> bool:
        """Whether the task may run now (its table processor holds it, and that table's later tasks, if not)."""
        return True


@dataclass(eq=False, kw_only=True)
class RenameSourceTask(TableTask):
    """The old name's side of a rename: drops the table, then opens the barrier."""

    barrier: RenameBarrier


@dataclass(eq=False, kw_only=True)
class RenameTargetTask(TableTask):
    """The new name's side of a rename: ready once the source has dropped the table."""

    barrier: RenameBarrier

    def ready(self) -> bool:
        return self.barrier.source_done


@dataclass(eq=False, kw_only=True)
class PseudoTxnTask(TableTask):
    """One table's part of a COMMIT_TXN or ABORT_TXN."""

    barrier: TxnBarrier


@dataclass(eq=False, kw_only=True)
class PseudoCommitTxnTask(PseudoTxnTask):
    """A committed transaction's writes on one table: its files are listed again."""


@dataclass(eq=False, kw_only=True)
class PseudoAbortTxnTask(PseudoTxnTask):
    """An aborted transaction on one table: nothing of it is visible; the table takes a new version only."""


def _decoded(e: Any) -> Message:
    try:
        return decode(e)
    except MessageError as err:
        # not Hive's JSON: the task still goes to its database or table, which the applier reads afresh
        log.warning("event %s (%s): %s", e.eventId, e.eventType, err)
        return Unknown(str(e.eventType or ""), int(e.eventId or 0), str(e.dbName or ""), e.tableName or None, {})


def plan(e: Any) -> list[Task]:
    """The tasks of one notification event (none for types that change nothing cached: OPEN_TXN, ...)."""
    msg = _decoded(e)
    kind = EventType.of(msg.event_type)
    db, table = msg.db.lower(), (msg.table or "").lower()
    if kind in DATABASE_EVENTS:
        return [DbBarrierTask(event=e, message=msg, db=db)]
    if kind in FUNCTION_EVENTS:
        return [DbTask(event=e, message=msg, db=db)]
    if isinstance(msg, AlterTable) and (names := msg.renamed()) is not None:
        (src_db, src), (dst_db, dst) = names
        barrier = RenameBarrier()
        return [RenameSourceTask(event=e, message=msg, db=src_db, table=src, barrier=barrier),
                RenameTargetTask(event=e, message=msg, db=dst_db, table=dst, barrier=barrier)]
    if kind in TABLE_EVENTS and table:
        return [TableTask(event=e, message=msg, db=db, table=table)]
    if kind in TXN_END_EVENTS and isinstance(msg, TxnMessage):
        txn = TxnBarrier(msg.txn_id, kind is EventType.COMMIT_TXN, tuple(msg.tables()))
        pseudo = PseudoCommitTxnTask if txn.committed else PseudoAbortTxnTask
        return [pseudo(event=e, message=msg, db=d, table=t, barrier=txn) for d, t in txn.tables]
    return []


def spec_name(keys: list[str], spec: dict[str, str]) -> str:
    """The partition name of a message's partition spec (values by key name)."""
    return make_part_name(keys, [spec.get(k, "") for k in keys])


class Applier:
    """Applies tasks to the cache. Safe for concurrent tasks on different tables."""

    def __init__(self, cache: CatalogCache, metastore: MetastoreClient, loader: TableLoader | None = None,
                 rename_timeout: float = 60.0) -> None:
        self.cache = cache
        self.ms = metastore
        self.loader = loader
        # a rename target runs only when its source is done (its processor holds it); this bounds the wait of
        # a target run directly, by the sequential processor in event order (it never waits there)
        self.rename_timeout = rename_timeout
        self.applied = 0
        self.skipped = 0

    def apply(self, task: Task) -> None:
        if isinstance(task, TableTask):
            self._apply_table(task)
        else:
            self._apply_db(task)

    # -- databases ------------------------------------------------------------------------------------
    def _apply_db(self, task: Task) -> None:
        msg, c = task.message, self.cache
        if c.excluded(task.db):
            self.skipped += 1
            return
        if isinstance(msg, CreateDatabase):
            try:
                c.put_database(self.ms.get_database(task.db))
            except hms.NoSuchObjectException:
                pass  # dropped since: its DROP_DATABASE follows
        elif isinstance(msg, AlterDatabase) and msg.after is not None:
            c.put_database(msg.after)
        elif isinstance(msg, DropDatabase):
            self._drop_database(task.db)
        elif isinstance(msg, CreateFunction) and msg.function is not None:
            c.put_function(task.db, msg.function)
        elif isinstance(msg, DropFunction):
            c.remove_function(task.db, msg.function_name)
        else:  # a message that could not be read: the database as the metastore has it now
            self._reread_database(task.db)
        self.applied += 1

    def _reread_database(self, db: str) -> None:
        c = self.cache
        try:
            c.put_database(self.ms.get_database(db))
            for fn in self.ms.get_functions(db, "*"):
                c.put_function(db, self.ms.get_function(db, fn))
        except hms.NoSuchObjectException:
            self._drop_database(db)

    def _drop_database(self, db: str) -> None:
        # all its tables write-locked at once (all-or-nothing), so no reader sees half a database gone
        c = self.cache
        keys = [k for k in list(c.tables) if k[0] == db]
        with c.lock_tables(keys):
            c.remove_database(db)

    # -- tables ---------------------------------------------------------------------------------------
    def _apply_table(self, task: TableTask) -> None:
        c, eid = self.cache, task.event_id
        if c.excluded(task.db, task.table):
            if isinstance(task, RenameSourceTask):
                task.barrier.finish_source()
            self.skipped += 1
            return
        c.record(task.key, eid)
        if isinstance(task, RenameSourceTask):
            self._rename_source(task)
        elif isinstance(task, RenameTargetTask):
            self._rename_target(task)
        elif isinstance(task.message, CreateTable):
            self._create(task, task.message)
        else:
            t = c.table(task.db, task.table)
            if t is None:
                if not isinstance(task.message, DropTable) and not isinstance(task, PseudoTxnTask):
                    # not known (created before a blacklist change, or a missed event): load it afresh
                    t = c.add_table(task.db, task.table)
                    if t is not None and self.loader:
                        self.loader.request(t.key)
                self.skipped += 1
                return
            with t.lock:
                if c.tables.get(t.key) is not t:
                    self.skipped += 1
                    return
                if not t.complete:
                    t.skipped_event = max(t.skipped_event, eid)
                    if isinstance(task.message, DropTable):
                        c.remove_table(*t.key)
                    self.skipped += 1
                    return
                if eid <= t.synced_event:
                    self.skipped += 1
                    return
                self._apply_loaded(task, t)
        self.applied += 1

    def _create(self, task: TableTask, msg: CreateTable) -> None:
        c = self.cache
        old = c.table(task.db, task.table)
        if old is not None and old.complete and task.event_id <= old.synced_event:
            return  # a load already read this table as it is after this event (a later incarnation, maybe)
        obj = msg.table_obj
        if obj is None:
            t = c.add_table(task.db, task.table)
        else:
            files = load_files(c, obj, [])
            t = c.add_table(task.db, task.table, obj, synced_event=task.event_id)
            if t is not None:
                with t.lock:
                    t.files = files
        if t is not None and not t.complete and self.loader:
            self.loader.request(t.key)

    def _reload(self, t: CachedTable, event_id: int) -> None:
        """Forget the table but its name and load it again (under its lock): for what the events do not say."""
        t.obj, t.partitions, t.files = None, {}, {}
        t.skipped_event = max(t.skipped_event, event_id)
        self.cache.touch(t)
        if self.loader:
            self.loader.request(t.key)

    def _apply_loaded(self, task: TableTask, t: CachedTable) -> None:
        c, msg, eid = self.cache, task.message, task.event_id
        if isinstance(msg, DropTable):
            c.remove_table(*t.key)
            return
        if isinstance(task, PseudoCommitTxnTask):  # the transaction's writes: list the table's files again
            t.files = load_files(c, t.obj, list(t.partitions.values()))
        elif isinstance(task, PseudoTxnTask):
            pass  # an abort: the new version tells subscribers only that the table was looked at again
        elif isinstance(msg, AlterTable):
            obj = msg.after
            if obj is None:
                self._reload(t, eid)
                return
            if obj.partitionKeys and _cols(obj) != _cols(t.obj):
                # ALTER TABLE ... CASCADE changes the partitions' columns too, with no events of their own:
                # the table is loaded again rather than guessed
                self._reload(t, eid)
                return
            old_loc = t.obj.sd.location if t.obj.sd else None
            t.obj = obj
            if not obj.partitionKeys and (obj.sd.location if obj.sd else None) != old_loc:
                t.files = load_files(c, obj, [])
        elif isinstance(msg, AddPartition):
            for p in msg.partitions:
                t.partitions[partition_name(t.obj, p)] = p
                t.files[p.sd.location] = c.list_files(p.sd.location)
        elif isinstance(msg, AlterPartition):
            before, after = msg.before, msg.after
            if before is None or after is None:
                self._reload(t, eid)
                return
            old = t.partitions.pop(partition_name(t.obj, before), None)
            if old is not None and old.sd and old.sd.location != after.sd.location:
                t.files.pop(old.sd.location, None)
            t.partitions[partition_name(t.obj, after)] = after
            t.files[after.sd.location] = c.list_files(after.sd.location)
        elif isinstance(msg, DropPartition):
            keys = [k.name for k in t.obj.partitionKeys]
            for spec in msg.specs:
                p = t.partitions.pop(spec_name(keys, spec), None)
                if p is not None and p.sd is not None:
                    t.files.pop(p.sd.location, None)
        elif isinstance(msg, Insert):
            kv = msg.part_key_vals
            if kv:
                written = t.partitions.get(spec_name([k.name for k in t.obj.partitionKeys], kv))
                if written is not None:
                    t.files[written.sd.location] = c.list_files(written.sd.location)
            else:
                t.files = load_files(c, t.obj, list(t.partitions.values()))
        else:  # a message that could not be read
            self._reload(t, eid)
            return
        c.touch(t)

    def _rename_source(self, task: RenameSourceTask) -> None:
        r = task.barrier
        try:
            t = self.cache.table(task.db, task.table)
            if t is not None:
                with t.lock:
                    if self.cache.tables.get(t.key) is t:
                        r.source_table = self.cache.remove_table(*t.key)
        finally:
            r.finish_source()

    def _rename_target(self, task: RenameTargetTask) -> None:
        if not task.barrier.wait_source(self.rename_timeout):
            raise TimeoutError(f"rename of event {task.event_id}: the source was not dropped within "
                               f"{self.rename_timeout:g}s")
        # The renamed table's partitions moved with it (their locations too, without events of their own):
        # it starts incomplete and is loaded from the metastore.
        t = self.cache.add_table(task.db, task.table)
        if t is not None:
            with t.lock:
                t.skipped_event = task.event_id
            if self.loader:
                self.loader.request(t.key)


def _cols(t: Any) -> list[tuple[str, str]]:
    return [(c.name, c.type) for c in (t.sd.cols or [])] if t.sd else []
