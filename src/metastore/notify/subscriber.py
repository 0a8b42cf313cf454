"""Subscribers: `subscribe(patterns, handler)`, from a broker or, with none, from the notification log.

    from metastore.notify import subscribe

    def handler(msg):                       # a Message: topic, event_id, event_type, body, headers, fields(),
        print(msg.event_id, msg.topic, msg.fields()["db"])  # decoded() (core.messages: AddPartition.specs, ...)

    sub = subscribe(["hcat.sales.*"], handler, bus="activemq://127.0.0.1:61613", name="loader",
                    state="loader.json")    # runs in a thread; sub.stop() ends it
    sub = subscribe(["hcat.#"], handler, source="thrift://127.0.0.1:9083", name="audit", state="audit.json")
                                            # no broker: the same topics and messages, read from the log

Durable position. With a broker, a named subscription is durable on the broker (ActiveMQ's durable topic
subscription, RabbitMQ's queue `metastore.<name>`): messages published while it is away wait for it. Messages
are acknowledged only after the handler returned, in groups, so a crash gets them again. Without a broker,
the position is the last event id handled: in the log's consumers table when the source is a Catalog in this
process (so retention keeps what the subscriber has not read), else in the state file.

Duplicates. The relay may publish an event twice (after a crash or an outage) and a broker may deliver one
twice; events keep their order per topic, so the subscription keeps, per topic, the highest event id handled
and drops anything not above it (`duplicates` counts them). With a `state` file, that map survives restarts.

Errors. An exception from the handler stops the subscription (the message is not acknowledged, so it comes
again next time) and is raised by run() / join(). A broker or metastore that goes away is retried with
backoff. Events that retention already cleaned raise EventsMissing: the subscription stops, with that error.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import messages
from ..core.errors import CatalogError, EventsMissing
from .brokers import BrokerError, BrokerSubscriber, Delivery, is_embedded, open_broker
from .hcat import HCAT_EVENT, HCAT_EVENT_ID, HCAT_MESSAGE_FORMAT, HCatMessages, decode_body, get_format, read_event
from .source import CatalogSource, LogSource, open_source
from .topics import TopicMapper, matcher

log = logging.getLogger(__name__)


@dataclass
class Message:
    """One event as a subscriber sees it."""

    topic: str
    event_id: int
    event_type: str
    body: str
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def format(self) -> str:
        return self.headers.get(HCAT_MESSAGE_FORMAT, "json")

    def fields(self) -> dict[str, Any]:
        """The body's fields (decoded by the message's HCAT_MESSAGE_FORMAT)."""
        return decode_body(self.body, self.format)

    def decoded(self) -> messages.Message:
        """The typed message (core.messages) of the body: AddPartition.specs, Insert.part_key_vals, ... read
        HCatalog's fields as they read the log's (the bus body has no embedded objects: table_obj is None).
        The body comes from a broker, so it is hostile: MessageError when it is not a JSON object."""
        try:
            f = self.fields()
        except (ValueError, OSError, EOFError) as e:  # bad JSON, bad Base64 (binascii.Error), bad gzip
            raise messages.MessageError(f"event {self.event_id}: not a {self.format} message "
                                        f"({type(e).__name__})") from None
        if not isinstance(f, dict):
            raise messages.MessageError(f"event {self.event_id}: the body is not a JSON object")
        return messages.from_fields(self.event_type, self.event_id, f)


class State:
    """Per-topic highest event id handled, and a log position; kept in a JSON file when `path` is given."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self.topics: dict[str, int] = {}
        self.position: int | None = None
        if path and os.path.exists(path):
            with open(path) as f:
                d = json.load(f)
            self.topics = {k: int(v) for k, v in d.get("topics", {}).items()}
            self.position = d.get("position")

    def duplicate(self, topic: str, event_id: int) -> bool:
        return event_id <= self.topics.get(topic, -1)

    def mark(self, topic: str, event_id: int) -> None:
        if event_id > self.topics.get(topic, -1):
            self.topics[topic] = event_id

    def save(self) -> None:
        if not self.path:
            return
        tmp = f"{self.path}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump({"topics": self.topics, "position": self.position}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


Handler = Callable[[Message], Any]


