"""Event processors: poll get_next_notification and apply every event to the cache.

SequentialProcessor: one thread, events in id order.

HierarchicalProcessor: the dispatcher (the polling thread) plans each event into tasks (events.plan) and hands
them to a fixed pool of database executors; a database always goes to the same one (by a hash of its name).
A database executor applies its databases' own events and forwards table tasks to its table executors; a table
always goes to the same one, so each table's tasks run in event order while other tables proceed in parallel.
Barriers:
- a database event (CREATE/ALTER/DROP_DATABASE) waits in its database executor until every table task of that
  database dispatched before it has finished; the executor forwards nothing while it waits, so the tables'
  later events wait for it;
- a rename's target task waits for its source task to drop the table (events.Rename), across executors and
  across databases;
- COMMIT_TXN / ABORT_TXN are planned as one pseudo task per table, each run by its table's executor.
Every wait is for a task of an earlier event, and every queue runs in event order, so waits cannot form a
cycle. The greatest synced event id is the greatest id with every event up to it finished. The dispatcher stops
reading when `max_outstanding` events are in flight (backpressure). A table task that fails invalidates the
table (it reloads) instead of stopping the processor.
"""

from __future__ import annotations

import heapq
import logging
import queue
import threading
import time
import zlib
from collections import deque
from typing import Any

from .catalog import CatalogCache
from .client import Metastore
from .events import Applier, Task, plan
from .loader import TableLoader

log = logging.getLogger(__name__)

BATCH = 1000  # get_next_notification's maxEvents: at most this many events a poll


class Metrics:
    def __init__(self) -> None:
        self.received = 0
        self.applied_events = 0
        self.failed = 0
        self.invalidated = 0
        self.started = time.time()
        self.latest_event_id = 0  # the metastore's, at the last poll
        self.last_event_time = 0  # eventTime of the greatest synced event
        self._rate: deque[tuple[float, int]] = deque(maxlen=64)

    def tick(self, synced: int) -> None:
        self._rate.append((time.monotonic(), synced))

    def events_per_second(self) -> float:
        if len(self._rate) < 2:
            return 0.0
        (t0, a), (t1, b) = self._rate[0], self._rate[-1]
        return (b - a) / (t1 - t0) if t1 > t0 else 0.0


