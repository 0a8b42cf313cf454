"""A threaded Thrift server for the metastore handler, hardened against broken clients.

One thread per connection, as Hive's own server. The transport is detected from the first byte of a
connection: a strict binary message starts with 0x80 (unframed, Hive's default); anything else is read
as a frame length (framed transport). Each message is read whole and checked (types, lengths, nesting,
size limit, what decoding it would make) before it is decoded and handled. A frame or message larger than the
limit, a malformed message (answered with a TApplicationException when its header named the call), or a
client that goes away mid-call ends that connection only; the server and the store are unaffected.

Bounds (FrontLimits): at most max_connections connections (one more is accepted and closed at once); a
connection with no call for idle_timeout is closed (its first call is due within read_timeout of the accept),
and a call must arrive whole within read_timeout of its first byte (a client trickling bytes holds its thread
no longer); a client that takes no bytes of its answer for idle_timeout is dropped. The work on a call has no
timeout. The accept loop outlives every accept error.

With TLS (hive.metastore.use.SSL: server/tls.py's context), each connection's handshake comes first, in the
connection's thread and within read_timeout of the accept; then SASL when configured, then the calls, all
through the TLS channel under the same bounds (_TlsConnection). A client that does not complete the handshake
(a plain client, one that refuses the certificate) is closed; no other connection notices.
"""

from __future__ import annotations

import logging
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, TypeAlias

from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType, TPayload, TProcessor
from thriftpy2.transport import TMemoryBuffer, TTransportException
from thriftpy2.transport.buffered import TCyBufferedTransport

from ..core import identity
from ..thrift import hms
from .slots import ConnectionSlots
from .workers import AcceptErrors, Burst, FrontLimits, hung_up, listen

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE = 100 * 1024 * 1024  # Hive's default (hive.metastore.server.max.message.size)
# What decoding makes of a message is bounded with its bytes: each struct counts STRUCT_COST bytes more and each
# container element ELEMENT_COST more against the limit. An empty struct is 1 byte on the wire and ~180-300 bytes
# decoded (a thriftpy2 object with every field; an empty Partition measured 176), so without them a message
# within the limit could decode to 200 times its size. A partition as bench/run.py makes them costs 3.2 KiB
# (536 bytes on the wire): about 32,000 of them fit one add_partitions call at the default 100 MiB.
STRUCT_COST = 256
ELEMENT_COST = 32
# After answering, a connection polls its socket this long before it blocks, when it is the process's only one:
# a sequential client's next call (Spark's driver, a DDL script) usually follows within tens of microseconds,
# and a thread blocked in recv costs a wake-up to resume (~40 us a call on this project's 2-core VMs). With
# several connections, polling would take CPU from the other calls (get_table from 8 clients: -36%).
POLL_BEFORE_BLOCK_S = 0.0002


class MessageTooLarge(Exception):
    pass


class ReadTimeout(Exception):
    """A connection idle too long, or a call that did not arrive whole in time."""


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

    def __init__(self, recv: Callable[[int], bytes], limit: int) -> None:
        self.recv = recv  # recv(n) -> up to n bytes; b"" when the connection ended
        self.limit = limit
        self.buf = bytearray()
        self.name: str | None = None
        self.seqid = 0
        self.cost = 0  # decoded overhead of the message so far: STRUCT_COST, ELEMENT_COST
        # (depth, type, field id) -> the bytes of the last nested value checked there, and its cost
        self._same: dict[int, tuple[bytes, int]] = {}

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
        self.cost = 0
        end = self._value(12, pos, 0)
        # checked once, here: the bytes held meanwhile are bounded by the limit; the decoding comes after
        if end + self.cost > self.limit:
            raise MessageTooLarge(f"message of {end} bytes would decode to more than its limit of {self.limit} "
                                  f"bytes (~{self.cost} bytes of objects)")
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
            self.cost += STRUCT_COST
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
                    if seen is not None and buf.startswith(seen[0], pos):
                        pos += len(seen[0])
                        self.cost += seen[1]
                        continue
                    start, cost = pos, self.cost
                    pos = self._value(ft, pos, depth + 1)
                    have = len(buf)
                    if pos - start <= _SAME_MAX_BYTES and (key in same or len(same) < _SAME_MAX_ENTRIES):
                        same[key] = (bytes(buf[start:pos]), self.cost - cost)
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
        self.cost += n * len(types) * ELEMENT_COST
        if all(t in _FIXED for t in types):
            return self._need(pos + n * sum(_FIXED[t] for t in types))
        if types == (11,) or types == (11, 11):  # lists of strings, maps of strings to strings
            buf, need, unpack = self.buf, self._need, _I32.unpack_from
            for _ in range(n * len(types)):
                k = unpack(buf, need(pos + 4) - 4)[0]
                if k < 0:
                    raise self._bad(f"negative string length {k}")
                pos = need(pos + 4 + k)
            return pos
        for _ in range(n):
            for t in types:
                pos = self._value(t, pos, depth + 1)
        return pos


