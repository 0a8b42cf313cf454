"""Iceberg tables through PyIceberg's HiveCatalog on `metastore serve`: the table life cycle, and commits of
concurrent writer processes serialized by the metastore's locks (lock -> check_lock -> alter_table -> unlock),
including a writer killed while it holds the lock (released after the lock timeout)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Client, Database, Server, unique

pytest.importorskip("pyiceberg.catalog.hive")
pa = pytest.importorskip("pyarrow")

from hive_metastore.ttypes import ShowLocksRequest  # noqa: E402
from pyiceberg.catalog.hive import HiveCatalog  # noqa: E402

pytestmark = pytest.mark.slow

TIMEOUT = 3  # seconds: the servers' lock timeout here
WRITERS = int(os.environ.get("ICEBERG_WRITERS", "8"))
APPENDS = int(os.environ.get("ICEBERG_APPENDS", "20"))
WRITER = str(Path(__file__).with_name("iceberg_writer.py"))


@pytest.fixture(scope="module")
def ice_server(database: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("METASTORE_TXN_TIMEOUT", f"{TIMEOUT}s")
        srv = Server(database, tmp_path_factory.mktemp("ice")).start()
    yield srv
    srv.stop()


def catalog(srv: Server) -> HiveCatalog:
    return HiveCatalog("hive", uri=srv.uri, warehouse="file://" + str(srv.warehouse))


def locks(srv: Server, db: str) -> list:  # type: ignore[type-arg]
    c = Client(srv.port)
    try:
        return c.show_locks(ShowLocksRequest(dbname=db)).locks or []
    finally:
        c.close()


SCHEMA = pa.schema([pa.field("writer", pa.int64()), pa.field("seq", pa.int64())])


def test_table_life_cycle(ice_server: Server) -> None:
    cat = catalog(ice_server)
    ns = unique("ice")
    cat.create_namespace(ns)
    t = cat.create_table(f"{ns}.events", schema=SCHEMA)
    for i in range(2):
        t.append(pa.table({"writer": [0], "seq": [i]}, schema=SCHEMA))
    t = cat.load_table(f"{ns}.events")
    assert len(t.snapshots()) == 2
    assert sorted(t.scan().to_arrow().column("seq").to_pylist()) == [0, 1]
    with t.update_schema() as u:
        u.add_column("note", pyiceberg_string())
    t = cat.load_table(f"{ns}.events")
    assert [f.name for f in t.schema().fields] == ["writer", "seq", "note"]
    c = Client(ice_server.port)
    try:
        cols = [f.name for f in c.get_table(ns, "events").sd.cols]
    finally:
        c.close()
    assert cols == ["writer", "seq", "note"]
    cat.rename_table(f"{ns}.events", f"{ns}.renamed")
    assert [i[1] for i in cat.list_tables(ns)] == ["renamed"]
    assert len(cat.load_table(f"{ns}.renamed").snapshots()) == 2
    cat.drop_table(f"{ns}.renamed")
    assert cat.list_tables(ns) == []
    cat.drop_namespace(ns)
    assert locks(ice_server, ns) == []


def pyiceberg_string():  # type: ignore[no-untyped-def]
    from pyiceberg.types import StringType
    return StringType()


def writer(srv: Server, ident: str, n: int, count: int, hang: bool = False) -> subprocess.Popen[str]:
    cmd = [sys.executable, WRITER, srv.uri, "file://" + str(srv.warehouse), ident, str(n), str(count)]
    return subprocess.Popen(cmd + (["hang"] if hang else []), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_concurrent_writers(ice_server: Server) -> None:
    cat = catalog(ice_server)
    ns = unique("ice")
    cat.create_namespace(ns)
    cat.create_table(f"{ns}.t", schema=SCHEMA)
    t0 = time.time()
    procs = [writer(ice_server, f"{ns}.t", i, APPENDS) for i in range(WRITERS)]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=600)
            assert p.returncode == 0, err[-3000:]
            outs.append(out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    elapsed = time.time() - t0
    retries = sum(int(line.split()[1]) for o in outs for line in o.splitlines() if line.startswith("retries"))
    t = cat.load_table(f"{ns}.t")
    rows = t.scan().to_arrow()
    got = sorted(zip(rows.column("writer").to_pylist(), rows.column("seq").to_pylist()))
    assert got == sorted((w, s) for w in range(WRITERS) for s in range(APPENDS))  # no lost commit
    assert len(t.snapshots()) == WRITERS * APPENDS
    assert locks(ice_server, ns) == []
    print(f"\n{WRITERS} writers x {APPENDS} appends: {elapsed:.1f} s, "
          f"{WRITERS * APPENDS / elapsed:.1f} commits/s (incl. process start), {retries} retried commits")


def test_killed_lock_holder(ice_server: Server) -> None:
    cat = catalog(ice_server)
    ns = unique("ice")
    cat.create_namespace(ns)
    cat.create_table(f"{ns}.t", schema=SCHEMA)
    holder = writer(ice_server, f"{ns}.t", 99, 1, hang=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding", holder.stderr.read() if holder.stderr else ""
        assert [x.state for x in locks(ice_server, ns)] == [1]
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        killed = time.time()
        p = writer(ice_server, f"{ns}.t", 1, 1)
        out, err = p.communicate(timeout=120)
        recovered = time.time() - killed
        assert p.returncode == 0, err[-3000:]
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    t = cat.load_table(f"{ns}.t")
    assert len(t.snapshots()) == 1
    assert locks(ice_server, ns) == []
    assert recovered < TIMEOUT + 10
    print(f"\nkilled lock holder: the next commit after {recovered:.1f} s (lock timeout {TIMEOUT} s)")
