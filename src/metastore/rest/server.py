"""The Iceberg REST catalog over HTTP: the standard library's threaded HTTP server, one thread per connection.

Why not an ASGI framework: measured on this machine (2 shared cores, GET /v1/config with keep-alive,
requests.Session clients), the stdlib server with TCP_NODELAY answered 660 calls/s to one client and 794/s to
four, FastAPI on uvicorn 292/s and 371/s; the catalog calls are synchronous (SQLAlchemy), and a listening
socket is simple to share with forked workers. The OpenAPI description is built from the route table below
(GET /v1/openapi.json), so it lists exactly what is served.

Paths are the spec's, with or without the optional {prefix} segment: /v1/namespaces/... and
/v1/{prefix}/namespaces/... are the same (this server announces no prefix in /v1/config).

Bounds: those of every HTTP front (server/http.py, FrontLimits as the Thrift front): a connection cap answered
503, the first-request, idle and read clocks, request line, header and body caps (414, 431, 413); here also a
JSON body's objects and arrays counted before parsing (413). Every error, the server's own included, is in the
spec's error model (_Handler.error_body). The work on a request has no timeout.

Authentication (rest_auth = oauth2, rest/oauth.py): each request's bearer token is checked first, in
_dispatch, and the request runs under identity.acting_as(its user), so that the catalog's authorizer and the
audit line see who called; without a valid token it is answered 401 NotAuthorizedException with a
WWW-Authenticate challenge (logged as "anonymous"), except the PUBLIC operations (the token endpoint
POST /v1/oauth/tokens, this OpenAPI document). /v1/config needs a token too, as the spec's security says;
it advertises the token endpoint as oauth2-server-uri. The catalog's AccessDenied is 403 ForbiddenException,
NotAuthenticated 401, whatever rest_auth is.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from .. import __version__
from ..catalog.audit import AuditLog
from ..catalog.service import Catalog
from ..core import identity
from ..core.errors import AccessDenied, CatalogError, NotAuthenticated
from ..server.http import MAX_BODY, BoundedHandler, BoundedHTTPServer, Gone, HttpError, RequestTimeout
from ..server.workers import FrontLimits
from .errors import AuthFailed, NotAuthorizedException, RestError, TokenRequestError, access_error, bad_request
from .types import Answer, JsonObject, JsonValue

if TYPE_CHECKING:
    from .iceberg import IcebergCatalog
    from .oauth import OAuth2

log = logging.getLogger(__name__)

MAX_JSON_CONTAINERS = 500_000  # objects and arrays in one JSON body: ~35 MiB once parsed
MAX_ERROR_MESSAGE = 1024  # an error's message (which may quote the client's names, paths, values) is clipped


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
    Route("POST", "oauth/tokens", "getToken", "Get a token with the OAuth2 client-credentials grant (form-encoded; "
          "served with rest_auth = oauth2)", prefixed=False),
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
    Route("GET", "namespaces/{namespace}/tables/{table}", "loadTable",
          "Load a table's metadata (with its ETag; If-None-Match with it: 304 and no body)", query=("snapshots",)),
    Route("HEAD", "namespaces/{namespace}/tables/{table}", "tableExists", "Whether a table exists", status=204),
    Route("POST", "namespaces/{namespace}/tables/{table}", "updateTable",
          "Commit requirements and updates to a table (compare-and-swap of its metadata location)", body=True),
    Route("DELETE", "namespaces/{namespace}/tables/{table}", "dropTable",
          "Drop a table; with purgeRequested=true also delete its data and metadata files", status=204,
          query=("purgeRequested",)),
    Route("POST", "namespaces/{namespace}/tables/{table}/metrics", "reportMetrics",
          "Report a scan's or a commit's metrics (checked, then kept in a bounded summary)", status=204, body=True),
    Route("POST", "tables/rename", "renameTable", "Rename a table", status=204, body=True),
    Route("POST", "transactions/commit", "commitTransaction",
          "Commit changes to several tables atomically: all change or none", status=204, body=True),
)
_COMPILED = [(r, r.pattern()) for r in ROUTES]
_ROOTS = {r.path.split("/")[0] for r in ROUTES}
PUBLIC = frozenset({"getToken", "getOpenApi"})  # served without a token when rest_auth = oauth2
AUTHENTICATION = "AUTHENTICATION"  # the audit line's `denied` for a caller refused for who it is (401)
# JSON escapes of NUL and of UTF-16 surrogates: a lone surrogate is no text (it cannot be written to a file or
# a database as UTF-8), and NUL is refused by PostgreSQL and is in no Iceberg or Hive name or value
_SUSPECT_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
_HOST = re.compile(r"(?:[A-Za-z0-9.\-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?")


def endpoints() -> list[str]:
    """The endpoints announced in /v1/config, in the spec's notation."""
    return [f"{r.method} /v1/{{prefix}}/{r.path}" for r in ROUTES if r.prefixed]


