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
crash is pending again at the next start, unless that attempt was its last: then it is `failed` ("the runner
stopped during this attempt (its last)"), so a job that kills the process is not run again by every restart.

Partitions in the state file are named as Hive names them (core.names: `k1=v1/k2=v2`, keys lower-cased,
keys and values escaped), so any value (`eu/west`, `a=b`, `50%`, non-ASCII) names one row and reads back as
itself. Files written before that used the raw values (`day=eu/west`); they are renamed once, at open, using
the `seen` table's record of the event's partitions (a value without special characters has the same name
under both rules, so most rows keep theirs).

Messages are hostile (a broker delivers whatever was published): nothing a message carries can stop the
runner. A trigger message that cannot be read (not JSON, partitions that are not key-value maps) is recorded
in `seen` with its error (`rejected()` lists them) and skipped; its readable partitions are still scheduled.
Everything a job does, and reading the row's partition name, is inside one try: a failure (an exception,
SystemExit too) is the row's `last_error`, counted against `max_attempts`; a name no version can read fails
its row at once. Only the state file itself failing (disk full), the subscription failing (events cleaned
before they were read) or KeyboardInterrupt stops the runner.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import MetaError
from ..core.events import EventType
from ..core.messages import AddPartition, Insert, Message
from ..core.names import make_part_name, split_part_name
from ..notify.subscriber import Message as BusMessage
from ..notify.subscriber import State, Subscription, subscribe
from ..notify.topics import TopicMapper
from ..thrift.client import MetastoreClient, MetastoreUnavailable

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
    partitions TEXT, received REAL, error TEXT);
