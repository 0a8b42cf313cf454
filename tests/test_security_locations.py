"""The location policy through the real Thrift front, on every backend: a client cannot make the server delete,
move or share data it does not own (the store, the data directory, the warehouse root, other objects' files,
anything outside the warehouse), while locations Hive accepts keep working.

Every attack uses sacrificial victim directories under the test's own temporary directory, and checks that the
victim's files are intact, that a refused call changed nothing in the store (listings and the notification id)
and that the server keeps serving.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hive_metastore.ttypes import (
    Database,
    FieldSchema,
    InvalidObjectException,
    InvalidOperationException,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)

from conftest import Client, Server, unique


def sd(location: str | None = None) -> StorageDescriptor:
    return StorageDescriptor(
        cols=[FieldSchema("a", "int", None)], location=location,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}),
        compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={})


def table(db: str, name: str, location: str | None = None, keys: tuple[str, ...] = (),
          external: bool = False) -> Table:
    return Table(tableName=name, dbName=db, owner="mallory", sd=sd(location),
                 parameters={"EXTERNAL": "TRUE"} if external else {},
                 tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE",
                 partitionKeys=[FieldSchema(k, "string", None) for k in keys])


def victim(root: Path, name: str) -> Path:
    """A directory with files in it (and below it) that no call may delete or move."""
    d = root / name
    (d / "sub").mkdir(parents=True)
    (d / "precious.txt").write_text(f"{name} data")
    (d / "sub" / "deeper.bin").write_bytes(bytes(range(256)))
    return d


def files(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*"))
            if p.is_file()}


def state(c: Client) -> tuple[int, dict[str, list[str]]]:
    """The notification id and every database's tables: what a refused call must leave as it was."""
    return (c.get_current_notificationEventId().eventId,
            {d: sorted(c.get_all_tables(d)) for d in sorted(c.get_all_databases())})


@pytest.fixture
def c(server: Server) -> Client:
    cl = Client(server.port)
    yield cl
    cl.close()


def refused(c: Client, server: Server, exc: type[Exception], call: str, *args: object, says: str = "") -> str:
    """Call, expecting the refusal `exc`; the store is unchanged and the server still serves."""
    before = state(c)
    with pytest.raises(exc) as e:
        getattr(c, call)(*args)
    assert says in e.value.message
    assert state(c) == before
    assert server.alive()
    return e.value.message


def test_a_database_holding_the_store_or_the_warehouse_is_refused(c, server, tmp_path):
    """create_database over the server's own data directory, its SQLite file, the warehouse root, or anything
    holding them (`..` included) is refused with nothing written; the drop that would follow cannot happen."""
    data = server.workdir / "data"
    before = {p: files(p) for p in (data, server.warehouse)}
    store_dir = Path(server.db_url.removeprefix("sqlite:///")).parent if server.db.backend == "sqlite" else None
    for loc in [f"file:{server.workdir}", f"file:{data}", f"file://{data}/", f"file:{server.warehouse}",
                str(server.warehouse), f"file:{server.warehouse}/x.db/../../data", f"file:{server.warehouse}/..",
                "file:/", *([f"file:{store_dir}", f"file:{store_dir.parent}"] if store_dir else [])]:
        msg = refused(c, server, InvalidObjectException, "create_database",
                      Database(name=unique("evil"), locationUri=loc), says="Database location")
        assert "data directory" in msg or "warehouse root" in msg
    assert {p: files(p) for p in (data, server.warehouse)} == before
    assert c.get_database("default").locationUri == f"file:{server.warehouse}"


def test_malformed_locations_are_refused(c, server, tmp_path):
    """Relative locations, unknown schemes, control characters and `..` above the root: InvalidObject on create,
    InvalidOperation on alter; nothing is made."""
    db = unique("db")
    c.create_database(Database(name=db))
    try:
        for loc in ["relative/dir", "javascript:alert(1)", "file:/a/../../etc", f"file:{tmp_path}/x\nz",
                    "http://example.com/t"]:
            refused(c, server, InvalidObjectException, "create_table", table(db, "t", loc), says="location")
            refused(c, server, InvalidObjectException, "create_database", Database(name=unique("d"), locationUri=loc))
        c.create_table(table(db, "t"))
        t = c.get_table(db, "t")
        t.sd.location = "file:/a/../../etc"
        refused(c, server, InvalidOperationException, "alter_table", db, "t", t, says="climbs above the root")
        assert sorted(p.name for p in tmp_path.iterdir()) == []
    finally:
        c.drop_database(db, True, True)