def _responses(r: Route) -> dict[str, Any]:
    """The responses of route `r` in the OpenAPI description."""
    error = {"$ref": "#/components/schemas/ErrorModel"}
    if r.operation == "getToken":
        oauth_error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/OAuthError"}}}}
        return {"200": {"description": "OAuthTokenResponse: access_token, token_type bearer, expires_in",
                        "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"description": "invalid_request, unsupported_grant_type, invalid_scope", **oauth_error},
                "401": {"description": "invalid_client", **oauth_error}}
    responses: dict[str, Any] = {
        str(r.status): {"description": "OK"} if r.status == 204 or r.method == "HEAD" else
        {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}}
    codes = [(400, "BadRequestException: malformed request, unknown update or requirement type"),
             (404, "NoSuchNamespaceException / NoSuchTableException"),
             (409, "AlreadyExistsException / CommitFailedException / NamespaceNotEmptyException"),
             (500, "ServiceFailureException")]
    if r.operation not in PUBLIC:
        codes += [(401, "NotAuthorizedException: no bearer token, or an expired or invalid one (rest_auth = oauth2)"),
                  (403, "ForbiddenException: the caller lacks a privilege the operation needs")]
    for code, what in sorted(codes):
        if code == 409 and r.method in ("GET", "HEAD"):
            continue
        responses[str(code)] = {"description": what, "content": {"application/json": {"schema": error}}}
    if r.operation in ("loadTable", "createTable", "registerTable", "updateTable"):
        responses[str(r.status)]["headers"] = {"ETag": {"description": "The version of the table metadata answered",
                                                        "schema": {"type": "string"}}}
    if r.operation == "loadTable":
        responses["304"] = {"description": "Not Modified: If-None-Match names the current metadata's ETag"}
    return responses


def openapi(base_url: str | None = None) -> dict[str, Any]:
    """An OpenAPI 3 description of the routes served (the Iceberg REST catalog's subset implemented here)."""
    paths: dict[str, dict[str, Any]] = {}
    for r in ROUTES:
        path = f"/v1/{{prefix}}/{r.path}" if r.prefixed else f"/v1/{r.path}"
        params: list[dict[str, Any]] = [
            {"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
            for n in re.findall(r"\{(\w+)\}", path)]
        params += [{"name": q, "in": "query", "required": False, "schema": {"type": "string"}} for q in r.query]
        if r.operation == "loadTable":
            params.append({"name": "If-None-Match", "in": "header", "required": False, "schema": {"type": "string"}})
        op: dict[str, Any] = {"operationId": r.operation, "summary": r.summary, "parameters": params,
                              "responses": _responses(r)}
        if r.body:
            op["requestBody"] = {"required": True,
                                 "content": {"application/json": {"schema": {"type": "object"}}}}
        if r.operation == "getToken":
            op["requestBody"] = {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": {
                "type": "object", "required": ["grant_type"], "properties": {
                    k: {"type": "string"} for k in ("grant_type", "client_id", "client_secret", "scope",
                                                   "subject_token", "subject_token_type")}}}}}
        if r.operation in PUBLIC:
            op["security"] = []
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
                "message": {"type": "string"}, "type": {"type": "string"}, "code": {"type": "integer"}}}}},
            "OAuthError": {"type": "object", "required": ["error"], "properties": {
                "error": {"type": "string"}, "error_description": {"type": "string"}}}},
            # with rest_auth = oauth2 every operation but the public ones needs a bearer token
            "securitySchemes": {"BearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}}},
        "security": [{"BearerAuth": []}],
    }
    if base_url:
        doc["servers"] = [{"url": base_url}]
    return doc


