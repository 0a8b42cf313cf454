"""REPL DUMP: the source database's metadata (bootstrap) or its events since the last dump (incremental).

The first dump of a database, or the first after `metastore repl reset --bootstrap`, is a bootstrap; every
later one is incremental from the previous dump's last event id (as Hive's dump takes it from the previous
`_dumpmetadata`). A dump is only taken once the previous one is loaded (`_finished_load`), so that id is
also the target's `repl.last.id`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import time
import uuid

from ..core.errors import EventsMissing
from ..core.events import EventType
from ..core.messages import AlterTable, MessageError, decode
from ..thrift import hms, tjson
from ..thrift.client import MetastoreClient, hive_message
from .client import connect
from .errors import NeedsReset, NothingToDo, ReplError
from .result import ReplResult
from .staging import (
    BOOTSTRAP,
    DUMP_EXECUTION,
    FINISHED_DUMP,
    INCREMENTAL,
    Dump,
    DumpMeta,
    Staging,
    write_atomic,
    write_json,
)

log = logging.getLogger(__name__)
BATCH = 1000


@dataclasses.dataclass
class DumpResult(ReplResult):
    seconds: float = 0.0

    def describe(self) -> str:
        what = self.counts(f"{self.events} events")
        return (f"{self.dump_type} dump of events {self.from_id}..{self.to_id} at {self.path}: {what} "
                f"in {self.seconds:.2f}s")


def dump(source_uri: str, db: str, root: str, execution_id: int | None = None) -> DumpResult:
    """Dump `db` of the metastore at `source_uri` under `root`; NothingToDo when the last dump is not loaded.

    `execution_id`: the scheduled execution taking the dump, recorded in it for the load's metrics."""
    db = db.lower()
    staging = Staging(root, db)
    dumps = staging.dumps()
    for d in dumps:
        failure = d.failure()
        if failure:
            raise NeedsReset(f"the load of {d.path} failed and needs `metastore repl reset {db}`: {failure}")
    done = [d for d in dumps if d.dumped]
    for d in dumps:  # dumps that died before `_finished_dump` were never offered to LOAD
        if not d.dumped:
            shutil.rmtree(d.path, ignore_errors=True)
    prev = done[-1] if done else None
    if prev is not None and not prev.loaded:
        raise NothingToDo(f"skipped: the previous dump {prev.path} (events up to {prev.meta.to_id}) is not "
                          "loaded yet")
    started = time.monotonic()
    with connect(source_uri) as src:
        db_obj = src.find_database(db)
        if db_obj is None:
            raise ReplError(f"database {db} does not exist on the source {source_uri}")
        current = src.current_event_id()
        if prev is None:
            result = _bootstrap(src, staging, db, db_obj, current, execution_id)
        else:
            result = _incremental(src, staging, db, db_obj, prev.meta.to_id, current, source_uri, execution_id)
    result.seconds = time.monotonic() - started
    return result


def _new(staging: Staging, kind: str, from_id: int, to_id: int) -> Dump:
    return staging.new_dump(DumpMeta(kind, from_id, to_id, staging.db, int(time.time() * 1000),
                                     uuid.uuid4().hex))


def _bootstrap(src: MetastoreClient, staging: Staging, db: str, db_obj: object, current: int,
               execution_id: int | None) -> DumpResult:
    # Events from `current` on are in the next incremental dump; objects changed while this dump reads
    # them are replayed from there (every load step sets an object to its state, so replays are harmless).
    d = _new(staging, BOOTSTRAP, current, current)
    r = DumpResult(BOOTSTRAP, d.path, current, current)
    write_json(d.file("_db"), json.loads(tjson.dumps(db_obj)))
    for name in sorted(src.get_all_tables(db)):
        t = src.find_table(db, name)
        if t is None:
            continue  # dropped while dumping; its DROP_TABLE event is in the next dump
        try:
            parts = src.get_partitions(db, name) if t.partitionKeys else []
        except hms.NoSuchObjectException:
            parts = []  # dropped while dumping, as above
        write_json(d.file(db, name, "_metadata"), {"table": json.loads(tjson.dumps(t)),
                                                   "partitions": [json.loads(tjson.dumps(p)) for p in parts]},
                   sync=False)
        r.tables += 1
        r.partitions += len(parts)
    for name in sorted(src.get_functions(db)):
        fn = src.find_function(db, name)
        if fn is not None:
            write_json(d.file(db, "_functions", name, "_metadata"), json.loads(tjson.dumps(fn)), sync=False)
            r.functions += 1
    _finish(d, execution_id)
    return r


def _concerns(e: hms.NotificationEvent, db: str) -> bool:
    if (getattr(e, "dbName", None) or "").lower() == db:
        return True
    if e.eventType != EventType.ALTER_TABLE:
        return False  # only a rename out of the database is logged under another one: no message to decode
    try:
        m = decode(e)
        # a rename out of the database is logged under the new one: its table before is in this one
        return isinstance(m, AlterTable) and m.before is not None and (m.before.dbName or "").lower() == db
    except (MessageError, ValueError, KeyError, TypeError, AttributeError):
        return False  # malformed: not this database's


def _incremental(src: MetastoreClient, staging: Staging, db: str, db_obj: object, last: int, current: int,
                 source_uri: str, execution_id: int | None) -> DumpResult:
    d = _new(staging, INCREMENTAL, last, current)
    r = DumpResult(INCREMENTAL, d.path, last, current)
    write_json(d.file("_db"), json.loads(tjson.dumps(db_obj)))
    after = last
    try:
        while after < current:
            try:
                events = src.next_notification(after, BATCH)
            except EventsMissing as gone:
                raise _purged(source_uri, last, str(gone)) from None
            except hms.MetaException as err:
                raise ReplError(f"reading the source's events after {after}: {hive_message(err)}") from None
            events = [e for e in events if e.eventId <= current]
            if not events:
                break
            if after == last and events[0].eventId > last + 1:
                raise _purged(source_uri, last, f"the oldest event left is {events[0].eventId}")
            for e in events:
                if _concerns(e, db):
                    write_json(d.file(str(e.eventId), "_metadata"), {
                        "eventId": e.eventId, "eventTime": e.eventTime, "eventType": e.eventType,
                        "dbName": e.dbName, "tableName": e.tableName, "message": e.message,
                        "messageFormat": e.messageFormat}, sync=False)
                    r.events += 1
            after = events[-1].eventId
    except BaseException:
        shutil.rmtree(d.path, ignore_errors=True)  # never acknowledged; the next DUMP starts over
        raise
    _finish(d, execution_id)
    log.info("dumped %d events of %s (%d..%d) to %s", r.events, db, last, current, d.path)
    return r


def _purged(uri: str, last: int, detail: str | None) -> ReplError:
    return ReplError(f"the source {uri} no longer has the events after {last} that this incremental dump needs "
                     f"({detail}); they were cleaned before they were replicated (HIVE-20629). Keep them with a "
                     "registered consumer (`metastore events consumers register`), or start over with "
                     "`metastore repl reset --bootstrap` and a new bootstrap")


def _finish(d: Dump, execution_id: int | None) -> None:
    os.sync()  # the dump's files, written without a sync each, are on disk before the acknowledgement
    if execution_id is not None:
        write_atomic(d.file(DUMP_EXECUTION), f"{execution_id}\n")
    d.mark(FINISHED_DUMP)
