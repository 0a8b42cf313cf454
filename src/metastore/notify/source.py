"""Readers of the notification log: the catalog in this process, or a metastore over Thrift.

Both give events in id order after a given id, and raise EventsMissing when the events asked for were already
cleaned. In-process, a reader also gets a hint when a transaction that wrote events commits, so it need not
wait for its next poll (the hint only wakes it; it still reads through the catalog).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from ..core.model import NotificationEvent
from ..thrift.client import HIVE_ERRORS, MetastoreClient, error_text

if TYPE_CHECKING:
    from ..catalog.service import Catalog
    from ..store.store import Store

_hints_lock = threading.Lock()
_hints: weakref.WeakKeyDictionary[Store, _Hints] = weakref.WeakKeyDictionary()


class _Hints:
    """Wakes waiters when a write transaction of this process that added events to the log commits (one store
    callback, registered once per store; the waiters are held weakly, so a dropped reader costs nothing)."""

    def __init__(self, store: Store) -> None:
        self.waiters: weakref.WeakSet[threading.Event] = weakref.WeakSet()
        store.on_events_committed(self.wake)

    def wake(self) -> None:
        for w in list(self.waiters):
            w.set()


def commit_hint(catalog: Catalog) -> threading.Event:
    """An Event set whenever a transaction of this process that wrote notification events commits."""
    store = catalog.store
    with _hints_lock:
        h = _hints.get(store)
        if h is None:
            h = _hints[store] = _Hints(store)
    ev = threading.Event()
    h.waiters.add(ev)
    return ev


class LogSource:
    """Where subscribers without a broker, and the relay, read events."""

    describe = "log"

    def next(self, after: int, limit: int) -> list[NotificationEvent]:
        raise NotImplementedError

    def current(self) -> int:
        raise NotImplementedError

    def oldest(self) -> int | None:
        raise NotImplementedError

    def wait(self, timeout: float) -> None:
        threading.Event().wait(timeout)

    def close(self) -> None:
        pass


class CatalogSource(LogSource):
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.hint = commit_hint(catalog)
        self.describe = catalog.store.describe()

    def next(self, after: int, limit: int) -> list[NotificationEvent]:
        self.hint.clear()
        return self.catalog.next_notifications(after, limit)

    def current(self) -> int:
        return self.catalog.current_event_id()

    def oldest(self) -> int | None:
        return self.catalog.oldest_event_id()

    def wait(self, timeout: float) -> None:
        self.hint.wait(timeout)


class ThriftSource(LogSource):
    """get_next_notification on a metastore at thrift://HOST:PORT."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        self._client = MetastoreClient(url, timeout)
        self.describe = self._client.uri

    def _fatal(self, e: BaseException) -> ConnectionError:
        # a Hive exception here is as fatal to a reader as a lost connection
        return ConnectionError(f"{self.describe}: {type(e).__name__}: {error_text(e)}")

    def next(self, after: int, limit: int) -> list[NotificationEvent]:
        try:
            events = self._client.next_notification(after, limit)
        except HIVE_ERRORS as e:
            raise self._fatal(e) from e
        return [NotificationEvent(e.eventId, e.eventTime, e.eventType, e.dbName, e.tableName, e.message or "",
                                  e.messageFormat or "", getattr(e, "catName", None)) for e in events]

    def current(self) -> int:
        try:
            return self._client.current_event_id()
        except HIVE_ERRORS as e:
            raise self._fatal(e) from e

    def oldest(self) -> int | None:
        return None

    def close(self) -> None:
        self._client.close()


def open_source(source: Any) -> LogSource:
    """A LogSource from a Catalog, a LogSource, or a thrift:// URL."""
    if isinstance(source, LogSource):
        return source
    if source is None or isinstance(source, str):
        url = source or "thrift://127.0.0.1:9083"
        if not url.startswith("thrift://"):
            raise ValueError(f"a log source is a Catalog or a thrift:// URL, not {url!r}")
        return ThriftSource(url)
    return CatalogSource(source)
