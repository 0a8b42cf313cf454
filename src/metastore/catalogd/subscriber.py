"""The subscriber library: a local replica of catalogd's catalog, kept from topic updates, answering reads.

In-process: Subscriber(name, service) registers with the service's publisher, which delivers each update
(and counts it as acknowledged once applied). Remote: Subscriber(name, "http://HOST:PORT") long-polls catalogd's
HTTP endpoint GET /topic?name=N&from=V (asking from V acknowledges V). A replica that missed updates (a gap)
starts over from a full update. Every update names the catalog service id of the catalogd that made it (new at
every start of catalogd, whose versions are numbered anew): a replica that sees an id other than its own drops
everything it holds and starts over from a full update, as Impala's impalads do when the catalog service id
changes; a remote subscriber sends its id with each poll, and catalogd answers another's with a full update.
In minimal topic mode updates carry names and versions only: a read of an
object whose replica copy is older than its announced version fetches it from catalogd.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.parse
import urllib.request
from typing import Any

from .topics import TableSnapshot, TopicEntry, TopicUpdate
from .wire import Decoder

log = logging.getLogger(__name__)


class NotInReplica(LookupError):
    pass


class Replica:
    def __init__(self, fetch: Any = None) -> None:
        self.version = 0
        self.service_id = ""  # the catalogd whose versions these are ("" before the first update)
        self.resets = 0  # how many times a new catalog service id made the replica drop its state
        self.databases: dict[str, tuple[Any, dict[str, Any]]] = {}
        self.tables: dict[str, TableSnapshot | None] = {}
        self.announced: dict[str, int] = {}  # "kind:key" -> version announced (minimal mode)
        self.have: dict[str, int] = {}  # "kind:key" -> version held
        self.fetch = fetch
        self.lock = threading.RLock()
        self.applied = threading.Condition(self.lock)

    def apply(self, up: TopicUpdate) -> bool:
        """Applies an update; False when it does not follow the replica's version (a gap: take a full one), or
        when it is not a full update and comes from another catalog service than the replica's (a restarted
        catalogd): then the replica has dropped its state, and takes a full update next."""
        with self.lock:
            full = up.from_version == 0 and not up.deletions
            if up.service_id and self.service_id and up.service_id != self.service_id and not full:
                log.info("catalog service id changed (%s -> %s): dropping the replica (version %s)",
                         self.service_id, up.service_id, self.version)
                self.databases, self.tables, self.announced, self.have = {}, {}, {}, {}
                self.version, self.service_id = 0, ""
                self.resets += 1
                self.applied.notify_all()
                return False
            if up.from_version > self.version:
                return False
            if full:
                # a full update replaces everything, one of a lower version too: a catalogd restarted numbers
                # its versions anew, and what it no longer has (dropped while it was down) must go
                self.databases, self.tables, self.announced, self.have = {}, {}, {}, {}
                self.version = up.to_version
                if self.service_id and up.service_id != self.service_id:
                    self.resets += 1
            if up.service_id:
                self.service_id = up.service_id
            for e in up.entries:
                self._entry(e)
            for d in up.deletions:
                if d.kind == "database":
                    self.databases.pop(d.key, None)
                    for k in [k for k in self.tables if k.split(".", 1)[0] == d.key]:
                        self._drop_table(k)
                elif d.kind == "table":
                    self._drop_table(d.key)
                elif d.kind == "function":
                    db, fn = d.key.split(".", 1)
                    if db in self.databases:
                        self.databases[db][1].pop(fn, None)
            self.version = max(self.version, up.to_version)
            self.applied.notify_all()
            return True

    def _drop_table(self, key: str) -> None:
        self.tables.pop(key, None)
        self.announced.pop(f"table:{key}", None)
        self.have.pop(f"table:{key}", None)

    def _entry(self, e: TopicEntry) -> None:
        lk = f"{e.kind}:{e.key}"
        self.announced[lk] = e.version
        if e.obj is None:
            if e.kind == "table":
                self.tables.setdefault(e.key, None)
            return
        self.have[lk] = e.version
        if e.kind == "database":
            self.databases[e.key] = e.obj
        else:
            self.tables[e.key] = e.obj

    def _ensure(self, kind: str, key: str) -> None:
        lk = f"{kind}:{key}"
        if self.fetch is not None and self.have.get(lk, -1) < self.announced.get(lk, -1):
            obj = self.fetch(kind, key)
            if obj is not None:
                self._entry(TopicEntry(kind, key, self.announced[lk], obj))

    # -- reads ----------------------------------------------------------------------------------------
    def get_database(self, name: str) -> Any:
        name = name.lower()
        with self.lock:
            if name not in self.databases and f"database:{name}" in self.announced:
                self._ensure("database", name)
            if name not in self.databases:
                raise NotInReplica(f"database {name} is not in the replica")
            return self.databases[name][0]

    def database_names(self) -> list[str]:
        with self.lock:
            return sorted({k.split(":", 1)[1] for k in self.announced if k.startswith("database:")}
                          | set(self.databases))

    def table_names(self, db: str) -> list[str]:
        db = db.lower()
        with self.lock:
            return sorted(k.split(".", 1)[1] for k in self.tables if k.split(".", 1)[0] == db)

    def table(self, db: str, name: str) -> TableSnapshot:
        key = f"{db.lower()}.{name.lower()}"
        with self.lock:
            if key in self.tables:
                self._ensure("table", key)
            t = self.tables.get(key)
            if t is None and key not in self.tables:
                raise NotInReplica(f"table {key} is not in the replica")
            if t is None:
                raise NotInReplica(f"table {key} is in the replica by name only (not loaded yet)")
            return t

    def get_table(self, db: str, name: str) -> Any:
        t = self.table(db, name)
        if t.obj is None:
            raise NotInReplica(f"table {db}.{name} is not loaded yet")
        return t.obj

    def get_partitions(self, db: str, name: str) -> list[Any]:
        return [p for _, p in sorted(self.table(db, name).partitions.items())]

    def wait_version(self, version: int, timeout: float) -> bool:
        with self.applied:  # every change of self.version notifies
            return self.applied.wait_for(lambda: self.version >= version, timeout)


class Subscriber:
    def __init__(self, name: str, source: Any, poll_wait: float = 1.0) -> None:
        self.name = name
        self.source = source
        self.poll_wait = poll_wait
        self.received = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.url: str | None = None
        if isinstance(source, str):
            self.url = source.rstrip("/")
            self.replica = Replica(self._fetch_http)
            self.decoder = Decoder()
            self._thread = threading.Thread(target=self._poll, name=f"catalogd-sub-{name}", daemon=True)
            self._thread.start()
        else:
            self.replica = Replica(source.fetch)
            self.replica.apply(source.publisher.full_update())
            source.publisher.register(name, self)
            source.publisher.ack(name, self.replica.version)

    # in-process delivery
    def deliver(self, up: TopicUpdate) -> bool:
        """Applies an update handed over by the publisher; True once applied (the publisher counts it acked)."""
        self.received += 1
        if not self.replica.apply(up):
            self.replica.apply(self.source.publisher.full_update())
            self.source.publisher.ack(self.name, self.replica.version)
        return True

    # remote
    def get(self, path: str, timeout: float) -> Any:
        """One GET on catalogd's endpoint (a remote subscriber's only way to it): the JSON answer."""
        assert self.url is not None
        with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
            return json.loads(r.read().decode("utf-8"))

    def _fetch_http(self, kind: str, key: str) -> Any:
        from .wire import object_from_json
        doc = self.get(f"/object?kind={kind}&key={urllib.parse.quote(key)}", 30)
        return object_from_json(kind, doc) if doc else None

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                sid = self.replica.service_id
                doc = self.get(f"/topic?name={urllib.parse.quote(self.name)}&from={self.replica.version}"
                               f"&wait={self.poll_wait}" + (f"&service={urllib.parse.quote(sid)}" if sid else ""),
                               self.poll_wait + 30)
                for u in doc["updates"]:
                    up = self.decoder.update(u)
                    self.received += 1
                    if not self.replica.apply(up):
                        log.warning("subscriber %s: gap before version %s (or a new catalog service)", self.name,
                                    up.from_version)
                        break
            except Exception as e:  # noqa: BLE001 - catalogd restarting: try again
                log.debug("subscriber %s: %s", self.name, e)
                self._stop.wait(0.5)

    def close(self) -> None:
        self._stop.set()
        if self.url is None:
            self.source.publisher.unregister(self.name)
        elif self._thread is not None:
            self._thread.join(self.poll_wait + 5)
