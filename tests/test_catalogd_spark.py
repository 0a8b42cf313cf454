"""Acceptance 4 of catalogd: Spark (its built-in Hive 2.3 client) with catalogd's Thrift port as its metastore
URI runs the whole Spark workload of test_spark.py (DDL, DML, pruning, statistics, views, functions, a second
session) with the same results, statement by statement, as on Spark's embedded metastore; reads were served
from catalogd's cache."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from stores import sqlite_only  # noqa: F401  (SQLite only: catalogd's part; Spark on each store is test_spark's)
from test_spark import PRUNED, _differences, _java, reference_steps, run_workload  # noqa: F401 - the fixture

from conftest import Database, Server, free_port

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.timeout(3600)]


@pytest.fixture
def server(database: Database, tmp_path: Path):  # type: ignore[no-untyped-def]
    """One metastore on each store backend; catalogd reaches it through Thrift only."""
    work = tmp_path / "metastore"
    work.mkdir()
    srv = Server(database, work).start()
    yield srv
    srv.stop()


def test_spark_through_catalogd(server: Server, reference_steps, tmp_path: Path) -> None:  # noqa: F811
    _java()
    port, http = free_port(), free_port()
    log = open(tmp_path / "catalogd.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "metastore.cli", "catalogd", "--metastore", server.uri,
                             "--port", str(port), "--http-port", str(http), "--hierarchical"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{http}/status", timeout=2):
                    break
            except OSError:
                assert proc.poll() is None and time.time() < deadline, (tmp_path / "catalogd.log").read_text()
                time.sleep(0.2)
        got = {phase: run_workload(phase, tmp_path, server.warehouse, f"thrift://127.0.0.1:{port}")
               for phase in ("write", "read")}
        assert proc.poll() is None, (tmp_path / "catalogd.log").read_text()[-3000:]
        with urllib.request.urlopen(f"http://127.0.0.1:{http}/status", timeout=10) as r:
            status = json.loads(r.read())
    finally:
        proc.terminate()
        proc.wait(15)
        log.close()
    problems = []
    for phase in ("write", "read"):
        problems += [f"[{phase}] {d}" for d in _differences(reference_steps[phase], got[phase])]
    assert not problems, "results through catalogd differ from Spark's embedded metastore:\n" + "\n".join(problems)
    steps = {s["step"]: s for s in got["write"]}
    for name, expected in PRUNED.items():
        assert steps[name]["scan"]["partitions_fetched"] == expected, (name, steps[name]["scan"])
    front, p = status["front"], status["processor"]
    assert front["cache_hits"] > 50, front
    assert p["events_failed"] == 0 and p["events_applied"] > 20, p
