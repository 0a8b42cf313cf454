"""One bounded HTTP server for every HTTP front (the Iceberg REST catalog, catalogd's endpoint): the standard
library's threaded server, one thread per connection, with the fronts' bounds (FrontLimits, README "Security").

A front subclasses BoundedHandler (its routes as do_GET, ... ; its error model as `error_body`) and serves it
with BoundedHTTPServer. What every such front keeps, whatever its routes:

- Connections are counted from accept to the end of their thread; beyond limits.max_connections a new one is
  answered 503 (in the front's error model) at once, without a thread, and closed. A connection its client
  already closed is dropped at accept. The accept loop never waits on a client and outlives every accept error
  (paused on while descriptors are exhausted).
- Clocks: a new connection's first request is due within read_timeout of the accept; between requests a
  keep-alive connection waits at most idle_timeout; a request (line, headers and the body the handler reads)
  must arrive whole within read_timeout of its first byte, each read waiting only what is left. An answer a
  client does not take within idle_timeout drops the connection. The work on a request has no timeout.
- Caps: the request line (414), the header lines (431; at most 100 of them, http.client's cap), the body
  (Content-Length digits only and one value, at most `max_body`, else 400/413; chunked bodies 411).
- A request answered before its body was read closes its connection after the answer (the rest of the body
  cannot be told from a next request), after a bounded linger so the client reads the answer, not a reset.
"""

from __future__ import annotations

import http.client
import io
import json
import logging
import socket
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, ClassVar

from .slots import ConnectionSlots
from .workers import AcceptErrors, Burst, FrontLimits, hung_up

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

log = logging.getLogger(__name__)

MAX_BODY = 8 * 1024 * 1024  # the default of max_request_bytes
MAX_REQUEST_LINE = 16 * 1024  # method, path and query (a table's path is well under 1 KiB)
MAX_HEADER_BYTES = 64 * 1024  # all header lines of one request
LINGER_SECONDS = 1.0  # after a refusal with its body unread: how long the rest of the body is read and dropped
LINGER_BYTES = 1 << 20
# a client's text in a log line: C0 and C1 control characters as \xHH, a backslash doubled (http.server's table)
_CONTROL_CHARS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))} | {ord("\\"): "\\\\"}


class RequestTimeout(TimeoutError):
    """A connection idle too long, or a request that did not arrive whole in time: closed without an answer."""


class Gone(Exception):
    """The client did not take its answer, or closed its connection within its body: the connection is closed."""


