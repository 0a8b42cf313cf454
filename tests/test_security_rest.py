"""Attacks on the Iceberg REST front of `metastore serve` (issue 18), through raw HTTP and PyIceberg's
RestCatalog against a real server, with sacrificial files under the test's temporary directory:

- a table property naming a class (py-io-impl, write.py-location-provider.impl, ...) on create, on commit, and
  on an old table carrying it (set through Thrift): the class, importable by the server, is never run;
- a property choosing an endpoint is refused, and the server never connects to it;
- register-table of files the server must not read: refused, and no answer carries their content or tells
  whether they exist;
- a table registered on (or placed over) another table's files, then purged: the other table keeps its files;
- locations outside the allowed roots: nothing is written or deleted there.

Each refusal leaves the store unchanged (listings, metadata location, notification id) and the server serving.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Client, Database, Server, unique

pytest.importorskip("pyiceberg.catalog.rest")
pa = pytest.importorskip("pyarrow")
requests = pytest.importorskip("requests")

from hive_metastore.ttypes import FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table  # noqa: E402
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
ICEBERG_SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "type": "long", "required": False},
    {"id": 2, "name": "name", "type": "string", "required": False}]}
PROBE = "rest_attack_probe.Probe"  # a class the server can import (its PYTHONPATH); running it leaves a marker
CODE_KEYS = ["py-io-impl", "write.py-location-provider.impl", "s3.retry-strategy-impl", "py-catalog-impl",
             "io-impl", "client.factory"]
ENDPOINT_KEYS = ["s3.endpoint", "s3.access-key-id", "s3.region", "s3.proxy-uri", "s3.signer.uri", "client.region",
                 "gcs.service.host", "adls.account-host", "hf.endpoint", "hdfs.host", "warehouse"]
SECRET = "SECRET-d41d8cd98f00b204"


class Env:
    def __init__(self, srv: Server, workdir: Path) -> None:
        self.srv = srv
        self.markers = workdir / "markers"
        self.outside = workdir / "outside"  # not under the warehouse: the server may neither read nor write it

    def ran(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())


@pytest.fixture(scope="module")
def env(database: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    workdir = tmp_path_factory.mktemp("restsec")
    probe = workdir / "probe"
    probe.mkdir()
    (workdir / "markers").mkdir()
    (workdir / "outside").mkdir()
    # importable by the server only (the test process must not import it through its own PyIceberg)
    (probe / "rest_attack_probe.py").write_text(
        "import os, uuid\n"
        f"MARKERS = {str(workdir / 'markers')!r}\n"
        "class Probe:\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        open(os.path.join(MARKERS, 'ran-' + uuid.uuid4().hex), 'w').close()\n")
    srv = Server(database, workdir, env={"PYTHONPATH": str(probe)}).start()
    e = Env(srv, workdir)
    yield e
    srv.stop()


@pytest.fixture
def rest(env: Env) -> RestCatalog:
    return RestCatalog("rest", uri=env.srv.rest_uri)


@pytest.fixture
def thrift(env: Env) -> Iterator[Client]:
    c = Client(env.srv.port)
    yield c
    c.close()


def http(env: Env, method: str, path: str, body: Any = None, raw: bytes | None = None) -> requests.Response:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    return requests.request(method, env.srv.rest_uri + path, data=data, timeout=30,
                            headers={"Content-Type": "application/json"})


def error_of(r: requests.Response, code: int, type_: str) -> str:
    assert r.status_code == code, r.text
    err = r.json()["error"]
    assert err["code"] == code and err["type"] == type_, err
    return str(err["message"])


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": list(range(start, start + n)), "name": [f"r{i}" for i in range(start, start + n)]},
                    schema=SCHEMA)


def state(thrift: Client, ns: str) -> tuple[int, list[str], dict[str, str | None]]:
    """What a refusal must leave unchanged: the notification id, the namespace's tables, their metadata."""
    names = sorted(thrift.get_all_tables(ns))
    return (thrift.get_current_notificationEventId().eventId, names,
            {n: thrift.get_table(ns, n).parameters.get("metadata_location") for n in names})


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def serving(env: Env, rest: RestCatalog, ns: str) -> None:
    assert env.srv.alive()
    assert http(env, "GET", "/v1/config").status_code == 200
    rest.list_tables(ns)


