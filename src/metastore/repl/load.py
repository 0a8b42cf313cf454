"""REPL LOAD: apply a dump to the target database, through the target metastore's Thrift API.

Every step sets an object to the state the dump holds for it (create it, or alter it when it differs, or
drop it when it exists), so applying a step twice is harmless. Progress is kept on the target database,
as Hive keeps `repl.last.id`:

    repl.last.id                     the last source event applied (after a load: the dump's to id)
    metastore.repl.source            the source database this one replicates
    metastore.repl.loading           the dump being loaded; set before the first write, cleared at the end
    metastore.repl.target.event.id   the target's event id just before the load's last write

A load killed half-way (kill -9) resumes on the next run after the last event it applied (the dump's
`_load_progress`, written after every event; the target's `repl.last.id` is checkpointed every CHECKPOINT
events) and replays the rest. Before writing, an incremental load checks that nobody else
changed the target database since the last load (its events after metastore.repl.target.event.id); a
failure after writes began that a retry cannot fix leaves `_non_recoverable` in the dump.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
import time
from collections.abc import Iterable, Iterator
from typing import Any

from ..core.errors import EventsMissing
from ..core.messages import (
    AddPartition,
    AlterDatabase,
    AlterPartition,
    AlterTable,
    CreateFunction,
    CreateTable,
    DropFunction,
    DropPartition,
    DropTable,
    Insert,
    Message,
    TableMessage,
    decode,
)
from ..core.model import NotificationEvent
from ..core.names import make_part_name, part_vals_from_name
from ..thrift import hms, tjson
from ..thrift.client import (
    HIVE_ERRORS,
    MetastoreClient,
    MetastoreUnavailable,
    hive_message,
)
from . import copy as datacopy
from .client import connect
from .errors import NeedsReset, NothingToDo, ReplError
from .locations import LocationMap, LocationRefused, check_dumped
from .result import ReplResult
from .staging import (
    BOOTSTRAP,
    FINISHED_LOAD,
    NON_RECOVERABLE,
    Dump,
    Staging,
    read_json,
    write_json,
)

log = logging.getLogger(__name__)

LAST_ID = "repl.last.id"
SOURCE = "metastore.repl.source"
LOADING = "metastore.repl.loading"
TARGET_EVENT = "metastore.repl.target.event.id"
OWN_KEYS = (LAST_ID, SOURCE, LOADING, TARGET_EVENT)
CHECKPOINT = 200
# the target keeps the source's statistics, and takes the column type changes the source accepted
NO_STATS = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true",
                                              "hive.metastore.disallow.incompatible.col.type.changes": "false"})
PROGRESS = "_load_progress"  # in the dump: the last event applied by an unfinished load
_MALFORMED = (ValueError, KeyError, TypeError, AttributeError, ReplError)
# An incremental load holds a bounded number of decoded messages, whatever the dump's size: the location check
# keeps the first ones for the load (at most CACHED of them, of at most CACHED_BYTES of dumped text), which reads
# and decodes the rest again one by one; a run of like events (_runs) holds at most RUN.
CACHED = 1000
CACHED_BYTES = 16 << 20
RUN = 1000


@dataclasses.dataclass
class LoadResult(ReplResult):
    skipped_events: int = 0
    files_copied: int = 0
    bytes_copied: int = 0
    seconds: float = 0.0
    copy_seconds: float = 0.0

    def describe(self) -> str:
        what = self.counts(f"{self.events} events applied, {self.skipped_events} already applied")
        return (f"loaded {self.dump_type} dump {self.path} (events {self.from_id}..{self.to_id}): {what}; "
                f"{self.files_copied} files, {self.bytes_copied} bytes copied; {self.seconds:.2f}s")


def load(target_uri: str, src_db: str, tgt_db: str, root: str, copy_options: dict[str, str] | None = None,
         ) -> list[LoadResult]:
    """Load every dumped and not yet loaded dump of `src_db` into `tgt_db`, oldest first."""
    staging = Staging(root, src_db)
    dumps = staging.dumps()
    for d in dumps:
        failure = d.failure()
        if failure:
            raise NeedsReset(f"the load of {d.path} failed and needs `metastore repl reset {src_db.lower()}` "
                             f"(after fixing the cause): {failure}")
    pending = [d for d in dumps if d.dumped and not d.loaded]
    if not pending:
        if not os.path.isdir(staging.dir):
            raise NothingToDo(f"nothing to load: no dumps of {src_db.lower()} under {root}")
        raise NothingToDo(f"nothing to load: every dump of {src_db.lower()} under {root} is loaded")
    out = []
    with connect(target_uri) as tgt:
        for d in pending:
            out.append(Loader(tgt, d, src_db.lower(), tgt_db.lower(), copy_options or {}).run())
    return out


def _comparable(obj: Any) -> Any:
    """The object as compared for change (its Thrift-JSON document, a new one): times the target assigns
    itself are left out."""
    doc = tjson.struct_doc(obj)
    for fid, spec in type(obj).thrift_spec.items():
        key = str(fid)
        if spec[1] in ("createTime", "lastAccessTime"):
            doc.pop(key, None)
        elif spec[1] == "parameters" and key in doc:
            kt, vt, _, m = doc[key]["map"]
            m = {k: v for k, v in m.items() if k != "DO_NOT_UPDATE_STATS"}
            doc[key] = {"map": [kt, vt, len(m), m]}
    return doc


def _values(t: Any, spec: dict[str, str]) -> list[str]:
    """A partition's values in the table's key order, from a message's spec (values by key name)."""
    return [spec[k.name] for k in t.partitionKeys]


