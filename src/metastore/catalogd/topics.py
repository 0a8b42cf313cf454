"""Topic updates: the catalog's changes, published to subscribers.

Each update covers the catalog versions (from_version, to_version]: every object whose version is in the
range, and the deletions of the delete log in it. The builder reads `to_version` first and then walks the
objects; an object that changed meanwhile (its version is now above to_version) is skipped, so an update is
a consistent cut, and comes in the next one. The topic update log records for every object the version last
sent and how many updates skipped it; an object skipped MAX_NUM_SKIPPED_TOPIC_UPDATES times is sent anyway,
with its newer version, so a table that changes all the time is not held back forever. The log is
garbage-collected every `gc_every` updates (entries of objects no longer in the catalog).

Every update carries the catalog service id (CatalogdService.service_id, new at every start of catalogd, as
Impala's catalogServiceId): versions are numbered anew after a restart, so a version means something only with
the id of the catalogd that gave it. A subscriber that sees another id drops its replica and takes a full update.

Modes: "full" sends the objects (a table with its partitions and file metadata); "minimal" sends names and
versions only, and a subscriber fetches an object when it is read (CatalogdService.fetch).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .catalog import CatalogCache, Deletion

MAX_NUM_SKIPPED_TOPIC_UPDATES = 2


@dataclass
class TopicEntry:
    kind: str  # "database" | "table"
    key: str  # "db" | "db.table"
    version: int
    obj: Any = None  # full mode: a database (obj, functions) or a table snapshot; None in minimal mode


@dataclass
class TopicUpdate:
    from_version: int
    to_version: int
    mode: str
    entries: list[TopicEntry] = field(default_factory=list)
    deletions: list[Deletion] = field(default_factory=list)
    created: float = field(default_factory=time.time)
    service_id: str = ""  # the catalogd that numbered these versions ("" from one that names none)


@dataclass
class LogEntry:
    last_sent: int
    skipped: int = 0


@dataclass(frozen=True)
class TableSnapshot:
    db: str
    name: str
    version: int
    obj: Any  # hms.Table, None when incomplete
    partitions: dict[str, Any]
    files: dict[str, list[Any]]


def snapshot_table(t: Any) -> TableSnapshot:
    with t.lock:
        return TableSnapshot(t.db, t.name, t.version, t.obj, dict(t.partitions),
                             {k: list(v) for k, v in t.files.items()})


class TopicBuilder:
    def __init__(self, cache: CatalogCache, mode: str = "full", gc_every: int = 10, service_id: str = "") -> None:
        if mode not in ("full", "minimal"):
            raise ValueError(f"topic mode is full or minimal, not {mode!r}")
        self.cache = cache
        self.mode = mode
        self.gc_every = gc_every
        self.service_id = service_id
        self.last_version = 0
        self.log: dict[str, LogEntry] = {}
        self.updates = 0
        self.sent_anyway = 0  # objects sent although newer than the update, after too many skips
        self.gcs = 0

    def build(self) -> TopicUpdate | None:
        """The next update, or None when nothing changed."""
        c = self.cache
        to = c.version
        if to <= self.last_version:
            return None
        frm = self.last_version
        up = TopicUpdate(frm, to, self.mode, service_id=self.service_id)
        for name, d in list(c.dbs.items()):
            self._consider(up, "database", name, d.version, lambda d=d: (d.obj, dict(d.functions)))
        for (db, tn), t in list(c.tables.items()):
            self._consider(up, "table", f"{db}.{tn}", t.version, lambda t=t: snapshot_table(t))
        up.deletions = [d for d in c.deletions_since(frm) if d.version <= to]
        for gone in up.deletions:
            self.log.pop(f"{gone.kind}:{gone.key}", None)
        self.last_version = to
        self.updates += 1
        if self.gc_every and self.updates % self.gc_every == 0:
            self.gc()
        return up

    def _consider(self, up: TopicUpdate, kind: str, key: str, version: int, make: Any) -> None:
        lk = f"{kind}:{key}"
        entry = self.log.get(lk)
        if version <= up.from_version or (entry is not None and entry.last_sent >= version):
            return
        if version > up.to_version:
            if entry is None:
                entry = self.log[lk] = LogEntry(0)
            entry.skipped += 1
            if entry.skipped <= MAX_NUM_SKIPPED_TOPIC_UPDATES:
                return
            self.sent_anyway += 1
        obj = make() if self.mode == "full" else None
        if isinstance(obj, TableSnapshot):
            version = obj.version
        up.entries.append(TopicEntry(kind, key, version, obj))
        self.log[lk] = LogEntry(version, 0)

    def gc(self) -> None:
        """Drops log entries of objects no longer in the catalog."""
        c = self.cache
        live = {f"database:{n}" for n in list(c.dbs)} | {f"table:{d}.{t}" for d, t in list(c.tables)}
        for k in [k for k in self.log if k not in live]:
            del self.log[k]
        self.gcs += 1


class Publisher:
    """Builds updates on a schedule and hands them to subscribers; remembers what each subscriber applied."""

    def __init__(self, builder: TopicBuilder, interval: float = 0.05, keep: int = 1000,
                 remote_ttl: float = 120.0) -> None:
        self.builder = builder
        self.interval = interval
        self.keep = keep
        self.history: list[TopicUpdate] = []
        self.subscribers: dict[str, Any] = {}  # name -> in-process subscriber (has .deliver(update))
        self.acked: dict[str, int] = {}  # name -> catalog version the subscriber has applied
        # remote subscribers (named by HTTP clients, which never unregister): name -> when last heard from.
        # One not heard from within remote_ttl seconds is forgotten, so neither the names a client makes up nor
        # a subscriber gone for good are held for ever (nor waited for by every SYNC_DDL after it)
        self.remote_ttl = remote_ttl
        self._heard: dict[str, float] = {}
        self.cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._build_lock = threading.Lock()

    @property
    def sent_version(self) -> int:
        return self.builder.last_version

    @property
    def service_id(self) -> str:
        return self.builder.service_id

    def register(self, name: str, subscriber: Any = None) -> None:
        with self.cond:
            self.subscribers[name] = subscriber
            self.acked.setdefault(name, 0)
            if subscriber is None:
                self._heard[name] = time.monotonic()
            else:  # in-process: unregistered by its close(), never forgotten
                self._heard.pop(name, None)

    def unregister(self, name: str) -> None:
        with self.cond:
            self.subscribers.pop(name, None)
            self.acked.pop(name, None)
            self._heard.pop(name, None)
            self.cond.notify_all()

    def _forget_silent(self) -> None:
        """Forgets the remote subscribers not heard from within remote_ttl."""
        cutoff = time.monotonic() - self.remote_ttl
        with self.cond:
            gone = [n for n, t in self._heard.items() if t < cutoff]
            for n in gone:
                del self._heard[n]
                self.subscribers.pop(n, None)
                self.acked.pop(n, None)
            if gone:
                self.cond.notify_all()

    def ack(self, name: str, version: int) -> None:
        with self.cond:
            if name in self.acked:
                self.acked[name] = max(self.acked[name], version)
            if name in self._heard:
                self._heard[name] = time.monotonic()
            self.cond.notify_all()

    def publish_once(self) -> TopicUpdate | None:
        with self._build_lock:
            up = self.builder.build()
            if up is None:
                return None
            with self.cond:
                self.history.append(up)
                del self.history[:-self.keep]
                self.cond.notify_all()
                targets = [(n, s) for n, s in self.subscribers.items() if s is not None]
        for name, sub in targets:
            try:
                if sub.deliver(up):
                    self.ack(name, up.to_version)
            except Exception:  # noqa: BLE001 - one broken subscriber must not stop the others
                pass
        self._trim()
        return up

    def _trim(self) -> None:
        # A deletion that went out in an update lives on in the update history (a subscriber that is behind
        # gets it from there, or a full update), so the delete log keeps only deletions not yet published.
        self.builder.cache.trim_delete_log(self.builder.last_version)

    def full_update(self) -> TopicUpdate:
        """Every object, for a subscriber starting from nothing (or one that fell behind the history)."""
        with self._build_lock:
            c, to = self.builder.cache, self.builder.last_version
            up = TopicUpdate(0, to, self.builder.mode, service_id=self.builder.service_id)
            full = self.builder.mode == "full"
            for name, d in list(c.dbs.items()):
                up.entries.append(TopicEntry("database", name, d.version, (d.obj, dict(d.functions)) if full else None))
            for (db, tn), t in list(c.tables.items()):
                snap = snapshot_table(t)
                up.entries.append(TopicEntry("table", f"{db}.{tn}", snap.version, snap if full else None))
            return up

    def updates_since(self, version: int, timeout: float = 0.0) -> tuple[list[TopicUpdate], bool]:
        """(updates after `version`, whether they are complete: False when the history no longer reaches back,
        and the caller needs a full snapshot)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                ups = [u for u in self.history if u.to_version > version]
                if ups or time.monotonic() >= deadline:
                    complete = not ups or ups[0].from_version <= version or version == 0 and ups[0].from_version == 0
                    return ups, complete
                self.cond.wait(max(0.0, deadline - time.monotonic()))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="catalogd-topics", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.publish_once()
                self._forget_silent()
            except Exception:  # noqa: BLE001
                pass
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
