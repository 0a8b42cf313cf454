"""catalogd's Thrift front: reads from the cache (with prioritized loads, filters, sync-to-latest), every other
call passed through to the metastore with its errors; the `metastore catalogd` command and its status."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hive_metastore.ttypes import (
    Database,
    FieldSchema,
    FireEventRequest,
    FireEventRequestData,
    GetTableRequest,
    InsertEventRequestData,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
    Partition,
    Table,
)
from stores import sqlite_only  # noqa: F401  (the `backend` fixture: SQLite only; catalogd's endpoint over Thrift)
from test_thrift_api import sd

from metastore.catalogd.catalog import list_files
from metastore.catalogd.service import CatalogdService
from metastore.core.names import split_part_name

from conftest import Client, Server, free_port, unique


def table(db: str, name: str, part_keys: list[tuple[str, str]] | None = None) -> Table:
    return Table(tableName=name, dbName=db, owner="t", sd=sd(cols=(("a", "int"),)), parameters={},
                 tableType="MANAGED_TABLE", partitionKeys=[FieldSchema(k, t, None) for k, t in (part_keys or [])])


@pytest.fixture(scope="module")
def svc(server: Server) -> Iterator[CatalogdService]:
    s = CatalogdService(server.uri, port=0, http_port=0, blacklist_dbs=["hidden_db"]).start()
    yield s
    s.close()


@pytest.fixture
def cat(svc: CatalogdService) -> Iterator[Client]:
    c = Client(svc.port)
    yield c
    c.close()


def test_reads_come_from_the_cache_and_writes_pass_through(svc: CatalogdService, cat: Client,
                                                           client: Client) -> None:
    db = unique("fr")
    cat.create_database(Database(db, "", None, {"x": "1"}))
    cat.create_table(table(db, "t", [("ds", "string"), ("hr", "int")]))
    parts = [Partition(values=[ds, str(hr)], dbName=db, tableName="t", sd=table(db, "t").sd, parameters={})
             for ds in ("2024-01-01", "2024-01-02") for hr in (1, 2, 10)]
    for p in parts:
        p.sd.location = None
    cat.add_partitions(parts)
    hits = svc.front.hits
    # written through catalogd, then read from its cache at once (the write waited for its events)
    assert cat.get_database(db).parameters == {"x": "1"}
    t = cat.get_table(db, "t")
    assert [k.name for k in t.partitionKeys] == ["ds", "hr"]
    assert cat.get_table_req(GetTableRequest(dbName=db, tblName="t")).table.tableName == "t"
    assert cat.get_all_tables(db) == ["t"] and cat.get_tables(db, "t*|x") == ["t"]
    assert db in cat.get_all_databases()
    names = cat.get_partition_names(db, "t", -1)
    assert names == client.get_partition_names(db, "t", -1) and len(names) == 6
    assert [p.values for p in cat.get_partitions(db, "t", -1)] == [p.values for p in
                                                                   client.get_partitions(db, "t", -1)]
    assert len(cat.get_partitions(db, "t", 2)) == 2
    for f in ("hr > 1", "ds = '2024-01-02' and hr = 10", "hr >= 2 and not ds like '.*01'", "hr in (1, 10)",
              "hr between 2 and 10", "ds > '2024-01-01' or hr = 1"):
        mine = [p.values for p in cat.get_partitions_by_filter(db, "t", f, -1)]
        assert mine == [p.values for p in client.get_partitions_by_filter(db, "t", f, -1)], f
        assert mine, f
    assert [p.values for p in cat.get_partitions_ps(db, "t", ["2024-01-01", ""], -1)] == \
        [p.values for p in client.get_partitions_ps(db, "t", ["2024-01-01", ""], -1)]
    assert cat.get_partition_names_ps(db, "t", ["", "10"], 1) == client.get_partition_names_ps(db, "t", ["", "10"], 1)
    assert len(cat.get_partition_names_ps(db, "t", ["", "10"], -1)) == 2
    assert cat.get_partition(db, "t", ["2024-01-01", "10"]).values == ["2024-01-01", "10"]
    assert cat.get_partition_by_name(db, "t", "ds=2024-01-01/hr=2").values == ["2024-01-01", "2"]
    assert svc.front.hits - hits >= 16
    # more values than keys: not the cache's to judge, the metastore answers
    misses = svc.front.misses
    try:
        theirs: object = client.get_partitions_ps(db, "t", ["2024-01-01", "1", "x"], -1)
    except Exception as e:  # noqa: BLE001 - whatever the metastore says, catalogd says the same
        theirs = type(e)
    try:
        mine: object = cat.get_partitions_ps(db, "t", ["2024-01-01", "1", "x"], -1)
    except Exception as e:  # noqa: BLE001
        mine = type(e)
    assert mine == theirs and svc.front.misses == misses + 1
    # passed through: the metastore's own answers and errors
    with pytest.raises(NoSuchObjectException):
        cat.get_table(db, "missing")
    with pytest.raises(NoSuchObjectException):
        cat.get_partition(db, "t", ["2030-01-01", "1"])
    with pytest.raises(MetaException):
        cat.get_partitions_by_filter(db, "t", "nokey = 1", -1)
    with pytest.raises(InvalidOperationException):
        cat.alter_table(db, "missing", table(db, "missing"))
    assert cat.get_all_functions() is not None
    # a change made behind catalogd's back arrives through the events
    t = client.get_table(db, "t")
    t.parameters = dict(t.parameters, later="1")
    client.alter_table(db, "t", t)
    deadline = time.time() + 10
    while cat.get_table(db, "t").parameters.get("later") != "1":
        assert time.time() < deadline
        time.sleep(0.05)
    cat.drop_table(db, "t", True)
    with pytest.raises(NoSuchObjectException):
        cat.get_table(db, "t")
    cat.drop_database(db, True, True)
    assert db not in cat.get_all_databases()


def test_incomplete_table_is_loaded_first_when_read(server: Server, client: Client) -> None:
    db = unique("inc")
    client.create_database(Database(db, "", None, {}))
    for i in range(30):
        client.create_table(table(db, f"t{i}"))
    # one loader thread, and each load's file listing costs 50 ms: the whole queue takes over 1.5 s
    s = CatalogdService(server.uri, port=0, http_port=0, loader_threads=1, load_in_background=False,
                        file_lister=lambda loc: list_files(loc, 0.05)).start()
    try:
        assert s.cache.table(db, "t29") is not None and not s.cache.table(db, "t29").complete
        s.loader.request_all_incomplete()
        c = Client(s.port)
        try:
            t0 = time.monotonic()
            assert c.get_table(db, "t29").tableName == "t29"  # jumped the queue
            took = time.monotonic() - t0
            waiting = len([k for k in s.cache.incomplete() if k[0] == db])
        finally:
            c.close()
        assert s.cache.table(db, "t29").complete
        # the reader did not wait for the whole queue: most tables were still to load
        assert took < 0.6 and waiting >= 15, (took, waiting)
    finally:
        s.close()


def test_sync_reads_and_blacklist(server: Server, client: Client) -> None:
    db = unique("syn")
    s = CatalogdService(server.uri, port=0, http_port=0, sync_reads=True, poll_interval=0.5,
                        blacklist_dbs=[db + "_hidden"], blacklist_tables=[f"{db}.secret"]).start()
    c = Client(s.port)
    try:
        client.create_database(Database(db, "", None, {}))
        client.create_database(Database(db + "_hidden", "", None, {}))
        client.create_table(table(db, "secret"))
        client.create_table(table(db, "open"))
        # a write behind catalogd's back, read at once: sync-to-latest makes the cache catch up first
        assert c.get_table(db, "open").tableName == "open"
        assert s.cache.table(db, "open") is not None
        # blacklisted objects are not cached; reads of them pass through
        assert db + "_hidden" not in s.cache.dbs and s.cache.table(db, "secret") is None
        assert c.get_table(db, "secret").tableName == "secret"
        assert c.get_database(db + "_hidden").name == db + "_hidden"
        assert sorted(c.get_all_tables(db)) == ["open", "secret"]
    finally:
        c.close()
        s.close()


def test_command_and_status(server: Server, tmp_path: Path) -> None:
    port = free_port()
    http = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "metastore.cli", "catalogd", "--metastore", server.uri,
                             "--port", str(port), "--http-port", str(http), "--sequential",
                             "--blacklist-dbs", "a,b"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 30
        while True:
            r = subprocess.run([sys.executable, "-m", "metastore.cli", "catalogd", "status", "--url",
                                f"http://127.0.0.1:{http}"], capture_output=True, text=True)
            if r.returncode == 0:
                break
            assert time.time() < deadline, r.stderr
            time.sleep(0.2)
        assert "mode" in r.stdout and "sequential" in r.stdout and "synced event id" in r.stdout
        c = Client(port)
        try:
            db = unique("cmd")
            c.create_database(Database(db, "", None, {}))
            assert c.get_database(db).name == db
        finally:
            c.close()
        r = subprocess.run([sys.executable, "-m", "metastore.cli", "catalogd", "status", "--json", "--url",
                            f"http://127.0.0.1:{http}"], capture_output=True, text=True, check=True)
        doc = json.loads(r.stdout)
        assert doc["processor"]["events_applied"] >= 1 and doc["front"]["passed_through"] >= 1
        assert doc["processor"]["lag_events"] == 0
    finally:
        proc.terminate()
        proc.wait(15)
    bad = subprocess.run([sys.executable, "-m", "metastore.cli", "catalogd", "--metastore", "http://x"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "thrift://" in bad.stderr


# partition values that Hive's partition names escape (/, =, %), and a space and non-ASCII, which they do not
AWKWARD = ["eu/west", "a=b", "50%", "new york", "zürich"]


def test_partition_values_that_need_escaping_are_cached_as_the_metastore_names_them(
        server: Server, client: Client) -> None:
    """Issue 19, acceptance 2: a cached table whose partition values need Hive's escaping has, after bootstrap
    and after ADD/ALTER/DROP_PARTITION and INSERT events, the metastore's partition names and values, served
    through catalogd's Thrift front from the cache."""
    db = unique("esc")
    client.create_database(Database(db, "", None, {}))
    client.create_table(table(db, "t", [("region", "string"), ("label", "string")]))

    def part(v: str) -> Partition:
        p = Partition(values=[v, f"{v} {v}"], dbName=db, tableName="t", sd=table(db, "t").sd, parameters={})
        p.sd.location = None
        return p
    client.add_partitions([part(v) for v in AWKWARD[:3]])  # before catalogd: found by its bootstrap
    s = CatalogdService(server.uri, port=0, http_port=0).start()
    cat = Client(s.port)

    def same_as_the_metastore() -> list[str]:
        names = client.get_partition_names(db, "t", -1)
        hits = s.front.hits
        assert cat.get_partition_names(db, "t", -1) == names  # loads the table first, after bootstrap
        cached = s.cache.table(db, "t")
        assert cached is not None and sorted(cached.partitions) == sorted(names)
        mine = {tuple(p.values): p for p in cat.get_partitions(db, "t", -1)}
        theirs = {tuple(p.values): p for p in client.get_partitions(db, "t", -1)}
        assert sorted(mine) == sorted(theirs)
        for name in names:
            values = [v for _, v in split_part_name(name)]
            p = cat.get_partition_by_name(db, "t", name)
            assert p.values == values == client.get_partition_by_name(db, "t", name).values
            assert cat.get_partition(db, "t", values).sd.location == theirs[tuple(values)].sd.location
            assert p.parameters == theirs[tuple(values)].parameters
        assert s.front.hits - hits == 2 + 2 * len(names) and s.front.misses == 0  # all from the cache
        return names

    try:
        names = same_as_the_metastore()
        assert "region=eu%2Fwest/label=eu%2Fwest eu%2Fwest" in names and "region=a%3Db/label=a%3Db a%3Db" in names
        assert "region=50%25/label=50%25 50%25" in names

        # events: each kind on an awkward value, made on the metastore directly so catalogd learns of them
        # from the notification log
        client.add_partitions([part(v) for v in AWKWARD[3:]])
        p = client.get_partition(db, "t", ["50%", "50% 50%"])
        p.parameters = dict(p.parameters or {}, altered="yes")
        client.alter_partition(db, "t", p)
        written = client.get_partition(db, "t", ["zürich", "zürich zürich"]).sd.location
        path = Path(written[len("file:"):] if written.startswith("file:") else written)
        path.mkdir(parents=True, exist_ok=True)
        (path / "part-00000").write_bytes(b"1\n")
        client.fire_listener_event(FireEventRequest(
            successful=True, data=FireEventRequestData(insertData=InsertEventRequestData(
                filesAdded=[f"{written}/part-00000"])), dbName=db, tableName="t",
            partitionVals=["zürich", "zürich zürich"]))
        assert client.drop_partition(db, "t", ["eu/west", "eu/west eu/west"], True)
        s.sync_to_latest(30)

        names = same_as_the_metastore()
        assert len(names) == 4 and not any(n.startswith("region=eu%2Fwest/") for n in names)
        assert "region=new york/label=new york new york" in names and "region=zürich/label=zürich zürich" in names
        assert cat.get_partition(db, "t", ["50%", "50% 50%"]).parameters["altered"] == "yes"
        cached = s.cache.table(db, "t")
        assert cached is not None and [f.name for f in cached.files[written]] == ["part-00000"]  # the INSERT's
        assert s.processor is not None and s.processor.metrics.failed == 0
    finally:
        cat.close()
        s.close()
