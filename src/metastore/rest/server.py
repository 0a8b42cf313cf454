"""The Iceberg REST catalog over HTTP: the standard library's threaded HTTP server, one thread per connection.

Why not an ASGI framework: measured on this machine (2 shared cores, GET /v1/config with keep-alive,
requests.Session clients), the stdlib server with TCP_NODELAY answered 660 calls/s to one client and 794/s to
four, FastAPI on uvicorn 292/s and 371/s; the catalog calls are synchronous (SQLAlchemy), and a listening
socket is simple to share with forked workers. The OpenAPI description is built from the route table below
(GET /v1/openapi.json), so it lists exactly what is served.

Paths are the spec's, with or without the optional {prefix} segment: /v1/namespaces/... and
/v1/{prefix}/namespaces/... are the same (this server announces no prefix in /v1/config).

Bounds (FrontLimits, as the Thrift front): at most max_connections connections (one more gets a 503 and is
closed); a keep-alive connection with no request for idle_timeout is closed (a new connection's first request is
due within read_timeout of the accept), and a request (line, headers and
body) must arrive whole within read_timeout of its first byte; the request line, the headers and the body are
capped (414, 431, 413); every error, the server's own included, is in the spec's error model. The work on a
request has no timeout. The accept loop outlives every accept error.
"""

from __future__ import annotations

import http.client
import io
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from .. import __version__
from ..core.errors import CatalogError
from ..catalog.service import Catalog
from ..server.workers import AcceptErrors, Burst, FrontLimits, hung_up
from .errors import RestError, bad_request

if TYPE_CHECKING:
    from .iceberg import IcebergCatalog

log = logging.getLogger(__name__)

MAX_BODY = 8 * 1024 * 1024  # the default of max_request_bytes
MAX_JSON_CONTAINERS = 500_000  # objects and arrays in one JSON body: ~35 MiB once parsed
MAX_REQUEST_LINE = 16 * 1024  # method, path and query (a table's path is well under 1 KiB)
MAX_HEADER_BYTES = 64 * 1024  # all header lines of one request (and at most 100 of them: http.client's cap)


class RequestTimeout(TimeoutError):
    """A connection idle too long, or a request that did not arrive whole in time: closed without an answer."""


class _Clock(io.RawIOBase):
    """The read side of a connection with its two clocks: waiting for a request's first byte takes at most
    idle_timeout, and from it the whole request at most read_timeout (each read waits only what is left, so a
    client trickling bytes is cut too)."""

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

    def readinto(self, b: Any) -> int:
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


class _Reader(io.BufferedReader):
    """The buffered request stream; `head_left` bounds the bytes of the request line and headers."""

    head_left: int | None = None

    def readline(self, size: int | None = -1) -> bytes:
        left = self.head_left
        if left is None:
            return super().readline(size)
        line = super().readline(left + 1 if size is None or size < 0 else min(size, left + 1))
        self.head_left = left - len(line)
        if self.head_left < 0:  # http.server answers 431 (in the error model: _Handler.send_error)
            raise http.client.HTTPException(f"request headers larger than {MAX_HEADER_BYTES} bytes")
        return line


class _Gone(Exception):
    """The client did not take its answer (timed out or went away): the connection is closed."""


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # the spec's path below /v1/{prefix}/ (or /v1/), parameters in braces
    operation: str  # the spec's operationId
    summary: str
    status: int = 200  # on success
    body: bool = False  # takes a JSON request body
    query: tuple[str, ...] = ()
    prefixed: bool = True

    def pattern(self) -> re.Pattern[str]:
        return re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.path) + "$")


