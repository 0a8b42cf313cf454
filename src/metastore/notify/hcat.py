"""HCatalog's messages on the bus: one JSON body per event type, and the message properties.

Every message is a text message whose properties are
    HCAT_EVENT            the event type (CREATE_TABLE, ADD_PARTITION, ...)
    HCAT_MESSAGE_VERSION  "0.1", the version of HCatalog's JSON messages
    HCAT_MESSAGE_FORMAT   "json" (or the name of another format, such as "gzip(json)")
    HCAT_EVENT_ID         the event's id in the notification log, so that consumers can drop duplicates

The body's fields, per event type. Every body starts with timestamp (seconds since the epoch, when the change
was made), eventType, server (the metastore's Thrift URL) and servicePrincipal (empty without Kerberos), db:

    CREATE_DATABASE, DROP_DATABASE   (no more)                                      as HCatalog sent them
    CREATE_TABLE, DROP_TABLE         table                                          as HCatalog sent them
    ADD_PARTITION, DROP_PARTITION    table, partitions: [{key: value, ...}, ...]    as HCatalog sent them
                                     (one map per partition, keys in partition-key order)
    ALTER_DATABASE                   (no more)
    ALTER_TABLE                      table, tableType       db and table name the table before the change
    ALTER_PARTITION                  table, tableType, keyValues: {key: value}      of the partition before
    INSERT                           table, tableType, partKeyVals: {key: value} (null for a table), files
    CREATE_FUNCTION                  functionObjJson (the Function as Thrift JSON)
    DROP_FUNCTION                    functionName
    any other type                   table, when the event has one

for example
    {"timestamp":1360272556,"eventType":"ADD_PARTITION","server":"thrift://127.0.0.1:9083",
     "servicePrincipal":"","db":"mydb","table":"mytbl","partitions":[{"partKey1":"partVal1A","partKey2":"partVal2A"}]}

Formats are pluggable (register_format): "json" is the JSON text itself; "gzip(json)" is the same JSON,
gzip-compressed and then Base64-encoded, as Hive's gzip message encoder does, still in a text message.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core import messages
from ..core.model import NotificationEvent
from .topics import TopicMapper

HCAT_EVENT = "HCAT_EVENT"
HCAT_MESSAGE_VERSION = "HCAT_MESSAGE_VERSION"
HCAT_MESSAGE_FORMAT = "HCAT_MESSAGE_FORMAT"
HCAT_EVENT_ID = "HCAT_EVENT_ID"
MESSAGE_VERSION = "0.1"


class MessageFormat:
    """How a message's fields become its text body, and back. Subclass and register_format() to add one."""

    name = "json"
    version = MESSAGE_VERSION

    def encode(self, fields: Mapping[str, Any]) -> str:
        return json.dumps(fields, separators=(",", ":"), ensure_ascii=False)

    def decode(self, body: str | bytes) -> dict[str, Any]:
        return json.loads(body)


class GzipJsonFormat(MessageFormat):
    """The JSON body gzip-compressed, then Base64-encoded (text, so it still travels as a text message)."""

    name = "gzip(json)"

    def encode(self, fields: Mapping[str, Any]) -> str:
        raw = super().encode(fields).encode("utf-8")
        return base64.b64encode(gzip.compress(raw, mtime=0)).decode("ascii")

    def decode(self, body: str | bytes) -> dict[str, Any]:
        # bounded: a body from the bus may inflate to gigabytes (messages.gunzip refuses beyond its limit)
        data = body.encode("ascii") if isinstance(body, str) else body
        return json.loads(messages.gunzip(base64.b64decode(data)).decode("utf-8"))


_FORMATS: dict[str, type[MessageFormat]] = {"json": MessageFormat, "gzip(json)": GzipJsonFormat,
                                            "gzip": GzipJsonFormat}


def register_format(name: str, cls: type[MessageFormat]) -> None:
    _FORMATS[name] = cls


def get_format(name: str | None = None) -> MessageFormat:
    try:
        return _FORMATS[(name or "json").strip()]()
    except KeyError:
        raise ValueError(f"unknown message format {name!r} (known: {', '.join(sorted(_FORMATS))})") from None


