"""Crash safety and scale-out of the store and its notification log (acceptance point 5).

1. Concurrent DDL against one `metastore serve`, killed with SIGKILL in the middle, restarted on the same
   database: every acknowledged change survives, every event has its change and every change its event, the
   event ids are 1..N without a gap, and new events continue at N+1.
2. Three `metastore serve` processes on one server database, thousands of concurrent changes from several
   client processes, including compare-and-swap increments of a table parameter: no lost update, one event
   per change, event ids unique and gap-free.
"""

from __future__ import annotations

import multiprocessing
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hive_metastore.ttypes import (
    AddPartitionsRequest,
    Database,
    EnvironmentContext,
    FieldSchema,
    MetaException,
    NotificationEventRequest,
    Partition,
    StorageDescriptor,
    Table,
)
from thrift.transport.TTransport import TTransportException

from common import parquet_storage
from conftest import BACKENDS, Client, Server, make_database

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

EVENT_OF = {"create": "CREATE_TABLE", "add": "ADD_PARTITION", "append": "ADD_PARTITION", "alter": "ALTER_TABLE",
            "drop": "DROP_TABLE"}


def _sd() -> StorageDescriptor:
    return parquet_storage([("a", "int"), ("b", "string")])


def _table(db: str, name: str, partitioned: bool = True, params: dict[str, str] | None = None) -> Table:
    keys = [FieldSchema("ds", "string", None)] if partitioned else []
    return Table(tableName=name, dbName=db, owner="tester", sd=_sd(), parameters=dict(params or {}),
                 tableType="MANAGED_TABLE", partitionKeys=keys)


def _all_events(c: Client) -> list:
    return c.get_next_notification(NotificationEventRequest(lastEvent=0, maxEvents=1_000_000)).events


@pytest.fixture
def fresh_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    yield from make_database(request.param, tmp_path)


# ---- 1. crash safety ------------------------------------------------------------------------------------

# What a client sees when the server dies under it.
CONNECTION_LOST = (TTransportException, OSError, EOFError)


@dataclass
class Op:
    kind: str  # create | add | append | alter | drop
    table: str
    arg: object = None


@dataclass
class Worker:
    """A client thread doing DDL on its own tables, recording each call that returned (acknowledged)."""

    port: int
    db: str
    prefix: str
    acked: list[Op] = field(default_factory=list)
    inflight: Op | None = None
    live: list[str] = field(default_factory=list)
    error: BaseException | None = None
    lost: BaseException | None = None

    def next_op(self, n: int) -> Op:
        step = n % 6
        if not self.live or step == 0:
            return Op("create", f"{self.prefix}_t{n}")
        last = self.live[-1]
        if step in (1, 3):
            return Op("add", last, [f"a{n}", f"b{n}"])
        if step == 4:
            return Op("append", last, f"c{n}")
        if step == 5 and len(self.live) >= 2:
            return Op("drop", self.live[0])
        return Op("alter", last, str(n))

    def do(self, c: Client, op: Op) -> None:
        if op.kind == "create":
            c.create_table(_table(self.db, op.table))
        elif op.kind == "add":
            parts = [Partition(values=[v], dbName=self.db, tableName=op.table, sd=_sd(), parameters={})
                     for v in op.arg]  # type: ignore[union-attr]
            c.add_partitions_req(AddPartitionsRequest(dbName=self.db, tblName=op.table, parts=parts,
                                                      ifNotExists=False, needResult=False))
        elif op.kind == "append":
            c.append_partition(self.db, op.table, [op.arg])
        elif op.kind == "alter":
            t = c.get_table(self.db, op.table)
            t.parameters["v"] = op.arg
            c.alter_table_with_environment_context(self.db, op.table, t, EnvironmentContext(properties={}))
        elif op.kind == "drop":
            c.drop_table(self.db, op.table, True)

    def run(self) -> None:
        try:
            c = Client(self.port)
        except CONNECTION_LOST as e:
            self.lost = e
            return
        n = 0
        try:
            while True:
                op = self.next_op(n)
                n += 1
                self.inflight = op
                self.do(c, op)
                self.acked.append(op)
                self.inflight = None
                if op.kind == "create":
                    self.live.append(op.table)
                elif op.kind == "drop":
                    self.live.remove(op.table)
        except CONNECTION_LOST as e:  # the kill
            self.lost = e
        except BaseException as e:  # noqa: BLE001 - anything else is a failure of the server
            self.error = e
        finally:
            try:
                c.close()
            except Exception:  # noqa: BLE001
                pass


