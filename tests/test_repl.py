"""Replication between two real `metastore serve` processes: REPL DUMP on one, REPL LOAD on the other.

Changes are made through the source's Thrift API; after every cycle the target database must hold the same
tables, partitions, functions and data files as the source (locations compared relative to each database).
"""

from __future__ import annotations

import copy
import gc
import hashlib
import importlib
import json
import os
import subprocess
import sys
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metastore.repl.staging import FINISHED_DUMP, FINISHED_LOAD, NON_RECOVERABLE, Staging
from metastore.thrift import hms, tjson
from metastore.thrift.client import MetastoreClient

from conftest import ROOT, Server, make_database, unique

LOCAL = ["--with", "metastore.repl.copy.engine=local"]
repl_load = importlib.import_module("metastore.repl.load")  # the module (metastore.repl.load is also a function)


def two_servers(backend: str, tmp: Path) -> Iterator[tuple[Server, Server]]:
    """A source and a target `metastore serve`, each on its own store database of `backend`."""
    dbs = [make_database(backend, tmp / n) for n in ("src", "tgt")]
    for n in ("src", "tgt"):
        (tmp / n).mkdir()
    a, b = next(dbs[0]), next(dbs[1])
    src, tgt = Server(a, tmp / "src").start(), Server(b, tmp / "tgt").start()
    yield src, tgt
    src.stop()
    tgt.stop()
    for g in dbs:
        for _ in g:
            pass


@pytest.fixture(scope="module")
def pair(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server]]:
    yield from two_servers(backend, tmp_path_factory.mktemp("repl"))


