"""TLS on the Thrift front (issue 20, acceptance 2; README "TLS"): certificates made here (a CA, a server
certificate for localhost and 127.0.0.1 signed by it, a second CA nobody trusts), served from a PKCS12 keystore
or PEM files.

- Spark's Hive 2.3 client with hive.metastore.use.SSL=true and a truststore made by keytool runs a workload;
- PyIceberg's HiveCatalog works over TLS (PyIceberg 0.12 has no TLS option: its own _HiveClient on Apache
  Thrift's TSSLSocket, the closest way), and so do this package's MetastoreClient and the CLI's clients;
- a plain client, a client that trusts another CA, and one that never completes its handshake are refused,
  while the server serves the others; the bounds (read and idle timeouts, the connection cap) hold over TLS;
- a misconfigured TLS (no keystore, a wrong password, a keystore without a key, a JKS keystore) stops `metastore
  serve` with a clear message and a non-zero exit.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import socket
import ssl
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hive_metastore import ThriftHiveMetastore
from sockets_support import closed_within
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TSSLSocket, TTransport

from conftest import Database, Server, make_database
from test_bad_input import call_bytes

pytest.importorskip("cryptography")
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.hazmat.primitives.serialization import pkcs12  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

PASSWORD = "s3cret-store-pw"


# ---- certificates -----------------------------------------------------------------------------------------

def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _ca(cn: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn)).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


def _leaf(ca_key: ec.EllipticCurvePrivateKey, ca: x509.Certificate) -> tuple[ec.EllipticCurvePrivateKey,
                                                                           x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(_name("localhost")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return key, cert


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass
class Certs:
    dir: Path
    ca: Path  # the CA's certificate (PEM): what clients trust
    cert: Path  # the server's chain (PEM: leaf, CA)
    key: Path  # its key (PEM, encrypted with PASSWORD)
    keystore: Path  # the same key and chain, PKCS12 with PASSWORD
    truststore: Path  # the CA alone, PKCS12 with PASSWORD (cryptography's; Spark's comes from keytool)
    other_ca: Path  # a CA nobody trusts
    other_keystore: Path  # a keystore of a server certificate signed by it

    def context(self, ca: Path | None = None) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(ca or self.ca))
        return ctx


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    d = tmp_path_factory.mktemp("certs")
    ca_key, ca = _ca("metastore test CA")
    key, leaf = _leaf(ca_key, ca)
    other_ca_key, other_ca = _ca("another CA")
    other_key, other_leaf = _leaf(other_ca_key, other_ca)
    enc = serialization.BestAvailableEncryption(PASSWORD.encode())
    files = {
        "ca.pem": _pem(ca),
        "server.pem": _pem(leaf) + _pem(ca),
        "server.key": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc),
        "server.p12": pkcs12.serialize_key_and_certificates(b"server", key, leaf, [ca], enc),
        "trust.p12": pkcs12.serialize_key_and_certificates(b"ca", None, None, [ca], enc),
        "other-ca.pem": _pem(other_ca),
        "other.p12": pkcs12.serialize_key_and_certificates(b"other", other_key, other_leaf, [other_ca], enc),
    }
    for name, data in files.items():
        (d / name).write_bytes(data)
    return Certs(d, d / "ca.pem", d / "server.pem", d / "server.key", d / "server.p12", d / "trust.p12",
                 d / "other-ca.pem", d / "other.p12")


def _tls_env(keystore: Path, **more: str) -> dict[str, str]:
    return {"METASTORE_USE_SSL": "true", "METASTORE_SSL_KEYSTORE": str(keystore),
            "METASTORE_SSL_KEYSTORE_PASSWORD": PASSWORD, **more}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    yield from make_database("sqlite", tmp_path_factory.mktemp("tls-db"))


@pytest.fixture(scope="module")
def tls_server(db: Database, certs: Certs, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(db, tmp_path_factory.mktemp("tls-server"), "--no-rest", env=_tls_env(certs.keystore)).start()
    yield srv
    srv.stop()


# ---- clients ----------------------------------------------------------------------------------------------

class TlsClient:
    """The Apache Thrift client PyIceberg ships, over Apache Thrift's TSSLSocket."""

    def __init__(self, port: int, context: ssl.SSLContext, host: str = "127.0.0.1") -> None:
        sock = TSSLSocket.TSSLSocket(host, port, ssl_context=context)
        sock.setTimeout(30_000)
        self.transport = TTransport.TBufferedTransport(sock)
        self.transport.open()
        self.api = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(self.transport))

    def close(self) -> None:
        self.transport.close()


