"""Helpers for the catalogd tests: a driver of random metastore operations (through Thrift), a replay of the
notification log with synthetic transaction events, and catalogd processors run in-process on it."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from metastore.catalogd.bootstrap import bootstrap
from metastore.catalogd.catalog import CatalogCache
from metastore.catalogd.loader import TableLoader
from metastore.catalogd.processor import Processor, make_processor
from metastore.thrift import hms
from metastore.thrift.client import MetastoreClient


class Metastore(MetastoreClient):
    """The project's client, plus any other Thrift call by its name (open_txns, commit_txn, alter_table_with_cascade,
    ...) for the tests' set-up; catalogd itself uses the typed methods only."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args: self.forward(name, *args)


def fs(name: str, type_: str = "string") -> Any:
    return hms.FieldSchema(name=name, type=type_, comment=None)


def table_obj(db: str, name: str, partitioned: bool, params: dict[str, str] | None = None) -> Any:
    serde = hms.SerDeInfo(name=None, serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          parameters={})
    sd = hms.StorageDescriptor(cols=[fs("a", "int"), fs("b")], location=None,
                               inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                               compressed=False, numBuckets=-1, serdeInfo=serde, bucketCols=[], sortCols=[],
                               parameters={})
    return hms.Table(tableName=name, dbName=db, owner="test", createTime=0, lastAccessTime=0, retention=0, sd=sd,
                     partitionKeys=[fs("p")] if partitioned else [], parameters=dict(params or {}),
                     tableType="MANAGED_TABLE")


def fresh_table(ms: Any, db: str, name: str) -> Any:
    """The table as stored: get_table_objects_by_name is answered from the store, while get_table may come from
    the metastore's serialized-table cache, which on SQLite can serve a dropped table's same-named successor
    the old table's bytes when both got the same TBL_ID and VERSION (a metastore bug, reported in issue 7)."""
    return ms.get_table_objects_by_name(db, [name])[0]


def set_table_params(ms: Any, db: str, name: str, **params: str) -> None:
    """One ALTER_TABLE event: the stored table with `params` added to its parameters."""
    t = fresh_table(ms, db, name)
    t.parameters = dict(t.parameters or {}, **params)
    ms.alter_table(db, name, t)


@dataclass
class Model:
    """What the driver believes exists, to pick valid targets (the metastore stays the judge)."""
    dbs: dict[str, dict[str, set[str] | None]] = field(default_factory=dict)  # db -> table -> partitions|None
    functions: dict[str, set[str]] = field(default_factory=dict)