def repl(*args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([sys.executable, "-m", "metastore.cli", "repl", *args], capture_output=True, text=True,
                       cwd=ROOT, env={**os.environ, **(env or {})}, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"repl {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def killed_load(writes: int, *args: str) -> subprocess.CompletedProcess[str]:
    """`metastore repl ARGS`, killed with SIGKILL right after its `writes`th write to a metastore (the testing
    seam tests/repl_killed_load.py)."""
    return subprocess.run([sys.executable, str(ROOT / "tests" / "repl_killed_load.py"), str(writes), "repl", *args],
                          check=False, capture_output=True, text=True, cwd=ROOT, timeout=300)


def cycle(src: Server, tgt: Server, db: str, tdb: str, root: Path) -> tuple[str, str]:
    d = repl("dump", db, "--with", f"hive.repl.rootdir={root}", "--metastore", src.uri)
    ld = repl("load", db, "--into", tdb, "--with", f"hive.repl.rootdir={root}", *LOCAL, "--metastore", tgt.uri)
    return d.stdout, ld.stdout


# ---- building objects ---------------------------------------------------------------------------------------

def _cols(*names: str) -> list[Any]:
    return [hms.FieldSchema(name=n, type="string", comment="") for n in names]


def table(db: str, name: str, parts: tuple[str, ...] = (), external: str | None = None,
          cols: tuple[str, ...] = ("a", "b")) -> Any:
    sd = hms.StorageDescriptor(cols=_cols(*cols), location=external,
                               inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                               compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
                               serdeInfo=hms.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy."
                                                       "LazySimpleSerDe", parameters={"field.delim": ","}))
    return hms.Table(tableName=name, dbName=db, owner="etl", sd=sd, partitionKeys=_cols(*parts),
                     parameters={"EXTERNAL": "TRUE"} if external else {"comment": "x"},
                     tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE")


def add_parts(ms: MetastoreClient, db: str, name: str, *values: str) -> None:
    t = ms.get_table(db, name)
    parts = [hms.Partition(values=[v], dbName=db, tableName=name, sd=copy.deepcopy(t.sd), parameters={})
             for v in values]
    for p in parts:
        p.sd.location = None
    ms.add_partitions(parts)


def write_file(ms: MetastoreClient, db: str, name: str, values: list[str] | None, fname: str, text: str) -> None:
    loc = (ms.get_partition(db, name, values) if values else ms.get_table(db, name)).sd.location
    path = Path(loc.removeprefix("file:"))
    path.mkdir(parents=True, exist_ok=True)
    (path / fname).write_text(text)


def insert_event(ms: MetastoreClient, db: str, name: str, values: list[str] | None, files: list[str]) -> None:
    ms.fire_listener_event(hms.FireEventRequest(
        successful=True, data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(filesAdded=files)),
        dbName=db, tableName=name, partitionVals=values))


def function(db: str, name: str, cls: str = "com.example.Upper") -> Any:
    return hms.Function(functionName=name, dbName=db, className=cls, ownerName="etl", ownerType=1, createTime=0,
                        functionType=1, resourceUris=[hms.ResourceUri(resourceType=1, uri="file:///jars/u.jar")])


# ---- comparing ----------------------------------------------------------------------------------------------

def _norm(obj: Any, base: str) -> Any:
    o = copy.deepcopy(obj)
    o.dbName = None
    for f in ("createTime", "lastAccessTime"):
        if hasattr(o, f):
            setattr(o, f, None)
    sd = getattr(o, "sd", None)
    if sd is not None and sd.location and sd.location.startswith(base):
        sd.location = "<db>" + sd.location[len(base):]
    serde = sd.serdeInfo.parameters if sd is not None and sd.serdeInfo else None
    if serde and serde.get("path", "").startswith(base):  # Spark's data source tables
        serde["path"] = "<db>" + serde["path"][len(base):]
    return json.loads(tjson.dumps(o))


def _tree(loc: str) -> dict[str, str]:
    root = Path(loc.removeprefix("file:"))
    if not root.is_dir():
        return {}
    return {str(p.relative_to(root)): hashlib.md5(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}


def snapshot(uri: str, db: str) -> dict[str, Any]:
    with MetastoreClient(uri) as ms:
        base = ms.get_database(db).locationUri.rstrip("/")
        out: dict[str, Any] = {"tables": {}, "functions": {}, "files": {}}
        for name in sorted(ms.get_all_tables(db)):
            t = ms.get_table(db, name)
            parts = ms.get_partitions(db, name, -1) if t.partitionKeys else []
            out["tables"][name] = {"table": _norm(t, base),
                                   "partitions": sorted((_norm(p, base) for p in parts), key=json.dumps)}
            if t.tableType == "MANAGED_TABLE":
                out["files"][name] = _tree(t.sd.location)
        for name in sorted(ms.get_functions(db, "*")):
            out["functions"][name] = _norm(ms.get_function(db, name), base)
    return out


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _diff(a.get(k), b.get(k), f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def assert_same(src: Server, tgt: Server, db: str, tdb: str) -> dict[str, Any]:
    a, b = snapshot(src.uri, db), snapshot(tgt.uri, tdb)
    assert a["tables"].keys() == b["tables"].keys()
    for name in a["tables"]:
        assert a["tables"][name] == b["tables"][name], (name, _diff(a["tables"][name], b["tables"][name]))
    assert a == b, _diff(a, b)
    return a


def target_params(tgt: Server, db: str) -> dict[str, str]:
    with MetastoreClient(tgt.uri) as ms:
        return dict(ms.get_database(db).parameters or {})


def current_id(s: Server) -> int:
    with MetastoreClient(s.uri) as ms:
        return ms.current_event_id()


def events_on(s: Server, db: str) -> list[Any]:
    with MetastoreClient(s.uri) as ms:
        evs = ms.next_notification(0, 100000)
    return [e for e in evs or [] if e.dbName == db]


# ---- the tests ----------------------------------------------------------------------------------------------

def test_bootstrap_then_incremental_cycles(pair: tuple[Server, Server], tmp_path: Path) -> None:
    src, tgt = pair
    db, tdb, root = unique("sales"), unique("dr"), tmp_path / "staging"
    ext = tmp_path / "external"
    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, description="sales", parameters={"owner.team": "a"}))
        ms.create_table(table(db, "orders", ("day",)))
        add_parts(ms, db, "orders", "2024-01-01", "2024-01-02", "2024-01-03")
        write_file(ms, db, "orders", ["2024-01-01"], "part-0", "1,a\n2,b\n")
        write_file(ms, db, "orders", ["2024-01-02"], "part-0", "3,c\n")
        ms.create_table(table(db, "customers"))
        write_file(ms, db, "customers", None, "part-0", "c1,x\n")
        ms.create_table(table(db, "raw", external=f"file:{ext}"))
        ms.create_function(function(db, "upper2"))

    out, loaded = cycle(src, tgt, db, tdb, root)
    assert "BOOTSTRAP dump" in out and "3 tables, 3 partitions, 1 functions" in out, out
    assert "3 files" in loaded, loaded
    snap = assert_same(src, tgt, db, tdb)
    assert snap["files"]["orders"] == {"day=2024-01-01/part-0": hashlib.md5(b"1,a\n2,b\n").hexdigest(),
                                       "day=2024-01-02/part-0": hashlib.md5(b"3,c\n").hexdigest()}
    params = target_params(tgt, tdb)
    assert params["repl.last.id"] == str(Staging(str(root), db).dumps()[-1].meta.to_id)
    first = Staging(str(root), db).dumps()[0]
    assert first.has(FINISHED_DUMP) and first.has(FINISHED_LOAD)
    assert first.meta.dump_type == "BOOTSTRAP" and Path(first.path).parent.name == "c2FsZXNf" + \
        Path(first.path).parent.name[8:]

    # every kind of change
    with MetastoreClient(src.uri) as ms:
        ms.create_table(table(db, "returns", ("day",)))
        add_parts(ms, db, "returns", "2024-02-01")
        write_file(ms, db, "returns", ["2024-02-01"], "part-0", "r1\n")
        add_parts(ms, db, "orders", "2024-01-04")
        add_parts(ms, db, "orders", "2024-01-05", "2024-01-06")  # a run of ADD_PARTITION events: one call
        write_file(ms, db, "orders", ["2024-01-04"], "part-0", "4,d\n")
        insert_event(ms, db, "orders", ["2024-01-04"], ["part-0"])
        ms.drop_partition(db, "orders", ["2024-01-03"], True)
        write_file(ms, db, "orders", ["2024-01-01"], "part-1", "5,e\n")  # an insert into an existing partition
        insert_event(ms, db, "orders", ["2024-01-01"], ["part-1"])
        p = ms.get_partition(db, "orders", ["2024-01-02"])
        p.parameters = {**p.parameters, "quality": "checked"}
        ms.alter_partition(db, "orders", p)
        ps = ms.get_partitions_by_names(db, "orders", ["day=2024-01-05", "day=2024-01-06"])
        for p in ps:
            p.parameters = {**p.parameters, "quality": "late"}
        ms.alter_partitions(db, "orders", ps)  # a run of ALTER_PARTITION events
        ms.drop_partition(db, "orders", ["2024-01-06"], True)
        t = ms.get_table(db, "customers")
        t.sd.cols.append(hms.FieldSchema(name="email", type="string", comment=""))
        t.parameters = {**t.parameters, "comment": "altered"}
        ms.alter_table(db, "customers", t)
        t = ms.get_table(db, "customers")
        t.tableName = "clients"
        ms.alter_table(db, "customers", t)           # rename: data follows
        ms.create_table(table(db, "customers"))      # and the old name is taken again
        ms.drop_table(db, "raw", False)
        ms.drop_function(db, "upper2")
        ms.create_function(function(db, "lower2", "com.example.Lower"))
        d = ms.get_database(db)
        d.parameters = {**d.parameters, "owner.team": "b"}
        ms.alter_database(db, d)

    out, loaded = cycle(src, tgt, db, tdb, root)
    assert "INCREMENTAL dump" in out, out
    snap = assert_same(src, tgt, db, tdb)
    assert set(snap["tables"]) == {"orders", "clients", "customers", "returns"}
    assert snap["files"]["clients"] == {"part-0": hashlib.md5(b"c1,x\n").hexdigest()}
    assert "day=2024-01-01/part-1" in snap["files"]["orders"]
    assert set(snap["functions"]) == {"lower2"}
    assert target_params(tgt, tdb)["owner.team"] == "b"

    # a second load of the same dumps changes nothing
    before = current_id(tgt)
    p = repl("load", db, "--into", tdb, "--with", f"hive.repl.rootdir={root}", *LOCAL, "--metastore", tgt.uri)
    assert "nothing to load" in p.stdout
    assert current_id(tgt) == before
    # a dump with nothing new, loaded: the target stays equal, its tables untouched
    out, loaded = cycle(src, tgt, db, tdb, root)
    assert "0 events" in out
    assert [e.eventType for e in events_on(tgt, tdb) if e.eventId > before] == []
    assert_same(src, tgt, db, tdb)
    s = repl("status", tdb, "--metastore", tgt.uri).stdout
    assert f"replica of {db}" in s and str(current_id(src)) in s

    # DUMP skips while the newest dump is not loaded
    repl("dump", db, "--with", f"hive.repl.rootdir={root}", "--metastore", src.uri)
    p = repl("dump", db, "--with", f"hive.repl.rootdir={root}", "--metastore", src.uri)
    assert "skipped" in p.stdout and "not loaded yet" in p.stdout


# values that need Hive's escaping in a partition name (/ = %), a space, and non-ASCII (not escaped)
ODD = [("eu/west", "zürich"), ("a=b", "new york"), ("50%", "x"), ("eu/west", "a=b/c")]


def _add(ms: MetastoreClient, db: str, name: str, values: list[tuple[str, str]]) -> None:
    t = ms.get_table(db, name)
    parts = [hms.Partition(values=list(v), dbName=db, tableName=name, sd=copy.deepcopy(t.sd), parameters={})
             for v in values]
    for p in parts:
        p.sd.location = None
    ms.add_partitions(parts)


def _names_and_values(uri: str, db: str, name: str) -> tuple[list[str], list[list[str]]]:
    with MetastoreClient(uri) as ms:
        return sorted(ms.get_partition_names(db, name)), sorted(p.values for p in ms.get_partitions(db, name))


def test_partition_values_needing_escapes_replicate(pair: tuple[Server, Server], tmp_path: Path) -> None:
    """Partition values with `/`, `=`, `%`, spaces and non-ASCII: bootstrap, incremental (add, alter, rename,
    drop, insert with data) and a re-bootstrap that drops a partition from the replica all give the source's
    partition names and values on the target, and the data in the partitions' own directories."""
    src, tgt = pair
    db, tdb, root = unique("v"), unique("vr"), tmp_path / "staging"
    with_root = ["--with", f"hive.repl.rootdir={root}"]
    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, parameters={}))
        ms.create_table(table(db, "sites", ("region", "city")))
        _add(ms, db, "sites", ODD[:3])
        write_file(ms, db, "sites", list(ODD[0]), "f0", "zurich\n")
        insert_event(ms, db, "sites", list(ODD[0]), ["f0"])
        names = ms.get_partition_names(db, "sites")
    assert "region=eu%2Fwest/city=zürich" in names and "region=a%3Db/city=new york" in names, names
    assert "region=50%25/city=x" in names, names
    cycle(src, tgt, db, tdb, root)  # bootstrap
    assert _names_and_values(tgt.uri, tdb, "sites") == _names_and_values(src.uri, db, "sites")
    assert_same(src, tgt, db, tdb)

    with MetastoreClient(src.uri) as ms:
        _add(ms, db, "sites", ODD[3:])                         # ADD_PARTITION
        write_file(ms, db, "sites", list(ODD[3]), "f3", "nested\n")
        insert_event(ms, db, "sites", list(ODD[3]), ["f3"])   # INSERT: data copied into the escaped directory
        p = ms.get_partition(db, "sites", list(ODD[1]))
        p.parameters = {**(p.parameters or {}), "note": "altered"}
        ms.alter_partition(db, "sites", p)                     # ALTER_PARTITION
        p = ms.get_partition(db, "sites", list(ODD[2]))
        p.values = ["100%", "new/york = ny"]
        ms.forward("rename_partition", db, "sites", list(ODD[2]), p)  # ALTER_PARTITION with other values
        ms.drop_partition(db, "sites", list(ODD[0]), True)    # DROP_PARTITION
    cycle(src, tgt, db, tdb, root)  # incremental
    names, values = _names_and_values(tgt.uri, tdb, "sites")
    assert (names, values) == _names_and_values(src.uri, db, "sites")
    assert ["100%", "new/york = ny"] in values and list(ODD[0]) not in values and list(ODD[3]) in values
    assert "region=100%25/city=new%2Fyork %3D ny" in names, names
    snap = assert_same(src, tgt, db, tdb)
    assert "region=eu%2Fwest/city=a%3Db%2Fc/f3" in snap["files"]["sites"], snap["files"]

    # a re-bootstrap reconciles a replica holding a partition the source dropped (found by its escaped name)
    with MetastoreClient(src.uri) as ms:
        ms.drop_partition(db, "sites", list(ODD[1]), True)
    assert "removed" in repl("reset", db, "--bootstrap", *with_root).stdout
    cycle(src, tgt, db, tdb, root)
    assert _names_and_values(tgt.uri, tdb, "sites") == _names_and_values(src.uri, db, "sites")
    assert list(ODD[1]) not in _names_and_values(tgt.uri, tdb, "sites")[1]
    assert_same(src, tgt, db, tdb)


