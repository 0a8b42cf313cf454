"""metastore.pipeline with partition values that need escaping, hostile messages, crashed jobs and state files of
the earlier version (issue 19). Jobs are plain Python (no Spark): what is tested is the runner and its state
file, against a real `metastore serve` (SQLite: the pipeline reads the log over Thrift, whatever the store)."""

from __future__ import annotations

import base64
import copy
import json
import logging
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from metastore.core.names import make_part_name
from metastore.notify.subscriber import Message as BusMessage
from metastore.pipeline import JobContext, Pipeline, Runner, notify_insert, rejected, status
from metastore.pipeline.core import _MAX_ERROR, _one_line, parse_part, part_key
from metastore.thrift import hms
from metastore.thrift.client import MetastoreClient

from conftest import Server, unique

VALUES = ["eu/west", "a=b", "50%", "new york", "zürich"]


@pytest.fixture(scope="module")
def backend() -> str:
    return "sqlite"  # the runner talks to the metastore over Thrift only: one store is enough


@pytest.fixture
def ms(server: Server) -> Any:
    with MetastoreClient(server.uri) as c:
        yield c


def _cols(*names: str) -> list[Any]:
    return [hms.FieldSchema(name=n, type="string", comment="") for n in names]


def make_table(ms: MetastoreClient, keys: tuple[str, ...]) -> tuple[str, str]:
    db, name = unique("p"), "src"
    ms.create_database(hms.Database(name=db, description="", parameters={}))
    sd = hms.StorageDescriptor(cols=_cols("v"), location=None, inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                               compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
                               serdeInfo=hms.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy."
                                                       "LazySimpleSerDe", parameters={}))
    ms.create_table(hms.Table(tableName=name, dbName=db, owner="etl", sd=sd, partitionKeys=_cols(*keys),
                              parameters={}, tableType="MANAGED_TABLE"))
    return db, name


def add_parts(ms: MetastoreClient, db: str, name: str, *values: list[str]) -> None:
    t = ms.get_table(db, name)
    parts = [hms.Partition(values=v, dbName=db, tableName=name, sd=copy.deepcopy(t.sd), parameters={}) for v in values]
    for p in parts:
        p.sd.location = None
    ms.add_partitions(parts)


def test_partition_values_that_need_escaping_run_their_jobs(server: Server, ms: MetastoreClient,
                                                             tmp_path: Path) -> None:
    db, name = make_table(ms, ("region", "day"))
    pipe = Pipeline(server.uri, str(tmp_path / "state.sqlite"), name="esc", retry_backoff=0.05)
    seen: list[tuple[str, dict[str, str], int]] = []

    @pipe.on_partition(f"{db}.{name}", name="record", max_attempts=2)
    def record(ctx: JobContext) -> None:
        seen.append((ctx.job, dict(ctx.partition), ctx.attempt))
        if ctx.partition["region"] == "50%" and ctx.attempt == 1:
            raise RuntimeError("transient")  # a retry of an escaped name finds its row again

    runner = Runner(pipe, None, start="latest")
    try:
        add_parts(ms, db, name, *([v, "2024-01-01"] for v in VALUES))
        runner.run(until_idle=True)
        first = [(p, a) for _, p, a in seen]
        # a restatement of one partition (INSERT event, values given by key) re-runs that partition alone
        notify_insert(server.uri, f"{db}.{name}", {"region": "eu/west", "day": "2024-01-01"})
        runner.run(until_idle=True)
    finally:
        runner.close()
    expected = [{"region": v, "day": "2024-01-01"} for v in VALUES]
    assert sorted(map(str, (p for p, a in first if a == 1))) == sorted(map(str, expected))
    assert ({"region": "50%", "day": "2024-01-01"}, 2) in first and len(first) == len(VALUES) + 1
    assert seen[-1][1] == {"region": "eu/west", "day": "2024-01-01"} and len(seen) == len(VALUES) + 2
    st = status(str(tmp_path / "state.sqlite"))[0]
    names = sorted(make_part_name(["region", "day"], [v, "2024-01-01"]) for v in VALUES)
    assert sorted(st.done) == names and st.pending == [] and st.failed == []
    assert "region=eu%2Fwest/day=2024-01-01" in st.done  # Hive's name, as the metastore's own
    assert sorted(ms.get_partition_names(db, name)) == names
    rows = pipe.db.rows("SELECT part, runs, status FROM work")
    assert {r["part"]: r["runs"] for r in rows}["region=eu%2Fwest/day=2024-01-01"] == 2


