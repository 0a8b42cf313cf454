"""The metastore, seen through its Thrift API: one thriftpy2 client per thread, reconnected after a failure."""

from __future__ import annotations

import threading
from typing import Any

from ..thrift import hms
from ..thrift.client import MetastoreClient, error_text, parse_uri


class MetastoreError(ConnectionError):
    """The metastore could not be reached (as opposed to a Hive exception it answered with)."""


class _Connection(MetastoreClient):
    def failure(self, fn: str, e: BaseException) -> BaseException:
        return MetastoreError(f"{self.uri}: {fn}: {type(e).__name__}: {error_text(e)}")


class Metastore:
    """Calls on the metastore at thrift://HOST:PORT, safe to use from many threads: one connection each."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        self.url = url
        self.host, self.port = parse_uri(url)
        self.timeout = timeout
        self._local = threading.local()
        self._all: list[_Connection] = []
        self._lock = threading.Lock()

    def _connection(self) -> _Connection:
        c = getattr(self._local, "connection", None)
        if c is None:
            c = self._local.connection = _Connection(self.url, self.timeout)
            with self._lock:
                self._all.append(c)
        return c

    def call(self, name: str, *args: Any) -> Any:
        # One retry on a fresh connection: a metastore restart or an idle timeout should not surface.
        try:
            return self._connection().call(name, *args)
        except MetastoreError:
            return self._connection().call(name, *args)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *a: self.call(name, *a)

    def next_events(self, after: int, limit: int) -> list[Any]:
        resp = self.call("get_next_notification", hms.NotificationEventRequest(lastEvent=after, maxEvents=limit))
        return list(resp.events or [])

    def current_event_id(self) -> int:
        return int(self.call("get_current_notificationEventId").eventId)

    def close(self) -> None:
        with self._lock:
            connections, self._all = self._all, []
        for c in connections:
            c.close()
