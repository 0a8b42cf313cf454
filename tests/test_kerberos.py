"""Kerberos (SASL GSSAPI) and delegation tokens (SASL DIGEST-MD5) on the Thrift front, against a real MIT KDC
(tests/kdc.py: temporary realms on loopback) and real clients: PyIceberg's HiveCatalog, Apache Thrift's SASL
transport (pure-sasl), this package's MetastoreClient, and PySpark's Hive client (slow)."""

from __future__ import annotations

import base64
import os
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kdc import KDC, OTHER, REALM, kdc_fixture

from conftest import ROOT, Database, Server, make_database, unique

pytest.importorskip("gssapi")
pytest.importorskip("kerberos")

PRINCIPAL = f"hive/_HOST@{REALM}"


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KDC]:
    yield from kdc_fixture(tmp_path_factory)


def sasl_env(kdc: KDC, **more: str) -> dict[str, str]:
    env = {"KRB5_CONFIG": str(kdc.krb5_conf), "KRB5CCNAME": f"FILE:{kdc.dir / 'server-has-no-ccache'}",
           "METASTORE_SASL": "true", "METASTORE_KERBEROS_PRINCIPAL": PRINCIPAL,
           "METASTORE_KERBEROS_KEYTAB": str(kdc.keytab)}
    env.update(more)
    return env


def start_server(kdc: KDC, db: Database, workdir: Path, **more: str) -> Server:
    workdir.mkdir(parents=True, exist_ok=True)
    return Server(db, workdir, "--no-rest", env=sasl_env(kdc, **more)).start()


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    yield from make_database("sqlite", tmp_path_factory.mktemp("krbdb"))