def test_table_named_functions_and_functions_both_replicate(pair: tuple[Server, Server], tmp_path: Path) -> None:
    """Hive's bootstrap layout puts the functions in <db>/_functions/ and each table in <db>/<table>/: a table
    named _functions (a valid Hive name) shares that directory, and both it and the functions arrive."""
    src, tgt = pair
    db, tdb, root = unique("fn"), unique("fnr"), tmp_path / "staging"
    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, parameters={}))
        ms.create_table(table(db, "_functions", ("p",)))
        add_parts(ms, db, "_functions", "1")
        ms.create_table(table(db, "plain"))
        ms.create_function(function(db, "f1"))
    cycle(src, tgt, db, tdb, root)  # bootstrap
    snap = assert_same(src, tgt, db, tdb)
    assert set(snap["tables"]) == {"_functions", "plain"} and set(snap["functions"]) == {"f1"}, snap


@pytest.mark.parametrize("bound", ["count", "bytes"])
@pytest.mark.parametrize("backend", ["sqlite"], scope="module")  # repl's own logic, on SQLite only
def test_incremental_load_holds_a_bounded_number_of_messages(pair: tuple[Server, Server], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch, bound: str) -> None:
    """An incremental load streams its dump: the location check keeps at most CACHED decoded messages, of at
    most CACHED_BYTES of dumped text, the load reads the others again one by one and holds a run of like events
    at most (RUN), whatever the dump's size. (The bounds lowered so that a dump of 40 events is "large": the
    count or the bytes to 5 events.)"""
    src, tgt = pair
    db, tdb, root = unique("big"), unique("bigr"), tmp_path / "staging"
    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, parameters={}))
        ms.create_table(table(db, "parts", ("p",)))
    cycle(src, tgt, db, tdb, root)  # bootstrap
    with MetastoreClient(src.uri) as ms:
        for i in range(20):
            ms.create_table(table(db, f"t{i}"))
        for i in range(20):
            add_parts(ms, db, "parts", str(i))  # one ADD_PARTITION event each: runs of RUN events
    repl("dump", db, "--with", f"hive.repl.rootdir={root}", "--metastore", src.uri)

    if bound == "count":  # (raising=False: the test fails on its asserts, not here, against a version without)
        monkeypatch.setattr(repl_load, "CACHED", 5, raising=False)
    else:
        first5 = [p for _, p in Staging(str(root), db).dumps()[-1].event_dirs()][:5]
        monkeypatch.setattr(repl_load, "CACHED_BYTES", sum(os.path.getsize(Path(p) / "_metadata") for p in first5),
                            raising=False)
    monkeypatch.setattr(repl_load, "RUN", 3, raising=False)
    refs: list[weakref.ref[Any]] = []  # to every message decoded (messages are unhashable: no WeakSet)

    def live() -> int:
        """How many decoded messages are still reachable (garbage cycles collected first: a traceback caught
        in the client holds the frame of an _apply for a while)."""
        gc.collect()
        return sum(r() is not None for r in refs)

    read, check = repl_load._read_event, repl_load.Loader._check_locations
    apply, apply_run = repl_load.Loader._apply, repl_load.Loader._apply_run
    reads, seen = [0], {"checked": 0, "applying": 0}

    def counted_read(path: str) -> Any:
        m = read(path)
        refs.append(weakref.ref(m))
        reads[0] += 1
        return m

    def counted_check(self: Any) -> None:
        check(self)
        seen["checked"] = live()

    def counted_apply(self: Any, m: Any) -> None:
        seen["applying"] = max(seen["applying"], live())
        apply(self, m)

    def counted_apply_run(self: Any, group: list[Any]) -> None:
        seen["applying"] = max(seen["applying"], live())
        seen["runs"] = seen.get("runs", 0) + 1
        apply_run(self, group)

    monkeypatch.setattr(repl_load, "_read_event", counted_read)
    monkeypatch.setattr(repl_load.Loader, "_check_locations", counted_check)
    monkeypatch.setattr(repl_load.Loader, "_apply", counted_apply)
    monkeypatch.setattr(repl_load.Loader, "_apply_run", counted_apply_run)
    [result] = repl_load.load(tgt.uri, db, tdb, str(root), {"metastore.repl.copy.engine": "local"})
    assert result.events == 40 and result.skipped_events == 0, result.describe()
    assert seen["checked"] <= 5, seen  # the rest were dropped once checked
    assert seen["applying"] <= 5 + 2 * 3 + 1, seen  # the cache left, two runs, one being read
    assert seen["runs"] == 7, seen  # 20 ADD_PARTITION events in runs of at most 3
    assert reads[0] == 40 + 35, reads  # every event read by the check; all but the 5 kept read again
    assert_same(src, tgt, db, tdb)


