"""Notification messages in Hive's JSON message format (format name `json-0.2`).

Objects inside a message (tableObjJson, partitionListJson, ...) are the Thrift structs serialized with
Thrift's JSON protocol, as Hive's JSONMessageFactory writes them, so Hive's own deserializers read them.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..thrift import tjson
from . import model as m
from .names import make_part_name

FORMAT = "json-0.2"

CREATE_DATABASE = "CREATE_DATABASE"
ALTER_DATABASE = "ALTER_DATABASE"
DROP_DATABASE = "DROP_DATABASE"
CREATE_TABLE = "CREATE_TABLE"
ALTER_TABLE = "ALTER_TABLE"
DROP_TABLE = "DROP_TABLE"
ADD_PARTITION = "ADD_PARTITION"
ALTER_PARTITION = "ALTER_PARTITION"
DROP_PARTITION = "DROP_PARTITION"
INSERT = "INSERT"
CREATE_FUNCTION = "CREATE_FUNCTION"
DROP_FUNCTION = "DROP_FUNCTION"

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