"""

# meta key: how `work.part` / `runs.part` name partitions; absent in files of earlier versions (raw values)
_PART_NAMES_KEY, _PART_NAMES = "part_names", "hive"

# what a recorded error keeps of a job's or a message's exception
_MAX_ERROR = 4000


def part_key(partition: dict[str, str]) -> str:
    """A partition's name in the state file: Hive's (core.names), keys in the given (partition-key) order."""
    return make_part_name(list(partition), list(partition.values()))


def parse_part(key: str) -> dict[str, str]:
    """The partition (values by key) that part_key named; MetaError if `key` is not a partition name."""
    return dict(split_part_name(key))


def _legacy_key(partition: dict[str, Any]) -> str:
    """The name earlier versions wrote: raw values, nothing escaped."""
    return "/".join(f"{k}={v}" for k, v in partition.items())


def _legacy_split(key: str) -> dict[str, str] | None:
    """Best reading of a raw name without its event: a component with no `=` continues the previous value
    (`day=eu/west`). A value holding `/` followed by `=` stays ambiguous; the `seen` table settles those."""
    out: dict[str, str] = {}
    last: str | None = None
    for comp in key.split("/"):
        k, eq, v = comp.partition("=")
        if eq and k:
            out[k] = v
            last = k
        elif last is not None:
            out[last] += "/" + comp
        else:
            return None
    return out or None


def _describe(e: BaseException) -> str:
    """`Type: message` of an exception, whatever its __str__ does."""
    try:
        text = f"{type(e).__name__}: {e}"
    except Exception:  # noqa: BLE001 - a job's exception class may be as broken as the job
        text = f"{type(e).__name__} (its message could not be read)"
    return text[:_MAX_ERROR]


_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def _one_line(text: object) -> str:
    """A client's or a job's value for one log line: control characters escaped, so that a hostile body cannot
    forge lines, and the result (escapes included) clipped to _MAX_ERROR characters."""
    try:
        s = str(text)
    except Exception:  # noqa: BLE001 - a job's object may be as broken as the job
        s = f"{type(text).__name__} (its text could not be read)"
    s = s[:_MAX_ERROR]  # an escape is at most 6 characters: escape no more than is kept
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)[:_MAX_ERROR]


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
        with self.connect() as c:
            self._upgrade(c)

    def _upgrade(self, c: sqlite3.Connection) -> None:
        """Brings a state file of an earlier version to this one's layout (in the open's transaction)."""
        if "error" not in {r[1] for r in c.execute("PRAGMA table_info(seen)")}:
            c.execute("ALTER TABLE seen ADD COLUMN error TEXT")
        row = c.execute("SELECT value FROM meta WHERE key = ?", (_PART_NAMES_KEY,)).fetchone()
        if row is None:
            self._rename_legacy_parts(c)
            self.set_meta(c, _PART_NAMES_KEY, _PART_NAMES)

    @staticmethod
    def _rename_legacy_parts(c: sqlite3.Connection) -> None:
        """Raw partition names (`day=eu/west`) become Hive's (`day=eu%2Fwest`). The event that asked for a
        row recorded its partitions in `seen`, which gives the exact values; without it, _legacy_split.
        A name neither reads is left as it is: the runner records it as failed when it comes due."""
        by_event: dict[int, list[dict[str, Any]]] = {}

        def spec(event_id: int, name: str) -> dict[str, str] | None:
            if event_id not in by_event:
                r = c.execute("SELECT partitions FROM seen WHERE event_id = ?", (event_id,)).fetchone()
                try:
                    parts = json.loads(r[0]) if r and r[0] else []
                except ValueError:
                    parts = []
                by_event[event_id] = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
            for p in by_event[event_id]:
                if _legacy_key(p) == name:
                    return {str(k): str(v) for k, v in p.items()}
            return _legacy_split(name)

        def new_name(event_id: int, name: str) -> str | None:
            p = spec(event_id, name)
            if not p:
                return None
            try:
                new = part_key(p)
            except MetaError:
                return None
            return new if new != name else None

        for rowid, job, name, event_id in c.execute("SELECT rowid, job, part, event_id FROM work").fetchall():
            new = new_name(event_id, name)
            if new is None:
                continue
            clash = c.execute("SELECT rowid, event_id FROM work WHERE job = ? AND part = ?", (job, new)).fetchone()
            if clash is not None:  # two raw names of one partition (keys differing in case): the newer wins
                if clash[1] >= event_id:
                    c.execute("DELETE FROM work WHERE rowid = ?", (rowid,))
                    continue
                c.execute("DELETE FROM work WHERE rowid = ?", (clash[0],))
            c.execute("UPDATE work SET part = ? WHERE rowid = ?", (new, rowid))
        for rowid, name, event_id in c.execute("SELECT rowid, part, event_id FROM runs").fetchall():
            new = new_name(event_id, name)
            if new is not None:
                c.execute("UPDATE runs SET part = ? WHERE rowid = ?", (new, rowid))

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

    @property
    def db_table(self) -> tuple[str, str]:
        db, _, table = self.table.partition(".")
        return db, table


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


class Runner:
    """Subscribes to the jobs' tables and runs due work in the calling thread (which owns the Spark session)."""

    def __init__(self, pipeline: Pipeline, spark: Any, start: int | str = "latest") -> None:
        self.pipeline = pipeline
        self.spark = spark
        self.db = pipeline.db
        self.events_seen = 0
        self.events_rejected = 0  # trigger messages (or some of their partitions) that could not be read
        self.jobs_run = 0
        self.jobs_failed = 0
        self._recover()
        self.client = MetastoreClient(pipeline.metastore, timeout=30.0, retry_reads=True)
        mapper = TopicMapper()
        topics = sorted({mapper.table_topic(*j.db_table) for j in pipeline.jobs.values()})
        self.state = _SubState(self.db, pipeline.name)
        self.sub: Subscription = subscribe(topics, self._on_message, source=pipeline.metastore,
                                           name=pipeline.name, state=self.state, start=start)
        if not self.sub.ready.wait(60):
            raise RuntimeError(f"subscription to {pipeline.metastore} not ready: {self.sub.error}")

    def _recover(self) -> None:
        """Rows a crash left `running` (the attempt was counted when claimed): due again, or `failed` when that
        was their last attempt -- a job that kills the process must not kill every restart too."""
        now = time.time()
        stopped = "the runner stopped during this attempt"
        with self.db.connect() as c:
            c.execute("UPDATE runs SET finished = ?, ok = 0, error = ? WHERE finished IS NULL", (now, stopped))
            failed = c.execute(
                "UPDATE work SET status = 'failed', last_error = ?, updated = ? WHERE status = 'running' AND "
                "attempts >= coalesce((SELECT max_attempts FROM jobs WHERE jobs.job = work.job), 1)",
                (f"{stopped} (its last)", now)).rowcount
            c.execute("UPDATE work SET status = 'pending', not_before = 0, last_error = ?, updated = ? "
                      "WHERE status = 'running'", (stopped, now))
        if failed:
            log.error("pipeline %s: %d job(s) were running at their last attempt when the runner stopped: "
                      "left failed", _one_line(self.pipeline.name), failed)

    # ---- the subscription's side (its own thread) ---------------------------------------------------

    def _on_message(self, msg: BusMessage) -> None:
        """Records the event and makes its partitions' rows pending. Raises only when the state file fails
        (the subscription then stops and the message comes again): what the message carries is recorded."""
        kind = EventType.of(msg.event_type)
        if kind not in TRIGGER_EVENTS:
            return
        table, names, errors = "", list[str](), list[str]()
        try:
            table, names, errors = self._partitions(msg.decoded())
        except Exception as e:  # noqa: BLE001 - a hostile body: recorded and skipped, never retried
            errors.append(_describe(e))
        error = "; ".join(errors)[:_MAX_ERROR] or None
        if error is not None:
            self.events_rejected += 1
            log.warning("pipeline %s: event %d (%s on %s): %s", _one_line(self.pipeline.name), msg.event_id,
                        _one_line(kind), _one_line(msg.topic), _one_line(error))
        now = time.time()
        with self.db.connect() as c:
            c.execute("INSERT OR IGNORE INTO seen(event_id, topic, event_type, tbl, partitions, received, error) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?)", (msg.event_id, msg.topic, kind, table,
                                                       json.dumps([parse_part(n) for n in names]), now, error))
            for job in self.pipeline.jobs.values():
                if job.table != table:
                    continue
                for name in names:
                    c.execute(
                        "INSERT INTO work(job, part, tbl, status, event_id, updated) VALUES (?, ?, ?, 'pending', ?, ?) "
                        "ON CONFLICT(job, part) DO UPDATE SET status = 'pending', event_id = excluded.event_id, "
                        "attempts = 0, last_error = NULL, not_before = 0, updated = excluded.updated "
                        "WHERE excluded.event_id > work.event_id",
                        (job.name, name, table, msg.event_id, now))
        self.events_seen += 1

    @staticmethod
    def _partitions(m: Message) -> tuple[str, list[str], list[str]]:
        """("db.table", the partitions' names, why some could not be read) of an ADD_PARTITION or INSERT."""
        table = f"{m.db}.{m.table or ''}".lower()
        specs: list[dict[str, str]]
        try:
            if isinstance(m, AddPartition):
                if not isinstance(m.raw.get("partitions"), list):
                    return table, [], ["partitions: not a list"]
                specs = m.specs
            elif isinstance(m, Insert):
                kv = m.part_key_vals
                specs = [] if kv is None else [kv]  # None: an unpartitioned table, nothing to trigger
            else:
                return table, [], [f"not a partition event: {type(m).__name__}"]
        except Exception as e:  # noqa: BLE001 - `partitions` that is not a list (a number, say)
            return table, [], [f"partitions: {_describe(e)}"]
        names: list[str] = []
        errors: list[str] = []
        for i, spec in enumerate(specs):
            if not spec or not all(spec):  # _spec() gives {} for anything but a map; a key may not be empty
                errors.append(f"partition {i}: not a map of partition keys to values")
                continue
            name = part_key(spec)
            if name not in names:
                names.append(name)
        return table, names, errors

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

    def _execute(self, r: sqlite3.Row, attempt: int) -> tuple[str | None, bool]:
        """Runs the row's job: (error or None, whether the error is final whatever the attempts left)."""
        job = self.pipeline.jobs.get(r["job"])
        if job is None:
            return f"job {r['job']} is not declared in this pipeline", True
        try:
            partition = parse_part(r["part"])
        except Exception as e:  # noqa: BLE001 - a name no version could read: no attempt will
            return f"unreadable partition name {r['part']!r}: {_describe(e)}", True
        try:
            job.fn(JobContext(self.spark, job.name, job.table, partition, r["event_id"], attempt))
        except (Exception, SystemExit) as e:  # noqa: BLE001 - recorded, retried, then failed
            error = _describe(e)
            # the job's message (it may quote a partition's value) on the line, escaped; then the frames only,
            # which name code, not data
            log.warning("job %s %s attempt %d failed: %s\n%s", _one_line(r["job"]), _one_line(r["part"]), attempt,
                        _one_line(error), "".join(traceback.format_tb(e.__traceback__)).rstrip())
            return error, False
        return None, False

    def run_one(self) -> bool:
        """Run one due (job, partition); False if nothing is due."""
        r = self._claim()
        if r is None:
            return False
        job = self.pipeline.jobs.get(r["job"])
        attempt, event_id = r["attempts"] + 1, r["event_id"]
        t0 = time.time()
        error, final = self._execute(r, attempt)
        max_attempts = 1 if final or job is None else job.max_attempts
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
            elif newer and not final:
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
        return self.client.current_event_id()

    def caught_up(self) -> bool:
        """The subscription has read the whole log, as of now (False while the metastore does not answer)."""
        try:
            target = self.current_event_id()
        except MetastoreUnavailable as e:
            log.warning("pipeline %s: %s; retrying", _one_line(self.pipeline.name), _one_line(e))
            return False
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
        except Exception as e:  # noqa: BLE001 - its error was raised by run() already, or is moot at close
            log.debug("pipeline %s: the subscription ended with %s", _one_line(self.pipeline.name),
                      _one_line(_describe(e)))
        self.client.close()