def _many_changes(ms: MetastoreClient, db: str, n: int, tag: str) -> None:
    for i in range(n):
        name = f"{tag}{i}"
        ms.create_table(table(db, name, ("p",)))
        add_parts(ms, db, name, "1", "2")
        write_file(ms, db, name, ["1"], "f", f"{name}\n")
        insert_event(ms, db, name, ["1"], ["f"])
        ms.drop_partition(db, name, ["2"], True)


def _no_duplicates(tgt: Server, tdb: str) -> None:
    """Every table created once and every partition added once on the target, whatever was replayed."""
    creates: dict[str, int] = {}
    added: dict[tuple[str, str], int] = {}
    for e in events_on(tgt, tdb):
        if e.eventType == "CREATE_TABLE":
            creates[e.tableName] = creates.get(e.tableName, 0) + 1
        elif e.eventType == "ADD_PARTITION":
            for spec in json.loads(e.message)["partitions"]:
                k = (e.tableName, json.dumps(spec, sort_keys=True))
                added[k] = added.get(k, 0) + 1
    assert creates and max(creates.values()) == 1, creates
    assert added and max(added.values()) == 1, added


@pytest.mark.slow
def test_kill_9_during_load_then_rerun_converges(pair: tuple[Server, Server], tmp_path: Path) -> None:
    src, tgt = pair
    db, tdb, root = unique("k"), unique("kr"), tmp_path / "staging"
    with_root = ["--with", f"hive.repl.rootdir={root}"]
    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, parameters={}))
        _many_changes(ms, db, 6, "boot")
    repl("dump", db, *with_root, "--metastore", src.uri)
    # the bootstrap load dies half-way through its 6 tables
    p = killed_load(8, "load", db, "--into", tdb, *with_root, *LOCAL, "--metastore", tgt.uri)
    assert p.returncode == -9, p.stderr
    assert "loading dump" in repl("status", tdb, "--metastore", tgt.uri).stdout
    dump_dir = Staging(str(root), db).dumps()[-1]
    assert not dump_dir.loaded and not dump_dir.has(NON_RECOVERABLE)
    repl("load", db, "--into", tdb, *with_root, *LOCAL, "--metastore", tgt.uri)
    assert_same(src, tgt, db, tdb)

    with MetastoreClient(src.uri) as ms:
        _many_changes(ms, db, 12, "inc")
        for i in range(3):
            ms.drop_table(db, f"boot{i}", True)
    repl("dump", db, *with_root, "--metastore", src.uri)
    for kill_after in (10, 20):  # twice: the second run resumes a resumed load
        p = killed_load(kill_after, "load", db, "--into", tdb, *with_root, *LOCAL, "--metastore", tgt.uri)
        assert p.returncode == -9, p.stderr
    with pytest.raises(AssertionError):
        assert_same(src, tgt, db, tdb)  # really half-way
    out = repl("load", db, "--into", tdb, *with_root, *LOCAL, "--metastore", tgt.uri).stdout
    assert "already applied" in out
    assert_same(src, tgt, db, tdb)
    _no_duplicates(tgt, tdb)
    assert target_params(tgt, tdb)["repl.last.id"] == str(Staging(str(root), db).dumps()[-1].meta.to_id)
    assert "metastore.repl.loading" not in target_params(tgt, tdb)


