"""catalogd assembled: cache, loader, event processor, topic publisher, Thrift front and HTTP endpoint.

HTTP endpoint (JSON, on --http-port, default the Thrift port + 1):
  GET /status                          status and metrics (`metastore catalogd status` prints it)
  GET /topic?name=N&from=V&wait=S&service=ID
                                       topic updates after catalog version V (long-poll up to S seconds);
                                       asking from V acknowledges V for subscriber N (SYNC_DDL counts on it).
                                       V is a version this catalogd published, as Impala's statestore topic
                                       versions are: 0 (or absent) asks for a full update; a negative V is a
                                       400; a V beyond the last published version (another catalogd's, say,
                                       before a restart) is answered as 0 -- a full update to resynchronize
                                       from -- and acknowledges nothing, so no SYNC_DDL counts on it.
                                       ID, the catalog service id the subscriber's V came from: another
                                       catalogd's (a restart) is answered likewise with a full update
  GET /object?kind=table&key=db.t      one object (minimal topic mode: subscribers fetch on demand)
  GET /sync?event=N&timeout=S          SYNC_DDL wait for event N: 200, or 504 with the timeout error
Every answer of /topic and /sync (and /status) carries `service_id`, the catalog service id: new at every start
of catalogd (Impala's catalogServiceId), since the catalog versions it gives are numbered anew at every start.
A client's wait (S) is a finite number of seconds, at most MAX_TOPIC_WAIT, or MAX_SYNC_WAIT (--sync-ddl-timeout
if longer): a connection holds its thread while it waits. A request that fails inside catalogd is answered 500
with a generic error (the traceback goes to catalogd's log, never to the client).
"""

from __future__ import annotations

import json
import logging
import math
import ssl
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable
from typing import Any, ClassVar

from ..config import load as load_settings
from ..server.http import BoundedHandler, BoundedHTTPServer, Gone, RequestTimeout
from ..server.workers import FrontLimits, front_limits, small_thread_stacks
from ..thrift import hms
from ..thrift.client import MetastoreClient
from .bootstrap import bootstrap
from .catalog import CatalogCache, FileMeta, list_files
from .front import Front
from .loader import TableLoader
from .processor import Processor, make_processor
from .syncddl import SyncDdlTimeout, wait_for_event
from .topics import Publisher, TopicBuilder, snapshot_table
from .wire import object_to_json, update_to_json

log = logging.getLogger(__name__)


