"""Proxy users (Hadoop's impersonation, hadoop.proxyuser.<short>.users/.groups/.hosts; README "Kerberos") on the
SASL front, against a real MIT KDC (tests/kdc.py): a client that authenticates as one user and names another as
its SASL authorization id acts for it only when the settings allow it from its address; the connection's user is
then the impersonated one (objects it creates are that user's), the audit log keeps the real one. The same for
DIGEST-MD5 with a delegation token, whose response must also name this service (digest-uri) and count a fresh
nonce's first use (nc). And EXECUTED AS over Kerberos: the server's scheduler authenticates with its keytab and
acts for the policy's user, whose rights decide the run.
"""

from __future__ import annotations

import getpass
import grp
import json
import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kdc import KDC, OTHER, REALM, kdc_fixture
from test_kerberos import _read_exact, _token_parts, sasl_client, sasl_env

from conftest import ROOT, Database, Server, make_database, unique

pytest.importorskip("gssapi")

OS_USER = getpass.getuser()
OS_GROUP = grp.getgrgid(os.getgid()).gr_name


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KDC]:
    yield from kdc_fixture(tmp_path_factory)


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    yield from make_database("sqlite", tmp_path_factory.mktemp("proxydb"))


def _server(kdc: KDC, db: Database, workdir: Path, config: str, **env: str) -> Server:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "proxy.toml").write_text(config)
    return Server(db, workdir, "--no-rest", "--audit-log", str(workdir / "audit.log"),
                  env=sasl_env(kdc, METASTORE_CONFIG=str(workdir / "proxy.toml"), **env)).start()


@pytest.fixture(scope="module")
def pserver(kdc: KDC, sqlite_db: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = _server(kdc, sqlite_db, tmp_path_factory.mktemp("pserver"), f'''
"hadoop.proxyuser.alice.users" = "bob"
"hadoop.proxyuser.alice.hosts" = "127.0.0.1, ::1"
"hadoop.proxyuser.bob.groups" = "{OS_GROUP}"
"hadoop.proxyuser.bob.hosts" = "127.0.0.0/8"
''')
    yield srv
    srv.stop()


@pytest.fixture
def as_user(kdc: KDC, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def switch(user: str | None) -> None:
        for k, v in kdc.env(kdc.kinit(user) if user else None).items():
            monkeypatch.setenv(k, v)

    return switch


def _audit(srv: Server, method: str) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in (srv.workdir / "audit.log").read_text().splitlines()]
    return [x for x in lines if x["method"] == method]


def test_gssapi_proxy_user_acts_for_whom_the_settings_allow(pserver: Server, as_user) -> None:  # type: ignore[no-untyped-def]
    from metastore.thrift import hms
    from metastore.thrift.client import MetastoreClient, MetastoreUnavailable

    uri = f"thrift://localhost:{pserver.port}"
    as_user("alice")
    ns = unique("px")
    with MetastoreClient(uri, kerberos=True, user="bob") as c:  # alice, acting for bob
        c.create_database(hms.Database(name=ns, parameters={}))
        assert c.get_database(ns).ownerName == "bob"
    with MetastoreClient(uri, kerberos=True, user=f"alice@{REALM}") as c:  # naming herself needs nothing
        assert c.get_database(ns).name == ns
    line = [x for x in _audit(pserver, "create_database") if x["principal"] == "bob"][-1]
    assert line["real_user"] == f"alice@{REALM}" and line["auth"] == "kerberos", line
    # whom alice may not act for: refused at the handshake, with no call served
    for who in ("dave", f"bob@{OTHER}", OS_USER):
        with pytest.raises(MetastoreUnavailable, match="may not act for"), \
                MetastoreClient(uri, kerberos=True, user=who) as c:
            c.get_all_databases()
    # bob may act for the members of a group (the host's group database): this OS user, not alice
    as_user("bob")
    ns2 = unique("px")
    with MetastoreClient(uri, kerberos=True, user=OS_USER) as c:
        c.create_database(hms.Database(name=ns2, parameters={}))
        assert c.get_database(ns2).ownerName == OS_USER
    with pytest.raises(MetastoreUnavailable, match="may not act for"), \
            MetastoreClient(uri, kerberos=True, user="alice") as c:
        c.get_all_databases()
    assert pserver.alive()


def test_proxy_user_hosts_are_enforced(kdc: KDC, sqlite_db: Database, tmp_path: Path, as_user) -> None:  # type: ignore[no-untyped-def]
    """alice may act for anyone, but only from 192.0.2.0/24: not from loopback; without .hosts, from nowhere."""
    from metastore.thrift.client import MetastoreClient, MetastoreUnavailable

    srv = _server(kdc, sqlite_db, tmp_path / "hosts", '''
"hadoop.proxyuser.alice.users" = "*"
"hadoop.proxyuser.alice.hosts" = "192.0.2.0/24"
"hadoop.proxyuser.bob.users" = "*"
''')
    try:
        for user in ("alice", "bob"):
            as_user(user)
            with pytest.raises(MetastoreUnavailable, match="may not act for"), \
                    MetastoreClient(f"thrift://localhost:{srv.port}", kerberos=True, user="carol") as c:
                c.get_all_databases()
        log = srv.output()
        assert "Unauthorized connection for super-user: alice from IP 127.0.0.1" in log, log[-3000:]
    finally:
        srv.stop()


def _digest(port: int, user: str, password: str, call: bool = False, **override: str) -> tuple[int, bytes]:
    """One DIGEST-MD5 negotiation with a correct response for its directives (`override` changes them): the
    server's answer (status, payload); with `call`, then one get_all_databases on the connection."""
    from hive_metastore import ThriftHiveMetastore

    from metastore.server.sasl import digest_response

    from test_bad_input import call_bytes, framed

    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"\x01" + struct.pack("!i", 10) + b"DIGEST-MD5" + b"\x02" + struct.pack("!i", 0))
        head = _read_exact(s, 5)
        assert head[0] == 2, head
        challenge = _read_exact(s, struct.unpack("!i", head[1:])[0]).decode()
        nonce = challenge.split('nonce="')[1].split('"')[0]
        f = {"username": user, "realm": "default", "nonce": nonce, "cnonce": "c2Vjb25k", "nc": "00000001",
             "qop": "auth", "digest-uri": "hive/localhost", **override}
        f["response"] = digest_response(f, password)[0]
        answer = ",".join(f"{k}={v}" if k in ("nc", "qop") else f'{k}="{v}"' for k, v in f.items()).encode()
        s.sendall(b"\x02" + struct.pack("!i", len(answer)) + answer)
        head = _read_exact(s, 5)
        out = head[0], _read_exact(s, struct.unpack("!i", head[1:])[0])
        if call and out[0] == 5:
            s.sendall(framed(call_bytes("get_all_databases", ThriftHiveMetastore.get_all_databases_args())))
            size = struct.unpack("!i", _read_exact(s, 4))[0]
            assert b"default" in _read_exact(s, size)
        return out


