"""The Iceberg REST catalog against the REST spec, through raw HTTP (http.client) and PyIceberg's RestCatalog:
every table update and requirement type with the spec's semantics (a hypothesis test: random commits give the
table metadata PyIceberg's own update_table_metadata gives locally, and invalid ones an error in the spec's
error model, never a 500, with the table unchanged), remove-properties of a missing key, the metadata directory
of a staged create, paging of the list operations, ETags and If-None-Match on load-table, and metrics reports.
The store is not what is tested here: SQLite only."""

from __future__ import annotations

import http.client
import json
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import Server, unique

pytest.importorskip("pyiceberg.catalog.rest")

from pydantic import TypeAdapter  # noqa: E402
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402
from pyiceberg.exceptions import CommitFailedException  # noqa: E402
from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil  # noqa: E402
from pyiceberg.table.update import (  # noqa: E402
    AddSnapshotUpdate,
    RemovePartitionStatisticsUpdate,
    RemovePropertiesUpdate,
    RemoveSnapshotsUpdate,
    RemoveStatisticsUpdate,
    SetPartitionStatisticsUpdate,
    SetPropertiesUpdate,
    SetStatisticsUpdate,
    TableRequirement,
    TableUpdate,
    update_table_metadata,
)

REQUIREMENTS: TypeAdapter[list[TableRequirement]] = TypeAdapter(list[TableRequirement])
UPDATES: TypeAdapter[list[TableUpdate]] = TypeAdapter(list[TableUpdate])


@pytest.fixture(scope="module", params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# ---- raw HTTP ------------------------------------------------------------------------------------------------

Answer = tuple[int, dict[str, str], Any]


def call(srv: Server, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
         raw: bytes | None = None) -> Answer:
    """One request on its own connection: (status, headers with lower-case names, the JSON body or None)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.rest_port, timeout=60)
    try:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        conn.request(method, "/v1/" + path.lstrip("/"), body=data,
                     headers={"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        payload = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, json.loads(payload) if payload else None
    finally:
        conn.close()


def assert_error(answer: Answer, codes: set[int]) -> str:
    """An error answer in the spec's error model with one of `codes`; its type."""
    status, _, body = answer
    assert status in codes, (status, body)
    assert isinstance(body, dict) and set(body) == {"error"}, body
    err = body["error"]
    assert set(err) == {"message", "type", "code"}, err
    assert err["code"] == status and isinstance(err["type"], str) and isinstance(err["message"], str), err
    return str(err["type"])


SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "type": "long", "required": False},
    {"id": 2, "name": "data", "type": "string", "required": False}]}


def create(srv: Server, ns: str, name: str, **extra: Any) -> dict[str, Any]:
    status, headers, body = call(srv, "POST", f"namespaces/{ns}/tables", {"name": name, "schema": SCHEMA, **extra})
    assert status == 200, body
    return dict(body)


def load(srv: Server, ns: str, name: str) -> tuple[TableMetadata, str]:
    status, _, body = call(srv, "GET", f"namespaces/{ns}/tables/{name}")
    assert status == 200, body
    return TableMetadataUtil.parse_obj(body["metadata"]), body["metadata-location"]


@pytest.fixture(scope="module")
def ns(server: Server) -> Iterator[str]:
    name = unique("spec")
    status, _, body = call(server, "POST", "namespaces", {"namespace": [name]})
    assert status == 200, body
    yield name


# ---- acceptance 2: every update and requirement type --------------------------------------------------------

FIELDS = {1: ("id", "long"), 2: ("data", "string"), 3: ("ts", "timestamp"), 4: ("n", "int")}
SNAPSHOT_IDS = st.integers(1, 5)
REFS = st.sampled_from(["main", "b1", "t1"])
PROPERTY_KEYS = st.sampled_from(["a", "b", "c"])
TRANSFORMS = st.sampled_from(["identity", "bucket[4]", "bucket[0]", "void"])
UUIDS = st.sampled_from(["$UUID", "5f1b1b0a-3c1e-4a55-9d6e-0c2a3f6a7b10"])


