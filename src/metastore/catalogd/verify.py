"""Comparable views of the cache and of the metastore (through Thrift): the same normalized shape, so a test or
`metastore catalogd status --verify` can tell whether the cache equals the metastore."""

from __future__ import annotations

from typing import Any

from ..thrift import hms
from ..thrift.client import MetastoreClient
from .catalog import CatalogCache
from .loader import partition_name


def _table(t: Any) -> dict[str, Any]:
    sd = t.sd
    return {"type": t.tableType, "owner": t.owner, "location": sd.location if sd else None,
            "cols": [(c.name, c.type) for c in (sd.cols or [])] if sd else [],
            "partition_keys": [(k.name, k.type) for k in (t.partitionKeys or [])],
            "parameters": dict(t.parameters or {})}


def _partition(p: Any) -> dict[str, Any]:
    return {"values": list(p.values), "location": p.sd.location if p.sd else None,
            "cols": [(c.name, c.type) for c in (p.sd.cols or [])] if p.sd else [],
            "parameters": dict(p.parameters or {})}


def _database(d: Any) -> dict[str, Any]:
    return {"location": d.locationUri, "description": d.description, "parameters": dict(d.parameters or {}),
            "owner": d.ownerName}


def cache_view(cache: CatalogCache, dbs: set[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, d in sorted(cache.dbs.items()):
        if dbs is not None and name not in dbs:
            continue
        tables: dict[str, Any] = {}
        for (db, tn), t in sorted(cache.tables.items()):
            if db != name:
                continue
            if t.obj is None:
                tables[tn] = "incomplete"
                continue
            tables[tn] = {**_table(t.obj), "partitions": {k: _partition(p) for k, p in sorted(t.partitions.items())}}
        out[name] = {**_database(d.obj), "functions": sorted(d.functions), "tables": tables}
    return out


def metastore_view(ms: MetastoreClient, dbs: set[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted(ms.get_all_databases()):
        if dbs is not None and name not in dbs:
            continue
        try:
            d = ms.get_database(name)
            tables = {}
            # get_table_objects_by_name and get_partition_by_name: calls the metastore answers from its store,
            # not from its serialized-table cache, so that the check does not share a fault with that cache
            for t in sorted(ms.get_table_objects_by_name(name, ms.get_all_tables(name)), key=lambda t: t.tableName):
                tn = t.tableName
                parts = ([ms.get_partition_by_name(name, tn, pn) for pn in ms.get_partition_names(name, tn, -1)]
                         if t.partitionKeys else [])
                tables[tn] = {**_table(t), "partitions": {partition_name(t, p): _partition(p) for p in
                                                          sorted(parts, key=lambda p: partition_name(t, p))}}
            fns = sorted(f.lower() for f in ms.get_functions(name, "*"))
        except hms.NoSuchObjectException:
            continue
        out[name] = {**_database(d), "functions": fns, "tables": tables}
    return out