class _SocketWriter:
    """The connection's sendall as the write side of a thriftpy2 transport."""

    def __init__(self, sendall: Callable[[bytes], None]) -> None:
        self.sendall = sendall

    def is_open(self) -> bool:
        return True

    def read(self, n: int) -> bytes:
        raise TTransportException(TTransportException.UNKNOWN, "write-only transport")

    def write(self, data: bytes) -> None:
        self.sendall(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


_TIMEVAL = struct.Struct("@ll")


def _timeval(seconds: float) -> bytes:
    seconds = max(seconds, 0.001)
    return _TIMEVAL.pack(int(seconds), int((seconds - int(seconds)) * 1_000_000))


class _Connection:
    """A connection's socket with its two clocks, kept by the socket itself (SO_RCVTIMEO on a blocking socket:
    a call that arrives in one read costs no more than before). Between calls a read waits at most
    idle_timeout; from a call's first byte on, each read waits only what is left of read_timeout."""

    def __init__(self, server: ThriftServer, conn: socket.socket) -> None:
        self.server, self.conn = server, conn
        self.sendall: Callable[[bytes], None] = conn.sendall
        limits = server.limits
        self.idle, self.read_s = limits.idle_timeout, limits.read_timeout
        # by which the call being read must have arrived; 0 between calls. A new connection's first call is
        # due within read_timeout of the accept: one that never sends a byte would hold its slot idle_timeout
        self.deadline = time.monotonic() + self.read_s
        self.first = True
        self.waiting = min(self.idle, self.read_s)  # the socket's receive timeout now
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(self.waiting))
        # a client that takes no bytes of its answer for this long is gone
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(self.idle))

    def next_call(self, started: bool) -> None:
        """Between calls; `started`: bytes of the next call are already read (a client that pipelines)."""
        if self.first:  # the first call keeps the deadline it got at the accept
            self.first = False
            return
        self.deadline = time.monotonic() + self.read_s if started else 0.0

    def recv(self, n: int) -> bytes:
        if self.deadline:
            return self._recv_within(n)
        data = self._recv_idle(n)
        self.deadline = time.monotonic() + self.read_s
        return data

    def _recv_idle(self, n: int) -> bytes:
        """The first bytes of the next call: polled for POLL_BEFORE_BLOCK_S while this is the process's only
        connection (see there), then waited for up to idle_timeout."""
        conn, server = self.conn, self.server
        if self.waiting != self.idle:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(self.idle))
            self.waiting = self.idle
        poll_s = server.poll_s
        if poll_s > 0 and server.slots.open == 1:
            clock, nonblocking = time.perf_counter, socket.MSG_DONTWAIT
            deadline = clock() + poll_s
            while True:
                try:
                    return conn.recv(n, nonblocking)
                except BlockingIOError:
                    pass
                if server.slots.open != 1 or clock() > deadline:
                    break
        try:
            return conn.recv(n)
        except BlockingIOError:  # SO_RCVTIMEO ran out
            raise ReadTimeout(f"no call for {self.idle:g} s (idle_timeout)") from None

    def _recv_within(self, n: int) -> bytes:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ReadTimeout(f"a call not received whole within {self.read_s:g} s (read_timeout)")
        self.conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(left))
        self.waiting = left
        try:
            return self.conn.recv(n)
        except BlockingIOError:
            raise ReadTimeout(f"a call not received whole within {self.read_s:g} s (read_timeout)") from None

    def first_byte(self) -> int | None:
        """The connection's first byte, left for the first call (None: the client closed without a byte)."""
        try:
            first = self.conn.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            raise ReadTimeout(f"no first call within {self.read_s:g} s (read_timeout)") from None
        return first[0] if first else None