@pytest.fixture(scope="module")
def kserver(kdc: KDC, sqlite_db: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(kdc, sqlite_db, tmp_path_factory.mktemp("kserver"))
    yield srv
    srv.stop()


@pytest.fixture
def as_user(kdc: KDC, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Switch this process's Kerberos identity: as_user("alice"), as_user(None) for no ticket."""

    def switch(user: str | None) -> Path | None:
        ccache = kdc.kinit(user) if user else None
        for k, v in kdc.env(ccache).items():
            monkeypatch.setenv(k, v)
        return ccache

    return switch


def sasl_client(port: int, mechanism: str = "GSSAPI", **kw: Any) -> Any:
    """Apache Thrift's Hive client over its SASL transport (pure-sasl), as PyIceberg builds it."""
    from hive_metastore import ThriftHiveMetastore
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    sock = TSocket.TSocket("localhost", port)
    sock.setTimeout(30_000)
    transport = TTransport.TSaslClientTransport(sock, host="localhost", service="hive", mechanism=mechanism, **kw)
    transport.open()
    client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
    client.close = transport.close  # type: ignore[attr-defined]
    client.sasl = transport.sasl  # type: ignore[attr-defined]
    return client


def hive_catalog(srv: Server) -> Any:
    from pyiceberg.catalog.hive import HiveCatalog

    return HiveCatalog("hive", uri=f"thrift://localhost:{srv.port}", warehouse=f"file://{srv.warehouse}",
                       **{"hive.kerberos-authentication": "true"})


# ---- a server that cannot honour SASL does not start (every backend) ---------------------------------------

def _serve_fails(db: Database, workdir: Path, env: dict[str, str]) -> str:
    workdir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "metastore.cli", "serve", "--db", db.url, "--data-dir", str(workdir / "data"),
           "--port", "0", "--no-rest", "--warehouse", str(workdir / "warehouse")]
    p = subprocess.run(cmd, cwd=workdir, env=dict(os.environ, **env), capture_output=True, text=True, timeout=120)
    assert p.returncode != 0, f"serve started with impossible SASL settings:\n{p.stdout}\n{p.stderr}"
    assert "Traceback" not in p.stderr, p.stderr
    return p.stderr + p.stdout


def test_sasl_without_keytab_or_principal_refuses_to_start(kdc: KDC, database: Database, tmp_path: Path) -> None:
    no_keytab = _serve_fails(database, tmp_path / "a", sasl_env(kdc, METASTORE_KERBEROS_KEYTAB=""))
    assert "hive.metastore.kerberos.keytab.file is not set" in no_keytab
    missing = tmp_path / "missing.keytab"
    unreadable = _serve_fails(database, tmp_path / "b", sasl_env(kdc, METASTORE_KERBEROS_KEYTAB=str(missing)))
    assert "not a readable file" in unreadable and str(missing) in unreadable
    no_principal = _serve_fails(database, tmp_path / "c", sasl_env(kdc, METASTORE_KERBEROS_PRINCIPAL=""))
    assert "hive.metastore.kerberos.principal is not set" in no_principal
    wrong = _serve_fails(database, tmp_path / "d", sasl_env(kdc, METASTORE_KERBEROS_PRINCIPAL=f"nobody/x@{REALM}"))
    assert f"no key for 'nobody/x@{REALM}' in the keytab" in wrong
    bad_qop = _serve_fails(database, tmp_path / "e", sasl_env(kdc, METASTORE_RPC_PROTECTION="secret"))
    assert "hadoop.rpc.protection" in bad_qop


# ---- clients -------------------------------------------------------------------------------------------

def test_pyiceberg_with_kerberos_lists_and_commits(kserver: Server, as_user) -> None:  # type: ignore[no-untyped-def]
    import pyarrow as pa

    as_user("alice")
    cat = hive_catalog(kserver)
    ns = unique("krb")
    cat.create_namespace(ns)
    assert (ns,) in cat.list_namespaces()
    table = cat.create_table(f"{ns}.t", schema=pa.schema([("id", pa.int64()), ("name", pa.string())]))
    table.append(pa.table({"id": [1, 2], "name": ["a", "b"]}))
    table.append(pa.table({"id": [3], "name": ["c"]}))
    loaded = cat.load_table(f"{ns}.t")
    assert len(loaded.snapshots()) == 2
    assert loaded.scan().to_arrow().num_rows == 3
    assert (ns, "t") in cat.list_tables(ns)
    with cat._client as c:  # the Hive objects' owners (Hive's rule: the authenticated user)
        t = c.get_table(ns, "t")
        print(f"owner of a table created by alice@{REALM} through PyIceberg: {t.owner!r}")
        assert t.owner == "alice"


def test_client_without_ticket_is_refused(kserver: Server, as_user, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    as_user(None)
    with pytest.raises(Exception):  # noqa: B017  # the kerberos library's GSSError: no credentials
        hive_catalog(kserver).list_namespaces()
    # a client that speaks the SASL transport with a made-up GSSAPI token is refused by the server
    with socket.create_connection(("127.0.0.1", kserver.port), timeout=10) as s:
        s.sendall(b"\x01" + struct.pack("!i", 6) + b"GSSAPI")
        token = b"\x60\x20" + os.urandom(32)
        s.sendall(b"\x02" + struct.pack("!i", len(token)) + token)
        head = _read_exact(s, 5)
        assert head[0] in (3, 4), head  # BAD or ERROR
        (n,) = struct.unpack("!i", head[1:])
        assert b"GSSAPI authentication failed" in _read_exact(s, n)
        assert _closed(s)
    assert kserver.alive()


def test_ticket_of_another_realm_is_refused_unless_a_rule_maps_it(kdc: KDC, kserver: Server, sqlite_db: Database,
                                                                  as_user, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    as_user("carol")  # carol@OTHER.TEST: a valid cross-realm ticket for hive/localhost@EXAMPLE.TEST
    with pytest.raises(Exception):  # noqa: B017  # the server answers BAD: no auth_to_local rule maps carol@OTHER
        hive_catalog(kserver).list_namespaces()
    from thrift.transport.TTransport import TTransportException

    with pytest.raises(TTransportException, match="maps to no local user"):  # the server's BAD frame
        sasl_client(kserver.port)
    mapped = start_server(kdc, sqlite_db, tmp_path / "mapped",
                          METASTORE_AUTH_TO_LOCAL=f"RULE:[1:$1@$0](.*@{OTHER.replace('.', '[.]')})s/@.*/_ext/ DEFAULT")
    try:
        c = sasl_client(mapped.port)
        try:
            ns = unique("carol")
            from hive_metastore.ttypes import Database as TDatabase

            c.create_database(TDatabase(name=ns, description="by carol"))
            assert c.get_database(ns).ownerName == "carol_ext"
        finally:
            c.close()
    finally:
        mapped.stop()


def test_plain_client_is_refused(kserver: Server) -> None:
    from thrift.transport.TTransport import TTransportException

    from conftest import Client

    c = Client(kserver.port)
    try:
        with pytest.raises((TTransportException, ConnectionError, EOFError)):
            c.get_all_databases()
    finally:
        c.close()
    # a framed plain client: its 4-byte length is not a SASL status either
    with socket.create_connection(("127.0.0.1", kserver.port), timeout=10) as s:
        s.sendall(struct.pack("!i", 30) + b"\x80\x01\x00\x01" + b"\x00" * 26)
        head = _read_exact(s, 5)
        assert head[0] == 3  # BAD: not a SASL negotiation
        (n,) = struct.unpack("!i", head[1:])
        _read_exact(s, n)
        assert _closed(s)
    assert kserver.alive()


def test_negotiation_is_bounded(kdc: KDC, sqlite_db: Database, tmp_path: Path) -> None:
    srv = start_server(kdc, sqlite_db, tmp_path / "bounded", METASTORE_READ_TIMEOUT="2")
    try:
        # a negotiation frame larger than the bound: refused before its payload is read
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"\x01" + struct.pack("!i", 64 * 1024 * 1024))
            head = _read_exact(s, 5)
            assert head[0] == 3
            assert b"limit" in _read_exact(s, struct.unpack("!i", head[1:])[0])
            assert _closed(s)
        # an unknown mechanism
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"\x01" + struct.pack("!i", 5) + b"PLAIN" + b"\x02" + struct.pack("!i", 0))
            head = _read_exact(s, 5)
            assert head[0] == 3
            assert b"unsupported SASL mechanism" in _read_exact(s, struct.unpack("!i", head[1:])[0])
            assert _closed(s)
        # a client that starts and then says nothing more: closed within read_timeout of the accept
        with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
            s.sendall(b"\x01" + struct.pack("!i", 6) + b"GSSAPI")
            assert _closed(s)
        assert srv.alive()
    finally:
        srv.stop()


def test_integrity_and_privacy_layers(kdc: KDC, sqlite_db: Database, as_user, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    as_user("bob")
    for protection in ("privacy", "integrity"):
        srv = start_server(kdc, sqlite_db, tmp_path / protection, METASTORE_RPC_PROTECTION=protection)
        try:
            c = sasl_client(srv.port)
            try:
                assert "default" in c.get_all_databases()
                # the layer the client took: the only one offered
                assert c.sasl._chosen_mech.qop == {"privacy": b"auth-conf", "integrity": b"auth-int"}[protection]
            finally:
                c.close()
            assert hive_catalog(srv).list_namespaces()
        finally:
            srv.stop()


def test_metastore_client_with_kerberos(kdc: KDC, sqlite_db: Database, kserver: Server, as_user,
                                       tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from metastore.thrift.client import MetastoreClient, MetastoreUnavailable

    as_user("alice")
    with MetastoreClient(f"thrift://localhost:{kserver.port}", kerberos=True) as c:
        assert "default" in c.get_all_databases()
    # a server offering privacy only: the client wraps and unwraps every frame
    private = start_server(kdc, sqlite_db, tmp_path / "private", METASTORE_RPC_PROTECTION="privacy")
    try:
        with MetastoreClient(f"thrift://localhost:{private.port}", kerberos=True) as c:
            assert c.get_database("default").name == "default"
    finally:
        private.stop()
    as_user(None)
    with pytest.raises(MetastoreUnavailable, match="Kerberos"), \
            MetastoreClient(f"thrift://localhost:{kserver.port}", kerberos=True) as c:
        c.get_all_databases()


# ---- delegation tokens ---------------------------------------------------------------------------------

def _token_parts(token: str) -> tuple[str, str]:
    """(user name, password) as Hadoop's DIGEST-MD5 client sends them: base64 of the identifier and of the
    password."""
    from metastore.catalog.tokens import decode_token

    ident, password = decode_token(token)
    return base64.b64encode(ident).decode(), base64.b64encode(password).decode()


def test_delegation_tokens(kdc: KDC, kserver: Server, sqlite_db: Database, as_user, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from hive_metastore.ttypes import MetaException

    as_user("alice")
    c = sasl_client(kserver.port)
    try:
        token = c.get_delegation_token(f"alice@{REALM}", "alice")
        with pytest.raises(MetaException, match="does not have privileges"):
            c.get_delegation_token(f"bob@{REALM}", "alice")  # for another user
        assert c.renew_delegation_token(token) > 0  # alice is the renewer
    finally:
        c.close()
    user, password = _token_parts(token)
    # another server process on the same store accepts the token (DIGEST-MD5), as alice
    other = start_server(kdc, sqlite_db, tmp_path / "other")
    try:
        as_user(None)  # no Kerberos ticket at all: the token alone
        d = sasl_client(other.port, mechanism="DIGEST-MD5", username=user, password=password)
        try:
            ns = unique("tok")
            from hive_metastore.ttypes import Database as TDatabase

            d.create_database(TDatabase(name=ns))
            assert d.get_database(ns).ownerName == "alice"
            with pytest.raises(MetaException, match="authenticated by Kerberos"):
                d.get_delegation_token(f"alice@{REALM}", "alice")  # no token from a token
        finally:
            d.close()
        with socket.create_connection(("127.0.0.1", other.port), timeout=10) as s:  # a non-ASCII response
            s.sendall(b"\x01" + struct.pack("!i", 10) + b"DIGEST-MD5" + b"\x02" + struct.pack("!i", 0))
            head = _read_exact(s, 5)
            assert head[0] == 2  # OK: the challenge
            challenge = _read_exact(s, struct.unpack("!i", head[1:])[0]).decode()
            nonce = challenge.split('nonce="')[1].split('"')[0]
            answer = (f'username="{user}",realm="default",nonce="{nonce}",cnonce="x",nc=00000001,qop=auth,'
                      f'digest-uri="hive/localhost",response="\u00e9\u00e9"').encode()
            s.sendall(b"\x02" + struct.pack("!i", len(answer)) + answer)
            head = _read_exact(s, 5)
            assert head[0] == 3  # BAD, with the reason, not a dropped connection
            assert b"authentication failed" in _read_exact(s, struct.unpack("!i", head[1:])[0])
        assert other.alive()
        with pytest.raises(Exception):  # noqa: B017  # a wrong password
            sasl_client(other.port, mechanism="DIGEST-MD5", username=user,
                        password=base64.b64encode(b"x" * 20).decode()).get_all_databases()
        as_user("bob")
        b = sasl_client(kserver.port)
        try:
            with pytest.raises(MetaException, match="does not have privileges"):
                b.renew_delegation_token(token)
            with pytest.raises(MetaException, match="does not have privileges"):
                b.cancel_delegation_token(token)
        finally:
            b.close()
        as_user("alice")
        a = sasl_client(kserver.port)
        try:
            a.cancel_delegation_token(token)
        finally:
            a.close()
        as_user(None)
        with pytest.raises(Exception):  # noqa: B017  # cancelled: refused by every process
            sasl_client(other.port, mechanism="DIGEST-MD5", username=user, password=password).get_all_databases()
    finally:
        other.stop()


def test_live_tokens_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from metastore.catalog import tokens as T
    from metastore.core import identity
    from metastore.core.errors import MetaError
    from metastore.store import migrate
    from metastore.store.engine import create_engine

    engine = create_engine(f"sqlite:///{tmp_path / 'tokens.db'}")
    migrate.upgrade(engine, only_if_empty=True)
    tokens = T.DelegationTokens(T.TokenStore(engine))
    monkeypatch.setattr(T, "MAX_LIVE_TOKENS", 3)
    alice = identity.Principal("alice", method=identity.KERBEROS, full_name=f"alice@{REALM}")
    with identity.acting_as(alice):
        issued = [tokens.get(f"alice@{REALM}", "alice") for _ in range(3)]
        with pytest.raises(MetaError, match="too many live delegation tokens"):
            tokens.get(f"alice@{REALM}", "alice")
        tokens.cancel(issued[0])
        tokens.get(f"alice@{REALM}", "alice")  # room again
    assert tokens.store.token_count() == 3
    engine.dispose()


# ---- auth_to_local ---------------------------------------------------------------------------------------

def test_auth_to_local_rules() -> None:
    from metastore.config import SettingsError
    from metastore.server.sasl import AuthToLocal

    default = AuthToLocal("DEFAULT", REALM)
    assert default.short_name(f"alice@{REALM}") == "alice"
    assert default.short_name(f"hive/host.example@{REALM}") == "hive"
    assert default.short_name(f"carol@{OTHER}") is None
    assert default.short_name(f"a/b/c@{REALM}") is None
    assert default.short_name("alice") is None
    rules = AuthToLocal(f"""RULE:[2:$1@$0](hive@{REALM})s/.*/metastore/
                            RULE:[1:$1@$0](.*@OTHER[.]TEST)s/@.*///L
                            RULE:[1:$1](admin.*)s/admin_(.*)/$1/g
                            DEFAULT""", REALM)
    assert rules.short_name(f"hive/any@{REALM}") == "metastore"
    assert rules.short_name(f"Carol@{OTHER}") == "carol"
    assert rules.short_name(f"admin_x@{REALM}") == "x"
    assert rules.short_name(f"alice@{REALM}") == "alice"
    assert rules.short_name(f"x/y@{OTHER}") is None
    assert AuthToLocal("RULE:[1:$1@$0](.*)s/.*/a@b/", REALM).short_name(f"z@{REALM}") is None  # not simple
    assert default.short_name("a" * 5000 + f"@{REALM}") is None
    with pytest.raises(SettingsError):
        AuthToLocal("RULE:[1:$1](unclosed[)s/a/b/", REALM)
    with pytest.raises(SettingsError):
        AuthToLocal("NOT_A_RULE", REALM)


def test_token_identifier_round_trip() -> None:
    import io

    from metastore.catalog.tokens import Identifier, read_vlong, write_vlong

    for v in (0, 1, -1, 127, 128, -112, -113, 255, 2**31 - 1, 1_700_000_000_000, -(2**40), 2**62):
        b = io.BytesIO()
        write_vlong(b, v)
        assert read_vlong(io.BytesIO(b.getvalue())) == v, v
    ident = Identifier(f"alice@{REALM}", "hive", "", 1_700_000_000_000, 1_700_600_000_000, 42, 7)
    assert Identifier.decode(ident.encode()) == ident
    # Hadoop's layout: version 0, then owner as a Text (vint length + UTF-8)
    assert ident.encode()[:2] == b"\x00" + bytes([len(f"alice@{REALM}")])


# ---- Spark -----------------------------------------------------------------------------------------------

SPARK_JOB = ROOT / "tests" / "kerberos_spark_job.py"


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.timeout(1200)
def test_spark_with_kerberos(kdc: KDC, kserver: Server, tmp_path: Path) -> None:
    import shutil

    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    pytest.importorskip("pyspark")
    ccache = kdc.kinit("alice")
    db = unique("kspark")
    env = dict(os.environ, **kdc.env(ccache), PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    out = tmp_path / "spark.log"
    with open(out, "wb") as f:
        p = subprocess.run([sys.executable, str(SPARK_JOB), "--uri", f"thrift://localhost:{kserver.port}",
                            "--principal", PRINCIPAL, "--krb5-conf", str(kdc.krb5_conf), "--warehouse",
                            str(kserver.warehouse), "--db", db], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                           stdout=f, stderr=subprocess.STDOUT, timeout=1100)
    log = out.read_text(errors="replace")
    assert p.returncode == 0, log[-5000:]
    assert "ROWS [(1, 'a'), (2, 'b'), (3, 'c')]" in log, log[-5000:]
    assert "OWNER alice" in log, log[-5000:]
    # without a ticket the same job cannot reach the metastore
    env_none = dict(env, **kdc.env(None))
    with open(tmp_path / "spark-none.log", "wb") as f:
        p = subprocess.run([sys.executable, str(SPARK_JOB), "--uri", f"thrift://localhost:{kserver.port}",
                            "--principal", PRINCIPAL, "--krb5-conf", str(kdc.krb5_conf), "--warehouse",
                            str(kserver.warehouse), "--db", db + "_x", "--expect-failure"], cwd=tmp_path,
                           env=env_none, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, timeout=600)
    assert p.returncode == 0, (tmp_path / "spark-none.log").read_text(errors="replace")[-5000:]


def _read_exact(s: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        b = s.recv(n - len(out))
        if not b:
            raise ConnectionError("closed")
        out += b
    return out


def _closed(s: socket.socket) -> bool:
    """The server closed the connection (a reset too: it closed with bytes of ours unread)."""
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