class CatalogdService:
    def __init__(self, metastore: str, hierarchical: bool = True, host: str = "127.0.0.1", port: int = 9084,
                 http_port: int | None = None, blacklist_dbs: list[str] | None = None,
                 blacklist_tables: list[str] | None = None, topic_mode: str = "full", gc_every: int = 10,
                 sync_ddl: bool = False, sync_ddl_timeout: float = 30.0, sync_reads: bool = False,
                 loader_threads: int = 4, db_executors: int = 4, table_executors_per_db: int = 4,
                 file_lister: Callable[[str | None], list[FileMeta]] | None = None, topic_interval: float = 0.05,
                 poll_interval: float = 0.05, max_outstanding: int = 5000, load_in_background: bool = True,
                 limits: FrontLimits | None = None, max_message_bytes: int | None = None,
                 tls: ssl.SSLContext | None = None) -> None:
        self.started = time.time()
        # new at every start: the versions below are this catalogd's own (topics.py, subscriber.py)
        self.service_id = uuid.uuid4().hex
        self.metastore = MetastoreClient(metastore, retry_reads=True)
        # file_lister: how a location's files are listed (catalog.list_files: local and file: locations)
        self.cache = CatalogCache(file_lister or list_files, set(blacklist_dbs or ()),
                                  set(blacklist_tables or ()), keep_history=False)
        self.loader = TableLoader(self.cache, self.metastore, loader_threads)
        self.host, self.port = host, port
        self.http_port = http_port
        self.hierarchical = hierarchical
        self.proc_kw: dict[str, Any] = {"poll_interval": poll_interval}
        if hierarchical:
            self.proc_kw.update(db_executors=db_executors, table_executors_per_db=table_executors_per_db,
                                max_outstanding=max_outstanding)
        self.processor: Processor | None = None
        self.publisher = Publisher(TopicBuilder(self.cache, topic_mode, gc_every, self.service_id), topic_interval)
        self.sync_ddl = sync_ddl
        self.sync_ddl_timeout = sync_ddl_timeout
        self.front = Front(self, sync_reads=sync_reads)
        self.load_in_background = load_in_background
        # the fronts' bounds: given, or the metastore's settings (METASTORE_MAX_CONNECTIONS, ..._IDLE_TIMEOUT,
        # ..._READ_TIMEOUT, ..._MAX_MESSAGE_BYTES, or METASTORE_CONFIG's file), as `metastore serve` takes them
        self.limits, self.max_message_bytes = limits, max_message_bytes
        # TLS on the Thrift front (server/tls.py's context, as `metastore serve` builds it from hive.metastore.use.SSL
        # and its keystore): every connection completes its handshake first; a plain client is closed
        self.tls = tls
        self._thrift: Any = None
        self._http: BoundedHTTPServer | None = None
        self._threads: list[threading.Thread] = []

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self, serve: bool = True) -> CatalogdService:
        start = bootstrap(self.cache, self.metastore)
        self.processor = make_processor(self.hierarchical, self.cache, self.metastore, self.loader, start,
                                        **self.proc_kw)
        self.processor.start()
        if self.load_in_background:
            self.loader.request_all_incomplete()
        self.publisher.start()
        if serve:
            from ..server.thrift_server import ThriftServer
            if self.limits is None or self.max_message_bytes is None:
                settings = load_settings()
                if self.limits is None:
                    self.limits = front_limits(settings, fronts=2)
                if self.max_message_bytes is None:
                    self.max_message_bytes = settings.max_message_bytes
            small_thread_stacks()  # a connection costs a thread, as in `metastore serve`
            self._thrift = ThriftServer(self.front, self.host, self.port, max_message_bytes=self.max_message_bytes,
                                        limits=self.limits, tls=self.tls)
            self.port = self._thrift.bind()
            self._spawn(self._thrift.serve_forever, "catalogd-thrift")
            self._http = BoundedHTTPServer((self.host, self.http_port if self.http_port is not None
                                            else self.port + 1), _endpoint(self), self.limits, "catalogd HTTP")
            self.http_port = self._http.server_address[1]
            self._spawn(self._http.serve_forever, "catalogd-http")
        return self

    def _spawn(self, fn: Any, name: str) -> None:
        t = threading.Thread(target=fn, name=name, daemon=True)
        t.start()
        self._threads.append(t)

    def close(self) -> None:
        if self._thrift is not None:
            self._thrift.close()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        self.publisher.stop()
        if self.processor is not None:
            self.processor.stop()
        self.loader.close()
        self.metastore.close()

    # -- waits ----------------------------------------------------------------------------------------
    def sync_to_latest(self, timeout: float = 30.0) -> None:
        assert self.processor is not None
        eid = self.metastore.current_event_id()
        if self.processor.synced_event_id < eid:
            self.processor.wake()
        if not self.processor.wait_synced(eid, timeout):
            raise hms.MetaException(message=f"catalogd: not synced to the metastore's event {eid} within "
                                            f"{timeout:g}s (at {self.processor.synced_event_id})")

    def after_write(self) -> None:
        """After a call passed through that may have changed something: read-your-writes, or SYNC_DDL."""
        assert self.processor is not None
        eid = self.metastore.current_event_id()
        self.processor.wake()
        if self.sync_ddl:
            try:
                wait_for_event(self, eid, self.sync_ddl_timeout)
            except SyncDdlTimeout as e:
                raise hms.MetaException(message=f"{e} (the change itself was made)") from None
        elif not self.processor.wait_synced(eid, 30.0):
            log.warning("cache not synced to event %s after a write", eid)

    def wait_for_event(self, event_id: int, timeout: float | None = None) -> int:
        return wait_for_event(self, event_id, self.sync_ddl_timeout if timeout is None else timeout)

    # -- objects --------------------------------------------------------------------------------------
    def fetch(self, kind: str, key: str) -> Any:
        if kind == "database":
            d = self.cache.dbs.get(key)
            return (d.obj, dict(d.functions)) if d else None
        db, name = key.split(".", 1)
        t = self.cache.table(db, name)
        if t is None:
            return None
        if not t.complete:
            t = self.loader.ensure_loaded(db, name) or t
        return snapshot_table(t)

    def status(self) -> dict[str, Any]:
        assert self.processor is not None
        pub, b = self.publisher, self.publisher.builder
        return {"service_id": self.service_id, "metastore": self.metastore.uri, "thrift_port": self.port,
                "http_port": self.http_port,
                "uptime_s": round(time.time() - self.started, 1), "processor": self.processor.status(),
                "catalog": self.cache.stats(),
                "loader": {"loads": self.loader.loads, "failures": self.loader.failures,
                           "queued": self.loader.queued(), "load_seconds": round(self.loader.load_seconds, 3)},
                "topics": {"mode": b.mode, "updates": b.updates, "last_version": b.last_version,
                           "log_entries": len(b.log), "sent_anyway": b.sent_anyway, "gcs": b.gcs,
                           "subscribers": dict(pub.acked)},
                "front": {"cache_hits": self.front.hits, "cache_misses": self.front.misses,
                          "passed_through": self.front.passed},
                "sync_ddl": self.sync_ddl}