class Processor:
    """What both modes share: the poll loop, the synced id, metrics."""

    mode = "?"

    def __init__(self, cache: CatalogCache, metastore: Metastore, loader: TableLoader | None = None,
                 start_event_id: int = 0, poll_interval: float = 0.2, batch: int = BATCH) -> None:
        self.cache = cache
        self.ms = metastore
        self.loader = loader
        self.applier = Applier(cache, metastore, loader)
        self.last_read = start_event_id  # the greatest event id handed to processing
        self.poll_interval = poll_interval
        self.batch = min(batch, BATCH)
        self.metrics = Metrics()
        self.synced_cond = threading.Condition()
        self._stop = threading.Event()
        self._wake = threading.Event()  # set to poll at once (a write through catalogd just committed)
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    # -- the synced id --------------------------------------------------------------------------------
    @property
    def synced_event_id(self) -> int:
        raise NotImplementedError

    def _synced_changed(self) -> None:
        with self.synced_cond:
            self.synced_cond.notify_all()

    def wait_synced(self, event_id: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.synced_cond:
            while self.synced_event_id < event_id:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.synced_cond.wait(min(left, 0.1))
        return True

    def lag_events(self) -> int:
        return max(0, self.metrics.latest_event_id - self.synced_event_id)

    # -- polling --------------------------------------------------------------------------------------
    def poll_once(self) -> int:
        events = self.ms.next_events(self.last_read, self.batch)
        if events:
            self.metrics.latest_event_id = max(self.metrics.latest_event_id, events[-1].eventId)
        else:
            self.metrics.latest_event_id = max(self.metrics.latest_event_id, self.last_read)
        for e in events:
            self.metrics.received += 1
            self.submit(e)
            self.last_read = e.eventId
        self.metrics.tick(self.synced_event_id)
        return len(events)

    def submit(self, e: Any) -> None:
        raise NotImplementedError

    def catch_up(self, timeout: float = 120.0) -> int:
        """Reads and applies every event up to the metastore's current id; returns that id."""
        target = self.ms.current_event_id()
        deadline = time.monotonic() + timeout
        while self.last_read < target:
            if not self.poll_once():
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"not caught up with event {target} within {timeout:g}s")
        if not self.wait_synced(min(target, self.last_read), max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"events up to {target} not applied within {timeout:g}s")
        return target

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"catalogd-{self.mode}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                n = self.poll_once()
                self.error = None
            except Exception as e:  # noqa: BLE001 - the metastore may be down: keep trying
                self.error = f"{type(e).__name__}: {e}"
                log.warning("polling events failed: %s", self.error)
                n = 0
            if n < self.batch and not self._stop.is_set():
                self._wake.wait(self.poll_interval)
                self._wake.clear()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(10)

    def _run_task(self, task: Task) -> None:
        try:
            self.applier.apply(task)
        except Exception as e:  # noqa: BLE001 - one bad event must not stop the processor
            self.metrics.failed += 1
            log.warning("event %s (%s) failed on %s.%s: %s: %s", task.event.eventId, task.event.eventType,
                        task.db, task.table, type(e).__name__, e)
            if task.rename is not None and task.part == "source":
                task.rename.source_done.set()
            if task.table is not None:
                t = self.cache.invalidate(task.db, task.table)
                if t is None and task.part != "source" and task.event.eventType != "DROP_TABLE":
                    t = self.cache.add_table(task.db, task.table)
                if t is not None:
                    self.metrics.invalidated += 1
                    if self.loader:
                        self.loader.request(t.key)

    def queue_depths(self) -> dict[str, int]:
        return {}

    def status(self) -> dict[str, Any]:
        m = self.metrics
        synced = self.synced_event_id
        lag_s = 0.0
        if self.lag_events() and m.last_event_time:
            lag_s = max(0.0, time.time() - m.last_event_time)
        return {"mode": self.mode, "events_received": m.received, "events_applied": self.applier.applied,
                "events_skipped": self.applier.skipped, "events_failed": m.failed,
                "tables_invalidated": m.invalidated, "synced_event_id": synced,
                "latest_event_id": m.latest_event_id, "lag_events": self.lag_events(), "lag_seconds": lag_s,
                "events_per_second": round(m.events_per_second(), 1), "queue_depths": self.queue_depths(),
                "error": self.error}


class SequentialProcessor(Processor):
    mode = "sequential"

    def __init__(self, *a: Any, **k: Any) -> None:
        super().__init__(*a, **k)
        self._synced = self.last_read

    @property
    def synced_event_id(self) -> int:
        return self._synced

    def submit(self, e: Any) -> None:
        for task in plan(e):
            self._run_task(task)
        self._synced = e.eventId
        self.metrics.last_event_time = e.eventTime
        self.metrics.applied_events += 1
        self._synced_changed()


class _Executor:
    def __init__(self, name: str, run: Any, index: int = 0) -> None:
        self.q: queue.SimpleQueue[Task | None] = queue.SimpleQueue()
        self.name = name
        self.index = index
        self.busy = 0.0
        self.thread = threading.Thread(target=run, args=(self,), name=name, daemon=True)
        self.thread.start()

    def put(self, t: Task | None) -> None:
        self.q.put(t)


