"""The benchmark's chart (bench/chart.py): a PNG of the factors against the targets, and none without a reference."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from chart import factor, write_chart  # noqa: E402


def _row(id_: str, better: str, ours: dict[str, float], ref: float | None) -> dict:
    return {"id": id_, "label": id_.replace("_", " "), "unit": "calls/s" if better == "higher" else "ms",
            "better": better, "ours": ours, "reference": ref}


def test_factor_is_times_better_either_way() -> None:
    assert factor(100.0, 10.0, "higher") == 10.0
    assert factor(2.0, 20.0, "lower") == 10.0
    assert factor(5.0, 10.0, "higher") == 0.5  # worse than the reference
    assert factor(None, 10.0, "higher") is None and factor(1.0, 0.0, "lower") is None


def test_chart_written_as_png(tmp_path: Path) -> None:
    rows = [_row("get_table_1", "higher", {"sqlite": 9000.0, "postgres": 1800.0}, 850.0),
            _row("create_drop", "higher", {"sqlite": 740.0, "postgres": None}, 96.0),  # a missing figure
            _row("rss", "lower", {"sqlite": 180.0, "postgres": 175.0}, 840.0)]
    out = tmp_path / "results.png"
    assert write_chart(rows, {"finished": "2026-11-24T15:36:03+00:00", "command": "python bench/run.py"}, out)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_no_chart_without_reference(tmp_path: Path) -> None:
    rows = [_row("get_table_1", "higher", {"sqlite": 9000.0}, None)]
    assert write_chart(rows, {}, tmp_path / "results.png") is False
    assert not (tmp_path / "results.png").exists()


def test_every_row_of_the_bench_draws(tmp_path: Path) -> None:
    """The rows bench/run.py reports (statistics, get_partition_values, get_partitions_by_expr included), through
    its build_rows, on two stores with a reference each."""
    import run

    ids = [r.id for r in run.rows_for(run.FULL)]
    assert {"get_partition_values", "get_partitions_by_expr", "get_partitions_by_expr_or"} <= set(ids)
    ours = {"sqlite": {i: 2.0 + k for k, i in enumerate(ids)}, "postgres": {i: 3.0 + k for k, i in enumerate(ids)}}
    refs = {"derby": {i: 20.0 + k for k, i in enumerate(ids)}, "postgres": {i: 9.0 + k for k, i in enumerate(ids)}}
    rows = run.build_rows(run.FULL, ours, refs)
    assert [r["id"] for r in rows] == ids and all(r["reference"] and r["ratio"]["sqlite"] for r in rows)
    out = tmp_path / "results.png"
    assert write_chart(rows, {"finished": "2026-11-28T10:00:00+00:00", "command": "python bench/run.py"}, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