def notify_insert(metastore: str, table: str, partition: dict[str, str], files: list[str] | None = None) -> int:
    """Fire an INSERT event for a partition that was rewritten in place (Spark itself fires none)."""
    from ..thrift import hms

    db, tbl = table.split(".", 1)
    values = {k.lower(): v for k, v in partition.items()}
    with MetastoreClient(metastore, timeout=30.0) as client:
        t = client.get_table(db, tbl)
        keys = [k.name.lower() for k in t.partitionKeys or []]
        missing = [k for k in keys if k not in values]
        if missing or len(keys) != len(values):
            raise ValueError(f"{table} is partitioned by {keys}; the partition {partition} does not name them")
        vals = [values[k] for k in keys]
        req = hms.FireEventRequest(successful=True, dbName=db, tableName=tbl, partitionVals=vals,
                                   data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(
                                       filesAdded=list(files or []), partitionVal=vals)))
        return client.fire_listener_event(req)[0]


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
    out = {r["job"]: StatusRow(r["job"], r["tbl"]) for r in db.rows("SELECT * FROM jobs ORDER BY job")}
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


@dataclass
class RejectedEvent:
    event_id: int
    event_type: str
    topic: str
    error: str


def rejected(state: str, limit: int = 100) -> list[RejectedEvent]:
    """The newest trigger messages (up to `limit`) the runner could not read, or read only in part, with why."""
    db = StateDB(state)
    return [RejectedEvent(r["event_id"], r["event_type"] or "", r["topic"] or "", r["error"])
            for r in db.rows("SELECT event_id, event_type, topic, error FROM seen WHERE error IS NOT NULL "
                             "ORDER BY event_id DESC LIMIT ?", (limit,))]