def _apply(model: dict[str, dict], op: Op) -> None:
    if op.kind == "create":
        model[op.table] = {"parts": set(), "v": None}
    elif op.kind == "add":
        model[op.table]["parts"] |= {f"ds={v}" for v in op.arg}  # type: ignore[union-attr]
    elif op.kind == "append":
        model[op.table]["parts"].add(f"ds={op.arg}")
    elif op.kind == "alter":
        model[op.table]["v"] = op.arg
    elif op.kind == "drop":
        del model[op.table]


@pytest.mark.parametrize("fresh_db", BACKENDS, indirect=True)
def test_kill_9_loses_no_acknowledged_change_and_no_event(fresh_db, tmp_path: Path) -> None:
    rounds, threads = 3, 6
    srv = Server(fresh_db, tmp_path).start()
    started = time.time()
    stats = {"acked": 0, "inflight": 0, "inflight_committed": 0}
    try:
        db = "crash"
        c = Client(srv.port)
        c.create_database(Database(name=db))
        c.close()
        model: dict[str, dict] = {}  # table -> {"parts", "v"}: what the store must hold
        expected_events: list[tuple[str, str | None]] = [("CREATE_DATABASE", None)]
        rnd = random.Random(5)
        for r in range(rounds):
            workers = [Worker(srv.port, db, f"r{r}w{i}") for i in range(threads)]
            ts = [threading.Thread(target=w.run, daemon=True) for w in workers]
            for t in ts:
                t.start()
            deadline = time.time() + 20  # kill once the clients are well under way, however loaded the machine
            while sum(len(w.acked) for w in workers) < 40 and time.time() < deadline:
                time.sleep(0.05)
            time.sleep(rnd.uniform(0.2, 0.8))
            srv.kill()  # SIGKILL: no shutdown, transactions cut wherever they are
            for t in ts:
                t.join(60)
            assert not any(t.is_alive() for t in ts), "a client hung after the kill"
            errors = [(w.prefix, w.error) for w in workers if w.error is not None]
            assert not errors, errors
            assert all(w.lost is not None for w in workers)
            assert sum(len(w.acked) for w in workers) > 20, "the kill came too early to test anything"

            srv.start()
            c = Client(srv.port)
            # A change after the restart. Its write transaction locks the sequence row, so it also waits until
            # the database has finished (committed or rolled back) any transaction the dead server left open.
            marker = f"marker{r}"
            c.create_table(_table(db, marker, partitioned=False))
            events = _all_events(c)
            ids = [e.eventId for e in events]
            assert ids == list(range(1, len(ids) + 1)), "event ids are not 1..N"
            assert c.get_current_notificationEventId().eventId == len(ids)
            assert (events[-1].eventType, events[-1].tableName) == ("CREATE_TABLE", marker), \
                "the first change after the restart did not get the next event id"

            by_prefix: dict[str, list[tuple[str, str]]] = {}
            for e in events[len(expected_events):-1]:
                assert e.dbName == db and e.tableName and e.tableName.startswith(f"r{r}w"), (e.eventId, e.tableName)
                by_prefix.setdefault(e.tableName.split("_t")[0], []).append((e.eventType, e.tableName))
            for w in workers:
                got = by_prefix.pop(w.prefix, [])
                acked = [(EVENT_OF[op.kind], op.table) for op in w.acked]
                stats["acked"] += len(acked)
                for op in w.acked:
                    _apply(model, op)
                committed = False
                if w.inflight is not None:
                    stats["inflight"] += 1
                    committed = got == acked + [(EVENT_OF[w.inflight.kind], w.inflight.table)]
                    if committed:
                        stats["inflight_committed"] += 1
                        _apply(model, w.inflight)
                # exactly one event per acknowledged change, in the client's order, plus at most the in-flight one
                assert committed or got == acked, (w.prefix, got, acked, w.inflight)
            assert not by_prefix, f"events of no client: {by_prefix}"
            expected_events += [(e.eventType, e.tableName) for e in events[len(expected_events):]]

            # every change is there exactly when its event is (the model applies an event's change)
            tables = set(c.get_all_tables(db)) - {f"marker{i}" for i in range(r + 1)}
            assert tables == set(model), (sorted(tables - set(model)), sorted(set(model) - tables))
            for name, want in model.items():
                assert set(c.get_partition_names(db, name, -1)) == want["parts"], name
                assert c.get_table(db, name).parameters.get("v") == want["v"], name
            c.close()

        # and the log goes on without a gap after the last restart
        c = Client(srv.port)
        n = c.get_current_notificationEventId().eventId
        c.create_table(_table(db, "after", partitioned=False))
        if model:
            c.append_partition(db, sorted(model)[0], ["after"])
        tail = c.get_next_notification(NotificationEventRequest(lastEvent=n, maxEvents=100)).events
        assert [e.eventId for e in tail] == list(range(n + 1, n + 1 + len(tail))) and len(tail) == 1 + bool(model)
        c.close()
    except TTransportException as e:  # the test's own connection: say which server it was talking to
        raise AssertionError(f"lost the connection to the server (pid {srv.proc.pid if srv.proc else None}, "
                             f"alive: {srv.alive()}): {e}\n{srv.log.read_text()[-3000:]}") from e
    finally:
        srv.kill()
    print(f"\n{fresh_db.backend}: {rounds} kills, {stats['acked']} acknowledged changes, {stats['inflight']} in "
          f"flight of which {stats['inflight_committed']} committed, {time.time() - started:.1f}s")


