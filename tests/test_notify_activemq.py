"""Notifications through ActiveMQ (Debian's package, started by scripts/activemq.sh).

1. A Java JMS subscriber (javac against ActiveMQ's client jars) receives, for a scripted series of DDL through
   `metastore serve --bus ...` (the relay inside the server), every event as a TextMessage on HCatalog's topic,
   with HCatalog's body field by field and the HCAT_* string properties.
2. Nothing lost: 10,000 events in flight while the broker is stopped for 20 s and started again, and while the
   relay (`metastore relay`) is killed with SIGKILL and restarted: the subscriber ends up with every event id,
   in log order per topic, duplicates dropped by id. A change whose transaction rolled back is never published.
3. The per-table topic (`hcat.msgbus.topic.name`) and the prefix setting (`hcat.msgbus.topic.prefix`).
Every test that has a store runs on each backend (SQLite, PostgreSQL, MariaDB).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Client, Database, unique
from notify_support import (
    ACTIVEMQ_OPENWIRE,
    BusServer,
    Collector,
    RelayRun,
    activemq,
    activemq_broker,
    check_all_delivered,
    check_durable_subscription,
    check_hcat_body,
    check_relay_sigkill_loses_nothing,
    compile_java_subscriber,
    fail_changes_to,
    local_catalog,
    parse_java_output,
    relay_run,
    scripted_ddl,
    scripted_ddl_at,
    serve_with_bus,
    thrift_partition,
    thrift_table,
)

_ = activemq_broker  # the fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

EVENTS = 10_000  # events in flight in the nothing-lost tests


@pytest.fixture(scope="module")
def bus_server(activemq_broker: str, database: Database,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[BusServer]:
    yield from serve_with_bus(activemq_broker, database, tmp_path_factory, "amq-serve")


# ---- 1. a Java JMS subscriber --------------------------------------------------------------------------

def test_java_jms_subscriber_gets_hcatalog_messages(bus_server: BusServer, tmp_path: Path) -> None:
    cp = compile_java_subscriber(tmp_path)
    db = unique("jms")
    java = subprocess.Popen(["java", "-cp", cp, "HCatSubscriber", ACTIVEMQ_OPENWIRE, f"hcat,hcat.{db}.>,hcat.{db}",
                             "6", "60000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert java.stdout is not None
        first = java.stdout.readline()
        assert first.strip() == "READY", first + (java.stderr.read() if java.poll() is not None else "")
        c = Client(bus_server.port)
        try:
            expected = scripted_ddl(c, db)
            first_id = c.get_current_notificationEventId().eventId - len(expected) + 1
        finally:
            c.close()
        out, err = java.communicate(timeout=90)
    finally:
        if java.poll() is None:
            java.kill()
    got = parse_java_output(out)
    assert out.strip().endswith(f"DONE {len(expected)}"), out + err
    assert len(got) == len(expected)
    for i, (msg, want) in enumerate(zip(got, expected)):
        assert msg.jms_type == "TextMessage", msg
        assert msg.topic == want["topic"], (msg.topic, want)
        props = msg.properties
        assert props["HCAT_EVENT"] == (want["type"], "String")
        assert props["HCAT_MESSAGE_VERSION"] == ("0.1", "String")
        assert props["HCAT_MESSAGE_FORMAT"] == ("json", "String")
        assert props["HCAT_EVENT_ID"] == (str(first_id + i), "String")
        check_hcat_body(json.loads(msg.body), want, server=bus_server.uri)


# ---- 3. per-table topic, prefix ------------------------------------------------------------------------

def test_table_topic_override(bus_server: BusServer, activemq_broker: str) -> None:
    from metastore.notify import subscribe

    db = unique("ovr")
    got = Collector()
    sub = subscribe([f"hcat.{db}", f"hcat.{db}.#", "custom.#"], got, bus=activemq_broker)
    assert sub.ready.wait(20)
    c = Client(bus_server.port)
    try:
        from hive_metastore.ttypes import Database
        c.create_database(Database(name=db, description=None, locationUri=None, parameters={}))
        c.create_table(thrift_table(db, "plain"))
        c.create_table(thrift_table(db, "special", params={"hcat.msgbus.topic.name": "custom.special.events"}))
        c.add_partitions([thrift_partition(c, db, "plain", ["d1", "h1"])])
        c.add_partitions([thrift_partition(c, db, "special", ["d1", "h1"])])
        t = c.get_table(db, "plain")  # set the override later: later events follow it
        t.parameters["hcat.msgbus.topic.name"] = "custom.plain.moved"
        c.alter_table(db, "plain", t)
        c.add_partitions([thrift_partition(c, db, "plain", ["d2", "h1"])])
        c.drop_partition(db, "special", ["d1", "h1"], True)
    finally:
        c.close()
    assert got.wait(7, 30), [(m.topic, m.event_type) for m in got.messages]
    sub.stop(forget=True)
    sub.join(10)
    seen = [(m.topic, m.event_type) for m in got.messages]
    assert seen == [(f"hcat.{db}", "CREATE_TABLE"), (f"hcat.{db}", "CREATE_TABLE"),
                    (f"hcat.{db}.plain", "ADD_PARTITION"), ("custom.special.events", "ADD_PARTITION"),
                    (f"hcat.{db}", "ALTER_TABLE"), ("custom.plain.moved", "ADD_PARTITION"),
                    ("custom.special.events", "DROP_PARTITION")], seen
    assert got.messages[3].fields()["partitions"] == [{"ds": "d1", "hr": "h1"}]


def test_topic_prefix_setting(activemq_broker: str, tmp_path: Path, fresh_database: Database) -> None:
    from metastore.notify import subscribe

    conf = tmp_path / "hive-site.xml"
    conf.write_text("<configuration><property><name>hcat.msgbus.topic.prefix</name><value>warehouse7</value>"
                    "</property></configuration>")
    srv = BusServer(tmp_path, fresh_database.url, "--bus", activemq_broker,
                    env={"METASTORE_CONFIG": str(conf)}).start()
    got = Collector()
    sub = subscribe(["warehouse7", "warehouse7.#", "hcat", "hcat.#"], got, bus=activemq_broker)
    try:
        assert sub.ready.wait(20)
        expected = scripted_ddl_at(srv.port, unique("pfx"), prefix="warehouse7")
        assert got.wait(len(expected), 30)
        time.sleep(0.5)
        assert [m.topic for m in got.messages] == [e["topic"] for e in expected]
        for m, e in zip(got.messages, expected):
            check_hcat_body(m.fields(), e, server=srv.uri)
    finally:
        sub.stop(forget=True)
        sub.join(10)
        srv.stop()


# ---- 2. nothing lost -----------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["sqlite"], scope="module")  # the broker's outage, on SQLite only
def test_broker_outage_loses_nothing(activemq_broker: str, tmp_path: Path, fresh_database: Database) -> None:
    try:
        with relay_run(activemq_broker, tmp_path, fresh_database.url, "outage") as run:
            run.broker_outage(lambda: activemq("stop"), lambda: activemq("start"), EVENTS)
            assert run.producer is not None
            run.producer.join(120)
            assert not run.producer.is_alive()
            run.wait_all(EVENTS)
            assert run.sub.reconnects >= 1
            assert "broker unavailable" in run.relay.output()
            check_all_delivered(run.cat, run.got, EVENTS)
    finally:
        activemq("start")


def test_relay_sigkill_loses_nothing(activemq_broker: str, tmp_path: Path, fresh_database: Database) -> None:
    def cursor_at_the_end(run: RelayRun) -> None:
        cursor = run.cat.consumer("relay")
        assert cursor is not None and cursor.lastEventId == EVENTS

    check_relay_sigkill_loses_nothing(activemq_broker, tmp_path, fresh_database.url, EVENTS, also=cursor_at_the_end)


def test_rolled_back_change_is_never_published(activemq_broker: str, tmp_path: Path, fresh_database: Database,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from metastore.core import model as m
    from metastore.core.errors import CatalogError, NoSuchObject
    from metastore.notify import subscribe
    from metastore.notify.brokers import open_broker
    from metastore.notify.hcat import HCatMessages
    from metastore.notify.relay import Relay

    cat = local_catalog(tmp_path, fresh_database.url)
    relay = Relay(cat, open_broker(activemq_broker), HCatMessages(), start_at=0).start()
    got = Collector()
    sub = subscribe(["hcat", "hcat.#"], got, bus=activemq_broker)
    try:
        assert sub.ready.wait(20)
        cat.create_database(m.Database(name="before"))
        fail_changes_to(monkeypatch, "doomed")
        with pytest.raises((RuntimeError, CatalogError)):
            cat.create_database(m.Database(name="doomed"))
        cat.create_database(m.Database(name="after"))
        assert got.wait(2, 30)
        time.sleep(1.0)  # anything else would have arrived by now
        assert [(m.event_id, m.fields()["db"]) for m in got.messages] == [(1, "before"), (2, "after")]
        assert [e.dbName for e in cat.next_notifications(0, None)] == ["before", "after"]
        with pytest.raises(NoSuchObject):
            cat.get_database("doomed")
    finally:
        relay.stop()
        sub.stop()
        sub.join(10)


def test_durable_subscription(activemq_broker: str) -> None:
    check_durable_subscription(activemq_broker)
