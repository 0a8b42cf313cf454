"""The reference: the real Apache Hive 2.3.10 metastore (from the pyspark wheel), started once per session.

`../shared/reference-hms/start.sh` runs it on loopback with Derby and a notification listener that
writes Hive's own JSON messages; see its README. Tests use it to compare behaviour call by call.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT, _unavailable, free_port

SCRIPTS = ROOT.parent / "shared" / "reference-hms"


@dataclass
class Reference:
    port: int
    dir: Path

    @property
    def warehouse(self) -> Path:
        return self.dir / "warehouse"


def start_reference(workdir: Path) -> Reference:
    if not (SCRIPTS / "start.sh").exists() or shutil.which("java") is None or shutil.which("javac") is None:
        _unavailable("the reference Hive metastore (needs ../shared/reference-hms and Java 17)")
    port = free_port()
    env = dict(os.environ, PYTHON=sys.executable, PORT=str(port), DIR=str(workdir))
    r = subprocess.run(["bash", str(SCRIPTS / "start.sh"), "--fresh"], env=env, capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        stop_reference(workdir)
        pytest.fail(f"the reference metastore did not start:\n{r.stdout}\n{r.stderr}")
    return Reference(port, Path(workdir).resolve())


def stop_reference(workdir: Path) -> None:
    subprocess.run(["bash", str(SCRIPTS / "stop.sh")], env=dict(os.environ, DIR=str(workdir)),
                   capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    workdir = tmp_path_factory.mktemp("reference-hms")
    ref = start_reference(workdir)
    try:
        yield ref
    finally:
        stop_reference(workdir)
