"""Spark (its built-in Hive 2.3 client) against `metastore serve`, compared with Spark's embedded metastore.

tests/spark_workload.py runs a workload of DDL, DML, partition pruning, statistics, views, functions and
DataFrame writes in one Spark process, then a second process (a second session) reads what the first left
and drops it. Each process writes what every step returned as JSON. The same two processes run once per
test session on Spark's own embedded metastore (Hive 2.3.10 on Derby): that is the reference, and every
step against our server must give the same result, statement by statement.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT

WORKLOAD = ROOT / "tests" / "spark_workload.py"

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.timeout(3600)]

# Steps that fail on purpose (both metastores must refuse them the same way). A step that fails in the
# reference and is not listed here means the workload itself is broken.
EXPECTED_ERRORS = {
    "write": {
        "create database again", "create hive table again", "add existing partition", "drop missing partition",
        "select renamed old name", "create view again", "select dropped view", "saveAsTable exists",
        "ctas exists", "create function again", "drop function again", "use dropped function",
        "drop missing table", "drop non-empty database",
        "alter database location",  # Hive 2.3 keeps a database's location, and Spark reports that
    },
    "read": {"function in default", "select from dropped database"},
}
# Pruning steps: (step, partitions the metastore must return).
PRUNED = {
    "prune string equality": 4, "prune int equality": 4, "prune int range": 8, "prune string range": 8,
    "prune in": 8, "prune string in": 8, "prune and or": 4, "prune not equal": 12, "prune nothing": 0,
    "prune with data filter": 4, "select new column": 5, "select repaired partition": 1,
}


def _java() -> None:
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    pytest.importorskip("pyspark")


def run_workload(phase: str, workdir: Path, warehouse: Path, uri: str | None) -> list[dict[str, Any]]:
    """One Spark process (one JVM); returns its steps."""
    workdir.mkdir(parents=True, exist_ok=True)
    out, log = workdir / f"{phase}.json", workdir / f"{phase}.log"
    cmd = [sys.executable, str(WORKLOAD), "--phase", phase, "--warehouse", str(warehouse), "--out", str(out)]
    if uri:
        cmd += ["--uri", uri]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    started = time.time()
    with open(log, "wb") as f:
        proc = subprocess.run(cmd, cwd=workdir, stdout=f, stderr=subprocess.STDOUT, env=env, timeout=1500)
    if not out.exists():
        pytest.fail(f"the Spark workload ({phase}) wrote no results, exit {proc.returncode}:\n"
                    f"{log.read_text(errors='replace')[-4000:]}")
    steps = json.loads(out.read_text())
    crashed = [s for s in steps if s["step"] == "workload crashed"]
    if crashed or proc.returncode != 0:
        pytest.fail(f"the Spark workload ({phase}) crashed, exit {proc.returncode}:\n"
                    f"{crashed[0]['error'] if crashed else log.read_text(errors='replace')[-4000:]}")
    print(f"spark workload {phase} ({'remote' if uri else 'embedded'}): {len(steps)} steps in "
          f"{time.time() - started:.0f} s")
    return steps


@pytest.fixture(scope="session")
def reference_steps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """The workload on Spark's embedded metastore (Derby in the work directory): the expected results."""
    _java()
    work = tmp_path_factory.mktemp("spark-embedded")
    warehouse = work / "warehouse"
    steps = {phase: run_workload(phase, work, warehouse, None) for phase in ("write", "read")}
    for phase, expected in EXPECTED_ERRORS.items():
        failed = {s["step"] for s in steps[phase] if "error" in s}
        assert failed == expected, f"the workload itself misbehaves on the embedded metastore ({phase}): " \
                                   f"unexpected failures {failed - expected}, expected failures that passed " \
                                   f"{expected - failed}"
    return steps


def _differences(expected: list[dict[str, Any]], got: list[dict[str, Any]]) -> list[str]:
    out = []
    for i, (e, g) in enumerate(zip(expected, got)):
        if e == g:
            continue
        lines = [f"step {i} '{e.get('step')}'" + (f": {e['sql']}" if e.get("sql") else "")]
        for k in sorted(set(e) | set(g)):
            ev, gv = e.get(k), g.get(k)
            if ev == gv:
                continue
            if isinstance(ev, list) and isinstance(gv, list):
                lines.append(f"    {k}: only in the reference {json.dumps([x for x in ev if x not in gv])[:2000]}")
                lines.append(f"    {k}: only here          {json.dumps([x for x in gv if x not in ev])[:2000]}")
            elif isinstance(ev, dict) and isinstance(gv, dict):
                lines += _dict_diff(k, ev, gv)
            else:
                lines.append(f"    {k}: reference {json.dumps(ev)[:2000]}")
                lines.append(f"    {k}: here      {json.dumps(gv)[:2000]}")
        out.append("\n".join(lines))
    if len(expected) != len(got):
        out.append(f"{len(got)} steps, the reference has {len(expected)}")
    return out


def _dict_diff(path: str, e: Any, g: Any) -> list[str]:
    if isinstance(e, dict) and isinstance(g, dict):
        lines = []
        for k in sorted(set(e) | set(g)):
            if e.get(k) != g.get(k):
                lines += _dict_diff(f"{path}.{k}", e.get(k), g.get(k))
        return lines
    return [f"    {path}: reference {json.dumps(e)[:1500]}", f"    {path}: here      {json.dumps(g)[:1500]}"]


def test_spark_workload_matches_embedded_metastore(server, reference_steps, tmp_path: Path) -> None:
    _java()
    got = {}
    for phase in ("write", "read"):  # the second session starts after the first one ended
        got[phase] = run_workload(phase, tmp_path, server.warehouse, server.uri)
        assert server.alive(), f"the metastore died:\n{server.log.read_text()[-3000:]}"

    problems = []
    for phase in ("write", "read"):
        diffs = _differences(reference_steps[phase], got[phase])
        problems += [f"[{phase}] {d}" for d in diffs]
    assert not problems, "results differ from Spark's embedded metastore:\n" + "\n".join(problems)

    # The filters were evaluated by the metastore: Spark counts the partitions the metastore returned.
    steps = {s["step"]: s for s in got["write"]}
    for name, expected in PRUNED.items():
        scan = steps[name]["scan"]
        assert scan["partitions_fetched"] == expected, (name, scan)
        assert any(scan["partition_filters"]), (name, scan)
    assert steps["full scan"]["scan"]["partitions_fetched"] == 16
    # The second session saw the first one's tables and data.
    read = {s["step"]: s for s in got["read"]}
    assert ["ws", "events2", False] in read["show tables"]["rows"]
    assert [200, "over", 9.0, None, "2024-01-01", 0] in read["select all"]["rows"]
    assert read["select second insert"]["rows"] == [[900, "second", 9.9, None, "2024-09-09", 9]]
