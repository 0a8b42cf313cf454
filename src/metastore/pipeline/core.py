"""Partition-triggered PySpark jobs: declarations, durable state (SQLite) and the runner.

    from metastore.pipeline import Pipeline

    pipe = Pipeline("thrift://127.0.0.1:9083", state="pipeline.sqlite")

    @pipe.on_partition("retail.orders", name="daily_revenue", max_attempts=3)
    def daily_revenue(ctx):                       # ctx.spark, ctx.partition {"day": "2024-03-01"}, ctx.attempt
        ctx.spark.sql(f"INSERT OVERWRITE TABLE retail.daily_revenue PARTITION (day={ctx.sql_value('day')}) ...")

    runner = pipe.runner(spark)                   # subscribes (durably) to the tables' topics
    runner.run(until_idle=True)                   # or run() forever; runner.close() at the end

Triggers. A job runs for every partition named by an ADD_PARTITION or INSERT event on its table's topic
(`hcat.<db>.<table>`), read from the metastore's notification log with `metastore.notify.subscribe`. Spark
fires no INSERT event when it overwrites an existing partition, so a writer that restates a partition calls
`notify_insert(uri, table, partition)` (Thrift fire_listener_event, as Hive does with DML events on).

Guarantees. Each (job, partition) is a row of the state file, made `pending` by the handler before the
subscription's position moves past the event (in the same file), so an event is never lost: at least once.
A job that finishes marks its row `done` for the newest event it saw; a newer event makes it pending again
(a restatement re-runs only that partition's jobs); an event the row already covers is ignored, so a
redelivered event does not run a job twice. A job that raises is retried, after a short backoff and behind
other due work, until `max_attempts`, then left `failed` with its error. Jobs must overwrite their output
partition (INSERT OVERWRITE ... PARTITION), so a re-run after a crash is harmless. A row left `running` by a
crash is pending again at the next start.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..core.events import EventType
from ..notify.subscriber import State, Subscription, subscribe
from ..notify.topics import TopicMapper

log = logging.getLogger(__name__)

TRIGGER_EVENTS = frozenset({EventType.ADD_PARTITION, EventType.INSERT})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS work (
    job TEXT NOT NULL, part TEXT NOT NULL, tbl TEXT NOT NULL,
    status TEXT NOT NULL,                 -- pending | running | done | failed
    event_id INTEGER NOT NULL,            -- newest event that asked for this partition
    done_event_id INTEGER,                -- event the last success covered
    attempts INTEGER NOT NULL DEFAULT 0,  -- attempts for event_id
    runs INTEGER NOT NULL DEFAULT 0,      -- successful runs, all events
    last_error TEXT, not_before REAL NOT NULL DEFAULT 0, updated REAL NOT NULL,
    seconds REAL,
    PRIMARY KEY (job, part));
CREATE TABLE IF NOT EXISTS runs (
    job TEXT NOT NULL, part TEXT NOT NULL, event_id INTEGER NOT NULL, attempt INTEGER NOT NULL,
    started REAL NOT NULL, finished REAL, ok INTEGER, error TEXT);
CREATE TABLE IF NOT EXISTS jobs (job TEXT PRIMARY KEY, tbl TEXT NOT NULL, max_attempts INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS seen (event_id INTEGER PRIMARY KEY, topic TEXT, event_type TEXT, tbl TEXT,
    partitions TEXT, received REAL);
"""


def part_key(partition: dict[str, str]) -> str:
    """A partition as text, `k1=v1/k2=v2` in the given (partition-key) order."""
    return "/".join(f"{k}={v}" for k, v in partition.items())


def parse_part(key: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in key.split("/")) if key else {}


class StateDB:
    """The pipeline's state file (SQLite). A fresh connection per operation: safe from any thread."""

    def __init__(self, path: str) -> None:
        self.path = path
        c = sqlite3.connect(path, timeout=60)
        try:
            c.execute("PRAGMA journal_mode=WAL")
            c.executescript(_SCHEMA)
        finally:
            c.close()

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        c = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            c.execute("BEGIN IMMEDIATE")
            try:
                yield c
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
        finally:
            c.close()

    def rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        c = sqlite3.connect(self.path, timeout=60)
        c.row_factory = sqlite3.Row
        try:
            return c.execute(sql, args).fetchall()
        finally:
            c.close()

    def meta(self, key: str) -> str | None:
        r = self.rows("SELECT value FROM meta WHERE key = ?", (key,))
        return r[0][0] if r else None

    def set_meta(self, c: sqlite3.Connection, key: str, value: str) -> None:
        c.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                  (key, value))