def config(endpoints: list[str], defaults: dict[str, str] | None = None) -> JsonObject:
    """GET /v1/config: the defaults (with OAuth2: oauth2-server-uri, the token endpoint), no overrides, the
    endpoints served."""
    return {"defaults": defaults or {}, "overrides": {}, "endpoints": endpoints}


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


class _Handler(BoundedHandler):
    """The routes: each request's path matched against ROUTES, the operation called, its result or error
    answered in the spec's error model."""

    server_version = f"metastore/{__version__}"
    api: _LazyApi
    base_url: str
    audit: AuditLog | None = None
    auth: OAuth2 | None = None  # rest_auth = oauth2: every operation but PUBLIC needs a valid bearer token
    _extra_headers: tuple[tuple[str, str], ...] = ()  # sent with the next answer (end_headers)
    _record: identity.Call | None = None  # the current call's audit record, until its line is written
    _outcome: BaseException | None = None  # the error the current call is answered with

    @classmethod
    def error_body(cls, code: int, message: str, kind: str = "") -> bytes:
        kind = kind or ("ServiceUnavailableException" if code == 503 else "UnsupportedOperationException"
                        if code == 501 else "BadRequestException" if code < 500 else "ServiceFailureException")
        if len(message) > MAX_ERROR_MESSAGE:  # the client's text is not sent back whole (a body is up to 8 MiB)
            message = message[:MAX_ERROR_MESSAGE] + "..."
        return json.dumps(RestError(code, kind, message).body()).encode()

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

    def end_headers(self) -> None:
        for name, value in self._extra_headers:
            self.send_header(name, value)
        self._extra_headers = ()
        super().end_headers()

    def _dispatch(self, method: str) -> None:
        # authenticated first, so that the principal encloses the audit record (a refusal is logged as
        # "anonymous" with its result)
        principal, refused = self._authenticate(method)
        with identity.acting_as(principal) if principal is not None else contextlib.nullcontext():
            if self.audit is None:
                self._answer(method, refused)
                return
            with identity.calling(method) as record:  # _handle names the operation once it is routed
                if refused is not None:
                    record.method = self._operation(method) or method
                self._record, self._outcome = record, None
                try:
                    self._answer(method, refused)
                except BaseException as e:  # failed before an answer went out (a client gone within its body)
                    self._audit_line(e)
                    raise
                finally:
                    self._audit_line(None)  # (a call answered has its line already)

    def _audit_line(self, error: BaseException | None) -> None:
        """The call's audit line, once: written before its answer is sent (send_body), so that a call is
        logged with its own result even when the client is gone before it reads the answer, and the line is
        in the log when the client has the answer."""
        record, self._record = self._record, None
        if record is None or self.audit is None:
            return
        try:
            self.audit.record("rest", record, error)
        except (OSError, ValueError) as e:  # the answer still goes out; the failure is the operator's to see
            log.error("cannot write the audit log %s: %s", self.audit.path, e)

    def send_body(self, status: int, body: bytes | None, content_type: str = "application/json") -> None:
        self._audit_line(self._outcome)
        if status == 304:  # no body, and no Content-Length (it would describe the 200's body)
            self.clock.writing()
            try:
                self.send_response(304)
                if self.close_connection or self.unread:
                    self.close_connection = True
                    self.send_header("Connection", "close")
                self.end_headers()
            except OSError as e:
                raise Gone(f"answer not taken: {e}") from None
            return
        super().send_body(status, body, content_type)

    def _operation(self, method: str) -> str | None:
        """The operation the request names, if it names one (without answering anything)."""
        segments = urlsplit(self.path).path.strip("/").split("/")
        if segments[:1] != ["v1"] or len(segments) < 2:
            return None
        parts = segments[1:]
        if parts[0] not in _ROOTS and len(parts) > 1:
            parts = parts[1:]
        try:
            return self._route(method, parts)[0].operation
        except RestError:
            return None

    def _authenticate(self, method: str) -> tuple[identity.Principal | None, NotAuthorizedException | None]:
        """With OAuth2: the request's principal, or the refusal of a request without a valid token (its
        principal "anonymous"). Without: the server's own rights (as before), with the client's address when
        there is an audit log (which named no address for any REST call)."""
        host, port = self.client_address[:2]
        address = f"{host}:{port}"
        if self.auth is None:
            return (dataclasses.replace(identity.SERVER, address=address) if self.audit is not None else None), None
        anonymous = identity.Principal("anonymous", address=address)
        if self._operation(method) in PUBLIC:
            return anonymous, None
        try:
            who = self.auth.authenticate(self.headers.get_all("Authorization") or [])
        except AuthFailed as e:
            return anonymous, NotAuthorizedException(e.message, e.error)
        except Exception:  # a bug while checking: refused (never let in), logged, the server goes on
            log.exception("checking a bearer token failed")
            return anonymous, NotAuthorizedException("the token could not be checked; see the server log")
        return identity.Principal(who.user, method=identity.OAUTH2, full_name=who.subject, address=address), None

    def _answer(self, method: str, refused: NotAuthorizedException | None = None) -> None:
        """Handle the request (or answer its refusal); `_outcome` is the error it is answered with, if any
        (set before the answer is sent: the audit line is written then)."""
        try:
            if refused is not None:
                raise refused
            self._handle(method)
        except (RequestTimeout, Gone):
            raise
        except NotAuthorizedException as e:
            self._outcome = e
            _denied(AUTHENTICATION)
            self._extra_headers = (("WWW-Authenticate", e.challenge),)
            self.send_error_body(e)
        except HttpError as e:  # a RestError, or a refused request (Content-Length, body size)
            self._outcome = e
            self.send_error_body(e)
        except TokenRequestError as e:  # the token endpoint's refusals, in the spec's OAuthError model
            self._outcome = e
            if e.status == 401 or e.error == "invalid_grant":  # the client's secret, or the token to refresh
                _denied(AUTHENTICATION)
            headers = [("Cache-Control", "no-store"), ("Pragma", "no-cache")]
            if e.status == 401:
                headers.append(("WWW-Authenticate", 'Basic realm="metastore"'))
            self._extra_headers = tuple(headers)
            self.send_body(e.status, json.dumps(e.body()).encode())
        except (AccessDenied, NotAuthenticated) as e:  # the catalog's refusals: 403, 401
            self._outcome = e
            refusal = access_error(e)
            assert refusal is not None
            if isinstance(refusal, NotAuthorizedException):
                _denied(AUTHENTICATION)
                self._extra_headers = (("WWW-Authenticate", refusal.challenge),)
            self.send_error_body(refusal)
        except CatalogError as e:  # anything the operations did not map themselves
            self._outcome = e
            self.send_error_body(RestError(500, "ServiceFailureException", e.message))
        except Exception as e:  # a bug or an unexpected failure: answered, logged, the server goes on
            self._outcome = e
            log.exception("%s %r failed", method, self.path)  # the path is the client's: repr escapes it
            # an unexpected error's text may quote a file or a setting: the log has it, the client does not
            self.send_error_body(RestError(500, "ServiceFailureException",
                                           f"Internal error ({e.__class__.__name__}); see the server log"))

    def _body(self) -> JsonValue:
        if "Transfer-Encoding" not in self.headers and self.headers.get("Content-Length") is None:
            raise bad_request("A JSON request body is required (with Content-Length)")
        raw = self.read_body()
        # json.loads makes a Python object of every {} and []: ~70 bytes each, so a body of nothing but
        # '{},' costs ~24 times its size. Counted first (a C scan, brackets inside strings included: it errs
        # towards refusing) against a budget far above what a real commit holds.
        containers = raw.count(b"{") + raw.count(b"[")
        if containers > MAX_JSON_CONTAINERS:
            raise RestError(413, "BadRequestException",
                            f"Request body too complex ({containers} objects and arrays, "
                            f"at most {MAX_JSON_CONTAINERS})")
        try:
            value: JsonValue = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise bad_request(f"Malformed JSON in the request body: {e}") from None
        except RecursionError:  # [[[[...: nested deeper than the parser goes
            raise bad_request("Malformed JSON in the request body: nested too deeply") from None
        if _SUSPECT_ESCAPE.search(raw):  # rare: only then is every string looked at
            _check_text(value)
        return value

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
        record = identity.current_call()
        if record is not None:
            record.method = route.operation
        if route.operation == "getToken":
            self._token()
            return
        # blank values kept: an empty pageToken asks for the first page
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        body = self._body() if route.body else None
        if not route.body:
            self.discard_body()
        result = self._call(route.operation, params, query, body)
        tag = getattr(result, "etag", "")  # a table's metadata (iceberg.Tagged): its ETag
        if tag:
            self._extra_headers = (("ETag", tag),)
        if route.operation == "loadTable" and result is None:  # If-None-Match named the current metadata
            self.send_body(304, None)
        elif route.status == 204 or method == "HEAD":
            self.send_body(204, None)
        elif isinstance(result, str):
            self.send_body(route.status, result.encode())
        else:
            self.send_body(route.status, json.dumps(result).encode())

    def _token(self) -> None:
        """POST /v1/oauth/tokens: a form-encoded token request answered with the spec's OAuthTokenResponse."""
        if self.auth is None:
            raise RestError(404, "NoSuchEndpointException",
                            "No token endpoint: this server does not authenticate REST clients (rest_auth = none)")
        from .oauth import MAX_FORM_BYTES

        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise TokenRequestError(400, "invalid_request", "the request must be application/x-www-form-urlencoded")
        try:  # the endpoint's refusals are OAuthError's, the body's framing included
            if self.content_length() > MAX_FORM_BYTES:  # the body stays unread: the connection closes after
                raise TokenRequestError(400, "invalid_request", f"request larger than {MAX_FORM_BYTES} bytes")
            body = self.read_body()
        except HttpError as e:
            raise TokenRequestError(e.code, "invalid_request", e.message) from None
        answer = self.auth.token(body, self.headers.get("Authorization"), str(self.client_address[0]))
        self._extra_headers = (("Cache-Control", "no-store"), ("Pragma", "no-cache"))
        self.send_body(200, json.dumps(answer).encode())

    def _defaults(self) -> dict[str, str]:
        """/v1/config's defaults: with OAuth2, the token endpoint (PyIceberg's and Iceberg's
        oauth2-server-uri), at the host the client addressed when its Host header is a plain host[:port]."""
        if self.auth is None:
            return {}
        host = self.headers.get("Host") or ""
        base = f"http://{host}" if _HOST.fullmatch(host) else self.base_url
        return {"oauth2-server-uri": f"{base}/v1/oauth/tokens"}

    def _call(self, op: str, p: dict[str, str], q: dict[str, str], body: JsonValue) -> Answer:
        ns, table = p.get("namespace", ""), p.get("table", "")
        calls: dict[str, Callable[[], Answer]] = {
            "getConfig": lambda: config(endpoints(), self._defaults()),
            "getOpenApi": lambda: openapi(self.base_url),
            "listNamespaces": lambda: self.api.get().list_namespaces(q.get("parent"), q.get("pageToken"),
                                                                     q.get("pageSize")),
            "createNamespace": lambda: self.api.get().create_namespace(body),
            "loadNamespaceMetadata": lambda: self.api.get().load_namespace(ns),
            "namespaceExists": lambda: self.api.get().namespace_exists(ns),
            "dropNamespace": lambda: self.api.get().drop_namespace(ns),
            "updateProperties": lambda: self.api.get().update_namespace_properties(ns, body),
            "listTables": lambda: self.api.get().list_tables(ns, q.get("pageToken"), q.get("pageSize")),
            "createTable": lambda: self.api.get().create_table(ns, body),
            "registerTable": lambda: self.api.get().register_table(ns, body),
            "loadTable": lambda: self.api.get().load_table(ns, table, q.get("snapshots"),
                                                           self.headers.get("If-None-Match")),
            "tableExists": lambda: self.api.get().table_exists(ns, table),
            "updateTable": lambda: self.api.get().commit_table(ns, table, body),
            "dropTable": lambda: self.api.get().drop_table(ns, table, _flag(q.get("purgeRequested"), "purgeRequested")),
            "reportMetrics": lambda: self.api.get().report_metrics(ns, table, body),
            "renameTable": lambda: self.api.get().rename_table(body),
            "commitTransaction": lambda: self.api.get().commit_transaction(body),
        }
        return calls[op]()