def test_dot_dot_is_resolved_before_anything_is_stored(c, server, tmp_path):
    """A managed table at `<warehouse>/db.db/../../victim` is stored at its resolved place, outside the warehouse:
    its drop leaves the directory there (the server never deletes outside its roots)."""
    v = victim(tmp_path, "victim")
    want = files(v)
    db = unique("db")
    c.create_database(Database(name=db))
    try:
        rel = "/".join([".."] * (len(server.warehouse.relative_to("/").parts) + 1))
        c.create_table(table(db, "t", f"file:{server.warehouse}/{db}.db/{rel}{v}"))
        assert c.get_table(db, "t").sd.location == f"file:{v}"
        c.create_table(table(db, "u", f"file:///{server.warehouse}/./{db}.db//u/"))
        assert c.get_table(db, "u").sd.location == f"file://{server.warehouse}/{db}.db/u"  # the client's form
        c.drop_table(db, "t", True)
        assert files(v) == want
    finally:
        c.drop_database(db, True, True)
    assert files(v) == want and not (server.warehouse / f"{db}.db").exists()


def test_drops_outside_the_warehouse_leave_the_files(c, server, tmp_path):
    """Managed databases, tables and partitions located outside the warehouse are created (their metadata: the
    server makes no directory outside its roots), and their drops delete only metadata: the files stay."""
    vdb, vtab, vpart = victim(tmp_path, "dbdir"), victim(tmp_path, "tabdir"), victim(tmp_path, "partdir")
    want = {p: files(p) for p in (vdb, vtab, vpart)}
    db = unique("db")
    c.create_database(Database(name=db, locationUri=f"file:{vdb}"))
    c.create_table(table(db, "inside"))  # its default place: in the database's directory, outside the warehouse
    assert c.get_table(db, "inside").sd.location == f"file:{vdb}/inside"
    assert not (vdb / "inside").exists()  # outside the roots: recorded, not made
    (vdb / "inside").mkdir()
    (vdb / "inside" / "part-0").write_text("x")
    want[vdb] = files(vdb)
    c.create_table(table(db, "t", f"file:{vtab}"))
    c.create_table(table(db, "p", keys=("ds",)))
    c.add_partition(Partition(values=["1"], dbName=db, tableName="p", sd=sd(f"file:{vpart}"), parameters={}))
    c.drop_partition(db, "p", ["1"], True)
    c.drop_table(db, "t", True)
    c.drop_database(db, True, True)
    assert db not in c.get_all_databases()
    assert {p: files(p) for p in (vdb, vtab, vpart)} == want


def test_managed_objects_may_not_share_directories(c, server, tmp_path):
    """A managed table or partition whose directory is (or holds, or is inside) another managed table's, or is
    (or holds) a database's, is refused: dropping it would delete the other's data. External tables may
    point anywhere, and their drop deletes nothing."""
    db, other = unique("db"), unique("db")
    c.create_database(Database(name=db))
    c.create_database(Database(name=other))
    try:
        c.create_table(table(db, "t1"))
        t1 = c.get_table(db, "t1").sd.location
        (server.warehouse / f"{db}.db" / "t1" / "data.txt").write_text("t1's data")
        c.create_table(table(db, "p", keys=("ds",)))
        dbloc = c.get_database(other).locationUri
        for loc, says in [(t1, f"is the location of table {db}.t1"), (t1 + "/", "is the location"),
                          (f"{t1}/nested", f"inside the directory of managed table {db}.t1"),
                          (f"file:{server.warehouse}/{db}.db", f"is the location of database {db}"),
                          (dbloc, f"is the location of database {other}"),
                          (f"file:{server.warehouse}/{other}.db/../{db}.db/t1", "is the location of table")]:
            refused(c, server, InvalidObjectException, "create_table", table(other, unique("t"), loc), says=says)
            refused(c, server, InvalidObjectException, "add_partition",
                    Partition(values=["x"], dbName=db, tableName="p", sd=sd(loc), parameters={}), says=says)
        # a managed table's partition may be elsewhere in the warehouse (Spark's ALTER TABLE ... SET LOCATION)
        c.add_partition(Partition(values=["y"], dbName=db, tableName="p", sd=sd(f"file:{server.warehouse}/else/y"),
                                  parameters={}))
        assert (server.warehouse / "else" / "y").is_dir()
        # a database over a table's directory, or holding one
        refused(c, server, InvalidObjectException, "create_database", Database(name=unique("d"), locationUri=t1),
                says="is the location of table")
        # the default place of a new table, taken by a managed table located there explicitly: refused
        c.create_table(table(db, "squatter", f"file:{server.warehouse}/{other}.db/later"))
        refused(c, server, InvalidObjectException, "create_table", table(other, "later"), says="squatter")
        # external tables may point at another table's data; dropping them deletes nothing
        c.create_table(table(other, "ext", t1, external=True))
        # ... but an external table turned managed, or a managed table moved onto another's directory, is refused
        ext = c.get_table(other, "ext")
        ext.tableType, ext.parameters = "MANAGED_TABLE", {}
        refused(c, server, InvalidOperationException, "alter_table", other, "ext", ext, says="is the location of")
        mine = table(other, "mine")
        c.create_table(mine)
        mine = c.get_table(other, "mine")
        mine.sd.location = t1
        refused(c, server, InvalidOperationException, "alter_table", other, "mine", mine, says="is the location of")
        c.add_partition(Partition(values=["a"], dbName=db, tableName="p", sd=sd(), parameters={}))
        part = c.get_partition(db, "p", ["a"])
        part.sd.location = t1
        refused(c, server, InvalidOperationException, "alter_partition", db, "p", part, says="is the location of")
        c.drop_table(other, "ext", True)
        assert (server.warehouse / f"{db}.db" / "t1" / "data.txt").read_text() == "t1's data"
    finally:
        c.drop_database(other, True, True)
        c.drop_database(db, True, True)


