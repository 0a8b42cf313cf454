"""Brokers over STOMP: ActiveMQ (its STOMP connector) and RabbitMQ (its STOMP plugin).

Publishing: each batch is one STOMP transaction (BEGIN, SENDs, COMMIT with a receipt), so the broker takes
all of it or none; messages are persistent, on /topic/<topic>, without content-length (ActiveMQ makes them
TextMessages), with the HCAT_* headers as properties. Subscribing: durable topic subscriptions (ActiveMQ:
client-id + activemq.subscriptionName; RabbitMQ: durable, not auto-deleted), client acknowledgement.
"""

from __future__ import annotations

import logging
import os
import socket
import urllib.parse
import uuid
from collections.abc import Sequence

from .brokers import Broker, BrokerError, BrokerSubscriber, Delivery, query
from .hcat import BusMessage
from .stomp import Frame, StompConnection, StompError

log = logging.getLogger(__name__)

DEFAULT_PORT = 61613


class StompBroker(Broker):
    def __init__(self, url: str, timeout: float = 15.0, flavor: str | None = None) -> None:
        self.url = url
        p = urllib.parse.urlsplit(url)
        q = query(url)
        self.host = p.hostname or "127.0.0.1"
        self.port = p.port or DEFAULT_PORT
        self.login = urllib.parse.unquote(p.username) if p.username else q.get("login")
        self.passcode = urllib.parse.unquote(p.password) if p.password else q.get("passcode")
        self.flavor = (flavor or q.get("flavor") or ("rabbitmq" if p.scheme.startswith("rabbitmq") else "activemq"))
        if self.flavor == "rabbitmq" and self.login is None:
            self.login, self.passcode = "guest", "guest"
        self.vhost = q.get("vhost") or ("/" if self.flavor == "rabbitmq" else None)
        self.mode = q.get("confirm", "transaction")  # or "receipt": a receipt for every SEND
        self.timeout = float(q.get("timeout", timeout))
        self.conn: StompConnection | None = None
        self._tx = 0

    def _new(self, client_id: str | None = None, heartbeat_ms: int = 0) -> StompConnection:
        return StompConnection(self.host, self.port, self.login, self.passcode, self.vhost, client_id,
                               heartbeat_ms=heartbeat_ms, timeout=self.timeout)

    def connect(self) -> None:
        if self.conn is not None and self.conn.connected:
            return
        conn = self._new()
        try:
            conn.connect()
        except StompError as e:
            raise BrokerError(str(e)) from e
        self.conn = conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close(graceful=True)
            self.conn = None

    def destination(self, topic: str) -> str:
        return "/topic/" + topic

    def _send_frame(self, m: BusMessage, extra: dict[str, str]) -> Frame:
        headers = {"destination": self.destination(m.topic), "persistent": "true", **m.headers, **extra}
        return Frame("SEND", headers, m.body.encode("utf-8"))

    def publish(self, messages: Sequence[BusMessage]) -> None:
        if not messages:
            return
        self.connect()
        conn = self.conn
        assert conn is not None
        try:
            if self.mode == "receipt":
                frames = [self._send_frame(m, {"receipt": f"e-{m.event_id}"}) for m in messages]
                conn.send_frames(frames)
                for m in messages:
                    conn.wait_receipt(f"e-{m.event_id}", self.timeout)
                return
            self._tx += 1
            tx = f"relay-{os.getpid()}-{self._tx}"
            receipt = f"commit-{self._tx}"
            frames = [Frame("BEGIN", {"transaction": tx})]
            frames += [self._send_frame(m, {"transaction": tx}) for m in messages]
            frames.append(Frame("COMMIT", {"transaction": tx, "receipt": receipt}))
            conn.send_frames(frames)
            conn.wait_receipt(receipt, self.timeout)
        except StompError as e:
            self.conn = None
            conn.close()
            raise BrokerError(str(e)) from e

    def subscriber(self, patterns: Sequence[str], name: str | None, prefetch: int = 1000) -> BrokerSubscriber:
        return StompSubscriber(self, patterns, name, prefetch)