def _plain_call(port: int) -> object:
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(10_000)
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    try:
        return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport)).get_database("default")
    finally:
        transport.close()


def _served(srv: Server, certs: Certs) -> None:
    c = TlsClient(srv.port, certs.context())
    try:
        assert c.api.get_database("default").name == "default"
    finally:
        c.close()


# ---- serving ----------------------------------------------------------------------------------------------

def test_thrift_clients_over_tls(tls_server: Server, certs: Certs) -> None:
    from metastore.thrift import hms
    from metastore.thrift.client import MetastoreClient

    c = TlsClient(tls_server.port, certs.context())
    try:
        c.api.set_ugi("alice", [])
        assert c.api.get_database("default").name == "default"
        assert "default" in c.api.get_all_databases()
        # a call and an answer of many TLS records each (4 MiB of parameters)
        from hive_metastore.ttypes import Table

        from common import parquet_storage
        big = {f"k{i}": "v" * 4096 for i in range(1024)}
        c.api.create_table(Table(tableName="big_params", dbName="default", owner="alice", parameters=big,
                                 sd=parquet_storage([("id", "bigint")]), partitionKeys=[],
                                 tableType="EXTERNAL_TABLE"))
        got = c.api.get_table("default", "big_params").parameters
        assert {k: got[k] for k in big} == big
    finally:
        c.close()
    # this package's client: over TLS with its context (by name, checked against the certificate) ...
    with MetastoreClient(f"thrift://localhost:{tls_server.port}", timeout=10, tls=certs.context()) as ms:
        ms.create_database(hms.Database(name="tls_db", description="over TLS", parameters={}))
        assert ms.get_database("tls_db").description == "over TLS"
    # ... with the context a serving process gives its own clients (the scheduler's): its own certificate pinned,
    # so that it reaches itself at the address it listens on, 0.0.0.0 included; another certificate is refused
    from metastore.config import Settings
    from metastore.server.tls import client_context
    from metastore.thrift.client import MetastoreUnavailable

    def own(keystore: Path) -> ssl.SSLContext:
        return client_context(Settings(use_ssl=True, ssl_keystore=str(keystore), ssl_keystore_password=PASSWORD))
    for uri in (tls_server.uri, f"thrift://0.0.0.0:{tls_server.port}"):
        with MetastoreClient(uri, timeout=10, tls=own(certs.keystore)) as ms:
            assert ms.get_database("tls_db").name == "tls_db"
    with pytest.raises(MetastoreUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
        MetastoreClient(tls_server.uri, timeout=5, tls=own(certs.other_keystore)).get_all_databases()
    # ... and refused, as any failed connect, when plain or trusting another CA
    for tls in (False, certs.context(certs.other_ca)):
        with pytest.raises(MetastoreUnavailable):
            MetastoreClient(tls_server.uri, timeout=5, tls=tls).get_all_databases()


def test_pyiceberg_hive_catalog_over_tls(tls_server: Server, certs: Certs) -> None:
    """PyIceberg 0.12's HiveCatalog has no TLS option; its _HiveClient's transport on Apache Thrift's TSSLSocket
    (what a TLS option would do) creates, commits and reads a table through our TLS front."""
    pa = pytest.importorskip("pyarrow")
    from pyiceberg.catalog.hive import HiveCatalog, _HiveClient
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    context = certs.context()

    class TlsHiveClient(_HiveClient):
        def _init_thrift_transport(self) -> TTransport.TTransportBase:
            from urllib.parse import urlparse

            url = urlparse(self._uri)
            return TTransport.TBufferedTransport(TSSLSocket.TSSLSocket(url.hostname, url.port, ssl_context=context))

    class TlsHiveCatalog(HiveCatalog):
        @staticmethod
        def _create_hive_client(properties: dict[str, str]) -> _HiveClient:
            return TlsHiveClient(properties["uri"], properties.get("ugi"))

    catalog = TlsHiveCatalog("tls", uri=tls_server.uri, warehouse=f"file://{tls_server.warehouse}")
    catalog.create_namespace("tls_ice")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(),
                                                                                    required=False))
    table = catalog.create_table("tls_ice.people", schema)
    table.append(pa.table({"id": [1, 2], "name": ["ann", "bob"]}))
    table.append(pa.table({"id": [3], "name": ["cy"]}))  # a second commit: the lock path over TLS
    assert ("tls_ice", "people") in catalog.list_tables("tls_ice")
    got = catalog.load_table("tls_ice.people").scan().to_arrow().sort_by("id")
    assert got.column("name").to_pylist() == ["ann", "bob", "cy"]


