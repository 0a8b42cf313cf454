"""Smoke test of the benchmark: `bench/run.py --quick --no-reference` runs and reports every row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ROWS = ["get_table_1", "get_table_1_p50", "get_table_8", "create_drop", "add_partitions", "get_partitions",
        "get_partitions_by_filter", "get_partition_values", "get_partitions_by_expr", "get_partitions_by_expr_or",
        "set_aggr_stats_for", "update_partition_column_statistics", "get_aggr_stats_for",
        "get_partitions_statistics_req", "get_table_statistics_req", "rss"]


def test_expressions_are_hives_captured_bytes() -> None:
    """bench/hive_expr.txt holds lines of tests/hive_expr_captured.txt, and each expression selects, on the bench's
    table, the partitions run.EXPR_SELECTS says (read here with the server's reader)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import run

    from metastore.core.filters import Compare, Or
    from metastore.core.hive_expr import decode

    captured = (ROOT / "tests" / "hive_expr_captured.txt").read_text(encoding="utf-8").splitlines()
    bench = [x for x in (ROOT / "bench" / "hive_expr.txt").read_text(encoding="utf-8").splitlines()
             if x and not x.startswith("#")]
    assert bench and set(bench) <= set(captured)
    exprs = run.hive_exprs()
    assert set(exprs) == set(run.EXPR_SELECTS) == {run.EXPR_DAY, run.EXPR_OR}
    assert decode(exprs[run.EXPR_DAY]) == Compare("ds", "=", "2024-01-01")
    assert decode(exprs[run.EXPR_OR]) == Or((Compare("ds", "=", "a"), Compare("hr", "=", 2)))
    for p in (run.QUICK, run.FULL):
        assert run.expr_count(run.EXPR_DAY, p.partitions) * 100 == p.partitions
        assert run.expr_count(run.EXPR_OR, p.partitions) == 100


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_bench_quick(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--no-reference",
                        "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=540)
    assert r.returncode == 0, f"stdout:\n{r.stdout[-4000:]}\nstderr:\n{r.stderr[-4000:]}"
    data = json.loads((out / "results.json").read_text())
    assert [row["id"] for row in data["rows"]] == ROWS
    for row in data["rows"]:
        value = row["ours"]["sqlite"]
        assert isinstance(value, (int, float)) and value > 0, row
        assert row["reference"] is None and row["better"] in ("higher", "lower") and row["unit"], row
    assert data["meta"]["quick"] is True and not data["meta"]["failures"]
    details = data["targets"]["ours:sqlite"]
    assert details["get_partitions"]["partitions"] == data["meta"]["params"]["partitions"]
    assert details["get_partitions_by_filter"]["partitions"] * 100 == data["meta"]["params"]["partitions"]
    assert details["get_partition_values"]["partitions"] == data["meta"]["params"]["partitions"]
    assert details["get_partitions_by_expr"]["partitions"] * 100 == data["meta"]["params"]["partitions"]
    assert details["get_partitions_by_expr_or"]["partitions"] == 100  # hr = 2 of each of the 100 days
    md = (out / "results.md").read_text()
    assert "| benchmark | ours | reference | ratio (ours/ref) | better |" in md
    assert md.count("\n| ") == len(ROWS) + 1
    assert "| benchmark |" in r.stdout  # the table is printed too
