"""Parity with the real Hive 2.3.10 metastore: one scripted series of calls through the same Apache Thrift
client against the reference and against our server (on every backend), comparing

- the notification events (type, names, format, and each message field by field, the embedded Thrift-JSON
  objects decoded and compared field by field too),
- the values the server fills in (database defaults, table and partition parameters, statistics),
- the exception class and message for bad input.

Values that legitimately differ between two servers are normalized: warehouse and data locations (as
<WH>, <EXT>), creation times, transient_lastDdlTime and event timestamps.

Deliberate differences (kept, asserted as ours, and listed here):

Messages. We write the json-0.2 messages of Hive 3 and later, a superset of Hive 2.3's: the extra keys
`tableType` (table and partition events), `isTruncateOp` (ALTER_TABLE, ALTER_PARTITION) and `tableObjJson`
(DROP_TABLE). Hive's JSON message deserializers ignore keys they do not know, so Hive 2.3 readers read ours.
The embedded objects carry the fields of our (newer) IDL that Hive 2.3's structs lack (Table.catName and
ownerType, Partition.catName, Function.catName); Thrift readers skip unknown field ids. Hive writes only the
optional fields that are set (so it depends on what the client sent), we write them all: an optional field
that one side leaves out must be unset-equivalent (false, empty) on the other.

Errors, where Hive's answer is a Java artefact or accepts input it then mishandles:
- drop_database of a missing database: Hive MetaException (a NullPointerException); ours NoSuchObjectException.
- alter_database of a missing database: Hive succeeds silently; ours NoSuchObjectException.
- names longer than 128 characters: Hive accepts a table name (up to its column width) and fails with a
  MetaException from the database layer for a database or function; ours InvalidObjectException.
- table name `a/b`: Hive accepts it (and nests directories); ours InvalidObjectException.
- an empty partition value: Hive stores a partition it cannot address by name; ours MetaException.
- a partition name with a key that is not the table's: Hive ignores the key; ours rejects the name.
- a duplicate partition: same class, but Hive's message is the Java dump of the struct; ours names it.
- a malformed filter: same class, Hive's message holds ANTLR internals; ours says what and where.
- alter_partition of a missing partition: ours appends the partition name to Hive's text.
- drop_partition on a missing table: same class; Hive says `partition values=[..]`, ours names the table.
- get_partition_names on a missing table: Hive TApplicationException (internal error); ours
  NoSuchObjectException.
- rename a table into a missing database: Hive MetaException (NullPointerException); ours
  InvalidOperationException.
- create_table without a storage descriptor, with an empty column type: Hive MetaException (a Java
  exception); ours InvalidObjectException.
- duplicate column names: Hive MetaException from the database layer; ours InvalidObjectException.
- a column named as a partition key, an empty column name, a column name with a comma: Hive accepts;
  ours InvalidObjectException.
- upper-case column types (`INT`): Hive 2.3 rejects them; we accept them (as Hive 3 and Spark do).
- a filter comparing an integer key with a string: Hive rejects it (it filters only string keys in its
  object store path); we evaluate it.
- a table of type EXTERNAL_TABLE without the EXTERNAL=TRUE parameter: Hive stores it as MANAGED_TABLE (so
  dropping it deletes the data); we keep EXTERNAL_TABLE.
- INSERT events: the reference emits them via fire_listener_event; our IDL does not serve that call yet
  (UNKNOWN_METHOD), so INSERT messages are not compared.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hive_metastore.ttypes import (
    AddPartitionsRequest,
    Database,
    DropPartitionsRequest,
    EnvironmentContext,
    FieldSchema,
    FireEventRequest,
    FireEventRequestData,
    Function,
    NotificationEventRequest,
    Partition,
    RequestPartsSpec,
    ResourceUri,
    SerDeInfo,
    StorageDescriptor,
    Table,
)
from thrift.Thrift import TApplicationException, TType

from conftest import Client, unique
from reference import Reference, reference  # noqa: F401  (the session fixture)

pytestmark = [pytest.mark.slow, pytest.mark.reference]

# --------------------------------------------------------------------------- Hive 2.3's structs, by field id

# name, and the struct of a nested struct or of the elements of a list of structs
SCHEMA: dict[str, dict[int, tuple[str, str | None]]] = {
    "Database": {1: ("name", None), 2: ("description", None), 3: ("locationUri", None), 4: ("parameters", None),
                 5: ("privileges", None), 6: ("ownerName", None), 7: ("ownerType", None)},
    "Table": {1: ("tableName", None), 2: ("dbName", None), 3: ("owner", None), 4: ("createTime", None),
              5: ("lastAccessTime", None), 6: ("retention", None), 7: ("sd", "StorageDescriptor"),
              8: ("partitionKeys", "FieldSchema"), 9: ("parameters", None), 10: ("viewOriginalText", None),
              11: ("viewExpandedText", None), 12: ("tableType", None), 13: ("privileges", None),
              14: ("temporary", None), 15: ("rewriteEnabled", None)},
    "StorageDescriptor": {1: ("cols", "FieldSchema"), 2: ("location", None), 3: ("inputFormat", None),
                          4: ("outputFormat", None), 5: ("compressed", None), 6: ("numBuckets", None),
                          7: ("serdeInfo", "SerDeInfo"), 8: ("bucketCols", None), 9: ("sortCols", "Order"),
                          10: ("parameters", None), 11: ("skewedInfo", "SkewedInfo"),
                          12: ("storedAsSubDirectories", None)},
    "SerDeInfo": {1: ("name", None), 2: ("serializationLib", None), 3: ("parameters", None)},
    "FieldSchema": {1: ("name", None), 2: ("type", None), 3: ("comment", None)},
    "Order": {1: ("col", None), 2: ("order", None)},
    "SkewedInfo": {1: ("skewedColNames", None), 2: ("skewedColValues", None), 3: ("skewedColValueLocationMaps", None)},
    "Partition": {1: ("values", None), 2: ("dbName", None), 3: ("tableName", None), 4: ("createTime", None),
                  5: ("lastAccessTime", None), 6: ("sd", "StorageDescriptor"), 7: ("parameters", None),
                  8: ("privileges", None)},
    "Function": {1: ("functionName", None), 2: ("dbName", None), 3: ("className", None), 4: ("ownerName", None),
                 5: ("ownerType", None), 6: ("createTime", None), 7: ("functionType", None),
                 8: ("resourceUris", "ResourceUri")},
    "ResourceUri": {1: ("resourceType", None), 2: ("uri", None)},
}
# fields of our newer IDL that Hive 2.3's structs do not have, which our embedded objects may carry
NEWER_FIELDS = {"Table": {17, 18}, "Partition": {9}, "Function": {9}, "Database": {8, 9}, "SerDeInfo": {4, 5, 6, 7}}
TIMES = {"createTime", "lastAccessTime"}  # lastAccessTime is compared (both 0) unless absent
DDL_TIME = "transient_lastDdlTime"

# the keys of Hive 3's messages that Hive 2.3's lack (deliberate: see the module docstring)
HIVE3_KEYS = {
    "CREATE_TABLE": ("tableType",),
    "ALTER_TABLE": ("tableType", "isTruncateOp"),
    "DROP_TABLE": ("tableType", "tableObjJson"),
    "ADD_PARTITION": ("tableType",),
    "ALTER_PARTITION": ("tableType", "isTruncateOp"),
    "DROP_PARTITION": ("tableType",),
}
JSON_STRUCT = {"tableObjJson": "Table", "tableObjBeforeJson": "Table", "tableObjAfterJson": "Table",
               "partitionListJson": "Partition", "partitionObjBeforeJson": "Partition",
               "partitionObjAfterJson": "Partition", "functionObjJson": "Function", "dbObjBeforeJson": "Database",
               "dbObjAfterJson": "Database", "ptnObjJson": "Partition"}


# --------------------------------------------------------------------------- Thrift JSON and object trees

def _tjson_value(t: str, raw: Any) -> Any:
    if t == "rec":
        return {int(fid): _tjson_field(doc) for fid, doc in raw.items()}
    if t in ("lst", "set"):
        et, n, items = raw[0], raw[1], raw[2:]
        assert len(items) == n, f"list announces {n} items, holds {len(items)}"
        return [_tjson_value(et, x) for x in items]
    if t == "map":
        kt, vt, n, m = raw
        assert len(m) == n, f"map announces {n} entries, holds {len(m)}"
        return {k: _tjson_value(vt, v) for k, v in m.items()}
    if t == "tf":
        assert raw in (0, 1)
        return bool(raw)
    return raw


def _tjson_field(doc: dict[str, Any]) -> Any:
    assert len(doc) == 1, doc
    (t, raw), = doc.items()
    return _tjson_value(t, raw)


def tjson_tree(struct: str, text: str, extras: dict[str, set[int]] | None = None) -> dict[str, Any]:
    """A Thrift-JSON struct as {field name: value}, by Hive 2.3's field ids; other ids go to `extras`."""
    return _by_name(struct, _tjson_value("rec", json.loads(text)), extras)


