"""Notifications without a broker: topics, HCatalog's messages, the embedded default (subscribers read the
log), durable positions, retention with consumers and its "events missing" error, the relay's cursor, lease
and retries (with an in-memory broker), and the schema migration that adds the consumers table."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from conftest import BACKENDS, ROOT, Client, Database, make_database, unique
from notify_support import Collector, check_hcat_body, fail_changes_to, local_catalog, scripted_ddl_at, wait_for

# ---- topics and patterns -------------------------------------------------------------------------------

def test_topic_of_every_event_type() -> None:
    from metastore.notify.topics import TopicMapper

    t = TopicMapper()
    assert t.topic("CREATE_DATABASE", "Sales", None) == "hcat"
    assert t.topic("ALTER_DATABASE", "sales", None) == "hcat"
    assert t.topic("DROP_DATABASE", "sales", None) == "hcat"
    for typ in ("CREATE_TABLE", "DROP_TABLE", "ALTER_TABLE"):
        assert t.topic(typ, "Sales", "Orders") == "hcat.sales"
    for typ in ("CREATE_FUNCTION", "DROP_FUNCTION"):
        assert t.topic(typ, "sales", None) == "hcat.sales"
    for typ in ("ADD_PARTITION", "ALTER_PARTITION", "DROP_PARTITION", "INSERT", "SOME_NEW_TABLE_EVENT"):
        assert t.topic(typ, "sales", "orders") == "hcat.sales.orders"
        assert t.topic(typ, "sales", "orders", {"hcat.msgbus.topic.name": "my.topic"}) == "my.topic"
    assert t.topic("SOME_DB_EVENT", "sales", None) == "hcat.sales"
    assert t.topic("SOME_GLOBAL_EVENT", None, None) == "hcat"
    assert TopicMapper("wh").topic("ADD_PARTITION", "a", "b") == "wh.a.b"


@pytest.mark.parametrize("pattern,topic,match", [
    ("hcat.#", "hcat", True), ("hcat.#", "hcat.a.b", True), ("hcat.#", "hcatx.a", False),
    ("hcat.*", "hcat.a", True), ("hcat.*", "hcat.a.b", False), ("hcat.*.t", "hcat.db.t", True),
    ("hcat.>", "hcat.a", True), ("hcat.a", "hcat.a", True), ("hcat.a", "hcat.ab", False), ("#", "x", True)])
def test_patterns(pattern: str, topic: str, match: bool) -> None:
    from metastore.notify.topics import compile_pattern
    assert compile_pattern(pattern)(topic) is match


# ---- HCatalog's messages for every event type ----------------------------------------------------------

def _all_kinds_of_events(cat) -> None:  # type: ignore[no-untyped-def]
    from metastore.core import model as m

    cat.create_database(m.Database(name="kinds"))
    cat.alter_database("kinds", m.Database(name="kinds", parameters={"k": "v"}))
    sd = m.StorageDescriptor(cols=[m.FieldSchema("a", "int")])
    cat.create_table(m.Table(tableName="t", dbName="kinds", sd=sd, partitionKeys=[m.FieldSchema("ds", "string"),
                                                                                  m.FieldSchema("hr", "string")]))
    t = cat.get_table("kinds", "t")
    cat.alter_table("kinds", "t", m.Table(tableName="t", dbName="kinds", sd=t.sd, partitionKeys=t.partitionKeys,
                                          parameters={**t.parameters, "x": "1"}))
    cat.add_partitions("kinds", "t", [m.Partition(values=["d1", "h1"], dbName="kinds", tableName="t", sd=sd),
                                      m.Partition(values=["d1", "h2"], dbName="kinds", tableName="t", sd=sd)])
    cat.fire_insert_event("kinds", "t", ["d1", "h1"], False, ["file:/x/1"])
    cat.create_function(m.Function(functionName="f", dbName="kinds", className="a.B", ownerName="o", ownerType=1,
                                   createTime=1, functionType=1, resourceUris=[]))
    cat.drop_function("kinds", "f")
    cat.drop_partitions("kinds", "t", values=["d1", "h2"])
    cat.drop_table("kinds", "t", True)
    cat.drop_database("kinds", True, True)


def test_hcatalog_fields_of_every_event_type(tmp_path: Path) -> None:
    from metastore.notify.hcat import HCatMessages, get_format

    cat = local_catalog(tmp_path)
    _all_kinds_of_events(cat)
    hm = HCatMessages(server="thrift://h:9083")
    got = [(e.eventType, hm.message(e)) for e in cat.next_notifications(0, None)]
    base = {"timestamp", "eventType", "server", "servicePrincipal", "db"}
    want = {
        "CREATE_DATABASE": ("hcat", base), "ALTER_DATABASE": ("hcat", base), "DROP_DATABASE": ("hcat", base),
        "CREATE_TABLE": ("hcat.kinds", base | {"table"}), "DROP_TABLE": ("hcat.kinds", base | {"table"}),
        "ALTER_TABLE": ("hcat.kinds", base | {"table", "tableType"}),
        "ADD_PARTITION": ("hcat.kinds.t", base | {"table", "partitions"}),
        "DROP_PARTITION": ("hcat.kinds.t", base | {"table", "partitions"}),
        "INSERT": ("hcat.kinds.t", base | {"table", "tableType", "partKeyVals", "files"}),
        "CREATE_FUNCTION": ("hcat.kinds", base | {"functionObjJson"}),
        "DROP_FUNCTION": ("hcat.kinds", base | {"functionName"}),
    }
    assert {t for t, _ in got} == set(want)
    for typ, msg in got:
        topic, fields = want[typ]
        body = json.loads(msg.body)
        assert msg.topic == topic, typ
        assert set(body) == fields, (typ, sorted(body))
        assert list(body)[:5] == ["timestamp", "eventType", "server", "servicePrincipal", "db"]
        assert body["eventType"] == typ and body["db"] == "kinds" and body["server"] == "thrift://h:9083"
        assert msg.headers == {"HCAT_EVENT": typ, "HCAT_MESSAGE_VERSION": "0.1", "HCAT_MESSAGE_FORMAT": "json",
                               "HCAT_EVENT_ID": str(msg.event_id)}
        if typ == "ADD_PARTITION":
            assert body["partitions"] == [{"ds": "d1", "hr": "h1"}, {"ds": "d1", "hr": "h2"}]
        if typ == "DROP_PARTITION":
            assert body["partitions"] == [{"ds": "d1", "hr": "h2"}]
        if typ == "INSERT":
            assert body["partKeyVals"] == {"ds": "d1", "hr": "h1"} and body["files"] == ["file:/x/1"]
        if typ == "DROP_FUNCTION":
            assert body["functionName"] == "f"
        if typ in ("CREATE_TABLE", "DROP_TABLE", "ALTER_TABLE"):
            assert body["table"] == "t"
    # the gzip variant: the same fields, gzip-compressed and Base64-encoded, and named so
    gz = HCatMessages(server="thrift://h:9083", fmt=get_format("gzip(json)"))
    e = cat.next_notifications(0, 1)[0]
    m = gz.message(e)
    assert m.headers["HCAT_MESSAGE_FORMAT"] == "gzip(json)"
    assert get_format("gzip(json)").decode(m.body) == json.loads(hm.message(e).body)
    assert not m.body.startswith("{")
    # chosen in the settings, with HCatalog's keys
    from metastore import config
    from metastore.notify.background import hcat_messages
    st = config.load(None, env={})
    st.set("hcatalog.message.format", "gzip(json)")
    st.set("hcat.msgbus.topic.prefix", "wh9")
    hm9 = hcat_messages(st, "thrift://x:1")
    assert hm9.fmt.name == "gzip(json)" and hm9.message(e).topic == "wh9"


def test_hcatalog_message_of_an_unreadable_log_event_still_goes_out() -> None:
    """A log message that is not JSON, or holds odd field types, gives a body from what the log row says: the
    relay publishes it and moves on (an exception here made it retry the same event forever)."""
    from metastore.core.model import NotificationEvent
    from metastore.notify.hcat import HCatMessages

    hm = HCatMessages(server="thrift://h:9083")
    odd = [NotificationEvent(1, 5, "ADD_PARTITION", "d", "t", "not json {"),
           NotificationEvent(2, 5, "ADD_PARTITION", "d", "t", json.dumps({"db": "d", "table": "t", "partitions": 5})),
           NotificationEvent(3, 5, "INSERT", "d", "t", json.dumps({"partKeyVals": [1], "files": 7})),
           NotificationEvent(4, 5, "SOMETHING_NEWER", "d", None, "[1, 2]"),
           NotificationEvent(5, 5, "DROP_PARTITION", "d", "t", '{"timestamp": 1e999, "tableObjJson": '
                             '"{\\"9\\": {\\"map\\": [\\"str\\", \\"str\\", 1, '
                             '{\\"hcat.msgbus.topic.name\\": 7}]}}"}')]
    bodies = [json.loads(hm.message(e).body) for e in odd]
    assert [b["db"] for b in bodies] == ["d"] * 5 and bodies[4]["timestamp"] == 5
    assert hm.message(odd[4]).topic == "hcat.d.t"  # a topic-name parameter that is not text is not a topic
    assert [hm.message(e).topic for e in odd[:3]] == ["hcat.d.t"] * 3
    assert bodies[0]["partitions"] == [] and bodies[1]["partitions"] == [] and bodies[1]["timestamp"] == 5
    assert bodies[2]["partKeyVals"] == {} and bodies[2]["files"] == [] and "table" not in bodies[3]


# ---- the embedded default: no broker, subscribers read the log ----------------------------------------

@pytest.fixture(scope="module")
def plain_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """`metastore serve` without a bus, on SQLite."""
    from conftest import Server
    tmp = tmp_path_factory.mktemp("embedded")
    srv = Server(Database("sqlite", f"sqlite:///{tmp / 'e.db'}"), tmp).start()
    yield srv
    srv.stop()


def test_embedded_default_reads_the_same_topics_and_messages(plain_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from metastore.notify import subscribe

    db = unique("emb")
    got = Collector()
    sub = subscribe(["hcat", f"hcat.{db}", f"hcat.{db}.*"], got, source=plain_server.uri, name="emb",
                    state=str(tmp_path / "emb.json"))
    assert sub.ready.wait(20)
    expected = scripted_ddl_at(plain_server.port, db)
    assert got.wait(len(expected), 20)
    sub.stop()
    sub.join(10)
    assert [(m.topic, m.event_type) for m in got.messages] == [(e["topic"], e["type"]) for e in expected]
    for m, e in zip(got.messages, expected):
        assert m.headers["HCAT_MESSAGE_FORMAT"] == "json" and m.headers["HCAT_EVENT"] == e["type"]
        check_hcat_body(m.fields(), e, server=plain_server.uri)
    # the position is durable: a new subscription with the same state file starts where this one stopped
    c = Client(plain_server.port)
    try:
        from hive_metastore.ttypes import Database as TDatabase
        c.create_database(TDatabase(name=db + "x", description=None, locationUri=None, parameters={}))
    finally:
        c.close()
    again = Collector()
    sub = subscribe(["hcat"], again, source=plain_server.uri, name="emb", state=str(tmp_path / "emb.json"))
    assert again.wait(1, 20)
    time.sleep(0.3)
    sub.stop()
    sub.join(10)
    assert [m.fields()["db"] for m in again.messages] == [db + "x"]


def test_events_tail_command(plain_server) -> None:  # type: ignore[no-untyped-def]
    db = unique("tail")
    proc = subprocess.Popen([sys.executable, "-m", "metastore.cli", "events", "tail", "--metastore", plain_server.uri,
                             "--topic", f"hcat.{db}.#", "--topic", "hcat", "--count", "6", "--body"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stderr is not None
        assert "watching" in proc.stderr.readline()
        time.sleep(0.5)
        scripted_ddl_at(plain_server.port, db)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [ln for ln in out.splitlines() if not ln.strip().startswith("{")]
    assert len(lines) == 6, out + err
    assert "CREATE_DATABASE" in lines[0] and f"hcat.{db}.clicks" in lines[2] and "ADD_PARTITION" in lines[2]
    assert "ds=2024-01-01/hr=00, ds=2024-01-01/hr=01" in lines[2]


def test_rolled_back_change_has_no_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from metastore.core import model as m
    from metastore.core.errors import CatalogError
    from metastore.notify import subscribe

    cat = local_catalog(tmp_path)
    got = Collector()
    sub = subscribe(["#"], got, source=cat, start=0)
    assert sub.ready.wait(10)
    fail_changes_to(monkeypatch, "doomed")
    with pytest.raises((RuntimeError, CatalogError)):
        cat.create_database(m.Database(name="doomed"))
    cat.create_database(m.Database(name="after"))
    assert got.wait(1, 10)
    time.sleep(0.3)
    sub.stop()
    sub.join(5)
    assert [(x.event_id, x.fields()["db"]) for x in got.messages] == [(1, "after")]


def test_in_process_subscriber_is_a_registered_consumer(tmp_path: Path) -> None:
    from metastore.core import model as m
    from metastore.notify import subscribe

    cat = local_catalog(tmp_path)
    cat.create_database(m.Database(name="a1"))
    got = Collector()
    sub = subscribe(["hcat"], got, source=cat, name="audit", start="earliest")
    assert got.wait(1, 10)
    sub.stop()
    sub.join(5)
    c = cat.consumer("subscriber:audit")
    assert c is not None and c.lastEventId == 1
    cat.create_database(m.Database(name="a2"))
    assert cat.clean_notifications(ttl=-1) == 1  # event 2 is kept for the subscriber
    again = Collector()
    sub = subscribe(["hcat"], again, source=cat, name="audit")
    assert again.wait(1, 10)
    sub.stop(forget=True)
    sub.join(5)
    assert [x.fields()["db"] for x in again.messages] == ["a2"]


# ---- retention and "events missing", on every backend -------------------------------------------------

@pytest.fixture(params=BACKENDS)
def store_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    for db in make_database(request.param, tmp_path):
        yield local_catalog(tmp_path, db.url)


def _db_events(cat, n: int, when: int | None = None) -> None:  # type: ignore[no-untyped-def]
    from metastore.core import model as m
    for _ in range(n):
        cat.create_database(m.Database(name=unique("r")))
    if when is not None:  # age them: rewrite their times as if they were written `when`
        from metastore.store import schema as s
        with cat.store.write() as tx:
            tx.conn.execute(s.notification_log.update().where(s.notification_log.c.EVENT_TIME > when)
                            .values(EVENT_TIME=when))


def test_retention_ttl_consumers_and_hard_cap(store_catalog) -> None:  # type: ignore[no-untyped-def]
    from metastore.core.errors import EventsMissing

    cat = store_catalog
    now = int(time.time())
    _db_events(cat, 10, when=now - 3 * 86400)  # events 1..10, three days old
    _db_events(cat, 5)  # events 11..15, new
    cat.register_consumer("repl-policy", 4)  # has read up to 4
    cat.register_consumer("relay", 12)
    assert cat.clean_notifications(ttl=86400, max_ttl=7 * 86400) == 4  # 1..4: old and read by everyone
    assert cat.oldest_event_id() == 5
    with pytest.raises(EventsMissing, match="events missing: events 3 to 4"):
        cat.next_notifications(2, 10)
    assert [e.eventId for e in cat.next_notifications(4, 3)] == [5, 6, 7]
    cat.set_consumer("repl-policy", 8)
    assert cat.clean_notifications(ttl=86400, max_ttl=7 * 86400) == 4  # 5..8
    # the hard cap: older than 2 days goes, read or not (events 9, 10); new ones stay
    assert cat.clean_notifications(ttl=86400, max_ttl=2 * 86400) == 2
    assert cat.oldest_event_id() == 11
    with pytest.raises(EventsMissing):
        cat.next_notifications(8, 10)  # the policy is behind the log now: told, not silently skipped
    # without consumers, the time-to-live alone
    cat.remove_consumer("repl-policy")
    cat.remove_consumer("relay")
    assert cat.clean_notifications(ttl=86400) == 0  # 11..15 are new
    assert cat.clean_notifications(ttl=-1) == 5
    assert cat.oldest_event_id() is None
    with pytest.raises(EventsMissing, match="no event is kept"):
        cat.next_notifications(0, 10)
    assert cat.next_notifications(15, 10) == []
    _db_events(cat, 1)
    assert [e.eventId for e in cat.next_notifications(15, 10)] == [16]


def test_events_missing_over_thrift(tmp_path: Path) -> None:
    from hive_metastore.ttypes import NotificationEventRequest

    from conftest import Server

    url = f"sqlite:///{tmp_path / 'm.db'}"
    srv = Server(Database("sqlite", url), tmp_path).start()
    try:
        c = Client(srv.port)
        try:
            from hive_metastore.ttypes import Database as TDatabase
            for _ in range(3):
                c.create_database(TDatabase(name=unique("m"), description=None, locationUri=None, parameters={}))
            assert len(c.get_next_notification(NotificationEventRequest(lastEvent=0, maxEvents=10)).events) == 3
            local_catalog(tmp_path, url).clean_notifications(ttl=-1)
            with pytest.raises(Exception, match="events missing: events 1 to 3"):
                c.get_next_notification(NotificationEventRequest(lastEvent=0, maxEvents=10))
        finally:
            c.close()
        c = Client(srv.port)  # a reader from the current event id is fine
        try:
            cur = c.get_current_notificationEventId().eventId
            assert cur == 3
            assert c.get_next_notification(NotificationEventRequest(lastEvent=cur, maxEvents=10)).events == []
        finally:
            c.close()
    finally:
        srv.stop()


def test_cleaner_thread_and_durations(tmp_path: Path) -> None:
    from metastore.config import parse_duration
    from metastore.notify.retention import Cleaner

    assert parse_duration("86400s") == 86400 and parse_duration("1d") == 86400 and parse_duration("90m") == 5400
    assert parse_duration("7200") == 7200 and parse_duration("", 5) == 5 and parse_duration("500ms") == 0.5
    with pytest.raises(ValueError):
        parse_duration("soon")
    cat = local_catalog(tmp_path)
    _db_events(cat, 3, when=int(time.time()) - 100)
    cl = Cleaner(cat, ttl=50, max_ttl=None, interval=0.1).start()
    try:
        assert wait_for(lambda: cl.cleaned == 3, 10)
    finally:
        cl.stop()


# ---- the relay, with an in-memory broker ---------------------------------------------------------------

class MemoryBroker:
    """Publishes into a list; fails the next `fail` publishes (as a broker outage would)."""

    url = "memory://"

    def __init__(self) -> None:
        self.published: list = []
        self.fail = 0
        self.lock = threading.Lock()

    def describe(self) -> str:
        return self.url

    def connect(self) -> None:
        pass

    def publish(self, messages: Sequence) -> None:
        from metastore.notify.brokers import BrokerError
        with self.lock:
            if self.fail:
                self.fail -= 1
                raise BrokerError("memory broker: down")
            self.published.extend(messages)

    def close(self) -> None:
        pass


def test_relay_retries_resumes_and_keeps_order(store_catalog) -> None:  # type: ignore[no-untyped-def]
    from metastore.notify.relay import Relay

    cat = store_catalog
    broker = MemoryBroker()
    broker.fail = 3
    _db_events(cat, 20)
    r = Relay(cat, broker, batch=7, start_at=0, max_backoff=0.2).start()  # type: ignore[arg-type]
    try:
        assert wait_for(lambda: len(broker.published) == 20, 20)
    finally:
        r.stop()
    assert [m.event_id for m in broker.published] == list(range(1, 21))
    assert r.stats.broker_errors == 3
    assert cat.consumer("relay").lastEventId == 20  # type: ignore[union-attr]
    # a new relay on the same cursor goes on after it, publishing nothing twice
    _db_events(cat, 2)
    r2 = Relay(cat, broker).start()  # type: ignore[arg-type]
    try:
        assert wait_for(lambda: len(broker.published) == 22, 20)
        time.sleep(0.3)
    finally:
        r2.stop()
    assert [m.event_id for m in broker.published] == list(range(1, 23))


class _SlowClaims:
    """The catalog, with the relay thread's first claim held back (as on a loaded host or a remote store)."""

    def __init__(self, catalog, delay: float) -> None:  # type: ignore[no-untyped-def]
        self._catalog, self._delay = catalog, delay

    def claim_consumer(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(self._delay)
        return self._catalog.claim_consumer(*args, **kwargs)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._catalog, name)


