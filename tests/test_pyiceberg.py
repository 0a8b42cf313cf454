"""PyIceberg's HiveCatalog (a Hive 4 Thrift client) against `metastore serve`, on every backend.

Namespaces: list, create, load their properties, update them, drop them. Tables: the catalog lists only
Iceberg tables (table_type=ICEBERG), so the database also holds tables as Spark's Hive client writes
them (a Hive Parquet table, a data source table, a view), which the server must return and PyIceberg must
filter out, next to a table registered the way Iceberg's own Hive catalog registers one. What each call
returns was checked against the real Hive 2.3.10 metastore (../shared/reference-hms).
"""

from __future__ import annotations

import time

import pytest
from hive_metastore.ttypes import FieldSchema, InvalidObjectException, SerDeInfo, StorageDescriptor, Table

from conftest import unique

pytest.importorskip("pyiceberg.catalog.hive")

from pyiceberg.catalog.hive import HiveCatalog  # noqa: E402
from pyiceberg.exceptions import (  # noqa: E402
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchPropertyException,
)

PARQUET = ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")


def spark_table(db: str, name: str, location: str, *, provider: str | None = None, partitioned: bool = False,
                view: str | None = None) -> Table:
    """A table as Spark 4's Hive client creates it (fields and parameters as it sends them)."""
    cols = [FieldSchema("id", "int", None), FieldSchema("name", "string", None)]
    keys = [FieldSchema("ds", "string", None)] if partitioned else []
    fields = ",".join(f'{{"name":"{c.name}","type":"{"integer" if c.type == "int" else c.type}","nullable":true,'
                      f'"metadata":{{}}}}' for c in cols + keys)
    params = {"spark.sql.create.version": "4.3.0",
              "spark.sql.sources.schema": f'{{"type":"struct","fields":[{fields}]}}'}
    if keys:
        params.update({"spark.sql.sources.schema.numPartCols": "1", "spark.sql.sources.schema.partCol.0": "ds",
                       "spark.sql.partitionProvider": "catalog"})
    serde = {"serialization.format": "1"}
    if provider:
        params["spark.sql.sources.provider"] = provider
        serde["path"] = location
    if view:
        sd = StorageDescriptor(cols=cols, location=None, inputFormat="org.apache.hadoop.mapred.SequenceFileInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
                               serdeInfo=SerDeInfo(None, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                                                   dict(serde)),
                               compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={})
        params = {"spark.sql.create.version": "4.3.0", "view.sqlConfig.spark.sql.session.timeZone": "UTC",
                  "view.query.out.col.0": "id", "view.query.out.col.1": "name", "view.query.out.numCols": "2",
                  "view.catalogAndNamespace.numParts": "2", "view.catalogAndNamespace.part.0": "spark_catalog",
                  "view.catalogAndNamespace.part.1": db}
        return Table(tableName=name, dbName=db, owner="spark", createTime=int(time.time()), lastAccessTime=0,
                     retention=0, sd=sd, partitionKeys=[], parameters=params, viewOriginalText=view,
                     viewExpandedText=view, tableType="VIRTUAL_VIEW")
    sd = StorageDescriptor(cols=cols, location=location, inputFormat=PARQUET[0], outputFormat=PARQUET[1],
                           serdeInfo=SerDeInfo(None, PARQUET[2], serde), compressed=False, numBuckets=-1,
                           bucketCols=[], sortCols=[], parameters={})
    return Table(tableName=name, dbName=db, owner="spark", createTime=int(time.time()), lastAccessTime=0,
                 retention=0, sd=sd, partitionKeys=keys, parameters=params, tableType="MANAGED_TABLE")


def iceberg_table(db: str, name: str, location: str) -> Table:
    """A table as Iceberg's HiveCatalog registers one: an external table pointing at its metadata file."""
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None)], location=location,
                           inputFormat="org.apache.hadoop.mapred.FileInputFormat",
                           outputFormat="org.apache.hadoop.mapred.FileOutputFormat",
                           serdeInfo=SerDeInfo(None, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {}),
                           compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={})
    return Table(tableName=name, dbName=db, owner="iceberg", createTime=int(time.time()), lastAccessTime=0,
                 retention=0, sd=sd, partitionKeys=[], tableType="EXTERNAL_TABLE",
                 parameters={"EXTERNAL": "TRUE", "table_type": "ICEBERG",
                             "metadata_location": f"{location}/metadata/00000-x.metadata.json"})


@pytest.fixture
def catalog(server) -> HiveCatalog:
    return HiveCatalog("hms", uri=server.uri, warehouse=f"file:{server.warehouse}")