def _by_name(struct: str, fields: dict[int, Any], extras: dict[str, set[int]] | None) -> dict[str, Any]:
    out = {}
    for fid, v in fields.items():
        spec = SCHEMA[struct].get(fid)
        if spec is None:
            if extras is not None:
                extras.setdefault(struct, set()).add(fid)
            continue
        name, sub = spec
        if sub is not None:
            v = [_by_name(sub, x, extras) for x in v] if isinstance(v, list) else _by_name(sub, v, extras)
        out[name] = v
    return out


def obj_tree(struct: str, obj: Any) -> dict[str, Any]:
    """A Thrift object of the Apache client as {field name: value} over Hive 2.3's fields (unset left out)."""
    out = {}
    for name, sub in SCHEMA[struct].values():
        v = getattr(obj, name, None)
        if v is None:
            continue
        if sub is not None:
            v = [obj_tree(sub, x) for x in v] if isinstance(v, list) else obj_tree(sub, v)
        elif isinstance(v, dict):
            v = {(json.dumps(list(k)) if isinstance(k, tuple) else k): x for k, x in v.items()}
        out[name] = v
    return out


def _unset_like(v: Any) -> bool:
    if v is False or v == [] or v == {}:
        return True
    return isinstance(v, dict) and all(_unset_like(x) for x in v.values())


@dataclass
class Side:
    """One server of the comparison, with the prefixes its locations start with."""
    name: str
    client: Client
    prefixes: list[tuple[str, str]] = field(default_factory=list)

    def norm(self, v: Any) -> Any:
        if isinstance(v, str):
            for prefix, token in self.prefixes:
                if v.startswith(prefix):
                    return token + v[len(prefix):]
        return v