def create_body(name: str, properties: dict[str, str] | None = None, location: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "schema": ICEBERG_SCHEMA, "properties": properties or {}}
    if location is not None:
        body["location"] = location
    return body


def namespace(rest: RestCatalog, env: Env) -> tuple[str, Path]:
    ns = unique("sec")
    rest.create_namespace(ns)
    return ns, env.srv.warehouse / f"{ns}.db"


# ---- code from a table property ----------------------------------------------------------------------------


def test_code_properties_are_refused_on_create_and_commit(env: Env, rest: RestCatalog, thrift: Client) -> None:
    ns, ns_dir = namespace(rest, env)
    http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body("t")).raise_for_status()
    path = f"/v1/namespaces/{ns}/tables/t"
    before, files = state(thrift, ns), files_under(ns_dir)
    for key in CODE_KEYS:
        for stage in (False, True):
            body = {**create_body("victim", {key: PROBE}), "stage-create": stage}
            msg = error_of(http(env, "POST", f"/v1/namespaces/{ns}/tables", body), 400, "BadRequestException")
            assert key in msg
        msg = error_of(http(env, "POST", path, {"requirements": [], "updates": [
            {"action": "set-properties", "updates": {"comment": "x", key: PROBE}}]}), 400, "BadRequestException")
        assert key in msg
        msg = error_of(http(env, "POST", "/v1/transactions/commit", {"table-changes": [
            {"identifier": {"namespace": [ns], "name": "t"}, "requirements": [],
             "updates": [{"action": "set-properties", "updates": {key.upper(): PROBE}}]}]}),
            400, "BadRequestException")
        assert key.upper() in msg
    assert env.ran() == []
    assert state(thrift, ns) == before and files_under(ns_dir) == files
    serving(env, rest, ns)


def test_old_table_with_code_properties_never_runs_them(env: Env, rest: RestCatalog, thrift: Client) -> None:
    """A table whose metadata and Hive parameters already carry py-io-impl and a location provider (written
    before this server refused them, or through Thrift) loads, commits and purges without running them."""
    ns, ns_dir = namespace(rest, env)
    t = rest.create_table(f"{ns}.old", schema=SCHEMA)
    t.append(rows(2))
    current = Path(t.metadata_location.removeprefix("file:"))
    doc = json.loads(current.read_text())
    doc["properties"].update({"py-io-impl": PROBE, "write.py-location-provider.impl": PROBE,
                              "s3.endpoint": "http://127.0.0.1:9"})
    doc["metadata-log"].append({"metadata-file": t.metadata_location, "timestamp-ms": doc["last-updated-ms"]})
    crafted = current.parent / f"00002-{uuid.uuid4()}.metadata.json"
    crafted.write_text(json.dumps(doc))
    h = thrift.get_table(ns, "old")
    h.parameters.update({"metadata_location": str(crafted), "previous_metadata_location": t.metadata_location,
                         "py-io-impl": PROBE, "write.py-location-provider.impl": PROBE})
    thrift.alter_table(ns, "old", h)

    loaded = http(env, "GET", f"/v1/namespaces/{ns}/tables/old")
    assert loaded.status_code == 200, loaded.text
    assert loaded.json()["metadata"]["properties"]["py-io-impl"] == PROBE  # served as data, never used
    committed = http(env, "POST", f"/v1/namespaces/{ns}/tables/old", {
        "requirements": [{"type": "assert-table-uuid", "uuid": doc["table-uuid"]}],
        "updates": [{"action": "set-properties", "updates": {"note": "fine"}}]})
    assert committed.status_code == 200, committed.text
    new_location = committed.json()["metadata-location"]
    assert Path(new_location.removeprefix("file:")).parent == current.parent  # the server named the file
    assert any(p.suffix == ".parquet" for p in (ns_dir / "old").rglob("*"))
    assert http(env, "DELETE", f"/v1/namespaces/{ns}/tables/old?purgeRequested=true").status_code == 204
    assert env.ran() == []
    assert not [p for p in (ns_dir / "old").rglob("*") if p.is_file()]  # purged all the same
    assert sorted(thrift.get_all_tables(ns)) == []
    serving(env, rest, ns)


