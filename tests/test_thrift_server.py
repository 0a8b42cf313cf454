"""The Thrift server's reading of a connection: a lone connection polls its socket before it blocks (see
thrift_server.POLL_BEFORE_BLOCK_S); calls are answered whether they arrive during the poll, after it, or in
pieces across it, and with several connections open."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hive_metastore import ThriftHiveMetastore
from thriftpy2.transport import TTransportException

from metastore.app import build_catalog
from metastore.config import Settings
from metastore.server.handler import Handler
from metastore.server.thrift_server import MAX_NESTING, POLL_BEFORE_BLOCK_S, Malformed, ThriftServer, _MessageReader

from test_bad_input import answer, call_bytes

GET_DEFAULT = call_bytes("get_database", ThriftHiveMetastore.get_database_args(name="default"))
# a strict get_database call header; the arguments struct follows
HEADER_NO_FIELD = struct.pack("!I", 0x80010001) + struct.pack("!i", 12) + b"get_database" + struct.pack("!i", 1)


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
    while srv.slots.open != n:
        assert time.monotonic() < deadline, f"{srv.slots.open} connections, expected {n}"
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


# ---- the message check: nested values equal to one checked before are skipped (_MessageReader._same)

def _read_one(data: bytes) -> bytes:
    rest = [data]

    def recv(n: int) -> bytes:
        chunk, rest[0] = rest[0][:n], rest[0][n:]
        return chunk
    return _MessageReader(recv, 1 << 20).message()


def _chain(n: int, inner: bytes = b"\x00") -> bytes:
    """n structs, each holding the next as its field 1 (type 12), around `inner` (a struct's remaining bytes)."""
    return b"\x0c\x00\x01" * n + inner + b"\x00" * n


def test_a_repeated_nested_value_is_still_checked_at_its_own_depth() -> None:
    x = _chain(30)  # valid near the top: 31 levels
    ok = HEADER_NO_FIELD + b"\x0c\x00\x01" + x + b"\x0c\x00\x02" + x + b"\x00"
    assert _read_one(ok) == ok  # the repeat is accepted (and skipped)
    # the same bytes again, 40 levels further down: 71 levels, more than MAX_NESTING
    deep = HEADER_NO_FIELD + b"\x0c\x00\x01" + x + b"\x0c\x00\x02" + _chain(40, x + b"\x00") + b"\x00"
    assert 30 + 40 > MAX_NESTING > 31
    with pytest.raises(Malformed, match="nested deeper"):
        _read_one(deep)


def test_a_repeat_cut_short_is_not_taken_for_the_whole() -> None:
    x = _chain(3, b"\x0b\x00\x02" + struct.pack("!i", 5) + b"hello\x00")
    whole = HEADER_NO_FIELD + b"\x0c\x00\x01" + x + b"\x0c\x00\x02" + x + b"\x00"
    with pytest.raises(TTransportException):
        _read_one(whole[:-8])  # the second copy ends early: the reader waits for the rest, which never comes
    changed = whole.replace(b"hello", b"hell\xff", 1)[:len(whole)]
    assert _read_one(changed) == changed
    bad = whole[:-len(x) - 1] + x.replace(struct.pack("!i", 5), struct.pack("!i", -5)) + b"\x00"
    with pytest.raises(Malformed, match="negative string length"):
        _read_one(bad)
