"""The small Thrift methods engines call (issue 21), through the real Thrift front on every backend, and against the
reference Hive 2.3.10 metastore where Hive 2.3 has the method: the same results and errors.

Clients: the Apache Thrift client of Hive 4's IDL (`hive_metastore`, PyIceberg's: it speaks the Hive 3+ methods
and shapes) and this project's client of our own IDL (metastore.thrift.client: Hive 2.3's shape of
AddDynamicPartitions)."""

from __future__ import annotations

import copy
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hive_metastore.ttypes import (
    AddDynamicPartitions,
    CacheFileMetadataRequest,
    ClearFileMetadataRequest,
    CreateCatalogRequest,
    Database,
    DropCatalogRequest,
    EnvironmentContext,
    FieldSchema,
    GetCatalogRequest,
    GetDatabaseRequest,
    GetFileMetadataByExprRequest,
    GetFileMetadataRequest,
    GetRuntimeStatsRequest,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
    NoSuchTxnException,
    OpenTxnRequest,
    Partition,
    PartitionsByExprRequest,
    PartitionValuesRequest,
    PutFileMetadataRequest,
    RuntimeStat,
    Table,
    TruncateTableRequest,
    TxnAbortedException,
    UnknownDBException,
)
from hive_metastore.ttypes import Catalog as HiveCatalog
from thrift.Thrift import TApplicationException

from metastore.thrift import hms
from metastore.thrift.client import MetastoreClient

from common import parquet_storage
from conftest import Database as StoreDatabase
from conftest import Server, unique
from reference import Reference, connected, made_on_both, reference  # noqa: F401  (the session fixture)

pytestmark = [pytest.mark.reference]

KEYS = [("ds", "string"), ("hr", "int")]
VALUES = [["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"], ["2024-01-03", "3"], ["b", "2"]]


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    """("OK", result) or (exception type, message): what a call answered, to compare two servers."""
    try:
        return "OK", fn(*args)
    except TApplicationException as e:
        return f"TApplicationException {e.type}", e.message
    except Exception as e:  # Hive's declared exceptions
        return type(e).__name__, getattr(e, "message", str(e))