def compare_trees(struct: str, ref: dict[str, Any], ours: dict[str, Any], rs: Side, us: Side, path: str,
                  diffs: list[str]) -> None:
    for name, sub in SCHEMA[struct].values():
        p = f"{path}.{name}"
        if name not in ref or name not in ours:
            present = ref.get(name, ours.get(name))
            if (name in ref or name in ours) and not _unset_like(present):
                side = "reference" if name in ref else "ours"
                diffs.append(f"{p}: only {side} has it: {present!r}")
            continue
        a, b = ref[name], ours[name]
        if sub is not None:
            if isinstance(a, list):
                if len(a) != len(b):
                    diffs.append(f"{p}: {len(a)} items in the reference, {len(b)} in ours")
                    continue
                for i, (x, y) in enumerate(zip(a, b)):
                    compare_trees(sub, x, y, rs, us, f"{p}[{i}]", diffs)
            else:
                compare_trees(sub, a, b, rs, us, p, diffs)
        elif name in TIMES and a and b:
            if not (isinstance(a, int) and isinstance(b, int) and a > 0 and b > 0):
                diffs.append(f"{p}: {a!r} != {b!r}")
        elif name == "parameters":
            na = {k: ("<time>" if k == DDL_TIME else v) for k, v in a.items()}
            nb = {k: ("<time>" if k == DDL_TIME else v) for k, v in b.items()}
            if na != nb:
                diffs.append(f"{p}: {na!r} != {nb!r}")
        elif rs.norm(a) != us.norm(b):
            diffs.append(f"{p}: {rs.norm(a)!r} != {us.norm(b)!r}")


# --------------------------------------------------------------------------- the scripted series of calls

INPUT = "org.apache.hadoop.mapred.TextInputFormat"
OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


def sd(cols=(("a", "int", "the a"), ("b", "string", None)), location=None) -> StorageDescriptor:
    return StorageDescriptor(cols=[FieldSchema(n, t, c) for n, t, c in cols], location=location, inputFormat=INPUT,
                             outputFormat=OUTPUT, compressed=False, numBuckets=-1,
                             serdeInfo=SerDeInfo(serializationLib=SERDE, parameters={"serialization.format": "1"}),
                             bucketCols=[], sortCols=[], parameters={})


def table(db: str, name: str, keys=(("ds", "string"), ("h", "int")), cols=None, params=None, location=None,
          table_type="MANAGED_TABLE") -> Table:
    s = sd(location=location) if cols is None else sd(cols=[(n, t, None) for n, t in cols], location=location)
    return Table(tableName=name, dbName=db, owner="alice", sd=s, parameters=dict(params or {}),
                 tableType=table_type, partitionKeys=[FieldSchema(k, t, None) for k, t in keys])


def part(db: str, tbl: str, values: list[str], params=None, location=None) -> Partition:
    return Partition(values=values, dbName=db, tableName=tbl, sd=sd(location=location), parameters=dict(params or {}))


def function(db: str, name: str, uris=()) -> Function:
    return Function(functionName=name, dbName=db, className="org.example.Upper", ownerName="alice", ownerType=1,
                    createTime=0, functionType=1, resourceUris=[ResourceUri(1, u) for u in uris])


@dataclass
class Run:
    events: list[Any]
    seen: dict[str, Any]


def _cascade_order(events: list[Any]) -> list[Any]:
    """Events with each run of consecutive DROP_TABLE or DROP_FUNCTION events sorted by name: the order in
    which a cascading drop_database visits tables is the order of Hive's unordered database query."""
    out: list[Any] = []
    for e in events:
        if out and e.eventType in ("DROP_TABLE", "DROP_FUNCTION") and out[-1].eventType == e.eventType:
            run = [e]
            while out and out[-1].eventType == e.eventType:
                run.append(out.pop())
            out.extend(sorted(run, key=lambda x: (x.tableName or "", json.loads(x.message).get("functionName", ""))))
        else:
            out.append(e)
    return out


