"""Serialized forms of tables and their partitions, kept while the table is unchanged.

The hot reads of every query plan (get_table, partition listing) answer from wire bytes built once per
table version. Every change to a table or its partitions increments TBLS.VERSION in the same transaction,
and each call reads the current (id, version) first, so a cache entry is used only while it is exact:
correct with several server processes on one database, at the cost of one indexed lookup per call.

Each method here takes a call's decoded argument struct and returns the bytes of its result struct, or
None to let the regular handler answer (misses it cannot serve exactly, and every error).

With authorization "sql" every path is checked like the handler's call: each starts with the catalog's
table_version, which the authorizer checks (SELECT on the table, in the connection's principal); a refusal is
a CatalogError, so the regular handler answers it with the same refusal. The check costs ~2 us of a call
(bench/authz_check.py), so the paths stay on.
"""

from __future__ import annotations

import logging
import struct
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar, cast

from thriftpy2.protocol.cybin import TCyBinaryProtocol
from thriftpy2.thrift import TPayload
from thriftpy2.transport import TMemoryBuffer

from ..catalog.service import MAX_NAMES_PER_CALL, Catalog
from ..core import errors as E
from ..core import model as m
from ..core.names import make_part_name, part_vals_from_name
from .convert import to_thrift
from .handler import other_catalog, parse_db_name
from .thrift_server import FastPath

log = logging.getLogger(__name__)

_STRUCT, _LIST = 12, 15
_STOP = b"\x00"


# What each fast path reads of its call's argument struct (thriftpy2's `<method>_args`, made at run time from
# the IDL: the names are the IDL's argument names; any field may be None on the wire).
class _TableArgs(Protocol):
    dbname: str | None
    tbl_name: str | None


class _TableReq(Protocol):
    dbName: str | None  # noqa: N815 - the IDL's names
    tblName: str | None  # noqa: N815
    catName: str | None  # noqa: N815


class _TableReqArgs(Protocol):
    req: _TableReq | None


class _PartitionsArgs(Protocol):
    db_name: str | None
    tbl_name: str | None
    max_parts: int | None


class _PartitionsPsArgs(_PartitionsArgs, Protocol):
    part_vals: list[str] | None


class _PartitionsFilterArgs(_PartitionsArgs, Protocol):
    filter: str | None


class _PartitionsNamesArgs(Protocol):
    db_name: str | None
    tbl_name: str | None
    names: list[str] | None


_A = TypeVar("_A")
_P = TypeVar("_P")


def struct_bytes(tobj: TPayload) -> bytes:
    """A Thrift struct in the binary protocol: its fields and the stop byte."""
    buf = TMemoryBuffer()
    tobj.write(TCyBinaryProtocol(buf))
    data: bytes = buf.getvalue()
    return data


def _struct_field(fid: int, body: bytes) -> bytes:
    return struct.pack("!bh", _STRUCT, fid) + body


def _list_field(fid: int, bodies: list[bytes]) -> bytes:
    return struct.pack("!bhbi", _LIST, fid, _STRUCT, len(bodies)) + b"".join(bodies)


@dataclass
class _Entry:
    key: tuple[int, int]  # (TBL_ID, VERSION)
    table: m.Table
    table_bytes: bytes
    # (name, values, bytes) of every partition in name order, once some call needed them all
    parts: list[tuple[str, list[str], bytes]] | None = None
    index: dict[str, int] | None = None
    size: int = 0


