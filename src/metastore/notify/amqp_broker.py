"""RabbitMQ through AMQP 0-9-1 (the pika client).

Topics are routing keys of a durable topic exchange (default `amq.topic`, which RabbitMQ's STOMP plugin uses
for /topic/ destinations too, so STOMP and AMQP subscribers see the same messages). Each message is
persistent, text/plain UTF-8, with the HCAT_* properties as AMQP headers, the event id as message-id and the
event type as type. A batch is published in one channel transaction (tx.select / tx.commit): the commit-ok
comes back only once RabbitMQ has taken the whole batch.

A subscriber owns a queue bound to the exchange with its patterns (AMQP's own topic syntax): durable and
named `metastore.<name>` when the subscription has a name (messages wait there while it is away), else an
exclusive queue that lives as long as the connection.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Sequence
from typing import Any

from .. import extras
from .brokers import Broker, BrokerError, BrokerSubscriber, Delivery, query
from .hcat import BusMessage

log = logging.getLogger(__name__)

_OWN_PARAMS = ("exchange", "timeout")


def _pika() -> Any:
    # an extra: its absence raises MissingExtra naming `amqp`
    return extras.require("pika", "amqp")


def _errors() -> tuple[type[BaseException], ...]:
    pika = _pika()
    return (pika.exceptions.AMQPError, OSError, ConnectionError)


class AmqpBroker(Broker):
    def __init__(self, url: str, timeout: float = 15.0) -> None:
        self.url = url
        q = query(url)
        self.exchange = q.get("exchange", "amq.topic")
        self.timeout = float(q.get("timeout", timeout))
        p = urllib.parse.urlsplit(url)
        rest = [(k, v) for k, v in urllib.parse.parse_qsl(p.query) if k not in _OWN_PARAMS]
        rest += [("blocked_connection_timeout", str(int(self.timeout))), ("socket_timeout", str(int(self.timeout)))]
        scheme = "amqps" if p.scheme == "amqps" else "amqp"
        self.pika_url = urllib.parse.urlunsplit((scheme, p.netloc, p.path or "/", urllib.parse.urlencode(rest), ""))
        self.conn: Any = None
        self.channel: Any = None

    def _open(self) -> tuple[Any, Any]:
        pika = _pika()
        try:
            conn = pika.BlockingConnection(pika.URLParameters(self.pika_url))
            ch = conn.channel()
            if self.exchange and not self.exchange.startswith("amq."):
                ch.exchange_declare(self.exchange, exchange_type="topic", durable=True)
            return conn, ch
        except _errors() as e:
            raise BrokerError(f"{self.describe()}: {type(e).__name__}: {e}") from e

    def connect(self) -> None:
        if self.conn is not None and self.conn.is_open:
            return
        self.conn, self.channel = self._open()
        try:
            self.channel.tx_select()
        except _errors() as e:
            self.close()
            raise BrokerError(f"{self.describe()}: {type(e).__name__}: {e}") from e

    def close(self) -> None:
        conn, self.conn, self.channel = self.conn, None, None
        if conn is not None:
            try:
                if conn.is_open:
                    conn.close()
            except Exception:  # noqa: BLE001 - a broken connection cannot close cleanly
                pass

    def publish(self, messages: Sequence[BusMessage]) -> None:
        if not messages:
            return
        pika = _pika()
        self.connect()
        try:
            for m in messages:
                props = pika.BasicProperties(content_type="text/plain", content_encoding="utf-8", delivery_mode=2,
                                             headers=dict(m.headers), message_id=str(m.event_id),
                                             type=m.event_type, timestamp=m.event_time or None)
                self.channel.basic_publish(self.exchange, m.topic, m.body.encode("utf-8"), props)
            self.channel.tx_commit()
        except _errors() as e:
            self.close()
            raise BrokerError(f"{self.describe()}: {type(e).__name__}: {e}") from e

    def subscriber(self, patterns: Sequence[str], name: str | None, prefetch: int = 1000) -> BrokerSubscriber:
        return AmqpSubscriber(self, patterns, name, prefetch)


class AmqpSubscriber(BrokerSubscriber):
    def __init__(self, broker: AmqpBroker, patterns: Sequence[str], name: str | None, prefetch: int) -> None:
        self.broker = broker
        self.patterns = [p.strip().replace(">", "#") for p in patterns]
        self.name = name
        self.prefetch = prefetch
        self.conn: Any = None
        self.channel: Any = None
        self.queue = ""
        self._it: Any = None

    def connect(self) -> None:
        conn, ch = self.broker._open()
        try:
            if self.name:
                self.queue = ch.queue_declare(f"metastore.{self.name}", durable=True).method.queue
            else:
                self.queue = ch.queue_declare("", exclusive=True, auto_delete=True).method.queue
            for p in self.patterns:
                ch.queue_bind(self.queue, self.broker.exchange, routing_key=p)
            ch.basic_qos(prefetch_count=self.prefetch)
        except _errors() as e:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass
            raise BrokerError(f"{self.broker.describe()}: {type(e).__name__}: {e}") from e
        self.conn, self.channel = conn, ch
        self._it = None

    def receive(self, timeout: float) -> Delivery | None:
        if self.channel is None:
            raise BrokerError("not connected")
        try:
            if self._it is None:
                self._it = self.channel.consume(self.queue, auto_ack=False, inactivity_timeout=timeout)
            method, props, body = next(self._it)
        except _errors() as e:
            self.close()
            raise BrokerError(f"{self.broker.describe()}: {type(e).__name__}: {e}") from e
        except StopIteration:
            self.close()
            raise BrokerError(f"{self.broker.describe()}: the consumer was cancelled") from None
        if method is None:
            return None
        headers = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in (props.headers or {}).items()}
        return Delivery(method.routing_key, headers, body.decode("utf-8"), group="", token=method.delivery_tag)

    def ack(self, deliveries: Sequence[Delivery]) -> None:
        if not deliveries:
            return
        if self.channel is None:
            raise BrokerError("not connected")
        try:
            self.channel.basic_ack(delivery_tag=max(d.token for d in deliveries), multiple=True)
        except _errors() as e:
            self.close()
            raise BrokerError(f"{self.broker.describe()}: {type(e).__name__}: {e}") from e

    def unsubscribe(self) -> None:
        if self.channel is None:
            raise BrokerError("not connected")
        try:
            if self._it is not None:
                self.channel.cancel()
                self._it = None
            self.channel.queue_delete(self.queue)
        except _errors() as e:
            self.close()
            raise BrokerError(f"{self.broker.describe()}: {type(e).__name__}: {e}") from e

    def close(self) -> None:
        conn, self.conn, self.channel, self._it = self.conn, None, None, None
        if conn is not None:
            try:
                if conn.is_open:
                    conn.close()
            except Exception:  # noqa: BLE001
                pass
