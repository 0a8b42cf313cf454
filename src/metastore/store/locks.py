"""Queries of the lock manager's tables (HIVE_LOCKS, TXNS, NEXT_LOCK_ID, NEXT_TXN_ID) and of the write ids'
(TXN_TO_WRITE_ID, NEXT_WRITE_ID, TXN_WRITE_NOTIFICATION_LOG).

Run inside a store write transaction (Store.write), which serializes writers across server processes, so
a read-check-write here (allocating an id, granting a lock) cannot race another server.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from . import schema as s

L = s.hive_locks.c
T = s.txns.c
C = s.compaction_queue.c
W = s.txn_to_write_id.c
N = s.next_write_id.c
WNL = s.txn_write_notification_log.c
IN_CHUNK = 1000  # ids in one IN (...) list


def _id_chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    """The distinct ids, ascending, in lists of at most IN_CHUNK (one IN (...) each)."""
    distinct = sorted(set(ids))
    for i in range(0, len(distinct), IN_CHUNK):
        yield distinct[i:i + IN_CHUNK]


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
        """Forget the transactions that ended (committed or aborted) before `ended_before`, but an aborted one
        that was given write ids: what it wrote stays invalid to every reader only as long as get_open_txns lists
        it as aborted (Hive keeps such a transaction until its compactor has cleaned the data; none runs here).
        An aborted transaction without write ids is, as Hive's housekeeper treats one without components, of no
        further use to readers; until then get_open_txns lists it."""
        wrote = sa.select(W.T2W_TXNID).where(W.T2W_TXNID == T.TXN_ID).exists()
        return int(self.conn.execute(s.txns.delete().where(
            T.TXN_LAST_HEARTBEAT < ended_before,
            sa.or_(T.TXN_STATE == "c", sa.and_(T.TXN_STATE == "a", ~wrote)))).rowcount or 0)

    def txns_in(self, ids: Sequence[int]) -> list[TxnRow]:
        """The transactions of these ids that TXNS holds, by id."""
        out: list[TxnRow] = []
        for part in _id_chunks(ids):
            out += [_txn(r) for r in self.conn.execute(sa.select(s.txns).where(T.TXN_ID.in_(part)))]
        return sorted(out, key=lambda t: t.id)

    def txns_between(self, lo: int, hi: int) -> list[TxnRow]:
        q = sa.select(s.txns).where(T.TXN_ID >= lo, T.TXN_ID <= hi).order_by(T.TXN_ID)
        return [_txn(r) for r in self.conn.execute(q)]

    def end_txns(self, ids: Sequence[int], state: str, now: int) -> None:
        """End these transactions (set_txn_state for each) and release their locks."""
        for part in _id_chunks(ids):
            self.conn.execute(s.txns.update().where(T.TXN_ID.in_(part)).values(TXN_STATE=state,
                                                                               TXN_LAST_HEARTBEAT=now))
            self.conn.execute(s.hive_locks.delete().where(L.HL_TXNID.in_(part)))

    def heartbeat_txns(self, ids: Sequence[int], now: int) -> None:
        for part in _id_chunks(ids):
            self.conn.execute(s.txns.update().where(T.TXN_ID.in_(part)).values(TXN_LAST_HEARTBEAT=now))

    def seed_txn_id(self, next_id: int) -> None:
        """The next transaction id becomes `next_id`."""
        if self.conn.execute(sa.select(s.next_txn_id.c.NTXN_NEXT)).scalar() is None:
            self.conn.execute(s.next_txn_id.insert().values(NTXN_NEXT=next_id))
        else:
            self.conn.execute(s.next_txn_id.update().values(NTXN_NEXT=next_id))

    # ---- write ids --------------------------------------------------------------------------------------

    def write_ids_of_txns(self, db: str, table: str, txnids: Sequence[int]) -> dict[int, int]:
        """{txn id: its write id on the table} of those of `txnids` that have one."""
        out: dict[int, int] = {}
        for part in _id_chunks(txnids):
            q = sa.select(W.T2W_TXNID, W.T2W_WRITEID).where(W.T2W_DATABASE == db, W.T2W_TABLE == table,
                                                            W.T2W_TXNID.in_(part))
            out.update((int(t), int(w)) for t, w in self.conn.execute(q))
        return out

    def delete_write_ids_of_txns(self, db: str, table: str, txnids: Sequence[int]) -> None:
        for part in _id_chunks(txnids):
            self.conn.execute(s.txn_to_write_id.delete().where(W.T2W_DATABASE == db, W.T2W_TABLE == table,
                                                               W.T2W_TXNID.in_(part)))

    def next_write_id(self, db: str, table: str) -> int | None:
        """NEXT_WRITE_ID of the table: None when it never allocated one."""
        v = self.conn.execute(sa.select(N.NWI_NEXT).where(N.NWI_DATABASE == db, N.NWI_TABLE == table)).scalar()
        return None if v is None else int(v)

    def next_write_ids(self, db: str, table: str, n: int) -> int:
        """The first of n fresh write ids of the table (the first ever is 1). Run in a write transaction, which
        serializes writers on the database: no two allocations read the same NWI_NEXT."""
        cur = self.next_write_id(db, table)
        if cur is None:
            self.conn.execute(s.next_write_id.insert().values(NWI_DATABASE=db, NWI_TABLE=table, NWI_NEXT=1 + n))
            return 1
        self.conn.execute(s.next_write_id.update().where(N.NWI_DATABASE == db, N.NWI_TABLE == table).values(
            NWI_NEXT=cur + n))
        return cur

    def seed_write_id(self, db: str, table: str, next_id: int) -> None:
        self.conn.execute(s.next_write_id.insert().values(NWI_DATABASE=db, NWI_TABLE=table, NWI_NEXT=next_id))

    def insert_write_ids(self, db: str, table: str, pairs: Sequence[tuple[int, int]]) -> None:
        self.conn.execute(s.txn_to_write_id.insert(), [
            {"T2W_TXNID": t, "T2W_DATABASE": db, "T2W_TABLE": table, "T2W_WRITEID": w} for t, w in pairs])

    def max_write_id_under(self, db: str, table: str, txn_hwm: int) -> int:
        """The highest write id of the table given to a transaction of id <= txn_hwm; 0 when none."""
        v = self.conn.execute(sa.select(sa.func.max(W.T2W_WRITEID)).where(
            W.T2W_DATABASE == db, W.T2W_TABLE == table, W.T2W_TXNID <= txn_hwm)).scalar()
        return int(v or 0)

    def write_ids_not_valid(self, db: str, table: str, max_write_id: int, txnids: Sequence[int],
                            above_txn: int) -> list[tuple[int, int]]:
        """(txn id, write id) of the table's write ids <= max_write_id whose transaction is one of `txnids` or has
        an id above `above_txn`, by write id: every write id a reader may not see (the others' transactions
        committed)."""
        base = sa.select(W.T2W_TXNID, W.T2W_WRITEID).where(W.T2W_DATABASE == db, W.T2W_TABLE == table,
                                                           W.T2W_WRITEID <= max_write_id)
        rows = {(int(t), int(w)) for t, w in self.conn.execute(base.where(W.T2W_TXNID > above_txn))}
        for part in _id_chunks(txnids):
            rows.update((int(t), int(w)) for t, w in self.conn.execute(base.where(W.T2W_TXNID.in_(part))))
        return sorted(rows, key=lambda r: r[1])

    def txn_of_write_id(self, db: str, table: str, write_id: int) -> int | None:
        v = self.conn.execute(sa.select(W.T2W_TXNID).where(W.T2W_DATABASE == db, W.T2W_TABLE == table,
                                                           W.T2W_WRITEID == write_id)).scalar()
        return None if v is None else int(v)

    def rename_table_references(self, db: str, table: str, new_db: str, new_table: str) -> None:
        """A renamed table keeps its write ids, write notifications and compaction requests (Hive's onRename)."""
        for t, c_db, c_table in ((s.txn_to_write_id, W.T2W_DATABASE, W.T2W_TABLE),
                                 (s.next_write_id, N.NWI_DATABASE, N.NWI_TABLE),
                                 (s.txn_write_notification_log, WNL.WNL_DATABASE, WNL.WNL_TABLE),
                                 (s.compaction_queue, C.CQ_DATABASE, C.CQ_TABLE)):
            self.conn.execute(t.update().where(c_db == db, c_table == table).values(
                {c_db.name: new_db, c_table.name: new_table}))

    # ---- write notifications (add_write_notification_log) -----------------------------------------------

    def write_notification(self, txnid: int, db: str, table: str, partition: str) -> tuple[int, str | None] | None:
        """(WNL_ID, WNL_FILES) of the transaction's row for the table or partition, if any."""
        r = self.conn.execute(sa.select(WNL.WNL_ID, WNL.WNL_FILES).where(
            WNL.WNL_TXNID == txnid, WNL.WNL_DATABASE == db, WNL.WNL_TABLE == table,
            WNL.WNL_PARTITION == partition).order_by(WNL.WNL_ID)).first()
        return None if r is None else (int(r[0]), r[1])

    def insert_write_notification(self, row: dict[str, Any]) -> None:
        self.conn.execute(s.txn_write_notification_log.insert(), [row])

    def update_write_notification(self, wnl_id: int, values: dict[str, Any]) -> None:
        self.conn.execute(s.txn_write_notification_log.update().where(WNL.WNL_ID == wnl_id).values(values))

    def write_notifications(self, txnid: int) -> list[dict[str, Any]]:
        """The rows of a transaction's writes, in the order written."""
        q = sa.select(s.txn_write_notification_log).where(WNL.WNL_TXNID == txnid).order_by(WNL.WNL_ID)
        return [dict(r._mapping) for r in self.conn.execute(q)]

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

    def pending_compactions_of_no_partition(self, db: str, table: str, tbl_id: int) -> int:
        """How many initiated or working requests of the table name a partition it does not have."""
        p = s.partitions.c
        q = (sa.select(sa.func.count()).select_from(s.compaction_queue)
             .where(C.CQ_DATABASE == db, C.CQ_TABLE == table, C.CQ_STATE.in_(["i", "w"]), C.CQ_PARTITION.is_not(None),
                    ~sa.exists().where(p.TBL_ID == tbl_id, p.PART_NAME == C.CQ_PARTITION)))
        return int(self.conn.execute(q).scalar_one())

    def insert_compaction(self, row: dict[str, Any]) -> None:
        self.conn.execute(s.compaction_queue.insert(), [row])

    def compactions(self, limit: int) -> list[CompactionRow]:
        q = sa.select(s.compaction_queue).order_by(C.CQ_ID).limit(limit)
        return [_compaction(r) for r in self.conn.execute(q)]