# ---- endpoints from a table property -----------------------------------------------------------------------


def test_endpoint_properties_are_refused_and_never_reached(env: Env, rest: RestCatalog, thrift: Client) -> None:
    ns, ns_dir = namespace(rest, env)
    http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body("t")).raise_for_status()
    before, files = state(thrift, ns), files_under(ns_dir)
    with socket.socket() as trap:  # an "S3 endpoint" the server must never connect to
        trap.bind(("127.0.0.1", 0))
        trap.listen(16)
        trap.settimeout(0.5)
        endpoint = f"http://127.0.0.1:{trap.getsockname()[1]}"
        for key in ENDPOINT_KEYS:
            msg = error_of(http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body("x", {key: endpoint})),
                           400, "BadRequestException")
            assert key in msg
            msg = error_of(http(env, "POST", f"/v1/namespaces/{ns}/tables/t", {"requirements": [], "updates": [
                {"action": "set-properties", "updates": {key: endpoint}}]}), 400, "BadRequestException")
            assert key in msg
        # a location on a store the server has no business reaching: refused before any connection
        error_of(http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body("x", location="s3://bucket/x")),
                 403, "ForbiddenException")
        with pytest.raises(socket.timeout):
            trap.accept()
    assert state(thrift, ns) == before and files_under(ns_dir) == files
    serving(env, rest, ns)


# ---- reading files the server must not read ----------------------------------------------------------------


def test_register_reads_only_allowed_metadata(env: Env, rest: RestCatalog, thrift: Client) -> None:
    ns, ns_dir = namespace(rest, env)
    http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body("t")).raise_for_status()
    before = state(thrift, ns)
    secret = env.outside / "passwd"
    secret.write_text(f"root:x:0:0:{SECRET}:/root:/bin/bash\n")
    inside = ns_dir / "t" / "metadata"  # a place the server may read: still only table metadata is read
    (inside / "plain.metadata.json").write_text(f"root:x:0:0:{SECRET}\n")
    (inside / "json.metadata.json").write_text(json.dumps({"format-version": 2, "location": SECRET}))
    (inside / "link.metadata.json").symlink_to(secret)
    os.mkfifo(inside / "fifo.metadata.json")

    def register(location: str, code: int, type_: str) -> str:
        msg = error_of(http(env, "POST", f"/v1/namespaces/{ns}/register", {"name": "stolen", "metadata-location":
                                                                           location}), code, type_)
        assert SECRET not in msg and "root:x" not in msg
        return msg.replace(location, "<location>")

    outside = {register(str(secret), 403, "ForbiddenException"),
               register(f"file://{secret}", 403, "ForbiddenException"),
               register(str(env.outside / "missing.json"), 403, "ForbiddenException"),
               register(str(env.srv.warehouse / ".." / "outside" / "passwd"), 403, "ForbiddenException"),
               register(str(inside / "link.metadata.json"), 403, "ForbiddenException"),  # a link out of the roots
               register("/etc/passwd", 403, "ForbiddenException")}
    assert len(outside) == 1  # one answer whether or not the file is there
    register(str(inside / "plain.metadata.json"), 400, "BadRequestException")
    register(str(inside / "json.metadata.json"), 400, "BadRequestException")
    register(str(inside / "fifo.metadata.json"), 400, "BadRequestException")  # never blocks on the FIFO
    register(str(inside), 400, "BadRequestException")
    # an old table whose metadata_location was pointed at the file through Thrift: not read either
    h = thrift.get_table(ns, "t")
    h.parameters["metadata_location"] = str(secret)
    thrift.alter_table(ns, "t", h)
    for method in ("GET", "DELETE"):
        r = http(env, method, f"/v1/namespaces/{ns}/tables/t" + ("?purgeRequested=true" if method == "DELETE" else ""))
        error_of(r, 403, "ForbiddenException")
        assert SECRET not in r.text
    assert secret.read_text().startswith("root:x")
    assert sorted(thrift.get_all_tables(ns)) == before[1] == ["t"]
    serving(env, rest, ns)