def scenario(c: Client, db: str, data: Path) -> Run:
    """The scripted series; `data` is a directory of this server's machine for external data."""
    ext = data / "ext"
    ext.mkdir(parents=True)
    (ext / "f1").write_text("hello")
    (ext / "f2").write_text("hi!")
    pdir = data / "pdir"
    pdir.mkdir()
    (pdir / "f1").write_text("12345678")
    seen: dict[str, Any] = {}
    start = c.get_current_notificationEventId().eventId
    seen["default"] = c.get_database("default")
    c.create_database(Database(name=db, description="parity", parameters={"k": "v"}))
    seen["db"] = c.get_database(db)
    c.create_table(table(db, "pt", params={"p": "1"}))
    seen["pt"] = c.get_table(db, "pt")
    c.create_table(table(db, "flat", keys=()))
    seen["flat"] = c.get_table(db, "flat")
    c.create_table(table(db, "ext", keys=(), params={"EXTERNAL": "TRUE"}, location=f"file:{ext}",
                         table_type="EXTERNAL_TABLE"))
    seen["ext"] = c.get_table(db, "ext")
    t = c.get_table(db, "flat")
    t.parameters["x"] = "y"
    c.alter_table(db, "flat", t)
    seen["flat.altered"] = c.get_table(db, "flat")
    t = c.get_table(db, "ext")
    t.parameters["numFiles"] = "42"  # recomputed from the directory
    c.alter_table_with_environment_context(db, "ext", t, EnvironmentContext(properties={}))
    seen["ext.altered"] = c.get_table(db, "ext")
    t = c.get_table(db, "flat")
    t.tableName = "flat2"
    c.alter_table(db, "flat", t)  # a rename: the managed directory follows
    seen["flat2"] = c.get_table(db, "flat2")
    c.add_partitions([part(db, "pt", ["a", "0"]), part(db, "pt", ["a", "1"])])
    c.add_partition(part(db, "pt", ["b", "1"], params={"pp": "q"}))
    c.add_partition(part(db, "pt", ["e", "1"], location=f"file:{pdir}"))
    c.append_partition(db, "pt", ["c", "1"])
    c.append_partition_by_name(db, "pt", "ds=c/h=2")
    c.add_partitions_req(AddPartitionsRequest(dbName=db, tblName="pt", parts=[part(db, "pt", ["d", str(i)])
                                                                            for i in range(3)],
                                              ifNotExists=False, needResult=True))
    for vals in (["a", "0"], ["b", "1"], ["e", "1"], ["c", "1"]):
        seen[f"pt/{'/'.join(vals)}"] = c.get_partition(db, "pt", vals)
    p = c.get_partition(db, "pt", ["a", "0"])
    p.parameters["z"] = "w"
    c.alter_partition(db, "pt", p)
    seen["pt/a/0.altered"] = c.get_partition(db, "pt", ["a", "0"])
    ps = [c.get_partition(db, "pt", ["d", "0"]), c.get_partition(db, "pt", ["d", "1"])]
    for x in ps:
        x.parameters["many"] = "1"
    c.alter_partitions(db, "pt", ps)
    c.drop_partition(db, "pt", ["a", "1"], True)
    c.drop_partition_by_name(db, "pt", "ds=b/h=1", True)
    c.drop_partitions_req(DropPartitionsRequest(dbName=db, tblName="pt",
                                                parts=RequestPartsSpec(names=["ds=d/h=1", "ds=d/h=2"]),
                                                deleteData=True, needResult=True))
    c.create_function(function(db, "f1", uris=["file:/udfs/upper.jar"]))
    seen["f1"] = c.get_function(db, "f1")
    c.drop_function(db, "f1")
    c.drop_table(db, "flat2", True)
    c.create_function(function(db, "f2"))
    c.drop_database(db, True, True)  # cascades over tables ext, pt (with partitions) and function f2
    events = c.get_next_notification(NotificationEventRequest(lastEvent=start, maxEvents=1000)).events
    return Run(_cascade_order([e for e in events if e.dbName == db]), seen)


@dataclass
class Pair:
    ref: Side
    ours: Side
    ref_run: Run
    our_run: Run


