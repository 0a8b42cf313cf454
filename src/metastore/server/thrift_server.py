"""A threaded Thrift server for the metastore handler, hardened against broken clients.

One thread per connection, as Hive's own server. The transport is detected from the first byte of a
connection: a strict binary message starts with 0x80 (unframed, Hive's default); anything else is read
as a frame length (framed transport). Each message is read whole and checked (types, lengths, nesting,
size limit) before it is decoded and handled. A frame or message larger than the limit, a malformed message
(answered with a TApplicationException when its header named the call), or a client that goes away mid-call
ends that connection only; the server and the store are unaffected.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType, TProcessor
from thriftpy2.transport import TMemoryBuffer, TTransportException
from thriftpy2.transport.buffered import TCyBufferedTransport

from ..thrift import hms

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE = 256 * 1024 * 1024
# After answering, a connection polls its socket this long before it blocks, when it is the process's only one:
# a sequential client's next call (Spark's driver, a DDL script) usually follows within tens of microseconds,
# and a thread blocked in recv costs a wake-up to resume (~40 us a call on this project's 2-core VMs). With
# several connections, polling would take CPU from the other calls (get_table from 8 clients: -36%).
POLL_BEFORE_BLOCK_S = 0.0002


class MessageTooLarge(Exception):
    pass


# Thrift binary protocol: the wire size of the fixed-size types, and the smallest encoding of every type
_FIXED = {2: 1, 3: 1, 4: 8, 6: 2, 8: 4, 10: 8}  # bool, byte, double, i16, i32, i64
_SMALLEST = {**_FIXED, 11: 4, 12: 1, 13: 6, 14: 5, 15: 5}  # string, struct, map, set, list
MAX_NESTING = 64
_SAME_MAX_BYTES = 4096  # nested values remembered to skip their byte-equal repeats (_MessageReader._value)
_SAME_MAX_ENTRIES = 256
MAX_METHOD_NAME = 1024
_VERSION_1 = 0x80010000
_I32 = struct.Struct(">i")


class Malformed(Exception):
    """A message that is not a well-formed Thrift binary call; `name` and `seqid` once the header was read."""

    def __init__(self, message: str, name: str | None = None, seqid: int = 0,
                 kind: int = TApplicationException.PROTOCOL_ERROR) -> None:
        super().__init__(message)
        self.message, self.name, self.seqid, self.kind = message, name, seqid, kind


class _MessageReader:
    """Reads one whole binary-protocol message at a time and checks it before anything decodes it.

    Every type code, length and count is checked as the bytes arrive: an unknown type, a negative length, a
    container nested too deeply, a length or count that cannot fit in the size limit ends the connection at
    once, without waiting for (or allocating) what was announced. thriftpy2's decoder skips unknown types
    silently and reads past the end of a memory buffer without noticing; it only ever sees checked messages.
    """

    def __init__(self, recv: Any, limit: int) -> None:
        self.recv = recv  # recv(n) -> up to n bytes; b"" when the connection ended
        self.limit = limit
        self.buf = bytearray()
        self.name: str | None = None
        self.seqid = 0
        # (depth, type, field id) -> the bytes of the last nested value checked there, within one message
        self._same: dict[int, bytes] = {}

    def _need(self, end: int) -> int:
        """Make the first `end` bytes of the message available; returns `end`."""
        buf = self.buf
        if end > len(buf):
            if end > self.limit:
                raise MessageTooLarge(f"message larger than {self.limit} bytes announced")
            while len(buf) < end:
                chunk = self.recv(min(max(end - len(buf), 65536), 1 << 20))
                if not chunk:
                    raise TTransportException(TTransportException.END_OF_FILE, "client closed the connection")
                buf += chunk
        return end

    def _bad(self, message: str) -> Malformed:
        return Malformed(message, self.name, self.seqid)

    def message(self) -> bytes:
        """The next message (its bytes); the bytes after it stay for the next call."""
        self.name, self.seqid = None, 0
        buf = self.buf
        self._need(4)
        head = _I32.unpack_from(buf, 0)[0]
        if head < 0:
            if head & 0xFFFF0000 != _VERSION_1:
                raise Malformed(f"bad protocol version {head & 0xFFFF0000:#x}")
            mtype, pos = head & 0xFF, 4
            size = _I32.unpack_from(buf, self._need(8) - 4)[0]
            pos = 8
        else:
            size, mtype, pos = head, None, 4
        if not 0 < size <= MAX_METHOD_NAME:
            raise Malformed(f"bad method name length {size}")
        try:
            name = bytes(buf[pos:self._need(pos + size)]).decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed("method name is not UTF-8") from None
        pos += size
        if mtype is None:
            mtype = buf[self._need(pos + 1) - 1]
            pos += 1
        self.seqid = _I32.unpack_from(buf, self._need(pos + 4) - 4)[0]
        self.name = name
        pos += 4
        if mtype not in (1, 4):  # CALL, ONEWAY
            raise Malformed(f"message type {mtype} is not a call", name, self.seqid,
                            TApplicationException.INVALID_MESSAGE_TYPE)
        self._same.clear()
        end = self._value(12, pos, 0)
        data = bytes(buf[:end])
        del buf[:end]
        return data

    def _value(self, t: int, pos: int, depth: int) -> int:
        """Check one value of type `t` at `pos`; returns where it ends. (Strings and fixed-size values in
        structs, the bulk of any message, are checked inline: this runs for every byte a client sends.)"""
        size = _FIXED.get(t)
        if size is not None:
            return self._need(pos + size)
        buf, need, unpack = self.buf, self._need, _I32.unpack_from
        if t == 11:
            n = unpack(buf, need(pos + 4) - 4)[0]
            if n < 0:
                raise self._bad(f"negative string length {n}")
            return need(pos + 4 + n)
        if depth >= MAX_NESTING:
            raise self._bad(f"values nested deeper than {MAX_NESTING}")
        if t == 12:
            have, same = len(buf), self._same
            while True:
                if pos >= have:
                    need(pos + 1)
                    have = len(buf)
                ft = buf[pos]
                if ft == 0:
                    return pos + 1
                pos += 3
                if ft == 11:
                    if pos + 4 > have:
                        need(pos + 4)
                        have = len(buf)
                    n = unpack(buf, pos)[0]
                    if n < 0:
                        raise self._bad(f"negative string length {n}")
                    pos += 4 + n
                elif ft in _FIXED:
                    pos += _FIXED[ft]
                elif ft in _SMALLEST:
                    if pos > have:
                        need(pos)
                        have = len(buf)
                    # a nested value whose bytes equal the last one checked for this field at this depth is
                    # valid and ends where that one did (the check depends on nothing else): a batch's
                    # partitions carry the same columns and serde, and comparing bytes is one memcmp
                    key = (depth << 24) | (ft << 16) | (buf[pos - 2] << 8) | buf[pos - 1]
                    seen = same.get(key)
                    if seen is not None and buf.startswith(seen, pos):
                        pos += len(seen)
                        continue
                    start = pos
                    pos = self._value(ft, pos, depth + 1)
                    have = len(buf)
                    if pos - start <= _SAME_MAX_BYTES and (key in same or len(same) < _SAME_MAX_ENTRIES):
                        same[key] = bytes(buf[start:pos])
                    continue
                else:
                    raise self._bad(f"invalid field type {ft}")
                if pos > have:
                    need(pos)
                    have = len(buf)
        if t in (14, 15):
            et = buf[need(pos + 5) - 5]
            n = unpack(buf, pos + 1)[0]
            return self._items((et,), n, pos + 5, depth)
        if t == 13:
            kt, vt = buf[need(pos + 6) - 6], buf[pos + 1]
            n = unpack(buf, pos + 2)[0]
            return self._items((kt, vt), n, pos + 6, depth)
        raise self._bad(f"invalid type {t}")

    def _items(self, types: tuple[int, ...], n: int, pos: int, depth: int) -> int:
        if n < 0:
            raise self._bad(f"negative container size {n}")
        if n == 0:
            return pos
        for t in types:
            if t not in _SMALLEST:
                raise self._bad(f"invalid element type {t}")
        if pos + n * sum(_SMALLEST[t] for t in types) > self.limit:
            raise MessageTooLarge(f"container of {n} elements announced (limit {self.limit} bytes)")
        if all(t in _FIXED for t in types):
            return self._need(pos + n * sum(_FIXED[t] for t in types))
        if types == (11,) or types == (11, 11):  # lists of strings, maps of strings to strings
            buf, need, unpack = self.buf, self._need, _I32.unpack_from
            have = len(buf)
            for _ in range(n * len(types)):
                if pos + 4 > have:
                    need(pos + 4)
                    have = len(buf)
                k = unpack(buf, pos)[0]
                if k < 0:
                    raise self._bad(f"negative string length {k}")
                pos += 4 + k
                if pos > have:
                    need(pos)
                    have = len(buf)
            return pos
        for _ in range(n):
            for t in types:
                pos = self._value(t, pos, depth + 1)
        return pos


class _SocketWriter:
    """The socket as the write side of a thriftpy2 transport."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def is_open(self) -> bool:
        return True

    def read(self, n: int) -> bytes:
        raise TTransportException(TTransportException.UNKNOWN, "write-only transport")

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class ThriftServer:
    def __init__(self, handler: Any, host: str = "127.0.0.1", port: int = 9083,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE,
                 fast: dict[str, Callable[[Any], bytes | None]] | None = None,
                 connection_scope: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
        self.processor = TProcessor(hms.ThriftHiveMetastore, handler)
        # entered by each connection's thread for the connection's life (Catalog.connection_scope)
        self.connection_scope = connection_scope or nullcontext
        # methods that may answer with ready-made result bytes (see serialized.py); None falls through
        self.fast = dict(fast or {})
        self.host = host
        self.port = port
        self.max_message = max_message_bytes
        self._sock: socket.socket | None = None
        self._closed = threading.Event()
        self.poll_s = POLL_BEFORE_BLOCK_S
        self._connections = 0  # open in this process (see _recv)
        self._connections_lock = threading.Lock()

    def bind(self) -> int:
        """Bind and listen; returns the port (useful with port 0)."""
        s = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.host, self.port))
        s.listen(256)
        self._sock = s
        self.port = s.getsockname()[1]
        return self.port

    def adopt(self, sock: socket.socket) -> None:
        """Serve on a socket that is already listening (shared by the worker processes of one port)."""
        self._sock = sock
        self.port = sock.getsockname()[1]

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
        with self._connections_lock:
            self._connections += 1
        try:
            first = conn.recv(1, socket.MSG_PEEK)
            if not first:
                return
            with self.connection_scope():
                if first[0] == 0x80:
                    self._serve_unframed(conn)
                else:
                    self._serve_framed(conn)
        except (TTransportException, ConnectionError, MessageTooLarge, OSError, EOFError) as e:
            log.debug("connection %s closed: %s", addr, e)
        except Malformed as e:
            log.info("connection %s closed after a malformed message: %s", addr, e.message)
        except Exception as e:  # a failure while decoding a checked message: drop this connection, keep the server
            log.info("connection %s closed after a malformed message: %s: %s", addr, type(e).__name__, e)
        finally:
            with self._connections_lock:
                self._connections -= 1
            try:
                conn.close()
            except OSError:
                pass

    def _recv(self, conn: socket.socket) -> Callable[[int], bytes]:
        """conn.recv, polling first while this is the process's only connection (POLL_BEFORE_BLOCK_S)."""
        poll_s = self.poll_s
        if poll_s <= 0:
            return conn.recv
        nonblocking, clock = socket.MSG_DONTWAIT, time.perf_counter

        def recv(n: int) -> bytes:
            if self._connections == 1:
                deadline = clock() + poll_s
                while True:
                    try:
                        return conn.recv(n, nonblocking)
                    except BlockingIOError:
                        pass
                    if self._connections != 1 or clock() > deadline:
                        break
            return conn.recv(n)

        return recv

    def _serve_unframed(self, conn: socket.socket) -> None:
        reader = _MessageReader(self._recv(conn), self.max_message)
        out = TCyBinaryProtocol(TCyBufferedTransport(_SocketWriter(conn)), strict_write=True)
        while True:
            self._process(reader, reader.message, out, out.trans.flush)

    def _serve_framed(self, conn: socket.socket) -> None:
        left = 0

        def recv(n: int) -> bytes:  # the bytes of the current frame only
            nonlocal left
            if left <= 0:
                raise reader._bad("the message is longer than its frame")
            b = conn.recv(min(n, left))
            left -= len(b)
            return b

        def message() -> bytes:
            nonlocal left
            (size,) = struct.unpack("!i", _recv_exact(conn, 4))
            if size <= 0 or size > self.max_message:
                raise MessageTooLarge(f"frame of {size} bytes announced (limit {self.max_message})")
            left = size
            data = reader.message()
            if left or reader.buf:
                raise reader._bad(f"{left + len(reader.buf)} bytes after the message in its frame")
            return data

        def send() -> None:
            data = out_buf.getvalue()
            out_buf.clean()
            if data:  # nothing for a oneway call
                conn.sendall(struct.pack("!i", len(data)) + data)

        reader = _MessageReader(recv, self.max_message)
        out_buf = TMemoryBuffer()
        out = TCyBinaryProtocol(out_buf, strict_write=True)
        while True:
            self._process(reader, message, out, send)

    def _process(self, reader: _MessageReader, message: Any, out: Any, send: Any) -> None:
        """Read one checked message and answer it; a broken message gets an answer (when it named its call)
        and then ends the connection, since what follows it cannot be told apart."""
        try:
            data = message()
        except (Malformed, MessageTooLarge) as e:
            if reader.name is not None:
                kind = e.kind if isinstance(e, Malformed) else TApplicationException.PROTOCOL_ERROR
                text = e.message if isinstance(e, Malformed) else str(e)
                try:
                    self.processor.send_exception(out, reader.name, TApplicationException(kind, text),
                                                  reader.seqid)
                    send()
                except (OSError, TTransportException):
                    pass
            raise
        fast = self.fast.get(reader.name) if reader.name is not None else None
        if fast is not None:
            body = self._fast(fast, reader.name, data)
            if body is not None:
                out.write_message_begin(reader.name, TMessageType.REPLY, reader.seqid)
                out.trans.write(body)
                out.write_message_end()
                send()
                return
        self.processor.process(TCyBinaryProtocol(TMemoryBuffer(data), strict_read=False), out)
        send()

    @staticmethod
    def _fast(fn: Callable[[Any], bytes | None], name: str, data: bytes) -> bytes | None:
        iprot = TCyBinaryProtocol(TMemoryBuffer(data), strict_read=False)
        iprot.read_message_begin()
        args = getattr(hms.ThriftHiveMetastore, name + "_args")()
        args.read(iprot)
        try:
            return fn(args)
        except Exception:  # the regular path answers, and reports the failure properly
            log.exception("fast path of %s failed", name)
            return None


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        b = conn.recv(min(n - got, 1 << 20))
        if not b:
            raise TTransportException(TTransportException.END_OF_FILE, "client closed the connection")
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)
