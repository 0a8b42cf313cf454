"""`metastore pipeline status` and the pipeline's state file, without Spark or a server (fast)."""

from __future__ import annotations

import time
from pathlib import Path

from click.testing import CliRunner

from metastore.cli import main
from metastore.pipeline import Pipeline, rejected, status


def test_status_lists_processed_pending_and_failed(tmp_path: Path) -> None:
    state = str(tmp_path / "state.sqlite")
    pipe = Pipeline("thrift://127.0.0.1:1", state, name="t")
    pipe.on_partition("sales.orders", name="revenue")(lambda ctx: None)
    pipe.on_partition("sales.orders", name="idle")(lambda ctx: None)
    now = time.time()
    with pipe.db.connect() as c:
        rows = (("day=1", "done", None), ("day=2", "pending", None), ("day=3", "failed", "ValueError: x"))
        for part, st, err in rows:
            c.execute("INSERT INTO work(job, part, tbl, status, event_id, runs, last_error, updated) "
                      "VALUES ('revenue', ?, 'sales.orders', ?, 1, ?, ?, ?)", (part, st, int(st == "done"), err, now))
    rows = {r.job: r for r in status(state)}
    assert rows["revenue"].done == ["day=1"] and rows["revenue"].pending == ["day=2"]
    assert rows["revenue"].failed == [("day=3", "ValueError: x")] and rows["idle"].done == []
    res = CliRunner().invoke(main, ["pipeline", "status", "--state", state])
    assert res.exit_code == 0, res.output
    assert "revenue" in res.output and "day=2" in res.output and "ValueError: x" in res.output
    res = CliRunner().invoke(main, ["pipeline", "status", "--state", str(tmp_path / "missing.sqlite")])
    assert res.exit_code != 0 and "no pipeline state" in res.output


def test_status_lists_rejected_trigger_messages(tmp_path: Path) -> None:
    state = str(tmp_path / "state.sqlite")
    pipe = Pipeline("thrift://127.0.0.1:1", state, name="t")
    pipe.on_partition("sales.orders", name="revenue")(lambda ctx: None)
    res = CliRunner().invoke(main, ["pipeline", "status", "--state", state])
    assert res.exit_code == 0, res.output
    assert "rejected trigger messages" not in res.output  # nothing rejected: no second table

    # what the runner records for a message it could not read (Runner._on_message), one read in full beside them
    seen = ((7, "hive.sales.orders", "ADD_PARTITION", "not a json message"),
            (9, "hive.sales.orders", "INSERT", "unreadable partition name [bold]x[/bold]"),
            (8, "hive.sales.orders", "ADD_PARTITION", None))
    with pipe.db.connect() as c:
        for event_id, topic, kind, error in seen:
            c.execute("INSERT INTO seen(event_id, topic, event_type, tbl, partitions, received, error) "
                      "VALUES (?, ?, ?, 'sales.orders', '[]', ?, ?)", (event_id, topic, kind, time.time(), error))
    assert [(r.event_id, r.error) for r in rejected(state)] == [
        (9, "unreadable partition name [bold]x[/bold]"), (7, "not a json message")]
    res = CliRunner().invoke(main, ["pipeline", "status", "--state", state])
    assert res.exit_code == 0, res.output
    out = res.output[res.output.index("rejected trigger messages"):]
    lines = [line for line in out.splitlines() if "hive.sales.orders" in line]
    # newest first, each with its id, type, topic and error; the error's brackets printed as written
    assert len(lines) == 2 and " 9 " in lines[0] and "INSERT" in lines[0] and " 7 " in lines[1], out
    assert "ADD_PARTITION" in lines[1] and "not a json message" in lines[1], out
    assert "[bold]x[/bold]" in out and " 8 " not in out, out