def _make(c: Any, db: str) -> None:
    """Database `db` with table p (partitioned by ds, hr; parameters for the table filter), u (unpartitioned,
    owner bob) and x (external)."""
    c.create_database(Database(name=db, description="", parameters={}))
    c.create_table(Table(tableName="p", dbName=db, owner="alice", sd=parquet_storage([("x", "int")]),
                         parameters={"retention": "30", "Kind": "Fact"}, tableType="MANAGED_TABLE",
                         partitionKeys=[FieldSchema(k, t, None) for k, t in KEYS]))
    c.create_table(Table(tableName="u", dbName=db, owner="bob", sd=parquet_storage([("x", "int")]),
                         parameters={"retention": "90"}, tableType="MANAGED_TABLE", partitionKeys=[]))
    c.create_table(Table(tableName="x", dbName=db, owner="bob", sd=parquet_storage([("x", "int")]),
                         parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE", partitionKeys=[]))
    sd = parquet_storage([("x", "int")])
    c.add_partitions([Partition(values=v, dbName=db, tableName="p", sd=copy.deepcopy(sd), parameters={})
                      for v in VALUES])


@pytest.fixture(scope="module")
def both(server: Server, reference: Reference) -> Iterator[tuple[int, int, str]]:  # noqa: F811
    """(our port, the reference's port, the database holding the tables of _make on both)."""
    yield from made_on_both((server.port, reference.port), "m", _make)


def _same(both: tuple[int, int, str], call: Any, messages: bool = True) -> tuple[str, Any]:
    """`call(client, db)` on both servers: the outcome, asserted equal (an error's type only, without
    `messages`)."""
    ours, ref, db = both
    with connected(ours) as a, connected(ref) as b:
        mine, theirs = _outcome(call, a, db), _outcome(call, b, db)
    if messages or mine[0] == "OK" or theirs[0] == "OK":
        assert mine == theirs
    else:
        assert mine[0] == theirs[0], (mine, theirs)
    return mine


# ---- unknown methods, flushCache, partition_name_has_valid_characters -------------------------------------------

def test_an_unknown_method_is_named_as_java_servers_name_it(both: tuple[int, int, str]) -> None:
    # get_tables_ext is Hive 4's, unknown to both; the connection stays usable
    from hive_metastore.ttypes import GetTablesExtRequest
    req = GetTablesExtRequest(catalog="hive", database="default", tableNamePattern="*", requestedFields=1)
    got = _same(both, lambda c, db: c.get_tables_ext(req))
    assert got == (f"TApplicationException {TApplicationException.UNKNOWN_METHOD}",
                   "Invalid method name: 'get_tables_ext'")
    with connected(both[0]) as c:
        assert _outcome(c.get_tables_ext, req)[0].startswith("TApplicationException")
        assert c.get_all_databases()


def test_flush_cache_answers(both: tuple[int, int, str]) -> None:
    assert _same(both, lambda c, db: c.flushCache()) == ("OK", None)


@pytest.mark.parametrize("vals", [["a", "b"], ["2024-01-01", "x y/z"], [], ["é", "*?"]])
@pytest.mark.parametrize("throw", [True, False])
def test_partition_names_are_valid_without_a_whitelist(both: tuple[int, int, str], vals: list[str],
                                                      throw: bool) -> None:
    assert _same(both, lambda c, db: c.partition_name_has_valid_characters(vals, throw)) == ("OK", True)


def test_the_whitelist_pattern_is_the_servers(database: StoreDatabase, tmp_path: Path) -> None:
    site = tmp_path / "hive-site.xml"
    site.write_text('<?xml version="1.0"?>\n<configuration><property><name>hive.metastore.partition.name.whitelist'
                    '.pattern</name><value>[a-z0-9-]*</value></property></configuration>\n')
    srv = Server(database, tmp_path, "--no-rest", env={"METASTORE_CONFIG": str(site)}).start()
    try:
        with connected(srv.port) as c:
            assert c.partition_name_has_valid_characters(["abc", "2024-01-01"], True) is True
            assert c.partition_name_has_valid_characters(["abc", "A"], False) is False
            with pytest.raises(MetaException) as e:
                c.partition_name_has_valid_characters(["ok", "x y"], True)
            assert e.value.message == ("Partition value 'x y' contains a character not matched by whitelist pattern "
                                       "'[a-z0-9-]*'.  (configure with hive.metastore.partition.name.whitelist"
                                       ".pattern)")
            # a connection's setMetaConf does not change it (as in Hive, whose handler reads it once)
            c.setMetaConf("hive.metastore.partition.name.whitelist.pattern", ".*")
            assert c.partition_name_has_valid_characters(["A"], False) is False
    finally:
        srv.stop()


# ---- add_dynamic_partitions --------------------------------------------------------------------------------------

def _ours_23(port: int) -> MetastoreClient:
    return MetastoreClient(f"thrift://127.0.0.1:{port}")


def test_add_dynamic_partitions_in_both_generations_shapes(both: tuple[int, int, str]) -> None:
    """Hive 2.3's request (our IDL's client) and Hive 3+'s (writeid at field 2, the rest one further on) are both
    answered; a transaction that is not open gets the reference's errors. (The reference itself fails the
    request of an open transaction with an internal error: its Derby store lacks the ACID tables' rows Hive
    writes there; with them Hive answers nothing, as this server does.)"""
    from hive_metastore.ttypes import AbortTxnRequest, CommitTxnRequest
    ours, ref, db = both
    errors = []
    for port in (ours, ref):
        with connected(port) as c, _ours_23(port) as old:
            txn, aborted = c.open_txns(OpenTxnRequest(num_txns=2, user="u", hostname="h")).txn_ids
            c.abort_txn(AbortTxnRequest(txnid=aborted))
            v23 = hms.AddDynamicPartitions(txnid=txn, dbname=db, tablename="p", partitionnames=["ds=b/hr=2"])
            if port == ours:
                assert _outcome(old.forward, "add_dynamic_partitions", v23) == ("OK", None)
                v3 = AddDynamicPartitions(txnid=txn, writeid=1, dbname=db, tablename="p",
                                          partitionnames=["ds=b/hr=2"])
                assert _outcome(c.add_dynamic_partitions, v3) == ("OK", None)
                v3.txnid = 10 ** 12
                assert _outcome(c.add_dynamic_partitions, v3)[0] == "NoSuchTxnException"
            out = []
            for t in (aborted, 10 ** 12):
                v23.txnid = t
                out.append(_outcome(old.forward, "add_dynamic_partitions", v23))
            c.commit_txn(CommitTxnRequest(txnid=txn))
        errors.append([(kind, msg.replace(str(aborted), "A")) for kind, msg in out])
    assert errors[0] == errors[1]
    assert [k for k, _ in errors[0]] == ["TxnAbortedException", "NoSuchTxnException"]


# ---- truncate_table ----------------------------------------------------------------------------------------------

def _local(location: str) -> Path:
    return Path(location.removeprefix("file:"))


def test_truncate_deletes_the_data_and_resets_basic_statistics(server: Server) -> None:
    db = unique("tr")
    with connected(server.port) as c:
        _make(c, db)
        u = c.get_table(db, "u")
        d = _local(u.sd.location)
        (d / "part-0.parquet").write_bytes(b"x" * 100)
        (d / "sub").mkdir()
        (d / "sub" / "f").write_bytes(b"y")
        u.parameters.update(numRows="7", rawDataSize="70", COLUMN_STATS_ACCURATE=json.dumps(
            {"BASIC_STATS": "true", "COLUMN_STATS": {"x": "true"}}))
        c.alter_table(db, "u", u)
        before = c.get_current_notificationEventId().eventId
        c.truncate_table(db, "u", None)
        assert d.is_dir() and list(d.iterdir()) == []
        params = c.get_table(db, "u").parameters
        assert (params["numFiles"], params["totalSize"], params["numRows"], params["rawDataSize"]) == (
            "0", "0", "0", "0")
        assert json.loads(params["COLUMN_STATS_ACCURATE"]) == {"BASIC_STATS": "true"}
        from hive_metastore.ttypes import NotificationEventRequest
        events = c.get_next_notification(NotificationEventRequest(lastEvent=before, maxEvents=10)).events
        assert [e.eventType for e in events] == ["ALTER_TABLE"]

        # partitions: only those named, through truncate_table_req
        parts = {tuple(p.values): p for p in c.get_partitions(db, "p", -1)}
        for p in parts.values():
            (_local(p.sd.location) / "f").write_bytes(b"z")
        c.truncate_table_req(TruncateTableRequest(dbName=db, tableName="p", partNames=["ds=b/hr=2"]))
        left = {tuple(p.values): p for p in c.get_partitions(db, "p", -1)}
        for vals, p in left.items():
            files = list(_local(p.sd.location).iterdir())
            assert files == ([] if vals == ("b", "2") else [_local(p.sd.location) / "f"]), vals
        assert left[("b", "2")].parameters["numFiles"] == "0"
        assert left[("2024-01-01", "1")].parameters == parts[("2024-01-01", "1")].parameters
        c.truncate_table(db, "p", None)
        assert all(list(_local(p.sd.location).iterdir()) == [] for p in c.get_partitions(db, "p", -1))

        # Hive refuses non-managed tables; a missing table is a MetaException (the only one declared)
        x = c.get_table(db, "x")
        (_local(x.sd.location) / "keep").write_bytes(b"k")
        with pytest.raises(MetaException) as e:
            c.truncate_table(db, "x", None)
        assert e.value.message == "Cannot truncate non-managed table x."
        assert (_local(x.sd.location) / "keep").exists()
        with pytest.raises(MetaException):
            c.truncate_table(db, "nope", None)
        c.drop_database(db, True, True)


def test_truncate_leaves_a_partition_outside_the_tables_directory(server: Server, tmp_path: Path) -> None:
    db = unique("tr")
    with connected(server.port) as c:
        _make(c, db)
        p = c.get_table(db, "p")
        inside = Path(str(server.warehouse)) / "elsewhere" / unique("d")
        inside.mkdir(parents=True)
        (inside / "data").write_bytes(b"d")
        sd = parquet_storage([("x", "int")], location="file:" + str(inside))
        c.add_partition(Partition(values=["o", "9"], dbName=db, tableName="p", sd=sd, parameters={}))
        c.truncate_table(db, "p", ["ds=o/hr=9"])
        assert (inside / "data").exists()  # inside the warehouse, but not the table's: left
        assert p.sd.location
        c.drop_database(db, True, True)


# ---- partition values, names, specs -----------------------------------------------------------------------------

@pytest.mark.parametrize("keys,distinct,filt,order,asc,limit", [
    (["ds"], True, None, [], True, -1),
    (["ds"], False, None, [], True, -1),
    (["hr", "ds"], True, None, [], True, -1),
    (["ds", "hr"], True, 'ds > "2024-01-01"', [], True, -1),
    (["ds"], True, None, ["ds"], False, -1),  # Hive orders nothing by these
    (["ds"], True, None, [], True, 2),
    (["nope"], True, None, [], True, -1),  # Hive: a MetaException of its query's failure
])
def test_partition_values_as_the_reference(both: tuple[int, int, str], keys: list[str], distinct: bool,
                                           filt: str | None, order: list[str], asc: bool, limit: int) -> None:
    types = dict(KEYS)

    def call(c: Any, db: str) -> Any:
        req = PartitionValuesRequest(dbName=db, tblName="p", partitionKeys=[FieldSchema(k, types.get(k, "string"),
                                                                                        None) for k in keys],
                                     applyDistinct=distinct, filter=filt,
                                     partitionOrder=[FieldSchema(k, types[k], None) for k in order] or None,
                                     ascending=asc, maxParts=limit)
        return sorted(r.row for r in c.get_partition_values(req).partitionValues)
    _same(both, call, messages=keys != ["nope"])


def test_partition_values_of_a_missing_table(both: tuple[int, int, str]) -> None:
    req = PartitionValuesRequest(dbName="nope", tblName="p", partitionKeys=[FieldSchema("ds", "string", None)])
    kind, _ = _same(both, lambda c, db: c.get_partition_values(req), messages=False)
    assert kind == "MetaException"


def _spec_shape(specs: list[Any]) -> list[Any]:
    out = []
    for s in specs:
        shared = s.sharedSDPartitionSpec
        out.append((s.dbName, s.tableName, s.rootPath.rstrip("/").rsplit("/", 1)[-1],
                    None if shared is None else (shared.sd.inputFormat, shared.sd.location == s.rootPath,
                                                 sorted((tuple(p.values), p.relativePath) for p in shared.partitions)),
                    None if s.partitionList is None else sorted(tuple(p.values) for p in s.partitionList.partitions)))
    return out


def test_partitions_pspec_as_the_reference(both: tuple[int, int, str]) -> None:
    ungrouped = _same(both, lambda c, db: _spec_shape(c.get_partitions_pspec(db, "p", -1)))[1]
    assert ungrouped[0][3] is None and len(ungrouped[0][4]) == len(VALUES)
    _same(both, lambda c, db: _spec_shape(c.get_partitions_pspec(db, "u", -1)))
    assert _same(both, lambda c, db: len(c.get_partitions_pspec(db, "p", 2)[0].partitionList.partitions)) == (
        "OK", 2)
    assert _same(both, lambda c, db: c.get_partitions_pspec(db, "nope", -1))[0] == "NoSuchObjectException"
    # grouped by storage, sharing the table's location, when the table asks for it
    ours, ref, db = both
    for port in (ours, ref):
        with connected(port) as c:
            t = c.get_table(db, "p")
            t.parameters["hive.hcatalog.partition.spec.grouping.enabled"] = "true"
            c.alter_table(db, "p", t)
    try:
        grouped = _same(both, lambda c, db: _spec_shape(c.get_partitions_pspec(db, "p", -1)))[1]
        assert grouped[0][3] is not None and grouped[0][3][1] and len(grouped[0][3][2]) == len(VALUES)
    finally:
        for port in (ours, ref):
            with connected(port) as c:
                t = c.get_table(db, "p")
                del t.parameters["hive.hcatalog.partition.spec.grouping.enabled"]
                c.alter_table(db, "p", t)


def test_partition_names_req(server: Server) -> None:
    db = unique("n")
    with connected(server.port) as c:
        _make(c, db)
        names = c.get_partition_names_req(PartitionsByExprRequest(dbName=db, tblName="p", expr=b"", maxParts=-1))
        assert sorted(names) == sorted(c.get_partition_names(db, "p", -1)) and len(names) == len(VALUES)
        assert len(c.get_partition_names_req(PartitionsByExprRequest(dbName=db, tblName="p", expr=b"",
                                                                     maxParts=2))) == 2
        with pytest.raises(NoSuchObjectException):
            c.get_partition_names_req(PartitionsByExprRequest(dbName=db, tblName="nope", expr=b"", maxParts=-1))
        c.drop_database(db, True, True)


# ---- tables by filter --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("filt", [
    'hive_filter_field_params__retention = "30"',
    'hive_filter_field_params__retention <> "30"',
    "hive_filter_field_params__retention = 90",
    'hive_filter_field_params__Kind = "Fact"',
    'hive_filter_field_params__retention = "30" or hive_filter_field_params__retention = "90"',
    'hive_filter_field_owner__ = "bob"',
    'hive_filter_field_owner__ like "ali.*"',
    "hive_filter_field_last_access__ = 0",
    'hive_filter_field_params__missing = "x"',
    'hive_filter_field_params__retention > "3"',
    'hive_filter_field_params__retention like "3.*"',
    'hive_filter_field_last_access__ like "3.*"',
    'owner = "bob"',
    "hive_filter_field_params__retention = ",
])
def test_table_names_by_filter_as_the_reference(both: tuple[int, int, str], filt: str) -> None:
    # a filter that does not parse: both say so, in their own parser's words; Hive lists the operators of
    # parameters from a HashSet of enums (in an order that changes from one JVM to the next)
    kind, got = _same(both, lambda c, db: sorted(c.get_table_names_by_filter(db, filt, -1)),
                      messages=not filt.endswith("= ") and " > " not in filt)
    if kind != "OK":
        assert kind == "MetaException"