def decode_body(body: str | bytes, format_name: str | None) -> dict[str, Any]:
    """A message body's fields, by the name in its HCAT_MESSAGE_FORMAT property."""
    return get_format(format_name).decode(body)


@dataclass(frozen=True)
class BusMessage:
    """One event as it goes on the bus."""

    event_id: int
    event_type: str
    topic: str
    body: str
    headers: dict[str, str] = field(default_factory=dict)
    event_time: int = 0


def read_event(e: NotificationEvent) -> messages.Message:
    """The event's typed message (core.messages.decode). A message that is not JSON reads as one without
    fields: the event still goes out, with what its log row says (type, db, table), never stops the relay."""
    try:
        return messages.decode(e)
    except messages.MessageError:
        return messages.from_fields(e.eventType, e.eventId, {}, db=e.dbName, table=e.tableName)


class HCatMessages:
    """Turns log events into bus messages: topic, HCatalog body, properties."""

    def __init__(self, topics: TopicMapper | None = None, fmt: MessageFormat | None = None, server: str = "",
                 principal: str = "") -> None:
        self.topics = topics or TopicMapper()
        self.fmt = fmt or MessageFormat()
        self.server = server
        self.principal = principal

    def fields(self, e: NotificationEvent, m: messages.Message | None = None) -> dict[str, Any]:
        """HCatalog's field set of the event's type, from the event's typed message `m`."""
        m = read_event(e) if m is None else m
        raw = m.raw
        ts = raw.get("timestamp")
        # json reads 1e999 as inf, which int() refuses
        stamp = int(ts) if isinstance(ts, (int, float)) and math.isfinite(ts) else int(e.eventTime)
        d: dict[str, Any] = {"timestamp": stamp,
                             "eventType": e.eventType, "server": self.server, "servicePrincipal": self.principal,
                             "db": raw.get("db") or e.dbName}
        table = raw.get("table") or e.tableName  # the message's: ALTER_TABLE names the table before a rename
        if isinstance(m, (messages.CreateDatabase, messages.AlterDatabase, messages.DropDatabase)):
            pass
        elif isinstance(m, (messages.CreateTable, messages.DropTable)):
            d["table"] = table
        elif isinstance(m, (messages.AddPartition, messages.DropPartition)):
            d["table"] = table
            d["partitions"] = m.specs
        elif isinstance(m, messages.AlterTable):
            d["table"] = table
            d["tableType"] = m.table_type
        elif isinstance(m, messages.AlterPartition):
            d["table"] = table
            d["tableType"] = m.table_type
            d["keyValues"] = m.key_values
        elif isinstance(m, messages.Insert):
            d["table"] = table
            d["tableType"] = m.table_type
            d["partKeyVals"] = m.part_key_vals
            d["files"] = m.files
        elif isinstance(m, messages.CreateFunction):
            d["functionObjJson"] = raw.get("functionObjJson")
        elif isinstance(m, messages.DropFunction):
            d["functionName"] = raw.get("functionName")
        elif table:
            d["table"] = table
        return d

    def topic(self, e: NotificationEvent, m: messages.Message | None = None) -> str:
        params = (read_event(e) if m is None else m).table_parameters() if e.tableName else None
        return self.topics.topic(e.eventType, e.dbName, e.tableName, params)

    def message(self, e: NotificationEvent, m: messages.Message | None = None, topic: str | None = None) -> BusMessage:
        """The event as a bus message; `m` and `topic`, when the caller has them already (the event's
        read_event() and topic()), are not worked out again."""
        m = read_event(e) if m is None else m
        return BusMessage(
            event_id=e.eventId, event_type=e.eventType, topic=self.topic(e, m) if topic is None else topic,
            body=self.fmt.encode(self.fields(e, m)),
            headers={HCAT_EVENT: e.eventType, HCAT_MESSAGE_VERSION: self.fmt.version,
                     HCAT_MESSAGE_FORMAT: self.fmt.name, HCAT_EVENT_ID: str(e.eventId)},
            event_time=e.eventTime)
