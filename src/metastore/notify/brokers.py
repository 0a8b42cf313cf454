"""Message brokers, chosen by URL.

    activemq://HOST[:61613]                      ActiveMQ through its STOMP connector
    stomp://[USER:PASS@]HOST[:61613][?flavor=rabbitmq&vhost=/]
                                                 any STOMP 1.2 broker (flavor activemq, the default, or rabbitmq)
    rabbitmq+stomp://USER:PASS@HOST[:61613]      RabbitMQ through its STOMP plugin
    amqp://USER:PASS@HOST[:5672]/VHOST[?exchange=amq.topic]
                                                 RabbitMQ through AMQP 0-9-1: topics are routing keys of a
                                                 topic exchange (default amq.topic, where RabbitMQ's STOMP
                                                 plugin puts /topic/ destinations too)
    embedded, log, none, or no URL               no broker: subscribers read the notification log

A broker's `publish(batch)` returns only once the broker has taken every message of the batch for good
(STOMP: a transaction whose COMMIT was receipted; AMQP: a channel transaction whose commit was confirmed),
and raises BrokerError otherwise; the relay then publishes the batch again, so a subscriber may see an
event twice and drops it by its id, but never misses one.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import AMQP_SCHEMES, BUS_SCHEMES, NO_BUS
from .hcat import BusMessage


class BrokerError(ConnectionError):
    """The broker could not be reached, refused, or did not confirm."""


@dataclass
class Delivery:
    """A message as a subscriber receives it from a broker."""

    topic: str
    headers: dict[str, str]
    body: str
    group: str = ""  # the broker subscription it came through (acknowledgements are per subscription)
    token: Any = field(repr=False, default=None)  # what the broker needs to acknowledge it


class Broker:
    """A connection to a broker for the relay (publish) and factory of subscriber connections."""

    url: str = ""

    def connect(self) -> None:
        raise NotImplementedError

    def publish(self, messages: Sequence[BusMessage]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def subscriber(self, patterns: Sequence[str], name: str | None, prefetch: int = 1000) -> BrokerSubscriber:
        raise NotImplementedError

    def describe(self) -> str:
        p = urllib.parse.urlsplit(self.url)
        netloc = p.hostname or ""
        if p.port:
            netloc += f":{p.port}"
        return f"{p.scheme}://{netloc}{p.path if p.path not in ('', '/') else ''}"


class BrokerSubscriber:
    """One subscriber's connection: durable under `name`, receiving the topics matching its patterns."""

    def connect(self) -> None:
        raise NotImplementedError

    def receive(self, timeout: float) -> Delivery | None:
        raise NotImplementedError

    def ack(self, deliveries: Sequence[Delivery]) -> None:
        """Acknowledge `deliveries` (received in this order) and everything received before them."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def unsubscribe(self) -> None:
        """End a durable subscription for good (the broker forgets it and its waiting messages)."""
        raise NotImplementedError


def is_embedded(url: str | None) -> bool:
    return url is None or url.strip().lower() in NO_BUS or url.strip().lower().startswith("embedded:")


def open_broker(url: str, **options: Any) -> Broker:
    """The broker of `url` (not yet connected)."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme in AMQP_SCHEMES:
        from .amqp_broker import AmqpBroker
        return AmqpBroker(url, **options)
    if scheme in BUS_SCHEMES:  # the others all speak STOMP
        from .stomp_broker import StompBroker
        return StompBroker(url, **options)
    raise ValueError(f"unknown message bus URL {url!r}: use activemq://, stomp://, rabbitmq+stomp:// or amqp://")


def query(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).items()}