class Driver:
    """Applies abstract operations, (kind, a, b, c) of small ints, to the metastore; targets are chosen from
    the model so most are valid. Records after which event id each transaction committed, and its tables."""

    KINDS = ("create_db", "create_table", "create_table", "alter_table", "drop_table", "rename", "rename",
             "add_partition", "add_partition", "drop_partition", "alter_partition", "insert", "alter_db",
             "drop_db", "txn", "create_function", "drop_function")

    def __init__(self, ms: Metastore, prefix: str) -> None:
        self.ms = ms
        self.prefix = prefix
        self.model = Model()
        self.txns: list[tuple[int, str, list[tuple[str, str]]]] = []  # (after event id, COMMIT/ABORT, tables)
        self.counter = 0

    def dbs(self) -> list[str]:
        return sorted(self.model.dbs)

    def tables(self) -> list[tuple[str, str]]:
        return sorted((d, t) for d, ts in self.model.dbs.items() for t in ts)

    def _pick(self, seq: list[Any], i: int) -> Any:
        return seq[i % len(seq)] if seq else None

    def _new_name(self, a: int, b: int, stem: str, choices: int, taken: dict[str, Any]) -> tuple[str, str] | None:
        # a database (by a) and a name in it, stem + (b % choices); None when the model has it already
        db = self._pick(self.dbs(), a)
        name = f"{stem}{b % choices}"
        return None if name in taken[db] else (db, name)

    def run(self, ops: list[tuple[str, int, int, int]]) -> None:
        for op in ops:
            self.apply(*op)

    def apply(self, kind: str, a: int, b: int, c: int) -> None:
        ms, mdl = self.ms, self.model
        self.counter += 1
        n = self.counter
        if kind == "create_db" or not mdl.dbs:
            name = f"{self.prefix}_d{a % 4}"
            if name in mdl.dbs:
                return
            ms.create_database(hms.Database(name=name, description="", locationUri=None, parameters={"n": "0"}))
            mdl.dbs[name] = {}
            mdl.functions[name] = set()
            return
        if kind == "alter_db":
            db = self._pick(self.dbs(), a)
            d = ms.get_database(db)
            d.parameters = dict(d.parameters or {}, n=str(n))
            ms.alter_database(db, d)
            return
        if kind == "drop_db":
            db = self._pick(self.dbs(), a)
            ms.drop_database(db, True, True)
            del mdl.dbs[db]
            del mdl.functions[db]
            return
        if kind == "create_function":
            if (fresh := self._new_name(a, b, "f", 3, mdl.functions)) is None:
                return
            db, name = fresh
            ms.create_function(hms.Function(functionName=name, dbName=db, className="x.Y", ownerName="t",
                                            ownerType=1, createTime=int(time.time()), functionType=1,
                                            resourceUris=[]))
            mdl.functions[db].add(name)
            return
        if kind == "drop_function":
            db = self._pick(self.dbs(), a)
            fns = sorted(mdl.functions[db])
            if not fns:
                return
            name = self._pick(fns, b)
            ms.drop_function(db, name)
            mdl.functions[db].discard(name)
            return
        if kind == "create_table":
            if (fresh := self._new_name(a, b, "t", 5, mdl.dbs)) is None:
                return
            db, name = fresh
            part = c % 2 == 0
            ms.create_table(table_obj(db, name, part, {"n": str(n)}))
            mdl.dbs[db][name] = set() if part else None
            return
        tables = self.tables()
        if not tables:
            return
        db, name = self._pick(tables, a)
        parts = mdl.dbs[db][name]
        if kind == "alter_table":
            t = fresh_table(ms, db, name)
            t.parameters = dict(t.parameters or {}, n=str(n))
            if c % 3 == 0:  # a new column, cascaded to the partitions (no events of their own) or not
                t.sd.cols = list(t.sd.cols) + [fs(f"c{n}")]
                ms.alter_table_with_cascade(db, name, t, b % 2 == 0)
            else:
                ms.alter_table(db, name, t)
        elif kind == "drop_table":
            ms.drop_table(db, name, True)
            del mdl.dbs[db][name]
        elif kind == "rename":
            dst_db = self._pick(self.dbs(), b)
            dst = f"t{c % 5}"
            if dst in mdl.dbs[dst_db]:
                return
            t = fresh_table(ms, db, name)
            t.dbName, t.tableName = dst_db, dst
            ms.alter_table(db, name, t)
            mdl.dbs[dst_db][dst] = mdl.dbs[db].pop(name)
        elif kind == "insert":
            vals = [self._pick(sorted(parts), b)] if parts else None
            if parts is not None and not parts:
                return
            ms.fire_listener_event(hms.FireEventRequest(
                successful=True, data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(
                    filesAdded=[f"file:/warehouse/inserted/x{n}"])), dbName=db, tableName=name, partitionVals=vals))
        elif parts is None:
            return
        elif kind == "add_partition":
            v = str(b % 4)
            if v in parts:
                return
            t = fresh_table(ms, db, name)
            sd = t.sd
            sd.location = None
            ms.add_partition(hms.Partition(values=[v], dbName=db, tableName=name, createTime=0, lastAccessTime=0,
                                           sd=sd, parameters={"n": str(n)}))
            parts.add(v)
        elif kind == "drop_partition":
            if not parts:
                return
            v = self._pick(sorted(parts), b)
            ms.drop_partition(db, name, [v], True)
            parts.discard(v)
        elif kind == "alter_partition":
            if not parts:
                return
            v = self._pick(sorted(parts), b)
            p = ms.get_partition(db, name, [v])
            p.parameters = dict(p.parameters or {}, n=str(n))
            ms.alter_partition(db, name, p)
        elif kind == "txn":
            # a transaction touching several tables: open, lock them, change each, commit (or abort)
            chosen = sorted({self._pick(tables, a + i) for i in range(1 + b % 3)})
            txnid = ms.open_txns(hms.OpenTxnRequest(num_txns=1, user="u", hostname="h")).txn_ids[0]
            comps = [hms.LockComponent(type=2, level=2, dbname=d, tablename=t) for d, t in chosen]
            ms.lock(hms.LockRequest(component=comps, txnid=txnid, user="u", hostname="h"))
            commit = c % 3 != 0
            if commit:
                for d, t in chosen:
                    set_table_params(ms, d, t, txn=str(txnid))
                ms.commit_txn(hms.CommitTxnRequest(txnid=txnid))
            else:
                ms.abort_txn(hms.AbortTxnRequest(txnid=txnid))
            self.txns.append((ms.current_event_id(), "COMMIT_TXN" if commit else "ABORT_TXN", chosen))