class Subscription:
    """A running subscription; see the module's doc."""

    flush_every = 200
    flush_interval = 0.2

    def __init__(self, patterns: Sequence[str], handler: Handler, name: str | None, state: State,
                 max_backoff: float = 5.0) -> None:
        self.patterns = list(patterns)
        self.handler = handler
        self.name = name
        self.state = state
        self.max_backoff = max_backoff
        self.received = 0  # messages handed to the handler
        self.duplicates = 0  # messages dropped as already handled
        self.reconnects = 0
        self.error: BaseException | None = None
        self.ready = threading.Event()  # set once subscribed (the broker) or positioned (the log)
        self._stop = threading.Event()
        self._forget = False
        self._thread: threading.Thread | None = None

    def start(self) -> Subscription:
        self._thread = threading.Thread(target=self._run_captured, name=f"subscription-{self.name or ''}",
                                        daemon=True)
        self._thread.start()
        return self

    def _run_captured(self) -> None:
        try:
            self.run()
        except BaseException as e:  # noqa: BLE001 - kept for join()
            self.error = e
            if not isinstance(e, EventsMissing):
                log.exception("subscription %s failed", self.name)
            else:
                log.error("subscription %s: %s", self.name, e)

    def stop(self, forget: bool = False) -> None:
        """End the subscription; `forget`: a durable one too (the broker drops it and what waits in it)."""
        self._forget = forget
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the subscription to end; raises the error that ended it, if any."""
        if self._thread is not None:
            self._thread.join(timeout)
        if self.error is not None:
            raise self.error

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def run(self) -> None:
        raise NotImplementedError

    def _backoff(self, current: float) -> float:
        return min(self.max_backoff, max(0.2, current * 2)) * (0.8 + 0.4 * random.random())

    def _deliver(self, msg: Message) -> bool:
        """Hand a message to the handler unless it is a duplicate; True if handed."""
        if self.state.duplicate(msg.topic, msg.event_id):
            self.duplicates += 1
            return False
        self.handler(msg)
        self.state.mark(msg.topic, msg.event_id)
        self.received += 1
        return True


class BrokerSubscription(Subscription):
    def __init__(self, broker_url: str, patterns: Sequence[str], handler: Handler, name: str | None, state: State,
                 prefetch: int = 1000) -> None:
        super().__init__(patterns, handler, name, state)
        self.broker = open_broker(broker_url)
        self.prefetch = prefetch

    def run(self) -> None:
        backoff = 0.0
        conn: BrokerSubscriber | None = None
        pending: list[Delivery] = []
        last_flush = time.monotonic()

        def flush() -> None:
            nonlocal last_flush
            if pending and conn is not None:
                self.state.save()
                conn.ack(pending)
                pending.clear()
            last_flush = time.monotonic()

        try:
            while not self._stop.is_set():
                try:
                    if conn is None:
                        conn = self.broker.subscriber(self.patterns, self.name, self.prefetch)
                        conn.connect()
                        backoff = 0.0
                        self.ready.set()
                    d = conn.receive(0.2)
                    if d is not None:
                        try:
                            event_id = int(d.headers.get(HCAT_EVENT_ID, "0"))
                        except ValueError:
                            event_id = 0
                        msg = Message(d.topic, event_id, d.headers.get(HCAT_EVENT, ""), d.body, d.headers)
                        try:
                            self._deliver(msg)
                        except BaseException:
                            flush()  # acknowledge what was handled before; this one comes again
                            raise
                        pending.append(d)
                    if len(pending) >= self.flush_every or (pending and (
                            d is None or time.monotonic() - last_flush > self.flush_interval)):
                        flush()
                except BrokerError as e:
                    pending.clear()  # not acknowledged: the broker delivers them again (and we drop them)
                    if conn is not None:
                        conn.close()
                    conn = None
                    self.reconnects += 1
                    backoff = self._backoff(backoff)
                    log.warning("subscription %s: %s; reconnecting in %.1fs", self.name, e, backoff)
                    self._stop.wait(backoff)
            try:
                flush()
                if self._forget and conn is not None:
                    conn.unsubscribe()
            except BrokerError:
                pass
        finally:
            if conn is not None:
                conn.close()


class LogSubscription(Subscription):
    """No broker: reads the notification log and applies the relay's topics and message format."""

    def __init__(self, source: LogSource, patterns: Sequence[str], handler: Handler, name: str | None,
                 state: State, messages: HCatMessages, start: int | str | None = None, batch: int = 500,
                 poll: float = 0.2) -> None:
        super().__init__(patterns, handler, name, state)
        self.source = source
        self.messages = messages
        self.match = matcher(patterns)
        self.start_at = start
        self.batch = batch
        self.poll = poll
        self.consumer = (f"subscriber:{name}" if name and isinstance(source, CatalogSource) else None)

    def _initial_position(self) -> int:
        if self.consumer is not None:
            c = self.source.catalog.consumer(self.consumer)  # type: ignore[attr-defined]
            if c is not None:
                return c.lastEventId
        elif self.state.position is not None:
            return int(self.state.position)
        if isinstance(self.start_at, int):
            pos = self.start_at
        elif self.start_at == "earliest":
            oldest = self.source.oldest()
            pos = (oldest - 1) if oldest is not None else 0
        else:
            pos = self.source.current()
        if self.consumer is not None:
            self.source.catalog.register_consumer(self.consumer, pos)  # type: ignore[attr-defined]
        return pos

    def _save(self, pos: int) -> None:
        self.state.position = pos
        self.state.save()
        if self.consumer is not None:
            self.source.catalog.set_consumer(self.consumer, pos)  # type: ignore[attr-defined]

    def run(self) -> None:
        backoff = 0.0
        pos: int | None = None
        saved: int | None = None
        try:
            while not self._stop.is_set():
                try:
                    if pos is None:
                        pos = saved = self._initial_position()
                        self.state.position = pos  # readers of the position (caught up?) see it before any event
                        self.ready.set()
                    events = self.source.next(pos, self.batch)
                    backoff = 0.0
                    for e in events:
                        if self._stop.is_set():
                            break
                        m = read_event(e)  # once: the topic and the body both read it
                        topic = self.messages.topic(e, m)
                        if self.match(topic):
                            bm = self.messages.message(e, m, topic)
                            try:
                                self._deliver(Message(bm.topic, bm.event_id, bm.event_type, bm.body, bm.headers))
                            except BaseException:
                                if pos != saved:
                                    self._save(pos)
                                raise
                        pos = e.eventId
                    if pos != saved:
                        self._save(pos)
                        saved = pos
                    if len(events) < self.batch:
                        self.source.wait(self.poll)
                except EventsMissing:
                    raise
                except (ConnectionError, CatalogError, OSError) as e:
                    backoff = self._backoff(backoff)
                    self.reconnects += 1
                    log.warning("subscription %s: %s unavailable (%s); retrying in %.1fs", self.name,
                                self.source.describe, e, backoff)
                    self._stop.wait(backoff)
        finally:
            self.source.close()