def test_namespaces(catalog: HiveCatalog, server) -> None:
    ns = unique("ice")
    assert ("default",) in catalog.list_namespaces()
    assert (ns,) not in catalog.list_namespaces()
    assert catalog.list_namespaces(("default",)) == []  # no nested namespaces

    catalog.create_namespace(ns, {"comment": "made by pyiceberg", "team": "lake"})
    assert (ns,) in catalog.list_namespaces()
    assert catalog.load_namespace_properties(ns) == {
        "comment": "made by pyiceberg", "team": "lake", "location": f"file:{server.warehouse}/{ns}.db"}
    assert (server.warehouse / f"{ns}.db").is_dir()
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace(ns)
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace(ns.upper())  # Hive's names are case-insensitive

    summary = catalog.update_namespace_properties(ns, removals={"team", "absent"}, updates={"owner": "data"})
    assert (sorted(summary.removed), sorted(summary.updated), sorted(summary.missing)) == (
        ["team"], ["owner"], ["absent"])
    assert catalog.load_namespace_properties(ns) == {
        "comment": "made by pyiceberg", "owner": "data", "location": f"file:{server.warehouse}/{ns}.db"}

    elsewhere = server.warehouse.parent / f"elsewhere_{ns}"
    other = unique("ice")
    catalog.create_namespace(other, {"location": f"file:{elsewhere}"})
    assert catalog.load_namespace_properties(other) == {"location": f"file:{elsewhere}"}
    assert not elsewhere.exists()  # outside the server's roots: recorded, no directory made (README "Security")
    elsewhere.mkdir()

    catalog.drop_namespace(ns)
    catalog.drop_namespace(other)
    assert (ns,) not in catalog.list_namespaces() and (other,) not in catalog.list_namespaces()
    # dropped without deleteData: the directories stay, as Hive leaves them
    assert (server.warehouse / f"{ns}.db").is_dir() and elsewhere.is_dir()
    with pytest.raises(NoSuchNamespaceError):
        catalog.load_namespace_properties(ns)
    with pytest.raises(NoSuchNamespaceError):
        catalog.drop_namespace(ns)
    with pytest.raises(NoSuchNamespaceError):
        catalog.update_namespace_properties(ns, updates={"a": "b"})
    with pytest.raises(InvalidObjectException):  # Hive's rule for names: [A-Za-z0-9_]+
        catalog.create_namespace("no-dashes")
    with pytest.raises(NoSuchNamespaceError):  # Hive refuses with a MetaException, PyIceberg's reading of it
        catalog.drop_namespace("default")
    assert ("default",) in catalog.list_namespaces()


def test_tables_written_by_spark(catalog: HiveCatalog, client, server) -> None:
    ns = unique("ice")
    catalog.create_namespace(ns)
    loc = f"file:{server.warehouse}/{ns}.db"
    client.create_table(spark_table(ns, "hive_parquet", f"{loc}/hive_parquet", partitioned=True))
    client.create_table(spark_table(ns, "ds_parquet", f"{loc}/ds_parquet", provider="parquet"))
    client.create_table(spark_table(ns, "a_view", "", view=f"SELECT id, name FROM {ns}.ds_parquet"))
    client.create_table(iceberg_table(ns, "ice_t", f"{loc}/ice_t"))

    # PyIceberg asks for every table (get_all_tables, get_table_objects_by_name) and keeps Iceberg's
    assert sorted(client.get_all_tables(ns)) == ["a_view", "ds_parquet", "hive_parquet", "ice_t"]
    objs = {t.tableName: t for t in client.get_table_objects_by_name(ns, client.get_all_tables(ns))}
    assert {n: t.tableType for n, t in objs.items()} == {
        "a_view": "VIRTUAL_VIEW", "ds_parquet": "MANAGED_TABLE", "hive_parquet": "MANAGED_TABLE",
        "ice_t": "EXTERNAL_TABLE"}
    assert objs["ds_parquet"].parameters["spark.sql.sources.provider"] == "parquet"
    assert catalog.list_tables(ns) == [(ns, "ice_t")]
    assert catalog.list_tables(ns.upper()) == [(ns.upper(), "ice_t")]  # names are case-insensitive

    with pytest.raises(NoSuchPropertyException):  # not an Iceberg table: it has no table_type
        catalog.load_table((ns, "hive_parquet"))
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(ns)

    for t in ("hive_parquet", "ds_parquet", "a_view", "ice_t"):
        client.drop_table(ns, t, True)
    assert catalog.list_tables(ns) == []
    catalog.drop_namespace(ns)
    assert (ns,) not in catalog.list_namespaces()


def test_list_tables_of_a_missing_namespace(catalog: HiveCatalog, client) -> None:
    # As Hive 2.3: get_all_tables answers [] for a missing database, and so does get_table_objects_by_name
    # when it is asked for no table (it refuses the database only when asked for some).
    missing = unique("missing")
    assert catalog.list_tables(missing) == []
    assert client.get_all_tables(missing) == []
    with pytest.raises(Exception) as e:  # Hive 4's IDL declares no exception here: the client cannot name it
        client.get_table_objects_by_name(missing, ["t"])
    assert "UnknownDB" in type(e.value).__name__ or "unknown result" in str(e.value)