class HttpError(Exception):
    """A request refused with an HTTP status; `kind` names the error in the front's model ('' lets the front
    choose by the status)."""

    def __init__(self, code: int, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.kind = code, message, kind


class Clock(io.RawIOBase):
    """The read side of a connection with its clocks: waiting for a request's first byte takes at most
    idle_timeout (the first request's: read_timeout from the accept), and from it the whole request at most
    read_timeout (each read waits only what is left, so a client trickling bytes is cut too)."""

    def __init__(self, sock: socket.socket, limits: FrontLimits) -> None:
        super().__init__()
        self.sock = sock
        self.idle, self.read_s = limits.idle_timeout, limits.read_timeout
        self.deadline: float | None = None  # of the request being read; None between requests
        # a new connection's first request is due within read_timeout of the accept, not idle_timeout: one
        # that never sends a byte would hold its slot that long
        self.first: float | None = time.monotonic() + self.read_s
        self.timeout = -1.0

    def readable(self) -> bool:
        return True

    def _wait(self, seconds: float) -> None:
        if seconds != self.timeout:
            self.sock.settimeout(seconds)
            self.timeout = seconds

    def next_request(self) -> None:
        self.deadline, self.first = self.first, None

    def writing(self) -> None:
        """An answer goes out: a client that does not take it within idle_timeout is dropped."""
        self._wait(self.idle)

    def readinto(self, b: WriteableBuffer) -> int:
        if self.deadline is None:
            self._wait(self.idle)
        else:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise RequestTimeout(f"request not received whole within {self.read_s:g} s (read_timeout)")
            self._wait(left)
        try:
            n = self.sock.recv_into(b)
        except TimeoutError:
            if self.deadline is None:
                raise RequestTimeout(f"no request for {self.idle:g} s (idle_timeout)") from None
            raise RequestTimeout(f"request not received whole within {self.read_s:g} s (read_timeout)") from None
        if self.deadline is None and n:
            self.deadline = time.monotonic() + self.read_s
        return n


class Reader(io.BufferedReader):
    """The buffered request stream; `head_left` bounds the bytes of the request line and headers."""

    head_left: int | None = None

    def readline(self, size: int | None = -1) -> bytes:
        left = self.head_left
        if left is None:
            return super().readline(size)
        line = super().readline(left + 1 if size is None or size < 0 else min(size, left + 1))
        self.head_left = left - len(line)
        if self.head_left < 0:  # http.server answers 431 (in the front's error model: send_error)
            raise http.client.HTTPException(f"request headers larger than {MAX_HEADER_BYTES} bytes")
        return line


class BoundedHandler(BaseHTTPRequestHandler):
    """A connection's requests, read within the clocks and caps; a subclass adds its do_<METHOD> routes and
    may override `error_body` (its error model) and `max_body`."""

    protocol_version = "HTTP/1.1"  # keep-alive; a front serving one request a connection sets HTTP/1.0
    disable_nagle_algorithm = True  # headers and body are separate writes: without this, 40 ms per answer
    max_body: ClassVar[int] = MAX_BODY
    server: BoundedHTTPServer
    unread = 0  # bytes of the current request's body not read yet (1: an unknown amount)

    @classmethod
    def error_body(cls, code: int, message: str, kind: str = "") -> bytes:
        """An error's JSON body in this front's error model (the server's 503 refusal is made with it too)."""
        return json.dumps({"error": message}).encode()

    # -- reading a request ------------------------------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the base class's reader: ours reads within the clocks
        self.clock = Clock(self.connection, self.server.limits)
        self.reader = Reader(self.clock)
        self.rfile = self.reader

    def handle_one_request(self) -> None:
        """One request, read within the clocks and caps (the base class's steps, with them)."""
        self.clock.next_request()
        self.unread = 0
        self.reader.head_left = MAX_REQUEST_LINE
        try:
            line = self.reader.readline(MAX_REQUEST_LINE + 1)
        except http.client.HTTPException:
            line = b"x" * (MAX_REQUEST_LINE + 1)
        except RequestTimeout as e:
            log.debug("%s: %s; closed", self.address_string(), e)
            self.close_connection = True
            return
        try:
            if len(line) > MAX_REQUEST_LINE:
                self.requestline, self.request_version, self.command = "", "", ""
                self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG,
                                f"Request line longer than {MAX_REQUEST_LINE} bytes")
                return
            if not line:
                self.close_connection = True
                return
            self.raw_requestline = line
            self.reader.head_left = MAX_HEADER_BYTES
            parsed = self.parse_request()  # reads the headers; answers a bad request itself
            self.reader.head_left = None
            if not parsed:
                return
            # a body until it is read: a request refused before then closes its connection after the answer
            self.unread = int(bool(self.headers.get("Transfer-Encoding")) or
                              (self.headers.get("Content-Length") or "0").strip() != "0")
            method = getattr(self, "do_" + self.command, None)
            if method is None:
                self.send_error(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method {self.command!r}")
                return
            method()
            self.wfile.flush()
        except (RequestTimeout, Gone) as e:
            log.debug("%s: %s; closed", self.address_string(), e)
            self.close_connection = True
            self.unread = 0  # cut: nothing more is read

    def content_length(self) -> int:
        """The body's announced length (0: none); HttpError when it is not a length or over `max_body`. A body
        sent otherwise (chunked) is not read: the connection closes after the answer."""
        if "Transfer-Encoding" in self.headers:
            self.unread = 1
            raise HttpError(411, "A request body must come with Content-Length (Transfer-Encoding is not "
                                 "supported)")
        lengths = self.headers.get_all("Content-Length")
        if not lengths:
            return 0
        # digits only: int() also takes '+5', '1_0' and non-ASCII digits, which a proxy in front may read
        # otherwise; two different lengths leave the body's end in doubt
        length = lengths[0].strip(" \t")
        if not (length.isascii() and length.isdigit()) or any(v.strip(" \t") != length for v in lengths):
            self.unread = 1
            raise HttpError(400, "Invalid Content-Length")
        n = int(length)
        self.unread = n
        if n > self.max_body:
            raise HttpError(413, f"Request body too large ({n} bytes, at most {self.max_body}: max_request_bytes)")
        return n

    def read_body(self) -> bytes:
        """The request's whole body (b'' without one), within the caps and clocks."""
        n = self.content_length()
        raw = self.reader.read(n) if n else b""
        if len(raw) < n:
            raise Gone("the client closed the connection within its body")
        self.unread = 0
        return raw

    def discard_body(self) -> None:
        """Read and drop a body the route does not take, in bounded pieces."""
        n = self.content_length()
        while n > 0:
            got = len(self.reader.read(min(n, 1 << 20)))
            if not got:
                raise Gone("the client closed the connection within its body")
            n -= got
        self.unread = 0

    def handle_expect_100(self) -> bool:
        try:  # a refused length is answered before a client that asked to continue sends its body
            self.content_length()
        except HttpError as e:
            self.send_error_body(e)
            return False
        return super().handle_expect_100()

    # -- answering --------------------------------------------------------------------------------------
    def send_body(self, status: int, body: bytes | None, content_type: str = "application/json") -> None:
        """The answer: `body` None has none (204 or a HEAD). Gone when the client does not take it."""
        if self.unread:  # a body left unread (a refusal): the next request cannot be found after it
            self.close_connection = True
        self.clock.writing()
        try:
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
            elif status != 204:
                self.send_header("Content-Length", "0")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if body is not None and self.command != "HEAD":
                self.wfile.write(body)
        except OSError as e:  # TimeoutError included
            raise Gone(f"answer not taken: {e}") from None

    def send_error_body(self, e: HttpError) -> None:
        self.send_body(e.code, self.error_body(e.code, e.message, e.kind))

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's errors (bad request line, headers, unsupported method) in the front's error model;
        the connection is closed after them, since what follows cannot be trusted."""
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "Error"
        text = message or phrase
        if explain and explain != text:
            text = f"{text}: {explain}"
        self.close_connection = True
        self.unread = 1  # what follows the bad part is not read
        try:
            self.send_body(int(code), self.error_body(int(code), text))
        except Gone:
            self.unread = 0

    def finish(self) -> None:
        if self.unread:
            self._linger()
        super().finish()

    def _linger(self) -> None:
        """After refusing a request whose body was not read: end our side, then read (and drop) what the
        client still sends for a little while, so that closing does not reset the connection before the
        client has read the answer. Bounded: LINGER_BYTES, LINGER_SECONDS."""
        sock, end, left = self.connection, time.monotonic() + LINGER_SECONDS, LINGER_BYTES
        try:
            sock.shutdown(socket.SHUT_WR)
            while left > 0 and (wait := end - time.monotonic()) > 0:
                sock.settimeout(wait)
                got = len(sock.recv(min(left, 65536)))
                if not got:
                    break
                left -= got
        except OSError:
            pass

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        # the request line is the client's text: its control characters escaped, as the base class does
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s", self.address_string(), (format % args).translate(_CONTROL_CHARS))


def refusal(handler: type[BoundedHandler]) -> bytes:
    """The whole answer to a connection beyond the cap: written at once, without reading its request."""
    body = handler.error_body(503, "Too many connections (max_connections); retry later")
    return (f"{handler.protocol_version} 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            f"Retry-After: 1\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


class BoundedHTTPServer(ThreadingHTTPServer):
    """The threaded server with the front's bounds: connections counted from accept to the end of their
    thread, beyond max_connections answered 503 at once; accept errors paused on, never fatal."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # a burst of connections waits in the backlog, not in the clients' SYN retries
    RequestHandlerClass: type[BoundedHandler]

    def __init__(self, address: tuple[str, int], handler: type[BoundedHandler], limits: FrontLimits,
                 name: str = "HTTP", bind_and_activate: bool = True) -> None:
        super().__init__(address, handler, bind_and_activate)
        self.limits = limits
        self.name = name
        self.slots = ConnectionSlots(limits, Burst(f"{name}: connection refused"))
        self._refusal = refusal(handler)
        self._accept_errors = AcceptErrors(name)

    @property
    def connections(self) -> int:
        """Open now: counted from accept to the end of their thread."""
        return self.slots.open

    def get_request(self) -> tuple[socket.socket, tuple[str, int]]:
        try:
            return self.socket.accept()
        except OSError as e:  # the caller (socketserver) skips this round; pause first when out of descriptors
            self._accept_errors.failed(e)
            raise

    def verify_request(self, request: socket.socket, client_address: tuple[str, int]) -> bool:  # type: ignore[override]
        if hung_up(request):
            return False
        if self.slots.take():
            return True
        try:
            request.setblocking(False)  # the answer fits the socket's buffer; the accept loop never waits
            request.send(self._refusal)
        except OSError:
            pass
        return False

    def process_request(self, request: socket.socket, client_address: tuple[str, int]) -> None:  # type: ignore[override]
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: socketserver closes the connection
            self.slots.give_back()
            raise

    def process_request_thread(self, request: socket.socket, client_address: tuple[str, int]) -> None:  # type: ignore[override]
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.give_back()

    def handle_error(self, request: object, client_address: object) -> None:
        log.debug("%s connection %s failed", self.name, client_address, exc_info=True)
