"""The audit log: one JSON line per call of the Thrift and REST fronts, with the principal, its address, the
method and the result; client text cannot forge a line (README "Security")."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from hive_metastore.ttypes import Database, NoSuchObjectException

from conftest import Client, Server, make_database, unique


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    tmp = tmp_path_factory.mktemp("audit")
    log = tmp / "audit.jsonl"
    for db in make_database("sqlite", tmp):
        srv = Server(db, tmp, "--audit-log", str(log)).start()
        yield srv, log
        srv.stop()


def lines(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_thrift_calls_are_logged_with_their_principal_and_result(audited: tuple[Server, Path]) -> None:
    srv, log = audited
    name = unique("audit")
    c = Client(srv.port)
    try:
        c.set_ugi("alice", ["analysts"])
        c.create_database(Database(name=name, description="d", parameters={}))
        with pytest.raises(NoSuchObjectException):
            c.get_table(name, "missing\n{\"forged\": true}")
    finally:
        c.close()
    got = [e for e in lines(log) if e["front"] == "thrift" and e["principal"] == "alice"]
    methods = [e["method"] for e in got]
    assert methods[:3] == ["set_ugi", "create_database", "get_table"], got  # set_ugi: logged as who it made
    create, get = got[1], got[2]
    assert create["result"] == "ok" and create["allowed"] is True and create["auth"] == "claimed"
    assert str(create["address"]).startswith("127.0.0.1:")
    assert get["result"] == "NoSuchObjectException"
    # the client's newline stayed inside one JSON string: every line of the file parses and none is forged
    assert all("forged" not in e for e in lines(log))


def test_rest_calls_are_logged_with_their_operation(audited: tuple[Server, Path]) -> None:
    srv, log = audited
    with urllib.request.urlopen(srv.rest_uri + "/v1/namespaces", timeout=30) as r:
        assert r.status == 200
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(srv.rest_uri + "/v1/namespaces/nope_" + unique(), timeout=30)
    assert e.value.code == 404
    # a call's line is written before its answer is sent: it is there once the client has the answer
    rest = [e for e in lines(log) if e["front"] == "rest"]
    assert [e["method"] for e in rest][-2:] == ["listNamespaces", "loadNamespaceMetadata"]
    assert rest[-2]["result"] == "ok" and rest[-1]["result"] == "RestError"
    # no authentication on the REST front: the server's own rights, and the client's address
    assert all(str(e["address"]).startswith("127.0.0.1:") for e in rest[-2:]), rest[-2:]
    assert rest[-1]["principal"] == "metastore" and rest[-1]["auth"] == "internal", rest[-1]


def test_an_unwritable_audit_log_stops_the_server(tmp_path: Path) -> None:
    for db in make_database("sqlite", tmp_path):
        out = subprocess.run([sys.executable, "-m", "metastore.cli", "serve", "--db", db.url, "--data-dir",
                              str(tmp_path / "data"), "--port", "0", "--no-rest", "--audit-log",
                              str(tmp_path / "no" / "such" / "dir" / "audit.jsonl")],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode != 0
        assert "cannot open the audit log" in out.stderr, out.stderr


def test_a_denied_call_is_logged_with_the_privilege_and_object(tmp_path: Path) -> None:
    """authorization=sql: the authorizer names the object it checked and the privilege it refused."""
    from hive_metastore.ttypes import MetaException

    log = tmp_path / "audit.jsonl"
    for db in make_database("sqlite", tmp_path):
        srv = Server(db, tmp_path, "--no-rest", "--audit-log", str(log),
                     env={"METASTORE_AUTHORIZATION": "sql", "METASTORE_ADMIN_USERS": "root"}).start()
        root, bob = Client(srv.port), Client(srv.port)
        try:
            root.set_ugi("root", [])
            root.create_database(Database(name="secret", description="d", parameters={}))
            bob.set_ugi("bob", [])
            with pytest.raises(MetaException, match="does not have following privileges"):
                bob.drop_database("secret", True, True)
            assert "secret" in root.get_all_databases()
        finally:
            root.close()
            bob.close()
            srv.stop()
    denied = [e for e in lines(log) if e["principal"] == "bob" and e["method"] == "drop_database"]
    assert len(denied) == 1, lines(log)
    assert denied[0]["allowed"] is False and denied[0]["denied"] == "OBJECT OWNERSHIP"
    assert denied[0]["objects"] == ["database:secret"] and denied[0]["result"] == "MetaException"
    created = [e for e in lines(log) if e["principal"] == "root" and e["method"] == "create_database"]
    assert created[0]["allowed"] is True and created[0]["objects"] == ["global"]  # an admin's objects are named


def test_an_oauth2_rest_call_is_logged_with_the_tokens_user(tmp_path: Path) -> None:
    from metastore.rest.clients import add_client

    log = tmp_path / "audit.jsonl"
    secret = add_client(str(tmp_path / "data" / "rest-clients.toml"), "auditor", "dora")
    for db in make_database("sqlite", tmp_path):
        srv = Server(db, tmp_path, "--audit-log", str(log), env={"METASTORE_REST_AUTH": "oauth2"}).start()
        try:
            form = f"grant_type=client_credentials&client_id=auditor&client_secret={secret}".encode()
            with urllib.request.urlopen(srv.rest_uri + "/v1/oauth/tokens", form, timeout=30) as r:
                token = json.loads(r.read())["access_token"]
            request = urllib.request.Request(srv.rest_uri + "/v1/namespaces",
                                             headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=30) as r:
                assert r.status == 200
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(srv.rest_uri + "/v1/namespaces", timeout=30)
            assert e.value.code == 401
            got = lines(log)
        finally:
            srv.stop()
    rest = [(e["principal"], e["auth"], e["result"]) for e in got if e["method"] == "listNamespaces"]
    assert sorted(rest) == [("anonymous", "claimed", "NotAuthorizedException"), ("dora", "oauth2", "ok")], rest