@pytest.fixture(scope="module")
def pair(reference: Reference, server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:  # noqa: F811
    db = unique("parity")
    ref_data = tmp_path_factory.mktemp("ref-data")
    our_data = server.warehouse / unique("our-data")  # where the server may read: fast stats are counted there
    rc, oc = Client(reference.port), Client(server.port)
    try:
        rs = Side("reference", rc, [(f"file:{reference.warehouse}", "<WH>"), (f"file:{ref_data}", "<EXT>")])
        us = Side("ours", oc, [(f"file:{our_data}", "<EXT>"), (f"file:{server.warehouse}", "<WH>")])
        yield Pair(rs, us, scenario(rc, db, ref_data), scenario(oc, db, our_data))
    finally:
        rc.close()
        oc.close()


# --------------------------------------------------------------------------- events

def test_event_sequence(pair: Pair) -> None:
    def shape(run: Run) -> list[tuple[str, str | None, str | None, str | None]]:
        return [(e.eventType, e.dbName, e.tableName, e.messageFormat) for e in run.events]
    assert "\n".join(map(str, shape(pair.our_run))) == "\n".join(map(str, shape(pair.ref_run)))
    ids = [e.eventId for e in pair.our_run.events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    covered = {e.eventType for e in pair.ref_run.events}
    assert covered >= {"CREATE_DATABASE", "DROP_DATABASE", "CREATE_TABLE", "ALTER_TABLE", "DROP_TABLE",
                       "ADD_PARTITION", "ALTER_PARTITION", "DROP_PARTITION", "CREATE_FUNCTION", "DROP_FUNCTION"}


def _compare_message(kind: str, ref: dict[str, Any], ours: dict[str, Any], pair: Pair, path: str,
                     diffs: list[str]) -> None:
    extra = HIVE3_KEYS.get(kind, ())
    if [k for k in ours if k not in extra] != list(ref):
        diffs.append(f"{path}: keys {list(ref)} (reference) != {[k for k in ours if k not in extra]} (ours, "
                     f"without Hive 3's {list(extra)})")
    newer: dict[str, set[int]] = {}
    for key in ref:
        if key not in ours:
            continue
        a, b, p = ref[key], ours[key], f"{path}.{key}"
        if key == "timestamp":
            if not (isinstance(a, int) and isinstance(b, int) and b > 0):
                diffs.append(f"{p}: {a!r} / {b!r}")
        elif key in JSON_STRUCT:
            struct = JSON_STRUCT[key]
            if isinstance(a, list):
                if len(a) != len(b):
                    diffs.append(f"{p}: {len(a)} objects in the reference, {len(b)} in ours")
                    continue
                for i, (x, y) in enumerate(zip(a, b)):
                    compare_trees(struct, tjson_tree(struct, x), tjson_tree(struct, y, newer), pair.ref, pair.ours,
                                  f"{p}[{i}]", diffs)
            else:
                compare_trees(struct, tjson_tree(struct, a), tjson_tree(struct, b, newer), pair.ref, pair.ours, p,
                              diffs)
        elif a != b:
            diffs.append(f"{p}: {a!r} != {b!r}")
    for struct, fids in newer.items():
        if not fids <= NEWER_FIELDS.get(struct, set()):
            diffs.append(f"{path}: unexpected {struct} field ids {sorted(fids - NEWER_FIELDS.get(struct, set()))}")
    # the Hive 3 keys we add: their values
    if "tableType" in extra and ours.get("tableType") not in ("MANAGED_TABLE", "EXTERNAL_TABLE"):
        diffs.append(f"{path}.tableType: {ours.get('tableType')!r}")
    if "isTruncateOp" in extra and ours.get("isTruncateOp") != "false":
        diffs.append(f"{path}.isTruncateOp: {ours.get('isTruncateOp')!r}")
    if kind == "DROP_TABLE" and tjson_tree("Table", ours["tableObjJson"])["tableName"] != ours["table"]:
        diffs.append(f"{path}.tableObjJson: not the dropped table")


def test_event_messages(pair: Pair) -> None:
    diffs: list[str] = []
    assert len(pair.our_run.events) == len(pair.ref_run.events)
    for i, (r, o) in enumerate(zip(pair.ref_run.events, pair.our_run.events)):
        ref_msg, our_msg = json.loads(r.message), json.loads(o.message)
        _compare_message(r.eventType, ref_msg, our_msg, pair, f"event {i} {r.eventType}", diffs)
    assert not diffs, "\n".join(diffs)


# --------------------------------------------------------------------------- values the server fills in

@pytest.mark.parametrize("key,struct", [
    ("default", "Database"), ("db", "Database"), ("pt", "Table"), ("flat", "Table"), ("ext", "Table"),
    ("flat.altered", "Table"), ("ext.altered", "Table"), ("flat2", "Table"), ("pt/a/0", "Partition"),
    ("pt/b/1", "Partition"), ("pt/e/1", "Partition"), ("pt/c/1", "Partition"), ("pt/a/0.altered", "Partition"),
    ("f1", "Function"),
])
def test_filled_in_values(pair: Pair, key: str, struct: str) -> None:
    diffs: list[str] = []
    ref_obj, our_obj = pair.ref_run.seen[key], pair.our_run.seen[key]
    compare_trees(struct, obj_tree(struct, ref_obj), obj_tree(struct, our_obj), pair.ref, pair.ours, key, diffs)
    assert not diffs, "\n".join(diffs)


def test_filled_in_values_spelled_out(pair: Pair) -> None:
    """The defaults compared above, written out for the reader (ours; the reference agrees)."""
    seen = pair.our_run.seen
    d = seen["default"]
    assert (d.ownerName, d.ownerType, d.description) == ("public", 2, "Default Hive database")
    assert pair.ours.norm(d.locationUri) == "<WH>" == pair.ref.norm(pair.ref_run.seen["default"].locationUri)
    db = seen["db"]
    assert (db.ownerName, db.ownerType) == (None, 1) and pair.ours.norm(db.locationUri).endswith(".db")
    assert set(seen["pt"].parameters) == {"p", "transient_lastDdlTime"}  # a new directory: no statistics
    assert set(seen["flat"].parameters) == {"transient_lastDdlTime"}
    assert {k: v for k, v in seen["ext"].parameters.items() if k != DDL_TIME} == {
        "EXTERNAL": "TRUE", "numFiles": "2", "totalSize": "8"}  # existing data is counted
    assert seen["flat.altered"].parameters["numFiles"] == "0" and seen["ext.altered"].parameters["numFiles"] == "2"
    assert set(seen["pt/a/0"].parameters) == {"transient_lastDdlTime"}
    assert {k: v for k, v in seen["pt/e/1"].parameters.items() if k != DDL_TIME} == {"numFiles": "1",
                                                                                     "totalSize": "8"}
    assert {k: v for k, v in seen["pt/a/0.altered"].parameters.items() if k != DDL_TIME} == {
        "z": "w", "numFiles": "0", "totalSize": "0"}


def test_external_type_without_parameter(pair: Pair, reference: Reference, server: Any) -> None:  # noqa: F811
    """Deliberate: Hive 2.3 turns an EXTERNAL_TABLE without EXTERNAL=TRUE into a managed table; we do not."""
    got = {}
    for side in (pair.ref, pair.ours):
        db = unique("exttype")
        side.client.create_database(Database(name=db))
        side.client.create_table(table(db, "e", keys=(), table_type="EXTERNAL_TABLE"))
        got[side.name] = side.client.get_table(db, "e").tableType
        side.client.drop_database(db, True, True)
    assert got == {"reference": "MANAGED_TABLE", "ours": "EXTERNAL_TABLE"}


PATTERNS = [None, "", "*", ".*", "**", "p*", "P*", "p.*", "pl.in", "a.b", ".", "pa_t", "p_rt_t", "p%", "%", "_",
            "*_t|orc*", "orc*|", "p* |x", " p* ", "[a-p]*", "pa+rt_t", "(p)lain", "^plain$", "plain?", "\\w+",
            "(a|a)*b", "*" * 8 + "x"]


def test_name_patterns(pair: Pair) -> None:
    """Hive 2.3's server matches name patterns as its ORM turns them into SQL LIKE: '*' any characters, '.' one,
    '|' alternatives, everything else literally (Hive's CLI sends `.*` for a plain SHOW TABLES)."""
    got: dict[str, list[Any]] = {}
    for side in (pair.ref, pair.ours):
        db = unique("pat")
        c = side.client
        c.create_database(Database(name=db))
        for name in ("plain", "part_t", "orc_t", "axb", "pa_t"):
            c.create_table(table(db, name, keys=()))
            c.create_function(Function(functionName=name, dbName=db, className="org.example.Upper",
                                       ownerName="alice", ownerType=1, createTime=0, functionType=1,
                                       resourceUris=[]))
        rows: list[Any] = []
        for p in PATTERNS:
            tables = sorted(c.get_tables(db, p)) if p is not None else sorted(c.get_all_tables(db))
            functions = sorted(c.get_functions(db, p)) if p is not None else None
            dbs = sorted(n == db for n in c.get_databases(p.replace("p", db, 1) if p else p)) if p is not None \
                else None
            metas = sorted(t.tableName for t in c.get_table_meta(db, p, None)) if p else None
            rows.append((p, tables, functions, dbs, metas))
        c.drop_database(db, True, True)
        got[side.name] = rows
    assert got["ours"] == got["reference"]


class _InsertData23:
    """Hive 2.3's InsertEventRequestData (field 1 filesAdded); the client's newer struct numbers it 2."""

    def __init__(self, files: list[str]) -> None:
        self.files = files

    def validate(self) -> None:
        pass

    def write(self, oprot: Any) -> None:
        oprot.writeStructBegin("InsertEventRequestData")
        oprot.writeFieldBegin("filesAdded", TType.LIST, 1)
        oprot.writeListBegin(TType.STRING, len(self.files))
        for f in self.files:
            oprot.writeString(f)
        oprot.writeListEnd()
        oprot.writeFieldEnd()
        oprot.writeFieldStop()
        oprot.writeStructEnd()


def test_insert_event(pair: Pair) -> None:
    """Both emit INSERT through fire_listener_event from a Hive 2.3 client's request."""
    results = {}
    for side in (pair.ref, pair.ours):
        c = side.client
        db = unique("ins")
        c.create_database(Database(name=db))
        c.create_table(table(db, "t", keys=(("ds", "string"),)))
        c.append_partition(db, "t", ["x"])
        start = c.get_current_notificationEventId().eventId
        try:
            c.fire_listener_event(FireEventRequest(successful=True, data=FireEventRequestData(
                insertData=_InsertData23(["file:/data/f1"])), dbName=db, tableName="t", partitionVals=["x"]))
            events = c.get_next_notification(NotificationEventRequest(lastEvent=start, maxEvents=10)).events
            results[side.name] = [(e.eventType, list(json.loads(e.message))) for e in events if e.dbName == db]
        except TApplicationException as e:
            results[side.name] = e.type
        c.drop_database(db, True, True)
    assert results["reference"] == [("INSERT", ["server", "servicePrincipal", "db", "table", "timestamp", "files",
                                                "partKeyVals"])]
    # ours: Hive 3's INSERT message (the 2.3 keys plus tableType, tableObjJson, ptnObjJson, replace), same files
    (kind, keys), = results["ours"]
    assert kind == "INSERT" and set(results["reference"][0][1]) <= set(keys)


# --------------------------------------------------------------------------- errors

SAME = "same"  # same class and message
LONG = "a" * 129


@dataclass
class Case:
    label: str
    call: Callable[[Client, str], Any]
    expect: Any = SAME  # SAME, or ("class", our message prefix), or ("ours", reference outcome, our outcome)


def _outcome(call: Callable[[], Any]) -> tuple[str, str]:
    try:
        call()
        return ("OK", "")
    except TApplicationException as e:
        return ("TApplicationException", str(e.message))
    except Exception as e:  # a Hive exception of the client
        return (type(e).__name__, str(getattr(e, "message", e)))


def _p(db: str, vals: list[str], tbl: str = "t") -> Partition:
    return part(db, tbl, vals)


CASES = [
    # missing objects
    Case("get_database missing", lambda c, d: c.get_database(d + "_no")),
    Case("drop_database missing", lambda c, d: c.drop_database(d + "_no", True, False),
         ("ours", "MetaException", ("NoSuchObjectException", "{d}_no"))),
    Case("alter_database missing", lambda c, d: c.alter_database(d + "_no", Database(name=d + "_no")),
         ("ours", "OK", ("NoSuchObjectException", "{d}_no"))),
    Case("get_table missing", lambda c, d: c.get_table(d, "nope")),
    Case("get_table missing db", lambda c, d: c.get_table(d + "_no", "nope")),
    Case("drop_table missing", lambda c, d: c.drop_table(d, "nope", True)),
    Case("alter_table missing", lambda c, d: c.alter_table(d, "nope", table(d, "nope"))),
    Case("get_fields missing", lambda c, d: c.get_fields(d, "nope")),
    Case("get_partition missing", lambda c, d: c.get_partition(d, "t", ["y", "2"])),
    Case("get_partition_by_name missing", lambda c, d: c.get_partition_by_name(d, "t", "ds=y/h=2")),
    Case("drop_partition missing", lambda c, d: c.drop_partition(d, "t", ["y", "2"], True)),
    Case("drop_partition_by_name missing", lambda c, d: c.drop_partition_by_name(d, "t", "ds=y/h=2", True)),
    Case("alter_partition missing", lambda c, d: c.alter_partition(d, "t", _p(d, ["y", "2"])),
         ("class", "alter is not possible: partition does not exist: ds=y/h=2")),
    Case("add_partition missing table", lambda c, d: c.add_partition(_p(d, ["y", "2"], "nope"))),
    Case("add_partitions missing table", lambda c, d: c.add_partitions([_p(d, ["y", "2"], "nope")])),
    Case("append_partition missing table", lambda c, d: c.append_partition(d, "nope", ["y", "2"])),
    Case("append_partition_by_name missing table", lambda c, d: c.append_partition_by_name(d, "nope", "ds=y/h=2")),
    Case("get_partitions missing table", lambda c, d: c.get_partitions(d, "nope", -1)),
    Case("get_partition_names missing table", lambda c, d: c.get_partition_names(d, "nope", -1),
         ("ours", "TApplicationException", ("NoSuchObjectException", "{d}.nope table not found"))),
    Case("get_partitions_by_filter missing table", lambda c, d: c.get_partitions_by_filter(d, "nope", "ds='x'", -1)),
    Case("drop_partition missing table", lambda c, d: c.drop_partition(d, "nope", ["y", "2"], True),
         ("ours", "NoSuchObjectException", ("NoSuchObjectException", "{d}.nope table not found"))),
    Case("drop_partition_by_name missing table", lambda c, d: c.drop_partition_by_name(d, "nope", "ds=y/h=2", True)),
    Case("alter_partition missing table", lambda c, d: c.alter_partition(d, "nope", _p(d, ["y", "2"], "nope"))),
    Case("get_function missing", lambda c, d: c.get_function(d, "nofn")),
    Case("drop_function missing", lambda c, d: c.drop_function(d, "nofn")),
    Case("alter_function missing", lambda c, d: c.alter_function(d, "nofn", function(d, "nofn"))),
    # duplicates
    Case("create_database duplicate", lambda c, d: c.create_database(Database(name=d))),
    Case("create_table duplicate", lambda c, d: c.create_table(table(d, "t"))),
    Case("create_table missing db", lambda c, d: c.create_table(table(d + "_no", "t"))),
    Case("add_partition duplicate", lambda c, d: c.add_partition(_p(d, ["x", "1"])),
         ("class", "Partition already exists: ds=x/h=1")),
    Case("add_partitions duplicate", lambda c, d: c.add_partitions([_p(d, ["x", "1"])]),
         ("class", "Partition already exists: ds=x/h=1")),
    Case("create_function duplicate", lambda c, d: c.create_function(function(d, "f"))),
    Case("create_function missing db", lambda c, d: c.create_function(function(d + "_no", "g"))),
    # names
    *[Case(f"create_database {label}", lambda c, d, n=n: c.create_database(Database(name=n)))
      for label, n in [("empty", ""), ("dash", "a-b"), ("space", "a b"), ("slash", "a/b"), ("unicode", "t\u00e4b")]],
    *[Case(f"create_table {label}", lambda c, d, n=n: c.create_table(table(d, n)))
      for label, n in [("empty", ""), ("dash", "a-b"), ("space", "a b"), ("unicode", "t\u00e4b")]],
    *[Case(f"create_function {label}", lambda c, d, n=n: c.create_function(function(d, n)))
      for label, n in [("empty", ""), ("dash", "a-b"), ("space", "a b"), ("slash", "a/b"), ("unicode", "t\u00e4b")]],
    Case("create_database too long", lambda c, d: c.create_database(Database(name=LONG)),
         ("ours", "MetaException", ("InvalidObjectException", f"{LONG} is not a valid database name"))),
    Case("create_table too long", lambda c, d: c.create_table(table(d, LONG)),
         ("ours", "OK", ("InvalidObjectException", f"{LONG} is not a valid object name"))),
    Case("create_function too long", lambda c, d: c.create_function(function(d, LONG)),
         ("ours", "MetaException", ("InvalidObjectException", f"{LONG} is not a valid object name"))),
    Case("create_table slash", lambda c, d: c.create_table(table(d, "a/b")),
         ("ours", "OK", ("InvalidObjectException", "a/b is not a valid object name"))),
    Case("alter_table rename to invalid name", lambda c, d: c.alter_table(d, "t", table(d, "a-b"))),
    Case("alter_table rename into missing db", lambda c, d: c.alter_table(d, "t", table(d + "_no", "t")),
         ("ours", "MetaException", ("InvalidOperationException", "Unable to change partition or table. Database "
                                    "{d}_no does not exist Check metastore logs for detailed stack."))),
    # partition specifications
    Case("add_partition too few values", lambda c, d: c.add_partition(_p(d, ["y"]))),
    Case("add_partition too many values", lambda c, d: c.add_partition(_p(d, ["y", "1", "z"]))),
    Case("append_partition too few values", lambda c, d: c.append_partition(d, "t", ["y"])),
    Case("get_partition too few values", lambda c, d: c.get_partition(d, "t", ["x"])),
    Case("drop_partition too few values", lambda c, d: c.drop_partition(d, "t", ["x"], True)),
    Case("alter_partition too few values", lambda c, d: c.alter_partition(d, "t", _p(d, ["x"]))),
    Case("get_partitions_ps too many values", lambda c, d: c.get_partitions_ps(d, "t", ["x", "1", "2"], -1)),
    Case("add_partition empty value", lambda c, d: c.add_partition(_p(d, ["", "1"])),
         ("ours", "OK", ("MetaException", "Invalid partition key & values; keys [ds, h, ], values [, 1, ]"))),
    Case("get_partition_by_name unknown key", lambda c, d: c.get_partition_by_name(d, "t", "ds=x/zz=1")),
    Case("drop_partition_by_name unknown key", lambda c, d: c.drop_partition_by_name(d, "t", "ds=x/zz=1", True)),
    Case("append_partition_by_name unknown key", lambda c, d: c.append_partition_by_name(d, "t", "ds=y/zz=1")),
    Case("get_partition_by_name not a name", lambda c, d: c.get_partition_by_name(d, "t", "garbage")),
    Case("get_partition_by_name empty value", lambda c, d: c.get_partition_by_name(d, "t", "ds=/h=1")),
    Case("get_partition_by_name empty", lambda c, d: c.get_partition_by_name(d, "t", "")),
    Case("get_partition_by_name extra key", lambda c, d: c.get_partition_by_name(d, "t", "ds=x/h=1/zz=2"),
         ("ours", "OK", ("NoSuchObjectException",
                         "Invalid partition name ds=x/h=1/zz=2: zz is not a partition key (keys [ds, h])"))),
    # filters
    Case("filter syntax error", lambda c, d: c.get_partitions_by_filter(d, "t", "ds = ", -1),
         ("class", "Error parsing partition filter: ")),
    Case("filter syntax error 2", lambda c, d: c.get_partitions_by_filter(d, "t", "ds == 'x' and", -1),
         ("class", "Error parsing partition filter: ")),
    Case("filter unterminated string", lambda c, d: c.get_partitions_by_filter(d, "t", "ds = 'abc", -1),
         ("class", "Error parsing partition filter: unterminated string")),
    Case("filter unknown key", lambda c, d: c.get_partitions_by_filter(d, "t", "nokey = 'a'", -1)),
    Case("count filter unknown key", lambda c, d: c.get_num_partitions_by_filter(d, "t", "nokey = 'a'")),
    Case("filter int key with string", lambda c, d: c.get_partitions_by_filter(d, "t", "h = 'x'", -1),
         ("ours", "MetaException", ("OK", ""))),
    # columns
    Case("create_table wrong column type", lambda c, d: c.create_table(table(d, "bt", cols=(("a", "notatype"),)))),
    Case("create_table wrong partition key type",
         lambda c, d: c.create_table(table(d, "bt2", keys=(("ds", "notatype"),)))),
    Case("alter_table wrong column type", lambda c, d: c.alter_table(d, "t", table(d, "t", cols=(("a", "nope"),)))),
    Case("create_table upper-case type", lambda c, d: c.create_table(table(d, "up", cols=(("a", "INT"),))),
         ("ours", "InvalidObjectException", ("OK", ""))),
    Case("create_table empty type", lambda c, d: c.create_table(table(d, "bt3", cols=(("a", ""),))),
         ("ours", "MetaException", ("InvalidObjectException", "Invalid column type: "))),
    Case("create_table empty column name", lambda c, d: c.create_table(table(d, "bt4", cols=(("", "int"),))),
         ("ours", "OK", ("InvalidObjectException", "Invalid column name: "))),
    Case("create_table comma in column name", lambda c, d: c.create_table(table(d, "bt5", cols=(("a,b", "int"),))),
         ("ours", "OK", ("InvalidObjectException", "Invalid column name: a,b"))),
    Case("create_table duplicate column", lambda c, d: c.create_table(table(d, "bt6", cols=(("a", "int"),
                                                                                          ("a", "string"))),),
         ("ours", "MetaException", ("InvalidObjectException", "Duplicate column name a"))),
    Case("create_table column named as a key", lambda c, d: c.create_table(table(d, "bt7", cols=(("ds", "int"),))),
         ("ours", "OK", ("InvalidObjectException", "Partition column name ds conflicts with table columns."))),
    Case("create_table without storage descriptor",
         lambda c, d: c.create_table(Table(tableName="nosd", dbName=d, parameters={})),
         ("ours", "MetaException", ("InvalidObjectException", "Storage descriptor is not defined for the table"))),
    # databases
    Case("drop non-empty database", lambda c, d: c.drop_database(d, True, False)),
    Case("drop default database", lambda c, d: c.drop_database("default", True, True)),
]


@dataclass
class ErrorTarget:
    db: str
    ref: Client
    ours: Client


@pytest.fixture(scope="module")
def targets(reference: Reference, server: Any) -> Iterator[ErrorTarget]:  # noqa: F811
    db = unique("perr")
    rc, oc = Client(reference.port), Client(server.port)
    for c in (rc, oc):
        c.create_database(Database(name=db))
        c.create_table(table(db, "t"))
        c.add_partitions([part(db, "t", ["x", "1"])])
        c.create_function(function(db, "f"))
    yield ErrorTarget(db, rc, oc)
    for c in (rc, oc):
        try:
            c.drop_database(db, True, True)
        finally:
            c.close()


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_error(case: Case, targets: ErrorTarget, reference: Reference, server: Any) -> None:  # noqa: F811
    d = targets.db
    ref = _outcome(lambda: case.call(targets.ref, d))
    if ref[0] == "TTransportException":  # the reference dropped the connection after its own failure
        targets.ref = Client(reference.port)
    ours = _outcome(lambda: case.call(targets.ours, d))
    if case.expect == SAME:
        assert ref[0] != "OK", f"the reference accepted {case.label}"
        assert ours == ref
    elif case.expect[0] == "class":
        assert ours[0] == ref[0] != "OK"
        assert ours[1].startswith(case.expect[1].format(d=d)), ours
    else:
        _, ref_class, (our_class, our_message) = case.expect
        assert ref[0] == ref_class, ref
        assert ours == (our_class, our_message.format(d=d))
