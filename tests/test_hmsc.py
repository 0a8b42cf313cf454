"""hive-metastore-client 1.0.9 (PyPI, QuintoAndar's Hive 3 client) against the server: its whole API surface.

Its HiveMetastoreClient is Hive 3's generated Thrift client (its own copy of the IDL, module `thrift_files`) plus
helpers: create_database_if_not_exists, create_external_table, add_columns_to_table / drop_columns_from_table
(the latter through setMetaConf of Hive 3's hive.metastore.disallow.incompatible.col.type.changes),
add_partitions_to_table / add_partitions_if_not_exists (each partition's location made from the table's),
get_partition_keys{,_objects,_names}, get_partition_values_from_table (get_partition_values) and
bulk_drop_partitions. Its builders send only what the caller gives: no table type, no partition storage
descriptor, no numBuckets.

Each script runs the same calls through hmsc on our server and on the reference Hive 2.3.10 metastore; every
step's outcome (result, or exception class and message) must be equal, except the steps in DIFFERENT (Hive 2.3
lacks the Hive 3 call or key, or is wrong), whose answer here is asserted as ours. The helpers' script runs on
SQLite only (nothing in it is store-specific); partition values, statistics and constraints, which are SQL of
their own in each store, run on every store. Hive 3's calls that Hive 2.3 lacks (catalogs, unique / not-null /
default / check constraints) are ours alone.

hmsc pins thrift==0.13.0 and the tests need thrift>=0.20 (pyproject.toml's test extra): it is installed with
`pip install --no-deps 'hive-metastore-client==1.0.9'`; its generated code runs on thrift 0.25, and its modules
(`hive_metastore_client`, `thrift_files`) do not clash with PyIceberg's vendored `hive_metastore`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from metastore.core.names import unescape_path_name

from conftest import Server, unique
from reference import Reference, reference  # noqa: F401  (the session fixture)

try:
    from hive_metastore_client import HiveMetastoreClient
    from hive_metastore_client.builders import (
        ColumnBuilder,
        DatabaseBuilder,
        PartitionBuilder,
        SerDeInfoBuilder,
        StorageDescriptorBuilder,
        TableBuilder,
    )
    from thrift_files.libraries.thrift_hive_metastore_client import ttypes as T
except ImportError as e:  # installed apart from the test extra (see the module docstring)
    _MISSING = "hive-metastore-client is not installed: pip install --no-deps 'hive-metastore-client==1.0.9'"
    if os.environ.get("CI"):  # CI tests every client
        raise ImportError(_MISSING) from e
    pytest.skip(_MISSING, allow_module_level=True)

TEXT_IN = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
LAZY = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
DISALLOW = "hive.metastore.disallow.incompatible.col.type.changes"

# fields left out of a comparison: the clock's, and Hive 3's that Hive 2.3's structs lack (catName, a table's
# ownerType)
_VOLATILE = {"createTime", "lastAnalyzed", "catName", "catalogName"}
_PARAMS_VOLATILE = {"transient_lastDdlTime"}
_WAREHOUSE = re.compile(r"file:(?:/[^\s'\"\],)]*?)?/warehouse(?=/)")


# ------------------------------------------------------------------------------------------------ outcomes

def norm(v: Any) -> Any:
    """A Thrift answer as plain data: structs as dicts of their set fields (the volatile ones left out), the
    warehouse's root as <wh>."""
    if isinstance(v, list | tuple):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {norm(k): norm(x) for k, x in v.items() if k not in _PARAMS_VOLATILE}
    if hasattr(v, "thrift_spec"):
        skip = _VOLATILE | ({"ownerType"} if isinstance(v, T.Table) else set())
        return {k: norm(x) for k, x in vars(v).items() if x is not None and k not in skip}
    if isinstance(v, str):
        return _WAREHOUSE.sub("<wh>", v)
    return v


