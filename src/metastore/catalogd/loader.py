"""The table-loading manager: loads incomplete tables in the background with a pool of threads.

A table a reader needs now jumps the queue (prioritized load). A load notes the metastore's current event id
before it reads, so events at or below it are skipped on the loaded table; if an event was skipped while the
table was incomplete and is newer than that id, the load read too early and is done again.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import Any

from ..core.names import make_part_name
from ..thrift import hms
from ..thrift.client import MetastoreClient
from .catalog import CachedTable, CatalogCache, TableKey

log = logging.getLogger(__name__)

URGENT, BACKGROUND = 0, 1


class TableLoader:
    def __init__(self, cache: CatalogCache, metastore: MetastoreClient, threads: int = 4) -> None:
        self.cache = cache
        self.ms = metastore
        self._heap: list[tuple[int, int, TableKey]] = []
        self._prio: dict[TableKey, int] = {}  # queued tables and their best priority
        self._busy: set[TableKey] = set()
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stop = False
        self.loads = 0
        self.failures = 0
        self.load_seconds = 0.0
        self._threads = [threading.Thread(target=self._run, name=f"catalogd-loader-{i}", daemon=True)
                         for i in range(threads)]
        for t in self._threads:
            t.start()

    def request(self, key: TableKey, urgent: bool = False) -> None:
        prio = URGENT if urgent else BACKGROUND
        with self._cond:
            if self._prio.get(key, BACKGROUND + 1) <= prio:
                return
            self._prio[key] = prio
            heapq.heappush(self._heap, (prio, next(self._seq), key))
            self._cond.notify()

    def request_all_incomplete(self) -> int:
        keys = self.cache.incomplete()
        for k in keys:
            self.request(k)
        return len(keys)

    def queued(self) -> int:
        with self._cond:
            return len(self._prio) + len(self._busy)

    def ensure_loaded(self, db: str, name: str, timeout: float = 60.0) -> CachedTable | None:
        """The table, loaded: moved to the head of the queue and waited for (None if it is not in the cache)."""
        deadline = time.monotonic() + timeout
        while True:
            t = self.cache.table(db, name)
            if t is None or t.complete:
                return t
            self.request(t.key, urgent=True)
            with self.cache.changed:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"table {db}.{name} was not loaded within {timeout:g}s")
                self.cache.changed.wait(min(left, 0.2))

    def wait_idle(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.cache.incomplete():
                self.request_all_incomplete()
            with self._cond:
                if not self._prio and not self._busy and not self.cache.incomplete():
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"table loads not finished within {timeout:g}s: {self.cache.incomplete()[:5]}")
            time.sleep(0.02)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                prio, _, key = heapq.heappop(self._heap)
                if self._prio.get(key) != prio:
                    continue  # a stale entry: the table was queued again at a better priority
                if key in self._busy:
                    del self._prio[key]  # loading now; that load rereads until it is current
                    continue
                del self._prio[key]
                self._busy.add(key)
            try:
                t0 = time.monotonic()
                self.load(key)
                self.load_seconds += time.monotonic() - t0
            except Exception as e:  # noqa: BLE001 - a failed load leaves the table incomplete, and is retried
                self.failures += 1
                log.warning("loading %s.%s failed: %s", key[0], key[1], e)
                time.sleep(0.1)
                if self.cache.table(*key) is not None and not self._stop:
                    self.request(key)
            finally:
                with self._cond:
                    self._busy.discard(key)

    def load(self, key: TableKey) -> None:
        for _ in range(10):
            t = self.cache.tables.get(key)
            if t is None or t.complete:
                return
            eid = self.ms.current_event_id()
            try:
                found = self.ms.get_table_objects_by_name(key[0], [key[1]])
                if not found:
                    raise hms.NoSuchObjectException(message=f"{key[0]}.{key[1]}")
                obj = found[0]
                parts = self.ms.get_partitions(key[0], key[1], -1) if obj.partitionKeys else []
            except (hms.NoSuchObjectException, hms.UnknownDBException):
                # gone from the metastore: forget the name (an event still to come that creates it again
                # adds it again; one that drops it finds nothing to drop)
                with t.lock:
                    if self.cache.tables.get(key) is t and not t.complete:
                        self.cache.remove_table(*key)
                return
            files = load_files(self.cache, obj, parts)
            with t.lock:
                if self.cache.tables.get(key) is not t or t.complete:
                    return
                if t.skipped_event > eid:
                    continue  # an event changed it after we looked: read again
                t.obj = obj
                t.partitions = {partition_name(obj, p): p for p in parts}
                t.files = files
                t.synced_event = eid
                self.cache.touch(t)
            self.loads += 1
            return

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(5)


def partition_name(table: Any, part: Any) -> str:
    """A partition's name (core.names, Hive's escaping) from its table's keys and its values."""
    return make_part_name([k.name for k in table.partitionKeys], list(part.values))


def load_files(cache: CatalogCache, table: Any, parts: list[Any]) -> dict[str, list[Any]]:
    """The file metadata of a table's location (unpartitioned) or of each partition's location."""
    if table.partitionKeys:
        locs = [p.sd.location for p in parts if p.sd is not None]
    else:
        locs = [table.sd.location if table.sd else None]
    return {loc: cache.list_files(loc) for loc in locs if loc}
