"""Event processors: poll get_next_notification and apply every event to the cache.

SequentialProcessor: one thread, events in id order, each event's tasks (events.plan) one after the other.

HierarchicalProcessor: the layers of the design (shared/design/000, Impala's hierarchical event processing):
- the event dispatcher: the polling thread. It plans each event into tasks (events.plan) and hands them to a
  fixed pool of DbEventExecutors; a database always goes to the same one (by a hash of its name).
- DbEventExecutor: one thread. Runs its databases' own tasks (DbTask, DbBarrierTask) and forwards their table
  tasks to its TableEventExecutors; a table always goes to the same one. It holds the database
  synchronization barrier: a DbBarrierTask runs only once every table task of that database forwarded before
  it has finished, and while it waits the executor forwards nothing, so the database's later table tasks wait
  for it.
- TableEventExecutor: one thread over many tables, each with its TableProcessor (the table's tasks, in event
  order). It runs, round-robin, the first task of a table processor whose first task is ready: a
  RenameTargetTask is not until its RenameSourceTask (in whatever executor or database) has dropped the table
  (the rename synchronization barrier), so a rename waiting holds back its own table only.
- COMMIT_TXN / ABORT_TXN arrive as one pseudo event per table (PseudoCommitTxnTask / PseudoAbortTxnTask, the
  transaction synchronization barrier), each run by its table's processor.
Every wait is for a task of an earlier event, and every table processor runs in event order, so waits cannot
form a cycle. The greatest synced event id is the greatest id with every event up to it finished (all of an
event's tasks). The dispatcher stops reading when `max_outstanding` events are in flight (backpressure). A
table task that fails invalidates the table (it reloads) instead of stopping the processor.
"""

from __future__ import annotations

import heapq
import logging
import queue
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable
from typing import Any