def test_new_relay_starts_where_start_returned(store_catalog) -> None:  # type: ignore[no-untyped-def]
    """A relay on a new cursor (start: latest) relays every event committed after start() returned, however late
    its thread gets to the store; a server relies on this to lose nothing between binding and relaying."""
    from metastore.notify.relay import Relay

    cat = store_catalog
    broker = MemoryBroker()
    _db_events(cat, 3)
    before = cat.current_event_id()
    r = Relay(_SlowClaims(cat, 1.0), broker).start()  # type: ignore[arg-type]
    try:
        _db_events(cat, 4)
        assert wait_for(lambda: len(broker.published) >= 4, 20), broker.published
        time.sleep(0.3)
    finally:
        r.stop()
    assert [m.event_id for m in broker.published] == list(range(before + 1, before + 5))


def test_one_relay_per_cursor_and_takeover(store_catalog) -> None:  # type: ignore[no-untyped-def]
    from metastore.notify.relay import Relay

    cat = store_catalog
    broker = MemoryBroker()
    a = Relay(cat, broker, start_at=0, lease=2.0).start()  # type: ignore[arg-type]
    assert wait_for(lambda: cat.consumer("relay") is not None and cat.consumer("relay").owner == a.owner, 10)  # type: ignore[union-attr]
    b = Relay(cat, broker, lease=2.0).start()  # type: ignore[arg-type]
    try:
        _db_events(cat, 30)
        assert wait_for(lambda: len(broker.published) >= 30, 20)
        time.sleep(0.5)
        assert [m.event_id for m in broker.published] == list(range(1, 31))  # b published nothing
        assert b.stats.published == 0
        a.release_on_stop = False  # a dies without giving up its lease (as after kill -9)
        a.stop()
        held = cat.consumer("relay")
        assert held is not None and held.owner == a.owner
        _db_events(cat, 5)
        assert wait_for(lambda: b.stats.published == 5, 20)  # b takes over once a's lease expired
        assert [m.event_id for m in broker.published] == list(range(1, 36))
        assert cat.consumer("relay").owner == b.owner  # type: ignore[union-attr]
    finally:
        a.stop()
        b.stop()