class SerializedReads:
    def __init__(self, catalog: Catalog, max_bytes: int = 128 * 1024 * 1024) -> None:
        self.catalog = catalog
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def methods(self) -> dict[str, FastPath]:
        return {
            "get_table": self.get_table,
            "get_table_req": self.get_table_req,
            "get_partitions": self.get_partitions,
            "get_partitions_with_auth": self.get_partitions,
            "get_partitions_ps": self.get_partitions_ps,
            "get_partitions_ps_with_auth": self.get_partitions_ps,
            "get_partitions_by_filter": self.get_partitions_by_filter,
            "get_partitions_by_names": self.get_partitions_by_names,
        }

    # ---- the cache ----------------------------------------------------------------------------------

    def _entry(self, db: str | None, name: str | None) -> _Entry | None:
        if not db or not name:
            return None
        db, name = parse_db_name(db)[1].lower(), name.lower()
        key = self.catalog.table_version(db, name)
        if key is None:
            return None
        with self._lock:
            e = self._entries.get((db, name))
            if e is not None and e.key == key:
                self._entries.move_to_end((db, name))
                self.hits += 1
                return e
        self.misses += 1
        # Built from a read after the version lookup: if the table changed in between, the entry holds
        # newer data under the older key, and the next call's lookup replaces it.
        table = self.catalog.get_table(db, name)
        e = _Entry(key, table, struct_bytes(to_thrift(table)))
        e.size = len(e.table_bytes)
        self._put((db, name), e)
        return e

    def _put(self, k: tuple[str, str], e: _Entry) -> None:
        with self._lock:
            old = self._entries.pop(k, None)
            if old is not None:
                self._bytes -= old.size
            self._entries[k] = e
            self._bytes += e.size
            while self._bytes > self.max_bytes and len(self._entries) > 1:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.size

    def _all_parts(self, e: _Entry) -> list[tuple[str, list[str], bytes]]:
        if e.parts is None:
            t = e.table
            keys = [k.name for k in t.partitionKeys]
            parts = self.catalog.get_partitions(t.dbName, t.tableName)
            built = [(make_part_name(keys, p.values), p.values, struct_bytes(to_thrift(p))) for p in parts]
            e.index = {n: i for i, (n, _, _) in enumerate(built)}
            e.parts = built
            with self._lock:
                added = sum(len(b) + len(n) + 64 for n, _, b in built)
                e.size += added
                if self._entries.get((t.dbName, t.tableName)) is e:
                    self._bytes += added
        return e.parts

    # ---- answers ------------------------------------------------------------------------------------

    def _guard(  # type: ignore[misc]
            fn: Callable[[SerializedReads, _A], bytes | None]) -> Callable[[SerializedReads, TPayload], bytes | None]:
        def call(self: SerializedReads, a: TPayload) -> bytes | None:
            try:
                # `a` is the `_args` struct of the method this path serves (methods() maps it by name): it has
                # the fields the path's Protocol names
                return fn(self, cast(_A, a))
            except E.CatalogError:
                return None  # the regular handler answers, with the right exception
        return call

    @_guard
    def get_table(self, a: _TableArgs) -> bytes | None:
        e = self._entry(a.dbname, a.tbl_name)
        return None if e is None else _struct_field(0, e.table_bytes) + _STOP

    @_guard
    def get_table_req(self, a: _TableReqArgs) -> bytes | None:
        req = a.req
        if req is None or other_catalog(req.catName, req.dbName) is not None:
            return None  # the handler answers (a catalog this store does not have)
        e = self._entry(req.dbName, req.tblName)
        if e is None:
            return None
        return _struct_field(0, _struct_field(1, e.table_bytes) + _STOP) + _STOP

    @staticmethod
    def _limit(parts: list[_P], max_parts: int | None) -> list[_P]:
        return parts if max_parts is None or max_parts < 0 else parts[:max_parts]

    @_guard
    def get_partitions(self, a: _PartitionsArgs) -> bytes | None:
        e = self._entry(a.db_name, a.tbl_name)
        if e is None:
            return None
        parts = self._limit(self._all_parts(e), a.max_parts)
        return _list_field(0, [b for _, _, b in parts]) + _STOP

    @_guard
    def get_partitions_ps(self, a: _PartitionsPsArgs) -> bytes | None:
        e = self._entry(a.db_name, a.tbl_name)
        if e is None or e.parts is None:
            return None
        spec = list(a.part_vals or [])
        if len(spec) > len(e.table.partitionKeys):
            return None
        want = [(i, v) for i, v in enumerate(spec) if v not in ("", None)]
        parts = [p for p in e.parts if all(p[1][i] == v for i, v in want)]
        return _list_field(0, [b for _, _, b in self._limit(parts, a.max_parts)]) + _STOP

    @_guard
    def get_partitions_by_filter(self, a: _PartitionsFilterArgs) -> bytes | None:
        e = self._entry(a.db_name, a.tbl_name)
        if e is None or e.parts is None or e.index is None:
            return None
        t = e.table
        names = self.catalog.get_partition_names_by_filter(t.dbName, t.tableName, a.filter,
                                                           -1 if a.max_parts is None else a.max_parts)
        idx = [e.index.get(n) for n in names]
        if any(i is None for i in idx):
            return None  # changed since the entry was built
        return _list_field(0, [e.parts[i][2] for i in idx]) + _STOP  # type: ignore[index]

    @_guard
    def get_partitions_by_names(self, a: _PartitionsNamesArgs) -> bytes | None:
        if a.names is not None and len(a.names) > MAX_NAMES_PER_CALL:
            return None  # the catalog's path refuses it, with its MetaException (and nothing is looked up here)
        e = self._entry(a.db_name, a.tbl_name)
        if e is None or e.parts is None or e.index is None:
            return None
        keys = [k.name for k in e.table.partitionKeys]
        found = []
        for n in a.names or []:
            try:
                i = e.index.get(make_part_name(keys, part_vals_from_name(keys, n)))
            except E.CatalogError:
                continue
            if i is not None:
                found.append(i)
        return _list_field(0, [e.parts[i][2] for i in sorted(set(found))]) + _STOP
