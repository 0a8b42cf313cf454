"""Hive's lock API (lock, check_lock, unlock, heartbeat, show_locks) and minimal transactions, per backend,
through real `metastore serve` processes: compatibility, request order, errors, expiry, several servers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hive_metastore.ttypes import (
    AbortTxnRequest,
    CheckLockRequest,
    CommitTxnRequest,
    HeartbeatRequest,
    LockComponent,
    LockLevel,
    LockRequest,
    LockState,
    LockType,
    NoSuchLockException,
    NoSuchTxnException,
    OpenTxnRequest,
    ShowLocksRequest,
    TxnAbortedException,
    TxnOpenException,
    UnlockRequest,
)

from conftest import Client, Database, Server, unique

R, W, X = LockType.SHARED_READ, LockType.SHARED_WRITE, LockType.EXCLUSIVE
A, WAIT = LockState.ACQUIRED, LockState.WAITING


def comp(type_: int, db: str, table: str | None = None, part: str | None = None) -> LockComponent:
    level = LockLevel.PARTITION if part else LockLevel.TABLE if table else LockLevel.DB
    return LockComponent(type=type_, level=level, dbname=db, tablename=table, partitionname=part)


def lock(c: Client, *comps: LockComponent, txnid: int | None = None):  # type: ignore[no-untyped-def]
    return c.lock(LockRequest(component=list(comps), txnid=txnid, user="u", hostname="h", agentInfo="test"))


def state(c: Client, lockid: int) -> int:
    return c.check_lock(CheckLockRequest(lockid=lockid)).state


def mine(c: Client, db: str) -> list:  # type: ignore[type-arg]
    return c.show_locks(ShowLocksRequest(dbname=db)).locks or []


@pytest.mark.parametrize("first,second,ok", [
    (R, R, True), (R, W, True), (R, X, False),
    (W, R, True), (W, W, False), (W, X, False),
    (X, R, False), (X, W, False), (X, X, False)])
def test_compatibility(client: Client, first: int, second: int, ok: bool) -> None:
    db = unique("db")
    a = lock(client, comp(first, db, "t"))
    assert a.state == A
    b = lock(client, comp(second, db, "t"))
    assert b.state == (A if ok else WAIT)
    assert state(client, b.lockid) == (A if ok else WAIT)
    client.unlock(UnlockRequest(lockid=a.lockid))
    assert state(client, b.lockid) == A
    client.unlock(UnlockRequest(lockid=b.lockid))
    assert mine(client, db) == []


def test_hierarchy(client: Client) -> None:
    db = unique("db")
    t = lock(client, comp(X, db, "t"))
    assert lock(client, comp(R, db, "other")).state == A  # another table
    p = lock(client, comp(R, db, "t", "p=1"))  # a partition of the locked table
    assert p.state == WAIT
    d = lock(client, comp(R, db))  # the database
    assert d.state == WAIT
    assert lock(client, comp(X, unique("db"))).state == A  # another database
    client.unlock(UnlockRequest(lockid=t.lockid))
    assert state(client, p.lockid) == A and state(client, d.lockid) == A
    client.unlock(UnlockRequest(lockid=d.lockid))
    # partitions: distinct ones do not conflict, the table lock does
    q1 = lock(client, comp(X, db, "u", "p=1"))
    q2 = lock(client, comp(X, db, "u", "p=2"))
    assert q1.state == A and q2.state == A
    assert lock(client, comp(W, db, "u")).state == WAIT
    assert lock(client, comp(X, db, "u", "p=1")).state == WAIT


def test_all_or_nothing(client: Client) -> None:
    db = unique("db")
    held = lock(client, comp(X, db, "b"))
    both = lock(client, comp(X, db, "a"), comp(X, db, "b"))
    assert both.state == WAIT
    # nothing of the waiting request is granted: another request for table a is not blocked by it... but it
    # was requested earlier, so a later conflicting request waits (request order)
    assert lock(client, comp(R, db, "a")).state == WAIT
    locks = {(x.lockid, x.tablename): x for x in mine(client, db)}
    assert locks[(both.lockid, "a")].state == WAIT and locks[(both.lockid, "b")].state == WAIT
    assert locks[(both.lockid, "a")].blockedByExtId == held.lockid
    client.unlock(UnlockRequest(lockid=held.lockid))
    assert state(client, both.lockid) == A


def test_request_order(client: Client) -> None:
    db = unique("db")
    r1 = lock(client, comp(R, db, "t"))
    x = lock(client, comp(X, db, "t"))
    assert x.state == WAIT
    r2 = lock(client, comp(R, db, "t"))  # compatible with r1, but must not overtake the waiting x
    assert r2.state == WAIT
    client.unlock(UnlockRequest(lockid=r1.lockid))
    assert state(client, r2.lockid) == WAIT  # x comes first
    assert state(client, x.lockid) == A
    client.unlock(UnlockRequest(lockid=x.lockid))
    assert state(client, r2.lockid) == A


def test_errors(client: Client) -> None:
    with pytest.raises(NoSuchLockException, match="No such lock lockid:987654321"):
        client.unlock(UnlockRequest(lockid=987654321))
    with pytest.raises(NoSuchLockException):
        client.check_lock(CheckLockRequest(lockid=987654321))
    with pytest.raises(NoSuchLockException):
        client.heartbeat(HeartbeatRequest(lockid=987654321))
    with pytest.raises(NoSuchTxnException):
        client.heartbeat(HeartbeatRequest(txnid=987654321))
    with pytest.raises(NoSuchTxnException):
        client.commit_txn(CommitTxnRequest(txnid=987654321))
    with pytest.raises(NoSuchTxnException):
        client.abort_txn(AbortTxnRequest(txnid=987654321))
    a = lock(client, comp(X, unique("db"), "t"))
    client.heartbeat(HeartbeatRequest(lockid=a.lockid))
    client.unlock(UnlockRequest(lockid=a.lockid))
    with pytest.raises(NoSuchLockException):
        client.unlock(UnlockRequest(lockid=a.lockid))


def test_transactions(client: Client) -> None:
    db = unique("db")
    ids = client.open_txns(OpenTxnRequest(num_txns=2, user="u", hostname="h")).txn_ids
    assert len(ids) == 2 and ids[1] == ids[0] + 1
    got = client.get_open_txns()
    assert set(ids) <= set(got.open_txns) and got.txn_high_water_mark >= ids[1]
    t1, t2 = ids
    a = lock(client, comp(X, db, "t"), txnid=t1)
    assert a.state == A
    assert lock(client, comp(X, db, "t"), txnid=t1).state == A  # one transaction's locks do not conflict
    b = lock(client, comp(R, db, "t"), txnid=t2)
    assert b.state == WAIT
    with pytest.raises(TxnOpenException):
        client.unlock(UnlockRequest(lockid=a.lockid))
    client.heartbeat(HeartbeatRequest(txnid=t1))
    client.commit_txn(CommitTxnRequest(txnid=t1))  # releases t1's locks
    assert state(client, b.lockid) == A
    client.abort_txn(AbortTxnRequest(txnid=t2))
    assert mine(client, db) == []
    with pytest.raises(TxnAbortedException):
        client.commit_txn(CommitTxnRequest(txnid=t2))
    with pytest.raises(TxnAbortedException):
        client.heartbeat(HeartbeatRequest(txnid=t2))
    with pytest.raises(TxnAbortedException):
        lock(client, comp(R, db, "t"), txnid=t2)
    got = client.get_open_txns()
    assert t1 not in got.open_txns and t2 in got.open_txns
    i = got.open_txns.index(t2)
    assert got.abortedBits[i // 8] & (1 << (i % 8))


@pytest.fixture(scope="module")
def short_timeout(database: Database, tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch_module: pytest.MonkeyPatch) -> Iterator[tuple[Server, Server]]:
    """Two servers on one database, with a 2 s lock timeout."""
    monkeypatch_module.setenv("METASTORE_TXN_TIMEOUT", "2s")
    a = Server(database, tmp_path_factory.mktemp("a")).start()
    b = Server(database, tmp_path_factory.mktemp("b")).start()
    monkeypatch_module.delenv("METASTORE_TXN_TIMEOUT")
    yield a, b
    a.stop()
    b.stop()


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture
def clients(short_timeout: tuple[Server, Server]) -> Iterator[tuple[Client, Client]]:
    """A client of each of the two servers on one database."""
    ca, cb = Client(short_timeout[0].port), Client(short_timeout[1].port)
    yield ca, cb
    ca.close()
    cb.close()


def test_ended_transactions_are_forgotten_a_timeout_after_they_end(clients: tuple[Client, Client]) -> None:
    """TXNS keeps only the recent past: an aborted transaction is listed by get_open_txns (with its aborted bit)
    until a timeout after it ended, then forgotten, as is a committed one; the table does not grow with every
    transaction ever opened."""
    c = clients[0]
    done, aborted, still = c.open_txns(OpenTxnRequest(num_txns=3, user="u", hostname="h")).txn_ids
    c.commit_txn(CommitTxnRequest(txnid=done))
    c.abort_txn(AbortTxnRequest(txnid=aborted))
    got = c.get_open_txns()
    assert aborted in got.open_txns and done not in got.open_txns
    with pytest.raises(NoSuchTxnException, match="already committed"):
        c.abort_txn(AbortTxnRequest(txnid=done))
    deadline = time.monotonic() + 30
    while aborted in c.get_open_txns().open_txns:  # each call expires and purges first
        assert time.monotonic() < deadline, "the aborted transaction was never forgotten"
        c.heartbeat(HeartbeatRequest(txnid=still))
        time.sleep(0.5)
    with pytest.raises(NoSuchTxnException, match="No such transaction"):
        c.abort_txn(AbortTxnRequest(txnid=done))
    # one that kept heartbeating is still open
    c.heartbeat(HeartbeatRequest(txnid=still))
    assert still in c.get_open_txns().open_txns
    c.commit_txn(CommitTxnRequest(txnid=still))


def test_two_servers_one_database(clients: tuple[Client, Client]) -> None:
    ca, cb = clients
    db = unique("db")
    a = lock(ca, comp(X, db, "t"))
    assert a.state == A
    b = lock(cb, comp(X, db, "t"))
    assert b.state == WAIT and b.lockid != a.lockid
    assert {x.lockid for x in mine(cb, db)} == {a.lockid, b.lockid}
    ca.heartbeat(HeartbeatRequest(lockid=a.lockid))
    assert state(cb, b.lockid) == WAIT
    ca.unlock(UnlockRequest(lockid=a.lockid))
    assert state(cb, b.lockid) == A
    cb.unlock(UnlockRequest(lockid=b.lockid))


def test_timeout_releases_a_dead_holder(clients: tuple[Client, Client]) -> None:
    ca, cb = clients
    db = unique("db")
    dead = lock(ca, comp(X, db, "t"))
    live = lock(cb, comp(X, db, "t"))
    t0 = time.time()
    while state(cb, live.lockid) == WAIT:  # polling heartbeats the waiting lock, not the dead one
        assert time.time() - t0 < 15
        time.sleep(0.2)
    assert 1.5 < time.time() - t0 < 6
    with pytest.raises(NoSuchLockException):
        ca.unlock(UnlockRequest(lockid=dead.lockid))
    # a heartbeating holder keeps its lock past the timeout
    other = lock(ca, comp(X, db, "t2"))
    for _ in range(4):
        time.sleep(1)
        ca.heartbeat(HeartbeatRequest(lockid=other.lockid))
    assert [x.lockid for x in mine(cb, db) if x.tablename == "t2"] == [other.lockid]
    # an open transaction that stops heartbeating is aborted, its locks released
    txn = ca.open_txns(OpenTxnRequest(num_txns=1, user="u", hostname="h")).txn_ids[0]
    lock(ca, comp(X, db, "t3"), txnid=txn)
    time.sleep(2.5)
    assert lock(cb, comp(X, db, "t3")).state == A
    with pytest.raises(TxnAbortedException):
        ca.commit_txn(CommitTxnRequest(txnid=txn))


def test_locks_survive_a_restart(database: Database, tmp_path: Path) -> None:
    srv = Server(database, tmp_path).start()
    try:
        c = Client(srv.port)
        db = unique("db")
        a = lock(c, comp(X, db, "t"))
        c.close()
        srv.kill()
        srv.start()
        c = Client(srv.port)
        assert [x.lockid for x in mine(c, db)] == [a.lockid]
        assert lock(c, comp(R, db, "t")).state == WAIT
        c.close()
    finally:
        srv.stop()


def test_timeout_setting(tmp_path: Path) -> None:
    from metastore import config
    # durations are parsed once at load, as float seconds
    assert config.load(env={}).txn_timeout == 300.0
    assert config.load(env={"METASTORE_TXN_TIMEOUT": "2s"}).txn_timeout == 2.0
    site = tmp_path / "hive-site.xml"
    site.write_text("<configuration><property><name>metastore.txn.timeout</name><value>45s</value></property>"
                    "</configuration>")
    assert config.load(str(site), env={}).txn_timeout == 45.0


# ---- the lock manager on the store, in this process: housekeeping off the hot path -------------------------

class _OnStore:
    """What the lock manager needs of the catalog (Locks' Transactional): the real store's write transactions."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def transaction(self) -> Any:
        return self.store.write()


@pytest.fixture(scope="module")
def lock_engine(database: Database) -> Iterator[Any]:
    from metastore.store import migrate
    from metastore.store.engine import create_engine
    from metastore.store.store import Store

    engine = create_engine(database.url)
    migrate.upgrade(engine, only_if_empty=True)
    Store(engine).initialize()  # the sequence row a write transaction locks (a server makes it at its start)
    yield engine
    engine.dispose()


def _purges(engine: Any) -> tuple[list[str], Any]:
    """The DELETEs of TXNS rows the engine runs (a listener on the real engine), and the listener to remove."""
    seen: list[str] = []

    def listener(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sql = " ".join(statement.upper().split())
        if sql.startswith("DELETE FROM") and "TXNS" in sql.split(" WHERE")[0]:
            seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", listener)
    return seen, listener


def test_ended_transactions_are_purged_at_most_once_per_interval(lock_engine: Any) -> None:
    """The purge of ended transactions is housekeeping: a process runs it once per interval, not in every lock
    call (each of which also expires locks and transactions, as before)."""
    from metastore.catalog.locks import EXCLUSIVE, TABLE, Component, Locks
    from metastore.store.store import Store

    locks = Locks(_OnStore(Store(lock_engine)), timeout=300)
    db = unique("db")
    seen, listener = _purges(lock_engine)
    try:
        for _ in range(20):
            ext, st = locks.lock([Component(EXCLUSIVE, TABLE, db, "t")], None, "u", "h")
            assert st == 1  # ACQUIRED
            locks.check_lock(ext)
            locks.unlock(ext)
        assert len(seen) == 1, f"{len(seen)} purges of TXNS in 60 lock calls"
    finally:
        sa.event.remove(lock_engine, "before_cursor_execute", listener)


def test_throttled_purge_keeps_expiry_on_time(lock_engine: Any) -> None:
    """With the purge throttled, a dead holder's lock is still released a timeout after its last heartbeat, an
    open transaction without heartbeats still aborted, and an ended transaction still forgotten soon after a
    timeout."""
    from metastore.catalog.locks import EXCLUSIVE, TABLE, Component, Locks
    from metastore.core.errors import TxnAborted
    from metastore.store.store import Store

    locks = Locks(_OnStore(Store(lock_engine)), timeout=1.0)
    db = unique("db")
    ended, silent = locks.open_txns(2, "u", "h")
    locks.abort_txn(ended)
    locks.lock([Component(EXCLUSIVE, TABLE, db, "t")], silent, "u", "h")
    dead, st = locks.lock([Component(EXCLUSIVE, TABLE, db, "u")], None, "u", "h")
    assert st == 1
    assert ended in locks.get_open_txns().aborted  # listed until forgotten
    assert locks.lock([Component(EXCLUSIVE, TABLE, db, "u")], None, "u", "h")[1] == 2  # WAITING
    time.sleep(1.5)  # past the timeout
    assert locks.lock([Component(EXCLUSIVE, TABLE, db, "u")], None, "u", "h")[1] == 1  # the dead one expired
    assert locks.lock([Component(EXCLUSIVE, TABLE, db, "t")], None, "u", "h")[1] == 1  # the silent txn's too
    with pytest.raises(TxnAborted):
        locks.commit_txn(silent)
    got = locks.get_open_txns()
    assert ended not in got.aborted and ended not in got.open_txns
