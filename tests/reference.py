"""The reference: the real Apache Hive 2.3.10 metastore (from the pyspark wheel), started once per session.

`../shared/reference-hms/start.sh` runs it on loopback with Derby and a notification listener that
writes Hive's own JSON messages; see its README. Tests use it to compare behaviour call by call.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from conftest import ROOT, Client, _unavailable, free_port, unique

_R = TypeVar("_R")

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
    # Hive's RetryingHMSHandler retries a call failing in the database layer 10 times, 2 s apart (a too-long name,
    # a duplicate column: 20 s each, the same error in the end); the metastore reads hivemetastore-site.xml
    # beside start.sh's hive-site.xml, so one retry is configured there (DIR is new: no --fresh, which wipes it)
    conf = Path(workdir) / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "hivemetastore-site.xml").write_text(
        "<configuration>\n  <property><name>hive.hmshandler.retry.attempts</name><value>1</value></property>\n"
        "</configuration>\n")
    r = subprocess.run(["bash", str(SCRIPTS / "start.sh")], env=env, capture_output=True, text=True, timeout=300)
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


@contextmanager
def connected(port: int) -> Iterator[Client]:
    """conftest's Apache Thrift client on `port`, closed after."""
    c = Client(port)
    try:
        yield c
    finally:
        c.close()


def made_on_both(ports: tuple[int, int], prefix: str, make: Callable[[Client, str], None]
                 ) -> Iterator[tuple[int, int, str]]:
    """For a module fixture: (our port, the reference's port, a fresh database that `make(client, db)` filled on
    both), the database dropped on both after."""
    db = unique(prefix)
    for port in ports:
        with connected(port) as c:
            make(c, db)
    yield ports[0], ports[1], db
    for port in ports:
        with connected(port) as c:
            c.drop_database(db, True, True)


def scripted(port: int, prefix: str, script: Callable[[Any, str], _R]) -> Iterator[_R]:
    """For a module fixture: what `script(client, db)` recorded, run once through the typed client on `port` in a
    fresh database named after `prefix`."""
    from metastore.thrift.client import MetastoreClient

    with MetastoreClient(f"thrift://127.0.0.1:{port}") as c:
        yield script(c, unique(prefix))


class Steps:
    """Records each step's outcome on one server (`outcome(call)`: the answer or the error, in the form two servers'
    are compared), keyed by the step's label."""

    def __init__(self, c: Any, outcome: Callable[[Callable[[], Any]], Any]) -> None:
        self.c, self.outcome = c, outcome
        self.steps: dict[str, Any] = {}

    def __call__(self, label: str, fn: str, *args: Any) -> Any:
        assert label not in self.steps, label
        self.steps[label] = self.outcome(lambda: self.c.forward(fn, *args))
        return self.steps[label]


def run_fixtures(prefix: str, script: Callable[[Any, str], _R]) -> tuple[Any, Any]:
    """The module fixtures (reference_run, our_run): `script(client, db)` run once on the reference and once on
    our server, each in a fresh database (a test module assigns both, and imports the `reference` fixture)."""

    @pytest.fixture(scope="module")
    def reference_run(reference: Reference) -> Iterator[_R]:
        yield from scripted(reference.port, prefix, script)

    @pytest.fixture(scope="module")
    def our_run(server: Any) -> Iterator[_R]:
        yield from scripted(server.port, prefix, script)

    return reference_run, our_run


def struct_fields(v: Any, skip: Collection[str] = ()) -> Iterator[tuple[str, Any]]:
    """The fields of a Thrift struct that are set, in field order, those named in `skip` left out (to compare two
    servers' answers field by field)."""
    for spec in v.thrift_spec.values():
        name = spec[1]
        x = getattr(v, name)
        if name not in skip and x is not None:
            yield name, x


def text_storage(cols: list[tuple[str, str]]) -> Any:
    """A text table's storage descriptor with these (name, type) columns, as the typed client's struct."""
    from metastore.thrift import hms

    return hms.StorageDescriptor(cols=[hms.FieldSchema(name=n, type=t, comment=None) for n, t in cols],
                                 location=None, inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                                 outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                                 compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
                                 serdeInfo=hms.SerDeInfo(
                                     serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                                     parameters={}))