def test_plain_untrusted_and_silent_clients_refused_others_served(tls_server: Server, certs: Certs) -> None:
    from thrift.transport.TTransport import TTransportException

    with pytest.raises((TTransportException, ConnectionError, EOFError)):
        _plain_call(tls_server.port)  # a Thrift call in the clear: the handshake fails, the connection closes
    with pytest.raises((TTransportException, ssl.SSLError)):
        TlsClient(tls_server.port, certs.context(certs.other_ca))  # the client does not trust the server
    # a client that expects another name than the certificate's
    with pytest.raises(ssl.SSLCertVerificationError):
        certs.context().wrap_socket(socket.create_connection(("127.0.0.1", tls_server.port), timeout=10),
                                    server_hostname="metastore.example.com")
    # raw bytes that are not TLS at all, on a connection held open: closed, the server's answer is no data
    raw = socket.create_connection(("127.0.0.1", tls_server.port), timeout=10)
    raw.sendall(call_bytes("get_database", ThriftHiveMetastore.get_database_args(name="default")))
    assert closed_within(raw, 10) is not None
    raw.close()
    _served(tls_server, certs)
    assert tls_server.alive()
    log = tls_server.output()
    assert PASSWORD not in log


def test_sasl_style_framed_transport_over_tls(tls_server: Server, certs: Certs) -> None:
    """The framed transport is detected after the handshake too (the first byte is read, not peeked)."""
    sock = TSSLSocket.TSSLSocket("127.0.0.1", tls_server.port, ssl_context=certs.context())
    sock.setTimeout(10_000)
    transport = TTransport.TFramedTransport(sock)
    transport.open()
    try:
        api = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
        for _ in range(3):
            assert api.get_database("default").name == "default"
    finally:
        transport.close()


def test_pem_files_and_hive_keys(db: Database, certs: Certs, tmp_path: Path) -> None:
    """PEM certificate and (encrypted) key; a hive-site.xml with Hive's key for the switch."""
    site = tmp_path / "hive-site.xml"
    site.write_text(textwrap.dedent(f"""\
        <configuration>
          <property><name>hive.metastore.use.SSL</name><value>true</value></property>
          <property><name>hive.metastore.keystore.password</name><value>{PASSWORD}</value></property>
        </configuration>"""))
    srv = Server(db, tmp_path, "--no-rest", env={"METASTORE_CONFIG": str(site), "METASTORE_SSL_CERT": str(certs.cert),
                                                 "METASTORE_SSL_KEY": str(certs.key)}).start()
    try:
        _served(srv, certs)
        with pytest.raises(Exception):  # noqa: B017 - whichever way thrift reports the closed connection
            _plain_call(srv.port)
    finally:
        srv.stop()


@pytest.mark.parametrize("storetype", ["pkcs12", "jks"])
def test_keystores_made_by_keytool(db: Database, tmp_path: Path, storetype: str) -> None:
    """Java 17's keytool: an RSA key pair in its default PKCS12 keystore (PBES2, AES-256, HmacSHA256), or in a
    JKS one (Sun's key protection); the clients of this package trust a truststore of the same type."""
    from metastore.config import Settings
    from metastore.server.tls import client_context
    from metastore.thrift.client import MetastoreClient

    if shutil.which("keytool") is None:
        pytest.skip("needs Java's keytool")
    store, cert, trust = tmp_path / f"hms.{storetype}", tmp_path / "hms.pem", tmp_path / f"trust.{storetype}"
    for cmd in (["-genkeypair", "-alias", "hms", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=localhost",
                 "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2", "-keystore", str(store)],
                ["-exportcert", "-rfc", "-alias", "hms", "-keystore", str(store), "-file", str(cert)],
                ["-importcert", "-alias", "hms", "-file", str(cert), "-keystore", str(trust)]):
        subprocess.run(["keytool", *cmd, "-storetype", storetype, "-storepass", PASSWORD, "-noprompt"], check=True,
                       capture_output=True)
    srv = Server(db, tmp_path, "--no-rest", env=_tls_env(store)).start()
    try:
        c = TlsClient(srv.port, ssl.create_default_context(cafile=str(cert)))
        try:
            assert c.api.get_database("default").name == "default"
        finally:
            c.close()
        context = client_context(Settings(use_ssl=True, ssl_truststore=str(trust), ssl_truststore_password=PASSWORD))
        with MetastoreClient(srv.uri, timeout=10, tls=context) as ms:
            assert ms.get_database("default").name == "default"
    finally:
        srv.stop()


