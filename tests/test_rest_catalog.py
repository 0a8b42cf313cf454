"""The Iceberg REST catalog of `metastore serve` (metastore.rest), through PyIceberg's RestCatalog and raw HTTP:
the table life cycle, tables crossing between the REST and Thrift (HiveCatalog) protocols, multi-table
transactions that change all tables or none (checked in the store and in the notification log), bad input
answered with the spec's error model and no change, namespaces, stage-create, register, drop with and without
purge, and the OpenAPI description."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Client, Database, Server, unique

pytest.importorskip("pyiceberg.catalog.rest")
pa = pytest.importorskip("pyarrow")
requests = pytest.importorskip("requests")

from hive_metastore.ttypes import (  # noqa: E402
    HeartbeatRequest,
    LockComponent,
    LockRequest,
    NoSuchLockException,
    NotificationEventRequest,
    ShowLocksRequest,
    UnlockRequest,
)
from pyiceberg.catalog import Catalog  # noqa: E402
from pyiceberg.catalog.hive import HiveCatalog  # noqa: E402
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402
from pyiceberg.exceptions import (  # noqa: E402
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.table import Table  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


@pytest.fixture(scope="module")
def srv(database: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(database, tmp_path_factory.mktemp("rest")).start()
    yield s
    s.stop()


@pytest.fixture
def rest(srv: Server) -> RestCatalog:
    return RestCatalog("rest", uri=srv.rest_uri)


@pytest.fixture
def hive(srv: Server) -> HiveCatalog:
    return HiveCatalog("hive", uri=srv.uri, warehouse="file://" + str(srv.warehouse))


@pytest.fixture
def thrift(srv: Server) -> Iterator[Client]:
    c = Client(srv.port)
    yield c
    c.close()


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": list(range(start, start + n)), "name": [f"r{i}" for i in range(start, start + n)]},
                    schema=SCHEMA)


def http(srv: Server, method: str, path: str, body: Any = None, raw: bytes | None = None) -> requests.Response:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    return requests.request(method, srv.rest_uri + path, data=data, timeout=60,
                            headers={"Content-Type": "application/json"})


def error_of(r: requests.Response, code: int, type_: str) -> str:
    """The message of an error answer, after checking it follows the spec's error model."""
    assert r.status_code == code, r.text
    err = r.json()["error"]
    assert err["code"] == code and err["type"] == type_, err
    assert err["message"]
    return err["message"]


def event_id(thrift: Client) -> int:
    return thrift.get_current_notificationEventId().eventId


def metadata_location(thrift: Client, db: str, table: str) -> str:
    return thrift.get_table(db, table).parameters["metadata_location"]


# ---- acceptance 3: the life cycle through RestCatalog, and both ways across protocols -------------------


def test_table_life_cycle(rest: RestCatalog, thrift: Client) -> None:
    ns = unique("rest")
    rest.create_namespace(ns)
    assert (ns,) in rest.list_namespaces()
    t = rest.create_table(f"{ns}.events", schema=SCHEMA)
    t.append(rows(2))
    t.append(rows(3, 2))
    t = rest.load_table(f"{ns}.events")
    assert len(t.snapshots()) == 2
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 3, 4]
    with t.update_schema() as u:
        u.add_column("note", StringType())
    t = rest.load_table(f"{ns}.events")
    assert [f.name for f in t.schema().fields] == ["id", "name", "note"]
    hive_table = thrift.get_table(ns, "events")  # the store's record, as HiveCatalog writes it
    assert [c.name for c in hive_table.sd.cols] == ["id", "name", "note"]
    assert hive_table.tableType == "EXTERNAL_TABLE"
    assert hive_table.parameters["table_type"] == "ICEBERG"
    assert hive_table.parameters["metadata_location"] == t.metadata_location
    assert hive_table.parameters["previous_metadata_location"] == t.metadata.metadata_log[-1].metadata_file
    rest.rename_table(f"{ns}.events", f"{ns}.renamed")
    assert rest.list_tables(ns) == [(ns, "renamed")]
    assert not rest.table_exists(f"{ns}.events")
    assert len(rest.load_table(f"{ns}.renamed").snapshots()) == 2
    with pytest.raises(NoSuchTableError):
        rest.load_table(f"{ns}.events")
    rest.drop_table(f"{ns}.renamed")
    assert rest.list_tables(ns) == []
    rest.drop_namespace(ns)
    assert (ns,) not in rest.list_namespaces()