class _SubState(State):
    """The subscription's dedupe map and log position, kept in the pipeline's state file."""

    def __init__(self, db: StateDB, name: str) -> None:
        super().__init__(None)
        self.db, self.key = db, f"subscription:{name}"
        raw = db.meta(self.key)
        if raw:
            d = json.loads(raw)
            self.topics = {k: int(v) for k, v in d.get("topics", {}).items()}
            self.position = d.get("position")

    def save(self) -> None:
        with self.db.connect() as c:
            self.db.set_meta(c, self.key, json.dumps({"topics": self.topics, "position": self.position}))


@dataclass
class Job:
    name: str
    table: str  # db.table, lower case
    fn: Callable[[JobContext], Any]
    max_attempts: int = 3


@dataclass
class JobContext:
    """What a job gets: the Spark session, the partition (values by key), the attempt number."""

    spark: Any
    job: str
    table: str
    partition: dict[str, str]
    event_id: int
    attempt: int

    def sql_value(self, key: str) -> str:
        """The partition's value for `key` as a SQL string literal."""
        return "'" + self.partition[key].replace("\\", "\\\\").replace("'", "\\'") + "'"

    @property
    def partition_spec(self) -> str:
        """`k1='v1', k2='v2'`, for `PARTITION (...)`."""
        return ", ".join(f"{k}={self.sql_value(k)}" for k in self.partition)


class Pipeline:
    """A set of jobs, each triggered by new partitions of one table; see the module's doc."""

    def __init__(self, metastore: str, state: str, name: str = "pipeline", retry_backoff: float = 0.5) -> None:
        self.metastore = metastore
        self.name = name
        self.db = StateDB(state)
        self.retry_backoff = retry_backoff
        self.jobs: dict[str, Job] = {}

    def on_partition(self, table: str, name: str | None = None, max_attempts: int = 3
                     ) -> Callable[[Callable[[JobContext], Any]], Callable[[JobContext], Any]]:
        """Decorator: run the function for each new (or restated) partition of `table` ("db.table")."""
        def deco(fn: Callable[[JobContext], Any]) -> Callable[[JobContext], Any]:
            self.add_job(Job(name or fn.__name__, table.lower(), fn, max_attempts))
            return fn
        return deco

    def add_job(self, job: Job) -> None:
        if "." not in job.table:
            raise ValueError(f"table {job.table!r}: expected db.table")
        if job.name in self.jobs:
            raise ValueError(f"job {job.name!r} declared twice")
        self.jobs[job.name] = job
        with self.db.connect() as c:
            c.execute("INSERT INTO jobs(job, tbl, max_attempts) VALUES (?, ?, ?) ON CONFLICT(job) DO UPDATE SET "
                      "tbl = excluded.tbl, max_attempts = excluded.max_attempts", (job.name, job.table,
                                                                                   job.max_attempts))

    def runner(self, spark: Any, start: int | str = "latest") -> Runner:
        return Runner(self, spark, start)


def _topic_table(topic: str, prefix: str = "hcat") -> str | None:
    parts = topic.split(".")
    return ".".join(parts[1:3]) if len(parts) == 3 and parts[0] == prefix else None