def test_the_clis_clients_use_tls_from_the_settings(tls_server: Server, certs: Certs, tmp_path: Path) -> None:
    """`metastore repl status` (a MetastoreClient made by repl) connects over TLS when the settings say
    use_ssl, trusting the truststore (PKCS12 or PEM); without them it is refused."""
    def status(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "metastore.cli", "repl", "status", "default", "--json",
                               "--metastore", tls_server.uri], capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, **env), cwd=tmp_path)

    for trust in ({"METASTORE_SSL_TRUSTSTORE": str(certs.truststore),
                   "METASTORE_SSL_TRUSTSTORE_PASSWORD": PASSWORD},
                  {"METASTORE_SSL_TRUSTSTORE": str(certs.ca)}):
        r = status({"METASTORE_USE_SSL": "true", **trust})
        assert r.returncode == 0 and '"database": "default"' in r.stdout, r.stdout + r.stderr
    r = status({})
    assert r.returncode != 0 and "did not answer" in r.stderr, r.stderr
    r = status({"METASTORE_USE_SSL": "true", "METASTORE_SSL_TRUSTSTORE": str(certs.other_ca)})
    assert r.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in r.stderr, r.stderr
    r = status({"METASTORE_USE_SSL": "true", "METASTORE_SSL_TRUSTSTORE": str(certs.truststore),
                "METASTORE_SSL_TRUSTSTORE_PASSWORD": "wrong"})
    assert r.returncode != 0 and "hive.metastore.truststore.password is wrong" in r.stderr, r.stderr
    assert "wrong" not in r.stderr.replace("is wrong", "")


# ---- bounds -----------------------------------------------------------------------------------------------

def test_bounds_hold_over_tls(db: Database, certs: Certs, tmp_path: Path) -> None:
    """read_timeout bounds the handshake of a silent client and a trickled call after the handshake;
    idle_timeout closes an idle TLS connection; max_connections counts TLS connections; the server serves on."""
    srv = Server(db, tmp_path, "--no-rest", env=_tls_env(certs.keystore, METASTORE_IDLE_TIMEOUT="2s",
                                                         METASTORE_READ_TIMEOUT="1s",
                                                         METASTORE_MAX_CONNECTIONS="8")).start()
    try:
        # a TCP connection that never starts its handshake, and one that stops half-way through it
        silent = socket.create_connection(("127.0.0.1", srv.port))
        half = socket.create_connection(("127.0.0.1", srv.port))
        hello = ssl.create_default_context().wrap_bio(ssl.MemoryBIO(), out := ssl.MemoryBIO())
        with pytest.raises(ssl.SSLWantReadError):
            hello.do_handshake()
        half.sendall(out.read()[:20])  # a part of the ClientHello
        for s in (silent, half):
            cut = closed_within(s, 6)
            assert cut is not None and cut < 4, cut
            s.close()
        # after the handshake: a call trickled one byte every 0.3 s (never idle 2 s) is cut at read_timeout
        call = call_bytes("get_database", ThriftHiveMetastore.get_database_args(name="default"))
        raw = socket.create_connection(("127.0.0.1", srv.port))
        tls = certs.context().wrap_socket(raw, server_hostname="localhost")
        t0, cut = time.monotonic(), None
        for i in range(len(call) - 1):
            try:
                tls.sendall(call[i:i + 1])
                tls.settimeout(0.3)
                if tls.recv(1) == b"":
                    cut = time.monotonic() - t0
                    break
            except TimeoutError:
                continue
            except OSError:
                cut = time.monotonic() - t0
                break
        tls.close()
        assert cut is not None and cut < 3, cut
        # a connection idle after a call is closed at idle_timeout; one that pauses less is served throughout
        idle, busy = TlsClient(srv.port, certs.context()), TlsClient(srv.port, certs.context())
        assert idle.api.get_database("default").name == "default"
        t0 = time.monotonic()
        while time.monotonic() - t0 < 3:
            assert busy.api.get_database("default").name == "default"
            time.sleep(0.5)
        with pytest.raises(Exception):  # noqa: B017 - closed: EOF or reset, as thrift reports it
            idle.api.get_database("default")
        idle.close()
        busy.close()
        # the cap counts TLS connections: 8 held (handshake done, no call yet), the 9th closed at once
        held = [certs.context().wrap_socket(socket.create_connection(("127.0.0.1", srv.port)),
                                            server_hostname="localhost") for _ in range(8)]
        extra = socket.create_connection(("127.0.0.1", srv.port))
        assert closed_within(extra, 3) is not None
        extra.close()
        for s in held:
            s.close()
        deadline = time.monotonic() + 10
        while True:
            try:
                _served(srv, certs)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert srv.alive()
    finally:
        srv.stop()


