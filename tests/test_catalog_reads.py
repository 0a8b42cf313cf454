"""A read request's catalog (issue 21): this store has one catalog, Hive's default `hive`; a request naming
another (its catName, or its database's '@cat#db' prefix) is answered as Hive 3 answers for a catalog that holds
nothing: the table-missing exception of the call (get_table_req, statistics, partitions by expression or
values), UnknownDBException (get_table_objects_by_name_req), or an empty answer (constraints, which Hive 3
reads by catalog; the count of a catalog's events). Catalog names compare without case. Sqlite only: the check
is made before the store is read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from metastore.thrift import hms
from metastore.thrift.client import MetastoreClient

from conftest import Server, unique
from reference import text_storage


@pytest.fixture(scope="module", params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def made(server: Server) -> Iterator[tuple[MetastoreClient, str]]:
    db = unique("cat")
    with MetastoreClient(server.uri) as c:
        c.create_database(hms.Database(name=db, description="", parameters={}))
        c.create_table(hms.Table(tableName="t", dbName=db, owner="alice", parameters={}, tableType="MANAGED_TABLE",
                                 sd=text_storage([("a", "int"), ("b", "string")]),
                                 partitionKeys=[hms.FieldSchema(name="k", type="string", comment=None)]))
        t = c.get_table(db, "t")
        t.sd.location = None
        c.forward("add_partition", hms.Partition(values=["1"], dbName=db, tableName="t", sd=t.sd, parameters={}))
        c.forward("add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[hms.SQLPrimaryKey(
            table_db=db, table_name="t", column_name="a", key_seq=1, pk_name="pk_t", enable_cstr=False,
            validate_cstr=False, rely_cstr=False)]))
        stats = hms.ColumnStatisticsObj(colName="a", colType="int", statsData=hms.ColumnStatisticsData(
            longStats=hms.LongColumnStatsData(lowValue=1, highValue=2, numNulls=0, numDVs=2)))
        c.forward("update_table_column_statistics", hms.ColumnStatistics(
            statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName=db, tableName="t"), statsObj=[stats],
            engine="hive"))
        c.forward("update_partition_column_statistics", hms.ColumnStatistics(
            statsDesc=hms.ColumnStatisticsDesc(isTblLevel=False, dbName=db, tableName="t", partName="k=1"),
            statsObj=[stats], engine="hive"))
        try:
            yield c, db
        finally:
            c.drop_database(db, True, True)


def _calls(db: str, cat: str | None) -> dict[str, Callable[[MetastoreClient], Any]]:
    """Each read request, for catalog `cat`, reduced to what a test compares."""
    def pk(c: MetastoreClient) -> Any:
        return [k.column_name for k in c.forward("get_primary_keys", hms.PrimaryKeysRequest(
            db_name=db, tbl_name="t", catName=cat)).primaryKeys]

    return {
        "get_table_req": lambda c: c.forward("get_table_req", hms.GetTableRequest(
            dbName=db, tblName="t", catName=cat)).table.tableName,
        "get_table_objects_by_name_req": lambda c: [t.tableName for t in c.forward(
            "get_table_objects_by_name_req", hms.GetTablesRequest(dbName=db, tblNames=["t"], catName=cat)).tables],
        "get_primary_keys": pk,
        "get_unique_constraints": lambda c: c.forward("get_unique_constraints", hms.UniqueConstraintsRequest(
            db_name=db, tbl_name="t", catName=cat or "hive")).uniqueConstraints,
        "get_not_null_constraints": lambda c: c.forward("get_not_null_constraints", hms.NotNullConstraintsRequest(
            db_name=db, tbl_name="t", catName=cat or "hive")).notNullConstraints,
        "get_foreign_keys": lambda c: c.forward("get_foreign_keys", hms.ForeignKeysRequest(
            parent_db_name=db, parent_tbl_name="t", catName=cat)).foreignKeys,
        "get_all_table_constraints": lambda c: [k.column_name for k in c.forward(
            "get_all_table_constraints", hms.AllTableConstraintsRequest(
                dbName=db, tblName="t", catName=cat or "hive")).allTableConstraints.primaryKeys],
        "get_table_statistics_req": lambda c: [o.colName for o in c.forward(
            "get_table_statistics_req", hms.TableStatsRequest(dbName=db, tblName="t", colNames=["a"],
                                                              catName=cat, engine="hive")).tableStats],
        "get_partitions_statistics_req": lambda c: sorted(c.forward(
            "get_partitions_statistics_req", hms.PartitionsStatsRequest(
                dbName=db, tblName="t", colNames=["a"], partNames=["k=1"], catName=cat, engine="hive")).partStats),
        "get_aggr_stats_for": lambda c: c.forward("get_aggr_stats_for", hms.PartitionsStatsRequest(
            dbName=db, tblName="t", colNames=["a"], partNames=["k=1"], catName=cat, engine="hive")).partsFound,
        "get_partition_values": lambda c: [r.row for r in c.forward("get_partition_values", hms.PartitionValuesRequest(
            dbName=db, tblName="t", partitionKeys=[hms.FieldSchema(name="k", type="string", comment=None)],
            catName=cat)).partitionValues],
        "get_partition_names_req": lambda c: c.forward("get_partition_names_req", hms.PartitionsByExprRequest(
            dbName=db, tblName="t", catName=cat)),
        "get_notification_events_count": lambda c: c.forward(
            "get_notification_events_count", hms.NotificationEventsCountRequest(
                fromEventId=0, dbName=db, catName=cat or "hive")).eventsCount > 0,
    }


def _outcome(call: Callable[[MetastoreClient], Any], c: MetastoreClient) -> Any:
    try:
        return call(c)
    except Exception as e:  # noqa: BLE001 - the answer is what is compared
        return (type(e).__name__, getattr(e, "message", None) or str(e))


def test_own_catalog_answers(made: tuple[MetastoreClient, str]) -> None:
    """catName hive (any case) or none: the table's answers."""
    c, db = made
    for cat in (None, "hive", "HIVE"):
        got = {name: _outcome(call, c) for name, call in _calls(db, cat).items()}
        assert got == {
            "get_table_req": "t", "get_table_objects_by_name_req": ["t"], "get_primary_keys": ["a"],
            "get_unique_constraints": [], "get_not_null_constraints": [], "get_foreign_keys": [],
            "get_all_table_constraints": ["a"], "get_table_statistics_req": ["a"],
            "get_partitions_statistics_req": ["k=1"], "get_aggr_stats_for": 1, "get_partition_values": [["1"]],
            "get_partition_names_req": ["k=1"], "get_notification_events_count": True,
        }, cat


