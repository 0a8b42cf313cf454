"""Acceptance 2 of catalogd: each barrier of the hierarchical processor (the database barrier, the rename
barrier, the transactions' pseudo events), with tables slowed down on purpose, shows its ordering guarantee;
other work proceeds in parallel meanwhile.

The testing seam is `Traced` below: it wraps the processor's Applier.apply in-process (the one call through
which every task reaches the cache) to record, slow down or fail tasks; production code has no hook for it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from stores import sqlite_only  # noqa: F401  (the `backend` fixture: SQLite only; catalogd's barriers over Thrift)

from metastore.catalogd.catalog import CatalogCache
from metastore.catalogd.events import Applier, PseudoCommitTxnTask, RenameSourceTask, RenameTargetTask, TableTask, Task
from metastore.catalogd.loader import TableLoader
from metastore.catalogd.processor import HierarchicalProcessor
from metastore.catalogd.verify import cache_view, metastore_view
from metastore.thrift import hms

from catalogd_support import Metastore, ReplayLog, bootstrap, set_table_params, table_obj
from conftest import Server, unique

SLOW = 0.3

# (event id, event type, db, table or None, task class name, start, end, thread name)
Row = tuple[int, str, str, str | None, str, float, float, str]


class Traced:
    """Wraps an applier's apply (on the instance): every task is recorded as a Row once applied; a task on a
    table (db, table) in `delays` (or a database task, key (db, None)) first sleeps that long; `fail`, when set,
    is called with each task before it is applied and may raise to fail it."""

    def __init__(self, applier: Applier) -> None:
        self.rows: list[Row] = []
        self.delays: dict[tuple[str, str | None], float] = {}
        self.fail: Callable[[Task], None] | None = None
        self._lock = threading.Lock()
        inner = applier.apply

        def apply(task: Task) -> None:
            start = time.monotonic()
            table = task.table if isinstance(task, TableTask) else None
            d = self.delays.get((task.db, table))
            if d:
                time.sleep(d)
            if self.fail is not None:
                self.fail(task)
            inner(task)
            with self._lock:
                self.rows.append((task.event_id, task.event_type, task.db, table, type(task).__name__, start,
                                  time.monotonic(), threading.current_thread().name))
        applier.apply = apply  # type: ignore[method-assign]


@pytest.fixture(scope="module")
def ms(server: Server) -> Iterator[Metastore]:
    m = Metastore(server.uri)
    yield m
    m.close()


class Run:
    """A cache and a hierarchical processor started at the current event id, tracing every task."""

    def __init__(self, ms: Any, **kw: Any) -> None:
        self.ms = ms
        self.cache = CatalogCache()
        self.start = bootstrap(self.cache, ms)
        self.kw = kw
        self.proc: HierarchicalProcessor | None = None
        self.loader: TableLoader | None = None
        self.trace: Traced | None = None

    def make(self, log: Any = None) -> HierarchicalProcessor:
        src = log or self.ms
        self.loader = TableLoader(self.cache, src, threads=2)
        self.proc = HierarchicalProcessor(self.cache, src, self.loader, self.start, db_executors=4,
                                          table_executors_per_db=4, **self.kw)
        self.trace = Traced(self.proc.applier)
        return self.proc

    @property
    def delays(self) -> dict[tuple[str, str | None], float]:
        assert self.trace is not None
        return self.trace.delays

    def tasks(self, **match: Any) -> list[Row]:
        """The rows matching: id, type, db, table, cls (a task class)."""
        assert self.trace is not None
        names = ("id", "type", "db", "table", "cls")
        want = {k: v.__name__ if k == "cls" else v for k, v in match.items()}
        return [t for t in list(self.trace.rows) if all(t[names.index(k)] == v for k, v in want.items())]

    def one(self, **match: Any) -> Row:
        found = self.tasks(**match)
        assert len(found) == 1, (match, found)
        return found[0]

    def close(self) -> None:
        if self.proc:
            self.proc.stop()
        if self.loader:
            self.loader.close()


@pytest.fixture
def run(ms: Metastore) -> Iterator[Any]:
    runs: list[Run] = []

    def make(**kw: Any) -> Run:
        r = Run(ms, **kw)
        runs.append(r)
        return r
    yield make
    for r in runs:
        r.close()


def probe() -> HierarchicalProcessor:
    return HierarchicalProcessor.__new__(HierarchicalProcessor)


def placed(db: str, table: str | None = None) -> tuple[int, int]:
    """(database executor, table executor) the hierarchical processor (4 x 4) gives a database or table."""
    import zlib
    d = zlib.crc32(db.encode()) % 4
    return d, (zlib.crc32(f"{db}.{table}".encode()) % 4 if table else -1)


def pick_db(avoid: set[int], prefix: str) -> str:
    for i in range(1000):
        name = f"{prefix}_{i}"
        if placed(name)[0] not in avoid:
            return name
    raise AssertionError


def pick_table(db: str, avoid: set[int], prefix: str = "t") -> str:
    for i in range(1000):
        name = f"{prefix}{i}"
        if placed(db, name)[1] not in avoid:
            return name
    raise AssertionError


def create_db(ms: Metastore, name: str) -> None:
    ms.create_database(hms.Database(name=name, description="", locationUri=None, parameters={}))


def add_part(ms: Metastore, db: str, table: str, value: str) -> None:
    t = ms.get_table(db, table)
    t.sd.location = None
    ms.add_partition(hms.Partition(values=[value], dbName=db, tableName=table, sd=t.sd, parameters={}))


def test_database_event_waits_for_its_tables_and_they_for_it(ms: Metastore, run: Any) -> None:
    r = run()
    d = unique("bar")
    other = pick_db({placed(d)[0]}, d + "_o")
    t1 = pick_table(d, set(), "slow")
    t2 = pick_table(d, {placed(d, t1)[1]}, "fast")
    for name in (d, other):
        create_db(ms, name)
    ms.create_table(table_obj(d, t1, True))
    ms.create_table(table_obj(d, t2, False))
    ms.create_table(table_obj(other, "u", False))
    for v in ("1", "2"):
        add_part(ms, d, t1, v)
    db = ms.get_database(d)
    db.parameters = {"k": "v"}
    ms.alter_database(d, db)
    ms.create_table(table_obj(d, "after", False))
    ms.create_table(table_obj(other, "v", False))
    proc = r.make()
    r.delays[(d, t1)] = SLOW
    proc.catch_up(60)

    alter = r.one(type="ALTER_DATABASE", db=d)
    before = [t for t in r.tasks(db=d) if t[3] is not None and t[0] < alter[0]]
    assert len(before) == 4  # two creates, two partitions
    assert all(t[6] <= alter[5] for t in before), "the database event ran before its tables finished"
    after = r.one(type="CREATE_TABLE", db=d, table="after")
    assert after[5] >= alter[6], "a table event of the database ran before the database event finished"
    # the other database went on while the slow table held its own database's events back
    slow_last = max(t[6] for t in r.tasks(db=d, table=t1))
    assert r.one(type="CREATE_TABLE", db=other, table="v")[6] < slow_last
    assert r.one(type="CREATE_TABLE", db=d, table=t2)[6] < slow_last  # a table beside the slow one too
    assert proc.barrier_waits >= 1
    assert r.cache.dbs[d].obj.parameters == {"k": "v"}


def test_drop_database_waits_for_its_tables(ms: Metastore, run: Any) -> None:
    r = run()
    d = unique("bar")
    create_db(ms, d)
    ms.create_table(table_obj(d, "t", True))
    for v in ("1", "2", "3"):
        add_part(ms, d, "t", v)
    ms.drop_database(d, True, True)
    create_db(ms, d)  # and again, empty
    proc = r.make()
    r.delays[(d, "t")] = SLOW
    proc.catch_up(60)
    drop = r.one(type="DROP_DATABASE", db=d)
    assert all(t[6] <= drop[5] for t in r.tasks(db=d, table="t"))
    assert [x[1] for x in r.tasks(db=d, table=None)] == ["CREATE_DATABASE", "DROP_DATABASE", "CREATE_DATABASE"]
    assert d in r.cache.dbs and r.cache.table_names(d) == []
    assert r.cache.history[(d, "t")] == sorted(r.cache.history[(d, "t")])


@pytest.mark.parametrize("across", ["databases", "executors"])
def test_rename_source_drops_before_target_creates(ms: Metastore, run: Any, across: str) -> None:
    r = run()
    d1 = unique("ren")
    d2 = pick_db({placed(d1)[0]}, d1 + "_x") if across == "databases" else d1
    src = "a"
    dst = pick_table(d2, {placed(d1, src)[1]} if d2 == d1 else set(), "b")
    create_db(ms, d1)
    if d2 != d1:
        create_db(ms, d2)
    ms.create_table(table_obj(d1, src, True))
    for v in ("1", "2"):
        add_part(ms, d1, src, v)
    t = ms.get_table(d1, src)
    t.dbName, t.tableName = d2, dst
    ms.alter_table(d1, src, t)
    add_part(ms, d2, dst, "3")
    proc = r.make()
    r.delays[(d1, src)] = SLOW
    proc.catch_up(60)
    r.loader.wait_idle(30)  # type: ignore[union-attr]

    source = r.one(type="ALTER_TABLE", cls=RenameSourceTask)
    target = r.one(type="ALTER_TABLE", cls=RenameTargetTask)
    assert source[7] != target[7], "the rename's two sides ran on one executor: the test proves nothing"
    earlier = [x for x in r.tasks(db=d1, table=src) if x[0] < source[0]]
    assert len(earlier) == 3 and all(x[6] <= source[5] for x in earlier)
    assert target[5] >= source[5] + SLOW  # the target ran only after the (slowed) source had dropped the table
    assert target[0] == source[0]
    assert r.one(type="ADD_PARTITION", db=d2, table=dst)[5] >= target[6]
    assert (d1, src) not in r.cache.tables
    view = cache_view(r.cache, {d1, d2})
    assert view == metastore_view(ms, {d1, d2})
    assert sorted(view[d2]["tables"][dst]["partitions"]) == ["p=1", "p=2", "p=3"]


def test_rename_target_waits_while_source_is_slow(ms: Metastore, run: Any) -> None:
    # The target side starts waiting at once on its own executor; it must not add the table until the
    # source side, held up by the slow table's earlier events, has dropped it.
    r = run()
    d1 = unique("ren")
    d2 = pick_db({placed(d1)[0]}, d1 + "_y")
    for d in (d1, d2):
        create_db(ms, d)
    ms.create_table(table_obj(d1, "a", False))
    for i in range(3):
        set_table_params(ms, d1, "a", i=str(i))
    t = ms.get_table(d1, "a")
    t.dbName, t.tableName = d2, "z"
    ms.alter_table(d1, "a", t)
    renamed = ms.current_event_id()
    # a later event of another table that shares the target's table executor
    neighbour = pick_table(d2, set(range(4)) - {placed(d2, "z")[1]}, "n")
    ms.create_table(table_obj(d2, neighbour, False))
    proc = r.make()
    r.delays[(d1, "a")] = SLOW
    seen_both: list[bool] = []

    def watch() -> None:  # never may the table be in both places, or in the target before the source's drop
        while proc.synced_event_id < renamed:
            seen_both.append((d1, "a") in r.cache.tables and (d2, "z") in r.cache.tables)
            time.sleep(0.005)
    w = threading.Thread(target=watch)
    w.start()
    proc.catch_up(60)
    w.join(10)
    assert seen_both and not any(seen_both)
    source, target = r.one(cls=RenameSourceTask), r.one(cls=RenameTargetTask)
    assert source[0] == target[0] == renamed
    assert target[5] >= source[5] + SLOW, "the target ran before the slow source had dropped the table"
    # the held target held back its own table only: the neighbour's later event ran meanwhile
    after = r.one(type="CREATE_TABLE", db=d2, table=neighbour)
    assert after[0] > renamed and after[7] == target[7] and after[6] < source[6]


def test_transaction_events_become_per_table_pseudo_events(ms: Metastore, run: Any) -> None:
    r = run()
    d = unique("txn")
    create_db(ms, d)
    slow = pick_table(d, set(), "s")
    fast = pick_table(d, {placed(d, slow)[1]}, "f")
    for n in (slow, fast):
        ms.create_table(table_obj(d, n, False))
    txnid = ms.open_txns(hms.OpenTxnRequest(num_txns=1, user="u", hostname="h")).txn_ids[0]
    for n in (slow, fast):
        set_table_params(ms, d, n, txn=str(txnid))
    ms.commit_txn(hms.CommitTxnRequest(txnid=txnid))
    log = ReplayLog(ms, r.start, [(ms.current_event_id(), "COMMIT_TXN", [(d, slow), (d, fast)])])
    commit_id = log.last
    assert log.events[-1].eventType == "COMMIT_TXN"
    proc = r.make(log)
    r.delays[(d, slow)] = SLOW
    proc.poll_once()
    # while the slow table's part runs, the synced id stays below the commit
    deadline = time.time() + 10
    while not r.tasks(type="COMMIT_TXN", table=fast) and time.time() < deadline:
        time.sleep(0.01)
    assert proc.synced_event_id < commit_id
    assert proc.wait_synced(commit_id, 30)
    parts = r.tasks(type="COMMIT_TXN")
    assert sorted((x[3], x[4]) for x in parts) == sorted((n, PseudoCommitTxnTask.__name__) for n in (slow, fast))
    s, f = r.one(type="COMMIT_TXN", table=slow), r.one(type="COMMIT_TXN", table=fast)
    assert s[7] != f[7]
    assert f[6] < s[6], "the fast table's part waited for the slow one"
    for x in (s, f):  # each after its own table's earlier events
        assert all(y[6] <= x[5] for y in r.tasks(table=x[3]) if y[0] < commit_id)
    assert r.cache.history[(d, slow)][-1] == commit_id == r.cache.history[(d, fast)][-1]


def test_synced_id_and_backpressure(ms: Metastore, run: Any) -> None:
    r = run(max_outstanding=3)
    d = unique("bp")
    create_db(ms, d)
    ms.create_table(table_obj(d, "t", False))
    for i in range(8):
        set_table_params(ms, d, "t", i=str(i))
    proc = r.make()
    r.delays[(d, "t")] = 0.1
    peak = [0]
    syncs: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], proc.outstanding())
            syncs.append(proc.synced_event_id)
            time.sleep(0.005)
    s = threading.Thread(target=sample)
    s.start()
    try:
        proc.catch_up(60)
    finally:
        stop.set()
        s.join()
    assert 1 <= peak[0] <= 3
    assert syncs == sorted(syncs) and proc.synced_event_id == ms.current_event_id()
    assert r.cache.table(d, "t").obj.parameters["i"] == "7"  # type: ignore[union-attr]


def test_failed_event_invalidates_the_table_and_processing_goes_on(ms: Metastore, run: Any) -> None:
    r = run()
    d = unique("inv")
    create_db(ms, d)
    ms.create_table(table_obj(d, "t", True))
    ms.create_table(table_obj(d, "u", False))
    for v in ("1", "2"):
        add_part(ms, d, "t", v)
    set_table_params(ms, d, "u", later="yes")
    proc = r.make()
    failed: list[int] = []

    def fail_once(task: Any) -> None:
        if task.event_type == "ADD_PARTITION" and not failed:
            failed.append(task.event_id)
            raise RuntimeError("injected failure")
    assert r.trace is not None
    r.trace.fail = fail_once
    proc.catch_up(60)
    r.loader.wait_idle(30)  # type: ignore[union-attr]
    assert failed and proc.metrics.failed == 1 and proc.metrics.invalidated == 1
    assert r.loader.loads >= 1  # type: ignore[union-attr]
    assert cache_view(r.cache, {d}) == metastore_view(ms, {d})
    assert r.cache.table(d, "u").obj.parameters["later"] == "yes"  # type: ignore[union-attr]


def test_multi_table_write_locks_are_all_or_nothing() -> None:
    from metastore.catalogd.catalog import LockTimeout
    cache = CatalogCache()
    cache.put_database(hms.Database(name="d", parameters={}))
    for n in ("a", "b", "c"):
        cache.add_table("d", n)
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with cache.lock_tables([("d", "b")]):
            held.set()
            release.wait(10)
    h = threading.Thread(target=holder)
    h.start()
    held.wait(5)
    t0 = time.monotonic()
    with pytest.raises(LockTimeout), cache.lock_tables([("d", "a"), ("d", "b"), ("d", "c")], attempts=5, wait=0.02):
        pass
    assert time.monotonic() - t0 < 2  # bounded retries
    # nothing of the failed attempt stayed locked: another thread takes a and c at once
    got: list[bool] = []

    def other() -> None:
        a, c = cache.tables[("d", "a")].lock, cache.tables[("d", "c")].lock
        ok = a.acquire(timeout=0.5)
        ok = c.acquire(timeout=0.5) and ok
        got.append(ok)
        a.release()
        c.release()
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert got == [True]
    release.set()
    h.join()
    with cache.lock_tables([("d", "a"), ("d", "b")], attempts=5, wait=0.02) as tables:
        assert [x.name for x in tables] == ["a", "b"]