ROUTES = (
    Route("GET", "config", "getConfig", "Catalog configuration and the endpoints served", query=("warehouse",),
          prefixed=False),
    Route("GET", "openapi.json", "getOpenApi", "This OpenAPI description", prefixed=False),
    Route("GET", "namespaces", "listNamespaces", "List namespaces (Hive databases), optionally under a parent",
          query=("parent", "pageToken", "pageSize")),
    Route("POST", "namespaces", "createNamespace", "Create a namespace (a Hive database)", body=True),
    Route("GET", "namespaces/{namespace}", "loadNamespaceMetadata", "Load a namespace's properties"),
    Route("HEAD", "namespaces/{namespace}", "namespaceExists", "Whether a namespace exists", status=204),
    Route("DELETE", "namespaces/{namespace}", "dropNamespace", "Drop an empty namespace", status=204),
    Route("POST", "namespaces/{namespace}/properties", "updateProperties",
          "Set and remove namespace properties", body=True),
    Route("GET", "namespaces/{namespace}/tables", "listTables", "List the Iceberg tables of a namespace",
          query=("pageToken", "pageSize")),
    Route("POST", "namespaces/{namespace}/tables", "createTable", "Create a table, or stage its creation",
          body=True),
    Route("POST", "namespaces/{namespace}/register", "registerTable",
          "Register a table from an existing metadata file", body=True),
    Route("GET", "namespaces/{namespace}/tables/{table}", "loadTable", "Load a table's metadata",
          query=("snapshots",)),
    Route("HEAD", "namespaces/{namespace}/tables/{table}", "tableExists", "Whether a table exists", status=204),
    Route("POST", "namespaces/{namespace}/tables/{table}", "updateTable",
          "Commit requirements and updates to a table (compare-and-swap of its metadata location)", body=True),
    Route("DELETE", "namespaces/{namespace}/tables/{table}", "dropTable",
          "Drop a table; with purgeRequested=true also delete its data and metadata files", status=204,
          query=("purgeRequested",)),
    Route("POST", "tables/rename", "renameTable", "Rename a table", status=204, body=True),
    Route("POST", "transactions/commit", "commitTransaction",
          "Commit changes to several tables atomically: all change or none", status=204, body=True),
)
_COMPILED = [(r, r.pattern()) for r in ROUTES]
_ROOTS = {r.path.split("/")[0] for r in ROUTES}


def endpoints() -> list[str]:
    """The endpoints announced in /v1/config, in the spec's notation."""
    return [f"{r.method} /v1/{{prefix}}/{r.path}" for r in ROUTES if r.prefixed]


def openapi(base_url: str | None = None) -> dict[str, Any]:
    """An OpenAPI 3 description of the routes served (the Iceberg REST catalog's subset implemented here)."""
    error = {"$ref": "#/components/schemas/ErrorModel"}
    paths: dict[str, dict[str, Any]] = {}
    for r in ROUTES:
        path = f"/v1/{{prefix}}/{r.path}" if r.prefixed else f"/v1/{r.path}"
        params: list[dict[str, Any]] = [
            {"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
            for n in re.findall(r"\{(\w+)\}", path)]
        params += [{"name": q, "in": "query", "required": False, "schema": {"type": "string"}} for q in r.query]
        responses: dict[str, Any] = {
            str(r.status): {"description": "OK"} if r.status == 204 or r.method == "HEAD" else
            {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}}
        for code, what in ((400, "BadRequestException: malformed request, unknown update or requirement type"),
                           (404, "NoSuchNamespaceException / NoSuchTableException"),
                           (409, "AlreadyExistsException / CommitFailedException / NamespaceNotEmptyException"),
                           (500, "ServiceFailureException")):
            if code == 409 and r.method in ("GET", "HEAD"):
                continue
            responses[str(code)] = {"description": what, "content": {"application/json": {"schema": error}}}
        op: dict[str, Any] = {"operationId": r.operation, "summary": r.summary, "parameters": params,
                              "responses": responses}
        if r.body:
            op["requestBody"] = {"required": True,
                                 "content": {"application/json": {"schema": {"type": "object"}}}}
        paths.setdefault(path, {})[r.method.lower()] = op
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "metastore Iceberg REST catalog", "version": __version__,
                 "description": "The Apache Iceberg REST catalog protocol served by `metastore serve`. "
                                "Namespaces are Hive databases (one level); {prefix} is optional."},
        "paths": paths,
        "components": {"schemas": {"ErrorModel": {
            "type": "object", "required": ["error"],
            "properties": {"error": {"type": "object", "required": ["message", "type", "code"], "properties": {
                "message": {"type": "string"}, "type": {"type": "string"}, "code": {"type": "integer"}}}}}}},
    }
    if base_url:
        doc["servers"] = [{"url": base_url}]
    return doc


def config(endpoints: list[str]) -> dict[str, Any]:
    """GET /v1/config: no defaults or overrides, the endpoints served."""
    return {"defaults": {}, "overrides": {}, "endpoints": endpoints}