def subscribe(topics: str | Sequence[str], handler: Handler, *, bus: str | None = None, source: Any = None,
              name: str | None = None, state: str | State | None = None, start: int | str | None = None,
              prefix: str | None = None, format: str | None = None, server: str | None = None,
              background: bool = True) -> Subscription:
    """Subscribe `handler` to the topics matching `topics` (names or patterns: `*` one word, `#` any words).

    bus: a broker URL (activemq://, stomp://, rabbitmq+stomp://, amqp://); None or "embedded": no broker, read
    the log from `source` (a Catalog in this process, or thrift://HOST:PORT, default thrift://127.0.0.1:9083),
    mapping events to topics and messages as the relay does (`prefix`, `format`, `server` as the relay's).
    name: a durable subscription; state: a JSON file (or State) for the dedupe map and the log position;
    start (log only): the event id to start after, "earliest", or "latest" (default), when there is no saved
    position. Runs in a thread (returns the started Subscription) unless background=False, then in this one.
    """
    patterns = [topics] if isinstance(topics, str) else list(topics)
    st = state if isinstance(state, State) else State(state)
    sub: Subscription
    if not is_embedded(bus):
        assert bus is not None
        sub = BrokerSubscription(bus, patterns, handler, name, st)
    else:
        src = open_source(source)
        srv = server if server is not None else (src.describe if src.describe.startswith("thrift://") else "")
        msgs = HCatMessages(TopicMapper(prefix), get_format(format), server=srv)
        sub = LogSubscription(src, patterns, handler, name, st, msgs, start=start)
    if background:
        return sub.start()
    sub.run()
    return sub