def outcome(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", norm(fn()))
    except Exception as e:  # noqa: BLE001 - the answer is what is compared
        return (type(e).__name__, _WAREHOUSE.sub("<wh>", getattr(e, "message", None) or str(e)))


class Steps:
    """Each step's outcome on one server, by label."""

    def __init__(self) -> None:
        self.steps: dict[str, Any] = {}

    def __call__(self, label: str, fn: Callable[[], Any]) -> Any:
        assert label not in self.steps, label
        self.steps[label] = outcome(fn)
        return self.steps[label]


def connect(port: int) -> HiveMetastoreClient:
    return HiveMetastoreClient("127.0.0.1", port).open()


def sd(cols: list[tuple[str, str]], location: str | None = None) -> Any:
    """hmsc's storage descriptor of a text table (numBuckets left unset, as its builder leaves it)."""
    return StorageDescriptorBuilder(columns=[ColumnBuilder(n, t).build() for n, t in cols], location=location,
                                    input_format=TEXT_IN, output_format=TEXT_OUT,
                                    serde_info=SerDeInfoBuilder(serialization_lib=LAZY).build()).build()


def table(db: str, name: str, cols: list[tuple[str, str]], keys: list[tuple[str, str]] | None = None,
          table_type: str | None = "MANAGED_TABLE") -> Any:
    return TableBuilder(name, db, sd(cols), owner="alice", table_type=table_type,
                        partition_keys=[ColumnBuilder(n, t).build() for n, t in keys or []]).build()


def parts(db: str, name: str, values: list[list[str]]) -> list[Any]:
    return [PartitionBuilder(v, db, name).build() for v in values]


def db_free(v: Any, db: str) -> Any:
    """`db` (each side's own unique name) as <db>."""
    if isinstance(v, dict):
        return {db_free(k, db): db_free(x, db) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return type(v)(db_free(x, db) for x in v)
    return v.replace(db, "<db>") if isinstance(v, str) else v


def scripted(port: int, prefix: str, script: Callable[[HiveMetastoreClient, str], dict[str, Any]]) -> Iterator[
        dict[str, Any]]:
    """`script(client, db)` run once through hmsc on `port` in a fresh database; its steps with the database's
    name as <db>; the database dropped after."""
    db = unique(prefix)
    c = connect(port)
    try:
        steps = script(c, db)
        yield {k: db_free(v, db) for k, v in steps.items()}
    finally:
        try:
            c.drop_database(db, True, True)
        finally:
            c.close()


# ------------------------------------------------------------------------------------- hmsc's own helpers

def helpers_script(c: HiveMetastoreClient, db: str) -> dict[str, Any]:
    run = Steps()
    run("create db", lambda: c.create_database_if_not_exists(DatabaseBuilder(
        db, description="hmsc", parameters={"k": "v"}, owner_name="alice", owner_type=T.PrincipalType.USER).build()))
    run("create db again", lambda: c.create_database_if_not_exists(DatabaseBuilder(db, description="other").build()))
    run("get db", lambda: c.get_database(db))
    cols = [("id", "int"), ("name", "string"), ("amount", "decimal(10,2)")]
    run("create table", lambda: c.create_table(table(db, "events", cols, [("dt", "string"), ("hr", "int")])))
    run("create table again", lambda: c.create_table(table(db, "events", cols)))
    run("create external", lambda: c.create_external_table(table(db, "ext", cols, table_type=None)))
    run("get table", lambda: c.get_table(db, "events"))
    run("get external", lambda: c.get_table(db, "ext"))
    run("keys objects", lambda: c.get_partition_keys_objects(db, "events"))
    run("keys names", lambda: c.get_partition_keys_names(db, "events"))
    run("keys", lambda: c.get_partition_keys(db, "events"))
    run("keys unpartitioned", lambda: c.get_partition_keys(db, "ext"))
    run("keys missing table", lambda: c.get_partition_keys(db, "nope"))
    run("values none yet", lambda: c.get_partition_values_from_table(db, "events"))
    run("values unpartitioned", lambda: c.get_partition_values_from_table(db, "ext"))
    run("add partitions", lambda: c.add_partitions_to_table(db, "events", parts(db, "events", [
        ["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"]])))
    run("add partitions dup", lambda: c.add_partitions_to_table(db, "events", parts(db, "events", [
        ["2024-01-03", "1"], ["2024-01-01", "1"]])))
    run("names after dup", lambda: c.get_partition_names(db, "events", -1))
    run("add if not exists", lambda: c.add_partitions_if_not_exists(db, "events", parts(db, "events", [
        ["2024-01-01", "1"], ["2024-01-04", "5"]])))
    run("add if not exists empty", lambda: c.add_partitions_if_not_exists(db, "events", []))
    run("add wrong length", lambda: c.add_partitions_to_table(db, "events", parts(db, "events", [["x"]])))
    run("add missing table", lambda: c.add_partitions_to_table(db, "nope", parts(db, "nope", [["x"]])))
    run("names", lambda: c.get_partition_names(db, "events", -1))
    run("partition", lambda: c.get_partition(db, "events", ["2024-01-04", "5"]))
    run("values", lambda: c.get_partition_values_from_table(db, "events"))
    run("bulk drop", lambda: c.bulk_drop_partitions(db, "events", [["2024-01-01", "2"], ["2024-01-02", "1"]]))
    run("bulk drop missing", lambda: c.bulk_drop_partitions(db, "events", [["2024-01-04", "5"], ["2024-01-09", "9"]]))
    run("names after drops", lambda: c.get_partition_names(db, "events", -1))
    run("add columns", lambda: c.add_columns_to_table(db, "events", [ColumnBuilder("extra", "bigint", "x").build()]))
    run("columns added", lambda: c.get_fields(db, "events"))
    run("partition columns", lambda: c.get_partition(db, "events", ["2024-01-01", "1"]).sd.cols)
    run("drop columns none", lambda: c.drop_columns_from_table(db, "events", []))
    run("drop middle column", lambda: _alter_cols(c, db, "events", lambda cs: [*cs[:2], *cs[3:]]))
    run("drop columns", lambda: c.drop_columns_from_table(db, "events", ["name"]))
    run("columns dropped", lambda: c.get_schema(db, "events"))
    # the inherited calls an engine makes next to them
    run("table req", lambda: c.get_table_req(T.GetTableRequest(dbName=db, tblName="events")).table.tableName)
    run("tables by name req", lambda: [t.tableName for t in c.get_table_objects_by_name_req(
        T.GetTablesRequest(dbName=db, tblNames=["ext", "events", "nope"])).tables])
    run("tables by type", lambda: sorted(c.get_tables_by_type(db, "*", "EXTERNAL_TABLE")))
    run("table meta", lambda: sorted(c.get_table_meta(db, "e*", ["MANAGED_TABLE"]), key=lambda m: m.tableName))
    run("partitions by names", lambda: [p.values for p in c.get_partitions_by_names(
        db, "events", ["dt=2024-01-01/hr=1", "dt=2024-01-09/hr=9"])])
    run("drop partitions req", lambda: [p.values for p in c.drop_partitions_req(T.DropPartitionsRequest(
        dbName=db, tblName="events", parts=T.RequestPartsSpec(names=["dt=2024-01-01/hr=1"]), needResult=True,
        deleteData=True)).partitions])
    events = c.get_table(db, "events")
    located = c._format_partitions_location(parts(db, "events", [["2024-02-01", "1"], ["2024-02-01", "2"]]),
                                            events.sd, events.partitionKeys)  # as hmsc's helpers place them
    run("add partitions req", lambda: [p.values for p in c.add_partitions_req(T.AddPartitionsRequest(
        dbName=db, tblName="events", parts=located, ifNotExists=True, needResult=True)).partitions])
    run("partitions by filter", lambda: [p.values for p in c.get_partitions_by_filter(
        db, "events", "dt >= '2024-02-01' and hr < 2", -1)])
    run("count by filter", lambda: c.get_num_partitions_by_filter(db, "events", "dt >= '2024-02-01'"))
    run("names ps", lambda: c.get_partition_names_ps(db, "events", ["2024-02-01", ""], -1))
    run("partitions ps", lambda: [p.values for p in c.get_partitions_ps(db, "events", ["2024-02-01"], -1)])

    def altered() -> Any:
        p = c.get_partition(db, "events", ["2024-02-01", "1"])
        p.parameters["k"] = "v"
        c.alter_partition(db, "events", p)
        return c.get_partition(db, "events", ["2024-02-01", "1"]).parameters.get("k")

    run("alter partition", altered)

    def renamed() -> Any:
        p = c.get_partition(db, "events", ["2024-02-01", "2"])
        p.values = ["2024-02-02", "2"]
        c.rename_partition(db, "events", ["2024-02-01", "2"], p)
        return c.get_partition_names(db, "events", -1)

    run("rename partition", renamed)
    run("truncate", lambda: c.truncate_table(db, "events", ["dt=2024-02-01/hr=1"]))
    run("drop external", lambda: c.drop_table(db, "ext", True))
    run("tables", lambda: c.get_all_tables(db))
    return run.steps


def _alter_cols(c: HiveMetastoreClient, db: str, name: str, change: Callable[[list[Any]], list[Any]]) -> None:
    t = c.get_table(db, name)
    t.sd.cols = change(t.sd.cols)
    c.alter_table(db, name, t)


# label -> why Hive 2.3's answer is not ours (ours asserted in test_helpers_answers / test_store_answers)
DIFFERENT: dict[str, str] = {
    "add partitions dup": "Hive 2.3's message prints the whole Partition struct; ours names the partition",
    "drop columns": "Hive 2.3 has no setMetaConf key hive.metastore.disallow.incompatible.col.type.changes (Hive 3 "
                    "has): its MetaException",
    "columns dropped": "follows 'drop columns'",
    "truncate": "Hive 2.3 has no truncate_table (Hive 3's call): its TApplicationException",
    "values bad key": "Hive 2.3 answers the values of another key (its bug); ours Hive 3's MetaException",
    "values missing table": "Hive 2.3 fails with a NullPointerException in a MetaException; ours names the table",
    "aggr all": "Hive 2.3 aggregates a decimal column's bounds without their scale (1 and 27 for 1.00 and 27.00)",
    "aggr two": "Hive 2.3's aggregate stats cache answers with a near match (all three partitions); ours exactly",
}


@pytest.fixture(scope="module")
def helpers_ours(server: Server) -> Iterator[dict[str, Any]]:
    yield from scripted(server.port, "hmsc", helpers_script)


@pytest.fixture(scope="module")
def helpers_reference(reference: Reference) -> Iterator[dict[str, Any]]:  # noqa: F811
    yield from scripted(reference.port, "hmsc", helpers_script)


# get_partition_values: Hive answers each value as it is escaped in the partition's name (its ObjectStore takes
# substrings of the names, Hive 3's as 2.3's: 'a b%3Dc' for 'a b=c'); ours the value, as get_partition answers
# it. Compared with Hive's values unescaped.
ESCAPED = {"values helper", "values distinct", "values not distinct", "values order", "values one key"}
# in no promised order (Hive's on Derby: sorted, by its DISTINCT; ours: the partitions' names' order): as sets
UNORDERED = {"values one key"}


def _unescaped(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return type(v)(_unescaped(x) for x in v)
    return unescape_path_name(v) if isinstance(v, str) else v


def _same(label: str, ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    if label in DIFFERENT:
        pytest.skip(DIFFERENT[label])
    mine, hive = ours[label], theirs[label]
    if label in ESCAPED:
        hive = _unescaped(hive)
    if label in UNORDERED:
        mine, hive = ((x[0], sorted(x[1])) for x in (mine, hive))
    assert mine == hive


HELPER_LABELS = ["create db", "create db again", "get db", "create table", "create table again", "create external",
                 "get table", "get external", "keys objects", "keys names", "keys", "keys unpartitioned",
                 "keys missing table", "values none yet", "values unpartitioned", "add partitions",
                 "add partitions dup", "names after dup", "add if not exists", "add if not exists empty",
                 "add wrong length", "add missing table", "names", "partition", "values", "bulk drop",
                 "bulk drop missing", "names after drops", "add columns", "columns added", "partition columns",
                 "drop columns none", "drop middle column", "drop columns", "columns dropped", "table req",
                 "tables by name req", "tables by type", "table meta", "partitions by names", "drop partitions req",
                 "add partitions req", "partitions by filter", "count by filter", "names ps", "partitions ps",
                 "alter partition", "rename partition", "truncate", "drop external", "tables"]


@pytest.mark.slow
@pytest.mark.reference
@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize("label", HELPER_LABELS)
def test_helpers_same_as_hive(label: str, helpers_ours: dict[str, Any], helpers_reference: dict[str, Any]) -> None:
    _same(label, helpers_ours, helpers_reference)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_helpers_answers(helpers_ours: dict[str, Any]) -> None:
    """What the helpers' script answers here (equal to Hive's where the reference runs, but DIFFERENT)."""
    ours = helpers_ours
    assert list(ours) == HELPER_LABELS
    failed = {k: v for k, v in ours.items() if v[0] != "ok"}
    assert failed == {
        "create table again": ("AlreadyExistsException", "Table events already exists"),
        "keys missing table": ("NoSuchObjectException", "<db>.nope table not found"),
        "add partitions dup": ("AlreadyExistsException", "Partition already exists: dt=2024-01-01/hr=1"),
        "add if not exists empty": ("ValueError", "m=add_partitions_if_not_exists, msg=The partition list is empty."),
        "add wrong length": ("ValueError", "m=_validate_lists_length, msg=The length of the two provided lists "
                                           "does not match"),
        "add missing table": ("NoSuchObjectException", "<db>.nope table not found"),
        # decimal(10,2) to bigint at the third position, refused as Hive does (its default setting)
        "drop middle column": ("InvalidOperationException", "The following columns have types incompatible with "
                                                            "the existing columns in their respective positions :\n"
                                                            "extra"),
        "bulk drop missing": ("NoSuchObjectException", "m=bulk_drop_partitions, partitions_not_dropped="
                                                       "[['2024-01-09', '9']], msg=Some partition values were not "
                                                       "dropped because they do not exist."),
    }, failed
    db = ours["get db"][1]
    assert db == {"name": "<db>", "description": "hmsc", "locationUri": "<wh>/<db>.db", "parameters": {"k": "v"},
                  "ownerName": "alice", "ownerType": 1}
    t = ours["get table"][1]
    assert (t["tableType"], t["sd"]["location"], t["sd"]["numBuckets"]) == ("MANAGED_TABLE", "<wh>/<db>.db/events", 0)
    ext = ours["get external"][1]
    assert (ext["tableType"], ext["parameters"]) == ("EXTERNAL_TABLE", {"EXTERNAL": "TRUE"})
    assert ours["keys"] == ("ok", [["dt", "string"], ["hr", "int"]])
    assert ours["keys names"] == ("ok", ["dt", "hr"])
    assert ours["keys unpartitioned"] == ours["values none yet"] == ours["values unpartitioned"] == ("ok", [])
    assert ours["names after dup"] == ("ok", ["dt=2024-01-01/hr=1", "dt=2024-01-01/hr=2", "dt=2024-01-02/hr=1"])
    assert ours["names"] == ("ok", ["dt=2024-01-01/hr=1", "dt=2024-01-01/hr=2", "dt=2024-01-02/hr=1",
                                    "dt=2024-01-04/hr=5"])
    assert ours["partition"][1]["sd"]["location"] == "<wh>/<db>.db/events/dt=2024-01-04/hr=5"
    assert ours["values"] == ("ok", [["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"],
                                     ["2024-01-04", "5"]])
    assert ours["names after drops"] == ("ok", ["dt=2024-01-01/hr=1"])
    assert [c["name"] for c in ours["columns added"][1]] == ["id", "name", "amount", "extra"]
    # the table's new column reaches its partitions' schema only with CASCADE: hmsc's alter_table has none
    assert [c["name"] for c in ours["partition columns"][1]] == ["id", "name", "amount"]
    assert [c["name"] for c in ours["columns dropped"][1]] == ["id", "amount", "extra", "dt", "hr"]
    assert ours["tables by name req"] == ("ok", ["events", "ext"])
    assert ours["tables by type"] == ("ok", ["ext"])
    assert [m["tableName"] for m in ours["table meta"][1]] == ["events"]
    assert ours["partitions by names"] == ("ok", [["2024-01-01", "1"]])
    assert ours["drop partitions req"] == ("ok", [["2024-01-01", "1"]])
    assert ours["add partitions req"] == ours["partitions ps"] == ("ok", [["2024-02-01", "1"], ["2024-02-01", "2"]])
    assert ours["partitions by filter"] == ("ok", [["2024-02-01", "1"]])
    assert ours["count by filter"] == ("ok", 2)
    assert ours["names ps"] == ("ok", ["dt=2024-02-01/hr=1", "dt=2024-02-01/hr=2"])
    assert ours["alter partition"] == ("ok", "v")
    assert ours["rename partition"] == ("ok", ["dt=2024-02-01/hr=1", "dt=2024-02-02/hr=2"])
    assert ours["truncate"] == ("ok", None)
    assert ours["tables"] == ("ok", ["events"])


# ----------------------------------------------------------- partition values, statistics, constraints (stores)

def _stats_objs(k: int) -> list[Any]:
    """One statistics object of each kind for the `st` table's columns, scaled by k."""
    return [
        T.ColumnStatisticsObj("id", "int", T.ColumnStatisticsData(longStats=T.LongColumnStatsData(
            lowValue=k, highValue=100 * k, numNulls=k, numDVs=10 * k))),
        T.ColumnStatisticsObj("name", "string", T.ColumnStatisticsData(stringStats=T.StringColumnStatsData(
            maxColLen=20 + k, avgColLen=5.5, numNulls=0, numDVs=7))),
        T.ColumnStatisticsObj("amount", "decimal(10,2)", T.ColumnStatisticsData(decimalStats=T.DecimalColumnStatsData(
            lowValue=T.Decimal(scale=2, unscaled=(100 * k).to_bytes(2, "big")),
            highValue=T.Decimal(scale=2, unscaled=(900 * k).to_bytes(3, "big")), numNulls=1, numDVs=3))),
        T.ColumnStatisticsObj("d", "date", T.ColumnStatisticsData(dateStats=T.DateColumnStatsData(
            lowValue=T.Date(18000 + k), highValue=T.Date(19000 + k), numNulls=0, numDVs=4))),
        T.ColumnStatisticsObj("x", "double", T.ColumnStatisticsData(doubleStats=T.DoubleColumnStatsData(
            lowValue=-1.5 * k, highValue=2.5 * k, numNulls=2, numDVs=5))),
        T.ColumnStatisticsObj("b", "boolean", T.ColumnStatisticsData(booleanStats=T.BooleanColumnStatsData(
            numTrues=3 * k, numFalses=4, numNulls=1))),
        T.ColumnStatisticsObj("bin", "binary", T.ColumnStatisticsData(binaryStats=T.BinaryColumnStatsData(
            maxColLen=50 * k, avgColLen=12.25, numNulls=k))),
    ]


STATS_COLS = [("id", "int"), ("name", "string"), ("amount", "decimal(10,2)"), ("d", "date"), ("x", "double"),
              ("b", "boolean"), ("bin", "binary")]
ALL_STATS = [n for n, _ in STATS_COLS]


def _by_col(objs: list[Any]) -> list[Any]:
    return sorted(objs, key=lambda o: o.colName)


def _pk(db: str, t: str, col: str, name: str, seq: int = 1) -> Any:
    return T.SQLPrimaryKey(db, t, col, seq, name, False, False, True)


def _fk(db: str, parent: str, pcol: str, child: str, ccol: str, name: str, pk_name: str | None) -> Any:
    return T.SQLForeignKey(db, parent, pcol, db, child, ccol, 1, 0, 0, name, pk_name, False, False, True)


def store_script(c: HiveMetastoreClient, db: str) -> dict[str, Any]:
    run = Steps()
    c.create_database(DatabaseBuilder(db).build())
    # partition values: get_partition_values, through hmsc's helper and as requests of every shape
    keys = [("dt", "string"), ("hr", "int")]
    c.create_table(table(db, "pv", [("a", "int")], keys))
    c.add_partitions_to_table(db, "pv", parts(db, "pv", [
        ["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"], ["2024-01-04", "5"], ["a b=c", "3"]]))
    dt, hr = (T.FieldSchema(n, t) for n, t in keys)

    def values(**kw: Any) -> Any:
        req = T.PartitionValuesRequest(dbName=db, tblName=kw.pop("table", "pv"), partitionKeys=kw.pop("keys", [dt, hr]),
                                       **kw)
        return [r.row for r in c.get_partition_values(req).partitionValues]

    run("values helper", lambda: c.get_partition_values_from_table(db, "pv"))
    run("values one key", lambda: values(keys=[hr]))
    run("values distinct", lambda: values(keys=[dt]))
    run("values not distinct", lambda: values(keys=[dt], applyDistinct=False))
    run("values filter", lambda: values(filter="hr > 1"))
    run("values filter string", lambda: values(filter="dt = '2024-01-01'"))
    run("values max", lambda: values(maxParts=2))
    run("values order", lambda: values(partitionOrder=[hr], ascending=False))
    run("values bad key", lambda: values(keys=[T.FieldSchema("zz", "string")]))
    run("values missing table", lambda: values(table="nope"))
    # column statistics of a table and its partitions, of every kind
    c.create_table(table(db, "st", STATS_COLS, [("p", "string")]))
    c.add_partitions_to_table(db, "st", parts(db, "st", [["a"], ["b"], ["c"]]))

    def desc(part: str | None = None) -> Any:
        return T.ColumnStatisticsDesc(isTblLevel=part is None, dbName=db, tableName="st", partName=part,
                                      lastAnalyzed=1700000000)

    run("update table stats", lambda: c.update_table_column_statistics(T.ColumnStatistics(desc(), _stats_objs(1))))
    run("table column stats", lambda: c.get_table_column_statistics(db, "st", "amount"))
    run("table stats req", lambda: _by_col(c.get_table_statistics_req(
        T.TableStatsRequest(db, "st", [*ALL_STATS, "nope"])).tableStats))
    run("table stats req upper", lambda: c.get_table_statistics_req(T.TableStatsRequest(db, "ST", ["ID"])).tableStats)
    run("update partition a", lambda: c.update_partition_column_statistics(
        T.ColumnStatistics(desc("p=a"), _stats_objs(1))))
    run("update partition b", lambda: c.update_partition_column_statistics(
        T.ColumnStatistics(desc("p=b"), _stats_objs(2))))
    run("set aggr c", lambda: c.set_aggr_stats_for(T.SetPartitionsStatsRequest(
        [T.ColumnStatistics(desc("p=c"), _stats_objs(3))])))
    run("partition column stats", lambda: c.get_partition_column_statistics(db, "st", "p=b", "d"))
    run("partitions stats req", lambda: {k: _by_col(v) for k, v in c.get_partitions_statistics_req(
        T.PartitionsStatsRequest(db, "st", ["id", "amount", "bin"], ["p=a", "p=b", "p=zz"])).partStats.items()})
    run("aggr all", lambda: c.get_aggr_stats_for(T.PartitionsStatsRequest(db, "st", ALL_STATS, ["p=a", "p=b", "p=c"])))
    run("aggr long", lambda: c.get_aggr_stats_for(T.PartitionsStatsRequest(db, "st", ["id", "x"],
                                                                              ["p=a", "p=b", "p=c"])))
    run("aggr two", lambda: c.get_aggr_stats_for(T.PartitionsStatsRequest(db, "st", ["id"], ["p=a", "p=b"])))
    run("aggr none", lambda: c.get_aggr_stats_for(T.PartitionsStatsRequest(db, "st", ["id"], [])))
    run("set aggr merge", lambda: c.set_aggr_stats_for(T.SetPartitionsStatsRequest(
        [T.ColumnStatistics(desc("p=c"), _stats_objs(5)[:1])], needMerge=True)))
    run("merged", lambda: c.get_partition_column_statistics(db, "st", "p=c", "id"))
    run("partition parameters", lambda: c.get_partition(db, "st", ["b"]).parameters)
    run("delete partition column", lambda: c.delete_partition_column_statistics(db, "st", "p=a", "id"))
    run("delete partition column again", lambda: c.delete_partition_column_statistics(db, "st", "p=a", "id"))
    run("delete table column", lambda: c.delete_table_column_statistics(db, "st", "name"))
    run("table stats after delete", lambda: [o.colName for o in _by_col(c.get_table_statistics_req(
        T.TableStatsRequest(db, "st", ALL_STATS)).tableStats)])
    run("delete table all", lambda: c.delete_table_column_statistics(db, "st", None))
    run("table stats none", lambda: c.get_table_statistics_req(T.TableStatsRequest(db, "st", ALL_STATS)).tableStats)
    run("update missing column", lambda: c.update_table_column_statistics(T.ColumnStatistics(desc(), [
        T.ColumnStatisticsObj("zz", "int", T.ColumnStatisticsData(longStats=T.LongColumnStatsData(
            numNulls=0, numDVs=1)))])))
    run("update missing table", lambda: c.update_table_column_statistics(T.ColumnStatistics(
        T.ColumnStatisticsDesc(True, db, "nope"), _stats_objs(1)[:1])))
    # constraints, as Hive 2.3 has them (Hive 2.3's names are unique in the whole metastore: prefixed)
    n = lambda name: f"{db}_{name}"  # noqa: E731
    parent = table(db, "parent", [("id", "int"), ("code", "string")])
    run("create with constraints", lambda: c.create_table_with_constraints(parent, [_pk(db, "parent", "id", n("pk"))],
                                                                          [], [], [], [], []))
    child = table(db, "child", [("cid", "int"), ("pid", "int")])
    run("create child", lambda: c.create_table_with_constraints(
        child, [], [_fk(db, "parent", "id", "child", "pid", n("fk"), n("pk"))], [], [], [], []))
    run("create plain", lambda: c.create_table_with_constraints(table(db, "plain", [("a", "int")]), [], [], [], [],
                                                                [], []))
    run("add primary key", lambda: c.add_primary_key(T.AddPrimaryKeyRequest([_pk(db, "plain", "a", n("plain_pk"))])))
    run("add primary key again", lambda: c.add_primary_key(T.AddPrimaryKeyRequest([
        _pk(db, "plain", "a", n("plain_pk2"))])))
    run("add foreign key", lambda: c.add_foreign_key(T.AddForeignKeyRequest([
        _fk(db, "plain", "a", "child", "cid", n("fk2"), n("plain_pk"))])))
    run("primary keys", lambda: c.get_primary_keys(T.PrimaryKeysRequest(db, "parent")))
    run("foreign keys of child", lambda: c.get_foreign_keys(T.ForeignKeysRequest(None, None, db, "child")))
    run("foreign keys between", lambda: c.get_foreign_keys(T.ForeignKeysRequest(db, "plain", db, "child")))
    run("drop foreign key", lambda: c.drop_constraint(T.DropConstraintRequest(db, "child", n("fk"))))
    run("drop primary key", lambda: c.drop_constraint(T.DropConstraintRequest(db, "parent", n("pk"))))
    run("primary keys after", lambda: c.get_primary_keys(T.PrimaryKeysRequest(db, "parent")))
    run("foreign keys after", lambda: c.get_foreign_keys(T.ForeignKeysRequest(None, None, db, "child")))
    return run.steps


@pytest.fixture(scope="module")
def store_ours(server: Server) -> Iterator[dict[str, Any]]:
    yield from scripted(server.port, "hmscs", store_script)


@pytest.fixture(scope="module")
def store_reference(reference: Reference) -> Iterator[dict[str, Any]]:  # noqa: F811
    yield from scripted(reference.port, "hmscs", store_script)


STORE_LABELS = [
    "values helper", "values one key", "values distinct", "values not distinct", "values filter",
    "values filter string", "values max", "values order", "values bad key", "values missing table",
    "update table stats", "table column stats", "table stats req", "table stats req upper", "update partition a",
    "update partition b", "set aggr c", "partition column stats", "partitions stats req", "aggr all", "aggr long",
    "aggr two", "aggr none", "set aggr merge", "merged", "partition parameters", "delete partition column",
    "delete partition column again", "delete table column", "table stats after delete", "delete table all",
    "table stats none", "update missing column", "update missing table", "create with constraints", "create child",
    "create plain", "add primary key", "add primary key again", "add foreign key", "primary keys",
    "foreign keys of child", "foreign keys between", "drop foreign key", "drop primary key", "primary keys after",
    "foreign keys after"]


@pytest.mark.slow
@pytest.mark.reference
@pytest.mark.parametrize("label", STORE_LABELS)
def test_store_same_as_hive(label: str, store_ours: dict[str, Any], store_reference: dict[str, Any]) -> None:
    _same(label, store_ours, store_reference)


def _long(lo: int, hi: int, nulls: int, dvs: int) -> dict[str, Any]:
    return {"longStats": {"lowValue": lo, "highValue": hi, "numNulls": nulls, "numDVs": dvs}}


def test_store_answers(store_ours: dict[str, Any]) -> None:
    """What the store script answers here, on each store (equal to Hive's where the reference runs, but
    DIFFERENT)."""
    ours = store_ours
    assert list(ours) == STORE_LABELS
    failed = {k: v for k, v in ours.items() if v[0] != "ok"}
    assert failed == {
        "values bad key": ("MetaException", "Specified key <zz> is not a partitioning key for the table"),
        "values missing table": ("MetaException", "<db>.nope table not found"),
        "delete partition column again": ("NoSuchObjectException", "Column stats doesn't exist for db=<db> "
                                                                   "table=st partition=p=a col=id"),
        "update missing column": ("MetaException", "Column zz doesn't exist in table st in database <db>"),
        "update missing table": ("NoSuchObjectException", "Specified database/table does not exist : <db>.nope"),
        "add primary key again": ("MetaException", " Primary key already exists for: <db>.plain"),
    }, failed
    assert ours["values helper"] == ("ok", [["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"],
                                            ["2024-01-04", "5"], ["a b=c", "3"]])
    assert ours["values one key"] == ("ok", [["1"], ["2"], ["5"], ["3"]])  # distinct, in partition name order
    assert ours["values distinct"] == ("ok", [["2024-01-01"], ["2024-01-02"], ["2024-01-04"], ["a b=c"]])
    assert ours["values not distinct"] == ("ok", [["2024-01-01"], ["2024-01-01"], ["2024-01-02"], ["2024-01-04"],
                                                  ["a b=c"]])
    assert ours["values filter"] == ("ok", [["2024-01-01", "2"], ["2024-01-04", "5"], ["a b=c", "3"]])
    assert ours["values filter string"] == ("ok", [["2024-01-01", "1"], ["2024-01-01", "2"]])
    assert ours["values max"] == ("ok", [["2024-01-01", "1"], ["2024-01-01", "2"]])
    for label in ("update table stats", "update partition a", "update partition b", "set aggr c", "set aggr merge",
                  "delete partition column", "delete table column", "delete table all"):
        assert ours[label] == ("ok", True), label
    stats = {o["colName"]: o["statsData"] for o in ours["table stats req"][1]}
    assert list(stats) == sorted(ALL_STATS)  # the unknown column left out
    assert stats["id"] == _long(1, 100, 1, 10)
    # the unscaled value in its fewest bytes (as Java's BigInteger.toByteArray), whatever width it was sent in
    assert stats["amount"] == {"decimalStats": {"lowValue": {"scale": 2, "unscaled": b"d"},
                                                "highValue": {"scale": 2, "unscaled": b"\x03\x84"},
                                                "numNulls": 1, "numDVs": 3}}
    assert stats["bin"] == {"binaryStats": {"maxColLen": 50, "avgColLen": 12.25, "numNulls": 1}}
    assert ours["table stats req upper"][1] == [o for o in ours["table stats req"][1] if o["colName"] == "id"]
    assert ours["partition column stats"][1]["statsObj"][0]["statsData"] == {
        "dateStats": {"lowValue": {"daysSinceEpoch": 18002}, "highValue": {"daysSinceEpoch": 19002}, "numNulls": 0,
                      "numDVs": 4}}
    assert sorted(ours["partitions stats req"][1]) == ["p=a", "p=b"]
    aggr = {o["colName"]: o["statsData"] for o in ours["aggr all"][1]["colStats"]}
    assert ours["aggr all"][1]["partsFound"] == 3
    assert aggr["id"] == _long(1, 300, 6, 30)
    assert aggr["amount"]["decimalStats"]["lowValue"] == {"scale": 2, "unscaled": b"d"}  # 1.00
    assert aggr["amount"]["decimalStats"]["highValue"] == {"scale": 2, "unscaled": b"\n\x8c"}  # 27.00
    assert aggr["b"] == {"booleanStats": {"numTrues": 18, "numFalses": 12, "numNulls": 3}}
    assert ours["aggr two"][1] == {"colStats": [{"colName": "id", "colType": "int",
                                                 "statsData": _long(1, 200, 3, 20)}], "partsFound": 2}
    assert ours["aggr none"] == ("ok", {"colStats": [], "partsFound": 0})
    assert ours["merged"][1]["statsObj"][0]["statsData"] == _long(3, 500, 8, 50)
    assert ours["table stats after delete"] == ("ok", ["amount", "b", "bin", "d", "id", "x"])
    assert ours["table stats none"] == ("ok", [])
    pks = ours["primary keys"][1]["primaryKeys"]
    assert [(k["column_name"], k["pk_name"], k["rely_cstr"]) for k in pks] == [("id", "<db>_pk", True)]
    fks = ours["foreign keys of child"][1]["foreignKeys"]
    assert [(k["fk_name"], k["pk_name"], k["fkcolumn_name"]) for k in fks] == [
        ("<db>_fk", "<db>_pk", "pid"), ("<db>_fk2", "<db>_plain_pk", "cid")]
    assert ours["foreign keys between"][1]["foreignKeys"] == fks[1:]
    assert ours["primary keys after"] == ("ok", {"primaryKeys": []})
    assert ours["foreign keys after"][1]["foreignKeys"] == fks[1:]


# ------------------------------------------------------------------------- Hive 3's calls, ours alone

@pytest.fixture
def hmsc(server: Server) -> Iterator[HiveMetastoreClient]:
    c = connect(server.port)
    yield c
    c.close()


@pytest.fixture
def db(hmsc: HiveMetastoreClient) -> Iterator[str]:
    name = unique("hmsc")
    hmsc.create_database(DatabaseBuilder(name).build())
    yield name
    hmsc.drop_database(name, True, True)


def test_hive3_constraints(hmsc: HiveMetastoreClient, db: str) -> None:
    """Unique, not-null, default and check constraints: in create_table_with_constraints and added after, read
    back and dropped."""
    c = hmsc
    uk = T.SQLUniqueConstraint("hive", db, "t", "code", 1, "t_uk", False, False, False)
    nn = T.SQLNotNullConstraint("hive", db, "t", "code", "t_nn", False, False, False)
    c.create_table_with_constraints(table(db, "t", [("id", "int"), ("code", "string"), ("n", "int")]),
                                    [_pk(db, "t", "id", "t_pk")], [], [uk], [nn], [], [])
    assert c.get_unique_constraints(T.UniqueConstraintsRequest("hive", db, "t")).uniqueConstraints == [uk]
    assert c.get_not_null_constraints(T.NotNullConstraintsRequest("hive", db, "t")).notNullConstraints == [nn]
    c.add_unique_constraint(T.AddUniqueConstraintRequest([
        T.SQLUniqueConstraint(None, db, "t", "n", 1, "t_uk2", True, False, True)]))
    c.add_not_null_constraint(T.AddNotNullConstraintRequest([
        T.SQLNotNullConstraint(None, db, "t", "n", "t_nn2", True, False, True)]))
    dc = T.SQLDefaultConstraint("hive", db, "t", "n", "7", "t_dc", False, False, False)
    c.add_default_constraint(T.AddDefaultConstraintRequest([dc]))
    cc = T.SQLCheckConstraint("hive", db, "t", "n", "n > 0", "t_cc", False, False, False)
    c.add_check_constraint(T.AddCheckConstraintRequest([cc]))
    uks = c.get_unique_constraints(T.UniqueConstraintsRequest(None, db, "T")).uniqueConstraints
    assert [(u.uk_name, u.column_name, u.catName, u.enable_cstr, u.rely_cstr) for u in uks] == [
        ("t_uk", "code", "hive", False, False), ("t_uk2", "n", "hive", True, True)]
    nns = c.get_not_null_constraints(T.NotNullConstraintsRequest("hive", db, "t")).notNullConstraints
    assert [x.nn_name for x in nns] == ["t_nn", "t_nn2"]
    assert c.get_default_constraints(T.DefaultConstraintsRequest("hive", db, "t")).defaultConstraints == [dc]
    assert c.get_check_constraints(T.CheckConstraintsRequest("hive", db, "t")).checkConstraints == [cc]
    with pytest.raises(T.MetaException):  # a second key named as the first
        c.add_unique_constraint(T.AddUniqueConstraintRequest([
            T.SQLUniqueConstraint("hive", db, "t", "id", 1, "t_uk", False, False, False)]))
    for name in ("t_uk", "t_nn2", "t_dc", "t_cc"):
        c.drop_constraint(T.DropConstraintRequest(db, "t", name))
    assert [u.uk_name for u in c.get_unique_constraints(T.UniqueConstraintsRequest("hive", db, "t")).uniqueConstraints
            ] == ["t_uk2"]
    assert [x.nn_name for x in c.get_not_null_constraints(
        T.NotNullConstraintsRequest("hive", db, "t")).notNullConstraints] == ["t_nn"]
    assert c.get_default_constraints(T.DefaultConstraintsRequest("hive", db, "t")).defaultConstraints == []
    assert c.get_check_constraints(T.CheckConstraintsRequest("hive", db, "t")).checkConstraints == []
    with pytest.raises(T.NoSuchObjectException, match="The constraint: t_uk does not exist"):
        c.drop_constraint(T.DropConstraintRequest(db, "t", "t_uk"))


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_catalogs(hmsc: HiveMetastoreClient, server: Server) -> None:
    """Hive 3's catalog calls: one catalog, `hive`, at the warehouse."""
    c = hmsc
    assert c.get_catalogs().names == ["hive"]
    cat = c.get_catalog(T.GetCatalogRequest("hive")).catalog
    assert (cat.name, cat.locationUri) == ("hive", f"file:{server.warehouse}")
    with pytest.raises(T.NoSuchObjectException, match="No catalog other"):
        c.get_catalog(T.GetCatalogRequest("other"))
    with pytest.raises(T.MetaException, match="Creating catalog other is not supported"):
        c.create_catalog(T.CreateCatalogRequest(T.Catalog("other", "d", f"file:{server.warehouse}/other")))
    with pytest.raises(T.AlreadyExistsException):
        c.create_catalog(T.CreateCatalogRequest(T.Catalog("hive", "d", f"file:{server.warehouse}")))
    with pytest.raises(T.MetaException, match="Can not drop hive catalog"):
        c.drop_catalog(T.DropCatalogRequest("hive"))
    with pytest.raises(T.NoSuchObjectException):
        c.drop_catalog(T.DropCatalogRequest("other"))


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_database_in_a_catalog(hmsc: HiveMetastoreClient) -> None:
    """A database goes into a catalog that exists (Hive 3's InvalidObjectException names a missing one), a table
    into a database of its catalog, a partition into a table of its catalog; the catalog's name is Hive's, lower
    case, whatever the case it was sent in."""
    c = hmsc
    name = unique("hmscc")
    with pytest.raises(T.InvalidObjectException) as e:
        c.create_database(DatabaseBuilder(name, catalog_name="other").build())
    assert e.value.message == "No such catalog other"
    with pytest.raises(T.NoSuchObjectException):
        c.get_database(name)
    c.create_database(DatabaseBuilder(name, catalog_name="HIVE").build())
    try:
        assert c.get_database(name).catalogName == "hive"
        # a table or partition of another catalog: its database, its table are not there
        with pytest.raises(T.NoSuchObjectException) as e:
            c.create_table(TableBuilder("t", name, sd([("a", "int")]), cat_name="other").build())
        assert e.value.message == f"There is no database other.{name}"
        c.create_table(TableBuilder("t", name, sd([("a", "int")]), cat_name="Hive",
                                    partition_keys=[ColumnBuilder("p", "string").build()]).build())
        assert c.get_table(name, "t").catName == "hive"
        with pytest.raises(T.InvalidObjectException) as e:
            c.add_partition(PartitionBuilder(["1"], name, "t", cat_name="other").build())
        assert e.value.message == "Unable to add partition because table or database do not exist"
        with pytest.raises(T.InvalidObjectException) as e:
            c.add_partitions(parts(name, "t", [["2"]]) + [PartitionBuilder(["3"], name, "t", cat_name="x").build()])
        assert e.value.message == f"Unable to add partitions because database or table {name}.t does not exist"
        c.add_partition(PartitionBuilder(["4"], name, "t", cat_name="HIVE").build())
        assert c.get_partition_names(name, "t", -1) == ["p=4"]
    finally:
        c.drop_database(name, True, True)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_builder_defaults(hmsc: HiveMetastoreClient, db: str) -> None:
    """What hmsc's builders leave unset: a table's type (MANAGED_TABLE here; Hive stores none, and then fails its
    own get_table_meta on it), numBuckets (0, as Hive reads an unset i32), a partition's storage descriptor (the
    table's, as append_partition makes it; Hive fails with a NullPointerException)."""
    c = hmsc
    c.create_table(table(db, "t", [("a", "int")], [("p", "string")], table_type=None))
    t = c.get_table(db, "t")
    assert (t.tableType, t.sd.numBuckets) == ("MANAGED_TABLE", 0)
    assert [m.tableType for m in c.get_table_meta(db, "t", None)] == ["MANAGED_TABLE"]
    added = c.add_partition(PartitionBuilder(["x"], db, "t").build())
    assert added.sd.location == f"{t.sd.location}/p=x"
    got = c.get_partition(db, "t", ["x"])
    assert (got.sd.cols, got.sd.inputFormat, got.sd.outputFormat, got.sd.serdeInfo.serializationLib) == (
        t.sd.cols, TEXT_IN, TEXT_OUT, LAZY)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_drop_columns_setting(hmsc: HiveMetastoreClient, db: str, server: Server) -> None:
    """drop_columns_from_table sets Hive 3's hive.metastore.disallow.incompatible.col.type.changes (true by
    default) to false for its connection, then alters the table: the setting is the connection's alone."""
    c = hmsc
    assert c.getMetaConf(DISALLOW) == "true"
    c.create_table(table(db, "t", [("a", "int"), ("b", "string"), ("c", "int")]))
    c.drop_columns_from_table(db, "t", ["b"])
    assert [x.name for x in c.get_fields(db, "t")] == ["a", "c"]
    assert c.getMetaConf(DISALLOW) == "false"
    with HiveMetastoreClient("127.0.0.1", server.port) as other:
        assert other.getMetaConf(DISALLOW) == "true"
