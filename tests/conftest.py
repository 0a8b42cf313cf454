"""Fixtures: real `metastore serve` processes on SQLite, PostgreSQL and MariaDB, and real Thrift clients.

The backends come from METASTORE_TEST_BACKENDS (default: all three). Under CI (CI=true) a backend whose
service is down fails the run instead of being skipped.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from metastore.procs import wait_listening

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))  # the benchmarks' helpers the tests share (common.parquet_storage)
PG_ADMIN = "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres"
MARIA_ADMIN = "mysql+pymysql://root@127.0.0.1:3306/"
ALL_BACKENDS = ("sqlite", "postgres", "mariadb")
BACKENDS = tuple(b for b in os.environ.get("METASTORE_TEST_BACKENDS", ",".join(ALL_BACKENDS)).split(",") if b)


def _unavailable(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is not available, and CI must test every backend")
    pytest.skip(f"{what} is not available")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Database:
    backend: str
    url: str


def make_database(backend: str, tmp: Path) -> Iterator[Database]:
    """A fresh, empty database of the backend; dropped afterwards."""
    name = "ms_" + uuid.uuid4().hex[:12]
    if backend == "sqlite":
        yield Database(backend, f"sqlite:///{tmp / (name + '.db')}")
        return
    admin_url = PG_ADMIN if backend == "postgres" else MARIA_ADMIN
    try:
        admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            if backend == "postgres":
                c.exec_driver_sql(f"CREATE DATABASE {name}")
            else:
                c.exec_driver_sql(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
    except sa.exc.OperationalError as e:
        _unavailable(f"{backend} ({e.__class__.__name__})")
    url = (f"postgresql+psycopg2://postgres@127.0.0.1:5432/{name}" if backend == "postgres"
           else f"mysql+pymysql://root@127.0.0.1:3306/{name}")
    try:
        yield Database(backend, url)
    finally:
        with admin.connect() as c:
            if backend == "postgres":
                c.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            else:
                c.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
        admin.dispose()


class Server:
    """A `metastore serve` process (or another `metastore` command on a store, such as `relay`), with extra
    command-line arguments and environment."""

    def __init__(self, db: Database, workdir: Path, *args: str, port: int | None = None, command: str = "serve",
                 env: dict[str, str] | None = None) -> None:
        self.db = db
        self.workdir = workdir
        self.port = port or free_port()
        self.rest_port = free_port()  # the Iceberg REST catalog's port: not the default, so servers never collide
        self.command = command
        self.args = list(args)
        self.env = env
        self.warehouse = workdir / "warehouse"
        self.log = workdir / f"{command}-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def db_url(self) -> str:
        return self.db.url

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def rest_uri(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    def start(self, timeout: float = 60) -> Server:
        cmd = [sys.executable, "-m", "metastore.cli", self.command, "--db", self.db.url,
               "--data-dir", str(self.workdir / "data")]
        if self.command == "serve":
            cmd += ["--port", str(self.port), "--warehouse", str(self.warehouse)]
            if "--no-rest" not in self.args and "--rest-port" not in self.args:
                cmd += ["--rest-port", str(self.rest_port)]
        cmd += self.args
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT, cwd=self.workdir,
                                     env=dict(os.environ, **(self.env or {})))
        if self.command != "serve":
            return self
        wait_listening(self.port, self.proc, timeout, "metastore", lambda: self.log.read_text()[-3000:])
        return self

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def output(self) -> str:
        return self.log.read_text() if self.log.exists() else ""


@pytest.fixture(params=BACKENDS, scope="module")
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def database(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    yield from make_database(backend, tmp_path_factory.mktemp(backend))


@pytest.fixture
def fresh_database(backend: str, tmp_path: Path) -> Iterator[Database]:
    """A database of the module's backend for this test alone."""
    yield from make_database(backend, tmp_path)


@pytest.fixture(scope="module")
def server(database: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(database, tmp_path_factory.mktemp("server")).start()
    yield srv
    srv.stop()


class Client:
    """The Apache Thrift client of the Hive Metastore (the one PyIceberg ships), on its own socket."""

    def __init__(self, port: int) -> None:
        from hive_metastore import ThriftHiveMetastore
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport

        sock = TSocket.TSocket("127.0.0.1", port)
        sock.setTimeout(60_000)
        self.transport = TTransport.TBufferedTransport(sock)
        self.transport.open()
        self.api = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(self.transport))

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.api, name)

    def close(self) -> None:
        self.transport.close()


@pytest.fixture
def client(server: Server) -> Iterator[Client]:
    c = Client(server.port)
    yield c
    c.close()


def unique(prefix: str = "t") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"