class ReplayLog:
    """The metastore's log as catalogd sees it, with the transactions' COMMIT_TXN/ABORT_TXN events added (our
    metastore writes none; Hive 3/4 do) right after the events of each transaction, ids renumbered gap-free.
    Every other call goes to the metastore."""

    def __init__(self, ms: Metastore, start: int, txns: list[tuple[int, str, list[tuple[str, str]]]]) -> None:
        self.ms = ms
        real: list[Any] = []
        after = start
        while True:
            batch = ms.next_notification(after, 1000)
            if not batch:
                break
            real += batch
            after = batch[-1].eventId
        by_id: dict[int, list[tuple[str, list[tuple[str, str]]]]] = {}
        for eid, kind, tables in txns:
            by_id.setdefault(eid, []).append((kind, tables))
        self.events: list[Any] = []
        nid = start
        for e in real:
            nid += 1
            self.events.append(hms.NotificationEvent(eventId=nid, eventTime=e.eventTime, eventType=e.eventType,
                                                     dbName=e.dbName, tableName=e.tableName, message=e.message,
                                                     messageFormat=e.messageFormat))
            for kind, tables in by_id.pop(e.eventId, []):
                nid += 1
                msg = {"txnid": nid, "databases": [d for d, _ in tables], "tables": [t for _, t in tables]}
                self.events.append(hms.NotificationEvent(eventId=nid, eventTime=e.eventTime, eventType=kind,
                                                         dbName=None, tableName=None, message=json.dumps(msg),
                                                         messageFormat="json-0.2"))
        self.start = start
        self.last = nid

    def next_notification(self, after: int, limit: int) -> list[Any]:
        i = after - self.start
        return self.events[max(0, i):max(0, i) + limit]

    def current_event_id(self) -> int:
        return self.last

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ms, name)


def run_catalogd(ms: Any, start: int, hierarchical: bool, cache: CatalogCache | None = None,
                 loader_threads: int = 2, **kw: Any) -> tuple[CatalogCache, Processor, TableLoader]:
    """A cache bootstrapped before `start`... (the caller bootstraps), caught up on the log."""
    cache = cache or CatalogCache()
    loader = TableLoader(cache, ms, threads=loader_threads)
    proc = make_processor(hierarchical, cache, ms, loader, start, **kw)
    return cache, proc, loader


def random_ops(rng: random.Random, n: int) -> list[tuple[str, int, int, int]]:
    return [(rng.choice(Driver.KINDS), rng.randrange(8), rng.randrange(8), rng.randrange(8)) for _ in range(n)]


__all__ = ["Driver", "Metastore", "ReplayLog", "run_catalogd", "bootstrap", "random_ops", "table_obj"]