def test_part_key_round_trips_and_is_unchanged_for_plain_values() -> None:
    for v in [*VALUES, "plain", "2024-01-01", "ä/ö=ü%20", "__HIVE_DEFAULT_PARTITION__"]:
        p = {"k": v, "day": "d1"}
        assert parse_part(part_key(p)) == p
    # values without special characters have the same name as the earlier, unescaped, version wrote
    assert part_key({"day": "2024-01-01", "hr": "10"}) == "day=2024-01-01/hr=10"


def _legacy_state(path: Path, table: str) -> None:
    """A state file as the earlier version left it: raw partition names, no `error` column, no meta marker."""
    c = sqlite3.connect(path)
    c.executescript("""
        CREATE TABLE work (job TEXT NOT NULL, part TEXT NOT NULL, tbl TEXT NOT NULL, status TEXT NOT NULL,
            event_id INTEGER NOT NULL, done_event_id INTEGER, attempts INTEGER NOT NULL DEFAULT 0,
            runs INTEGER NOT NULL DEFAULT 0, last_error TEXT, not_before REAL NOT NULL DEFAULT 0,
            updated REAL NOT NULL, seconds REAL, PRIMARY KEY (job, part));
        CREATE TABLE runs (job TEXT NOT NULL, part TEXT NOT NULL, event_id INTEGER NOT NULL,
            attempt INTEGER NOT NULL, started REAL NOT NULL, finished REAL, ok INTEGER, error TEXT);
        CREATE TABLE jobs (job TEXT PRIMARY KEY, tbl TEXT NOT NULL, max_attempts INTEGER NOT NULL);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE seen (event_id INTEGER PRIMARY KEY, topic TEXT, event_type TEXT, tbl TEXT,
            partitions TEXT, received REAL);
    """)
    now = time.time()
    parts = [{"region": "eu/west", "day": "d1"}, {"region": "a=b", "day": "d1"}, {"region": "x/y=z", "day": "d1"}]
    c.execute("INSERT INTO seen VALUES (1, 't', 'ADD_PARTITION', ?, ?, ?)", (table, json.dumps(parts), now))
    rows = [  # (raw name, status, event) -- the poisoned row that crashed every start is pending
        ("region=eu/west/day=d1", "pending", 1), ("region=a=b/day=d1", "done", 1),
        ("region=x/y=z/day=d1", "pending", 1),  # ambiguous without `seen`: y=z could be a key
        ("region=50%/day=d1", "done", 7), ("region=plain/day=d1", "done", 7),  # event 7 not in `seen`
        ("region=p/q/day=d1", "failed", 7)]
    for part, st, ev in rows:
        c.execute("INSERT INTO work(job, part, tbl, status, event_id, runs, updated) "
                  "VALUES ('record', ?, ?, ?, ?, ?, ?)", (part, table, st, ev, int(st == "done"), now))
    c.execute("INSERT INTO runs VALUES ('record', 'region=eu/west/day=d1', 1, 1, ?, NULL, NULL, NULL)", (now,))
    c.commit()
    c.close()


