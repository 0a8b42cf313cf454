"""Notifications on a message bus, as HCatalog's NotificationListener sent them.

The catalog writes every change's event into the notification log in the change's own transaction. The
relay (relay.py) reads the log in id order from a durable cursor and publishes each committed event to the
bus: a text message on the event's topic (topics.py), with HCatalog's JSON body and properties (hcat.py),
stamped with the event id. Brokers are chosen by URL (brokers.py): ActiveMQ over STOMP, RabbitMQ over
AMQP 0-9-1 or STOMP; with no broker, subscribers read the same topics and messages from the log itself.
Subscribers (subscriber.py): `subscribe(patterns, handler)`, durable, duplicates dropped by event id.
Retention (retention.py): the log's time-to-live, held back by registered consumers up to a hard cap.

    metastore serve --bus activemq://127.0.0.1:61613      # the relay runs inside the server
    metastore relay --db URL --bus amqp://guest:guest@127.0.0.1:5672/
    metastore events tail --topic 'hcat.sales.*'
"""

from __future__ import annotations

from .hcat import BusMessage, MessageFormat, get_format, register_format
from .subscriber import Message, Subscription, subscribe
from .topics import TopicMapper

__all__ = ["BusMessage", "Message", "MessageFormat", "Subscription", "TopicMapper", "get_format", "register_format",
           "subscribe"]