MAX_TOPIC_WAIT = 30.0  # seconds a /topic long-poll may wait
MAX_SYNC_WAIT = 300.0  # seconds a /sync may wait


class _BadRequest(ValueError):
    """A 400 whose message names the parameter, never the client's text."""


def _param(q: dict[str, str], key: str) -> str:
    if key not in q:
        raise _BadRequest(f"missing parameter {key}")
    return q[key]


def _whole(q: dict[str, str], key: str, default: int | None = None) -> int:
    if key not in q and default is not None:
        return default
    try:
        return int(_param(q, key))
    except ValueError:
        raise _BadRequest(f"{key} is not a whole number") from None


def _seconds(q: dict[str, str], key: str, default: float, most: float) -> float:
    """The query's wait `key` in seconds, within [0, most]; a 400 for one that is not a finite number (nan and
    inf would wait without end)."""
    try:
        s = float(q[key]) if key in q else default
    except ValueError:
        s = math.nan
    if not math.isfinite(s):
        raise _BadRequest(f"{key} is not a finite number of seconds")
    return min(max(s, 0.0), most)


class _Endpoint(BoundedHandler):
    """catalogd's HTTP endpoint on the shared bounded server (server/http.py: connection cap answered 503, the
    fronts' clocks, request line and header caps). GETs only, one request a connection (HTTP/1.0), so a body
    (never read: no route takes one) is never taken for a next request."""

    protocol_version = "HTTP/1.0"
    svc: ClassVar[CatalogdService]

    def _send(self, code: int, doc: Any) -> None:
        self.send_body(code, json.dumps(doc).encode("utf-8"))

    def do_GET(self) -> None:  # noqa: N802
        svc = self.svc
        u = urllib.parse.urlsplit(self.path)
        q = {k: v[0] for k, v in urllib.parse.parse_qs(u.query).items()}
        try:
            if u.path == "/status":
                self._send(200, svc.status())
            elif u.path == "/topic":
                name, frm = q.get("name", "anonymous"), _whole(q, "from", 0)
                if frm < 0:
                    raise _BadRequest("from is negative (catalog versions start at 0)")
                pub = svc.publisher
                if frm > pub.sent_version or q.get("service", svc.service_id) != svc.service_id:
                    frm = 0  # not a version of ours: a full update, nothing acknowledged
                if name not in pub.acked:
                    pub.register(name)
                pub.ack(name, frm)
                ups, complete = pub.updates_since(frm, _seconds(q, "wait", 0.0, MAX_TOPIC_WAIT))
                if frm == 0 or not complete:
                    ups = [pub.full_update()]
                self._send(200, {"service_id": svc.service_id, "updates": [update_to_json(x) for x in ups]})
            elif u.path == "/object":
                kind, key = _param(q, "kind"), _param(q, "key")
                if kind != "database" and "." not in key:
                    raise _BadRequest("key is not <database>.<table>")
                self._send(200, object_to_json(kind, svc.fetch(kind, key)))
            elif u.path == "/sync":
                try:
                    # at most MAX_SYNC_WAIT, or the server's own SYNC_DDL timeout if longer
                    most = max(MAX_SYNC_WAIT, svc.sync_ddl_timeout)
                    v = svc.wait_for_event(_whole(q, "event"), _seconds(q, "timeout", svc.sync_ddl_timeout, most))
                    self._send(200, {"version": v, "service_id": svc.service_id})
                except SyncDdlTimeout as e:
                    self._send(504, {"error": str(e), "service_id": svc.service_id})
            else:
                self._send(404, {"error": f"no such endpoint: {u.path}"})
        except _BadRequest as e:
            self._send(400, {"error": f"bad request: {e}"})
        except (Gone, RequestTimeout):
            raise  # the client went: nothing to answer (the server closes the connection)
        except Exception:  # noqa: BLE001 - any failure is answered; what failed stays in the log
            log.exception("catalogd HTTP GET %r failed", u.path[:200])
            self.close_connection = True
            self._send(500, {"error": "internal error in catalogd (see its log)"})


def _endpoint(svc: CatalogdService) -> type[_Endpoint]:
    return type("CatalogdEndpoint", (_Endpoint,), {"svc": svc})
