"""The relay: notification log -> message bus, in id order, from a durable cursor.

The cursor is a registered consumer of the log (NOTIFICATION_CONSUMERS, default name "relay"): the id of the
last event the broker confirmed. The relay reads the events after it (only committed changes have events),
publishes them as one batch, and moves the cursor once the broker has confirmed the whole batch. So:

- a crash of the relay (kill -9) loses nothing: the next relay starts after the cursor and publishes again the
  batch that was in flight, if any (subscribers drop those duplicates by HCAT_EVENT_ID);
- an outage of the broker loses nothing: publishing fails, the relay retries with exponential backoff (capped)
  and resumes from the cursor, skipping nothing;
- per-topic order holds: one relay publishes, in log order, one batch at a time;
- a change whose transaction rolled back has no event, so it is never published;
- retention keeps every event after the cursor (up to its hard cap): if events were cleaned before the relay
  read them, it says so (EventsMissing) and waits, rather than skip them, unless told to skip.

Several servers on one database run one relay between them: the cursor has a lease (owner, expiry) that the
active relay renews; another takes over when it expires.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import CatalogError, EventsMissing
from .brokers import Broker, BrokerError
from .hcat import HCatMessages
from .source import commit_hint

log = logging.getLogger(__name__)


@dataclass
class RelayStats:
    published: int = 0  # events the broker confirmed
    batches: int = 0
    position: int | None = None  # the cursor
    broker_errors: int = 0
    store_errors: int = 0
    last_error: str | None = None
    started: float = field(default_factory=time.time)


class Relay:
    # The cursor thread's state, made afresh by each run() (a run starts from the stored cursor, never from a
    # previous run's)
    _lock: threading.Lock
    _target: int | None  # the position the broker confirmed, to write
    _written: int | None  # the position last written
    _dirty: threading.Event
    _lost: threading.Event  # the lease went to another relay
    _cursor_stop: threading.Event

    def __init__(self, catalog: Any, broker: Broker, messages: HCatMessages | None = None, name: str = "relay",
                 batch: int = 500, poll: float = 0.1, lease: float = 10.0, max_backoff: float = 5.0,
                 start_at: int | None = None, skip_missing: bool = False) -> None:
        self.catalog = catalog
        self.broker = broker
        self.messages = messages or HCatMessages()
        self.name = name
        self.batch = batch
        self.poll = poll
        self.lease_ms = int(lease * 1000)
        self.max_backoff = max_backoff
        self.start_at = start_at
        self.skip_missing = skip_missing
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.stats = RelayStats()
        self.release_on_stop = True  # give the cursor's lease back when stopping (False: as if it crashed)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._hint = commit_hint(catalog)

    # ---- control -------------------------------------------------------------------------------------

    def start(self) -> Relay:
        try:  # before the thread: events committed from here on are after the relay's starting point
            self.catalog.register_consumer(self.name, self.start_at)
        except Exception as e:  # noqa: BLE001 - the store: the loop registers it once the store is back
            log.warning("relay %s: could not register the cursor yet (%s)", self.name, e)
        self._thread = threading.Thread(target=self.run, name=f"relay-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._hint.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)

    # ---- the cursor --------------------------------------------------------------------------------
    # The confirmed position is written, and the lease renewed, by a thread of its own: under heavy write
    # load a write transaction can wait for the store's write lock, and publishing should not wait with it.
    # The cursor only ever moves to positions the broker confirmed, so a crash re-publishes at most what was
    # confirmed but not yet written (duplicates, dropped by id), never skips.

    def _hold(self, pos: int | None) -> None:
        with self._lock:
            self._target = pos
            self._written = pos
        self._lost.clear()

    def _confirm(self, pos: int) -> None:
        with self._lock:
            self._target = pos
        self._dirty.set()

    def _cursor_loop(self) -> None:
        renew_every = self.lease_ms / 3000
        last_write = time.monotonic()
        while True:
            self._dirty.wait(renew_every)
            self._dirty.clear()
            with self._lock:
                target, written = self._target, self._written
            if target is not None and (target != written or time.monotonic() - last_write >= renew_every):
                try:
                    ok = self.catalog.advance_consumer(self.name, target, self.owner, self.lease_ms)
                except Exception as e:  # noqa: BLE001 - the store: try again shortly
                    log.warning("relay %s: could not write the cursor (%s); retrying", self.name, e)
                    if self._cursor_stop.wait(min(1.0, renew_every)):
                        return
                    self._dirty.set()
                    continue
                last_write = time.monotonic()
                with self._lock:
                    if not ok:
                        self._target = None
                    elif self._target is not None:
                        self._written = target
                if not ok:
                    self._lost.set()
                    self._hint.set()
            if self._cursor_stop.is_set():
                with self._lock:
                    if self._target is None or self._target == self._written:
                        return
                self._dirty.set()

    # ---- the loop ------------------------------------------------------------------------------------

    def run(self) -> None:
        log.info("relay %s: publishing the notification log to %s", self.name, self.broker.describe())
        pos: int | None = None
        backoff = 0.0
        self._lock = threading.Lock()
        self._target = None
        self._written = None
        self._dirty = threading.Event()
        self._lost = threading.Event()
        self._cursor_stop = threading.Event()
        cursor = threading.Thread(target=self._cursor_loop, name=f"relay-{self.name}-cursor", daemon=True)
        cursor.start()
        try:
            while not self._stop.is_set():
                try:
                    if self._lost.is_set():
                        log.warning("relay %s: lost the cursor's lease to another relay", self.name)
                        pos = None
                        self._hold(None)
                    if pos is None:
                        c = self.catalog.claim_consumer(self.name, self.owner, self.lease_ms, self.start_at)
                        if c is None:  # another relay holds the cursor
                            self._sleep(min(self.lease_ms / 3000, 5.0))
                            continue
                        pos = c.lastEventId
                        self._hold(pos)
                        self.stats.position = pos
                        log.info("relay %s: holds the cursor at event %d", self.name, pos)
                    self._hint.clear()
                    events = self.catalog.next_notifications(pos, self.batch)
                    if not events:
                        if self._hint.wait(self.poll):
                            self._sleep(0.001)  # the hint comes just before the writer's commit completes
                        continue
                    self.broker.publish([self.messages.message(e) for e in events])
                    pos = events[-1].eventId
                    self._confirm(pos)
                    backoff = 0.0
                    self.stats.published += len(events)
                    self.stats.batches += 1
                    self.stats.position = pos
                except BrokerError as e:
                    self.stats.broker_errors += 1
                    self.stats.last_error = str(e)
                    backoff = self._backoff(backoff)
                    log.warning("relay %s: broker unavailable (%s); retrying from event %s in %.1fs", self.name, e,
                                pos, backoff)
                    self.broker.close()
                    self._sleep(backoff)
                except EventsMissing as e:
                    self.stats.last_error = str(e)
                    if self.skip_missing and pos is not None:
                        oldest = self.catalog.oldest_event_id()
                        new = (oldest - 1) if oldest is not None else self.catalog.current_event_id()
                        log.error("relay %s: %s -- skipping to event %d as configured", self.name, e, new)
                        pos = new
                        self._confirm(pos)
                        continue
                    backoff = self._backoff(backoff)
                    log.error("relay %s: %s -- not publishing anything past the gap; the cursor stays at %s "
                              "(set it with `metastore events consumers set`, or run with --skip-missing)",
                              self.name, e, pos)
                    self._sleep(max(backoff, 1.0))
                except (CatalogError, OSError) as e:
                    self.stats.store_errors += 1
                    self.stats.last_error = str(e)
                    backoff = self._backoff(backoff)
                    log.warning("relay %s: store unavailable (%s); retrying in %.1fs", self.name, e, backoff)
                    self._sleep(backoff)
                except Exception as e:  # noqa: BLE001 - a bug: say so, keep relaying
                    self.stats.last_error = f"{type(e).__name__}: {e}"
                    backoff = self._backoff(backoff)
                    log.exception("relay %s: unexpected error; retrying from the cursor in %.1fs", self.name, backoff)
                    self.broker.close()
                    self._sleep(backoff)
        finally:
            self.broker.close()
            self._cursor_stop.set()
            self._dirty.set()
            cursor.join(15)  # the last confirmed position is written before the lease is given back
            try:
                if self.release_on_stop:
                    self.catalog.release_consumer(self.name, self.owner)
            except Exception:  # noqa: BLE001 - the store may be the reason we stop
                pass
            log.info("relay %s: stopped at event %s", self.name, pos)

    def _backoff(self, current: float) -> float:
        nxt = min(self.max_backoff, max(0.2, current * 2))
        return nxt * (0.8 + 0.4 * random.random())