def _fails(p: subprocess.CompletedProcess[str], *words: str, code: int = 1) -> str:
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    for w in words:
        assert w in p.stderr, (w, p.stderr)
    return p.stderr


def test_bad_input_clear_errors_and_nothing_applied(pair: tuple[Server, Server], tmp_path: Path) -> None:
    src, tgt = pair
    db, tdb, root = unique("b"), unique("br"), tmp_path / "staging"
    with_root = ["--with", f"hive.repl.rootdir={root}"]
    load = ["load", db, "--into", tdb, *with_root, *LOCAL, "--metastore", tgt.uri]

    # an unknown database: nothing dumped
    _fails(repl("dump", unique("nosuch"), *with_root, "--metastore", src.uri, check=False), "does not exist")
    assert not root.exists() or not any(root.iterdir())
    assert "nothing to load" in repl(*load).stdout
    _fails(repl("dump", db, "--with", "novalue", "--metastore", src.uri, check=False), "KEY=VALUE", code=2)
    _fails(repl("dump", db, *with_root, "--metastore", "http://x", check=False), "thrift://")

    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, parameters={}))
        ms.create_table(table(db, "t1", ("p",)))
        add_parts(ms, db, "t1", "1")
        ms.create_function(function(db, "f1"))
    # a bootstrap into a database that exists, is not empty and is no replica
    with MetastoreClient(tgt.uri) as ms:
        ms.create_database(hms.Database(name=tdb, parameters={}))
        ms.create_table(table(tdb, "mine"))
    repl("dump", db, *with_root, "--metastore", src.uri)
    before = current_id(tgt)
    _fails(repl(*load, check=False), "is not empty and is not a replica")
    assert current_id(tgt) == before
    with MetastoreClient(tgt.uri) as ms:
        ms.drop_table(tdb, "mine", True)
    repl(*load)
    assert_same(src, tgt, db, tdb)

    # an unreadable staging directory, a malformed dump metadata file: nothing applied
    staging = Staging(str(root), db)
    with MetastoreClient(src.uri) as ms:
        ms.create_table(table(db, "t2"))
    repl("dump", db, *with_root, "--metastore", src.uri)
    newest = staging.dumps()[-1]
    meta = Path(newest.file("_dumpmetadata"))
    good = meta.read_text()
    meta.write_text("INCREMENTAL\tx\n")
    before = current_id(tgt)
    _fails(repl(*load, check=False), "_dumpmetadata", "not a dump metadata file")
    meta.write_text(good)
    os.rename(staging.dir, staging.dir + ".away")
    Path(staging.dir).write_text("not a directory")
    _fails(repl(*load, check=False), "cannot read the staging directory")
    os.remove(staging.dir)
    os.rename(staging.dir + ".away", staging.dir)
    assert current_id(tgt) == before

    # an incremental dump into a database that was never bootstrapped
    other = unique("never")
    _fails(repl("load", db, "--into", other, *with_root, *LOCAL, "--metastore", tgt.uri, check=False),
           f"{other}", "has no repl.last.id")
    with MetastoreClient(tgt.uri) as ms:
        assert ms.find_database(other) is None
    repl(*load)
    assert_same(src, tgt, db, tdb)

    # a target changed outside replication: refused before any write, then repaired by a new bootstrap
    with MetastoreClient(tgt.uri) as ms:
        ms.create_table(table(tdb, "rogue"))
    with MetastoreClient(src.uri) as ms:
        ms.create_table(table(db, "t3"))
    repl("dump", db, *with_root, "--metastore", src.uri)
    before, snap = current_id(tgt), snapshot(tgt.uri, tdb)
    _fails(repl(*load, check=False), "diverged", "CREATE_TABLE rogue", "reset")
    assert current_id(tgt) == before and snapshot(tgt.uri, tdb) == snap
    assert not staging.dumps()[-1].has(NON_RECOVERABLE)
    assert "removed" in repl("reset", db, "--bootstrap", *with_root).stdout
    assert "BOOTSTRAP" in repl("dump", db, *with_root, "--metastore", src.uri).stdout
    repl(*load)
    assert_same(src, tgt, db, tdb)

    # a failure half-way that a retry cannot fix: a marker, refused until `repl reset`
    with MetastoreClient(src.uri) as ms:
        ms.create_table(table(db, "t4"))
        ms.create_table(table(db, "t5"))
    repl("dump", db, *with_root, "--metastore", src.uri)
    newest = staging.dumps()[-1]
    first, second = [p for _, p in newest.event_dirs()]
    bad = Path(second) / "_metadata"
    good = bad.read_text()
    bad.write_text(good.replace('"message":"{', '"message":"{broken'))
    _fails(repl(*load, check=False), "needs `metastore repl reset")
    assert newest.has(NON_RECOVERABLE)
    _fails(repl(*load, check=False), "needs `metastore repl reset")
    _fails(repl("dump", db, *with_root, "--metastore", src.uri, check=False), "needs `metastore repl reset")
    bad.write_text(good)
    assert "cleared" in repl("reset", db, *with_root).stdout
    repl(*load)
    assert_same(src, tgt, db, tdb)