def _schema(sid: int, ids: set[int]) -> dict[str, Any]:
    return {"type": "struct", "schema-id": sid, "fields": [
        {"id": i, "name": FIELDS[i][0], "type": FIELDS[i][1], "required": False} for i in sorted(ids)]}


def _spec(sid: int, fields: list[tuple[int, str]]) -> dict[str, Any]:
    return {"spec-id": sid, "fields": [{"source-id": s, "field-id": 1000 + k, "transform": t, "name": f"p{k}"}
                                       for k, (s, t) in enumerate(fields)]}


def _order(oid: int, fields: list[tuple[int, str, str]]) -> dict[str, Any]:
    return {"order-id": oid, "fields": [{"source-id": s, "transform": "identity", "direction": d, "null-order": n}
                                        for s, d, n in fields]}


def _snapshot(sid: int, parent: int | None, seq: int | None, schema_id: int | None) -> dict[str, Any]:
    snap: dict[str, Any] = {"snapshot-id": sid, "timestamp-ms": 1_700_000_000_000 + sid,
                            "manifest-list": f"/nonexistent/snap-{sid}.avro", "summary": {"operation": "append"}}
    if parent is not None:
        snap["parent-snapshot-id"] = parent
    if seq is not None:
        snap["sequence-number"] = seq
    if schema_id is not None:
        snap["schema-id"] = schema_id
    return snap


def _stats(sid: int) -> dict[str, Any]:
    return {"snapshot-id": sid, "statistics-path": f"/nonexistent/stats-{sid}.puffin", "file-size-in-bytes": 100,
            "file-footer-size-in-bytes": 10, "blob-metadata": []}


def _action(name: str, **fields: Any) -> dict[str, Any]:
    return {"action": name, **fields}