def test_table_names_by_filter_edges(both: tuple[int, int, str]) -> None:
    assert _same(both, lambda c, db: len(c.get_table_names_by_filter(db, "hive_filter_field_last_access__ = 0",
                                                                       1)))[1] == 1
    _same(both, lambda c, db: c.get_table_names_by_filter("", 'hive_filter_field_owner__ = "bob"', -1))
    ours, _, db = both
    with connected(ours) as c:
        with pytest.raises(UnknownDBException):
            c.get_table_names_by_filter("", "hive_filter_field_owner__ = \"bob\"", -1)
        with pytest.raises(InvalidOperationException):
            c.get_table_names_by_filter(db, None, -1)


# ---- databases and catalogs (Hive 3+) -----------------------------------------------------------------------------

def test_database_req_and_catalogs(server: Server) -> None:
    with connected(server.port) as c:
        assert c.get_database_req(GetDatabaseRequest(name="default")).name == "default"
        assert c.get_database_req(GetDatabaseRequest(name="default", catalogName="hive")).name == "default"
        with pytest.raises(NoSuchObjectException):
            c.get_database_req(GetDatabaseRequest(name="default", catalogName="spark"))
        with pytest.raises(NoSuchObjectException):
            c.get_database_req(GetDatabaseRequest(name=unique("no")))
        assert c.get_catalogs().names == ["hive"]
        cat = c.get_catalog(GetCatalogRequest(name="hive")).catalog
        assert cat.name == "hive" and cat.locationUri == "file:" + os.path.abspath(server.warehouse)
        with pytest.raises(NoSuchObjectException):
            c.get_catalog(GetCatalogRequest(name="other"))
        from hive_metastore.ttypes import AlreadyExistsException
        with pytest.raises(AlreadyExistsException):
            c.create_catalog(CreateCatalogRequest(catalog=HiveCatalog(name="hive", locationUri="file:/tmp/x")))
        with pytest.raises(MetaException) as e:
            c.create_catalog(CreateCatalogRequest(catalog=HiveCatalog(name="other", locationUri="file:/tmp/x")))
        assert "not supported" in e.value.message
        with pytest.raises(MetaException) as e:
            c.drop_catalog(DropCatalogRequest(name="hive"))
        assert e.value.message == "Can not drop hive catalog"
        with pytest.raises(NoSuchObjectException):
            c.drop_catalog(DropCatalogRequest(name="other"))
        assert c.get_catalogs().names == ["hive"]