def test_state_file_of_the_earlier_version_is_renamed_and_its_poisoned_row_runs(server: Server, ms: MetastoreClient,
                                                                                tmp_path: Path) -> None:
    db, name = make_table(ms, ("region", "day"))
    state = tmp_path / "old.sqlite"
    _legacy_state(state, f"{db}.{name}")
    pipe = Pipeline(server.uri, str(state), name="old")
    got: list[dict[str, str]] = []
    pipe.on_partition(f"{db}.{name}", name="record")(lambda ctx: got.append(dict(ctx.partition)))
    parts = {r["part"]: r["status"] for r in pipe.db.rows("SELECT part, status FROM work")}
    assert parts == {
        "region=eu%2Fwest/day=d1": "pending", "region=a%3Db/day=d1": "done",
        "region=x%2Fy%3Dz/day=d1": "pending",  # from `seen`, the event's own partitions
        "region=50%25/day=d1": "done", "region=plain/day=d1": "done",
        "region=p%2Fq/day=d1": "failed"}  # without its event: a component with no `=` continues the value
    assert [r["part"] for r in pipe.db.rows("SELECT part FROM runs")] == ["region=eu%2Fwest/day=d1"]
    Pipeline(server.uri, str(state), name="old")  # opening again changes nothing
    assert {r["part"] for r in pipe.db.rows("SELECT part FROM work")} == set(parts)
    runner = Runner(pipe, None, start="latest")  # the start that crashed before
    try:
        runner.run(until_idle=True)
    finally:
        runner.close()
    assert sorted(got, key=str) == sorted([{"region": "eu/west", "day": "d1"}, {"region": "x/y=z", "day": "d1"}],
                                          key=str)
    assert pipe.db.rows("SELECT count(*) FROM work WHERE status IN ('pending', 'running')")[0][0] == 0


def _bus(event_id: int, event_type: str, body: Any, fmt: str = "json") -> BusMessage:
    text = body if isinstance(body, str) else json.dumps(body)
    return BusMessage("hcat.x.y", event_id, event_type, text, {"HCAT_MESSAGE_FORMAT": fmt})