def test_digest_md5_proxy_user_uri_and_nonce_count(pserver: Server, as_user) -> None:  # type: ignore[no-untyped-def]
    as_user("alice")
    c = sasl_client(pserver.port)
    try:
        token = c.get_delegation_token(f"alice@{REALM}", "alice")
    finally:
        c.close()
    user, password = _token_parts(token)
    as_user(None)  # the token alone
    # alice's token, acting for bob: allowed (alice may act for bob); the call is bob's
    assert _digest(pserver.port, user, password, call=True, authzid="bob")[0] == 5
    line = _audit(pserver, "get_all_databases")[-1]
    assert line["principal"] == "bob" and line["real_user"] == f"alice@{REALM}" and line["auth"] == "token", line
    status, payload = _digest(pserver.port, user, password, authzid="dave")  # nobody else
    assert status == 3 and b"may not act for" in payload, payload
    # the response must name this service, and count the fresh nonce's first use
    assert _digest(pserver.port, user, password, call=True)[0] == 5  # COMPLETE
    line = _audit(pserver, "get_all_databases")[-1]
    assert line["principal"] == "alice" and "real_user" not in line, line
    assert _digest(pserver.port, user, password, **{"digest-uri": "null/default"})[0] == 5  # Hive's Java client
    for override, words in (({"digest-uri": "ldap/localhost"}, b"digest-uri"),
                            ({"digest-uri": "hive/elsewhere.example.com"}, b"digest-uri"),
                            ({"nc": "00000002"}, b"nonce count")):
        status, payload = _digest(pserver.port, user, password, **override)
        assert status == 3 and words in payload, (override, status, payload)
    # a token alice gets acting for bob is bob's, with alice as its real user: its connections say so
    from metastore.catalog.tokens import Identifier, decode_token
    from metastore.thrift.client import MetastoreClient

    as_user("alice")
    with MetastoreClient(f"thrift://localhost:{pserver.port}", kerberos=True, user="bob") as c:
        proxied = c.forward("get_delegation_token", "bob", "bob")
    ident = Identifier.decode(decode_token(proxied)[0])
    assert (ident.owner, ident.real_user) == ("bob", f"alice@{REALM}"), ident
    as_user(None)
    assert _digest(pserver.port, *_token_parts(proxied), call=True)[0] == 5
    line = _audit(pserver, "get_all_databases")[-1]
    assert line["principal"] == "bob" and line["real_user"] == f"alice@{REALM}" and line["auth"] == "token", line
    assert pserver.alive()