def test_the_stores_uuid_is_kept(server: Server) -> None:
    with connected(server.port) as c:
        first = c.get_metastore_db_uuid()
        assert str(uuid.UUID(first)) == first
    server.stop()
    server.start()
    with connected(server.port) as c:
        assert c.get_metastore_db_uuid() == first


# ---- file metadata, runtime statistics, materialized views ------------------------------------------------------

def test_file_metadata_as_the_reference(both: tuple[int, int, str]) -> None:
    r = _same(both, lambda c, db: c.get_file_metadata(GetFileMetadataRequest(fileIds=[1, 2])))[1]
    assert (r.metadata, r.isSupported) == ({}, False)
    r = _same(both, lambda c, db: c.get_file_metadata_by_expr(GetFileMetadataByExprRequest(fileIds=[3],
                                                                                           expr=b"x")))[1]
    assert (r.metadata, r.isSupported) == ({}, False)
    r = _same(both, lambda c, db: c.cache_file_metadata(CacheFileMetadataRequest(dbName=db, tblName="p")))[1]
    assert r.isSupported is False
    _same(both, lambda c, db: c.put_file_metadata(PutFileMetadataRequest(fileIds=[1], metadata=[b"m"])))
    # Hive 2.3's ObjectStore fails a clear (an internal error); here it is the no-op it can only be
    ours, ref, db = both
    req = ClearFileMetadataRequest(fileIds=[1])
    with connected(ours) as a, connected(ref) as b:
        assert _outcome(a.clear_file_metadata, req)[0] == "OK"
        internal = f"TApplicationException {TApplicationException.INTERNAL_ERROR}"
        assert _outcome(b.clear_file_metadata, req)[0] == internal