class _TlsConnection(_Connection):
    """A connection served over TLS, with the same clocks as a plain one: OpenSSL works on memory (an SSLObject
    on two MemoryBIOs) and the socket is read and written as a plain connection's (SO_RCVTIMEO, the poll
    before blocking, SO_SNDTIMEO), so the handshake must be done within read_timeout of the accept, a call
    arrive whole within read_timeout of its first byte however a client trickles its records (OpenSSL never
    waits on the socket itself), and between calls the wait is idle_timeout. Decrypted bytes OpenSSL still
    holds are read before the socket is: no MSG_PEEK, no flags reach TLS. (An SSLSocket retries OpenSSL's
    reads inside one call, where SO_RCVTIMEO restarts with every byte a client trickles, so it would need
    Python's timeouts instead: a non-blocking descriptor, other clocks than the plain path's. bench/tls.py
    measured both ways at the same server CPU per call.)"""

    def __init__(self, server: ThriftServer, conn: socket.socket, context: ssl.SSLContext) -> None:
        super().__init__(server, conn)
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_side=True)
        self.send_raw = conn.sendall
        self.sendall = self._sendall
        self.pushed = b""  # bytes read to tell the transport, given back to the first call

    def _more(self) -> None:
        """Send what OpenSSL has to say, then give it the next bytes from the socket (the connection's clocks);
        the client closing is END_OF_FILE."""
        out = self.outgoing.read()
        if out:
            self.send_raw(out)
        data = _Connection.recv(self, 65536)
        if not data:
            raise TTransportException(TTransportException.END_OF_FILE, "client closed the connection")
        self.incoming.write(data)

    def handshake(self) -> None:
        """The TLS handshake, within read_timeout of the accept; a client that is not speaking TLS, or does not
        accept the certificate, fails here (ssl.SSLError; OpenSSL's alert is sent to it first)."""
        try:
            while True:
                try:
                    self.tls.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    self._more()
        except ssl.SSLError:
            try:
                self.send_raw(self.outgoing.read())
            except OSError:
                pass
            raise
        out = self.outgoing.read()
        if out:
            self.send_raw(out)

    def recv(self, n: int) -> bytes:
        if self.pushed:
            data, self.pushed = self.pushed[:n], self.pushed[n:]
            return data
        while True:
            try:
                return self.tls.read(n)
            except ssl.SSLWantReadError:
                try:
                    self._more()
                except TTransportException:
                    return b""
            except ssl.SSLZeroReturnError:  # the client's close_notify
                return b""

    def _sendall(self, data: bytes) -> None:
        self.tls.write(data)
        self.send_raw(self.outgoing.read())

    def first_byte(self) -> int | None:
        first = self.recv(65536)  # within the first call's deadline; given back to it
        self.pushed = first
        return first[0] if first else None


@dataclass
class Authenticated:
    """What a connection's SASL negotiation established: who it is, and, for the integrity and privacy
    protections, how each frame's payload is wrapped and unwrapped (None: authentication only)."""

    principal: identity.Principal
    wrap: Callable[[bytes], bytes] | None = None
    unwrap: Callable[[bytes], bytes] | None = None


# a SASL server (server/sasl.py): negotiates on a new connection through recv(n) / send(bytes) and returns who it
# is, or raises (the connection is then closed); the third argument is the client's address, for the log
Negotiate: TypeAlias = Callable[[Callable[[int], bytes], Callable[[bytes], None], str], Authenticated]


# a method answered from ready-made bytes (server/serialized.py): its decoded `<method>_args` struct -> the bytes
# of its result struct, or None to let the handler answer
FastPath: TypeAlias = Callable[[TPayload], bytes | None]


class _Processor(TProcessor):
    """thriftpy2's processor, with the text Java's servers give a call of a method they do not have
    ("Invalid method name: 'x'"; thriftpy2 sends none): Hive's clients show it."""

    def process_in(self, iprot: Any) -> tuple[str, int, Any, Callable[[], Any] | None]:
        api, seqid, result, call = super().process_in(iprot)
        if isinstance(result, TApplicationException) and result.type == TApplicationException.UNKNOWN_METHOD:
            result = TApplicationException(TApplicationException.UNKNOWN_METHOD,
                                           f"Invalid method name: '{api[:256]}'")
        return api, seqid, result, call