def test_other_catalog_answers(made: tuple[MetastoreClient, str]) -> None:
    """catName other: Hive 3's answers for a catalog that holds none of it (never the hive catalog's)."""
    c, db = made
    missing = f"Specified catalog.database.table does not exist : other.{db}.t"
    got = {name: _outcome(call, c) for name, call in _calls(db, "Other").items()}
    assert got == {
        "get_table_req": ("NoSuchObjectException", f"Other.{db}.t table not found"),
        "get_table_objects_by_name_req": ("UnknownDBException", f"Could not find database other.{db}"),
        "get_primary_keys": [], "get_unique_constraints": [], "get_not_null_constraints": [], "get_foreign_keys": [],
        "get_all_table_constraints": [],
        "get_table_statistics_req": ("NoSuchObjectException", missing),
        "get_partitions_statistics_req": ("NoSuchObjectException", missing),
        "get_aggr_stats_for": ("NoSuchObjectException", missing),
        "get_partition_values": ("NoSuchObjectException", missing),
        "get_partition_names_req": ("NoSuchObjectException", missing),
        "get_notification_events_count": False,
    }


def test_prefixed_database(made: tuple[MetastoreClient, str]) -> None:
    """A request without catName whose database carries another catalog's '@cat#db' prefix: the same answers;
    the 'hive' prefix is this catalog. The serialized get_table_req path answers the same as the handler."""
    c, db = made
    for _ in range(2):  # the second call could be served from the serialized-table cache
        assert _outcome(lambda x: x.forward("get_table_req", hms.GetTableRequest(
            dbName=f"@other#{db}", tblName="t")).table, c) == ("NoSuchObjectException", f"other.{db}.t table not found")
        assert c.forward("get_table_req", hms.GetTableRequest(dbName=f"@hive#{db}", tblName="t")).table.dbName == db
    assert c.forward("get_primary_keys", hms.PrimaryKeysRequest(db_name=f"@other#{db}", tbl_name="t")).primaryKeys == []