class Runner:
    """Subscribes to the jobs' tables and runs due work in the calling thread (which owns the Spark session)."""

    def __init__(self, pipeline: Pipeline, spark: Any, start: int | str = "latest") -> None:
        self.pipeline = pipeline
        self.spark = spark
        self.db = pipeline.db
        self.events_seen = 0
        self.jobs_run = 0
        self.jobs_failed = 0
        with self.db.connect() as c:  # a crash left these mid-run: due again (the attempt was counted)
            c.execute("UPDATE work SET status = 'pending', not_before = 0 WHERE status = 'running'")
        mapper = TopicMapper()
        topics = sorted({mapper.table_topic(*j.table.split(".", 1)) for j in pipeline.jobs.values()})
        self.state = _SubState(self.db, pipeline.name)
        self.sub: Subscription = subscribe(topics, self._on_message, source=pipeline.metastore,
                                           name=pipeline.name, state=self.state, start=start)
        if not self.sub.ready.wait(60):
            raise RuntimeError(f"subscription to {pipeline.metastore} not ready: {self.sub.error}")
        self._client_lock = threading.Lock()

    # ---- the subscription's side (its own thread) ---------------------------------------------------

    def _on_message(self, msg: Any) -> None:
        if msg.event_type not in TRIGGER_EVENTS:
            return
        f = msg.fields()
        table = f"{f.get('db', '')}.{f.get('table', '')}".lower()
        if msg.event_type == EventType.ADD_PARTITION:
            parts = [dict(p) for p in f.get("partitions") or []]
        else:
            kv = f.get("partKeyVals")
            parts = [dict(kv)] if kv else []
        now = time.time()
        with self.db.connect() as c:
            c.execute("INSERT OR IGNORE INTO seen VALUES (?, ?, ?, ?, ?, ?)",
                      (msg.event_id, msg.topic, msg.event_type, table, json.dumps(parts), now))
            for job in self.pipeline.jobs.values():
                if job.table != table:
                    continue
                for p in parts:
                    c.execute(
                        "INSERT INTO work(job, part, tbl, status, event_id, updated) VALUES (?, ?, ?, 'pending', ?, ?) "
                        "ON CONFLICT(job, part) DO UPDATE SET status = 'pending', event_id = excluded.event_id, "
                        "attempts = 0, last_error = NULL, not_before = 0, updated = excluded.updated "
                        "WHERE excluded.event_id > work.event_id",
                        (job.name, part_key(p), table, msg.event_id, now))
        self.events_seen += 1

    # ---- the runner's side ----------------------------------------------------------------------------

    def _claim(self) -> sqlite3.Row | None:
        now = time.time()
        rows = self.db.rows("SELECT * FROM work WHERE status = 'pending' AND not_before <= ? "
                            "ORDER BY not_before, event_id, part LIMIT 1", (now,))
        if not rows:
            return None
        r = rows[0]
        with self.db.connect() as c:
            c.execute("UPDATE work SET status = 'running', attempts = attempts + 1, updated = ? "
                      "WHERE job = ? AND part = ?", (now, r["job"], r["part"]))
            c.execute("INSERT INTO runs(job, part, event_id, attempt, started) VALUES (?, ?, ?, ?, ?)",
                      (r["job"], r["part"], r["event_id"], r["attempts"] + 1, now))
        return r

    def run_one(self) -> bool:
        """Run one due (job, partition); False if nothing is due."""
        r = self._claim()
        if r is None:
            return False
        job = self.pipeline.jobs.get(r["job"])
        attempt, event_id = r["attempts"] + 1, r["event_id"]
        t0 = time.time()
        error: str | None = None
        if job is None:
            error = f"job {r['job']} is not declared in this pipeline"
            max_attempts = 1
        else:
            max_attempts = job.max_attempts
            ctx = JobContext(self.spark, job.name, job.table, parse_part(r["part"]), event_id, attempt)
            try:
                job.fn(ctx)
            except Exception as e:  # noqa: BLE001 - recorded, retried, then failed
                error = f"{type(e).__name__}: {e}"[:4000]
                log.warning("job %s %s attempt %d failed: %s\n%s", r["job"], r["part"], attempt, error,
                            traceback.format_exc())
        t1 = time.time()
        with self.db.connect() as c:
            c.execute("UPDATE runs SET finished = ?, ok = ?, error = ? WHERE rowid = (SELECT max(rowid) FROM runs "
                      "WHERE job = ? AND part = ?)", (t1, error is None, error, r["job"], r["part"]))
            cur = c.execute("SELECT event_id FROM work WHERE job = ? AND part = ?", (r["job"], r["part"])).fetchone()
            newer = cur is not None and cur[0] != event_id  # a newer event came in meanwhile: stays pending
            if error is None:
                self.jobs_run += 1
                c.execute("UPDATE work SET status = CASE WHEN ? THEN 'pending' ELSE 'done' END, done_event_id = ?, "
                          "runs = runs + 1, last_error = NULL, updated = ?, seconds = ? WHERE job = ? AND part = ?",
                          (newer, event_id, t1, t1 - t0, r["job"], r["part"]))
            elif newer:
                pass
            elif attempt >= max_attempts:
                self.jobs_failed += 1
                c.execute("UPDATE work SET status = 'failed', last_error = ?, updated = ? WHERE job = ? AND part = ?",
                          (error, t1, r["job"], r["part"]))
            else:
                backoff = self.pipeline.retry_backoff * (2 ** (attempt - 1))
                c.execute("UPDATE work SET status = 'pending', last_error = ?, not_before = ?, updated = ? "
                          "WHERE job = ? AND part = ?", (error, t1 + backoff, t1, r["job"], r["part"]))
        return True

    def current_event_id(self) -> int:
        from thriftpy2.rpc import make_client

        from ..thrift import hms

        host, port = self.pipeline.metastore.removeprefix("thrift://").rsplit(":", 1)
        client = make_client(hms.ThriftHiveMetastore, host, int(port), timeout=30_000)
        try:
            return int(client.get_current_notificationEventId().eventId)
        finally:
            client.close()

    def caught_up(self) -> bool:
        """The subscription has read the whole log, as of now."""
        target = self.current_event_id()
        deadline = time.monotonic() + 30
        while (self.state.position or 0) < target:
            if self.sub.error is not None:
                raise RuntimeError(f"subscription failed: {self.sub.error}") from self.sub.error
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def pending(self) -> int:
        return int(self.db.rows("SELECT count(*) FROM work WHERE status IN ('pending', 'running')")[0][0])

    def run(self, until_idle: bool = False, poll: float = 0.2, on_progress: Callable[[Runner], Any] | None = None
            ) -> None:
        """Run due work; with until_idle, return once the log is read to its end and nothing is pending."""
        while True:
            if self.sub.error is not None:
                raise RuntimeError(f"subscription failed: {self.sub.error}") from self.sub.error
            if self.run_one():
                if on_progress:
                    on_progress(self)
                continue
            if until_idle and self.caught_up() and self.pending() == 0:
                return
            nxt = self.db.rows("SELECT min(not_before) FROM work WHERE status = 'pending'")[0][0]
            time.sleep(max(0.02, min(poll, (nxt - time.time()) if nxt else poll)))

    def close(self) -> None:
        self.sub.stop()
        try:
            self.sub.join(10)
        except Exception:  # noqa: BLE001
            pass