class _LazyApi:
    """The Iceberg operations, imported on the first request that needs them: PyIceberg and pydantic add
    about 20 MiB to every server process, which a server whose clients speak only Thrift need not carry."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._api: IcebergCatalog | None = None
        self._lock = threading.Lock()

    def get(self) -> IcebergCatalog:
        if self._api is None:
            with self._lock:
                if self._api is None:
                    from .iceberg import IcebergCatalog

                    self._api = IcebergCatalog(self.catalog)
        return self._api


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients (requests.Session) reuse their connection
    disable_nagle_algorithm = True  # headers and body are separate writes: without this, 40 ms per answer
    server_version = f"metastore/{__version__}"
    api: _LazyApi
    base_url: str
    limits: FrontLimits = FrontLimits()
    max_body: int = MAX_BODY
    _unread = 0  # bytes of the current request's body not read yet

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the base class's reader: ours reads within the clocks
        self.clock = _Clock(self.connection, self.limits)
        self.rfile = _Reader(self.clock)

    def handle_one_request(self) -> None:
        """One request, read within the clocks and caps (the base class's steps, with them)."""
        self.clock.next_request()
        self._unread = 0
        self.rfile.head_left = MAX_REQUEST_LINE
        try:
            line = self.rfile.readline(MAX_REQUEST_LINE + 1)
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
            self.rfile.head_left = MAX_HEADER_BYTES
            parsed = self.parse_request()  # reads the headers; answers a bad request itself
            self.rfile.head_left = None
            if not parsed:
                return
            method = getattr(self, "do_" + self.command, None)
            if method is None:
                self.send_error(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method {self.command!r}")
                return
            method()
            self.wfile.flush()
        except (RequestTimeout, _Gone) as e:
            log.debug("%s: %s; closed", self.address_string(), e)
            self.close_connection = True
            self._unread = 0  # cut: nothing more is read

    def finish(self) -> None:
        if self._unread:
            self._linger()
        super().finish()

    def _linger(self) -> None:
        """After refusing a request whose body was not read: end our side, then read (and drop) what the
        client still sends for a little while, so that closing does not reset the connection before the
        client has read the answer. Bounded: at most 1 MiB, at most 1 s."""
        sock, end, left = self.connection, time.monotonic() + 1.0, 1 << 20
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

    def handle_expect_100(self) -> bool:
        if self._refuse_length():  # refused before the client sends the body
            return False
        return super().handle_expect_100()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's errors (bad request line, headers, unsupported method) in the spec's error model;
        the connection is closed after them, since what follows cannot be trusted."""
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "Error"
        text = message or phrase
        if explain and explain != text:
            text = f"{text}: {explain}"
        kind = ("ServiceUnavailableException" if code == 503 else "UnsupportedOperationException" if code == 501
                else "BadRequestException" if code < 500 else "ServiceFailureException")
        self.close_connection = True
        self._unread = 1  # what follows the bad part is not read
        try:
            self._send(int(code), json.dumps(RestError(int(code), kind, text).body()).encode())
        except _Gone:
            self._unread = 0

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def _send(self, status: int, body: bytes | None, content_type: str = "application/json") -> None:
        if self._unread:  # a body left unread (a refusal): the next request cannot be found after it
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
            raise _Gone(f"answer not taken: {e}") from None

    def _error(self, e: RestError) -> None:
        self._send(e.code, json.dumps(e.body()).encode())

    def _dispatch(self, method: str) -> None:
        # a body until it is read: a request refused before then closes its connection after the answer
        self._unread = int(bool(self.headers.get("Transfer-Encoding")) or
                           (self.headers.get("Content-Length") or "0").strip() != "0")
        try:
            self._handle(method)
        except (RequestTimeout, _Gone):
            raise
        except RestError as e:
            self._error(e)
        except CatalogError as e:  # anything the operations did not map themselves
            self._error(RestError(500, "ServiceFailureException", e.message))
        except Exception as e:  # a bug or an unexpected failure: answered, logged, the server goes on
            log.exception("%s %s failed", method, self.path)
            # an unexpected error's text may quote a file or a setting: the log has it, the client does not
            self._error(RestError(500, "ServiceFailureException",
                                  f"Internal error ({e.__class__.__name__}); see the server log"))

    def _length(self) -> int:
        """The body's announced length (0: none); refused when it is not a length or over the cap. A body
        sent otherwise (chunked) is not read: the connection closes after the answer."""
        if "Transfer-Encoding" in self.headers:
            self._unread = 1
            raise RestError(411, "BadRequestException", "A request body must come with Content-Length "
                                                        "(Transfer-Encoding is not supported)")
        lengths = self.headers.get_all("Content-Length")
        if not lengths:
            return 0
        # digits only: int() also takes '+5', '1_0' and non-ASCII digits, which a proxy in front may read
        # otherwise; two different lengths leave the body's end in doubt
        length = lengths[0].strip(" \t")
        if not (length.isascii() and length.isdigit()) or any(v.strip(" \t") != length for v in lengths):
            n = -1
        else:
            n = int(length)
        if n < 0:
            self._unread = 1
            raise bad_request("Invalid Content-Length")
        self._unread = n
        if n > self.max_body:
            raise RestError(413, "BadRequestException",
                            f"Request body too large ({n} bytes, at most {self.max_body}: max_request_bytes)")
        return n

    def _refuse_length(self) -> bool:
        """Answer a refused length at once (before a client that asked to continue sends its body)."""
        try:
            self._length()
        except RestError as e:
            self._error(e)
            return True
        return False

    def _discard(self) -> None:
        """Read and drop a body the route does not take, in bounded pieces."""
        n = self._length()
        while n > 0:
            got = len(self.rfile.read(min(n, 1 << 20)))
            if not got:
                raise _Gone("the client closed the connection within its body")
            n -= got
        self._unread = 0

    def _body(self) -> Any:
        n = self._length()
        if self.headers.get("Content-Length") is None:
            raise bad_request("A JSON request body is required (with Content-Length)")
        raw = self.rfile.read(n)
        if len(raw) < n:
            raise _Gone("the client closed the connection within its body")
        self._unread = 0
        # json.loads makes a Python object of every {} and []: ~70 bytes each, so a body of nothing but
        # '{},' costs ~24 times its size. Counted first (a C scan, brackets inside strings included: it errs
        # towards refusing) against a budget far above what a real commit holds.
        containers = raw.count(b"{") + raw.count(b"[")
        if containers > MAX_JSON_CONTAINERS:
            raise RestError(413, "BadRequestException",
                            f"Request body too complex ({containers} objects and arrays, "
                            f"at most {MAX_JSON_CONTAINERS})")
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise bad_request(f"Malformed JSON in the request body: {e}") from None

    def _route(self, method: str, parts: list[str]) -> tuple[Route, dict[str, str]]:
        path = "/".join(parts)
        allowed: list[str] = []
        for route, pattern in _COMPILED:
            match = pattern.match(path)
            if match:
                if route.method == method:
                    return route, {k: unquote(v) for k, v in match.groupdict().items()}
                allowed.append(route.method)
        if allowed:
            raise RestError(405, "MethodNotAllowedException", f"{method} is not allowed on /v1/{path} "
                                                                f"(allowed: {', '.join(sorted(set(allowed)))})")
        raise RestError(404, "NoSuchEndpointException", f"No endpoint /v1/{path}")

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        segments = url.path.strip("/").split("/")
        if segments[:1] != ["v1"] or len(segments) < 2:
            raise RestError(404, "NoSuchEndpointException", f"No endpoint {url.path}: the catalog is under /v1/")
        parts = segments[1:]
        if parts[0] not in _ROOTS and len(parts) > 1:
            parts = parts[1:]  # the optional {prefix}
        route, params = self._route(method, parts)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        body = self._body() if route.body else None
        if not route.body:
            self._discard()
        result = self._call(route.operation, params, query, body)
        if route.status == 204 or method == "HEAD":
            self._send(204, None)
        elif isinstance(result, str):
            self._send(route.status, result.encode())
        else:
            self._send(route.status, json.dumps(result).encode())

    def _call(self, op: str, p: dict[str, str], q: dict[str, str], body: Any) -> Any:
        ns, table = p.get("namespace", ""), p.get("table", "")
        calls: dict[str, Callable[[], Any]] = {
            "getConfig": lambda: config(endpoints()),
            "getOpenApi": lambda: openapi(self.base_url),
            "listNamespaces": lambda: self.api.get().list_namespaces(q.get("parent")),
            "createNamespace": lambda: self.api.get().create_namespace(body),
            "loadNamespaceMetadata": lambda: self.api.get().load_namespace(ns),
            "namespaceExists": lambda: self.api.get().namespace_exists(ns),
            "dropNamespace": lambda: self.api.get().drop_namespace(ns),
            "updateProperties": lambda: self.api.get().update_namespace_properties(ns, body),
            "listTables": lambda: self.api.get().list_tables(ns),
            "createTable": lambda: self.api.get().create_table(ns, body),
            "registerTable": lambda: self.api.get().register_table(ns, body),
            "loadTable": lambda: self.api.get().load_table(ns, table),
            "tableExists": lambda: self.api.get().table_exists(ns, table),
            "updateTable": lambda: self.api.get().commit_table(ns, table, body),
            "dropTable": lambda: self.api.get().drop_table(ns, table, _flag(q.get("purgeRequested"), "purgeRequested")),
            "renameTable": lambda: self.api.get().rename_table(body),
            "commitTransaction": lambda: self.api.get().commit_transaction(body),
        }
        return calls[op]()


def _flag(value: str | None, name: str) -> bool:
    if value is None:
        return False
    v = value.strip().lower()
    if v in ("true", "1"):
        return True
    if v in ("false", "0", ""):
        return False
    raise bad_request(f"{name} must be true or false, not {value!r}")


_UNAVAILABLE = json.dumps(RestError(503, "ServiceUnavailableException",
                                     "Too many connections (max_connections); retry later").body()).encode()
_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
            b"Connection: close\r\nContent-Length: " + str(len(_UNAVAILABLE)).encode() + b"\r\n\r\n" + _UNAVAILABLE)


class _Server(ThreadingHTTPServer):
    """The threaded server with the front's bounds: connections counted from accept to the end of their
    thread, beyond max_connections answered 503 at once; accept errors paused on, never fatal."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # a burst of connections waits in the backlog, not in the clients' SYN retries

    def __init__(self, address: tuple[str, int], handler: type[_Handler], bind_and_activate: bool = True,
                 limits: FrontLimits | None = None) -> None:
        super().__init__(address, handler, bind_and_activate)
        self.limits = limits or FrontLimits()
        self.connections = 0
        self._lock = threading.Lock()
        self._refused = Burst("REST: connection refused")
        self._accept_errors = AcceptErrors("REST")

    def get_request(self) -> tuple[socket.socket, Any]:
        try:
            return self.socket.accept()
        except OSError as e:  # the caller (socketserver) skips this round; pause first when out of descriptors
            self._accept_errors.failed(e)
            raise

    def verify_request(self, request: Any, client_address: Any) -> bool:
        if hung_up(request):
            return False
        with self._lock:
            full = self.connections >= self.limits.max_connections
            if not full:
                self.connections += 1
        if full:
            self._refused.note(f"{self.limits.max_connections} connections open (max_connections)")
            try:
                request.setblocking(False)  # the answer fits the socket's buffer; the accept loop never waits
                request.send(_REFUSAL)
            except OSError:
                pass
        return not full

    def process_request(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: socketserver closes the connection
            self._left()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._left()

    def _left(self) -> None:
        with self._lock:
            self.connections -= 1

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("REST connection %s failed", client_address, exc_info=True)


class RestServer:
    """The REST catalog on its own port, served from a background thread beside the Thrift server."""

    def __init__(self, catalog: Catalog, host: str, port: int, limits: FrontLimits | None = None,
                 max_request_bytes: int = MAX_BODY) -> None:
        self.host, self.port = host, port
        self.catalog = catalog
        self.limits = limits or FrontLimits()
        self.max_request_bytes = max_request_bytes
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def bind(self) -> int:
        """Listen on the port (0: any free port); returns the port."""
        self._httpd = _Server((self.host, self.port), self._handler_class(), bind_and_activate=True,
                              limits=self.limits)
        self.port = self._httpd.server_address[1]
        self._httpd.RequestHandlerClass.base_url = self.url  # type: ignore[attr-defined]  # the port is known now
        return self.port

    def adopt(self, sock: socket.socket) -> None:
        """Serve on a socket already listening (a worker process shares its parent's)."""
        self._httpd = _Server((self.host, self.port), self._handler_class(), bind_and_activate=False,
                              limits=self.limits)
        self._httpd.socket.close()
        self._httpd.socket = sock
        self.port = sock.getsockname()[1]
        self._httpd.RequestHandlerClass.base_url = self.url  # type: ignore[attr-defined]

    @property
    def socket(self) -> socket.socket:
        assert self._httpd is not None
        return self._httpd.socket

    def _handler_class(self) -> type[_Handler]:
        return type("Handler", (_Handler,), {"api": _LazyApi(self.catalog), "base_url": self.url,
                                             "limits": self.limits, "max_body": self.max_request_bytes})

    def start(self) -> None:
        assert self._httpd is not None, "bind() or adopt() first"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="iceberg-rest", daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._httpd is not None:
            if self._thread is not None:
                self._httpd.shutdown()
            self._httpd.server_close()
