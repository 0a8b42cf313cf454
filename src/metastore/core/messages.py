"""Notification messages in Hive's JSON message format (format name `json-0.2`): written by the catalog with
JsonMessageFactory, read by every consumer (catalogd, replication, the pipeline, the relay) with decode().

Objects inside a message (tableObjJson, partitionListJson, ...) are the Thrift structs serialized with
Thrift's JSON protocol, as Hive's JSONMessageFactory writes them, so Hive's own deserializers read them.
"""

from __future__ import annotations

import base64
import json
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, TypeVar

from ..thrift import hms, tjson
from . import model as m
from .events import EventType
from .names import make_part_name

FORMAT = "json-0.2"

# what tells the partitions of one batch apart, usually: their text is written once with these left open
_PARTITION_HOLES = ("values", "sd.location")

# what json.dumps(d, separators=(",", ":")) writes, without building an encoder for every message
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def thrift_json(obj: Any) -> str:
    """A model object as Thrift-JSON text (TJSONProtocol), as Hive embeds objects in messages."""
    return tjson.dumps(obj)


class JsonMessageFactory:
    """Builds the message text of each event type. `server` and `principal` are Hive's metadata fields."""

    format = FORMAT

    def __init__(self, server: str = "", principal: str = "") -> None:
        self.server = server
        self.principal = principal

    def _head(self, **fields: Any) -> dict[str, Any]:
        return {"server": self.server, "servicePrincipal": self.principal, **fields}

    @staticmethod
    def _now() -> int:
        return int(time.time())

    def _dump(self, d: dict[str, Any]) -> str:
        return _ENCODER.encode(d)

    def create_database(self, db: m.Database) -> str:
        return self._dump(self._head(db=db.name, timestamp=self._now()))

    def alter_database(self, before: m.Database, after: m.Database) -> str:
        return self._dump(self._head(db=after.name, dbObjBeforeJson=thrift_json(before),
                                     dbObjAfterJson=thrift_json(after), timestamp=self._now()))

    def drop_database(self, db: m.Database) -> str:
        return self._dump(self._head(db=db.name, timestamp=self._now()))

    def create_table(self, t: m.Table, files: list[str]) -> str:
        return self._dump(self._head(db=t.dbName, table=t.tableName, tableType=t.tableType,
                                     tableObjJson=thrift_json(t), timestamp=self._now(), files=files))

    def alter_table(self, before: m.Table, after: m.Table, truncate: bool = False) -> str:
        return self._dump(self._head(db=before.dbName, table=before.tableName, tableType=before.tableType,
                                     tableObjBeforeJson=thrift_json(before), tableObjAfterJson=thrift_json(after),
                                     isTruncateOp=str(truncate).lower(), timestamp=self._now()))

    def drop_table(self, t: m.Table) -> str:
        return self._dump(self._head(db=t.dbName, table=t.tableName, tableType=t.tableType,
                                     tableObjJson=thrift_json(t), timestamp=self._now()))

    @staticmethod
    def _spec(t: m.Table, p: m.Partition, keys: list[str] | None = None) -> dict[str, str]:
        """The partition's key values by key name (`keys`: the table's key names, when the caller has them)."""
        return dict(zip(keys if keys is not None else [k.name for k in t.partitionKeys], p.values))

    def add_partition(self, t: m.Table, parts: list[m.Partition], names: list[str] | None = None) -> str:
        """`names`: the partitions' names when the caller has them already (make_part_name of each)."""
        keys = [k.name for k in t.partitionKeys]
        if names is None:
            names = [make_part_name(keys, p.values) for p in parts]
        return self._dump(self._head(
            db=t.dbName, table=t.tableName, tableType=t.tableType, tableObjJson=thrift_json(t),
            timestamp=self._now(), partitions=[self._spec(t, p, keys) for p in parts],
            partitionListJson=tjson.dumps_alike(parts, _PARTITION_HOLES),
            partitionFiles=[{"partitionName": name, "files": []} for name in names]))

    def alter_partition(self, t: m.Table, before: m.Partition, after: m.Partition, truncate: bool = False) -> str:
        return self._dump(self._head(
            db=t.dbName, table=t.tableName, tableType=t.tableType, tableObjJson=thrift_json(t),
            isTruncateOp=str(truncate).lower(), timestamp=self._now(), keyValues=self._spec(t, before),
            partitionObjBeforeJson=thrift_json(before), partitionObjAfterJson=thrift_json(after)))

    def drop_partition(self, t: m.Table, parts: list[m.Partition]) -> str:
        keys = [k.name for k in t.partitionKeys]
        return self._dump(self._head(db=t.dbName, table=t.tableName, tableType=t.tableType,
                                     tableObjJson=thrift_json(t), timestamp=self._now(),
                                     partitions=[self._spec(t, p, keys) for p in parts]))

    def insert(self, t: m.Table, part: m.Partition | None, replace: bool, files: list[str]) -> str:
        d = self._head(db=t.dbName, table=t.tableName, tableType=t.tableType, tableObjJson=thrift_json(t))
        if part is not None:
            d["ptnObjJson"] = thrift_json(part)
        d.update(timestamp=self._now(), replace=str(replace).lower(), files=files)
        if part is not None:
            d["partKeyVals"] = self._spec(t, part)
        return self._dump(d)

    def create_function(self, fn: m.Function) -> str:
        return self._dump(self._head(db=fn.dbName, functionObjJson=thrift_json(fn), timestamp=self._now()))

    def drop_function(self, fn: m.Function) -> str:
        return self._dump(self._head(db=fn.dbName, functionName=fn.functionName, timestamp=self._now()))

    def add_constraint(self, list_key: str, cols: list[Any]) -> str:
        """ADD_PRIMARYKEY (list_key primaryKeyListJson), ADD_FOREIGNKEY (foreignKeyListJson), ...: the columns'
        Thrift structs (SQLPrimaryKey, ...) as Thrift-JSON texts."""
        return self._dump(self._head(timestamp=self._now(), **{list_key: [thrift_json(c) for c in cols]}))

    def drop_constraint(self, db: str, table: str, name: str) -> str:
        return self._dump(self._head(dbName=db, tableName=table, constraintName=name, timestamp=self._now()))

    def transaction(self, timestamp: int, **fields: Any) -> str:
        """OPEN_TXN, COMMIT_TXN, ABORT_TXN (Hive 3's JSONOpenTxnMessage, ...): the event's own fields."""
        return self._dump(self._head(**fields, timestamp=timestamp))

    def alloc_write_id(self, db: str, table: str, pairs: list[tuple[int, int]]) -> str:
        """ALLOC_WRITE_ID (Hive 3's): the write ids a table gave transactions, as parallel lists."""
        return self._dump(self._head(dbName=db, tableName=table, txnIdList=[t for t, _ in pairs],
                                     writeIdList=[w for _, w in pairs], timestamp=self._now()))


