"""The Thrift server's reading of a connection: a lone connection polls its socket before it blocks (see
thrift_server.POLL_BEFORE_BLOCK_S); calls are answered whether they arrive during the poll, after it, or in
pieces across it, and with several connections open."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hive_metastore import ThriftHiveMetastore

from metastore.app import build_catalog
from metastore.config import Settings
from metastore.server.handler import Handler
from metastore.server.thrift_server import POLL_BEFORE_BLOCK_S, ThriftServer

from test_bad_input import answer, call_bytes

GET_DEFAULT = call_bytes("get_database", ThriftHiveMetastore.get_database_args(name="default"))


@pytest.fixture(params=[POLL_BEFORE_BLOCK_S, 0.0], ids=["polling", "blocking"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ThriftServer]:
    srv = ThriftServer(Handler(build_catalog(Settings(data_dir=str(tmp_path)))), "127.0.0.1", 0)
    srv.poll_s = request.param
    srv.bind()
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.close()


def _connect(srv: ThriftServer) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def _wait_connections(srv: ThriftServer, n: int) -> None:
    deadline = time.monotonic() + 10
    while srv._connections != n:
        assert time.monotonic() < deadline, f"{srv._connections} connections, expected {n}"
        time.sleep(0.001)


def test_lone_connection_answered_during_and_after_the_poll(server: ThriftServer) -> None:
    s = _connect(server)
    try:
        for pause in (0.0, 0.00005, 0.01, 0.0):  # next call within the poll window, then well after it
            time.sleep(pause)
            s.sendall(GET_DEFAULT)
            assert answer(s, False) == ("reply", "get_database")
        _wait_connections(server, 1)
        # a message in pieces: the rest arrives after the poll gave up and the thread blocked
        s.sendall(GET_DEFAULT[:7])
        time.sleep(max(0.01, 20 * server.poll_s))
        s.sendall(GET_DEFAULT[7:])
        assert answer(s, False) == ("reply", "get_database")
    finally:
        s.close()


def test_several_connections_answered_and_counted(server: ThriftServer) -> None:
    socks = [_connect(server) for _ in range(3)]
    try:
        _wait_connections(server, 3)
        for s in socks * 2:
            s.sendall(GET_DEFAULT)
            assert answer(s, False) == ("reply", "get_database")
        socks.pop().close()
        socks.pop().close()
        _wait_connections(server, 1)  # the last one alone again: it polls, and is still answered
        socks[0].sendall(GET_DEFAULT)
        assert answer(socks[0], False) == ("reply", "get_database")
    finally:
        for s in socks:
            s.close()
    _wait_connections(server, 0)


def test_client_gone_while_polled(server: ThriftServer) -> None:
    s = _connect(server)
    s.sendall(GET_DEFAULT)
    assert answer(s, False) == ("reply", "get_database")
    s.close()  # the server sees the end during its poll (or its blocking read) and drops the connection
    _wait_connections(server, 0)