def _need(obj: Any, what: str) -> Any:
    """An object the message must hold: a message without it is malformed (KeyError, reported with the event)."""
    if obj is None:
        raise KeyError(what)
    return obj


def _part_name(t: Any, values: list[str]) -> str:
    return make_part_name([k.name for k in t.partitionKeys], list(values))


# what a malformed dump file or message raises while it is read (tjson, json, a missing field)
_BAD = (ValueError, KeyError, TypeError, AttributeError)
_Event = tuple[int, str, Message]  # (event id, its directory in the dump, its message)


def _read_event(path: str) -> Message:
    """The typed message of a dumped event (`path`: its directory in the dump)."""
    ev = read_json(os.path.join(path, "_metadata"))
    return decode(NotificationEvent(int(ev["eventId"]), int(ev.get("eventTime") or 0), str(ev["eventType"]),
                                    ev.get("dbName"), ev.get("tableName"), ev.get("message") or "",
                                    ev.get("messageFormat") or ""))


def _run_key(m: Message) -> tuple[str, str] | None:
    """What an event is batched by: ADD_PARTITION, or ALTER_PARTITION without a rename, of one table."""
    if not isinstance(m, (AddPartition, AlterPartition)) or m.table_obj is None:
        return None
    if isinstance(m, AlterPartition) and m.key_values and \
            list(m.key_values.values()) != _need(m.after, "partitionObjAfterJson").values:
        return None
    return (m.event_type, (m.table or "").lower())


def _runs(events: Iterable[_Event], limit: int | None = None) -> Iterator[list[_Event]]:
    """Events in runs, as they come: consecutive ADD_PARTITION, or ALTER_PARTITION without a rename, of one
    table (up to `limit` events, RUN by default) go together; every other event alone. Applying a run sets each
    partition to its last state in the run, as applying its events one by one would."""
    most = RUN if limit is None else limit
    run: list[_Event] = []
    key: tuple[str, str] | None = None
    for e in events:
        k = _run_key(e[2])
        if run and not (k is not None and k == key and len(run) < most):
            yield run
            run = []
        run.append(e)
        key = k
    if run:
        yield run


