"""A threaded Thrift server for the metastore handler, hardened against broken clients.

One thread per connection, as Hive's own server. The transport is detected from the first byte of a
connection: a strict binary message starts with 0x80 (unframed, Hive's default); anything else is read
as a frame length (framed transport). A frame or message larger than the limit, a malformed message, or a
client that goes away mid-call ends that connection only; the server and the store are unaffected.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
from typing import Any

from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TProcessor
from thriftpy2.transport import TMemoryBuffer, TTransportException
from thriftpy2.transport.buffered import TCyBufferedTransport

from ..thrift import hms

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE = 256 * 1024 * 1024


class MessageTooLarge(Exception):
    pass


class _SocketReader:
    """The socket as a thriftpy2 transport, counting bytes so that one message cannot exceed a budget."""

    def __init__(self, sock: socket.socket, budget: int) -> None:
        self.sock = sock
        self.budget = budget
        self.used = 0
        self.pending = b""

    def reset(self) -> None:
        self.used = 0

    def is_open(self) -> bool:
        return True

    def read(self, n: int) -> bytes:
        if self.pending:
            out, self.pending = self.pending[:n], self.pending[n:]
            return out
        if n <= 0:
            raise TTransportException(TTransportException.UNKNOWN, "negative read")
        self.used += n
        if self.used > self.budget:
            raise MessageTooLarge(f"message larger than {self.budget} bytes")
        data = self.sock.recv(min(n, 1 << 20))
        if not data:
            raise TTransportException(TTransportException.END_OF_FILE, "client closed the connection")
        return data

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class ThriftServer:
    def __init__(self, handler: Any, host: str = "127.0.0.1", port: int = 9083,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE) -> None:
        self.processor = TProcessor(hms.ThriftHiveMetastore, handler)
        self.host = host
        self.port = port
        self.max_message = max_message_bytes
        self._sock: socket.socket | None = None
        self._closed = threading.Event()

    def bind(self) -> int:
        """Bind and listen; returns the port (useful with port 0)."""
        s = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.host, self.port))
        s.listen(256)
        self._sock = s
        self.port = s.getsockname()[1]
        return self.port

    def serve_forever(self) -> None:
        if self._sock is None:
            self.bind()
        assert self._sock is not None
        while not self._closed.is_set():
            try:
                conn, addr = self._sock.accept()
            except OSError:
                if self._closed.is_set():
                    return
                raise
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            threading.Thread(target=self._serve_connection, args=(conn, addr), daemon=True,
                             name=f"thrift-{addr[1] if isinstance(addr, tuple) else addr}").start()

    def close(self) -> None:
        self._closed.set()
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()

    def _serve_connection(self, conn: socket.socket, addr: Any) -> None:
        try:
            first = conn.recv(1, socket.MSG_PEEK)
            if not first:
                return
            if first[0] == 0x80:
                self._serve_unframed(conn)
            else:
                self._serve_framed(conn)
        except (TTransportException, ConnectionError, MessageTooLarge, OSError, EOFError) as e:
            log.debug("connection %s closed: %s", addr, e)
        except Exception as e:  # a malformed message: drop this connection, keep the server
            log.info("connection %s closed after a malformed message: %s: %s", addr, type(e).__name__, e)
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _serve_unframed(self, conn: socket.socket) -> None:
        reader = _SocketReader(conn, self.max_message)
        trans = TCyBufferedTransport(reader)
        proto = TCyBinaryProtocol(trans, strict_read=True, strict_write=True)
        while True:
            reader.reset()
            self._process(proto, proto)

    def _serve_framed(self, conn: socket.socket) -> None:
        while True:
            header = _recv_exact(conn, 4)
            (size,) = struct.unpack("!i", header)
            if size <= 0 or size > self.max_message:
                raise MessageTooLarge(f"frame of {size} bytes announced (limit {self.max_message})")
            frame = _recv_exact(conn, size)
            inp = TCyBinaryProtocol(TMemoryBuffer(frame), strict_read=False)
            out_buf = TMemoryBuffer()
            out = TCyBinaryProtocol(out_buf)
            self._process(inp, out)
            data = out_buf.getvalue()
            conn.sendall(struct.pack("!i", len(data)) + data)

    def _process(self, iprot: Any, oprot: Any) -> None:
        try:
            self.processor.process(iprot, oprot)
        except TApplicationException:
            raise
        except (TTransportException, ConnectionError, MessageTooLarge, OSError):
            raise


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        b = conn.recv(min(n - got, 1 << 20))
        if not b:
            raise TTransportException(TTransportException.END_OF_FILE, "client closed the connection")
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)