# ---- the migration -------------------------------------------------------------------------------------

def test_migration_0002_upgrades_an_existing_store(tmp_path: Path) -> None:
    from metastore.store import migrate
    from metastore.store.engine import create_engine

    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    migrate.upgrade(engine, "0001")
    with pytest.raises(migrate.SchemaVersionError, match="older"):
        migrate.check(engine)
    r = subprocess.run([sys.executable, "-m", "metastore.cli", "schema", "upgrade", "--db",
                        f"sqlite:///{tmp_path / 'old.db'}", "--revision", "0002"], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0 and "0001 -> 0002" in r.stdout, r.stderr
    import sqlalchemy as sa
    assert "NOTIFICATION_CONSUMERS" in sa.inspect(engine).get_table_names()
    migrate.upgrade(engine)
    migrate.check(engine)


def test_gzip_message_is_read_and_a_bomb_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hive 3/4's gzip(json-2.0) messages are read; one that inflates beyond the cap is refused, not inflated."""
    import base64
    import gzip

    from metastore.core import messages

    text = base64.b64encode(gzip.compress(json.dumps({"db": "d", "table": "t"}).encode()))
    assert messages.message_fields(text, "gzip(json-2.0)") == {"db": "d", "table": "t"}
    monkeypatch.setattr(messages, "MAX_MESSAGE_BYTES", 1000)
    bomb = base64.b64encode(gzip.compress(b" " * 1_000_000))  # ~1 KiB of gzip
    with pytest.raises(messages.MessageError, match="inflates beyond 1000 bytes"):
        messages.message_fields(bomb, "gzip(json-2.0)")


def test_gzip_message_must_be_one_whole_stream() -> None:
    """A gzip message cut short (its trailer, and so its CRC check, missing) is refused, not read in part; so is
    one with anything after its stream (a second gzip member, garbage). Each is otherwise valid JSON."""
    import base64
    import gzip

    from metastore.core import messages

    whole = gzip.compress(b'{"db":"d","table":"t"}')
    assert messages.message_fields(base64.b64encode(whole), "gzip(json-2.0)") == {"db": "d", "table": "t"}
    for bad, why in ((whole[:-8], "truncated"), (whole[:-3], "truncated"),
                     (whole + gzip.compress(b' '), "data after its stream"),
                     (gzip.compress(b'{"db":"d",') + gzip.compress(b'"table":"t"}'), "data after its stream"),
                     (whole + b"garbage", "data after its stream")):
        with pytest.raises(messages.MessageError, match=why):
            messages.message_fields(base64.b64encode(bad), "gzip(json-2.0)")


def test_gzip_body_inflating_beyond_the_limit_is_refused() -> None:
    """A gzip(json) body from the bus is inflated at most up to the message limit: a few hundred KiB that inflate to
    257 MiB are refused, not read into memory; a well-formed body still decodes."""
    import base64
    import gzip
    import zlib

    from metastore.core.messages import MAX_MESSAGE_BYTES, MessageError
    from metastore.notify.hcat import decode_body, get_format

    z = zlib.compressobj(1, wbits=31)
    chunk = b" " * (1 << 20)
    bomb = b"".join(z.compress(chunk) for _ in range(MAX_MESSAGE_BYTES // len(chunk) + 1)) + z.flush()
    assert len(bomb) < 2 << 20
    with pytest.raises(MessageError, match="inflates beyond"):
        decode_body(base64.b64encode(bomb), "gzip(json)")
    two = base64.b64encode(gzip.compress(b'{"a": 1}') + gzip.compress(b"{}"))
    with pytest.raises(MessageError, match="after its stream"):
        decode_body(two, "gzip")
    assert decode_body(get_format("gzip(json)").encode({"a": 1}), "gzip(json)") == {"a": 1}
