"""The Thrift API through the Apache Thrift client, on every backend."""

from __future__ import annotations

import os

import pytest
from hive_metastore.ttypes import (
    AddPartitionsRequest,
    AlreadyExistsException,
    Database,
    DropPartitionsRequest,
    EnvironmentContext,
    FieldSchema,
    GetTableRequest,
    InvalidObjectException,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
    NotificationEventRequest,
    Partition,
    RequestPartsSpec,
    Table,
)

from common import parquet_storage
from conftest import unique


def sd(cols=(("a", "int"), ("b", "string")), location=None):
    return parquet_storage(list(cols), location)


def table(db, name, keys=(("ds", "string"), ("h", "int")), **kw):
    return Table(tableName=name, dbName=db, owner="tester", sd=sd(), parameters={}, tableType="MANAGED_TABLE",
                 partitionKeys=[FieldSchema(k, t, None) for k, t in keys], **kw)


@pytest.fixture
def db(client):
    name = unique("db")
    client.create_database(Database(name=name, description="test", parameters={"k": "v"}))
    yield name
    client.drop_database(name, True, True)


def test_database_lifecycle(client, server):
    name = unique("db")
    client.create_database(Database(name=name, description="d", parameters={"p": "1"}))
    got = client.get_database(name)
    assert (got.name, got.description, got.parameters) == (name, "d", {"p": "1"})
    assert got.locationUri == f"file:{server.warehouse}/{name}.db"
    assert os.path.isdir(server.warehouse / f"{name}.db")
    assert name in client.get_all_databases() and "default" in client.get_all_databases()
    assert client.get_databases(name[:5] + "*") == [name]
    with pytest.raises(AlreadyExistsException):
        client.create_database(Database(name=name))
    client.drop_database(name, True, False)
    with pytest.raises(NoSuchObjectException):
        client.get_database(name)
    assert not os.path.exists(server.warehouse / f"{name}.db")


def test_table_and_partitions(client, db, server):
    client.create_table(table(db, "T1"))
    t = client.get_table(db, "t1")
    assert t.tableName == "t1" and [c.name for c in t.partitionKeys] == ["ds", "h"]
    assert t.sd.location == f"file:{server.warehouse}/{db}.db/t1"
    assert client.get_table_req(GetTableRequest(dbName=f"@hive#{db}", tblName="t1")).table.tableName == "t1"
    with pytest.raises(AlreadyExistsException):
        client.create_table(table(db, "t1"))
    parts = [Partition(values=[f"2024-01-0{d}", str(h)], dbName=db, tableName="t1", sd=sd(), parameters={})
             for d in range(1, 4) for h in range(4)]
    for p in parts:
        p.sd.location = None
    res = client.add_partitions_req(AddPartitionsRequest(dbName=db, tblName="t1", parts=parts, ifNotExists=False,
                                                         needResult=True))
    assert len(res.partitions) == 12
    assert os.path.isdir(server.warehouse / f"{db}.db" / "t1" / "ds=2024-01-02" / "h=3")
    names = client.get_partition_names(db, "t1", -1)
    assert names[0] == "ds=2024-01-01/h=0" and len(names) == 12
    assert len(client.get_partitions(db, "t1", 5)) == 5
    got = client.get_partitions_by_filter(db, "t1", 'ds >= "2024-01-02" and h > 1', -1)
    assert [p.values for p in got] == [["2024-01-02", "2"], ["2024-01-02", "3"], ["2024-01-03", "2"],
                                       ["2024-01-03", "3"]]
    assert client.get_num_partitions_by_filter(db, "t1", "h = 10 or h < 1") == 3
    assert len(client.get_partitions_ps(db, "t1", ["2024-01-01", ""], -1)) == 4
    assert client.get_partition(db, "t1", ["2024-01-01", "3"]).values == ["2024-01-01", "3"]
    assert client.get_partition_by_name(db, "t1", "ds=2024-01-01/h=3").values == ["2024-01-01", "3"]
    assert len(client.get_partitions_by_names(db, "t1", ["ds=2024-01-01/h=3", "ds=2099-01-01/h=1"])) == 1
    with pytest.raises(AlreadyExistsException):
        client.add_partitions_req(AddPartitionsRequest(dbName=db, tblName="t1", parts=parts[:1], ifNotExists=False))
    assert client.drop_partition(db, "t1", ["2024-01-01", "0"], True)
    with pytest.raises(NoSuchObjectException):
        client.get_partition(db, "t1", ["2024-01-01", "0"])
    dropped = client.drop_partitions_req(DropPartitionsRequest(
        dbName=db, tblName="t1", parts=RequestPartsSpec(names=["ds=2024-01-03/h=0", "ds=2024-01-03/h=1"]),
        deleteData=True, needResult=True))
    assert len(dropped.partitions) == 2
    assert client.get_num_partitions_by_filter(db, "t1", "") == 9
    # alter a partition's parameters
    p = client.get_partition(db, "t1", ["2024-01-02", "1"])
    p.parameters["x"] = "y"
    client.alter_partitions(db, "t1", [p])
    assert client.get_partition(db, "t1", ["2024-01-02", "1"]).parameters["x"] == "y"


def test_rename_moves_managed_directory(client, db, server):
    client.create_table(table(db, "src", keys=()))
    (server.warehouse / f"{db}.db" / "src" / "f.txt").write_text("x")
    t = client.get_table(db, "src")
    t.tableName = "dst"
    client.alter_table_with_environment_context(db, "src", t, EnvironmentContext(properties={}))
    moved = client.get_table(db, "dst")
    assert moved.sd.location == f"file:{server.warehouse}/{db}.db/dst"
    assert (server.warehouse / f"{db}.db" / "dst" / "f.txt").read_text() == "x"
    assert not (server.warehouse / f"{db}.db" / "src").exists()
    with pytest.raises(NoSuchObjectException):
        client.get_table(db, "src")


