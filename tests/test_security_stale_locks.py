"""Crash leftovers: a server process killed (kill -9) while its Iceberg REST commit holds or waits for Hive's
table lock leaves that lock in the store. With the transaction timeout at 300 s, the next commit on the table
must still succeed at once: a restarted server (or any live one on this machine, once blocked by it) releases a
lock whose holder process is provably gone. A live process's lock is never released by another server, and a
holder on another machine is left to the timeout. Through real `metastore serve` processes on each backend."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from conftest import Client, Database, Server, unique

requests = pytest.importorskip("requests")
pytest.importorskip("pyiceberg.catalog.rest")

from hive_metastore.ttypes import (  # noqa: E402
    LockComponent,
    LockLevel,
    LockRequest,
    LockState,
    LockType,
    ShowLocksRequest,
    UnlockRequest,
)

# every test starts, kills and restarts servers: seconds each
pytestmark = pytest.mark.slow

LONG = {"METASTORE_TXN_TIMEOUT": "300s"}  # a stale lock would block for five minutes: "at once" is provable
SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def http(srv: Server, method: str, path: str, body: Any = None, timeout: float = 120) -> requests.Response:
    return requests.request(method, srv.rest_uri + path, data=json.dumps(body) if body is not None else None,
                            headers={"Content-Type": "application/json"}, timeout=timeout)


def make_table(srv: Server) -> tuple[str, str]:
    ns = unique("stale")
    assert http(srv, "POST", "/v1/namespaces", {"namespace": [ns]}).status_code == 200
    r = http(srv, "POST", f"/v1/namespaces/{ns}/tables", {"name": "t", "schema": SCHEMA})
    assert r.status_code == 200, r.text
    return ns, "t"


def commit(srv: Server, ns: str, name: str, value: str, timeout: float = 120) -> requests.Response:
    """One REST commit (a property change: it writes a metadata file and swaps the table's metadata_location
    under Hive's exclusive table lock)."""
    return http(srv, "POST", f"/v1/namespaces/{ns}/tables/{name}",
                {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": value}}]}, timeout)


def rest_locks(c: Client, ns: str) -> list[Any]:
    return [x for x in c.show_locks(ShowLocksRequest(dbname=ns)).locks or [] if x.user == "iceberg-rest"]


def hold_table_lock(c: Client, ns: str, name: str) -> int:
    """An exclusive table lock taken through Thrift, as a lock-path writer (HiveCatalog) takes it."""
    r = c.lock(LockRequest(component=[LockComponent(type=LockType.EXCLUSIVE, level=LockLevel.TABLE, dbname=ns,
                                                    tablename=name)], user="writer", hostname="h"))
    assert r.state == LockState.ACQUIRED
    return r.lockid


def stored_states(db: Database, ns: str) -> list[str]:
    """The states of the REST commit locks in the store, read with SQL: no server call, so nothing is
    released by looking, and no store write lock is needed."""
    engine = sa.create_engine(db.url)
    try:
        with engine.connect() as conn:
            t = sa.table("HIVE_LOCKS", sa.column("HL_DB"), sa.column("HL_USER"), sa.column("HL_LOCK_STATE"))
            return list(conn.execute(sa.select(t.c.HL_LOCK_STATE).where(
                t.c.HL_DB == ns, t.c.HL_USER == "iceberg-rest")).scalars())
    finally:
        engine.dispose()


def stored_rest_locks(db: Database, ns: str) -> int:
    return len(stored_states(db, ns))


def commit_in_background(srv: Server, ns: str, name: str, value: str) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(commit(srv, ns, name, value))
        except requests.RequestException as e:  # the server was killed under it
            out.append(e)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th, out


def wait_for(predicate: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@dataclass
class WaitingCommit:
    """A REST commit (in `thread`, its answer or error into `out`) waiting for the table lock `held` that a
    Thrift client of another connection holds."""
    ns: str
    name: str
    held: int
    client: Client
    thread: threading.Thread
    out: list[Any]


def commit_waiting_for_a_lock(committer: Server, holder: Server) -> WaitingCommit:
    """A new table; a Thrift client of `holder` takes its lock, then a REST commit through `committer` asks for
    it and waits (returned once its lock request is in the store)."""
    ns, name = make_table(committer)
    c = Client(holder.port)
    held = hold_table_lock(c, ns, name)
    th, out = commit_in_background(committer, ns, name, "x")
    wait_for(lambda: len(rest_locks(c, ns)) == 1, "the commit never asked for the table lock")
    return WaitingCommit(ns, name, held, c, th, out)


def assert_commits_at_once(srv: Server, ns: str, name: str) -> None:
    t0 = time.monotonic()
    r = commit(srv, ns, name, "after", timeout=30)
    assert r.status_code == 200, r.text
    assert time.monotonic() - t0 < 60


@pytest.fixture
def servers(fresh_database: Database, tmp_path: Path) -> Iterator[list[Server]]:
    """Two servers on one fresh database, one warehouse, transaction timeout 300 s (the test starts them)."""
    made = [Server(fresh_database, tmp_path, env=LONG), Server(fresh_database, tmp_path, env=LONG)]
    yield made
    for s in made:
        s.stop()


def killed_while_waiting(a: Server, b: Server) -> tuple[str, str, int, Client]:
    """A's REST commit waits for a table lock that a Thrift client of B holds; A is killed -9 meanwhile, so
    its waiting lock stays in the store. (The table lock, the client and the names are returned.)"""
    w = commit_waiting_for_a_lock(a, b)
    assert rest_locks(w.client, w.ns)[0].state == LockState.WAITING
    a.kill()
    w.thread.join(30)
    assert w.out and isinstance(w.out[0], requests.RequestException)
    assert stored_rest_locks(b.db, w.ns) == 1  # the leftover
    return w.ns, w.name, w.held, w.client


def test_restarted_server_releases_its_dead_lock(servers: list[Server]) -> None:
    a, b = (s.start() for s in servers)
    ns, name, held, cb = killed_while_waiting(a, b)
    try:
        a.start()  # a new process on the same machine
        ca = Client(a.port)
        try:
            assert rest_locks(ca, ns) == []  # released on its first lock call, before the list is made
        finally:
            ca.close()
        assert stored_rest_locks(b.db, ns) == 0
        cb.unlock(UnlockRequest(lockid=held))
        t0 = time.monotonic()
        r = commit(a, ns, name, "after-restart", timeout=30)
        assert r.status_code == 200, r.text
        assert time.monotonic() - t0 < 60  # far below the timeout, 300 s (this host may be loaded)
        assert r.json()["metadata"]["properties"]["k"] == "after-restart"
    finally:
        cb.close()


def test_live_server_releases_a_dead_lock_that_blocks_it(servers: list[Server]) -> None:
    """Without a restart: B's own commit, blocked by the dead process's lock, releases it and goes ahead."""
    a, b = (s.start() for s in servers)
    ns, name, held, cb = killed_while_waiting(a, b)
    try:
        cb.unlock(UnlockRequest(lockid=held))
        assert stored_rest_locks(b.db, ns) == 1  # nobody has met it yet
        t0 = time.monotonic()
        r = commit(b, ns, name, "from-b", timeout=30)
        assert r.status_code == 200, r.text
        assert time.monotonic() - t0 < 60
        assert rest_locks(cb, ns) == [] and stored_rest_locks(b.db, ns) == 0
    finally:
        cb.close()


def test_a_live_servers_lock_is_never_released(servers: list[Server]) -> None:
    """A's commit waits (alive) for a table lock; a second server starting on the same database, its lock
    calls, and its own commit on the table all leave A's lock alone; A's commit goes through once the table
    lock is released."""
    a = servers[0].start()
    ns, name = make_table(a)
    ca = Client(a.port)
    held = hold_table_lock(ca, ns, name)
    th, out = commit_in_background(a, ns, name, "from-a")
    b: Server | None = None
    cb: Client | None = None
    try:
        wait_for(lambda: len(rest_locks(ca, ns)) == 1, "A's commit never asked for the table lock")
        a_lock = rest_locks(ca, ns)[0].lockid
        b = servers[1].start()
        cb = Client(b.port)
        assert [x.lockid for x in rest_locks(cb, ns)] == [a_lock]  # B's first lock call: the sweep ran
        th_b, out_b = commit_in_background(b, ns, name, "from-b")
        wait_for(lambda: len(rest_locks(cb, ns)) == 2, "B's commit never asked for the table lock")
        time.sleep(0.5)  # B polls its waiting lock meanwhile
        assert a_lock in [x.lockid for x in rest_locks(cb, ns)]
        assert all(x.state == LockState.WAITING for x in rest_locks(cb, ns))
        ca.unlock(UnlockRequest(lockid=held))
        th.join(60)
        th_b.join(60)
        assert out and out[0].status_code == 200, out
        # B's commit started from the same metadata as A's: after A's swap its compare-and-swap fails (409)
        assert out_b and out_b[0].status_code in (200, 409), out_b
        assert rest_locks(ca, ns) == []
    finally:
        ca.close()
        if cb is not None:
            cb.close()


def _gone_process() -> tuple[int, str]:
    """The pid and start time of a process that has ended (and been reaped)."""
    from metastore.catalog.locks import _proc_stat

    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        st = _proc_stat(p.pid)
    finally:
        p.kill()
        p.wait()
    return p.pid, st[1] if st else ""


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="process start times are read from Linux's /proc")
def test_only_provably_gone_holders_of_this_machine(fresh_database: Database, tmp_path: Path) -> None:
    """Holder tags set through Thrift's agentInfo (the tag is the server's, its process identity is what is
    judged): a gone pid of this machine is released at start-up; a live process, a pid reused by a process
    started at another time (released), another machine, an untagged lock and a transaction's lock are not."""
    from metastore.catalog.locks import _MACHINE, _proc_stat

    pid, started = _gone_process()
    me, my_start = os.getpid(), _proc_stat(os.getpid())[1]  # type: ignore[index]
    tags = {"gone": f"[holder {_MACHINE} {pid} {started}]",
            "live": f"[holder {_MACHINE} {me} {my_start}]",
            "reused": f"[holder {_MACHINE} {me} {int(my_start) + 1}]",
            "elsewhere": f"[holder {'0' * 16} {pid} {started}]",
            "untagged": "a Thrift client"}
    srv = Server(fresh_database, tmp_path, env=LONG).start()
    try:
        c = Client(srv.port)
        ns = unique("tags")
        ids = {}
        for i, (k, tag) in enumerate(tags.items()):
            ids[k] = c.lock(LockRequest(component=[LockComponent(
                type=LockType.EXCLUSIVE, level=LockLevel.TABLE, dbname=ns, tablename=f"t{i}")],
                user="iceberg-rest", hostname="h", agentInfo=tag)).lockid
        c.close()
        srv.kill()
        srv.start()
        c = Client(srv.port)
        left = {x.lockid for x in c.show_locks(ShowLocksRequest(dbname=ns)).locks or []}
        assert left == {ids["live"], ids["elsewhere"], ids["untagged"]}
        assert c.get_all_databases() is not None  # still serving
        c.close()
    finally:
        srv.stop()


# ---- acceptance: kill -9 during 20 REST commits, restart, commit at once -----------------------------------

COMMITTER = """
import json, sys, urllib.request
uri, ns, name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for i in range(n):
    body = json.dumps({"requirements": [], "updates": [{"action": "set-properties",
                                                         "updates": {"k": str(i)}}]}).encode()
    req = urllib.request.Request(f"{uri}/v1/namespaces/{ns}/tables/{name}", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=60).read()
    except Exception as e:
        print("stopped at", i, type(e).__name__, flush=True)
        sys.exit(0)
    print("committed", i, flush=True)
"""


def test_kill_during_rest_commits_then_commit_at_once(fresh_database: Database, tmp_path: Path) -> None:
    """Three rounds: 20 REST commits on one table from another process, the server killed -9 at a random
    moment of them, restarted: the next commit succeeds at once (timeout 300 s), no REST lock is left."""
    rnd = random.Random(int(os.environ.get("STALE_LOCK_SEED", "0")) or None)
    srv = Server(fresh_database, tmp_path, env=LONG).start()
    try:
        ns, name = make_table(srv)
        left_behind = 0
        for round_ in range(3):
            p = subprocess.Popen([sys.executable, "-c", COMMITTER, srv.rest_uri, ns, name, "20"],
                                 stdout=subprocess.PIPE, text=True)
            time.sleep(rnd.uniform(0.05, 0.6))
            srv.kill()
            p.communicate(timeout=120)
            left_behind += stored_rest_locks(srv.db, ns)
            srv.start()
            t0 = time.monotonic()
            r = commit(srv, ns, name, f"after-{round_}", timeout=30)
            assert r.status_code == 200, r.text
            assert time.monotonic() - t0 < 60, "the next commit waited for a dead server's lock"
            c = Client(srv.port)
            try:
                assert rest_locks(c, ns) == []
            finally:
                c.close()
        print(f"rounds that left a lock behind: {left_behind} of 3")
    finally:
        srv.stop()


def test_killed_holder_with_the_lock_granted(fresh_database: Database, tmp_path: Path) -> None:
    """The lock granted, not waiting: the test holds the table's row (SELECT ... FOR UPDATE) so the commit,
    once it has the table lock, waits in its swap; the server is killed -9 there."""
    if fresh_database.backend == "sqlite":
        pytest.skip("SQLite locks the whole file, also against taking the table lock: the waiting case covers it")
    srv = Server(fresh_database, tmp_path, env=LONG).start()
    engine = sa.create_engine(fresh_database.url)
    try:
        w = commit_waiting_for_a_lock(srv, srv)
        ns, name, c = w.ns, w.name, w.client
        with engine.connect() as conn:
            tbls = sa.table("TBLS", sa.column("TBL_ID"), sa.column("TBL_NAME"))
            with conn.begin():
                # the swap updates this row; taking and granting the table lock does not touch it
                conn.execute(sa.select(tbls.c.TBL_ID).where(tbls.c.TBL_NAME == name).with_for_update())
                c.unlock(UnlockRequest(lockid=w.held))
                c.close()  # a server call now would wait for the swap's store transaction
                wait_for(lambda: stored_states(fresh_database, ns) == ["a"], "the commit never got the table lock")
                time.sleep(0.5)  # into the swap, waiting for the row
                srv.kill()
        w.thread.join(30)
        assert stored_rest_locks(fresh_database, ns) == 1
        srv.start()
        assert_commits_at_once(srv, ns, name)
    finally:
        engine.dispose()
        srv.stop()


def test_killed_worker_of_a_multi_worker_server(fresh_database: Database, tmp_path: Path) -> None:
    """--workers 2: the worker serving a waiting REST commit is killed -9 (its supervisor starts another);
    the worker's lock is released and the next commit succeeds at once, while the server keeps running."""
    srv = Server(fresh_database, tmp_path, "--workers", "2", env=LONG).start()
    try:
        w = commit_waiting_for_a_lock(srv, srv)
        ns, c = w.ns, w.client
        worker = int(rest_locks(c, ns)[0].agentInfo.rsplit(" ", 2)[1])  # "... [holder <machine> <pid> <start>]"
        assert worker != srv.proc.pid  # a child, not the supervisor
        os.kill(worker, 9)
        w.thread.join(30)
        assert w.out and isinstance(w.out[0], requests.RequestException)
        c.close()  # its connection may have been served by the killed worker too
        c = Client(srv.port)
        c.unlock(UnlockRequest(lockid=w.held))
        c.close()
        assert_commits_at_once(srv, ns, w.name)
        assert srv.alive()
        c = Client(srv.port)
        assert rest_locks(c, ns) == []
        c.close()
    finally:
        srv.stop()