class Loader:
    def __init__(self, tgt: MetastoreClient, dump: Dump, src_db: str, tgt_db: str,
                 copy_options: dict[str, str]) -> None:
        self.tgt = tgt
        self.dump = dump
        self.src_db = src_db
        self.db = tgt_db
        self.copy_options = copy_options
        m = dump.meta
        self.result = LoadResult(m.dump_type, dump.path, m.from_id, m.to_id)
        self.source_db = tjson.from_doc(read_json(dump.file("_db")), hms.Database)
        self.map: LocationMap | None = None
        self.touched: dict[str, set[tuple[str, ...]] | None] = {}  # table -> partitions (None: all of it)
        self.resuming = False
        self.tables: set[str] = set()  # target tables known to exist (fewer lookups per event)
        # event directory -> its message, read by _check_locations: the first CACHED events' only
        self.checked: dict[str, Message] = {}
        self.checked_bytes = 0  # the size of their dumped files
        self.malformed: str | None = None  # the first malformed event of an incremental dump, found before writes

    # ---- the run ----------------------------------------------------------------------------------------

    def run(self) -> LoadResult:
        started = time.monotonic()
        self._check_locations()  # before anything is written on the target
        db = self.tgt.find_database(self.db)
        params = dict(db.parameters or {}) if db else {}
        if self.dump.meta.dump_type == BOOTSTRAP:
            db = self._check_bootstrap(db, params)
        else:
            self._check_incremental(db, params)
            assert db is not None
        if self.result.skipped_events < 0:  # already loaded: only the acknowledgement was missing
            self.result.skipped_events = 0
            self.dump.mark(FINISHED_LOAD)
            return self.result
        self.map = LocationMap(self.source_db.locationUri, db.locationUri)
        self.resuming = params.get(LOADING) == self.dump.meta.dump_id
        try:
            if params.get(LOADING) != self.dump.meta.dump_id:
                self._set_params(db, {LOADING: self.dump.meta.dump_id, SOURCE: self.src_db})
            if self.dump.meta.dump_type == BOOTSTRAP:
                self._bootstrap()
            else:
                self._incremental(int(params[LAST_ID]))
            self._copy_data()
            db = self.tgt.get_database(self.db)
            here = self.tgt.current_event_id()
            self._set_params(db, {LAST_ID: str(self.dump.meta.to_id), TARGET_EVENT: str(here), LOADING: None})
        except (MetastoreUnavailable, datacopy.CopyFailed):
            raise  # a retry resumes from the checkpoint
        except HIVE_ERRORS as e:
            self._fail(hive_message(e))
        except ReplError as e:
            self._fail(str(e))
        self.dump.mark(FINISHED_LOAD)
        self.result.seconds = time.monotonic() - started
        return self.result

    def _fail(self, why: str) -> None:
        text = f"{why} (dump {self.dump.path}, target database {self.db} on {self.tgt.uri})"
        self.dump.mark(NON_RECOVERABLE, text + "\n")
        raise NeedsReset(f"the load failed and needs `metastore repl reset {self.src_db}` after the cause is "
                         f"fixed: {text}")

    def _set_params(self, db: Any, changes: dict[str, str | None]) -> None:
        db = copy.deepcopy(db)
        p = dict(db.parameters or {})
        for k, v in changes.items():
            if v is None:
                p.pop(k, None)
            else:
                p[k] = v
        db.parameters = p
        self.tgt.alter_database(self.db, db)

    # ---- checks before any write --------------------------------------------------------------------------

    def _check_bootstrap(self, db: Any, params: dict[str, str]) -> Any:
        if db is None:
            src = self.source_db
            new = hms.Database(name=self.db, description=src.description,
                               parameters={k: v for k, v in (src.parameters or {}).items() if k not in OWN_KEYS},
                               ownerName=src.ownerName, ownerType=src.ownerType)
            self.tgt.create_database(new)
            return self.tgt.get_database(self.db)
        source = params.get(SOURCE)
        if source is None:
            if self.tgt.get_all_tables(self.db) or self.tgt.get_functions(self.db):
                raise ReplError(f"the target database {self.db} on {self.tgt.uri} exists, is not empty and is "
                                f"not a replica of {self.src_db}: a bootstrap would overwrite it. Drop it or load "
                                "into another database")
        elif source != self.src_db:
            raise ReplError(f"the target database {self.db} on {self.tgt.uri} replicates {source}, not "
                            f"{self.src_db}")
        # A replica gets reconciled in full: a bootstrap after `reset --bootstrap` repairs a diverged target.
        return db

    def _check_incremental(self, db: Any, params: dict[str, str]) -> None:
        m = self.dump.meta
        if db is None or LAST_ID not in params:
            raise ReplError(f"the target database {self.db} on {self.tgt.uri} has no {LAST_ID}: it was not "
                            f"bootstrapped from {self.src_db}, so the incremental dump {self.dump.path} cannot "
                            "be applied (`metastore repl reset --bootstrap` starts over)")
        if params.get(SOURCE, self.src_db) != self.src_db:
            raise ReplError(f"the target database {self.db} replicates {params[SOURCE]}, not {self.src_db}")
        last = int(params[LAST_ID])
        resuming = params.get(LOADING) == m.dump_id
        if last < m.from_id:
            raise ReplError(f"the target database {self.db} is at source event {last} but the dump "
                            f"{self.dump.path} starts after event {m.from_id}: the dumps in between were not "
                            "loaded")
        if last >= m.to_id and not resuming:
            self.result.skipped_events = -1
            return
        if not resuming:
            self._check_not_diverged(params)

    def _check_not_diverged(self, params: dict[str, str]) -> None:
        """Events on the target database since the last load that the load itself did not write."""
        mark = params.get(TARGET_EVENT)
        if mark is None:
            return
        after = int(mark)
        while True:
            try:
                events = self.tgt.next_notification(after, 1000)
            except (hms.MetaException, EventsMissing) as err:
                log.warning("cannot check the target for changes since event %s: %s", mark, err)
                return
            for e in events:
                if (e.dbName or "").lower() != self.db:
                    continue
                if self._own_marker(e, mark):
                    continue
                raise ReplError(
                    f"the target database {self.db} on {self.tgt.uri} diverged from {self.src_db}: it was changed "
                    f"outside replication after its last load (target event {e.eventId}: {e.eventType}"
                    f"{' ' + e.tableName if e.tableName else ''}). Nothing was applied; undo the change, or "
                    f"re-bootstrap with `metastore repl reset {self.src_db} --bootstrap`")
            if len(events) < 1000:
                return
            after = events[-1].eventId

    @staticmethod
    def _own_marker(e: Any, mark: str) -> bool:
        """The event is a load's own ALTER_DATABASE that set TARGET_EVENT to `mark`."""
        try:
            m = decode(e)
            after = m.after if isinstance(m, AlterDatabase) else None
        except _BAD:
            return False
        return after is not None and (after.parameters or {}).get(TARGET_EVENT) == mark

    def _check_locations(self) -> None:
        """Every location the dump holds, checked before the first write (check_dumped): a dump that would plant,
        copy or delete files outside the target database's directory is refused with nothing applied. (A malformed
        file is left to the load, which reports it: a bootstrap where it reads the table, an incremental load
        before it applies its first event.) An incremental dump's events are read one at a time: the tables they
        touch are noted (data to copy), and the first messages kept for the load (CACHED, CACHED_BYTES)."""
        src = self.source_db.locationUri
        check_dumped(src, False, src, "database")

        def table(t: Any, where: str, written: bool = True) -> bool:
            """Check a table; whether it is managed. Only `..` for one the load does not write (the state before
            an event, or a table renamed into another database)."""
            managed = t.tableType == "MANAGED_TABLE"
            here = written and (t.dbName or self.src_db).lower() == self.src_db
            sd(t.sd, managed and here, f"table {t.tableName} ({where})")
            return managed

        def sd(d: Any, managed: bool, what: str) -> None:
            if d is None:
                return
            check_dumped(d.location, managed, src, what)
            serde = d.serdeInfo.parameters if d.serdeInfo is not None and d.serdeInfo.parameters else {}
            check_dumped(serde.get("path"), False, src, what)

        if self.dump.meta.dump_type == BOOTSTRAP:
            base = self.dump.file(self.src_db)
            for name in sorted(os.listdir(base) if os.path.isdir(base) else []):
                path = os.path.join(base, name, "_metadata")
                if not os.path.isfile(path):  # the functions' directory (unless a table is named _functions)
                    continue
                try:
                    doc = read_json(path)
                    managed = table(tjson.from_doc(doc["table"], hms.Table), path)
                    for p in doc.get("partitions", []):
                        part = tjson.from_doc(p, hms.Partition)
                        sd(part.sd, managed, f"partition {part.values} of {name} ({path})")
                except LocationRefused:
                    raise
                except _MALFORMED:
                    continue  # malformed: the load reports it where it reads the table, as before
            return
        for event_id, path in self.dump.event_dirs():
            try:
                m = _read_event(path)
                managed = False
                if isinstance(m, AlterTable):  # the table before is not written: only `..` is refused in it
                    tables = [(m.before, False), (m.after, True)]
                else:
                    tables = [(m.table_obj, True)] if isinstance(m, TableMessage) else []
                for t, written in tables:
                    if t is not None:
                        managed = table(t, f"event {event_id}", written)
                parts = list(m.partitions) if isinstance(m, AddPartition) else []
                if isinstance(m, AlterPartition):
                    parts += [p for p in (m.before, m.after) if p is not None]
                for part in parts:
                    sd(part.sd, managed, f"partition {part.values} (event {event_id})")
                if self.malformed is None:
                    self._touch_only(m)  # every event of the dump, applied now or before a crash
                    _run_key(m)
                if len(self.checked) < CACHED:
                    size = os.path.getsize(os.path.join(path, "_metadata"))
                    if self.checked_bytes + size <= CACHED_BYTES:
                        self.checked[path] = m  # _incremental applies it without reading and decoding it again
                        self.checked_bytes += size
            except LocationRefused:
                raise
            except _MALFORMED as e:
                # malformed: the load reports the first one before it applies any event, as before
                if self.malformed is None:
                    self.malformed = str(e) if isinstance(e, ReplError) else \
                        f"event {event_id} in {path} is malformed: {type(e).__name__}: {e}"
                continue

    # ---- bootstrap ------------------------------------------------------------------------------------------

    def _bootstrap(self) -> None:
        base = self.dump.file(self.src_db)
        # a table's directory holds its _metadata file; _functions holds one directory per function (and, when
        # a table is named _functions, which Hive allows, that table's _metadata beside them)
        names = sorted(n for n in (os.listdir(base) if os.path.isdir(base) else [])
                       if os.path.isfile(os.path.join(base, n, "_metadata")))
        for name in set(self.tgt.get_all_tables(self.db)) - set(names):
            self.tgt.drop_table(self.db, name, True)  # a replica holds only what the source has
        for name in names:
            path = os.path.join(base, name, "_metadata")
            doc = read_json(path)
            try:
                t = tjson.from_doc(doc["table"], hms.Table)
                parts = [tjson.from_doc(p, hms.Partition) for p in doc.get("partitions", [])]
            except _BAD as e:
                raise ReplError(f"{path} is malformed: {type(e).__name__}: {e}") from None
            self._put_table(t)
            if t.partitionKeys:
                self._sync_partitions(t, parts)
            self.touched[t.tableName] = None
            self.result.tables += 1
            self.result.partitions += len(parts)
        fdir = os.path.join(base, "_functions")
        fnames = sorted(n for n in (os.listdir(fdir) if os.path.isdir(fdir) else [])
                        if os.path.isfile(os.path.join(fdir, n, "_metadata")))
        for name in set(self.tgt.get_functions(self.db)) - set(fnames):
            self.tgt.drop_function(self.db, name)
        for name in fnames:
            self._put_function(tjson.from_doc(read_json(os.path.join(fdir, name, "_metadata")), hms.Function))
            self.result.functions += 1

    # ---- incremental ------------------------------------------------------------------------------------------

    def _pending(self, last: int) -> Iterator[_Event]:
        """The dump's events after `last`, one at a time: kept by _check_locations, or read again."""
        for event_id, path in self.dump.event_dirs():
            m = self.checked.pop(path, None)
            if event_id <= last:
                self.result.skipped_events += 1
                continue
            if m is None:
                try:
                    m = _read_event(path)
                except _BAD as e:
                    raise ReplError(f"event {event_id} in {path} is malformed: {type(e).__name__}: {e}") from None
            yield event_id, path, m

    def _incremental(self, last: int) -> None:
        """Apply the events after `last` (or after the dump's own progress, resuming), streaming: the tables
        to copy were noted by _check_locations, which also found any malformed event."""
        if self.malformed is not None:
            raise ReplError(self.malformed)
        progress = self.dump.file(PROGRESS)
        if self.resuming and os.path.exists(progress):
            last = max(last, int(read_json(progress)["eventId"]))
        applied_since = 0
        runs = _runs(self._pending(last))
        while True:
            try:
                group = next(runs, None)
            except _BAD as e:
                raise ReplError(f"an event in {self.dump.path} is malformed: {type(e).__name__}: {e}") from None
            if group is None:
                break
            event_id, path = group[-1][0], group[-1][1]
            try:
                if len(group) == 1:
                    self._apply(group[0][2])
                else:
                    self._apply_run([m for _, _, m in group])
            except _BAD as e:
                raise ReplError(f"event {event_id} in {path} is malformed: {type(e).__name__}: {e}") from None
            # the dump's own record of progress, after every event (or run of like events): a rerun replays
            # at most what a kill interrupted (the target's repl.last.id follows every CHECKPOINT events)
            write_json(progress, {"eventId": event_id, "dumpId": self.dump.meta.dump_id}, sync=False)
            self.result.events += len(group)
            applied_since += len(group)
            if applied_since >= CHECKPOINT:
                self._set_params(self.tgt.get_database(self.db), {LAST_ID: str(event_id)})
                applied_since = 0

    def _apply_run(self, group: list[Message]) -> None:
        """Consecutive ADD_PARTITION (or ALTER_PARTITION) events of one table: one call for all of them."""
        t = _need(group[-1].table_obj, "tableObjJson")  # type: ignore[attr-defined]
        parts: dict[tuple[str, ...], Any] = {}
        for m in group:
            if isinstance(m, AddPartition):
                for part in m.partitions:
                    parts[tuple(part.values)] = part
            elif isinstance(m, AlterPartition):
                part = _need(m.after, "partitionObjAfterJson")
                parts[tuple(part.values)] = part
        if self._ensure_table(t):
            self._put_partitions(t, list(parts.values()), likely_new=isinstance(group[0], AddPartition))

    def _touch_only(self, m: Message) -> None:
        """Data to copy follows from every event of the dump, applied now or before a crash."""
        table = (m.table or "").lower()
        if isinstance(m, AlterTable):
            before, after = _need(m.before, "tableObjBeforeJson"), _need(m.after, "tableObjAfterJson")
            old, new = before.tableName.lower(), after.tableName.lower()
            if old != new or (after.dbName or "").lower() != self.src_db:
                self.touched.pop(old, None)
            if (after.dbName or "").lower() == self.src_db:
                self.touched[new] = None
        elif isinstance(m, CreateTable):
            self.touched[table] = None
        elif isinstance(m, (AddPartition, AlterPartition, Insert)):
            cur = self.touched.setdefault(table, set())
            if cur is None:
                return
            t = _need(m.table_obj, "tableObjJson")
            if isinstance(m, AddPartition):
                for spec in m.specs:
                    cur.add(tuple(_values(t, spec)))
            elif isinstance(m, AlterPartition):
                cur.add(tuple(_need(m.after, "partitionObjAfterJson").values))
            elif m.part_key_vals:
                cur.add(tuple(_values(t, m.part_key_vals)))
            else:
                self.touched[table] = None
        elif isinstance(m, DropTable):
            self.touched.pop(table, None)

    def _apply(self, m: Message) -> None:
        match m:
            case CreateTable():
                self._put_table(_need(m.table_obj, "tableObjJson"))
            case AlterTable():
                self._on_alter_table(m)
            case DropTable():
                self._drop_table(_need(m.table, "table").lower())
            case AddPartition():
                t = _need(m.table_obj, "tableObjJson")
                if self._ensure_table(t):
                    self._put_partitions(t, m.partitions, likely_new=True)
            case AlterPartition():
                self._on_alter_partition(m)
            case DropPartition():
                t = _need(m.table_obj, "tableObjJson")
                self._drop_partitions(t, [_values(t, s) for s in m.specs])
            case Insert():
                pass  # data only: copied with the rest of the dump's data
            case CreateFunction():
                self._put_function(_need(m.function, "functionObjJson"))
            case DropFunction():
                name = _need(m.function_name or None, "functionName")
                if self.tgt.find_function(self.db, name) is not None:
                    self.tgt.drop_function(self.db, name)
            case AlterDatabase():
                self._on_alter_database(m)
            case _:
                log.info("event %s of type %s: nothing to replicate", m.event_id, m.event_type)

    def _on_alter_table(self, m: AlterTable) -> None:
        before, after = _need(m.before, "tableObjBeforeJson"), _need(m.after, "tableObjAfterJson")
        old, new = before.tableName.lower(), after.tableName.lower()
        in_before = (before.dbName or "").lower() == self.src_db
        in_after = (after.dbName or "").lower() == self.src_db
        if in_before and not in_after:  # renamed into another database: gone from this one
            self._drop_table(old)
            return
        if in_before and old != new:
            have_old = self.tgt.find_table(self.db, old)
            have_new = self.tgt.find_table(self.db, new)
            if have_old is not None and have_new is None:
                moved = self.map.table(after, self.db)  # type: ignore[union-attr]
                if self.map.to_target(before.sd.location) == have_old.sd.location:  # type: ignore[union-attr]
                    moved.sd.location = have_old.sd.location  # the target moves its directory, as the source did
                self.tgt.alter_table(self.db, old, moved, NO_STATS)
                self.tables.discard(old)
            elif have_old is not None:
                self._drop_table(old)  # replaying a rename already done: the old name is a later table's
        self._put_table(after)

    def _on_alter_partition(self, m: AlterPartition) -> None:
        t = _need(m.table_obj, "tableObjJson")
        after = _need(m.after, "partitionObjAfterJson")
        if not self._ensure_table(t):
            return
        old_values = _values(t, m.key_values) if m.key_values else after.values
        if list(old_values) != list(after.values):
            self._drop_partitions(t, [old_values])
        self._put_partitions(t, [after])

    def _on_alter_database(self, m: AlterDatabase) -> None:
        after = _need(m.after, "dbObjAfterJson")
        db = self.tgt.get_database(self.db)
        own = {k: v for k, v in (db.parameters or {}).items() if k in OWN_KEYS}
        wanted = {k: v for k, v in (after.parameters or {}).items() if k not in OWN_KEYS}
        if {k: v for k, v in (db.parameters or {}).items() if k not in OWN_KEYS} != wanted or \
                db.ownerName != after.ownerName:
            db = copy.deepcopy(db)
            db.parameters = {**wanted, **own}
            db.ownerName, db.ownerType = after.ownerName, after.ownerType
            self.tgt.alter_database(self.db, db)

    # ---- objects ----------------------------------------------------------------------------------------------

    def _ensure_table(self, t: Any) -> bool:
        """The table exists on the target (created from the event's copy when missing)."""
        name = t.tableName.lower()
        if name not in self.tables and self.tgt.find_table(self.db, name) is None:
            self._put_table(t)
        self.tables.add(name)
        return True

    def _put_table(self, src: Any) -> None:
        t = self.map.table(src, self.db)  # type: ignore[union-attr]
        name = t.tableName.lower()
        have = self.tgt.find_table(self.db, name)
        if have is not None and [(k.name, k.type) for k in have.partitionKeys or []] != \
                [(k.name, k.type) for k in t.partitionKeys or []]:
            self._drop_table(name)  # a table of the same name but another shape: the source recreated it
            have = None
        if have is None:
            self.tgt.create_table(t, NO_STATS)
            # the target may count files of an existing directory into the parameters: the source's stand
            have = self.tgt.get_table(self.db, name)
        if _comparable(have) != _comparable(t):
            self.tgt.alter_table(self.db, name, t, NO_STATS)
        self.tables.add(name)

    def _drop_table(self, name: str) -> None:
        self.tables.discard(name)
        if self.tgt.find_table(self.db, name) is not None:
            self.tgt.drop_table(self.db, name, True)

    def _put_partitions(self, t: Any, parts: list[Any], likely_new: bool = False) -> None:
        if not parts:
            return
        name = t.tableName.lower()
        mapped = [self.map.partition(p, self.db) for p in parts]  # type: ignore[union-attr]
        for p in mapped:
            p.tableName = name
        want = {tuple(p.values): p for p in mapped}
        if likely_new:  # an ADD_PARTITION event: add first, look only at the ones that were there already
            have: dict[tuple[str, ...], Any] = {}
            new = mapped
        else:
            names = [_part_name(t, p.values) for p in mapped]
            have = {tuple(p.values): p for p in self.tgt.get_partitions_by_names(self.db, name, names)}
            new = [p for p in mapped if tuple(p.values) not in have]
        changed = [p for p in mapped
                   if tuple(p.values) in have and _comparable(have[tuple(p.values)]) != _comparable(p)]
        if new:
            added = self.tgt.add_partitions_req(hms.AddPartitionsRequest(
                dbName=self.db, tblName=name, parts=new, ifNotExists=True, needResult=True))
            # the target may count files of an existing directory into the parameters: the source's stand
            changed += [want[tuple(p.values)] for p in added if _comparable(p) != _comparable(want[tuple(p.values)])]
            done = {tuple(p.values) for p in added}
            existed = [p for p in new if tuple(p.values) not in done]
            if existed:  # replayed after a kill: compare with what is there
                there = self.tgt.get_partitions_by_names(self.db, name, [_part_name(t, p.values) for p in existed])
                changed += [want[tuple(p.values)] for p in there
                            if _comparable(p) != _comparable(want[tuple(p.values)])]
        if changed:
            self.tgt.alter_partitions(self.db, name, changed, NO_STATS)

    def _drop_partitions(self, t: Any, values: list[list[str]]) -> None:
        """Drop these partitions of the target's table if they are there, a thousand a call; a table the target
        does not have (dropped later in the same dump) has none to drop."""
        names = [_part_name(t, list(v)) for v in values]
        for i in range(0, len(names), 1000):
            try:
                self.tgt.drop_partitions_req(hms.DropPartitionsRequest(
                    dbName=self.db, tblName=t.tableName.lower(), parts=hms.RequestPartsSpec(names=names[i:i + 1000]),
                    deleteData=True, ifExists=True, needResult=False))
            except hms.NoSuchObjectException:
                return

    def _sync_partitions(self, t: Any, parts: list[Any]) -> None:
        """The target table's partitions become exactly the dump's."""
        name = t.tableName.lower()
        keep = {tuple(p.values) for p in parts}
        keys = [k.name for k in t.partitionKeys]
        have = self.tgt.get_partition_names(self.db, name)
        if have:
            extra = [n for n in have if tuple(part_vals_from_name(keys, n)) not in keep]
            if extra:
                self.tgt.drop_partitions_req(hms.DropPartitionsRequest(
                    dbName=self.db, tblName=name, parts=hms.RequestPartsSpec(names=extra), deleteData=True,
                    ifExists=True, needResult=False))
        for i in range(0, len(parts), 1000):
            self._put_partitions(t, parts[i:i + 1000])

    def _put_function(self, src: Any) -> None:
        fn = copy.deepcopy(src)
        fn.dbName = self.db
        have = self.tgt.find_function(self.db, fn.functionName)
        if have is None:
            self.tgt.create_function(fn)
        elif _comparable(have) != _comparable(fn):
            self.tgt.alter_function(self.db, fn.functionName, fn)

    # ---- data ---------------------------------------------------------------------------------------------------

    def _copy_data(self) -> None:
        assert self.map is not None
        pairs: list[tuple[str, str, bool]] = []
        for name, parts in sorted(self.touched.items(), key=lambda x: x[0]):
            t = self.tgt.find_table(self.db, name)
            if t is None or t.tableType != "MANAGED_TABLE" or not self.map.managed_here(t.sd.location):
                continue
            pairs.append((*self.map.copy_pair(t.sd.location), not t.partitionKeys))
            if not t.partitionKeys:
                continue
            if parts is None:
                found = self.tgt.get_partitions(self.db, name)
            else:
                names = [_part_name(t, list(v)) for v in sorted(parts)]
                found = [p for i in range(0, len(names), 1000)
                         for p in self.tgt.get_partitions_by_names(self.db, name, names[i:i + 1000])]
            for p in found:
                if self.map.managed_here(p.sd.location):
                    pairs.append((*self.map.copy_pair(p.sd.location), True))
        started = time.monotonic()
        stats = datacopy.sync(pairs, self.copy_options)
        self.result.files_copied, self.result.bytes_copied = stats.files, stats.bytes
        self.result.copy_seconds = time.monotonic() - started


def status(target_uri: str, tgt_db: str) -> dict[str, str | None]:
    with connect(target_uri) as tgt:
        db = tgt.find_database(tgt_db.lower())
    if db is None:
        raise ReplError(f"database {tgt_db.lower()} does not exist on {target_uri}")
    p = db.parameters or {}
    return {"database": db.name, "source": p.get(SOURCE), "last_id": p.get(LAST_ID), "loading": p.get(LOADING),
            "target_event_id": p.get(TARGET_EVENT)}


def reset(root: str, src_db: str, bootstrap: bool) -> list[str]:
    """Clear the failure markers of `src_db`'s dumps; with `bootstrap`, remove its dumps so the next is a
    bootstrap (the target database is then reconciled with the source in full)."""
    import shutil

    staging = Staging(root, src_db)
    done = []
    for d in staging.dumps():
        if bootstrap:
            shutil.rmtree(d.path)
            done.append(f"removed {d.path}")
        elif d.has(NON_RECOVERABLE):
            os.remove(d.file(NON_RECOVERABLE))
            done.append(f"cleared the failure of {d.path}")
    return done
