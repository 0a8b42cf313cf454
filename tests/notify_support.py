"""Helpers of the notification tests: brokers, servers with a bus, the in-process catalog, HCatalog's fields."""

from __future__ import annotations

import base64
import os
import subprocess
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from metastore.procs import port_open

from conftest import ROOT, Client, Database, Server

ACTIVEMQ_SCRIPT = ROOT / "scripts" / "activemq.sh"
ACTIVEMQ_STOMP = "activemq://127.0.0.1:61613"
ACTIVEMQ_OPENWIRE = "tcp://127.0.0.1:61616"
RABBITMQ_AMQP = "amqp://guest:guest@127.0.0.1:5672/%2F"
ACTIVEMQ_JARS = ("activemq-client", "geronimo-jms_1.1_spec", "geronimo-j2ee-management-1.1-spec", "hawtbuf",
                 "slf4j-api")


def unavailable(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is not available, and CI must run the notification tests")
    pytest.skip(f"{what} is not available")


def activemq(cmd: str, timeout: float = 300) -> bool:
    r = subprocess.run(["bash", str(ACTIVEMQ_SCRIPT), cmd], capture_output=True, text=True, timeout=timeout)
    return r.returncode == 0


@pytest.fixture(scope="session")
def activemq_broker() -> Iterator[str]:
    """ActiveMQ running (installed and started by scripts/activemq.sh); stopped again after the session."""
    if not activemq("start"):
        unavailable("ActiveMQ (scripts/activemq.sh start failed)")
    yield ACTIVEMQ_STOMP
    activemq("stop")


@pytest.fixture(scope="session")
def rabbitmq_broker() -> str:
    if not port_open(5672):
        subprocess.run(["bash", str(ROOT / "scripts" / "brokers.sh")], capture_output=True, timeout=300)
    if not port_open(5672):
        unavailable("RabbitMQ on 127.0.0.1:5672")
    return RABBITMQ_AMQP


class BusServer(Server):
    """A `metastore serve` (or `metastore relay`) process on the store at db_url, with extra arguments."""

    def __init__(self, workdir: Path, db_url: str, *args: str, command: str = "serve",
                 env: dict[str, str] | None = None) -> None:
        super().__init__(Database(backend_of(db_url), db_url), workdir, *args, command=command, env=env)


def serve_with_bus(bus: str, database: Database, tmp_path_factory: pytest.TempPathFactory,
                   name: str) -> Iterator[BusServer]:
    """The body of a module's server fixture: `metastore serve` on the module's store backend with the relay
    inside, publishing to `bus`."""
    srv = BusServer(tmp_path_factory.mktemp(name), database.url, "--bus", bus).start()
    yield srv
    srv.stop()


def backend_of(db_url: str) -> str:
    return "sqlite" if db_url.startswith("sqlite") else "postgres" if db_url.startswith("postgres") else "mariadb"


def local_catalog(tmp: Path, db_url: str | None = None, **settings: Any):  # type: ignore[no-untyped-def]
    """The catalog in this process, on `db_url` (default: a SQLite file in tmp)."""
    from metastore import config
    from metastore.app import build_catalog

    s = config.load(None, env={}, data_dir=str(tmp / "data"), db=db_url or f"sqlite:///{tmp / 'ms.db'}",
                    warehouse=str(tmp / "warehouse"), **settings)
    return build_catalog(s)


@dataclass
class Collector:
    """A subscriber's handler that keeps every message, and the event ids per topic in arrival order."""

    messages: list[Any] = field(default_factory=list)
    by_topic: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))

    def __call__(self, msg: Any) -> None:
        self.messages.append(msg)
        self.by_topic[msg.topic].append(msg.event_id)

    def ids(self) -> set[int]:
        return {m.event_id for m in self.messages}

    def wait(self, n: int, timeout: float) -> bool:
        deadline = time.time() + timeout
        while len(self.messages) < n and time.time() < deadline:
            time.sleep(0.02)
        return len(self.messages) >= n


