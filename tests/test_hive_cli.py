"""Hive 2.3.10's own CLI as a client (../shared/hive-cli: its CliDriver from the pyspark wheel, one session, small
jobs in local mode): tests/hive_cli/statements.sql -- database and table DDL of every kind, partitions added,
renamed and dropped by spec and by comparison, DESCRIBE and SHOW of every kind, views, constraints, functions,
INSERT into static and dynamic partitions, queries, ANALYZE and answers from statistics, ACID tables with SHOW
TRANSACTIONS / COMPACT / SHOW COMPACTIONS / SHOW LOCKS, bad statements -- run against our server on every backend
and against a fresh reference metastore; each statement's output (normalized by the runner: paths, times, ids)
must be equal. The client log lines (#log) are not compared: they name Java classes of the server side.

Statements whose output differs on purpose are listed in DIFFERENT with the reason, and expected to differ.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, Server
from reference import Reference, start_reference, stop_reference

pytestmark = pytest.mark.slow

STATEMENTS = ROOT / "tests" / "hive_cli" / "statements.sql"
RUNNER = ROOT.parent / "shared" / "hive-cli" / "run.sh"

# statement text -> why our output differs from the reference's
DIFFERENT = {
    "@error ALTER TABLE part_t ADD PARTITION (ds='2024-01-01', hr=1)":
        "Hive's message quotes the Java dump of the partition struct; ours names the partition",
    "SELECT id FROM part_t WHERE ds LIKE '2024-03%' AND NOT (hr = 2) ORDER BY id":
        "the reference drops the connection reading this expression (its Kryo on Java 17); ours answers",
    "DESCRIBE FORMATTED ext_t":
        "a location given without a scheme is kept in the client's form (Hive qualifies it with file:); after SET "
        "LOCATION, Hive lists the new directory for numFiles/totalSize, ours reads nothing outside its roots",
    "DESCRIBE EXTENDED part_t PARTITION (ds='2024-01-02', hr=1)":
        "a partition carries its catalog (catName:hive), as Hive 3's server fills it in; Hive 2.3's leaves it unset",
    "DESCRIBE FORMATTED part_t PARTITION (ds='2024-03-02', hr=1)":
        "a partition written by a dynamic-partition INSERT keeps its creation time; Hive 2.3's shows 0 (UNKNOWN)",
    "@error ALTER TABLE fk_t DROP CONSTRAINT no_such_constraint":
        "Hive 2.3 fails with an internal error (an undeclared exception); ours answers the declared "
        "NoSuchObjectException naming the constraint",
}


def statements() -> list[str]:
    """The statements of the file, as the runner numbers them (a statement ends with a line ending in ';'); one
    marked `-- @error` as expected to fail starts with "@error "."""
    out: list[str] = []
    cur: list[str] = []
    error = False
    for line in STATEMENTS.read_text(encoding="utf-8").splitlines():
        if not cur and (not line.strip() or line.startswith("--")):
            error = error or line.startswith("-- @error")
            continue
        cur.append(line)
        if line.rstrip().endswith(";"):
            out.append(("@error " if error else "") + " ".join(cur).rstrip().rstrip(";").strip())
            cur, error = [], False
    return out


def _run(uri: str, warehouse: Path, work: Path) -> dict[int, list[str]]:
    if not RUNNER.exists() or shutil.which("java") is None:
        pytest.skip("Hive's CLI runner needs ../shared/hive-cli and Java 17")
    out = work / "out.txt"
    env = dict(os.environ, STATEMENTS=str(STATEMENTS), PYTHON=sys.executable, WAREHOUSE=str(warehouse),
               HIVECLI_WORK=str(work / "run"))
    r = subprocess.run(["bash", str(RUNNER), uri, str(out)], env=env, capture_output=True, text=True, timeout=1800)
    assert out.exists(), f"the Hive CLI runner wrote nothing (exit {r.returncode}):\n{r.stderr[-3000:]}"
    blocks: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in out.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r"=== \[(\d+)\] ", line)
        if m:
            current = blocks.setdefault(int(m.group(1)), [])
        elif current is not None and not line.startswith("#log"):
            current.append(line)
    return blocks


@pytest.fixture(scope="module")
def reference_output(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, list[str]]]:
    workdir = tmp_path_factory.mktemp("hive-cli-reference")
    ref: Reference = start_reference(workdir / "hms")
    try:
        yield _run(f"thrift://127.0.0.1:{ref.port}", ref.warehouse, workdir)
    finally:
        stop_reference(workdir / "hms")


@pytest.fixture(scope="module")
def our_output(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[str]]:
    return _run(f"thrift://127.0.0.1:{server.port}", server.warehouse, tmp_path_factory.mktemp("hive-cli-ours"))


def test_the_file_has_a_hundred_statements() -> None:
    assert len(statements()) >= 100
    assert set(DIFFERENT) <= set(statements())


@pytest.mark.parametrize("n", range(1, len(statements()) + 1))
def test_statement(n: int, reference_output: dict[int, list[str]], our_output: dict[int, list[str]]) -> None:
    text = statements()[n - 1]
    ref, ours = reference_output.get(n), our_output.get(n)
    assert ref is not None, f"the reference run stopped before statement {n}: {text}"
    if text in DIFFERENT:
        assert ours != ref, f"now equal to the reference (remove it from DIFFERENT): {text}"
        return
    assert ours == ref, f"statement {n}: {text}"