def test_hostile_messages_and_failing_jobs_do_not_stop_the_runner(server: Server, ms: MetastoreClient,
                                                                   tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    db, name = make_table(ms, ("day",))
    table = f"{db}.{name}"
    state = str(tmp_path / "state.sqlite")
    pipe = Pipeline(server.uri, state, name="hostile", retry_backoff=0.01)
    calls: list[str] = []

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    @pipe.on_partition(table, name="record", max_attempts=2)
    def record(ctx: JobContext) -> None:
        day = ctx.partition["day"]
        calls.append(day)
        if day == "unprintable":
            raise Unprintable()
        if day == "exits":
            sys.exit(3)

    # a crash (kill -9) left two rows running: one at its last attempt, one with attempts left
    now = time.time()
    with pipe.db.connect() as c:
        for part, attempts in (("day=killer", 2), ("day=again", 1)):
            c.execute("INSERT INTO work(job, part, tbl, status, event_id, attempts, updated) "
                      "VALUES ('record', ?, ?, 'running', 1, ?, ?)", (part, table, attempts, now))
            c.execute("INSERT INTO runs(job, part, event_id, attempt, started) VALUES ('record', ?, 1, ?, ?)",
                      (part, attempts, now))
        c.execute("INSERT INTO work(job, part, tbl, status, event_id, updated) "
                  "VALUES ('record', 'day', ?, 'pending', 1, ?)", (table, now))  # a name no version reads
    runner = Runner(pipe, None, start="latest")
    try:
        hostile = [
            _bus(101, "ADD_PARTITION", "not json {"),
            _bus(102, "ADD_PARTITION", [1, 2]),
            _bus(103, "ADD_PARTITION", {"db": db, "table": name, "partitions": 5}),
            _bus(104, "ADD_PARTITION", {"db": db, "table": name, "partitions": ["x", None, {"": "v"},
                                                                                  {"day": "ok/1"}]}),
            _bus(105, "INSERT", {"db": db, "table": name, "partKeyVals": "day=x"}),
            _bus(106, "INSERT", {"table": name}),  # no db, no partition: nothing to run
            _bus(107, "ADD_PARTITION", base64.b64encode(b"not gzip").decode(), fmt="gzip(json)"),
            _bus(108, "ADD_PARTITION", "{}", fmt="no-such-format"),
            _bus(109, "SOMETHING_NEWER", "\x00"),
            _bus(110, "INSERT", {"db": db, "table": name, "partKeyVals": {"day": 7}}),
            _bus(111, "ADD_PARTITION", {"db": db, "table": name,
                                        "partitions": [{"day": "unprintable"}, {"day": "exits"}]}),
        ]
        for m in hostile:
            runner._on_message(m)
        runner.run(until_idle=True)
        assert runner.sub.error is None and runner.sub.running
    finally:
        runner.close()
    assert sorted(calls) == sorted(["again", "ok/1", "7", "unprintable", "unprintable", "exits", "exits"])
    st = status(state)[0]
    assert sorted(st.done) == ["day=7", "day=again", "day=ok%2F1"] and st.pending == []
    failed = dict(st.failed)
    assert set(failed) == {"day=killer", "day", "day=unprintable", "day=exits"}
    assert "stopped during this attempt" in failed["day=killer"] and "unreadable partition name" in failed["day"]
    assert failed["day=unprintable"].startswith("Unprintable") and failed["day=exits"] == "SystemExit: 3"
    errors = {r["event_id"]: r["error"] for r in pipe.db.rows("SELECT event_id, error FROM seen")}
    assert all(errors[i] for i in (101, 102, 103, 104, 105, 107, 108)) and errors[110] is None
    assert 109 not in errors  # not a trigger type: not even recorded
    assert [r.event_id for r in rejected(state)] == [108, 107, 105, 104, 103, 102, 101]
    assert "not a json message" in rejected(state)[-1].error
    # a rejected message's warning is one log line whatever its topic and body hold
    forged = BusMessage("hcat.x\n2026-01-01 ERROR forged", 112, "ADD_PARTITION", "not json {\n", {})
    runner = Runner(pipe, None, start="latest")
    try:
        with caplog.at_level(logging.WARNING, logger="metastore.pipeline"):
            runner._on_message(forged)
    finally:
        runner.close()
    warned = [r.getMessage() for r in caplog.records if "event 112" in r.getMessage()]
    assert len(warned) == 1 and "\n" not in warned[0] and "forged" in warned[0], warned
    assert pipe.db.rows("SELECT count(*) FROM runs WHERE finished IS NULL")[0][0] == 0


def test_log_lines_escape_and_clip_what_messages_and_jobs_chose(server: Server, ms: MetastoreClient, tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """A rejected message's warning and a failed job's warning keep a hostile topic, body or job message on
    their own line, escaped, and bounded (_MAX_ERROR characters a value, escapes included)."""
    assert len(_one_line("\n" * 5000)) == _MAX_ERROR and _one_line("a\x1bb\u2028") == "a\\x1bb\\u2028"
    db, name = make_table(ms, ("day",))
    pipe = Pipeline(server.uri, str(tmp_path / "state.sqlite"), name="loglines", retry_backoff=0.01)

    @pipe.on_partition(f"{db}.{name}", name="record", max_attempts=1)
    def record(ctx: JobContext) -> None:
        raise ValueError(f"bad day {ctx.partition['day']}")

    runner = Runner(pipe, None, start="latest")
    try:
        with caplog.at_level(logging.WARNING, logger="metastore.pipeline"):
            # a topic of 5,000 control characters (each escaped to 4) and a body that is not JSON
            runner._on_message(BusMessage("\x1b" * 5000, 201, "ADD_PARTITION", "not json {", {}))
            runner._on_message(_bus(202, "ADD_PARTITION", {"db": db, "table": name, "partitions": [
                {"day": "x\n2026-01-01 ERROR forged"}]}))
            runner.run(until_idle=True)
    finally:
        runner.close()
    [rejected_line] = [r.getMessage() for r in caplog.records if "event 201" in r.getMessage()]
    assert "\n" not in rejected_line and "\x1b" not in rejected_line, rejected_line[:200]
    assert len(rejected_line) < 2 * _MAX_ERROR, len(rejected_line)  # the topic clipped, escapes included
    [failed] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("job record")]
    first, *frames = failed.split("\n")
    assert "bad day x\\n2026-01-01 ERROR forged" in first, first
    assert frames and not any("forged" in line for line in frames), failed  # the frames name code only