class ThriftServer:
    def __init__(self, handler: object, host: str = "127.0.0.1", port: int = 9083,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE,
                 fast: dict[str, FastPath] | None = None,
                 connection_scope: Callable[[], AbstractContextManager[object]] | None = None,
                 limits: FrontLimits | None = None, tls: ssl.SSLContext | None = None,
                 sasl: Negotiate | None = None) -> None:
        self.processor = _Processor(hms.ThriftHiveMetastore, handler)
        # entered by each connection's thread for the connection's life (Catalog.connection_scope)
        self.connection_scope = connection_scope or nullcontext
        # methods that may answer with ready-made result bytes (see serialized.py); None falls through
        self.fast = dict(fast or {})
        self.host = host
        self.port = port
        self.max_message = max_message_bytes
        self.limits = limits or FrontLimits()
        self._sock: socket.socket | None = None
        self._closed = threading.Event()
        self.poll_s = POLL_BEFORE_BLOCK_S
        self._refused = Burst("thrift: connection refused")
        # open in this process: counted when accepted, until their thread ends
        self.slots = ConnectionSlots(self.limits, self._refused)
        # transport security (README "Security"): every connection first completes TLS (server/tls.py), then
        # SASL (server/sasl.py) when configured; neither configured: the client's claimed name (set_ugi)
        self.tls = tls
        self.sasl = sasl

    def bind(self) -> int:
        """Bind and listen; returns the port (useful with port 0)."""
        self.adopt(listen(self.host, self.port))
        return self.port

    def adopt(self, sock: socket.socket) -> None:
        """Serve on a socket that is already listening (shared by the worker processes of one port)."""
        self._sock = sock
        self.port = sock.getsockname()[1]

    def serve_forever(self) -> None:
        """Accept connections until close(); no accept error stops it (see AcceptErrors)."""
        if self._sock is None:
            self.bind()
        assert self._sock is not None
        errors = AcceptErrors(f"thrift port {self.port}")
        while not self._closed.is_set():
            try:
                conn, addr = self._sock.accept()
            except OSError as e:
                if self._closed.is_set():
                    return
                errors.failed(e)
                continue
            try:
                self._start(conn, addr)
            except Exception as e:  # no thread to be had, or the connection already broken: drop it, not the loop
                self._refused.note(f"{type(e).__name__}: {e}")
                time.sleep(0.02)

    def _start(self, conn: socket.socket, addr: object) -> None:
        if hung_up(conn):
            conn.close()
            return
        if not self.slots.take():
            conn.close()
            return
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            threading.Thread(target=self._serve_connection, args=(conn, addr), daemon=True,
                             name=f"thrift-{addr[1] if isinstance(addr, tuple) else addr}").start()
        except BaseException:
            self.slots.give_back()
            conn.close()
            raise

    def close(self) -> None:
        self._closed.set()
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()

    def _serve_connection(self, conn: socket.socket, addr: object) -> None:
        address = _address(addr)
        try:
            c: _Connection
            if self.tls is not None:
                tls = _TlsConnection(self, conn, self.tls)
                c = tls
                tls.handshake()
            else:
                c = _Connection(self, conn)
            if self.sasl is not None:  # over TLS when both are configured
                auth = self.sasl(c.recv, c.sendall, address)
                with identity.acting_as(auth.principal):
                    self._serve_framed(c, auth)
                return
            identity.set_principal(identity.Principal("anonymous", address=address))
            first = c.first_byte()
            if first is None:
                return
            if first == 0x80:
                self._serve_unframed(c)
            else:
                self._serve_framed(c)
        except ReadTimeout as e:
            log.info("connection %s closed: %s", addr, e)
        except MessageTooLarge as e:
            log.warning("connection %s closed: %s", addr, e)
        except ssl.SSLEOFError as e:  # gone during the handshake (a port check): nothing to tell
            log.debug("connection %s closed: TLS: %s", addr, _tls_reason(e))
        except ssl.SSLError as e:  # not TLS, a certificate the client refused, a broken record: this one only
            log.info("connection %s closed: TLS: %s", addr, _tls_reason(e))
        except (TTransportException, ConnectionError, OSError, EOFError) as e:
            log.debug("connection %s closed: %s", addr, e)
        except Malformed as e:
            log.info("connection %s closed after a malformed message: %s", addr, e.message)
        except Exception as e:  # a failure while decoding a checked message: drop this connection, keep the server
            log.info("connection %s closed after a malformed message: %s: %s", addr, type(e).__name__, e)
        finally:
            self.slots.give_back()
            try:
                conn.close()
            except OSError:
                pass

    def _serve_unframed(self, c: _Connection) -> None:
        reader = _MessageReader(c.recv, self.max_message)
        out = TCyBinaryProtocol(TCyBufferedTransport(_SocketWriter(c.sendall)), strict_write=True)

        def message() -> bytes:
            c.next_call(bool(reader.buf))
            return reader.message()

        self._serve_calls(reader, message, out, out.trans.flush)

    def _serve_framed(self, c: _Connection, auth: Authenticated | None = None) -> None:
        """Framed transport; with a SASL layer that protects each frame (`auth`), its payloads are unwrapped
        whole before they are checked, and the answers wrapped."""
        left = 0
        wrap, unwrap = (auth.wrap, auth.unwrap) if auth is not None else (None, None)
        plain, at = memoryview(b""), 0  # an unwrapped frame's payload, read from in place of the socket

        def recv(n: int) -> bytes:  # the bytes of the current frame only
            nonlocal left, at
            if left <= 0:
                raise reader._bad("the message is longer than its frame")
            if unwrap is not None:
                b = bytes(plain[at:at + n])  # no copy of the rest of the frame per read
                at += len(b)
            else:
                b = c.recv(min(n, left))
            left -= len(b)
            return b

        def message() -> bytes:
            nonlocal left, plain, at
            c.next_call(False)
            (size,) = struct.unpack("!i", recv_exact(c.recv, 4))
            if size <= 0 or size > self.max_message:
                raise MessageTooLarge(f"frame of {size} bytes announced (limit {self.max_message})")
            if unwrap is not None:
                plain, at = memoryview(unwrap(recv_exact(c.recv, size))), 0
                size = len(plain)
            left = size
            data = reader.message()
            if left or reader.buf:
                raise reader._bad(f"{left + len(reader.buf)} bytes after the message in its frame")
            return data

        def send() -> None:
            data = out_buf.getvalue()
            out_buf.clean()  # type: ignore[attr-defined]  # the Cython buffer thriftpy2 uses at run time has it
            if data:  # nothing for a oneway call
                if wrap is not None:
                    data = wrap(data)
                c.sendall(struct.pack("!i", len(data)) + data)

        reader = _MessageReader(recv, self.max_message)
        out_buf = TMemoryBuffer()
        out = TCyBinaryProtocol(out_buf, strict_write=True)
        self._serve_calls(reader, message, out, send)

    def _serve_calls(self, reader: _MessageReader, message: Callable[[], bytes], out: TCyBinaryProtocol,
                     send: Callable[[], None]) -> None:
        """The connection's calls, from its first whole one on within the catalog's connection scope (which
        may keep a store connection for the connection's life: not for one that never sends a whole call)."""
        self._process(reader, message, out, send)
        with self.connection_scope():
            while True:
                self._process(reader, message, out, send)

    def _process(self, reader: _MessageReader, message: Callable[[], bytes], out: TCyBinaryProtocol,
                 send: Callable[[], None]) -> None:
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
        name = reader.name
        fast = self.fast.get(name) if name is not None else None
        if fast is not None and name is not None:
            body = self._fast(fast, name, data)
            if body is not None:
                out.write_message_begin(name, TMessageType.REPLY, reader.seqid)
                out.trans.write(body)
                out.write_message_end()
                send()
                return
        self.processor.process(TCyBinaryProtocol(TMemoryBuffer(data), strict_read=False), out)
        send()

    @staticmethod
    def _fast(fn: FastPath, name: str, data: bytes) -> bytes | None:
        iprot = TCyBinaryProtocol(TMemoryBuffer(data), strict_read=False)
        iprot.read_message_begin()
        args = getattr(hms.ThriftHiveMetastore, name + "_args")()
        args.read(iprot)
        try:
            return fn(args)
        except Exception:  # the regular path answers, and reports the failure properly
            log.exception("fast path of %s failed", name)
            return None


def _tls_reason(e: ssl.SSLError) -> str:
    """OpenSSL's short reason (WRONG_VERSION_NUMBER, TLSV1_ALERT_UNKNOWN_CA, ...), never the client's bytes."""
    return str(e.reason or type(e).__name__)[:100]


def _address(addr: object) -> str:
    if isinstance(addr, tuple) and len(addr) >= 2:
        return f"{addr[0]}:{addr[1]}"
    return str(addr)


def recv_exact(recv: Callable[[int], bytes], n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        b = recv(min(n - got, 1 << 20))
        if not b:
            raise TTransportException(TTransportException.END_OF_FILE, "client closed the connection")
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)
