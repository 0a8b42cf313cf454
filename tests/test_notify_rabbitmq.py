"""Notifications through RabbitMQ over AMQP 0-9-1 (the machine's service on 127.0.0.1:5672, guest/guest).

Messages go to the topic exchange amq.topic with HCatalog's topic as routing key; a subscriber's durable
queue keeps them while it is away. Checked: the same topics, bodies and HCAT_* properties as on ActiveMQ;
nothing lost when the relay is killed with SIGKILL mid-stream and when the broker stops and starts again.
Every test that has a store runs on each backend (SQLite, PostgreSQL, MariaDB).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import notify_support as ns
from conftest import Database, unique

rabbitmq_broker = ns.rabbitmq_broker  # the fixture, for this module's tests

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

EVENTS = 10_000


@pytest.fixture(scope="module")
def amqp_server(rabbitmq_broker: str, database: Database,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[ns.BusServer]:
    yield from ns.serve_with_bus(rabbitmq_broker, database, tmp_path_factory, "amqp-serve")


def test_amqp_messages(amqp_server: ns.BusServer, rabbitmq_broker: str) -> None:
    import pika

    from metastore.notify import subscribe

    db = unique("amqp")
    got = ns.Collector()
    sub = subscribe(["hcat", f"hcat.{db}.#"], got, bus=rabbitmq_broker)
    # a plain AMQP consumer too: the message as any AMQP client sees it
    conn = pika.BlockingConnection(pika.URLParameters(rabbitmq_broker))
    ch = conn.channel()
    q = ch.queue_declare("", exclusive=True).method.queue
    ch.queue_bind(q, "amq.topic", routing_key=f"hcat.{db}.*")
    try:
        assert sub.ready.wait(20)
        expected = ns.scripted_ddl_at(amqp_server.port, db)
        assert got.wait(len(expected), 30)
        time.sleep(0.3)
        mine = [m for m in got.messages if m.topic != "hcat" or m.fields()["db"] == db]
        assert [(m.topic, m.event_type) for m in mine] == [(e["topic"], e["type"]) for e in expected]
        for m, e in zip(mine, expected):
            assert m.headers["HCAT_MESSAGE_VERSION"] == "0.1" and m.headers["HCAT_MESSAGE_FORMAT"] == "json"
            assert m.headers["HCAT_EVENT"] == e["type"] and int(m.headers["HCAT_EVENT_ID"]) == m.event_id
            ns.check_hcat_body(m.fields(), e, server=amqp_server.uri)
        method, props, body = ch.basic_get(q, auto_ack=True)
        assert method is not None and method.routing_key == f"hcat.{db}.clicks"
        assert props.content_type == "text/plain" and props.delivery_mode == 2
        assert props.headers["HCAT_EVENT"] == "ADD_PARTITION" and props.message_id == props.headers["HCAT_EVENT_ID"]
        assert body.decode().startswith('{"timestamp":')
    finally:
        conn.close()
        sub.stop()
        sub.join(10)


def test_relay_sigkill_loses_nothing(rabbitmq_broker: str, tmp_path: Path, fresh_database: Database) -> None:
    ns.check_relay_sigkill_loses_nothing(rabbitmq_broker, tmp_path, fresh_database.url, EVENTS)


def _rabbitmqctl(*args: str) -> bool:
    try:
        return subprocess.run(["rabbitmqctl", *args], capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _stop_app() -> None:
    assert _rabbitmqctl("stop_app")


@pytest.mark.parametrize("backend", ["sqlite"], scope="module")  # the broker's outage, on SQLite only
def test_broker_outage_loses_nothing(rabbitmq_broker: str, tmp_path: Path, fresh_database: Database) -> None:
    if not _rabbitmqctl("status"):
        pytest.skip("rabbitmqctl cannot control the local RabbitMQ")
    with ns.relay_run(rabbitmq_broker, tmp_path, fresh_database.url, "outage") as run:
        try:  # the broker is back before the subscription is forgotten (that needs the broker)
            run.broker_outage(_stop_app, lambda: _rabbitmqctl("start_app"), EVENTS)
            run.wait_all(EVENTS)
            assert run.sub.reconnects >= 1 and "broker unavailable" in run.relay.output()
            ns.check_all_delivered(run.cat, run.got, EVENTS)
        finally:
            _rabbitmqctl("start_app")


def test_benchmark_smoke(rabbitmq_broker: str, tmp_path: Path) -> None:
    """bench/notify.py runs and reports its figures (a short run on RabbitMQ)."""
    import json
    import sys

    from conftest import ROOT

    r = subprocess.run([sys.executable, str(ROOT / "bench" / "notify.py"), "--brokers", "rabbitmq", "--events", "300",
                        "--latency-seconds", "1", "--rate", "20", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((tmp_path / "notify.json").read_text())["brokers"]["rabbitmq"]
    assert res["drain"]["events"] == 300 and res["drain"]["events_per_s"] > 0
    assert res["latency"]["n"] > 0 and res["latency"]["p50_ms"] > 0  # how many arrive in the second: load-bound
    assert "| rabbitmq |" in (tmp_path / "notify.md").read_text()


def test_durable_subscription(rabbitmq_broker: str) -> None:
    ns.check_durable_subscription(rabbitmq_broker)
