"""Queries of the lock manager's tables (HIVE_LOCKS, TXNS, NEXT_LOCK_ID, NEXT_TXN_ID).

Run inside a store write transaction (Store.write), which serializes writers across server processes, so
a read-check-write here (allocating an id, granting a lock) cannot race another server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from . import schema as s

L = s.hive_locks.c
T = s.txns.c
C = s.compaction_queue.c


@dataclass
class LockRow:
    ext_id: int
    int_id: int
    txnid: int
    db: str
    table: str | None
    partition: str | None
    state: str  # 'a' | 'w'
    type: str  # 'r' | 'w' | 'x' | 'e'
    last_heartbeat: int
    acquired_at: int | None
    user: str
    host: str
    heartbeat_count: int
    agent_info: str | None


@dataclass
class TxnRow:
    id: int
    state: str  # 'o' | 'a' | 'c'
    started: int
    last_heartbeat: int
    user: str
    host: str
    agent_info: str | None


def _lock(r: Any) -> LockRow:
    return LockRow(int(r.HL_LOCK_EXT_ID), int(r.HL_LOCK_INT_ID), int(r.HL_TXNID or 0), r.HL_DB, r.HL_TABLE,
                   r.HL_PARTITION, r.HL_LOCK_STATE, r.HL_LOCK_TYPE, int(r.HL_LAST_HEARTBEAT), r.HL_ACQUIRED_AT,
                   r.HL_USER, r.HL_HOST, int(r.HL_HEARTBEAT_COUNT or 0), r.HL_AGENT_INFO)


@dataclass
class CompactionRow:
    id: int
    db: str
    table: str
    partition: str | None
    state: str  # Hive's letters: 'i' initiated, 'w' working, 'r' ready for cleaning
    type: str  # 'a' major, 'i' minor
    worker_id: str | None
    start: int | None
    run_as: str | None
    highest_txn_id: int | None
    hadoop_job_id: str | None


def _compaction(r: Any) -> CompactionRow:
    return CompactionRow(int(r.CQ_ID), r.CQ_DATABASE, r.CQ_TABLE, r.CQ_PARTITION, r.CQ_STATE, r.CQ_TYPE,
                         r.CQ_WORKER_ID, r.CQ_START, r.CQ_RUN_AS, r.CQ_HIGHEST_TXN_ID, r.CQ_HADOOP_JOB_ID)


def _txn(r: Any) -> TxnRow:
    return TxnRow(int(r.TXN_ID), r.TXN_STATE, int(r.TXN_STARTED), int(r.TXN_LAST_HEARTBEAT), r.TXN_USER, r.TXN_HOST,
                  r.TXN_AGENT_INFO)


class LockQueries:
    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn

    # ---- ids ------------------------------------------------------------------------------------------

    def _next(self, table: sa.Table, col: str, n: int) -> int:
        c = table.c[col]
        cur = self.conn.execute(sa.select(c)).scalar()
        if cur is None:  # a store made without the migration's seed row
            cur = 1
            self.conn.execute(table.insert().values({col: cur + n}))
        else:
            self.conn.execute(table.update().values({col: int(cur) + n}))
        return int(cur)

    def next_lock_id(self) -> int:
        return self._next(s.next_lock_id, "NL_NEXT", 1)

    def next_txn_ids(self, n: int) -> int:
        """The first of n fresh transaction ids."""
        return self._next(s.next_txn_id, "NTXN_NEXT", n)

    def txn_high_water_mark(self) -> int:
        cur = self.conn.execute(sa.select(s.next_txn_id.c.NTXN_NEXT)).scalar()
        return int(cur or 1) - 1

    # ---- locks ----------------------------------------------------------------------------------------

    def insert_locks(self, rows: Sequence[dict[str, Any]]) -> None:
        self.conn.execute(s.hive_locks.insert(), list(rows))

    def locks(self, ext_id: int | None = None, db: str | None = None, table: str | None = None,
              partition: str | None = None, txnid: int | None = None) -> list[LockRow]:
        q = sa.select(s.hive_locks).order_by(L.HL_LOCK_EXT_ID, L.HL_LOCK_INT_ID)
        if ext_id is not None:
            q = q.where(L.HL_LOCK_EXT_ID == ext_id)
        if db is not None:
            q = q.where(L.HL_DB == db)
        if table is not None:
            q = q.where(L.HL_TABLE == table)
        if partition is not None:
            q = q.where(L.HL_PARTITION == partition)
        if txnid is not None:
            q = q.where(L.HL_TXNID == txnid)
        return [_lock(r) for r in self.conn.execute(q)]

    def locks_in_dbs(self, dbs: Sequence[str], before: int) -> list[LockRow]:
        """Every lock on these databases that could block lock `before`: earlier ones, and granted ones."""
        q = sa.select(s.hive_locks).where(L.HL_DB.in_(list(dbs)), L.HL_LOCK_EXT_ID != before,
                                          sa.or_(L.HL_LOCK_EXT_ID < before, L.HL_LOCK_STATE == "a"))
        return [_lock(r) for r in self.conn.execute(q.order_by(L.HL_LOCK_EXT_ID, L.HL_LOCK_INT_ID))]

    def acquire(self, ext_id: int, now: int) -> None:
        self.conn.execute(s.hive_locks.update().where(L.HL_LOCK_EXT_ID == ext_id).values(
            HL_LOCK_STATE="a", HL_ACQUIRED_AT=now))

    def heartbeat_lock(self, ext_id: int, now: int) -> int:
        return self.conn.execute(s.hive_locks.update().where(L.HL_LOCK_EXT_ID == ext_id).values(
            HL_LAST_HEARTBEAT=now, HL_HEARTBEAT_COUNT=sa.func.coalesce(L.HL_HEARTBEAT_COUNT, 0) + 1)).rowcount

    def delete_lock(self, ext_id: int) -> int:
        return self.conn.execute(s.hive_locks.delete().where(L.HL_LOCK_EXT_ID == ext_id)).rowcount

    def delete_txn_locks(self, txnid: int) -> int:
        return self.conn.execute(s.hive_locks.delete().where(L.HL_TXNID == txnid)).rowcount

    def tagged_locks(self, like: str) -> list[tuple[int, str]]:
        """(ext id, agent info) of each lock outside transactions whose agent info matches the LIKE pattern."""
        q = sa.select(L.HL_LOCK_EXT_ID, L.HL_AGENT_INFO).distinct().where(L.HL_TXNID == 0,
                                                                          L.HL_AGENT_INFO.like(like))
        return [(int(r[0]), r[1]) for r in self.conn.execute(q)]

    def expire_locks(self, older_than: int) -> int:
        """Drop the locks outside transactions whose holder stopped heartbeating before `older_than`."""
        return self.conn.execute(s.hive_locks.delete().where(L.HL_TXNID == 0,
                                                             L.HL_LAST_HEARTBEAT < older_than)).rowcount

    # ---- transactions ---------------------------------------------------------------------------------

    def insert_txns(self, rows: Sequence[dict[str, Any]]) -> None:
        self.conn.execute(s.txns.insert(), list(rows))

    def txn(self, txnid: int) -> TxnRow | None:
        r = self.conn.execute(sa.select(s.txns).where(T.TXN_ID == txnid)).first()
        return _txn(r) if r is not None else None

    def txns(self, states: Sequence[str]) -> list[TxnRow]:
        q = sa.select(s.txns).where(T.TXN_STATE.in_(list(states))).order_by(T.TXN_ID)
        return [_txn(r) for r in self.conn.execute(q)]

    def count_txns(self, state: str) -> int:
        return int(self.conn.execute(sa.select(sa.func.count()).select_from(s.txns).where(
            T.TXN_STATE == state)).scalar() or 0)

    def set_txn_state(self, txnid: int, state: str, now: int) -> None:
        """End a transaction: its state, and TXN_LAST_HEARTBEAT becomes when it ended (see purge_ended_txns)."""
        self.conn.execute(s.txns.update().where(T.TXN_ID == txnid).values(TXN_STATE=state, TXN_LAST_HEARTBEAT=now))

    def heartbeat_txn(self, txnid: int, now: int) -> None:
        self.conn.execute(s.txns.update().where(T.TXN_ID == txnid).values(TXN_LAST_HEARTBEAT=now))

    def expire_txns(self, older_than: int, now: int) -> list[int]:
        """Abort the open transactions whose holder stopped heartbeating before `older_than`; their ids."""
        ids = [int(i) for i in self.conn.execute(sa.select(T.TXN_ID).where(
            T.TXN_STATE == "o", T.TXN_LAST_HEARTBEAT < older_than)).scalars()]
        if ids:
            self.conn.execute(s.txns.update().where(T.TXN_ID.in_(ids)).values(TXN_STATE="a", TXN_LAST_HEARTBEAT=now))
            self.conn.execute(s.hive_locks.delete().where(L.HL_TXNID.in_(ids)))
        return ids

    def purge_ended_txns(self, ended_before: int) -> int:
        """Forget the transactions that ended (committed or aborted) before `ended_before`. Nothing is written
        under a transaction here (no ACID data), so an aborted one is, as Hive's housekeeper treats an aborted
        transaction without components, of no further use to readers; until then get_open_txns lists it."""
        return int(self.conn.execute(s.txns.delete().where(
            T.TXN_STATE.in_(["c", "a"]), T.TXN_LAST_HEARTBEAT < ended_before)).rowcount or 0)

    # ---- compaction requests --------------------------------------------------------------------------

    def next_compaction_id(self) -> int:
        return self._next(s.next_compaction_queue_id, "NCQ_NEXT", 1)

    def pending_compaction(self, db: str, table: str, partition: str | None) -> CompactionRow | None:
        """The request for this table or partition that is initiated or being worked on, if any."""
        q = sa.select(s.compaction_queue).where(C.CQ_DATABASE == db, C.CQ_TABLE == table,
                                                C.CQ_STATE.in_(["i", "w"]))
        q = q.where(C.CQ_PARTITION.is_(None) if partition is None else C.CQ_PARTITION == partition)
        r = self.conn.execute(q.order_by(C.CQ_ID)).first()
        return _compaction(r) if r is not None else None

    def insert_compaction(self, row: dict[str, Any]) -> None:
        self.conn.execute(s.compaction_queue.insert(), [row])

    def compactions(self, limit: int) -> list[CompactionRow]:
        q = sa.select(s.compaction_queue).order_by(C.CQ_ID).limit(limit)
        return [_compaction(r) for r in self.conn.execute(q)]

    def delete_compactions(self, db: str, table: str | None = None) -> int:
        """Forget the requests of a dropped table (or of every table of a dropped database)."""
        q = s.compaction_queue.delete().where(C.CQ_DATABASE == db)
        if table is not None:
            q = q.where(C.CQ_TABLE == table)
        return self.conn.execute(q).rowcount
