"""`metastore pipeline status` and the pipeline's state file, without Spark or a server (fast)."""

from __future__ import annotations

import time
from pathlib import Path

from click.testing import CliRunner

from metastore.cli import main
from metastore.pipeline import Pipeline, status


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