def made_in_one_loaded_in_other(maker: Catalog, loader: Catalog, first: pa.Table) -> tuple[str, Table, Table]:
    """A table made through `maker` with the rows `first`, loaded through `loader`: (namespace, made, loaded),
    both at the same metadata."""
    ns = unique("made")
    maker.create_namespace(ns)
    made = maker.create_table(f"{ns}.t", schema=SCHEMA)
    made.append(first)
    loaded = loader.load_table(f"{ns}.t")
    assert loaded.metadata_location == made.metadata_location
    return ns, made, loaded


def test_rest_table_through_hive_catalog(rest: RestCatalog, hive: HiveCatalog) -> None:
    ns, t, h = made_in_one_loaded_in_other(rest, hive, rows(2))
    assert sorted(h.scan().to_arrow().column("id").to_pylist()) == [0, 1]
    h.append(rows(1, 10))  # a commit through the lock path, read back through REST
    t = rest.load_table(f"{ns}.t")
    assert len(t.snapshots()) == 2
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [0, 1, 10]
    assert hive.list_tables(ns) == [(ns, "t")]


def test_hive_table_through_rest_catalog(rest: RestCatalog, hive: HiveCatalog) -> None:
    ns, h, t = made_in_one_loaded_in_other(hive, rest, rows(1))
    t.append(rows(2, 5))
    with t.update_schema() as u:
        u.add_column("extra", LongType())
    h = hive.load_table(f"{ns}.t")
    assert len(h.snapshots()) == 2
    assert [f.name for f in h.schema().fields] == ["id", "name", "extra"]
    assert sorted(h.scan().to_arrow().column("id").to_pylist()) == [0, 5, 6]


def test_stale_commit_is_refused(srv: Server, rest: RestCatalog, thrift: Client) -> None:
    """Two writers start from the same metadata: the second one's commit is refused with 409 (PyIceberg then
    retries its append on fresh metadata), so nothing is lost."""
    ns = unique("rest")
    rest.create_namespace(ns)
    rest.create_table(f"{ns}.t", schema=SCHEMA)
    a, b = rest.load_table(f"{ns}.t"), rest.load_table(f"{ns}.t")
    a.append(rows(1))
    before = (metadata_location(thrift, ns, "t"), event_id(thrift))
    stale = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
             "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}
    error_of(http(srv, "POST", f"/v1/namespaces/{ns}/tables/t", stale), 409, "CommitFailedException")
    assert (metadata_location(thrift, ns, "t"), event_id(thrift)) == before
    b.append(rows(1, 100))  # refused once, retried by PyIceberg on the new metadata
    t = rest.load_table(f"{ns}.t")
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [0, 100]
    assert len(t.snapshots()) == 2
    assert event_id(thrift) == before[1] + 1


# ---- acceptance 4: multi-table transactions --------------------------------------------------------------


def two_tables(rest: RestCatalog) -> tuple[str, Any, Any]:
    ns = unique("tx")
    rest.create_namespace(ns)
    a = rest.create_table(f"{ns}.a", schema=SCHEMA)
    b = rest.create_table(f"{ns}.b", schema=SCHEMA)
    a.append(rows(1))
    return ns, rest.load_table(f"{ns}.a"), b


def head(t: Any) -> int:
    return t.current_snapshot().snapshot_id