class HierarchicalProcessor(Processor):
    mode = "hierarchical"

    def __init__(self, *a: Any, db_executors: int = 4, table_executors_per_db: int = 4,
                 max_outstanding: int = 5000, **k: Any) -> None:
        super().__init__(*a, **k)
        self.max_outstanding = max_outstanding
        self._lock = threading.Condition()
        self._remaining: dict[int, int] = {}  # event id -> tasks of it not finished
        self._times: dict[int, int] = {}
        self._heap: list[int] = []  # ids in flight (lazily cleaned)
        self._dispatched = self.last_read
        # per database: table tasks forwarded and not finished (the database barrier counts them)
        self._db_tables: dict[str, int] = {}
        self._db_cond = threading.Condition()
        self.db_execs = [_Executor(f"catalogd-db-{i}", self._db_loop, i) for i in range(db_executors)]
        self.table_execs = [[_Executor(f"catalogd-db-{i}-table-{j}", self._table_loop)
                             for j in range(table_executors_per_db)] for i in range(db_executors)]
        self.barrier_waits = 0

    @property
    def synced_event_id(self) -> int:
        with self._lock:
            while self._heap and self._heap[0] not in self._remaining:
                heapq.heappop(self._heap)
            return self._heap[0] - 1 if self._heap else self._dispatched

    def outstanding(self) -> int:
        with self._lock:
            return len(self._remaining)

    def _db_index(self, db: str) -> int:
        return zlib.crc32(db.encode()) % len(self.db_execs)

    def _table_exec(self, db_index: int, db: str, table: str) -> _Executor:
        execs = self.table_execs[db_index]
        return execs[zlib.crc32(f"{db}.{table}".encode()) % len(execs)]

    def submit(self, e: Any) -> None:
        tasks = plan(e)
        with self._lock:
            while len(self._remaining) >= self.max_outstanding:  # backpressure
                self._lock.wait(0.1)
            self._dispatched = e.eventId
            if tasks:
                self._remaining[e.eventId] = len(tasks)
                self._times[e.eventId] = e.eventTime
                heapq.heappush(self._heap, e.eventId)
        if not tasks:
            self.applier.skipped += 1
            self._synced_changed()
            return
        for t in tasks:
            t.done = self._finished
            self.db_execs[self._db_index(t.db)].put(t)

    def _finished(self, task: Task) -> None:
        eid = task.event.eventId
        with self._lock:
            left = self._remaining[eid] - 1
            if left:
                self._remaining[eid] = left
                return
            del self._remaining[eid]
            self.metrics.applied_events += 1
            self.metrics.last_event_time = self._times.pop(eid, 0)
            self._lock.notify_all()
        self._synced_changed()

    def _db_loop(self, ex: _Executor) -> None:
        index = ex.index
        while True:
            task = ex.q.get()
            if task is None:
                return
            if task.scope == "table":
                with self._db_cond:
                    self._db_tables[task.db] = self._db_tables.get(task.db, 0) + 1
                self._table_exec(index, task.db, task.table or "").put(task)
                continue
            if task.barrier:
                with self._db_cond:
                    if self._db_tables.get(task.db, 0):
                        self.barrier_waits += 1
                    while self._db_tables.get(task.db, 0):
                        self._db_cond.wait()
            self._run_task(task)
            assert task.done is not None
            task.done(task)

    def _table_loop(self, ex: _Executor) -> None:
        while True:
            task = ex.q.get()
            if task is None:
                return
            try:
                self._run_task(task)
            finally:
                with self._db_cond:
                    n = self._db_tables[task.db] - 1
                    if n:
                        self._db_tables[task.db] = n
                    else:
                        del self._db_tables[task.db]
                        self._db_cond.notify_all()
                assert task.done is not None
                task.done(task)

    def queue_depths(self) -> dict[str, int]:
        out = {ex.name: ex.q.qsize() for ex in self.db_execs}
        for row in self.table_execs:
            out.update({ex.name: ex.q.qsize() for ex in row})
        return out

    def stop(self) -> None:
        super().stop()
        for ex in self.db_execs:
            ex.put(None)
        for row in self.table_execs:
            for ex in row:
                ex.put(None)


def make_processor(hierarchical: bool, cache: CatalogCache, metastore: Metastore, loader: TableLoader | None,
                   start_event_id: int = 0, **kw: Any) -> Processor:
    if hierarchical:
        return HierarchicalProcessor(cache, metastore, loader, start_event_id, **kw)
    kw = {k: v for k, v in kw.items() if k in ("poll_interval", "batch")}
    return SequentialProcessor(cache, metastore, loader, start_event_id, **kw)