def _stomp_patterns(patterns: Sequence[str], flavor: str) -> list[str]:
    """Our patterns (`*` one word, `#` any number of words, zero included) in the broker's syntax."""
    out: list[str] = []
    for p in patterns:
        p = p.strip().replace(">", "#")
        if flavor == "rabbitmq":  # RabbitMQ's STOMP topics are AMQP routing keys: the same syntax
            out.append(p)
            continue
        words = p.split(".")
        if "#" in words[:-1]:
            raise ValueError(f"ActiveMQ supports '#' (any words) only at the end of a pattern: {p}")
        if words[-1] == "#":  # ActiveMQ's '>' is one word or more: subscribe to the stem as well
            stem = ".".join(words[:-1])
            if stem:
                out.append(stem)
            out.append((stem + "." if stem else "") + ">")
        else:
            out.append(p)
    return list(dict.fromkeys(out))


class StompSubscriber(BrokerSubscriber):
    def __init__(self, broker: StompBroker, patterns: Sequence[str], name: str | None, prefetch: int) -> None:
        self.broker = broker
        self.name = name
        self.prefetch = prefetch
        self.destinations = _stomp_patterns(patterns, broker.flavor)
        self.conn: StompConnection | None = None
        self._subs: dict[str, str] = {}  # subscription id -> destination

    def connect(self) -> None:
        b = self.broker
        client_id = None
        if self.name and b.flavor == "activemq":
            client_id = self.name
        elif not self.name and b.flavor == "activemq":
            client_id = f"metastore-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        conn = b._new(client_id=client_id, heartbeat_ms=5000)
        try:
            conn.connect()
            for i, dest in enumerate(self.destinations):
                sid = f"sub-{i}"
                headers = {"id": sid, "destination": b.destination(dest), "ack": "client"}
                if b.flavor == "activemq":
                    headers["activemq.prefetchSize"] = str(self.prefetch)
                    if self.name:
                        headers["activemq.subscriptionName"] = f"{self.name}.{i}"
                else:
                    headers["prefetch-count"] = str(self.prefetch)
                    if self.name:
                        headers.update({"durable": "true", "auto-delete": "false", "id": f"{self.name}.{i}"})
                        sid = headers["id"]
                self._subs[sid] = dest
                receipt = f"sub-receipt-{i}"
                headers["receipt"] = receipt
                conn.send("SUBSCRIBE", headers)
                conn.wait_receipt(receipt, b.timeout)
        except StompError as e:
            conn.close()
            raise BrokerError(str(e)) from e
        self.conn = conn

    def receive(self, timeout: float) -> Delivery | None:
        conn = self.conn
        if conn is None:
            raise BrokerError("not connected")
        try:
            frame = conn.read_frame(timeout)
            if frame is None:
                if conn.server_heartbeat_ms and conn.silent_for() > 3 * conn.server_heartbeat_ms / 1000:
                    conn.close()
                    raise BrokerError("the broker stopped sending heart-beats")
                return None
        except StompError as e:
            self.conn = None
            raise BrokerError(str(e)) from e
        if frame.command != "MESSAGE":
            return None
        h = frame.headers
        dest = h.get("destination", "")
        topic = dest[len("/topic/"):] if dest.startswith("/topic/") else dest
        ack_id = h.get("ack") or h.get("message-id", "")
        return Delivery(topic, dict(h), frame.body.decode("utf-8"), group=h.get("subscription", ""), token=ack_id)

    def ack(self, deliveries: Sequence[Delivery]) -> None:
        conn = self.conn
        if conn is None:
            raise BrokerError("not connected")
        last: dict[str, Delivery] = {}
        for d in deliveries:  # client mode: acknowledging a message acknowledges its predecessors too
            last[d.group] = d
        try:
            for d in last.values():
                conn.send("ACK", {"id": d.token, "message-id": d.token, "subscription": d.group})
        except StompError as e:
            self.conn = None
            raise BrokerError(str(e)) from e

    def unsubscribe(self) -> None:
        conn = self.conn
        if conn is None:
            raise BrokerError("not connected")
        try:
            for sid in self._subs:
                frames = [{"id": sid}]  # ActiveMQ: close the consumer, then remove its durable subscription
                if self.name and self.broker.flavor == "activemq":
                    frames.append({"id": sid, "activemq.subscriptionName": f"{self.name}.{sid.split('-', 1)[1]}"})
                elif self.name:
                    frames = [{"id": sid, "durable": "true"}]
                for headers in frames:
                    receipt = conn.next_id("unsub")
                    headers["receipt"] = receipt
                    conn.send("UNSUBSCRIBE", headers)
                    conn.wait_receipt(receipt, self.broker.timeout)
        except StompError as e:
            self.conn = None
            raise BrokerError(str(e)) from e

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close(graceful=True)
            self.conn = None