def change(ns: str, name: str, requirements: list[dict[str, Any]], props: dict[str, str]) -> dict[str, Any]:
    return {"identifier": {"namespace": [ns], "name": name}, "requirements": requirements,
            "updates": [{"action": "set-properties", "updates": props}]}


def change_of_a_at_head(ns: str, a: Any, value: str) -> dict[str, Any]:
    """A change of table a that holds while a is the table two_tables made, at the snapshot it has now."""
    return change(ns, "a", [{"type": "assert-table-uuid", "uuid": str(a.metadata.table_uuid)},
                            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": head(a)}],
                  {"k": value})


def two_tables_before(rest: RestCatalog, thrift: Client) -> tuple[str, Any, dict[str, str], int]:
    """two_tables, with both tables' metadata locations and the last event id before the transaction."""
    ns, a, _b = two_tables(rest)
    return ns, a, {n: metadata_location(thrift, ns, n) for n in ("a", "b")}, event_id(thrift)


def test_transaction_with_a_failing_requirement_changes_nothing(srv: Server, rest: RestCatalog,
                                                                 thrift: Client) -> None:
    ns, a, before, events = two_tables_before(rest, thrift)
    body = {"table-changes": [
        change_of_a_at_head(ns, a, "1"),
        # b has no snapshot: this requirement fails
        change(ns, "b", [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 12345}], {"k": "1"}),
    ]}
    msg = error_of(http(srv, "POST", "/v1/transactions/commit", body), 409, "CommitFailedException")
    assert f"{ns}.b" in msg
    assert {n: metadata_location(thrift, ns, n) for n in ("a", "b")} == before
    assert event_id(thrift) == events
    assert "k" not in rest.load_table(f"{ns}.a").properties
    assert "k" not in thrift.get_table(ns, "a").parameters
    # the metadata file written for a was discarded: only the two files of its two versions remain
    meta_dir = Path(a.metadata_location.removeprefix("file:")).parent
    assert len(list(meta_dir.glob("*.metadata.json"))) == 2


def test_transaction_with_all_requirements_holding_changes_both(srv: Server, rest: RestCatalog,
                                                                thrift: Client) -> None:
    ns, a, before, events = two_tables_before(rest, thrift)
    body = {"table-changes": [
        change_of_a_at_head(ns, a, "a"),
        change(ns, "b", [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
                         {"type": "assert-current-schema-id", "current-schema-id": 0}], {"k": "b"}),
    ]}
    r = http(srv, "POST", "/v1/transactions/commit", body)
    assert r.status_code == 204, r.text
    for n in ("a", "b"):
        params = thrift.get_table(ns, n).parameters
        assert params["metadata_location"] != before[n]
        assert params["previous_metadata_location"] == before[n]
        assert params["k"] == n
        assert rest.load_table(f"{ns}.{n}").properties["k"] == n
    assert event_id(thrift) == events + 2
    log = thrift.get_next_notification(NotificationEventRequest(lastEvent=events, maxEvents=10)).events
    assert [(e.eventType, e.dbName, e.tableName) for e in log] == [("ALTER_TABLE", ns, "a"), ("ALTER_TABLE", ns, "b")]
    for e, n in zip(log, ("a", "b")):  # each event carries the table before and after the swap
        message = json.loads(e.message)
        assert thrift.get_table(ns, n).parameters["metadata_location"] in message["tableObjAfterJson"]
        assert before[n] in message["tableObjBeforeJson"]


def test_transaction_over_a_missing_table_changes_nothing(srv: Server, rest: RestCatalog, thrift: Client) -> None:
    ns, a, _b = two_tables(rest)
    before, events = metadata_location(thrift, ns, "a"), event_id(thrift)
    body = {"table-changes": [
        change(ns, "a", [{"type": "assert-table-uuid", "uuid": str(a.metadata.table_uuid)}], {"k": "1"}),
        change(ns, "missing", [{"type": "assert-table-uuid", "uuid": str(a.metadata.table_uuid)}], {"k": "1"}),
    ]}
    error_of(http(srv, "POST", "/v1/transactions/commit", body), 404, "NoSuchTableException")
    assert (metadata_location(thrift, ns, "a"), event_id(thrift)) == (before, events)