# ---- misconfiguration ---------------------------------------------------------------------------------------

def _serve_fails(db: Database, tmp_path: Path, env: dict[str, str]) -> str:
    """`metastore serve` with this TLS configuration: must exit non-zero; its output."""
    r = subprocess.run([sys.executable, "-m", "metastore.cli", "serve", "--db", db.url, "--no-rest",
                        "--port", "0", "--data-dir", str(tmp_path / "data"), "--warehouse", str(tmp_path / "wh")],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, **env), cwd=tmp_path)
    assert r.returncode != 0, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert "Traceback" not in out, out
    return out


def test_misconfigured_tls_stops_serve(db: Database, certs: Certs, tmp_path: Path) -> None:
    cases = [
        ({"METASTORE_USE_SSL": "true"}, "needs the server's certificate and key"),
        (_tls_env(tmp_path / "missing.p12"), "cannot read it: No such file or directory"),
        (_tls_env(certs.keystore, METASTORE_SSL_KEYSTORE_PASSWORD="not-the-password"),
         "hive.metastore.keystore.password is wrong"),
        (_tls_env(certs.keystore, METASTORE_SSL_KEYSTORE_PASSWORD=""), "hive.metastore.keystore.password is wrong"),
        (_tls_env(certs.truststore), "holds no private key"),
        (_tls_env(certs.ca), "not a PKCS12 keystore"),
        ({"METASTORE_USE_SSL": "true", "METASTORE_SSL_CERT": str(certs.cert)}, "needs both ssl_cert"),
        ({"METASTORE_USE_SSL": "true", "METASTORE_SSL_CERT": str(certs.cert), "METASTORE_SSL_KEY": str(certs.key),
          "METASTORE_SSL_KEYSTORE_PASSWORD": "not-the-password"}, "password (ssl_keystore_password) is wrong"),
    ]
    unreadable = tmp_path / "unreadable.p12"
    shutil.copy(certs.keystore, unreadable)
    unreadable.chmod(0)
    if os.geteuid() != 0:
        cases.append((_tls_env(unreadable), "cannot read it: Permission denied"))
    if shutil.which("keytool"):
        for kind in ("jks", "jceks"):
            subprocess.run(["keytool", "-importkeystore", "-srckeystore", str(certs.keystore), "-srcstoretype",
                            "pkcs12", "-srcstorepass", PASSWORD, "-destkeystore", str(tmp_path / f"server.{kind}"),
                            "-deststoretype", kind, "-deststorepass", PASSWORD, "-noprompt"], check=True,
                           capture_output=True)
        cases += [(_tls_env(tmp_path / "server.jceks"), "a JCEKS keystore, which is not supported: convert it"),
                  (_tls_env(tmp_path / "server.jks", METASTORE_SSL_KEYSTORE_PASSWORD="not-the-password"),
                   "not a JKS keystore, or hive.metastore.keystore.password is wrong")]
    for env, expected in cases:
        out = _serve_fails(db, tmp_path, env)
        assert expected in out, (env, out)
        assert PASSWORD not in out and "not-the-password" not in out, out


# ---- Spark -----------------------------------------------------------------------------------------------