# ---- EXECUTED AS over Kerberos ------------------------------------------------------------------------------

AUTHZ = {"METASTORE_AUTHORIZATION": "sql", "METASTORE_ADMIN_USERS": "alice"}


def _sql(srv: Server, user: str, statement: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "metastore.cli", "sql", "--db", srv.db.url, statement],
                          capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env=dict(os.environ, LOGNAME=user, USER=user, **AUTHZ))


def _run_once(srv: Server, name: str) -> dict[str, str]:
    def executions() -> list[dict[str, str]]:
        p = _sql(srv, "alice", f"SELECT * FROM information_schema.scheduled_executions WHERE schedule_name='{name}'")
        assert p.returncode == 0, p.stderr
        lines = p.stdout.splitlines()
        return [dict(zip(lines[0].split("\t"), x.split("\t"))) for x in lines[1:]]

    before = len(executions())
    p = _sql(srv, "alice", f"ALTER SCHEDULED QUERY {name} EXECUTE")
    assert p.returncode == 0, p.stderr
    deadline = time.time() + 60
    while time.time() < deadline:
        done = [e for e in executions()[before:] if e["state"] != "EXECUTING"]
        if done:
            return done[0]
        time.sleep(0.5)
    raise AssertionError(f"the execution of {name} did not end")


@pytest.fixture
def own_db(tmp_path: Path) -> Iterator[Database]:
    """A store for one test's server alone: the module's has pserver on it, whose scheduler (no authorization)
    would run the policies made there too."""
    yield from make_database("sqlite", tmp_path)


def test_policy_runs_as_its_user_over_kerberos(kdc: KDC, own_db: Database, tmp_path: Path, as_user) -> None:  # type: ignore[no-untyped-def]
    """A Kerberos-only server with authorization=sql: its scheduler's connections to itself authenticate with
    its keytab (no ticket cache: KRB5CCNAME names none) and act for the policy's user."""
    from hive_metastore.ttypes import Database as TDatabase
    from hive_metastore.ttypes import (
        HiveObjectPrivilege,
        HiveObjectRef,
        PrivilegeBag,
        PrivilegeGrantInfo,
    )

    srv = _server(kdc, own_db, tmp_path / "sched", "", **AUTHZ)
    try:
        as_user("alice")
        db, name, root = unique("ksrc"), unique("kpol"), tmp_path / "staging"
        a = sasl_client(srv.port)
        try:
            a.create_database(TDatabase(name=db))
            p = _sql(srv, "alice", f"CREATE SCHEDULED QUERY {name} EVERY 5 HOURS EXECUTED AS bob DISABLED AS "
                                   f"REPL DUMP {db} WITH ('hive.repl.rootdir'='{root}')")
            assert p.returncode == 0, p.stderr
            e = _run_once(srv, name)
            assert e["state"] == "FAILED" and "Principal [name=bob, type=USER]" in e["error_message"], e
            a.grant_privileges(PrivilegeBag(privileges=[HiveObjectPrivilege(
                hiveObject=HiveObjectRef(objectType=1, dbName=None, objectName=None, partValues=[], columnName=None),
                principalName="bob", principalType=1, grantInfo=PrivilegeGrantInfo(privilege="SELECT",
                                                                                    grantOption=False))]))
            e = _run_once(srv, name)
            assert e["state"] == "FINISHED", e
        finally:
            a.close()
        lines = [json.loads(x) for x in (srv.workdir / "audit.log").read_text().splitlines()]
        runs = [x for x in lines if x["method"] == "get_database" and x["principal"] == "bob"]
        assert runs and all(str(x["real_user"]).startswith("hive/") for x in runs), runs
    finally:
        srv.stop()