def test_runtime_stats_and_materialized_views(server: Server) -> None:
    with connected(server.port) as c:
        c.add_runtime_stats(RuntimeStat(createTime=1, weight=1, payload=b"p"))
        assert c.get_runtime_stats(GetRuntimeStatsRequest(maxWeight=10, maxCreateTime=0)) == []
        db = unique("mv")
        _make(c, db)
        assert c.get_materialized_views_for_rewriting(db) == []
        mv = Table(tableName="mv", dbName=db, owner="o", sd=parquet_storage([("x", "int")]), parameters={},
                   tableType="MATERIALIZED_VIEW", partitionKeys=[], rewriteEnabled=True,
                   viewOriginalText="select 1", viewExpandedText="select 1")
        c.create_table_with_environment_context(mv, EnvironmentContext(properties={}))
        assert c.get_materialized_views_for_rewriting(db) == ["mv"]
        c.drop_database(db, True, True)


def test_missing_database_calls(both: tuple[int, int, str]) -> None:
    kind, _ = _same(both, lambda c, db: c.get_partitions_pspec("nodb_" + db, "p", -1))
    assert kind == "NoSuchObjectException"
    with connected(both[0]) as c:
        with pytest.raises(NoSuchTxnException):
            c.add_dynamic_partitions(AddDynamicPartitions(txnid=10 ** 12, writeid=1, dbname="d", tablename="t",
                                                          partitionnames=[]))
        assert TxnAbortedException  # imported for the shapes above