# ---- purges that reach another table's files ---------------------------------------------------------------


def hive_iceberg_table(ns: str, name: str, metadata_location: str, location: str) -> Table:
    """An Iceberg table recorded through Thrift, as any HiveCatalog client may write it."""
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None), FieldSchema("name", "string", None)],
                           location=location, inputFormat="org.apache.hadoop.mapred.FileInputFormat",
                           outputFormat="org.apache.hadoop.mapred.FileOutputFormat",
                           serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"))
    return Table(tableName=name, dbName=ns, sd=sd, tableType="EXTERNAL_TABLE", partitionKeys=[],
                 parameters={"EXTERNAL": "TRUE", "table_type": "ICEBERG", "metadata_location": metadata_location})


def test_purge_never_reaches_another_tables_files(env: Env, rest: RestCatalog, thrift: Client) -> None:
    ns, ns_dir = namespace(rest, env)
    victim = rest.create_table(f"{ns}.victim", schema=SCHEMA)
    victim.append(rows(2))
    victim.append(rows(2, 2))
    victim = rest.load_table(f"{ns}.victim")
    victim_dir = ns_dir / "victim"
    kept = files_under(victim_dir)
    assert len([p for p in kept if p.endswith(".parquet")]) == 2

    # 1. registered on the victim's metadata: refused
    before = state(thrift, ns)
    msg = error_of(http(env, "POST", f"/v1/namespaces/{ns}/register",
                        {"name": "evil", "metadata-location": victim.metadata_location}), 403, "ForbiddenException")
    assert f"{ns}.victim" in msg
    assert state(thrift, ns) == before

    # 2. recorded through Thrift on the victim's metadata, then purged: the victim's files stay
    thrift.create_table(hive_iceberg_table(ns, "evil", victim.metadata_location, victim.location()))
    assert http(env, "DELETE", f"/v1/namespaces/{ns}/tables/evil?purgeRequested=true").status_code == 204
    assert files_under(victim_dir) == kept

    # 3. created over the victim's location (allowed: an Iceberg table is external; refusing it is safe too),
    #    given the victim's snapshot by a commit, then purged
    r = http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body("over", location=victim.location()))
    assert r.status_code in (200, 400, 403), r.text
    if r.status_code == 200:
        snap = json.loads(Path(victim.metadata_location.removeprefix("file:")).read_text())["snapshots"][-1]
        r = http(env, "POST", f"/v1/namespaces/{ns}/tables/over", {"requirements": [], "updates": [
            {"action": "add-snapshot", "snapshot": {**snap, "sequence-number": 1, "parent-snapshot-id": None}},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snap["snapshot-id"]}]})
        assert r.status_code == 200, r.text
        assert http(env, "DELETE", f"/v1/namespaces/{ns}/tables/over?purgeRequested=true").status_code == 204
    assert files_under(victim_dir).items() >= kept.items()  # nothing under the victim's location is deleted

    # 4. a table whose metadata puts it outside the allowed roots: its purge is refused, nothing deleted there
    bait = env.outside / "bait.parquet"
    bait.write_bytes(b"PAR1 precious")
    doc = json.loads(Path(victim.metadata_location.removeprefix("file:")).read_text())
    doc.update({"location": f"file:{env.outside}", "snapshots": [], "current-snapshot-id": -1, "refs": {},
                "snapshot-log": [], "metadata-log": [{"metadata-file": f"file:{bait}", "timestamp-ms": 1}],
                "table-uuid": str(uuid.uuid4())})
    crafted = ns_dir / f"crafted-{uuid.uuid4()}.metadata.json"  # readable: inside the warehouse
    crafted.write_text(json.dumps(doc))
    thrift.create_table(hive_iceberg_table(ns, "away", str(crafted), f"file:{env.outside}"))
    before = state(thrift, ns)
    error_of(http(env, "DELETE", f"/v1/namespaces/{ns}/tables/away?purgeRequested=true"), 403, "ForbiddenException")
    assert state(thrift, ns) == before and bait.read_bytes() == b"PAR1 precious" and crafted.exists()
    assert http(env, "DELETE", f"/v1/namespaces/{ns}/tables/away").status_code == 204  # a plain drop is fine

    assert sorted(rest.load_table(f"{ns}.victim").scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]
    assert files_under(victim_dir).items() >= kept.items()
    serving(env, rest, ns)