def test_purged_events_fail_the_dump_clearly(pair: tuple[Server, Server], tmp_path: Path) -> None:
    src, tgt = pair
    db, tdb, root = unique("p"), unique("pr"), tmp_path / "staging"
    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, parameters={}))
    cycle(src, tgt, db, tdb, root)
    with MetastoreClient(src.uri) as ms:
        ms.create_table(table(db, "t1"))
        ms.create_table(table(db, "t2"))
    time.sleep(1.1)
    p = subprocess.run([sys.executable, "-m", "metastore.cli", "events", "clean", "--db", src.db.url, "--ttl", "0",
                        "--max-ttl", "0"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0 and "cleaned" in p.stdout, p.stderr
    n = len(Staging(str(root), db).dumps())
    _fails(repl("dump", db, "--with", f"hive.repl.rootdir={root}", "--metastore", src.uri, check=False),
           "HIVE-20629", "no longer has the events")
    assert len(Staging(str(root), db).dumps()) == n


def _spark(phase: str, server: Server, db: str, out: Path) -> dict[str, Any]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "repl_spark_workload.py"), "--phase", phase,
                        "--uri", server.uri, "--warehouse", str(server.warehouse), "--db", db, "--out", str(out)],
                       capture_output=True, text=True, env=env, cwd=out.parent, timeout=900)
    assert p.returncode == 0 and out.exists(), f"spark {phase} failed:\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}"
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.spark
# Spark writing and copying the data: the loads' store work is the other tests' on every store
@pytest.mark.parametrize("backend", ["sqlite"], scope="module")
def test_spark_tables_replicated_with_spark_copy(pair: tuple[Server, Server], tmp_path: Path) -> None:
    """Acceptance 1: Spark writes on the source; after bootstrap and after an incremental cycle, Spark on
    the target answers every query as on the source. The data is copied by the PySpark job."""
    import shutil
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    src, tgt = pair
    db, root = unique("shop"), tmp_path / "staging"
    spark_copy = ["--with", "metastore.repl.copy.engine=spark", "--with", "spark.master=local[2]"]
    for n, phase in enumerate(("write1", "write2")):
        source = _spark(phase, src, db, tmp_path / f"src{n}.json")
        repl("dump", db, "--with", f"hive.repl.rootdir={root}", "--metastore", src.uri)
        out = repl("load", db, "--with", f"hive.repl.rootdir={root}", *spark_copy, "--metastore", tgt.uri).stdout
        assert "bytes copied" in out and " 0 files" not in out, out
        replica = _spark("query", tgt, db, tmp_path / f"tgt{n}.json")
        assert replica == source
        assert_same(src, tgt, db, db)
    assert set(source) >= {"sales", "customers", "visits2", "returns"} and "scratch" not in source
    assert source["_up"] == ["ANN", "BOB", "CY", "DEE"]
    assert "day=2024-01-01" not in source["sales"]["partitions"]