def test_errors(client, db):
    with pytest.raises(NoSuchObjectException):
        client.get_table(db, "missing")
    with pytest.raises(InvalidObjectException):
        client.create_table(table(db, "bad-name"))
    with pytest.raises(InvalidObjectException):
        client.create_database(Database(name=""))
    bad = table(db, "badtype")
    bad.sd.cols[0].type = "notatype"
    with pytest.raises(InvalidObjectException):
        client.create_table(bad)
    client.create_table(table(db, "t"))
    with pytest.raises(MetaException):
        client.get_partitions_by_filter(db, "t", "ds = ", -1)
    with pytest.raises(MetaException):
        client.get_partitions_by_filter(db, "t", "nokey = 1", -1)
    with pytest.raises(InvalidOperationException):
        client.drop_database(db, False, False)


def test_notifications(client, db):
    start = client.get_current_notificationEventId().eventId
    client.create_table(table(db, "ev"))
    client.append_partition(db, "ev", ["2024-01-01", "1"])
    client.drop_table(db, "ev", True)
    events = client.get_next_notification(NotificationEventRequest(lastEvent=start, maxEvents=100)).events
    assert [e.eventType for e in events] == ["CREATE_TABLE", "ADD_PARTITION", "DROP_TABLE"]
    assert [e.eventId for e in events] == [start + 1, start + 2, start + 3]
    assert all(e.dbName == db and e.tableName == "ev" and e.messageFormat == "json-0.2" for e in events)
    skipped = client.get_next_notification(NotificationEventRequest(lastEvent=start, maxEvents=100,
                                                                    eventTypeSkipList=["ADD_PARTITION"])).events
    assert [e.eventType for e in skipped] == ["CREATE_TABLE", "DROP_TABLE"]


def test_insert_event(client, db):
    from hive_metastore.ttypes import FireEventRequest, FireEventRequestData, InsertEventRequestData

    client.create_table(table(db, "ins"))
    client.append_partition(db, "ins", ["2024-01-01", "1"])
    start = client.get_current_notificationEventId().eventId
    # a Hive 3+ request (the client module's layout): its files arrive whatever the field numbering
    data = FireEventRequestData(insertData=InsertEventRequestData(replace=True, filesAdded=["file:/w/f1.parquet"]))
    res = client.fire_listener_event(FireEventRequest(successful=True, data=data, dbName=db, tableName="ins",
                                                      partitionVals=["2024-01-01", "1"]))
    assert res.eventIds == [start + 1]
    (e,) = client.get_next_notification(NotificationEventRequest(lastEvent=start, maxEvents=10)).events
    assert (e.eventType, e.dbName, e.tableName) == ("INSERT", db, "ins")
    import json
    msg = json.loads(e.message)
    assert msg["files"] == ["file:/w/f1.parquet"]
    assert msg["partKeyVals"] == {"ds": "2024-01-01", "h": "1"}
    from thrift.Thrift import TApplicationException

    with pytest.raises(TApplicationException, match="partition values"):  # the call declares no exceptions
        client.fire_listener_event(FireEventRequest(successful=True, data=data, dbName=db, tableName="ins",
                                                    partitionVals=["2024-01-09", "1"]))


@pytest.mark.parametrize("n", [3, 300])  # in-process, and through the child processes of a large batch
def test_add_partitions_makes_every_directory(client, db, server, n):
    client.create_table(table(db, "dirs"))
    parts = [Partition(values=[f"2024-01-{d:02d}", str(h)], dbName=db, tableName="dirs", sd=sd(), parameters={})
             for d in range(1, 31) for h in range(10)][:n]
    client.add_partitions_req(AddPartitionsRequest(dbName=db, tblName="dirs", parts=parts, ifNotExists=False,
                                                   needResult=False))
    base = server.warehouse / f"{db}.db" / "dirs"
    made = {p.relative_to(base).as_posix() for p in base.glob("*/*") if p.is_dir()}
    assert made == {f"ds={p.values[0]}/h={p.values[1]}" for p in parts}
    assert len(client.get_partition_names(db, "dirs", -1)) == n


@pytest.mark.parametrize("n", [3, 300])
def test_add_partitions_directory_failure_adds_nothing(client, db, server, tmp_path, n):
    """A partition whose directory cannot be made fails the whole call with a MetaException, as in Hive, and the
    directories the call made for the others are removed (Hive leaves the ds= parents behind)."""
    client.create_table(table(db, "blocked"))
    blocker = server.warehouse / f"a-file-{n}"  # inside the warehouse: outside it the server makes no directory
    blocker.write_text("not a directory")
    parts = [Partition(values=[f"2024-02-{d:02d}", str(h)], dbName=db, tableName="blocked", sd=sd(), parameters={})
             for d in range(1, 31) for h in range(10)][:n]
    parts[n // 2].sd.location = f"file:{blocker}/inside"
    with pytest.raises(MetaException) as e:
        client.add_partitions_req(AddPartitionsRequest(dbName=db, tblName="blocked", parts=parts, ifNotExists=False,
                                                       needResult=False))
    assert f"file:{blocker}/inside is not a directory or unable to create one" in e.value.message
    assert client.get_partition_names(db, "blocked", -1) == []
    assert list((server.warehouse / f"{db}.db" / "blocked").iterdir()) == []
    assert blocker.read_text() == "not a directory"