# ---- acceptance 5: bad input ----------------------------------------------------------------------------


def test_bad_input_changes_nothing(srv: Server, rest: RestCatalog, thrift: Client) -> None:
    ns = unique("bad")
    rest.create_namespace(ns)
    t = rest.create_table(f"{ns}.t", schema=SCHEMA)
    path = f"/v1/namespaces/{ns}/tables/t"
    before, events = metadata_location(thrift, ns, "t"), event_id(thrift)

    msg = error_of(http(srv, "POST", path, raw=b'{"requirements": [], "updates": ['), 400, "BadRequestException")
    assert "Malformed JSON" in msg
    msg = error_of(http(srv, "POST", path, {"updates": [{"action": "drop-everything"}]}), 400,
                   "BadRequestException")
    assert "drop-everything" in msg
    msg = error_of(http(srv, "POST", path, {"requirements": [{"type": "assert-moon-phase"}], "updates": []}), 400,
                   "BadRequestException")
    assert "assert-moon-phase" in msg
    error_of(http(srv, "POST", path, {"updates": [{"action": "set-properties"}]}), 400, "BadRequestException")
    error_of(http(srv, "POST", path, [1, 2]), 400, "BadRequestException")
    error_of(http(srv, "POST", "/v1/transactions/commit", raw=b"not json"), 400, "BadRequestException")
    error_of(http(srv, "POST", "/v1/transactions/commit", {"table-changes": []}), 400, "BadRequestException")
    # a requirement on a table that does not exist
    msg = error_of(http(srv, "POST", f"/v1/namespaces/{ns}/tables/nope", {
        "requirements": [{"type": "assert-table-uuid", "uuid": str(t.metadata.table_uuid)}],
        "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}), 404, "NoSuchTableException")
    assert f"{ns}.nope" in msg
    # a requirement that fails: 409, as the spec says
    error_of(http(srv, "POST", path, {"requirements": [{"type": "assert-current-schema-id", "current-schema-id": 7}],
                                      "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}),
             409, "CommitFailedException")
    error_of(http(srv, "POST", "/v1/namespaces", {"namespace": ["a", "b"]}), 400, "BadRequestException")
    error_of(http(srv, "POST", "/v1/namespaces", raw=b"{"), 400, "BadRequestException")
    error_of(http(srv, "GET", "/v1/namespaces/nope_ns/tables"), 404, "NoSuchNamespaceException")
    error_of(http(srv, "GET", f"/v1/namespaces/{ns}/tables/nope"), 404, "NoSuchTableException")
    error_of(http(srv, "POST", f"/v1/namespaces/{ns}/tables", {"name": "x"}), 400, "BadRequestException")
    error_of(http(srv, "DELETE", f"{path}?purgeRequested=maybe"), 400, "BadRequestException")
    error_of(http(srv, "GET", "/v1/no/such/endpoint/here"), 404, "NoSuchEndpointException")
    error_of(http(srv, "PUT", "/v1/namespaces"), 405, "MethodNotAllowedException")

    assert (metadata_location(thrift, ns, "t"), event_id(thrift)) == (before, events)
    assert rest.load_table(f"{ns}.t").properties.get("k") is None
    assert rest.list_tables(ns) == [(ns, "t")]


def test_lock_errors_change_nothing(thrift: Client) -> None:
    """The lock half of acceptance 5 (tests/test_locks.py::test_errors covers the lock ids that never existed
    in detail): a heartbeat for a released lock is NoSuchLockException, and leaves no lock and no event."""
    db = unique("lk")
    events = event_id(thrift)
    with pytest.raises(NoSuchLockException):
        thrift.heartbeat(HeartbeatRequest(lockid=987654321))
    lock = thrift.lock(LockRequest(component=[LockComponent(type=1, level=1, dbname=db)], user="u", hostname="h"))
    thrift.unlock(UnlockRequest(lockid=lock.lockid))
    with pytest.raises(NoSuchLockException):
        thrift.heartbeat(HeartbeatRequest(lockid=lock.lockid))
    assert not thrift.show_locks(ShowLocksRequest(dbname=db)).locks
    assert event_id(thrift) == events


# ---- namespaces, stage-create, register, drop, OpenAPI -----------------------------------------------------


def test_namespaces(srv: Server, rest: RestCatalog, thrift: Client) -> None:
    ns = unique("ns")
    rest.create_namespace(ns, {"owner_team": "data", "comment": "team space"})
    with pytest.raises(NamespaceAlreadyExistsError):
        rest.create_namespace(ns)
    props = rest.load_namespace_properties(ns)
    assert props["owner_team"] == "data" and props["comment"] == "team space"
    assert props["location"].endswith(f"/{ns}.db")
    d = thrift.get_database(ns)
    assert d.description == "team space" and d.parameters == {"owner_team": "data"}
    assert rest.namespace_exists(ns) and not rest.namespace_exists("nope_ns")
    assert http(srv, "HEAD", f"/v1/namespaces/{ns}").status_code == 204
    assert http(srv, "HEAD", "/v1/namespaces/nope_ns").status_code == 404
    assert rest.list_namespaces(ns) == []  # one level: no children
    with pytest.raises(NoSuchNamespaceError):
        rest.list_namespaces("nope_ns")
    summary = rest.update_namespace_properties(ns, removals={"owner_team", "absent"}, updates={"tier": "gold"})
    assert (sorted(summary.removed), sorted(summary.updated), sorted(summary.missing)) == (
        ["owner_team"], ["tier"], ["absent"])
    assert thrift.get_database(ns).parameters == {"tier": "gold"}
    error_of(http(srv, "POST", f"/v1/namespaces/{ns}/properties", {"removals": ["x"], "updates": {"x": "1"}}),
             422, "UnprocessableEntityException")
    error_of(http(srv, "POST", "/v1/namespaces/nope_ns/properties", {"updates": {"x": "1"}}), 404,
             "NoSuchNamespaceException")
    rest.create_table(f"{ns}.t", schema=SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        rest.drop_namespace(ns)
    rest.drop_table(f"{ns}.t")
    rest.drop_namespace(ns)
    with pytest.raises(NoSuchNamespaceError):
        rest.drop_namespace(ns)
    with pytest.raises(NoSuchNamespaceError):
        rest.create_table(f"{ns}.t", schema=SCHEMA)
    # the {prefix} segment is optional
    assert http(srv, "GET", "/v1/hive/namespaces").json()["namespaces"] == http(srv, "GET", "/v1/namespaces").json()[
        "namespaces"]


def test_stage_create(rest: RestCatalog, thrift: Client) -> None:
    ns = unique("stage")
    rest.create_namespace(ns)
    tx = rest.create_table_transaction(f"{ns}.t", schema=SCHEMA, properties={"stage": "yes"})
    assert not rest.table_exists(f"{ns}.t")  # nothing is created until the commit
    tx.commit_transaction()
    t = rest.load_table(f"{ns}.t")
    assert t.properties["stage"] == "yes"
    assert thrift.get_table(ns, "t").parameters["table_type"] == "ICEBERG"
    t.append(rows(1))
    assert len(rest.load_table(f"{ns}.t").snapshots()) == 1
    # a second staged create of the same name fails at its commit
    tx = rest.create_table_transaction(f"{ns}.u", schema=SCHEMA)
    rest.create_table(f"{ns}.u", schema=SCHEMA)
    with pytest.raises(CommitFailedException):
        tx.commit_transaction()
    with pytest.raises(TableAlreadyExistsError):
        rest.create_table(f"{ns}.u", schema=SCHEMA)


def test_register(rest: RestCatalog, hive: HiveCatalog) -> None:
    ns = unique("reg")
    rest.create_namespace(ns)
    t = rest.create_table(f"{ns}.t", schema=SCHEMA)
    t.append(rows(3))
    location = rest.load_table(f"{ns}.t").metadata_location
    rest.drop_table(f"{ns}.t")
    r = rest.register_table(f"{ns}.again", location)
    assert r.metadata_location == location
    assert sorted(r.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2]
    assert hive.load_table(f"{ns}.again").metadata_location == location
    with pytest.raises(TableAlreadyExistsError):
        rest.register_table(f"{ns}.again", location)


def table_files(t: Any) -> list[Path]:
    root = Path(t.location().removeprefix("file:"))
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_drop_with_and_without_purge(rest: RestCatalog) -> None:
    ns = unique("drop")
    rest.create_namespace(ns)
    kept = rest.create_table(f"{ns}.kept", schema=SCHEMA)
    kept.append(rows(2))
    kept.append(rows(2, 2))
    kept_files = table_files(kept)
    rest.drop_table(f"{ns}.kept")
    assert not rest.table_exists(f"{ns}.kept")
    assert table_files(kept) == kept_files and any(p.suffix == ".parquet" for p in kept_files)

    purged = rest.create_table(f"{ns}.purged", schema=SCHEMA)
    purged.append(rows(2))
    purged.append(rows(2, 2))
    purged = rest.load_table(f"{ns}.purged")
    files = table_files(purged)
    assert len([p for p in files if p.suffix == ".parquet"]) == 2
    assert len([p for p in files if p.name.endswith(".metadata.json")]) == 3
    rest.purge_table(f"{ns}.purged")
    assert not rest.table_exists(f"{ns}.purged")
    assert table_files(purged) == []
    with pytest.raises(NoSuchTableError):
        rest.drop_table(f"{ns}.purged")


def test_openapi_and_config(srv: Server) -> None:
    conf = http(srv, "GET", "/v1/config").json()
    doc = http(srv, "GET", "/v1/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    served = {f"{m.upper()} {p}" for p, ops in doc["paths"].items() for m in ops}
    assert set(conf["endpoints"]) <= served
    assert "POST /v1/{prefix}/transactions/commit" in served
    assert "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}" in served
    assert doc["components"]["schemas"]["ErrorModel"]["required"] == ["error"]


@pytest.mark.slow
def test_no_rest(database: Database, tmp_path: Path) -> None:
    """--no-rest serves Thrift alone; a REST port that is taken is a clear error."""
    for d in "abc":
        (tmp_path / d).mkdir()
    s = Server(database, tmp_path / "a", "--no-rest").start()
    try:
        assert "REST" not in s.output()
        with pytest.raises(requests.ConnectionError):
            requests.get(s.rest_uri + "/v1/config", timeout=5)
    finally:
        s.stop()
    busy = Server(database, tmp_path / "b").start()
    try:
        other = Server(database, tmp_path / "c", "--rest-port", str(busy.rest_port))
        with pytest.raises(RuntimeError, match="Iceberg REST catalog"):
            other.start()
    finally:
        busy.stop()


@pytest.mark.slow
def test_workers_share_the_rest_port(database: Database, tmp_path: Path) -> None:
    s = Server(database, tmp_path, "--workers", "2").start()
    try:
        cat = RestCatalog("rest", uri=s.rest_uri)
        ns = unique("wk")
        cat.create_namespace(ns)
        t = cat.create_table(f"{ns}.t", schema=SCHEMA)
        for i in range(4):
            t.append(rows(1, i))
        assert len(cat.load_table(f"{ns}.t").snapshots()) == 4
    finally:
        s.stop()


def test_schema_from_iceberg_types(rest: RestCatalog, thrift: Client) -> None:
    ns = unique("ty")
    rest.create_namespace(ns)
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "s", StringType()))
    rest.create_table(f"{ns}.t", schema=schema)
    assert [(c.name, c.type) for c in thrift.get_table(ns, "t").sd.cols] == [("id", "bigint"), ("s", "string")]


def test_alter_tables_cas_is_all_or_nothing(srv: Server, rest: RestCatalog, thrift: Client) -> None:
    """The store half of a multi-table commit, raced: the second table's compare-and-swap finds another value
    (as when a concurrent commit swapped it after the requirements were checked), so the first table's swap,
    already made in the same store transaction, is rolled back with it, and no event is written."""
    from metastore.app import build_catalog
    from metastore.config import Settings
    from metastore.core.errors import MetaError

    ns, _a, _b = two_tables(rest)
    before = {n: metadata_location(thrift, ns, n) for n in ("a", "b")}
    events = event_id(thrift)
    cat = build_catalog(Settings(db=srv.db.url, warehouse=str(srv.warehouse)))
    try:
        changes = []
        for n, expected in (("a", before["a"]), ("b", "file:/somewhere/else.metadata.json")):
            t = cat.get_table(ns, n)
            t.parameters["metadata_location"] = before[n] + ".next"
            changes.append((ns, n, t, {"expected_parameter_key": "metadata_location",
                                       "expected_parameter_value": expected}))
        with pytest.raises(MetaError, match="The table has been modified"):
            cat.alter_tables_cas(changes)
        assert {n: metadata_location(thrift, ns, n) for n in ("a", "b")} == before
        assert event_id(thrift) == events
        changes[1][3]["expected_parameter_value"] = before["b"]
        cat.alter_tables_cas(changes)
        assert {n: metadata_location(thrift, ns, n) for n in ("a", "b")} == {n: before[n] + ".next" for n in "ab"}
        assert event_id(thrift) == events + 2
    finally:
        cat.store.engine.dispose()


MIXED_WRITER = """
import sys
import pyarrow as pa
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException
kind, uri, warehouse, ident, writer, count = sys.argv[1:7]
cat = (RestCatalog("rest", uri=uri) if kind == "rest" else
       HiveCatalog("hive", uri=uri, warehouse=warehouse, **{"lock-check-min-wait-time": "0.02",
                   "lock-check-max-wait-time": "0.2", "lock-check-retries": "10000"}))
table = cat.load_table(ident)
for seq in range(int(count)):
    data = pa.table({"id": pa.array([int(writer) * 1000 + seq], pa.int64()), "name": pa.array([kind])})
    while True:
        try:
            table.append(data)
            break
        except CommitFailedException:
            table = cat.load_table(ident)
"""


@pytest.mark.slow
def test_rest_and_lock_path_writers_together(srv: Server, rest: RestCatalog) -> None:
    """Writers through REST (compare-and-swap) and through HiveCatalog (Hive's lock, no compare-and-swap)
    append to one table at the same time: no commit is lost, no lock is left behind."""
    import subprocess
    import sys

    ns = unique("mixed")
    rest.create_namespace(ns)
    rest.create_table(f"{ns}.t", schema=SCHEMA, properties={"commit.retry.num-retries": "20"})
    count = 5
    kinds = ["rest", "hive", "rest", "hive"]
    procs = [subprocess.Popen([sys.executable, "-c", MIXED_WRITER, k, srv.rest_uri if k == "rest" else srv.uri,
                               "file://" + str(srv.warehouse), f"{ns}.t", str(i), str(count)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, k in enumerate(kinds)]
    try:
        for p in procs:
            _out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err[-3000:]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    t = rest.load_table(f"{ns}.t")
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == sorted(
        i * 1000 + s for i in range(len(kinds)) for s in range(count))
    assert len(t.snapshots()) == len(kinds) * count
    c = Client(srv.port)
    try:
        assert not c.show_locks(ShowLocksRequest(dbname=ns)).locks
    finally:
        c.close()