def _check_text(value: JsonValue) -> None:
    """Refuse (400) a JSON value with a string, or an object key, that is not UTF-8 text or holds NUL."""
    stack = [value]
    while stack:
        v = stack.pop()
        texts: list[str] = []
        if isinstance(v, dict):
            texts = list(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str):
            texts = [v]
        for t in texts:
            if "\0" in t:
                raise bad_request("A string in the request body holds NUL (\\u0000)")
            try:
                t.encode("utf-8")
            except UnicodeEncodeError:
                raise bad_request("A string in the request body is not text: it holds a lone UTF-16 surrogate "
                                  "escape") from None


def _denied(what: str) -> None:
    """The audit line of the current call says it was refused for `what` (unless the authorizer named the
    privilege it refused already)."""
    call = identity.current_call()
    if call is not None and call.denied is None:
        call.denied = what


def _flag(value: str | None, name: str) -> bool:
    if value is None:
        return False
    v = value.strip().lower()
    if v in ("true", "1"):
        return True
    if v in ("false", "0", ""):
        return False
    raise bad_request(f"{name} must be true or false, not {value!r}")


class RestServer:
    """The REST catalog on its own port, served from a background thread beside the Thrift server."""

    def __init__(self, catalog: Catalog, host: str, port: int, limits: FrontLimits | None = None,
                 max_request_bytes: int = MAX_BODY, audit: AuditLog | None = None, auth: OAuth2 | None = None) -> None:
        self.host, self.port = host, port
        self.audit = audit
        self.auth = auth
        self.catalog = catalog
        self.limits = limits or FrontLimits()
        self.max_request_bytes = max_request_bytes
        self._httpd: BoundedHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def bind(self) -> int:
        """Listen on the port (0: any free port); returns the port."""
        handler = self._handler_class()
        self._httpd = BoundedHTTPServer((self.host, self.port), handler, self.limits, "REST")
        self.port = self._httpd.server_address[1]
        handler.base_url = self.url  # the port is known now
        return self.port

    def adopt(self, sock: socket.socket) -> None:
        """Serve on a socket already listening (a worker process shares its parent's)."""
        handler = self._handler_class()
        self._httpd = BoundedHTTPServer((self.host, self.port), handler, self.limits, "REST",
                                        bind_and_activate=False)
        self._httpd.socket.close()
        self._httpd.socket = sock
        self.port = sock.getsockname()[1]
        handler.base_url = self.url

    @property
    def socket(self) -> socket.socket:
        assert self._httpd is not None
        return self._httpd.socket

    def _handler_class(self) -> type[_Handler]:
        api, url, max_body = _LazyApi(self.catalog), self.url, self.max_request_bytes

        class Handler(_Handler):  # this server's: its catalog, URL and body cap
            pass

        Handler.api, Handler.base_url, Handler.max_body, Handler.audit = api, url, max_body, self.audit
        Handler.auth = self.auth
        return Handler

    def start(self) -> None:
        assert self._httpd is not None, "bind() or adopt() first"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="iceberg-rest", daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._httpd is not None:
            if self._thread is not None:
                self._httpd.shutdown()
            self._httpd.server_close()