def sql(server: Server, statement: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([sys.executable, "-m", "metastore.cli", "sql", "--db", server.db.url, statement],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    if check and p.returncode != 0:
        raise AssertionError(f"sql {statement!r} failed:\n{p.stdout}\n{p.stderr}")
    return p


def rows(server: Server, statement: str) -> list[dict[str, str]]:
    lines = sql(server, statement).stdout.splitlines()
    cols = lines[0].split("\t")
    return [dict(zip(cols, line.split("\t"))) for line in lines[1:]]


def wait_for(what: str, cond: Any, timeout: float = 60) -> Any:
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def _same_now(src: Server, tgt: Server, db: str, tdb: str) -> bool:
    try:
        return snapshot(src.uri, db)["tables"] == snapshot(tgt.uri, tdb)["tables"]
    except Exception:  # noqa: BLE001 - the target database not there yet
        return False


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite"], scope="module")  # repl's own logic, on SQLite only
def test_scheduled_policies_every_5_seconds(pair: tuple[Server, Server], tmp_path: Path) -> None:
    """Acceptance 2: a dump policy on the source and a load policy on the target, EVERY 5 SECONDS."""
    src, tgt = pair
    db, tdb, root = unique("sch"), unique("schr"), tmp_path / "staging"
    pd, pl = unique("dump_p"), unique("load_p")
    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, parameters={}))
        ms.create_table(table(db, "t1", ("p",)))
        add_parts(ms, db, "t1", "1", "2")

    # malformed statements: a clear error, nothing created
    for bad, words in [(f"CREATE SCHEDULED QUERY {pd} EVERY 5 FORTNIGHTS AS REPL DUMP {db}", "FORTNIGHTS"),
                       (f"CREATE SCHEDULED QUERY {pd} CRON '1 2' AS REPL DUMP {db}", "6 or 7 fields"),
                       (f"CREATE SCHEDULED QUERY {pd} EVERY 5 SECONDS AS SELECT 1", "expected REPL"),
                       (f"ALTER SCHEDULED QUERY {pd} ENABLED", "does not exist"),
                       ("SELECT * FROM sys.nothing", "expected one of")]:
        p = sql(src, bad, check=False)
        assert p.returncode == 1 and words in p.stderr, (bad, p.stderr)
    assert rows(src, f"SELECT * FROM information_schema.scheduled_queries WHERE schedule_name='{pd}'") == []

    sql(src, f"CREATE SCHEDULED QUERY {pd} EVERY 5 SECONDS EXECUTED AS hive AS REPL DUMP {db} "
             f"WITH ('hive.repl.rootdir'='{root}')")
    sql(tgt, f"CREATE SCHEDULED QUERY {pl} EVERY 5 SECONDS AS REPL LOAD {db} INTO {tdb} "
             f"WITH ('hive.repl.rootdir'='{root}', 'metastore.repl.copy.engine'='local')")
    [q] = rows(src, f"SELECT * FROM information_schema.scheduled_queries WHERE schedule_name='{pd}'")
    assert q["enabled"] == "True" and q["user"] == "hive" and q["schedule"] == "EVERY 5 SECONDS"
    assert q["query"] == f"REPL DUMP {db} WITH ('hive.repl.rootdir'='{root}')"

    wait_for("the bootstrap through the policies", lambda: _same_now(src, tgt, db, tdb), 60)
    with MetastoreClient(src.uri) as ms:
        add_parts(ms, db, "t1", "3")
        ms.create_table(table(db, "t2"))
    wait_for("the incremental through the policies", lambda: _same_now(src, tgt, db, tdb), 60)

    dumps = Staging(str(root), db).dumps()
    assert [d.meta.dump_type for d in dumps][:1] == ["BOOTSTRAP"] and "INCREMENTAL" in [d.meta.dump_type for d in dumps]
    assert all(d.dumped for d in dumps) and all(d.loaded for d in dumps[:-1])
    dexec = rows(src, f"SELECT * FROM information_schema.scheduled_executions WHERE schedule_name='{pd}'")
    lexec = rows(tgt, f"SELECT * FROM information_schema.scheduled_executions WHERE schedule_name='{pl}'")
    assert {e["state"] for e in dexec} <= {"FINISHED", "EXECUTING"} and len(dexec) >= 2
    assert {e["state"] for e in lexec} <= {"FINISHED", "EXECUTING"} and len(lexec) >= 2
    dm = rows(src, f"SELECT * FROM sys.replication_metrics WHERE policy_name='{pd}'")
    lm = rows(tgt, f"SELECT * FROM sys.replication_metrics WHERE policy_name='{pl}'")
    dstat = [json.loads(m["progress"])["status"] for m in dm]
    lstat = [json.loads(m["progress"])["status"] for m in lm]
    assert "SUCCESS" in dstat and set(dstat) <= {"SUCCESS", "SKIPPED", "IN_PROGRESS"}, dstat
    assert "SUCCESS" in lstat and set(lstat) <= {"SUCCESS", "SKIPPED", "IN_PROGRESS"}, lstat
    loads_done = [m for m in lm if json.loads(m["progress"])["status"] == "SUCCESS"]
    types = {json.loads(m["metadata"])["replicationType"] for m in loads_done}
    assert types == {"BOOTSTRAP", "INCREMENTAL"}
    dump_ids = {e["scheduled_execution_id"] for e in rows(
        src, f"SELECT * FROM information_schema.scheduled_executions WHERE schedule_name='{pd}'")}
    assert {m["dump_execution_id"] for m in loads_done} <= dump_ids  # the handshake: each load names its dump
    stage = json.loads(loads_done[0]["progress"])["stages"][0]
    assert stage["name"] == "REPL_LOAD" and stage["startTime"] <= stage["endTime"]

    # the source keeps the events the dump policy has not dumped yet: it is a registered consumer
    consumers = subprocess.run([sys.executable, "-m", "metastore.cli", "events", "consumers", "--db", src.db.url],
                               capture_output=True, text=True, cwd=ROOT, timeout=60).stdout
    assert f"repl.policy.{pd}" in consumers, consumers

    # disabled: no more executions, nothing replicated; EXECUTE runs one at once
    sql(src, f"ALTER SCHEDULED QUERY {pd} DISABLED")
    time.sleep(1.5)  # an execution already started ends
    n = len(rows(src, f"SELECT * FROM information_schema.scheduled_executions WHERE schedule_name='{pd}'"))
    with MetastoreClient(src.uri) as ms:
        ms.create_table(table(db, "t3"))
    time.sleep(11)
    assert len(rows(src, f"SELECT * FROM information_schema.scheduled_executions WHERE schedule_name='{pd}'")) == n
    assert not _same_now(src, tgt, db, tdb)
    sql(src, f"ALTER SCHEDULED QUERY {pd} EXECUTE")
    wait_for("the executed dump", lambda: len(rows(
        src, f"SELECT * FROM information_schema.scheduled_executions WHERE schedule_name='{pd}'")) == n + 1, 10)
    wait_for("its load", lambda: _same_now(src, tgt, db, tdb), 30)
    time.sleep(6)
    assert len(rows(src, f"SELECT * FROM information_schema.scheduled_executions WHERE schedule_name='{pd}'")) == n + 1
    sql(src, f"DROP SCHEDULED QUERY {pd}")
    sql(tgt, f"DROP SCHEDULED QUERY {pl}")
    assert rows(tgt, "SELECT * FROM information_schema.scheduled_queries WHERE schedule_name='" + pl + "'") == []
    wait_for("the dropped policy's consumer to go", lambda: f"repl.policy.{pd}" not in subprocess.run(
        [sys.executable, "-m", "metastore.cli", "events", "consumers", "--db", src.db.url],
        capture_output=True, text=True, cwd=ROOT, timeout=60).stdout, 15)