def notify_insert(metastore: str, table: str, partition: dict[str, str], files: list[str] | None = None) -> int:
    """Fire an INSERT event for a partition that was rewritten in place (Spark itself fires none)."""
    from thriftpy2.rpc import make_client

    from ..thrift import hms

    db, tbl = table.split(".", 1)
    host, port = metastore.removeprefix("thrift://").rsplit(":", 1)
    client = make_client(hms.ThriftHiveMetastore, host, int(port), timeout=30_000)
    try:
        t = client.get_table(db, tbl)
        vals = [partition[k.name] for k in t.partitionKeys]
        req = hms.FireEventRequest(successful=True, dbName=db, tableName=tbl, partitionVals=vals,
                                   data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(
                                       filesAdded=list(files or []), partitionVal=vals)))
        return int(client.fire_listener_event(req).eventIds[0])
    finally:
        client.close()


@dataclass
class StatusRow:
    job: str
    table: str
    done: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    runs: int = 0


def status(state: str) -> list[StatusRow]:
    """Per job: processed, pending and failed partitions (from the state file alone)."""
    db = StateDB(state)
    out: dict[str, StatusRow] = {r["job"]: StatusRow(r["job"], r["tbl"]) for r in db.rows("SELECT * FROM jobs ORDER BY job")}
    for r in db.rows("SELECT * FROM work ORDER BY job, part"):
        s = out.setdefault(r["job"], StatusRow(r["job"], r["tbl"]))
        s.runs += r["runs"]
        if r["status"] == "done":
            s.done.append(r["part"])
        elif r["status"] == "failed":
            s.failed.append((r["part"], r["last_error"] or ""))
        else:
            s.pending.append(r["part"])
    return list(out.values())