def wait_for(pred: Any, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return bool(pred())


# ---- the Java JMS subscriber ----------------------------------------------------------------------------

def compile_java_subscriber(out: Path) -> str:
    """Compile tests/java/HCatSubscriber.java with javac against Debian's ActiveMQ jars; returns the classpath."""
    jars = [Path("/usr/share/activemq/lib") / f"{j}.jar" for j in ACTIVEMQ_JARS]
    missing = [str(j) for j in jars if not j.exists()]
    if missing:
        unavailable(f"ActiveMQ's client jars ({', '.join(missing)})")
    if subprocess.run(["which", "javac"], capture_output=True).returncode != 0:
        unavailable("javac")
    cp = ":".join(str(j) for j in jars)
    r = subprocess.run(["javac", "-cp", cp, "-d", str(out), str(ROOT / "tests" / "java" / "HCatSubscriber.java")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return f"{cp}:{out}"


@dataclass
class JmsMessage:
    topic: str
    jms_type: str
    body: str
    properties: dict[str, tuple[str, str]]  # name -> (value, Java type)


def parse_java_output(text: str) -> list[JmsMessage]:
    out = []
    for line in text.splitlines():
        if not line.startswith("MSG "):
            continue
        parts = line.split(" ")
        props = {}
        for p in parts[4:]:
            name, _, rest = p.partition("=")
            value, _, jtype = rest.rpartition(":")
            props[name] = (base64.b64decode(value).decode("utf-8"), jtype)
        out.append(JmsMessage(base64.b64decode(parts[1]).decode("utf-8"), parts[2],
                              base64.b64decode(parts[3]).decode("utf-8"), props))
    return out


# ---- HCatalog's messages for a scripted series of DDL ----------------------------------------------------

def thrift_table(db: str, name: str, params: dict[str, str] | None = None, partitioned: bool = True):  # type: ignore[no-untyped-def]
    from hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    sd = StorageDescriptor(cols=[FieldSchema("a", "int", None), FieldSchema("b", "string", None)], location=None,
                           inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                           outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                           serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                                               parameters={}),
                           compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={})
    keys = [FieldSchema("ds", "string", None), FieldSchema("hr", "string", None)] if partitioned else []
    return Table(tableName=name, dbName=db, owner="tester", sd=sd, parameters=dict(params or {}),
                 tableType="MANAGED_TABLE", partitionKeys=keys)


def thrift_partition(client: Any, db: str, table: str, values: list[str]):  # type: ignore[no-untyped-def]
    from hive_metastore.ttypes import Partition

    t = client.get_table(db, table)
    return Partition(values=values, dbName=db, tableName=table, sd=t.sd, parameters={})


def scripted_ddl(client: Any, db: str, table: str = "clicks", prefix: str = "hcat") -> list[dict[str, Any]]:
    """The six HCatalog event types through the Thrift API; returns what each message must be, in order:
    {topic, type, fields} with HCatalog's exact field set (timestamp checked for being recent)."""
    from hive_metastore.ttypes import Database

    client.create_database(Database(name=db, description="notify test", locationUri=None, parameters={}))
    client.create_table(thrift_table(db, table))
    client.add_partitions([thrift_partition(client, db, table, ["2024-01-01", "00"]),
                           thrift_partition(client, db, table, ["2024-01-01", "01"])])
    client.drop_partition(db, table, ["2024-01-01", "00"], True)
    client.drop_table(db, table, True)
    client.drop_database(db, True, True)
    t_topic = f"{prefix}.{db}.{table}"
    return [
        {"topic": prefix, "type": "CREATE_DATABASE", "fields": {"db": db}},
        {"topic": f"{prefix}.{db}", "type": "CREATE_TABLE", "fields": {"db": db, "table": table}},
        {"topic": t_topic, "type": "ADD_PARTITION",
         "fields": {"db": db, "table": table, "partitions": [{"ds": "2024-01-01", "hr": "00"},
                                                             {"ds": "2024-01-01", "hr": "01"}]}},
        {"topic": t_topic, "type": "DROP_PARTITION",
         "fields": {"db": db, "table": table, "partitions": [{"ds": "2024-01-01", "hr": "00"}]}},
        {"topic": f"{prefix}.{db}", "type": "DROP_TABLE", "fields": {"db": db, "table": table}},
        {"topic": prefix, "type": "DROP_DATABASE", "fields": {"db": db}},
    ]


def scripted_ddl_at(port: int, db: str, prefix: str = "hcat") -> list[dict[str, Any]]:
    """scripted_ddl through a client of its own to the server on `port`."""
    c = Client(port)
    try:
        return scripted_ddl(c, db, prefix=prefix)
    finally:
        c.close()


def check_hcat_body(body: dict[str, Any], expected: dict[str, Any], server: str) -> None:
    """Field by field: exactly HCatalog's fields of the type, with the expected values."""
    want = {"timestamp", "eventType", "server", "servicePrincipal", *expected["fields"]}
    assert set(body) == want, (expected["type"], sorted(body), sorted(want))
    assert body["eventType"] == expected["type"]
    assert body["server"] == server
    assert body["servicePrincipal"] == ""
    assert isinstance(body["timestamp"], int) and abs(body["timestamp"] - time.time()) < 600
    for k, v in expected["fields"].items():
        assert body[k] == v, (expected["type"], k, body[k], v)
    if "partitions" in body:  # keys in partition-key order, as HCatalog's LinkedHashMap
        assert [list(p) for p in body["partitions"]] == [["ds", "hr"]] * len(body["partitions"])


# ---- the nothing-lost tests ----------------------------------------------------------------------------

def produce_events(cat, n: int, tables: int = 4, per_tx: int = 50, rate: float = 1000.0) -> None:  # type: ignore[no-untyped-def]
    """n events: real tables made through the catalog, then ADD_PARTITION, INSERT and ALTER_TABLE events with
    the catalog's own messages, written `per_tx` at a time in the store's write transactions (the catalog's
    path for events, minus the partition rows: 10,000 catalog calls would take this test a minute of CPU)."""
    from metastore.core import model as m
    from metastore.core.events import EventType

    tabs = []
    for d in range(2):
        db = f"load{d}"
        cat.create_database(m.Database(name=db))
        for t in range(tables // 2):
            cat.create_table(m.Table(tableName=f"t{t}", dbName=db,
                                     sd=m.StorageDescriptor(cols=[m.FieldSchema("a", "int")]),
                                     partitionKeys=[m.FieldSchema("p", "string")]))
            tabs.append(cat.get_table(db, f"t{t}"))
    made = 2 + len(tabs)
    i = 0
    start = time.time()
    while made < n:
        with cat.store.write() as tx:
            for _ in range(min(per_tx, n - made)):
                t = tabs[i % len(tabs)]
                part = m.Partition(values=[f"v{i}"], dbName=t.dbName, tableName=t.tableName, sd=t.sd)
                kind = i % 10
                if kind == 9:
                    msg, typ = cat.msg.alter_table(t, t), EventType.ALTER_TABLE
                elif kind == 8:
                    msg, typ = cat.msg.insert(t, part, False, [f"f{i}"]), EventType.INSERT
                else:
                    msg, typ = cat.msg.add_partition(t, [part]), EventType.ADD_PARTITION
                tx.add_event(typ, t.dbName, t.tableName, msg, cat.msg.format, int(time.time()))
                i += 1
                made += 1
        ahead = made / rate - (time.time() - start)
        if ahead > 0:
            time.sleep(ahead)


def log_by_topic(cat) -> dict[str, list[int]]:  # type: ignore[no-untyped-def]
    from metastore.notify.hcat import HCatMessages

    hm = HCatMessages()
    out: dict[str, list[int]] = {}
    for e in cat.next_notifications(0, None):
        out.setdefault(hm.topic(e), []).append(e.eventId)
    return out


def check_all_delivered(cat, got: Collector, events: int) -> None:  # type: ignore[no-untyped-def]
    log = log_by_topic(cat)
    total = sum(len(v) for v in log.values())
    assert total == events
    assert got.ids() == set(range(1, events + 1)), f"missing {sorted(set(range(1, events + 1)) - got.ids())[:20]}"
    assert len(got.messages) == events  # duplicates were dropped by id (counted in sub.duplicates)
    for topic, ids in log.items():
        assert got.by_topic[topic] == ids, f"topic {topic} out of log order"


def fail_changes_to(monkeypatch: pytest.MonkeyPatch, db: str) -> None:
    """From now on, a change to database `db` fails inside its transaction after its event was written, so the
    transaction (and the event with it) must roll back."""
    from metastore.store.store import Tx

    original = Tx.add_event

    def failing_add_event(self, event_type, db_name, *a, **k):  # type: ignore[no-untyped-def]
        eid = original(self, event_type, db_name, *a, **k)
        if db_name == db:
            raise RuntimeError("forced failure inside the transaction, after its event was written")
        return eid

    monkeypatch.setattr(Tx, "add_event", failing_add_event)


class RelayRun:
    """A nothing-lost run: the catalog in this process on db_url (it makes the events), a `metastore relay`
    process from event 0 publishing to `bus`, and a durable subscriber to every hcat topic."""

    def __init__(self, bus: str, tmp: Path, db_url: str, name: str, *relay_args: str) -> None:
        from metastore.notify import subscribe

        self.bus, self.tmp, self.db_url, self.relay_args = bus, tmp, db_url, relay_args
        self.cat = local_catalog(tmp, db_url)
        self.relay = self._start_relay("--from", "0")
        self.got = Collector()
        self.sub = subscribe(["hcat.#"], self.got, bus=bus, name=f"{name}-{uuid.uuid4().hex[:8]}")
        self.producer: threading.Thread | None = None

    def _start_relay(self, *args: str) -> BusServer:
        return BusServer(self.tmp, self.db_url, "--bus", self.bus, *args, *self.relay_args, command="relay").start()

    def produce(self, events: int, **kwargs: Any) -> None:
        """produce_events in a thread of its own, so the test can break things while events are in flight."""
        self.producer = threading.Thread(target=produce_events, args=(self.cat, events), kwargs=kwargs)
        self.producer.start()

    def wait_messages(self, n: int, timeout: float) -> None:
        assert wait_for(lambda: len(self.got.messages) >= n, timeout), self.relay.output()[-3000:]

    def kill_relay_at(self, *thresholds: int) -> None:
        """SIGKILL the relay mid-stream once the subscriber has each threshold of messages; a new relay (without
        --from) goes on from the cursor the killed one left."""
        for threshold in thresholds:
            self.wait_messages(threshold, 60)
            self.relay.kill()
            self.relay = self._start_relay()

    def broker_outage(self, stop: Callable[[], object], start: Callable[[], bool], events: int) -> None:
        """Events in flight at 700 a second while the broker is stopped for 20 s and started again."""
        self.produce(events, rate=700)
        self.wait_messages(1000, 30)
        stop()
        time.sleep(20)
        assert start()

    def wait_all(self, events: int) -> None:
        """The producer joined and every event at the subscriber; then a second more for late duplicates."""
        assert self.producer is not None
        self.producer.join(120)
        assert self.got.wait(events, 120), (len(self.got.messages), self.relay.output()[-3000:])
        time.sleep(1)

    def stop(self) -> None:
        self.relay.stop()
        self.sub.stop(forget=True)
        try:
            self.sub.join(15)
        except Exception:  # noqa: BLE001 - a failed test already says why
            pass


@contextmanager
def relay_run(bus: str, tmp: Path, db_url: str, name: str, *relay_args: str) -> Iterator[RelayRun]:
    """A RelayRun whose subscriber is ready; relay and subscription stopped (and forgotten) however it ends."""
    run = RelayRun(bus, tmp, db_url, name, *relay_args)
    try:
        assert run.sub.ready.wait(20)
        yield run
    finally:
        run.stop()


def check_relay_sigkill_loses_nothing(bus: str, tmp: Path, db_url: str, events: int,
                                      also: Callable[[RelayRun], None] | None = None) -> None:
    """Events in flight while the relay is killed with SIGKILL twice mid-stream: the subscriber ends up with every
    event, in log order per topic. `also` checks more before the run is stopped."""
    with relay_run(bus, tmp, db_url, "kill", "--lease", "2", "--batch", "200") as run:
        run.produce(events)
        run.kill_relay_at(2000, 5000)
        run.wait_all(events)
        check_all_delivered(run.cat, run.got, events)
        if also is not None:
            also(run)


def check_durable_subscription(bus: str) -> None:
    """A named subscription keeps what is published while it is away; stop(forget=True) ends it for good."""
    import tempfile

    from metastore.notify import subscribe
    from metastore.notify.brokers import open_broker
    from metastore.notify.hcat import BusMessage

    topic, name = f"hcat.durable{os.getpid()}", f"durable-{time.time_ns()}"
    state = os.path.join(tempfile.mkdtemp(), "state.json")
    b = open_broker(bus)

    def publish(ids: list[int]) -> None:
        b.publish([BusMessage(i, "ALTER_DATABASE", topic, "{}", {"HCAT_EVENT": "ALTER_DATABASE",
                                                                  "HCAT_EVENT_ID": str(i)}) for i in ids])

    def session(forget: bool, pause: float = 1.0) -> list[int]:
        got = Collector()
        sub = subscribe([topic], got, bus=bus, name=name, state=state)
        assert sub.ready.wait(20)
        time.sleep(pause)
        sub.stop(forget=forget)
        sub.join(10)
        return [m.event_id for m in got.messages]

    try:
        assert session(False, 0.2) == []
        publish([1, 2, 3])  # while away
        assert session(False) == [1, 2, 3]
        publish([3, 4])  # 3 again (as a relay re-publishes after a crash): dropped by its id, kept in the state file
        assert session(True) == [4]
        publish([5])  # after forget: nobody keeps it
        assert session(True, 0.5) == []
    finally:
        b.close()