def test_replicate_api_one_call_per_cycle(pair: tuple[Server, Server], tmp_path: Path) -> None:
    """metastore.repl.replicate: what the main job calls; loads a dump left unloaded before dumping."""
    from metastore.repl import replicate

    src, tgt = pair
    db, tdb = unique("api"), unique("apir")
    opts = {"hive.repl.rootdir": str(tmp_path / "staging"), "metastore.repl.copy.engine": "local"}
    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, parameters={}))
        ms.create_table(table(db, "t1", ("p",)))
        add_parts(ms, db, "t1", "a")
        write_file(ms, db, "t1", ["a"], "f", "x\n")
    d, loaded = replicate(src.uri, tgt.uri, db, tdb, opts)
    assert d is not None and d.dump_type == "BOOTSTRAP" and [r.dump_type for r in loaded] == ["BOOTSTRAP"]
    assert loaded[0].files_copied == 1
    assert_same(src, tgt, db, tdb)
    with MetastoreClient(src.uri) as ms:
        add_parts(ms, db, "t1", "b")
    repl("dump", db, "--with", f"hive.repl.rootdir={opts['hive.repl.rootdir']}", "--metastore", src.uri)
    with MetastoreClient(src.uri) as ms:
        ms.drop_table(db, "t1", True)
    d, loaded = replicate(src.uri, tgt.uri, db, tdb, opts)  # the dump left unloaded first, then a new one
    assert [r.dump_type for r in loaded] == ["INCREMENTAL", "INCREMENTAL"]
    assert_same(src, tgt, db, tdb)
    assert snapshot(tgt.uri, tdb)["tables"] == {}