# ---- 2. scale-out -----------------------------------------------------------------------------------------

def _is_conflict(e: MetaException) -> bool:
    return "has been modified" in (e.message or "")


def scale_client(args: tuple) -> dict:
    """One client process: creates tables, appends partitions, and CAS-increments the shared counter.

    Consecutive calls go to different servers, so the compare-and-swap races cross server processes.
    """
    ports, db, idx, n_tables, n_parts, n_incr = args
    rnd = random.Random(idx)
    clients = [Client(p) for p in ports]
    k = idx
    stats = {"tables": {}, "increments": 0, "conflicts": 0, "changes": 0}

    def nxt() -> Client:
        nonlocal k
        k += 1
        return clients[k % len(clients)]

    ops = ["part"] * n_parts + ["incr"] * n_incr + ["create"] * (n_tables - 1)
    rnd.shuffle(ops)
    ops.insert(0, "create")
    for j, op in enumerate(ops):
        if op == "create":
            name = f"c{idx}_t{j}"
            nxt().create_table(_table(db, name))
            stats["tables"][name] = []
        elif op == "part":
            name = rnd.choice(list(stats["tables"]))
            part = Partition(values=[f"p{j}"], dbName=db, tableName=name, sd=_sd(), parameters={})
            nxt().add_partitions_req(AddPartitionsRequest(dbName=db, tblName=name, parts=[part], ifNotExists=False,
                                                          needResult=False))
            stats["tables"][name].append(f"ds=p{j}")
        else:
            while True:
                c = nxt()
                t = c.get_table(db, "counter")
                old = t.parameters["counter"]
                t.parameters["counter"] = str(int(old) + 1)
                try:
                    c.alter_table_with_environment_context(db, "counter", t, EnvironmentContext(properties={
                        "expected_parameter_key": "counter", "expected_parameter_value": old}))
                    break
                except MetaException as e:
                    if not _is_conflict(e):
                        raise
                    stats["conflicts"] += 1
            stats["increments"] += 1
        stats["changes"] += 1
    for c in clients:
        c.close()
    return stats