# ---- writes outside the allowed roots ----------------------------------------------------------------------


def test_locations_outside_the_roots_are_refused(env: Env, rest: RestCatalog, thrift: Client) -> None:
    ns, ns_dir = namespace(rest, env)
    http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body("t")).raise_for_status()
    before, files = state(thrift, ns), files_under(ns_dir)
    fresh = env.outside / unique("o")
    fresh.mkdir()
    target = fresh / "planted"
    for location in (str(target), f"file://{target}", f"file:{env.srv.warehouse}/../outside/{fresh.name}/planted",
                     str(env.srv.warehouse), f"file://otherhost{target}"):
        for stage in (False, True):
            r = http(env, "POST", f"/v1/namespaces/{ns}/tables", {**create_body("x", location=location),
                                                                   "stage-create": stage})
            assert r.status_code in (400, 403), r.text
            assert r.json()["error"]["type"] in ("BadRequestException", "ForbiddenException")
        r = http(env, "POST", f"/v1/namespaces/{ns}/tables/t", {"requirements": [], "updates": [
            {"action": "set-location", "location": location}]})
        assert r.status_code in (400, 403), r.text
    # names are checked before any file is written: no directory is made for a refused one
    for name in ("../../outside/evil", "a/b", "", "x" * 200):
        error_of(http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body(name)), 400, "BadRequestException")
    assert list(fresh.iterdir()) == []
    assert state(thrift, ns) == before and files_under(ns_dir) == files
    assert sorted(p.name for p in ns_dir.iterdir()) == ["t"]
    serving(env, rest, ns)


def test_purge_reads_only_regular_files(env: Env, rest: RestCatalog, thrift: Client) -> None:
    """A manifest list that is a FIFO in the table's own directory (clients write there) does not hold the
    purge, nor the server, for good."""
    ns, ns_dir = namespace(rest, env)
    t = rest.create_table(f"{ns}.t", schema=SCHEMA)
    t.append(rows(1))
    fifo = ns_dir / "t" / "metadata" / "snap-fifo.avro"
    os.mkfifo(fifo)
    snap = {"snapshot-id": 77, "sequence-number": 2, "timestamp-ms": t.metadata.last_updated_ms + 1,
            "manifest-list": f"file:{fifo}", "summary": {"operation": "append"}, "schema-id": 0}
    r = http(env, "POST", f"/v1/namespaces/{ns}/tables/t", {"requirements": [], "updates": [
        {"action": "add-snapshot", "snapshot": snap}]})
    assert r.status_code == 200, r.text
    assert http(env, "DELETE", f"/v1/namespaces/{ns}/tables/t?purgeRequested=true").status_code == 204
    assert fifo.exists() and not [p for p in (ns_dir / "t").rglob("*.parquet")]
    serving(env, rest, ns)