def test_old_overlaps_drop_without_deleting_others(c, server, tmp_path):
    """Dropping a database whose directory holds another database's table (as a store made before these checks
    may have: here an external table, which may point anywhere) deletes its own tables' directories and leaves
    the rest, and never the warehouse root."""
    db, other = unique("db"), unique("db")
    c.create_database(Database(name=db))
    c.create_database(Database(name=other))
    c.create_table(table(db, "mine"))
    (server.warehouse / f"{db}.db" / "mine" / "f").write_text("x")
    shared = server.warehouse / f"{db}.db" / "shared"
    shared.mkdir()
    (shared / "theirs.txt").write_text("other's data")
    c.create_table(table(other, "ext", f"file:{shared}", external=True))
    c.drop_database(db, True, True)
    assert not (server.warehouse / f"{db}.db" / "mine").exists()
    assert (shared / "theirs.txt").read_text() == "other's data"
    c.drop_database(other, True, True)
    assert (shared / "theirs.txt").read_text() == "other's data"  # external: never deleted
    assert server.warehouse.is_dir()


def test_renames_move_nothing_outside_the_warehouse(c, server, tmp_path):
    """alter_table renames and rename_partition move a managed directory inside the warehouse as in Hive; outside
    it, the metadata is renamed and the directory stays where it is, at the location the object keeps."""
    vdb = tmp_path / "outside"
    db = unique("db")
    c.create_database(Database(name=db, locationUri=f"file:{vdb}"))
    try:
        c.create_table(table(db, "t", keys=("ds",)))
        c.add_partition(Partition(values=["1"], dbName=db, tableName="t", sd=sd(), parameters={}))
        assert not (vdb / "t").exists()  # outside the roots: no directory made; a writer makes its own
        (vdb / "t" / "ds=1").mkdir(parents=True)
        (vdb / "t" / "ds=1" / "f").write_text("data")
        t = c.get_table(db, "t")
        t.tableName = "renamed"
        c.alter_table(db, "t", t)
        assert c.get_table(db, "renamed").sd.location == f"file:{vdb}/t"
        p = c.get_partition(db, "renamed", ["1"])
        p.values = ["2"]
        c.rename_partition(db, "renamed", ["1"], p)
        assert c.get_partition(db, "renamed", ["2"]).sd.location == f"file:{vdb}/t/ds=1"
        assert (vdb / "t" / "ds=1" / "f").read_text() == "data"
        assert not (vdb / "renamed").exists() and not (vdb / "t" / "ds=2").exists()
        # inside the warehouse the directory follows, as before
        c.create_database(Database(name=db + "_in"))
        c.create_table(table(db + "_in", "a"))
        (server.warehouse / f"{db}_in.db" / "a" / "f").write_text("x")
        a = c.get_table(db + "_in", "a")
        a.tableName = "b"
        c.alter_table(db + "_in", "a", a)
        assert (server.warehouse / f"{db}_in.db" / "b" / "f").read_text() == "x"
        c.drop_database(db + "_in", True, True)
    finally:
        c.drop_database(db, True, True)
    assert (vdb / "t" / "ds=1" / "f").read_text() == "data"


