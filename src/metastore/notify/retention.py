"""Retention of the notification log.

Every `event_clean_interval` (Hive's key `metastore.event.db.listener.clean.interval`, default 7200s) the
server deletes the events older than `event_ttl` (Hive's `hive.metastore.event.db.listener.timetolive`,
default 86400s: a day) -- but never one that a registered consumer (a relay's cursor, a replication policy,
a named in-process subscriber) has not read yet, unless it is older than the hard cap `event_ttl_max`
(default 7d), after which it goes anyway so that a consumer that stopped for good cannot keep the log
forever. Only a prefix of the log is deleted, so the log stays one gap-free range of ids, and a reader
asking for events before it gets EventsMissing ("events missing: ..."), never a silent gap.

Durations are parsed by config.parse_duration: seconds, or a number with a unit (ms, s, m, h, d: "86400s", "1d").
"""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger(__name__)

class Cleaner:
    """A thread that cleans the log every `interval` seconds."""

    def __init__(self, catalog: Any, ttl: float, max_ttl: float | None, interval: float) -> None:
        self.catalog = catalog
        self.ttl = int(ttl)
        self.max_ttl = int(max_ttl) if max_ttl is not None else None
        self.interval = interval
        self.cleaned = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def clean_once(self) -> int:
        n = self.catalog.clean_notifications(self.ttl, self.max_ttl)
        self.cleaned += n
        if n:
            log.info("notification log: cleaned %d events older than %ss (hard cap %ss)", n, self.ttl, self.max_ttl)
        return n

    def run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.clean_once()
            except Exception:  # noqa: BLE001 - the next round tries again
                log.exception("notification log: cleaning failed")

    def start(self) -> Cleaner:
        self._thread = threading.Thread(target=self.run, name="notification-cleaner", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
