"""catalogd's Hive Metastore Thrift front.

Reads (get_database, get_all_databases, get_table, get_table_req, get_tables/get_all_tables, get_partition(s)
and friends, get_partitions_by_filter, get_partition_names) are answered from the cache; a table that is still
incomplete is loaded first, at the head of the loading queue. With `sync_reads`, a read first waits until the
cache has applied every event the metastore had when the read arrived. An object the cache does not hold (a
blacklisted one, a name the cache has not seen yet, a catalog-qualified name) is asked of the metastore, so a
miss answers exactly as the metastore does, with its errors.

Every other call passes through to the metastore unchanged, Hive exceptions included. After a call that may
change something, catalogd waits (bounded) until the cache has applied the metastore's events up to that
moment, so a client reads its own writes from the cache; with SYNC_DDL on, it also waits until a topic update
covering the change has reached the subscribers (syncddl.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ..core.names import hive_pattern
from ..thrift import hms
from ..thrift.client import READ_PREFIXES
from .catalog import CachedTable
from .filters import FilterEval

log = logging.getLogger(__name__)


class SyncTimeout(Exception):
    pass


class Front:
    def __init__(self, service: Any, sync_reads: bool = False, write_wait: float = 30.0) -> None:
        self.svc = service
        self.cache = service.cache
        self.ms = service.metastore
        self.sync_reads = sync_reads
        self.write_wait = write_wait
        self.hits = 0
        self.misses = 0
        self.passed = 0

    # -- pass-through ---------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any) -> Any:
            self.passed += 1
            result = self.ms.forward(name, *args)
            if not name.startswith(READ_PREFIXES):
                self.svc.after_write()
            return result
        return call

    def _miss(self, name: str, *args: Any) -> Any:
        self.misses += 1
        return self.ms.forward(name, *args)

    def _sync(self) -> None:
        if self.sync_reads:
            self.svc.sync_to_latest()

    @staticmethod
    def _plain(name: str | None) -> str | None:
        # "@hive#db" (a catalog-qualified name) is left to the metastore
        if name is None or name.startswith("@"):
            return None
        return name.lower()

    def _table(self, db: str | None, name: str | None) -> CachedTable | None:
        d, n = self._plain(db), (name or "").lower()
        if d is None or not n:
            return None
        t = self.cache.table(d, n)
        if t is None:
            return None
        if not t.complete:
            t = self.svc.loader.ensure_loaded(d, n)
        return t if t is not None and t.complete else None

    # -- databases ------------------------------------------------------------------------------------
    def get_database(self, name: str) -> Any:
        self._sync()
        d = self.cache.dbs.get(self._plain(name) or "")
        if d is None:
            return self._miss("get_database", name)
        self.hits += 1
        return d.obj

    def get_all_databases(self) -> list[str]:
        self._sync()
        if self.cache.blacklist_dbs:
            return self._miss("get_all_databases")
        self.hits += 1
        return self.cache.database_names()

    def get_databases(self, pattern: str) -> list[str]:
        self._sync()
        if self.cache.blacklist_dbs:
            return self._miss("get_databases", pattern)
        self.hits += 1
        match = hive_pattern(pattern)
        return [n for n in self.cache.database_names() if match(n)]

    # -- tables ---------------------------------------------------------------------------------------
    def get_table(self, dbname: str, tbl_name: str) -> Any:
        self._sync()
        t = self._table(dbname, tbl_name)
        if t is None:
            return self._miss("get_table", dbname, tbl_name)
        self.hits += 1
        return t.obj

    def get_table_req(self, req: Any) -> Any:
        if req is None:
            return self._miss("get_table_req", req)
        self._sync()
        t = self._table(req.dbName, req.tblName)
        if t is None:
            return self._miss("get_table_req", req)
        self.hits += 1
        return hms.GetTableResult(table=t.obj)

    def _names(self, db: str) -> list[str] | None:
        d = self._plain(db)
        if d is None or d not in self.cache.dbs or self.cache.blacklist_tables:
            return None
        return self.cache.table_names(d)

    def get_all_tables(self, db_name: str) -> list[str]:
        self._sync()
        names = self._names(db_name)
        if names is None:
            return self._miss("get_all_tables", db_name)
        self.hits += 1
        return names

    def get_tables(self, db_name: str, pattern: str) -> list[str]:
        self._sync()
        names = self._names(db_name)
        if names is None:
            return self._miss("get_tables", db_name, pattern)
        self.hits += 1
        match = hive_pattern(pattern)
        return [n for n in names if match(n)]

    # -- partitions -----------------------------------------------------------------------------------
    def _parts(self, db_name: str, tbl_name: str) -> tuple[CachedTable | None, list[tuple[str, Any]]]:
        self._sync()
        t = self._table(db_name, tbl_name)
        if t is None or not t.obj.partitionKeys:
            return None, []
        with t.lock:
            return t, sorted(t.partitions.items())

    def _listing(self, call: str, want_names: bool, part_vals: list[str] | None, *args: Any) -> list[Any]:
        # The four listings (objects or names; all, or those matching partial values, '' a wildcard); a miss
        # forwards the call's own arguments, args, whose first two are the table and last is max_parts
        t, parts = self._parts(args[0], args[1])
        if t is None or len(part_vals or []) > len(t.obj.partitionKeys):
            return self._miss(call, *args)
        self.hits += 1
        return _limit([n if want_names else p for n, p in self._ps(parts, part_vals)], args[-1])

    def get_partitions(self, db_name: str, tbl_name: str, max_parts: int) -> list[Any]:
        return self._listing("get_partitions", False, None, db_name, tbl_name, max_parts)

    def get_partition_names(self, db_name: str, tbl_name: str, max_parts: int) -> list[str]:
        return self._listing("get_partition_names", True, None, db_name, tbl_name, max_parts)

    def get_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> Any:
        t, parts = self._parts(db_name, tbl_name)
        found = [p for _, p in parts if list(p.values) == list(part_vals or [])]
        if t is None or not found:
            return self._miss("get_partition", db_name, tbl_name, part_vals)
        self.hits += 1
        return found[0]

    def get_partition_by_name(self, db_name: str, tbl_name: str, part_name: str) -> Any:
        t, parts = self._parts(db_name, tbl_name)
        found = dict(parts).get(part_name)
        if t is None or found is None:
            return self._miss("get_partition_by_name", db_name, tbl_name, part_name)
        self.hits += 1
        return found

    def get_partitions_by_names(self, db_name: str, tbl_name: str, names: list[str]) -> list[Any]:
        t, parts = self._parts(db_name, tbl_name)
        if t is None or names is None:
            return self._miss("get_partitions_by_names", db_name, tbl_name, names)
        self.hits += 1
        wanted = set(names)
        return [p for n, p in parts if n in wanted]

    def _ps(self, parts: list[tuple[str, Any]], vals: list[str] | None) -> list[tuple[str, Any]]:
        vals = list(vals or [])
        return [(n, p) for n, p in parts if all(v == "" or v == pv for v, pv in zip(vals, p.values))]

    def get_partitions_ps(self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int) -> list[Any]:
        return self._listing("get_partitions_ps", False, part_vals, db_name, tbl_name, part_vals, max_parts)

    def get_partition_names_ps(self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int) -> list[str]:
        return self._listing("get_partition_names_ps", True, part_vals, db_name, tbl_name, part_vals, max_parts)

    def get_partitions_by_filter(self, db_name: str, tbl_name: str, filter: str, max_parts: int) -> list[Any]:
        t, parts = self._parts(db_name, tbl_name)
        if t is None:
            return self._miss("get_partitions_by_filter", db_name, tbl_name, filter, max_parts)
        if not (filter or "").strip():
            self.hits += 1
            return _limit([p for _, p in parts], max_parts)
        try:
            ev = FilterEval(filter, [(k.name, k.type) for k in t.obj.partitionKeys])
        except ValueError:
            return self._miss("get_partitions_by_filter", db_name, tbl_name, filter, max_parts)  # its error
        self.hits += 1
        return _limit([p for _, p in parts if ev.matches(list(p.values))], max_parts)

    # -- fb303 basics answered here -------------------------------------------------------------------
    def getName(self) -> str:
        return "catalogd"

    def aliveSince(self) -> int:
        return int(self.svc.started)

    def getStatus(self) -> int:
        return 2  # ALIVE

    def getVersion(self) -> str:
        from .. import __version__
        return __version__


def _limit(items: list[Any], n: int | None) -> list[Any]:
    return items if n is None or n < 0 else items[:n]


def wait_until(pred: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