SPARK_JOB = """
import json, sys
from pyspark.sql import SparkSession

uri, warehouse, truststore, password, out = sys.argv[1:6]
spark = (SparkSession.builder.master("local[2]").appName("tls")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.warehouse.dir", warehouse).config("spark.driver.memory", "512m")
         .config("spark.hadoop.hive.metastore.uris", uri)
         .config("spark.hadoop.hive.metastore.use.SSL", "true")
         .config("spark.hadoop.hive.metastore.truststore.path", truststore)
         .config("spark.hadoop.hive.metastore.truststore.password", password)
         .enableHiveSupport().getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
spark.sql("CREATE DATABASE IF NOT EXISTS tls_spark")
spark.sql("CREATE TABLE tls_spark.sales (item STRING, qty INT) PARTITIONED BY (day STRING) STORED AS PARQUET")
spark.sql("INSERT INTO tls_spark.sales PARTITION (day='2024-01-01') VALUES ('a', 1), ('b', 2)")
spark.sql("INSERT INTO tls_spark.sales PARTITION (day='2024-01-02') VALUES ('a', 5)")
spark.sql("ALTER TABLE tls_spark.sales ADD COLUMNS (note STRING)")
result = {
    "databases": sorted(r[0] for r in spark.sql("SHOW DATABASES").collect()),
    "partitions": [r[0] for r in spark.sql("SHOW PARTITIONS tls_spark.sales").collect()],
    "sum": [list(r) for r in spark.sql(
        "SELECT item, SUM(qty) FROM tls_spark.sales WHERE day >= '2024-01-01' GROUP BY item ORDER BY item").collect()],
    "columns": [r[0] for r in spark.sql("DESCRIBE tls_spark.sales").collect()],
}
spark.sql("DROP TABLE tls_spark.sales")
spark.sql("DROP DATABASE tls_spark")
result["after_drop"] = sorted(r[0] for r in spark.sql("SHOW DATABASES").collect())
json.dump(result, open(out, "w"))
spark.stop()
"""


@pytest.mark.slow
@pytest.mark.spark
def test_spark_over_tls_with_a_keytool_truststore(tls_server: Server, certs: Certs, tmp_path: Path) -> None:
    import json

    if shutil.which("java") is None or shutil.which("keytool") is None:
        pytest.skip("Spark needs Java (and keytool for its truststore)")
    pytest.importorskip("pyspark")
    truststore = tmp_path / "truststore.p12"  # keytool's default type in Java 17: PKCS12
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "metastore-ca", "-file", str(certs.ca),
                    "-keystore", str(truststore), "-storepass", PASSWORD], check=True, capture_output=True)
    job, out, log = tmp_path / "job.py", tmp_path / "out.json", tmp_path / "spark.log"
    job.write_text(SPARK_JOB)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    with open(log, "wb") as f:
        r = subprocess.run([sys.executable, str(job), tls_server.uri, str(tls_server.warehouse), str(truststore),
                            PASSWORD, str(out)], stdout=f, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
                           timeout=900)
    assert r.returncode == 0 and out.exists(), log.read_text(errors="replace")[-4000:]
    got = json.loads(out.read_text())
    assert "tls_spark" in got["databases"] and "tls_spark" not in got["after_drop"]
    assert got["partitions"] == ["day=2024-01-01", "day=2024-01-02"]
    assert got["sum"] == [["a", 6], ["b", 2]]
    assert got["columns"][:4] == ["item", "qty", "note", "day"]
    assert tls_server.alive()


# ---- TLS first, then the SASL hook ------------------------------------------------------------------------

