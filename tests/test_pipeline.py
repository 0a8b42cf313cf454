"""metastore.pipeline against a real `metastore serve` (on each store backend) and real Spark, in subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Server

pytestmark = pytest.mark.slow

WORKLOAD = Path(__file__).resolve().parent / "pipeline_workload.py"


@pytest.fixture(scope="module")
def spark_server(server: Server) -> Server:
    """The module's `metastore serve` (one per backend), once Spark can run here."""
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    pytest.importorskip("pyspark")
    return server


def workload(server: Server, phase: str, workdir: Path, expect_exit: int = 0) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / f"{phase}.json"
    cmd = [sys.executable, str(WORKLOAD), "--phase", phase, "--uri", server.uri, "--warehouse",
           str(server.warehouse), "--state", str(workdir / "state.sqlite"), "--out", str(out)]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    with open(workdir / f"{phase}.log", "wb") as log:
        proc = subprocess.run(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=900)
    text = (workdir / f"{phase}.log").read_text(errors="replace")[-4000:]
    assert proc.returncode == expect_exit, f"{phase}: exit {proc.returncode}\n{text}"
    return json.loads(out.read_text()) if out.exists() else {}


def test_spark_partition_triggers_job_and_failures_do_not_block(spark_server: Server, tmp_path: Path) -> None:
    r = workload(spark_server, "trigger", tmp_path)
    # partitions added by plain Spark SQL ran the downstream job, which wrote its output partition
    assert r["out"]["d1"] == [3, 6]
    # the flaky day failed once, was retried and succeeded
    assert r["out"]["flaky"] == [1, 10] and r["calls"]["flaky"] == 2
    # the bad day was tried max_attempts times, then reported failed with its error; the others went on
    assert r["calls"]["bad"] == 3 and "bad" not in r["out"]
    assert [p for p, _ in r["failed"]] == ["day=bad"] and "ValueError: bad day" in r["failed"][0][1]
    assert sorted(r["done"]) == ["day=d1", "day=flaky"] and r["pending"] == []


def test_runner_killed_mid_run_resumes_exactly(spark_server: Server, tmp_path: Path) -> None:
    workload(spark_server, "crash", tmp_path, expect_exit=9)
    r = workload(spark_server, "resume", tmp_path)
    assert r["pending"] == 0 and r["failed"] == 0
    assert len(r["rows"]) == 8 and all(row["status"] == "done" and row["runs"] == 1 for row in r["rows"])
    # the job that died after writing its output ran again (a second attempt); every other ran once
    assert [row["job"] for row in r["rows"] if row["attempts"] == 2] == ["daily_customer_summary"]
    assert sum(row["attempts"] for row in r["rows"]) == 9
    # outputs complete and equal to plain Python: the partition re-run after the crash was overwritten, not added
    assert r["cat_ok"] and r["cust_ok"]

