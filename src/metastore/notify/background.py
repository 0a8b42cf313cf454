"""What `metastore serve` runs beside the Thrift server: the log's cleaner, and the relay when a bus is set."""

from __future__ import annotations

import atexit
import logging
import urllib.parse
from dataclasses import dataclass
from typing import Any

from ..config import AMQP_SCHEMES, Settings
from ..extras import require
from .brokers import is_embedded, open_broker
from .hcat import HCatMessages, get_format
from .relay import Relay
from .retention import Cleaner
from .topics import TopicMapper

log = logging.getLogger(__name__)

RELAY_NAME = "relay"  # the cursor of the relay `metastore serve` runs


def retention_settings(settings: Settings) -> tuple[float, float | None, float]:
    """(ttl, hard cap, clean interval) in seconds from the settings (typed there); a cap below the ttl is the
    ttl (nothing is kept for consumers beyond the cap, and the cap never cuts into the ttl)."""
    ttl, cap = settings.event_ttl, settings.event_ttl_max
    if cap is not None and cap < ttl:
        cap = ttl
    return ttl, cap, settings.event_clean_interval


def hcat_messages(settings: Settings, server: str) -> HCatMessages:
    extra = settings.extra
    return HCatMessages(TopicMapper(settings.topic_prefix), get_format(extra.get("hcatalog.message.format", "json")),
                        server=server, principal=extra.get("hcat.metastore.principal",
                                                           extra.get("hive.metastore.kerberos.principal", "")))


@dataclass
class Notifications:
    cleaner: Cleaner | None
    relay: Relay | None

    def stop(self) -> None:
        if self.relay is not None:
            self.relay.stop()
        if self.cleaner is not None:
            self.cleaner.stop()


def relay_enabled(settings: Settings) -> bool:
    return not is_embedded(settings.bus) and bool(settings.relay)


def require_bus_client(url: str | None) -> None:
    """MissingExtra now, naming the extra, if the bus's client library is not installed (AMQP: pika), rather
    than failing in the relay's thread at its first publish."""
    if url is not None and urllib.parse.urlsplit(url.strip()).scheme.lower() in AMQP_SCHEMES:
        require("pika", "amqp")


def register_relay(catalog: Any, settings: Settings) -> None:
    """Register the relay's cursor (at the current event, if new) before the server takes requests: the relay
    thread starts later, in a worker, and what is committed meanwhile must still be relayed."""
    if relay_enabled(settings):
        require_bus_client(settings.bus)
        catalog.register_consumer(RELAY_NAME)


def start_notifications(catalog: Any, settings: Settings, server: str) -> Notifications:
    """Start the cleaner (unless its interval is 0) and, with a bus configured and the relay on, the relay."""
    ttl, cap, interval = retention_settings(settings)
    cleaner = Cleaner(catalog, ttl, cap, interval).start() if interval > 0 else None
    relay = None
    if relay_enabled(settings):
        assert settings.bus is not None  # relay_enabled: a bus is set
        relay = Relay(catalog, open_broker(settings.bus), hcat_messages(settings, server), name=RELAY_NAME).start()
    n = Notifications(cleaner, relay)
    atexit.register(n.stop)  # a clean exit (SIGTERM) gives the cursor's lease back at once
    return n