def test_the_sasl_hook_negotiates_inside_tls(certs: Certs, tmp_path: Path) -> None:
    """TLS comes first, then the connection's SASL negotiation (server/sasl.py plugs in as `sasl`) over the TLS
    channel, then framed Thrift under the negotiated principal. The negotiator here is a stand-in with a
    one-message exchange (length-prefixed user name, answered b"OK"): the real mechanisms are tested with the
    KDC; this checks the order and the channel, which the Thrift server owns."""
    import json
    import threading

    from metastore import app
    from metastore.core import identity
    from metastore.server.thrift_server import Authenticated
    from metastore.server.tls import server_context
    from metastore.server.workers import front_limits

    def negotiate(recv, send, address):  # type: ignore[no-untyped-def]
        n = int.from_bytes(_exact(recv, 4), "big")
        name = _exact(recv, n).decode()
        send(b"OK")
        return Authenticated(identity.Principal(name, method=identity.KERBEROS, address=address))

    audit = tmp_path / "audit.log"
    settings = app.load_settings(None, {}, db=f"sqlite:///{tmp_path / 'm.db'}", data_dir=str(tmp_path / "data"),
                                 warehouse=str(tmp_path / "wh"), port=0, use_ssl=True,
                                 ssl_keystore=str(certs.keystore), ssl_keystore_password=PASSWORD,
                                 audit_log=str(audit), read_timeout=5)
    security = app.TransportSecurity(tls=server_context(settings), sasl=negotiate)
    server = app.thrift_server(app.build_catalog(settings), settings, front_limits(settings, fronts=1), security)
    port = server.bind()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        tls = certs.context().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                          server_hostname="localhost")
        tls.sendall(len(b"carol").to_bytes(4, "big") + b"carol")
        assert _exact(tls.recv, 2) == b"OK"

        class Channel(TTransport.TTransportBase):  # the negotiated TLS socket as a Thrift transport
            def isOpen(self) -> bool:
                return True

            def read(self, sz: int) -> bytes:
                return tls.recv(sz)

            def write(self, buf: bytes) -> None:
                tls.sendall(buf)

            def flush(self) -> None:
                pass

        api = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(TTransport.TFramedTransport(Channel())))
        assert api.get_database("default").name == "default"
        tls.close()
        # a plain client never reaches the negotiator: its bytes fail the handshake
        with pytest.raises(Exception):  # noqa: B017 - closed: EOF or reset, as thrift reports it
            _plain_call(port)
    finally:
        server.close()
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    calls = [x for x in lines if x["method"] == "get_database"]
    assert calls and calls[0]["principal"] == "carol" and calls[0]["auth"] == "kerberos", lines


def _exact(recv, n: int) -> bytes:  # type: ignore[no-untyped-def]
    out = b""
    while len(out) < n:
        b = recv(n - len(out))
        if not b:
            raise EOFError
        out += b
    return out


# ---- catalogd's cached HMS endpoint -------------------------------------------------------------------------

def _catalogd(metastore: Server, workdir: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int, Path]:
    from conftest import ROOT, free_port

    port, log = free_port(), workdir / "catalogd.log"
    proc = subprocess.Popen([sys.executable, "-m", "metastore.cli", "catalogd", "--metastore",
                             f"thrift://localhost:{metastore.port}", "--port", str(port), "--http-port",
                             str(free_port())], stdout=open(log, "ab"), stderr=subprocess.STDOUT, cwd=ROOT,
                            env=dict(os.environ, **env))
    return proc, port, log


def test_catalogd_endpoint_serves_tls_when_configured(tls_server: Server, certs: Certs, tmp_path: Path) -> None:
    """catalogd's Thrift endpoint with the metastore's TLS settings: TLS only, as the metastore's front (its
    upstream client trusts the metastore through the truststore); a plain client and one that does not trust the
    certificate are refused while the others are served; a keystore it cannot use stops it."""
    from metastore.procs import wait_listening

    env = _tls_env(certs.keystore, METASTORE_SSL_TRUSTSTORE=str(certs.ca))
    proc, port, log = _catalogd(tls_server, tmp_path, env)
    try:
        wait_listening(port, proc, 60, "catalogd", lambda: log.read_text()[-3000:])
        c = TlsClient(port, certs.context())
        try:
            assert c.api.get_database("default").name == "default"  # from the cache
            assert "default" in c.api.get_all_databases()
        finally:
            c.close()
        from thrift.transport.TTransport import TTransportException

        with pytest.raises((TTransportException, ConnectionError, EOFError)):
            _plain_call(port)
        with pytest.raises((TTransportException, ssl.SSLError)):
            TlsClient(port, certs.context(certs.other_ca))
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        raw.sendall(call_bytes("get_database", ThriftHiveMetastore.get_database_args(name="default")))
        assert closed_within(raw, 10) is not None
        raw.close()
        c = TlsClient(port, certs.context())  # still serving
        try:
            assert c.api.get_database("default").name == "default"
        finally:
            c.close()
        assert proc.poll() is None
        assert "(TLS)" in log.read_text()
        assert PASSWORD not in log.read_text()
    finally:
        proc.terminate()
        proc.wait(15)
    # a keystore it cannot use: catalogd does not start (never serves in the clear instead)
    bad = dict(env, METASTORE_SSL_KEYSTORE_PASSWORD="not-the-password")
    (tmp_path / "bad").mkdir()
    proc, port, log = _catalogd(tls_server, tmp_path / "bad", bad)
    assert proc.wait(60) != 0
    out = log.read_text()
    assert "hive.metastore.keystore.password is wrong" in out and "Traceback" not in out, out