class Poller(threading.Thread):
    """A notification consumer during the run: what it reads must never have a gap it would skip."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port, self.last, self.polls, self.gaps = port, 0, 0, []  # type: ignore[var-annotated]
        self.done = threading.Event()

    def run(self) -> None:
        c = Client(self.port)
        while not self.done.wait(0.2):
            events = c.get_next_notification(NotificationEventRequest(lastEvent=self.last, maxEvents=1000)).events
            ids = [e.eventId for e in events]
            if ids != list(range(self.last + 1, self.last + 1 + len(ids))):
                self.gaps.append((self.last, ids[:5]))
            self.last = max([self.last, *ids])
            self.polls += 1
        c.close()


def _start(server: Server, failed: list[str]) -> None:
    try:
        server.start()
    except RuntimeError as e:
        failed.append(str(e))


# 3,000 changes on PostgreSQL; fewer on MariaDB, to keep the run short on a small machine
SCALE = [(b, n) for b, n in (("postgres", 500), ("mariadb", 150)) if b in BACKENDS]


@pytest.mark.parametrize("fresh_db, per_client", SCALE, indirect=["fresh_db"])
def test_three_servers_one_database(fresh_db, per_client: int, tmp_path: Path) -> None:
    n_clients = 6
    n_tables, n_incr = per_client * 12 // 100, per_client * 6 // 100  # 500: 60 tables, 30 increments,
    n_parts = per_client - n_tables - n_incr  # and 410 partitions
    # three servers, same warehouse and data dir, started at once on the empty database: one makes the schema
    servers = [Server(fresh_db, tmp_path) for _ in range(3)]
    try:
        failed: list[str] = []
        starting = [threading.Thread(target=lambda s=s: _start(s, failed)) for s in servers]
        for t in starting:
            t.start()
        for t in starting:
            t.join()
        assert not failed, failed
        db = "scale"
        c = Client(servers[0].port)
        c.create_database(Database(name=db))
        c.create_table(_table(db, "counter", partitioned=False, params={"counter": "0"}))
        setup_events = c.get_current_notificationEventId().eventId
        assert setup_events == 2
        c.close()

        ports = [s.port for s in servers]
        poller = Poller(servers[2].port)
        poller.start()
        started = time.time()
        with multiprocessing.get_context("spawn").Pool(n_clients) as pool:
            results = pool.map(scale_client, [(ports, db, i, n_tables, n_parts, n_incr) for i in range(n_clients)])
        elapsed = time.time() - started
        poller.done.set()
        poller.join(30)
        assert not poller.gaps, f"a consumer saw gaps in the log: {poller.gaps}"
        assert all(s.alive() for s in servers), "a server died"

        changes = sum(r["changes"] for r in results)
        increments = sum(r["increments"] for r in results)
        conflicts = sum(r["conflicts"] for r in results)
        assert changes == n_clients * (n_tables + n_parts + n_incr)

        c = Client(servers[1].port)
        assert c.get_table(db, "counter").parameters["counter"] == str(increments), "lost update"
        events = _all_events(c)
        ids = [e.eventId for e in events]
        assert len(set(ids)) == len(ids)
        assert ids == list(range(1, len(ids) + 1)), "event ids are not 1..N"
        assert len(events) == setup_events + changes, "not one event per change"
        kinds = [e.eventType for e in events[setup_events:]]
        assert kinds.count("CREATE_TABLE") == n_clients * n_tables
        assert kinds.count("ADD_PARTITION") == n_clients * n_parts
        assert kinds.count("ALTER_TABLE") == increments
        assert c.get_current_notificationEventId().eventId == len(events)
        want = {name: set(parts) for r in results for name, parts in r["tables"].items()}
        assert set(c.get_all_tables(db)) == set(want) | {"counter"}
        for name, parts in want.items():
            assert set(c.get_partition_names(db, name, -1)) == parts, name
        c.close()
    finally:
        for s in servers:
            s.stop()
    print(f"\n{fresh_db.backend}: 3 servers, {changes} changes ({increments} CAS increments after {conflicts} "
          f"conflicts) in {elapsed:.1f}s = {changes / elapsed:.0f} changes/s, {len(events)} events, "
          f"{poller.polls} gap-free polls")