from ..core.messages import DropTable
from ..thrift.client import MetastoreClient
from .catalog import CatalogCache, TableKey
from .events import Applier, DbBarrierTask, RenameSourceTask, RenameTargetTask, TableTask, Task, plan
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

    def __init__(self, cache: CatalogCache, metastore: MetastoreClient, loader: TableLoader | None = None,
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
        events = self.ms.next_notification(self.last_read, self.batch)
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
            table = task.table if isinstance(task, TableTask) else None
            log.warning("event %s (%s) failed on %s.%s: %s: %s", task.event_id, task.event_type, task.db, table,
                        type(e).__name__, e)
            if isinstance(task, RenameSourceTask):
                task.barrier.finish_source()
            if isinstance(task, TableTask):
                t = self.cache.invalidate(task.db, task.table)
                if t is None and not isinstance(task, RenameSourceTask) and not isinstance(task.message, DropTable):
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


class TableProcessor:
    """One table's tasks in its TableEventExecutor, in event order; the first one runs when it is ready."""

    def __init__(self, key: TableKey) -> None:
        self.key = key
        self.tasks: deque[TableTask] = deque()


class TableEventExecutor:
    """One thread running the tasks of the tables hashed to it, each table through its TableProcessor."""

    def __init__(self, name: str, run: Callable[[Task], None], finished: Callable[[TableTask], None]) -> None:
        self.name = name
        self._run = run
        self._finished = finished
        self._cond = threading.Condition()
        # tables with tasks, in the order they are served (a table served goes to the back)
        self._processors: dict[TableKey, TableProcessor] = {}
        self._queued = 0
        self._stop = False
        self.thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self.thread.start()

    def put(self, task: TableTask) -> None:
        with self._cond:
            proc = self._processors.get(task.key)
            if proc is None:
                proc = self._processors[task.key] = TableProcessor(task.key)
            proc.tasks.append(task)
            self._queued += 1
            self._cond.notify()
        if isinstance(task, RenameTargetTask):
            # held until its source is done: wake this executor then, from the source's thread
            task.barrier.when_source_done(self._wake)

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def qsize(self) -> int:
        return self._queued

    def _next(self) -> TableTask | None:
        # caller holds the condition
        for key, proc in self._processors.items():
            task = proc.tasks[0]
            if task.ready():
                del self._processors[key]  # served: to the back of the round
                self._processors[key] = proc
                return task
        return None

    def _loop(self) -> None:
        while True:
            with self._cond:
                task = self._next()
                while task is None and not self._stop:
                    self._cond.wait()
                    task = self._next()
                if task is None:
                    return
            try:
                self._run(task)
            finally:
                with self._cond:
                    proc = self._processors[task.key]
                    proc.tasks.popleft()
                    self._queued -= 1
                    if not proc.tasks:
                        del self._processors[task.key]
                self._finished(task)

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()


class DbEventExecutor:
    """One thread for the databases hashed to it: runs their database tasks, forwards their table tasks to its
    TableEventExecutors, and holds each database's barrier (see the module docstring)."""

    def __init__(self, index: int, table_executors: int, run: Callable[[Task], None],
                 finished: Callable[[Task], None]) -> None:
        self.index = index
        self.name = f"catalogd-db-{index}"
        self._run = run
        self._finished = finished
        self.q: queue.SimpleQueue[Task | None] = queue.SimpleQueue()
        # per database: table tasks forwarded and not finished (what a database barrier waits for)
        self._in_flight: dict[str, int] = {}
        self._cond = threading.Condition()
        self.barrier_waits = 0
        self.table_executors = [TableEventExecutor(f"{self.name}-table-{j}", run, self._table_finished)
                                for j in range(table_executors)]
        self.thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self.thread.start()

    def put(self, task: Task | None) -> None:
        self.q.put(task)

    def table_executor(self, key: TableKey) -> TableEventExecutor:
        return self.table_executors[zlib.crc32(f"{key[0]}.{key[1]}".encode()) % len(self.table_executors)]

    def _table_finished(self, task: TableTask) -> None:
        with self._cond:
            n = self._in_flight[task.db] - 1
            if n:
                self._in_flight[task.db] = n
            else:
                del self._in_flight[task.db]
                self._cond.notify_all()
        self._finished(task)

    def _loop(self) -> None:
        while True:
            task = self.q.get()
            if task is None:
                return
            if isinstance(task, TableTask):
                with self._cond:
                    self._in_flight[task.db] = self._in_flight.get(task.db, 0) + 1
                self.table_executor(task.key).put(task)
                continue
            if isinstance(task, DbBarrierTask):
                with self._cond:
                    if self._in_flight.get(task.db, 0):
                        self.barrier_waits += 1
                    while self._in_flight.get(task.db, 0):
                        self._cond.wait()
            try:
                self._run(task)
            finally:
                self._finished(task)

    def stop(self) -> None:
        self.q.put(None)
        for ex in self.table_executors:
            ex.stop()


class HierarchicalProcessor(Processor):
    """The hierarchical processor: its polling thread is the event dispatcher over a pool of DbEventExecutors."""

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
        self.db_executors = [DbEventExecutor(i, table_executors_per_db, self._run_task, self._finished)
                             for i in range(db_executors)]

    @property
    def barrier_waits(self) -> int:
        """How many database barriers had to wait for table tasks."""
        return sum(ex.barrier_waits for ex in self.db_executors)

    @property
    def synced_event_id(self) -> int:
        with self._lock:
            while self._heap and self._heap[0] not in self._remaining:
                heapq.heappop(self._heap)
            return self._heap[0] - 1 if self._heap else self._dispatched

    def outstanding(self) -> int:
        with self._lock:
            return len(self._remaining)

    def db_executor(self, db: str) -> DbEventExecutor:
        return self.db_executors[zlib.crc32(db.encode()) % len(self.db_executors)]

    def submit(self, e: Any) -> None:
        """The dispatcher: an event's tasks to their database executors, in event order."""
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
            self.db_executor(t.db).put(t)

    def _finished(self, task: Task) -> None:
        eid = task.event_id
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

    def queue_depths(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for ex in self.db_executors:
            out[ex.name] = ex.q.qsize()
            out.update({t.name: t.qsize() for t in ex.table_executors})
        return out

    def stop(self) -> None:
        super().stop()
        for ex in self.db_executors:
            ex.stop()


def make_processor(hierarchical: bool, cache: CatalogCache, metastore: MetastoreClient, loader: TableLoader | None,
                   start_event_id: int = 0, **kw: Any) -> Processor:
    if hierarchical:
        return HierarchicalProcessor(cache, metastore, loader, start_event_id, **kw)
    kw = {k: v for k, v in kw.items() if k in ("poll_interval", "batch")}
    return SequentialProcessor(cache, metastore, loader, start_event_id, **kw)