# ---- reading: decode() turns an event's message into one of the typed messages below ----

_Obj = TypeVar("_Obj")


def _obj(raw: Mapping[str, Any], key: str, cls: type[_Obj]) -> _Obj | None:
    text = raw.get(key)
    return tjson.loads(text, cls) if isinstance(text, str) and text else None


def _items(raw: Mapping[str, Any], key: str) -> list[Any]:
    """A list field of a message; anything else (absent, null, a number in a hostile message) reads as []."""
    v = raw.get(key)
    return v if isinstance(v, list) else []


def _spec(v: Any) -> dict[str, str]:
    return {str(k): "" if x is None else str(x) for k, x in v.items()} if isinstance(v, Mapping) else {}


_TABLE_NAME, _TABLE_DB, _TABLE_PARAMETERS = 1, 2, 9  # Table's field ids in the Hive Metastore IDL


def _doc(raw: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """The parsed Thrift JSON document of an embedded object, without building the struct."""
    text = raw.get(key)
    if not isinstance(text, str) or not text:
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _string_field(doc: dict[str, Any], fid: int) -> str:
    cell = doc.get(str(fid))
    v = cell.get("str") if isinstance(cell, dict) else None
    return v if isinstance(v, str) else ""


@dataclass(frozen=True)
class Message:
    """What every message says: the event (type, id, names as the log row has them) and the raw fields.

    Objects embedded as Thrift JSON are decoded when first read (a consumer that needs only names pays
    nothing for a table object or a thousand partitions)."""

    event_type: str
    event_id: int
    db: str
    table: str | None
    raw: Mapping[str, Any] = field(repr=False)

    @property
    def type(self) -> EventType | None:
        return EventType.of(self.event_type)

    def table_parameters(self) -> dict[str, Any] | None:
        """The table's parameters as of the event (its tableObjJson, or tableObjAfterJson of an alteration), read
        without decoding the rest of the table: the relay looks them up for every event's topic. None when the
        message has no table or the table no parameters."""
        doc = _doc(self.raw, "tableObjJson" if self.raw.get("tableObjJson") else "tableObjAfterJson")
        v = doc.get(str(_TABLE_PARAMETERS)) if doc is not None else None
        if not isinstance(v, dict) or not v:
            return None
        kind, val = next(iter(v.items()))
        if kind == "map" and isinstance(val, list) and len(val) == 4:  # ["str", "str", size, {k: v}]
            val = val[3]
        return val if isinstance(val, dict) else None


@dataclass(frozen=True)
class CreateDatabase(Message):
    pass


@dataclass(frozen=True)
class AlterDatabase(Message):
    @cached_property
    def before(self) -> hms.Database | None:
        return _obj(self.raw, "dbObjBeforeJson", hms.Database)

    @cached_property
    def after(self) -> hms.Database | None:
        return _obj(self.raw, "dbObjAfterJson", hms.Database)


@dataclass(frozen=True)
class DropDatabase(Message):
    pass


@dataclass(frozen=True)
class TableMessage(Message):
    """A message about one table; `table_obj` is the table as of the event (None if the message lacks it)."""

    @cached_property
    def table_obj(self) -> hms.Table | None:
        return _obj(self.raw, "tableObjJson", hms.Table)

    @property
    def table_type(self) -> str:
        return str(self.raw.get("tableType") or "")


@dataclass(frozen=True)
class CreateTable(TableMessage):
    @property
    def files(self) -> list[str]:
        return [str(f) for f in _items(self.raw, "files")]


@dataclass(frozen=True)
class AlterTable(TableMessage):
    @cached_property
    def before(self) -> hms.Table | None:
        return _obj(self.raw, "tableObjBeforeJson", hms.Table)

    @cached_property
    def after(self) -> hms.Table | None:
        return _obj(self.raw, "tableObjAfterJson", hms.Table)

    @cached_property
    def table_obj(self) -> hms.Table | None:
        return self.after

    @property
    def truncate(self) -> bool:
        return str(self.raw.get("isTruncateOp", "false")).lower() == "true"

    def renamed(self) -> tuple[tuple[str, str], tuple[str, str]] | None:
        """((db, table) before, (db, table) after), lower-cased, when the alteration renames the table. Reads
        only the two names of each table (catalogd's dispatcher asks this of every alteration)."""
        b, a = _doc(self.raw, "tableObjBeforeJson"), _doc(self.raw, "tableObjAfterJson")
        if b is None or a is None:
            return None
        src = (_string_field(b, _TABLE_DB).lower(), _string_field(b, _TABLE_NAME).lower())
        dst = (_string_field(a, _TABLE_DB).lower(), _string_field(a, _TABLE_NAME).lower())
        return (src, dst) if src != dst else None


@dataclass(frozen=True)
class DropTable(TableMessage):
    pass


@dataclass(frozen=True)
class AddPartition(TableMessage):
    @cached_property
    def partitions(self) -> list[hms.Partition]:
        return [tjson.loads(p, hms.Partition) for p in self.raw.get("partitionListJson") or []]

    @property
    def specs(self) -> list[dict[str, str]]:
        """Each partition's values by key name (the message's `partitions`)."""
        return [_spec(p) for p in _items(self.raw, "partitions")]


@dataclass(frozen=True)
class AlterPartition(TableMessage):
    @cached_property
    def before(self) -> hms.Partition | None:
        return _obj(self.raw, "partitionObjBeforeJson", hms.Partition)

    @cached_property
    def after(self) -> hms.Partition | None:
        return _obj(self.raw, "partitionObjAfterJson", hms.Partition)

    @property
    def key_values(self) -> dict[str, str]:
        """The partition's values before the alteration, by key name."""
        return _spec(self.raw.get("keyValues"))

    @property
    def truncate(self) -> bool:
        return str(self.raw.get("isTruncateOp", "false")).lower() == "true"


@dataclass(frozen=True)
class DropPartition(TableMessage):
    @property
    def specs(self) -> list[dict[str, str]]:
        return [_spec(p) for p in _items(self.raw, "partitions")]


@dataclass(frozen=True)
class Insert(TableMessage):
    @cached_property
    def partition(self) -> hms.Partition | None:
        return _obj(self.raw, "ptnObjJson", hms.Partition)

    @property
    def part_key_vals(self) -> dict[str, str] | None:
        """The written partition's values by key name; None for an unpartitioned table."""
        kv = self.raw.get("partKeyVals")
        return _spec(kv) if kv else None

    @property
    def replace(self) -> bool:
        return str(self.raw.get("replace", "false")).lower() == "true"

    @property
    def files(self) -> list[str]:
        return [str(f) for f in _items(self.raw, "files")]


@dataclass(frozen=True)
class CreateFunction(Message):
    @cached_property
    def function(self) -> hms.Function | None:
        return _obj(self.raw, "functionObjJson", hms.Function)


@dataclass(frozen=True)
class DropFunction(Message):
    @property
    def function_name(self) -> str:
        return str(self.raw.get("functionName") or "")


@dataclass(frozen=True)
class TxnMessage(Message):
    """OPEN_TXN, COMMIT_TXN, ABORT_TXN (Hive 3/4): {"txnid": N, "databases": [...],
    "tables": [...]}, tables named "db.table" or paired with `databases` by index."""

    @property
    def txn_id(self) -> int | None:
        v = self.raw.get("txnid")
        return v if isinstance(v, int) else None

    def tables(self) -> list[tuple[str, str]]:
        """The (db, table) pairs the transaction wrote, lower-cased, each once, in message order."""
        tables, dbs = _items(self.raw, "tables"), _items(self.raw, "databases")
        out: list[tuple[str, str]] = []
        for i, t in enumerate(tables):
            if not isinstance(t, str):
                continue
            if "." in t:
                d, n = t.split(".", 1)
            elif i < len(dbs) and isinstance(dbs[i], str):
                d, n = dbs[i], t
            else:
                continue
            if (d.lower(), n.lower()) not in out:
                out.append((d.lower(), n.lower()))
        return out


@dataclass(frozen=True)
class AllocWriteId(Message):
    """ALLOC_WRITE_ID (Hive 3/4): {"dbName", "tableName", "txnIdList": [...], "writeIdList": [...]}, the write
    ids the table gave those transactions."""

    def pairs(self) -> list[tuple[int, int]]:
        """(txn id, write id) of each allocation, in message order."""
        txns, wids = _items(self.raw, "txnIdList"), _items(self.raw, "writeIdList")
        return [(t, w) for t, w in zip(txns, wids) if isinstance(t, int) and isinstance(w, int)]

    def tables(self) -> list[tuple[str, str]]:
        d, t = self.raw.get("dbName"), self.raw.get("tableName")
        return [(d.lower(), t.lower())] if isinstance(d, str) and isinstance(t, str) else []


@dataclass(frozen=True)
class Unknown(Message):
    """A type this project does not read (a newer Hive's); its raw fields are all there is."""


_TYPES: dict[EventType, type[Message]] = {
    EventType.CREATE_DATABASE: CreateDatabase, EventType.ALTER_DATABASE: AlterDatabase,
    EventType.DROP_DATABASE: DropDatabase, EventType.CREATE_TABLE: CreateTable, EventType.ALTER_TABLE: AlterTable,
    EventType.DROP_TABLE: DropTable, EventType.ADD_PARTITION: AddPartition,
    EventType.ALTER_PARTITION: AlterPartition, EventType.DROP_PARTITION: DropPartition, EventType.INSERT: Insert,
    EventType.CREATE_FUNCTION: CreateFunction, EventType.DROP_FUNCTION: DropFunction,
    EventType.OPEN_TXN: TxnMessage, EventType.COMMIT_TXN: TxnMessage, EventType.ABORT_TXN: TxnMessage,
    EventType.ALLOC_WRITE_ID: AllocWriteId,
}


class MessageError(ValueError):
    """A message that is not Hive's JSON (or its gzip form): the reader decides whether to skip or stop."""


# The largest message text a reader decompresses: a gzip message is read from another metastore, and a few KiB
# of it may inflate to gigabytes. Hive's own messages are far below (a table with 10,000 partitions: ~10 MiB).
MAX_MESSAGE_BYTES = 256 * 1024 * 1024


def gunzip(data: bytes) -> bytes:
    """The text of one whole gzip stream, at most MAX_MESSAGE_BYTES: a stream cut short (no trailer, so its CRC
    unchecked) or followed by anything (a second member, garbage) is refused, not read in part."""
    d = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer
    out = d.decompress(data, MAX_MESSAGE_BYTES)
    if d.unconsumed_tail or (not d.eof and len(out) >= MAX_MESSAGE_BYTES):
        raise MessageError(f"a gzip message inflates beyond {MAX_MESSAGE_BYTES} bytes")
    if not d.eof:
        raise MessageError("a gzip message ends before its stream does (truncated)")
    if d.unused_data:
        raise MessageError("a gzip message has data after its stream")
    return out


def message_fields(text: str | bytes | None, fmt: str | None = None) -> dict[str, Any]:
    """The JSON object of a message text; Hive 3/4's `gzip(json-2.0)` format (base64 of gzip) too."""
    if not text:
        return {}
    try:
        if fmt and fmt.startswith("gzip"):
            text = gunzip(base64.b64decode(text))
        raw = json.loads(text)
    except MessageError:
        raise
    except (ValueError, OSError, EOFError, zlib.error) as e:
        raise MessageError(f"not a JSON message ({type(e).__name__})") from None
    if not isinstance(raw, dict):
        raise MessageError("not a JSON object")
    return raw


class EventRow(Protocol):
    """What decode() reads of a notification event (hms.NotificationEvent and the model's have it); message,
    messageFormat, dbName and tableName are read when present."""

    @property
    def eventId(self) -> int | None: ...  # noqa: N802 - Hive's field names

    @property
    def eventType(self) -> str | None: ...  # noqa: N802


def decode(event: EventRow) -> Message:
    """The typed message of a notification event (an hms.NotificationEvent or our model's, or anything with
    eventId, eventType, dbName, tableName, message and messageFormat)."""
    raw = message_fields(getattr(event, "message", None), getattr(event, "messageFormat", None))
    return from_fields(str(event.eventType or ""), int(event.eventId or 0), raw,
                       db=getattr(event, "dbName", None), table=getattr(event, "tableName", None))


def from_fields(event_type: str, event_id: int, raw: Mapping[str, Any], db: str | None = None,
                table: str | None = None) -> Message:
    """The typed message of fields already decoded by their reader: a bus message's body (HCatalog's field
    set, notify/hcat.py, shares its partition fields with the log's), a test's. `db`/`table` default to the
    fields' own."""
    t = EventType.of(event_type)
    cls = _TYPES.get(t, Unknown) if t is not None else Unknown
    db = db or raw.get("db") or ""
    table = table or raw.get("table") or None
    return cls(event_type, event_id, str(db), str(table) if table else None, raw)