def test_partitions_count_as_occupants(c, server, tmp_path):
    """A managed table's partition placed elsewhere in the warehouse (Spark's SET LOCATION) is another object's
    data: a managed table or partition there (or holding it) is refused, in add_partitions too, and dropping a
    database whose directory holds it leaves it."""
    db, other = unique("db"), unique("db")
    c.create_database(Database(name=db))
    c.create_database(Database(name=other))
    try:
        c.create_table(table(db, "v3", keys=("ds",)))
        custom = server.warehouse / f"{db}.db" / "custom"
        c.add_partition(Partition(values=["1"], dbName=db, tableName="v3", sd=sd(f"file:{custom}/p1"),
                                  parameters={}))
        (custom / "p1" / "v3.txt").write_text("v3's partition")
        c.create_table(table(db, "a3", keys=("ds",)))
        for loc, says in [(f"file:{custom}/p1", f"is the location of a partition of table {db}.v3"),
                          (f"file:{custom}", "holds the location of a partition"),
                          (f"file:{custom}/p1/inner", "inside the directory of managed a partition")]:
            refused(c, server, InvalidObjectException, "add_partition",
                    Partition(values=["x"], dbName=db, tableName="a3", sd=sd(loc), parameters={}), says=says)
            refused(c, server, InvalidObjectException, "create_table", table(db, unique("a4"), loc), says=says)
        # one check for a batch: the conflicting partition refuses the whole call
        batch = [Partition(values=[v], dbName=db, tableName="a3", sd=sd(f"file:{custom}/{v}"), parameters={})
                 for v in ("p0", "p1", "p2")]
        refused(c, server, InvalidObjectException, "add_partitions", batch, says="a partition of table")
        assert not (custom / "p0").exists() and not (custom / "p2").exists()
        # batches of custom locations that share nothing are accepted
        c.add_partitions([Partition(values=[v], dbName=db, tableName="a3", sd=sd(f"file:{custom}/{v}"),
                                    parameters={}) for v in ("q0", "q1")])
        # another database's table with a partition inside this database's directory: dropped with deleteData,
        # the database leaves it
        inside = server.warehouse / f"{other}.db" / "elsewhere" / "p"
        c.add_partition(Partition(values=["2"], dbName=db, tableName="v3", sd=sd(f"file:{inside}"), parameters={}))
        (inside / "f.txt").write_text("kept")
        c.drop_database(other, True, True)
        assert (inside / "f.txt").read_text() == "kept"
        assert (custom / "p1" / "v3.txt").read_text() == "v3's partition"
    finally:
        c.drop_database(db, True, True)


def test_external_turned_managed_checks_its_partitions(c, server, tmp_path):
    """An external table whose partition is another table's directory may not become managed (its drop would
    delete that directory); with its partitions in its own directory it may."""
    db = unique("db")
    c.create_database(Database(name=db))
    try:
        c.create_table(table(db, "t1"))
        t1 = c.get_table(db, "t1").sd.location
        (server.warehouse / f"{db}.db" / "t1" / "data.txt").write_text("t1's data")
        c.create_table(table(db, "e", keys=("ds",), external=True))
        c.add_partition(Partition(values=["1"], dbName=db, tableName="e", sd=sd(t1), parameters={}))
        e = c.get_table(db, "e")
        e.tableType, e.parameters = "MANAGED_TABLE", {}
        refused(c, server, InvalidOperationException, "alter_table", db, "e", e, says=f"table {db}.t1")
        c.create_table(table(db, "f", keys=("ds",), external=True))
        c.add_partition(Partition(values=["1"], dbName=db, tableName="f", sd=sd(), parameters={}))
        f = c.get_table(db, "f")
        f.tableType, f.parameters = "MANAGED_TABLE", {}
        c.alter_table(db, "f", f)
        assert c.get_table(db, "f").tableType == "MANAGED_TABLE"
        assert (server.warehouse / f"{db}.db" / "t1" / "data.txt").read_text() == "t1's data"
    finally:
        c.drop_database(db, True, True)


def test_fast_stats_only_where_the_server_may_read(c, server, tmp_path):
    """An external table outside the roots gets no numFiles/totalSize from a listing of its directory (they
    would tell what is there); one in the warehouse still does."""
    db = unique("db")
    c.create_database(Database(name=db))
    try:
        v = victim(tmp_path, "secret")
        c.create_table(table(db, "out", f"file:{v}", external=True))
        params = c.get_table(db, "out").parameters
        assert "numFiles" not in params and "totalSize" not in params
        c.create_table(table(db, "root", "file:/", external=True))
        assert "numFiles" not in c.get_table(db, "root").parameters
        inside = server.warehouse / "ext_in"
        inside.mkdir()
        (inside / "f").write_text("12345")
        c.create_table(table(db, "in", f"file:{inside}", external=True))
        params = c.get_table(db, "in").parameters
        assert (params["numFiles"], params["totalSize"]) == ("1", "5")
        assert files(v) == {"precious.txt": hashlib.md5(b"secret data").hexdigest(),
                            "sub/deeper.bin": hashlib.md5(bytes(range(256))).hexdigest()}
    finally:
        c.drop_database(db, True, True)