def test_rest_locations_are_no_other_objects_directory(env: Env, rest: RestCatalog, thrift: Client) -> None:
    """A REST table (external for the catalog) may not be created, registered or moved onto a Hive table's
    directory, a partition's, or a namespace's: its metadata would be written into the other's files, and a
    DROP DATABASE would keep a directory it should delete."""
    ns, ns_dir = namespace(rest, env)
    thrift.create_table(Table(tableName="hive_managed_t", dbName=ns, owner="o", tableType="MANAGED_TABLE",
                              parameters={}, partitionKeys=[FieldSchema("ds", "string", None)], sd=StorageDescriptor(
                                  cols=[FieldSchema("a", "int", None)], parameters={},
                                  serdeInfo=SerDeInfo(serializationLib="x", parameters={}))))
    hive_dir = ns_dir / "hive_managed_t"
    (hive_dir / "data.txt").write_text("hive data")
    part_dir = ns_dir / "custom" / "p"  # a partition of it elsewhere (Spark's SET LOCATION)
    thrift.add_partition(Partition(values=["1"], dbName=ns, tableName="hive_managed_t", parameters={},
                                   sd=StorageDescriptor(cols=[FieldSchema("a", "int", None)], parameters={},
                                                        location=f"file:{part_dir}",
                                                        serdeInfo=SerDeInfo(serializationLib="x", parameters={}))))
    (part_dir / "part.txt").write_text("partition data")
    http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body("t")).raise_for_status()
    before, files = state(thrift, ns), files_under(ns_dir)
    for location in (f"file:{hive_dir}", str(hive_dir), f"file:{hive_dir}/inner", f"file:{ns_dir}",
                     f"file:{part_dir}", f"file:{ns_dir}/custom", f"file:{ns_dir}/t"):
        r = http(env, "POST", f"/v1/namespaces/{ns}/tables", create_body("x", location=location))
        assert error_of(r, 403, "ForbiddenException")
        if location.endswith("/t"):
            continue  # t's own
        r = http(env, "POST", f"/v1/namespaces/{ns}/tables/t", {"requirements": [], "updates": [
            {"action": "set-location", "location": location}]})
        assert r.status_code == 403, r.text
    # registering a table whose location is the namespace's directory
    t = rest.load_table(f"{ns}.t")
    meta = json.loads(Path(t.metadata_location.removeprefix("file:").removeprefix("//")).read_text())
    fake = ns_dir / "t" / "metadata" / "ns-wide.metadata.json"
    # (the metadata file is written by the test, as a client with write access to the warehouse could)
    fake.write_text(json.dumps({**meta, "location": f"file:{ns_dir}"}))
    try:
        r = http(env, "POST", f"/v1/namespaces/{ns}/register", {"name": "reg", "metadata-location": f"file:{fake}"})
        assert r.status_code == 403, r.text
    finally:
        fake.unlink()
    assert state(thrift, ns) == before and files_under(ns_dir) == files
    serving(env, rest, ns)


def test_error_answers_clip_the_clients_text(env: Env) -> None:
    """An error's message quotes the client's names and paths clipped: a namespace of half a megabyte, a path of
    15 KB, are not sent back whole (in the spec's error model still)."""
    r = http(env, "POST", "/v1/namespaces", {"namespace": ["A" * 500_000, "b"]})
    assert error_of(r, 400, "BadRequestException").startswith("Invalid namespace AAAA")
    assert len(r.content) < 2048, len(r.content)
    r = http(env, "GET", "/v1/" + "B" * 15_000)
    assert error_of(r, 404, "NoSuchEndpointException").startswith("No endpoint /v1/BBBB")
    assert len(r.content) < 2048, len(r.content)