UPDATE = st.one_of(
    st.builds(lambda u: _action("assign-uuid", uuid=u), UUIDS),
    st.builds(lambda v: _action("upgrade-format-version", **{"format-version": v}), st.integers(1, 3)),
    st.builds(lambda sid, ids: _action("add-schema", schema=_schema(sid, ids)),
              st.integers(0, 3), st.sets(st.sampled_from(sorted(FIELDS)), min_size=1)),
    st.builds(lambda i: _action("set-current-schema", **{"schema-id": i}), st.integers(-1, 3)),
    st.builds(lambda sid, f: _action("add-spec", spec=_spec(sid, f)), st.integers(0, 2),
              st.lists(st.tuples(st.sampled_from(sorted(FIELDS)), TRANSFORMS), max_size=2)),
    st.builds(lambda i: _action("set-default-spec", **{"spec-id": i}), st.integers(-1, 2)),
    st.builds(lambda oid, f: _action("add-sort-order", **{"sort-order": _order(oid, f)}), st.integers(0, 2),
              st.lists(st.tuples(st.sampled_from(sorted(FIELDS)), st.sampled_from(["asc", "desc"]),
                                 st.sampled_from(["nulls-first", "nulls-last"])), max_size=2)),
    st.builds(lambda i: _action("set-default-sort-order", **{"sort-order-id": i}), st.integers(-1, 2)),
    st.builds(lambda *a: _action("add-snapshot", snapshot=_snapshot(*a)), SNAPSHOT_IDS,
              st.none() | SNAPSHOT_IDS, st.none() | st.integers(0, 6), st.none() | st.integers(0, 3)),
    st.builds(lambda r, t, i, age: _action("set-snapshot-ref", **{"ref-name": r, "type": t, "snapshot-id": i},
                                           **({"max-ref-age-ms": age} if age else {})),
              REFS, st.sampled_from(["branch", "tag"]), SNAPSHOT_IDS, st.none() | st.integers(1, 10**9)),
    st.builds(lambda ids: _action("remove-snapshots", **{"snapshot-ids": ids}), st.lists(SNAPSHOT_IDS, max_size=2)),
    st.builds(lambda r: _action("remove-snapshot-ref", **{"ref-name": r}), REFS),
    st.builds(lambda loc: _action("set-location", location=loc), st.sampled_from(["$LOC", "$LOC_MOVED"])),
    st.builds(lambda u: _action("set-properties", updates=u),
              st.dictionaries(PROPERTY_KEYS, st.text("xyz01", max_size=3), max_size=2)),
    st.builds(lambda r: _action("remove-properties", removals=r), st.lists(PROPERTY_KEYS | st.just("zz"), max_size=3)),
    st.builds(lambda i: _action("set-statistics", statistics=_stats(i)), SNAPSHOT_IDS),
    st.builds(lambda i: _action("remove-statistics", **{"snapshot-id": i}), SNAPSHOT_IDS),
    st.builds(lambda i: _action("set-partition-statistics", **{"partition-statistics": {
        "snapshot-id": i, "statistics-path": f"/nonexistent/part-{i}.parquet", "file-size-in-bytes": 50}}),
        SNAPSHOT_IDS),
    st.builds(lambda i: _action("remove-partition-statistics", **{"snapshot-id": i}), SNAPSHOT_IDS),
    st.builds(lambda ids: _action("remove-partition-specs", **{"spec-ids": ids}), st.lists(st.integers(0, 2),
                                                                                          max_size=2)),
    st.builds(lambda ids: _action("remove-schemas", **{"schema-ids": ids}), st.lists(st.integers(0, 3), max_size=2)),
    # malformed: an unknown action, missing fields, wrong types
    st.sampled_from([{"action": "no-such-update"}, {"action": "set-properties", "updates": 5},
                     {"action": "set-statistics"}, {"action": "add-schema"}, {"action": "set-location"},
                     {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": "x"},
                     {"action": "remove-properties", "removals": "a"}, {"updates": {}}, [], "set-properties"]),
)

REQUIREMENT = st.one_of(
    st.builds(lambda u: {"type": "assert-table-uuid", "uuid": u}, UUIDS),
    st.builds(lambda r, i: {"type": "assert-ref-snapshot-id", "ref": r, "snapshot-id": i}, REFS,
              st.none() | SNAPSHOT_IDS),
    st.builds(lambda i: {"type": "assert-last-assigned-field-id", "last-assigned-field-id": i}, st.integers(1, 4)),
    st.builds(lambda i: {"type": "assert-current-schema-id", "current-schema-id": i}, st.integers(0, 2)),
    st.builds(lambda i: {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": i},
              st.integers(999, 1001)),
    st.builds(lambda i: {"type": "assert-default-spec-id", "default-spec-id": i}, st.integers(0, 1)),
    st.builds(lambda i: {"type": "assert-default-sort-order-id", "default-sort-order-id": i}, st.integers(0, 1)),
    st.just({"type": "assert-create"}),
    st.sampled_from([{"type": "assert-nothing"}, {"type": "assert-table-uuid"}, {"type": "assert-current-schema-id",
                                                                                  "current-schema-id": "zero"}]),
)

# most commits without requirements (a failed one stops the commit before its updates)
COMMIT = st.tuples(st.just([]) | st.lists(REQUIREMENT, max_size=2), st.lists(UPDATE, min_size=1, max_size=4))


def substitute(value: Any, places: dict[str, str]) -> Any:
    """The commit with its placeholders ($UUID, $LOC, ...) replaced by the table's own values."""
    if isinstance(value, str):
        return places.get(value, value)
    if isinstance(value, list):
        return [substitute(v, places) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, places) for k, v in value.items()}
    return value


def spec_semantics(base: TableMetadata, ups: list[TableUpdate]) -> list[TableUpdate]:
    """The updates as the spec (Iceberg's Java TableMetadata.Builder) means them where PyIceberg raises:
    removing a property, statistics, partition statistics or snapshots the table does not have at that point
    of the commit does nothing."""
    props = dict(base.properties)
    have = {"snapshot": {s.snapshot_id for s in base.snapshots}, "stats": {s.snapshot_id for s in base.statistics},
            "part": {s.snapshot_id for s in base.partition_statistics}}
    out: list[TableUpdate] = []
    for u in ups:
        if isinstance(u, SetPropertiesUpdate):
            props.update(u.updates)
        elif isinstance(u, RemovePropertiesUpdate):
            u = RemovePropertiesUpdate(removals=[k for k in dict.fromkeys(u.removals)
                                                 if props.pop(k, None) is not None])
        elif isinstance(u, AddSnapshotUpdate):
            have["snapshot"].add(u.snapshot.snapshot_id)
        elif isinstance(u, SetStatisticsUpdate):
            have["stats"].add(u.statistics.snapshot_id)
        elif isinstance(u, SetPartitionStatisticsUpdate):
            have["part"].add(u.partition_statistics.snapshot_id)
        elif isinstance(u, RemoveSnapshotsUpdate):
            ids = [i for i in dict.fromkeys(u.snapshot_ids) if i in have["snapshot"]]
            if not ids:
                continue
            have["snapshot"] -= set(ids)
            have["stats"] -= set(ids)
            u = u.model_copy(update={"snapshot_ids": ids})
        elif isinstance(u, (RemoveStatisticsUpdate, RemovePartitionStatisticsUpdate)):
            kind = "stats" if isinstance(u, RemoveStatisticsUpdate) else "part"
            if u.snapshot_id not in have[kind]:
                continue
            have[kind].discard(u.snapshot_id)
        out.append(u)
    return out


def writable(md: TableMetadata) -> bool:
    """Metadata a catalog may write: it reads back, and no two schemas, specs, orders or snapshots share an id;
    every ref names a snapshot of the table, main is a branch, and Iceberg's Java readers take it."""
    ids = [("schema", s.schema_id) for s in md.schemas] + [("spec", s.spec_id) for s in md.partition_specs]
    ids += [("order", o.order_id) for o in md.sort_orders] + [("snapshot", s.snapshot_id) for s in md.snapshots]
    if any(n > 1 for n in Counter(ids).values()):
        return False
    if any(r.snapshot_id not in {s.snapshot_id for s in md.snapshots} for r in md.refs.values()):
        return False
    if "main" in md.refs and md.refs["main"].snapshot_ref_type != "branch":
        return False
    # Java's readers: only the unsorted order (no fields) has id 0; a bucket count is positive
    if any((o.order_id == 0) != (not o.fields) for o in md.sort_orders):
        return False
    if any(str(f.transform) == "bucket[0]" for spec in md.partition_specs for f in spec.fields):
        return False
    try:
        TableMetadataUtil.parse_raw(md.model_dump_json())
    except Exception:  # noqa: BLE001
        return False
    return True


def expected(base: TableMetadata, location: str, reqs: Any, ups: Any, transaction: bool = False
             ) -> tuple[set[int], TableMetadata | None]:
    """What PyIceberg, applied locally, says of the commit: the codes allowed and, for 200, the metadata."""
    try:
        requirements, updates = REQUIREMENTS.validate_python(reqs), UPDATES.validate_python(ups)
    except Exception:  # noqa: BLE001 - not a CommitTableRequest
        return {400}, None
    if transaction and any(r.type == "assert-create" for r in requirements):
        return {400}, None  # creates are not part of multi-table transactions here
    for r in requirements:
        try:
            r.validate(base)
        except CommitFailedException:
            return {409}, None
    try:
        new = update_table_metadata(base, tuple(spec_semantics(base, updates)), metadata_location=location)
    except CommitFailedException:
        return {409}, None
    except Exception:  # noqa: BLE001 - the updates do not apply
        return {400}, None
    if new == base:
        return {200}, base
    return ({200}, new) if writable(new) else ({400}, None)


def comparable(md: TableMetadata | dict[str, Any]) -> dict[str, Any]:
    """Metadata without the times a commit takes from the clock."""
    d = dict(md) if isinstance(md, dict) else json.loads(md.model_dump_json())
    d.pop("last-updated-ms", None)
    d["snapshot-log"] = [{**e, "timestamp-ms": 0} for e in d.get("snapshot-log", [])]
    return d


@settings(max_examples=int(os.environ.get("REST_SPEC_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(commits=st.lists(st.tuples(COMMIT, st.booleans()), min_size=1, max_size=6),
       version=st.sampled_from(["1", "2"]))
def test_random_commits_match_pyiceberg(server: Server, ns: str, commits: list[tuple[tuple[Any, Any], bool]],
                                        version: str) -> None:
    """Each commit to the table's own endpoint, or (`in_transaction`) as the one table of a multi-table
    transaction (204, no body: the result is loaded)."""
    name = unique("t")
    made = create(server, ns, name, properties={"format-version": version, "a": "1"})
    table_location = made["metadata"]["location"]
    path = f"namespaces/{ns}/tables/{name}"
    for (reqs, ups), in_transaction in commits:
        base, location = load(server, ns, name)
        places = {"$UUID": str(base.table_uuid), "$LOC": table_location, "$LOC_MOVED": table_location + "_moved"}
        reqs, ups = substitute(reqs, places), substitute(ups, places)
        codes, want = expected(base, location, reqs, ups, in_transaction)
        if in_transaction:
            answer = call(server, "POST", "transactions/commit", {"table-changes": [
                {"identifier": {"namespace": [ns], "name": name}, "requirements": reqs, "updates": ups}]})
        else:
            answer = call(server, "POST", path, {"requirements": reqs, "updates": ups})
        event(f"answer {answer[0]}")
        if want is None:
            assert_error(answer, codes)
            assert load(server, ns, name)[1] == location  # refused: nothing changed
            continue
        if in_transaction:
            assert answer[0] == 204 and answer[2] is None, (answer, reqs, ups)
            again, now_at = load(server, ns, name)
            assert (now_at == location) == (want == base)
            assert comparable(again) == comparable(TableMetadataUtil.parse_raw(want.model_dump_json()))
            continue
        status, headers, body = answer
        assert status == 200, (body, reqs, ups)
        event("changed" if body["metadata-location"] != location else "unchanged")
        assert comparable(body["metadata"]) == comparable(want), (reqs, ups)
        assert headers["etag"]
        again, now_at = load(server, ns, name)
        assert now_at == body["metadata-location"]
        # what was written reads back as the answer does (both through PyIceberg's parser, which recomputes a
        # v1 table's last-partition-id from its specs)
        assert comparable(again) == comparable(TableMetadataUtil.parse_obj(body["metadata"]))


def test_remove_missing_property_is_a_no_op(server: Server, ns: str) -> None:
    name = unique("t")
    create(server, ns, name, properties={"keep": "1", "drop": "2"})
    path = f"namespaces/{ns}/tables/{name}"
    status, _, body = call(server, "POST", path, {"updates": [
        {"action": "remove-properties", "removals": ["never-set", "drop", "drop"]}]})
    assert status == 200, body
    props = body["metadata"]["properties"]
    assert props["keep"] == "1" and "drop" not in props and "never-set" not in props
    # only missing keys: no change at all
    _, location = load(server, ns, name)
    status, _, body = call(server, "POST", path, {"updates": [{"action": "remove-properties",
                                                               "removals": ["never-set"]}]})
    assert status == 200 and body["metadata-location"] == location, body
    # (PyIceberg's own client cannot send it: its local update_table_metadata fails first, with a KeyError)


def test_bad_commits_are_400_not_500(server: Server, ns: str) -> None:
    name = unique("t")
    create(server, ns, name)
    path = f"namespaces/{ns}/tables/{name}"
    for body in ({"updates": [{"action": "set-statistics"}]}, {"updates": [{"action": "set-properties", "updates": 5}]},
                 {"updates": [{"action": "add-schema", "schema": SCHEMA}]},  # a second schema with id 0
                 {"updates": [{"action": "set-current-schema", "schema-id": -1}]},
                 {"updates": [{"action": "upgrade-format-version", "format-version": 99}]},
                 {"requirements": [{"type": "assert-ref-snapshot-id", "ref": 5}]}, {"updates": "x"},
                 {"updates": [{"action": "remove-statistics", "snapshot-id": 2 ** 64}]},
                 {"requirements": [{"type": "assert-current-schema-id", "current-schema-id": -(2 ** 63) - 1}]}):
        assert_error(call(server, "POST", path, body), {400})
    assert_error(call(server, "POST", path, raw=b"[" * 200_000 + b"]" * 200_000), {400})  # deeper than the parser
    # a lone surrogate is no text, NUL is in no name or value; a surrogate pair is a character
    for raw in (rb'{"updates": [{"action": "set-properties", "updates": {"\ud800": "x"}}]}',
                rb'{"updates": [{"action": "set-properties", "updates": {"k": "a\u0000b"}}]}'):
        assert_error(call(server, "POST", path, raw=raw), {400})
    assert_error(call(server, "POST", "namespaces", raw=rb'{"namespace": ["n\uDC00"]}'), {400})
    status, _, body = call(server, "POST", path, raw=rb'{"updates": [{"action": "set-properties", '
                                                     rb'"updates": {"smile": "\ud83d\ude00"}}]}')
    assert status == 200 and body["metadata"]["properties"]["smile"] == "\U0001F600", body
    assert_error(call(server, "POST", path, {"requirements": [{"type": "assert-create"}], "updates": []}), {409})


def test_bad_creates_are_400_not_500(server: Server, ns: str) -> None:
    def field(type_: Any) -> dict[str, Any]:
        return {"type": "struct", "fields": [{"id": 1, "name": "a", "type": type_, "required": False}]}

    def spec(transform: str) -> dict[str, Any]:
        return {"spec-id": 0, "fields": [{"source-id": 2, "field-id": 1000, "transform": transform, "name": "p"}]}

    for extra in ({"schema": field("decimal(99, 2)")}, {"schema": field("fixed[-1]")}, {"schema": field("variant")},
                  {"schema": "x"}, {"partition-spec": spec("truncate[-1]")}, {"partition-spec": spec("bucket[0]")},
                  {"partition-spec": spec("identity") | {"fields": [{"source-id": 99, "field-id": 1000,
                                                                     "transform": "identity", "name": "p"}]}},
                  {"properties": []}, {"properties": {"format-version": "3"}}, {"properties": {"format-version": "x"}},
                  {"properties": {"a": None}}, {"location": 5}, {"location": "relative/path"}):
        for stage in (False, True):
            body = {"name": unique("bad"), "schema": SCHEMA, **extra, "stage-create": stage}
            assert_error(call(server, "POST", f"namespaces/{ns}/tables", body), {400})


# ---- stage-create --------------------------------------------------------------------------------------------


def test_staged_create_makes_the_metadata_directory(server: Server, ns: str) -> None:
    name = unique("staged")
    body = create(server, ns, name, **{"stage-create": True})
    assert "metadata-location" not in body
    location = body["metadata"]["location"]
    directory = location.removeprefix("file:").removeprefix("//") + "/metadata"
    assert os.path.isdir(directory)
    assert os.listdir(directory) == []  # nothing committed yet
    status, _, _ = call(server, "GET", f"namespaces/{ns}/tables/{name}")
    assert status == 404
    # an engine writes a file there, then commits the table with assert-create
    with open(os.path.join(directory, "manifest-first.avro"), "wb") as f:
        f.write(b"x")
    status, _, answer = call(server, "POST", f"namespaces/{ns}/tables/{name}", {
        "requirements": [{"type": "assert-create"}],
        "updates": [{"action": "assign-uuid", "uuid": body["metadata"]["table-uuid"]},
                    {"action": "upgrade-format-version", "format-version": 2},
                    {"action": "add-schema", "schema": SCHEMA}, {"action": "set-current-schema", "schema-id": -1},
                    {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                    {"action": "set-default-spec", "spec-id": -1},
                    {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                    {"action": "set-default-sort-order", "sort-order-id": -1},
                    {"action": "set-location", "location": location}]})
    assert status == 200, answer
    assert answer["metadata-location"].startswith(location + "/metadata/")
    # outside the warehouse: refused, and no directory made
    outside = f"/tmp/{unique('outside')}"
    status, _, err = call(server, "POST", f"namespaces/{ns}/tables", {
        "name": unique("staged"), "schema": SCHEMA, "stage-create": True, "location": outside})
    assert_error((status, {}, err), {403})
    assert not os.path.exists(outside)


# ---- paging --------------------------------------------------------------------------------------------------


def test_paging_tables_and_namespaces(server: Server) -> None:
    space = unique("paged")
    assert call(server, "POST", "namespaces", {"namespace": [space]})[0] == 200
    names = sorted(unique(f"t{i}") for i in range(5))
    for n in names:
        create(server, space, n)
    # without pageToken: everything, next-page-token null
    status, _, body = call(server, "GET", f"namespaces/{space}/tables?pageSize=2")
    assert status == 200 and len(body["identifiers"]) == 5 and body["next-page-token"] is None
    seen, token, pages = [], "", 0
    while token is not None:
        status, _, body = call(server, "GET", f"namespaces/{space}/tables?pageSize=2&pageToken={token}")
        assert status == 200, body
        assert len(body["identifiers"]) <= 2
        seen += [i["name"] for i in body["identifiers"]]
        token, pages = body["next-page-token"], pages + 1
    assert seen == names and pages == 3
    # a page token stays right when a table listed before it is dropped
    _, _, first = call(server, "GET", f"namespaces/{space}/tables?pageSize=2&pageToken=")
    assert call(server, "DELETE", f"namespaces/{space}/tables/{names[0]}")[0] == 204
    _, _, rest_ = call(server, "GET", f"namespaces/{space}/tables?pageSize=10&pageToken={first['next-page-token']}")
    assert [i["name"] for i in rest_["identifiers"]] == names[2:] and rest_["next-page-token"] is None
    # namespaces
    status, _, body = call(server, "GET", "namespaces?pageToken=&pageSize=1")
    assert status == 200 and len(body["namespaces"]) == 1 and body["next-page-token"]
    every, token = [], ""
    while token is not None:
        _, _, body = call(server, "GET", f"namespaces?pageToken={token}&pageSize=2")
        every += body["namespaces"]
        token = body["next-page-token"]
    _, _, whole = call(server, "GET", "namespaces")
    assert every == sorted(whole["namespaces"]) and [space] in every
    # bad tokens and sizes: 400
    for query in ("pageSize=0", "pageSize=-1", "pageSize=abc", "pageSize=" + "9" * 40, "pageToken=%00%01",
                  "pageToken=bm90LW91cnM", "pageToken=" + "A" * 5000, "pageToken=!!!"):
        assert_error(call(server, "GET", f"namespaces/{space}/tables?{query}"), {400})
        assert_error(call(server, "GET", f"namespaces?{query}"), {400})
    # PyIceberg's client follows the tokens
    rest = RestCatalog("rest", uri=server.rest_uri)
    assert sorted(t[1] for t in rest.list_tables(space)) == names[1:]


# ---- ETags ---------------------------------------------------------------------------------------------------


def test_etag_and_if_none_match(server: Server, ns: str) -> None:
    name = unique("t")
    made = create(server, ns, name)
    path = f"namespaces/{ns}/tables/{name}"
    status, headers, body = call(server, "GET", path)
    tag = headers["etag"]
    assert status == 200 and tag.startswith('"') and tag.endswith('"')
    assert call(server, "GET", path)[1]["etag"] == tag  # stable
    status, headers, body = call(server, "GET", path, headers={"If-None-Match": tag})
    assert status == 304 and body is None and "content-length" not in headers
    assert call(server, "GET", path, headers={"If-None-Match": f'"other", W/{tag}'})[0] == 304
    assert call(server, "GET", path, headers={"If-None-Match": "*"})[0] == 304
    assert call(server, "GET", path, headers={"If-None-Match": '"other"'})[0] == 200
    # a commit changes it; the commit's answer carries the new one
    status, headers, body = call(server, "POST", path, {"updates": [{"action": "set-properties",
                                                                     "updates": {"k": "v"}}]})
    assert status == 200 and headers["etag"] != tag
    assert call(server, "GET", path, headers={"If-None-Match": tag})[0] == 200
    assert call(server, "GET", path, headers={"If-None-Match": headers["etag"]})[0] == 304
    assert made["metadata-location"]
    # snapshots=refs: only the snapshots a branch or tag names, with an ETag of its own; another value is refused
    snap = {"snapshot-id": 1, "timestamp-ms": 1_700_000_000_000, "manifest-list": "/nonexistent/1.avro",
            "summary": {"operation": "append"}, "sequence-number": 1, "schema-id": 0}
    status, _, _ = call(server, "POST", path, {"updates": [
        {"action": "add-snapshot", "snapshot": snap},
        {"action": "add-snapshot", "snapshot": {**snap, "snapshot-id": 2, "parent-snapshot-id": 1,
                                                "sequence-number": 2}},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 2}]})
    assert status == 200
    status, headers, every = call(server, "GET", path + "?snapshots=all")
    assert status == 200 and [s["snapshot-id"] for s in every["metadata"]["snapshots"]] == [1, 2]
    status, refs_headers, refs = call(server, "GET", path + "?snapshots=refs")
    assert status == 200 and [s["snapshot-id"] for s in refs["metadata"]["snapshots"]] == [2]
    assert refs_headers["etag"] != headers["etag"] and call(server, "GET", path)[1]["etag"] == headers["etag"]
    assert call(server, "GET", path + "?snapshots=refs", headers={"If-None-Match": refs_headers["etag"]})[0] == 304
    assert call(server, "GET", path + "?snapshots=refs", headers={"If-None-Match": headers["etag"]})[0] == 200
    assert_error(call(server, "GET", path + "?snapshots=some"), {400})
    assert_error(call(server, "GET", f"namespaces/{ns}/tables/{unique('none')}", headers={"If-None-Match": "*"}),
                 {404})


# ---- metrics reports -----------------------------------------------------------------------------------------


SCAN_REPORT = {"report-type": "scan-report", "table-name": "rest.t", "snapshot-id": 1, "filter": True,
               "schema-id": 0, "projected-field-ids": [1, 2], "projected-field-names": ["id", "data"],
               "metrics": {"total-planning-duration": {"count": 1, "time-unit": "nanoseconds",
                                                       "total-duration": 2644235116},
                           "result-data-files": {"unit": "count", "value": 1}}}
COMMIT_REPORT = {"report-type": "commit-report", "table-name": "rest.t", "snapshot-id": 2, "sequence-number": 2,
                 "operation": "append", "metrics": {"added-data-files": {"unit": "count", "value": 1}},
                 "metadata": {"engine": "test"}}


def test_metrics_reports(server: Server, ns: str) -> None:
    name = unique("t")
    create(server, ns, name)
    path = f"namespaces/{ns}/tables/{name}/metrics"
    for report in (SCAN_REPORT, COMMIT_REPORT):
        status, _, body = call(server, "POST", path, report)
        assert status == 204 and body is None
    assert call(server, "POST", "prefix/" + path, COMMIT_REPORT)[0] == 204  # with the optional {prefix}
    bad: list[Any] = [
        [], {}, {"report-type": "other-report"}, {**SCAN_REPORT, "report-type": 5},
        {k: v for k, v in SCAN_REPORT.items() if k != "filter"}, {**SCAN_REPORT, "snapshot-id": "1"},
        {**SCAN_REPORT, "snapshot-id": True}, {**SCAN_REPORT, "snapshot-id": 2 ** 64},
        {**SCAN_REPORT, "projected-field-ids": ["a"]}, {**SCAN_REPORT, "metrics": []},
        {**SCAN_REPORT, "metrics": {"m": 1}}, {**COMMIT_REPORT, "operation": None},
        {**COMMIT_REPORT, "metadata": {"k": 1}}, {k: v for k, v in COMMIT_REPORT.items() if k != "sequence-number"}]
    for report in bad:
        assert_error(call(server, "POST", path, report), {400})
    assert_error(call(server, "POST", path, raw=b"{not json"), {400})
    assert_error(call(server, "POST", f"namespaces/{ns}/tables/{unique('none')}/metrics", SCAN_REPORT), {404})
    assert_error(call(server, "GET", path), {405})
    # announced in the config's endpoints
    _, _, config = call(server, "GET", "config")
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics" in config["endpoints"]
