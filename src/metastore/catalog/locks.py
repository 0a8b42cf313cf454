"""Hive's lock manager (the semantics of DbTxnManager's locks and transactions) over the store.

A lock request is granted as a whole or not at all. Compatibility: a shared read is compatible with shared
reads and shared writes (and exclusive writes); a shared write with shared reads only; an exclusive lock with
nothing. A database lock covers every table and partition of the database, a table lock every partition of the
table. Waiting locks are granted in request order: a lock waits for every conflicting lock requested before it,
granted or not, so a later request never overtakes an earlier conflicting one (clients poll check_lock).

Locks outside transactions expire when their holder has not heartbeated (lock, check_lock, heartbeat) for
`timeout` seconds; transactions (and their locks) likewise. Expiry runs first in every lock call, so a
killed holder blocks others for at most the timeout. Every change runs in one store write transaction, which
serializes writers across all server processes on the database.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..store.locks import LockQueries, LockRow, TxnRow
from .errors import MetaError, NoSuchLock, NoSuchTxn, TxnAborted, TxnOpen

# Thrift enum values (Hive's LockType, LockLevel, LockState)
SHARED_READ, SHARED_WRITE, EXCLUSIVE, EXCL_WRITE = 1, 2, 3, 4
DB, TABLE, PARTITION = 1, 2, 3
ACQUIRED, WAITING, ABORT, NOT_ACQUIRED = 1, 2, 3, 4

_TYPE_CODE = {SHARED_READ: "r", SHARED_WRITE: "w", EXCL_WRITE: "x", EXCLUSIVE: "e"}
_TYPE_OF = {v: k for k, v in _TYPE_CODE.items()}
_STATE_OF = {"a": ACQUIRED, "w": WAITING}
# pairs of lock types that may be held together on overlapping objects
_COMPATIBLE = {("r", "r"), ("r", "w"), ("w", "r"), ("r", "x"), ("x", "r")}

DEFAULT_TIMEOUT = 300.0


@dataclass
class Component:
    type: int
    level: int
    db: str
    table: str | None = None
    partition: str | None = None


@dataclass
class LockInfo:
    lockid: int
    db: str
    table: str | None
    partition: str | None
    state: int
    type: int
    txnid: int
    last_heartbeat: int
    acquired_at: int | None
    user: str
    host: str
    heartbeat_count: int
    agent_info: str | None
    int_id: int
    blocked_by: int | None = None


@dataclass
class OpenTxns:
    high_water_mark: int
    open_txns: list[int]
    min_open_txn: int | None
    aborted: list[int]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _lock_name(lockid: int) -> str:
    return f"lockid:{lockid}"


def _txn_name(txnid: int) -> str:
    return f"txnid:{txnid}"


def _overlap(a: LockRow, b: LockRow) -> bool:
    if a.db != b.db:
        return False
    if a.table is None or b.table is None:  # a database lock
        return True
    if a.table != b.table:
        return False
    if a.partition is None or b.partition is None:  # a table lock
        return True
    return a.partition == b.partition


def conflicts(a: LockRow, b: LockRow) -> bool:
    if a.ext_id == b.ext_id or (a.txnid and a.txnid == b.txnid):  # one lock, or one transaction's
        return False
    return _overlap(a, b) and (a.type, b.type) not in _COMPATIBLE


class Locks:
    def __init__(self, catalog: Any, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.catalog = catalog
        self.timeout = float(timeout)

    @contextmanager
    def _session(self, txnid: int | None = None) -> Iterator[tuple[LockQueries, int]]:
        """(queries, now in ms) inside one store write transaction, expired locks and transactions already
        gone (every call expires first, so a dead holder blocks others for at most the timeout); with
        `txnid`, that transaction is checked to be open before anything else."""
        with self.catalog._write() as tx:
            q = LockQueries(tx.conn)
            now = _now_ms()
            self._expire(q, now)
            if txnid:
                self._open_txn(q, txnid)
            yield q, now

    def _expire(self, q: LockQueries, now: int) -> None:
        older = now - int(self.timeout * 1000)
        q.expire_locks(older)
        q.expire_txns(older)

    @staticmethod
    def _open_txn(q: LockQueries, txnid: int) -> TxnRow:
        t = q.txn(txnid)
        if t is None or t.state == "c":
            raise NoSuchTxn(f"No such transaction {_txn_name(txnid)}")
        if t.state == "a":
            raise TxnAborted(f"Transaction {_txn_name(txnid)} already aborted")
        return t

    # ---- locks ----------------------------------------------------------------------------------------

    def lock(self, components: list[Component], txnid: int | None, user: str, host: str,
             agent_info: str | None = None) -> tuple[int, int]:
        """(lock id, ACQUIRED or WAITING)."""
        if not components:
            raise MetaError("A lock request needs at least one component")
        for c in components:
            if c.type not in _TYPE_CODE:
                raise MetaError(f"Unknown lock type {c.type}")
            if c.level not in (DB, TABLE, PARTITION):
                raise MetaError(f"Unknown lock level {c.level}")
            if not c.db:
                raise MetaError("A lock component needs a database name")
            if c.level >= TABLE and not c.table:
                raise MetaError("A table or partition lock needs a table name")
            if c.level == PARTITION and not c.partition:
                raise MetaError("A partition lock needs a partition name")
        txnid = txnid or 0
        with self._session(txnid) as (q, now):
            if txnid:
                q.heartbeat_txn(txnid, now)
            ext = q.next_lock_id()
            q.insert_locks([{
                "HL_LOCK_EXT_ID": ext, "HL_LOCK_INT_ID": i, "HL_TXNID": txnid, "HL_DB": c.db.lower(),
                "HL_TABLE": c.table.lower() if c.level >= TABLE and c.table else None,
                "HL_PARTITION": c.partition if c.level == PARTITION else None, "HL_LOCK_STATE": "w",
                "HL_LOCK_TYPE": _TYPE_CODE[c.type], "HL_LAST_HEARTBEAT": now, "HL_ACQUIRED_AT": None,
                "HL_USER": (user or "")[:128], "HL_HOST": (host or "")[:128], "HL_HEARTBEAT_COUNT": 0,
                "HL_AGENT_INFO": agent_info[:128] if agent_info else None} for i, c in enumerate(components, 1)])
            return ext, self._evaluate(q, q.locks(ext_id=ext), now)

    @staticmethod
    def _blocker(q: LockQueries, mine: list[LockRow]) -> LockRow | None:
        others = q.locks_in_dbs(sorted({m.db for m in mine}), mine[0].ext_id)
        for o in others:
            for m in mine:
                if conflicts(m, o):
                    return o
        return None

    def _evaluate(self, q: LockQueries, mine: list[LockRow], now: int) -> int:
        if all(m.state == "a" for m in mine):
            return ACQUIRED
        if self._blocker(q, mine) is not None:
            return WAITING
        q.acquire(mine[0].ext_id, now)
        return ACQUIRED

    def check_lock(self, lockid: int, txnid: int | None = None) -> tuple[int, int]:
        with self._session(txnid) as (q, now):
            mine = q.locks(ext_id=lockid)
            if not mine:
                raise NoSuchLock(f"No such lock {_lock_name(lockid)}")
            if mine[0].txnid:
                self._open_txn(q, mine[0].txnid)
                q.heartbeat_txn(mine[0].txnid, now)
            else:
                q.heartbeat_lock(lockid, now)
            return lockid, self._evaluate(q, mine, now)

    def unlock(self, lockid: int) -> None:
        with self._session() as (q, _):
            mine = q.locks(ext_id=lockid)
            if not mine:
                raise NoSuchLock(f"No such lock {_lock_name(lockid)}")
            if mine[0].txnid:
                t = q.txn(mine[0].txnid)
                if t is not None and t.state == "o":
                    raise TxnOpen(f"Unlocking locks associated with transaction not permitted. "
                                  f"{_lock_name(lockid)} belongs to {_txn_name(mine[0].txnid)}")
            q.delete_lock(lockid)

    def show_locks(self, db: str | None = None, table: str | None = None, partition: str | None = None,
                   txnid: int | None = None) -> list[LockInfo]:
        with self._session() as (q, _):  # a write: expiry first, so the list shows only live locks
            rows = q.locks(db=db.lower() if db else None, table=table.lower() if table else None,
                           partition=partition or None, txnid=txnid or None)
            out = []
            mine: dict[int, list[LockRow]] = {}
            for r in rows:
                blocker = None
                if r.state == "w":
                    if r.ext_id not in mine:
                        mine[r.ext_id] = q.locks(ext_id=r.ext_id)
                    b = self._blocker(q, mine[r.ext_id])
                    blocker = b.ext_id if b is not None else None
                out.append(LockInfo(r.ext_id, r.db, r.table, r.partition, _STATE_OF.get(r.state, WAITING),
                                    _TYPE_OF.get(r.type, EXCLUSIVE), r.txnid, r.last_heartbeat, r.acquired_at,
                                    r.user, r.host, r.heartbeat_count, r.agent_info, r.int_id, blocker))
            return out

    def heartbeat(self, lockid: int | None, txnid: int | None) -> None:
        with self._session() as (q, now):
            if lockid:
                mine = q.locks(ext_id=lockid)
                if not mine:
                    raise NoSuchLock(f"No such lock {_lock_name(lockid)}")
                if mine[0].txnid:
                    q.heartbeat_txn(mine[0].txnid, now)
                q.heartbeat_lock(lockid, now)
            if txnid:
                self._open_txn(q, txnid)
                q.heartbeat_txn(txnid, now)

    # ---- transactions ---------------------------------------------------------------------------------

    def open_txns(self, n: int, user: str, host: str, agent_info: str | None = None) -> list[int]:
        if n is None or n <= 0:
            raise MetaError(f"Invalid input for number of txns: {n}")
        with self._session() as (q, now):
            first = q.next_txn_ids(n)
            ids = list(range(first, first + n))
            q.insert_txns([{"TXN_ID": i, "TXN_STATE": "o", "TXN_STARTED": now, "TXN_LAST_HEARTBEAT": now,
                            "TXN_USER": (user or "")[:128], "TXN_HOST": (host or "")[:128],
                            "TXN_AGENT_INFO": agent_info[:128] if agent_info else None}
                           for i in ids])
            return ids

    def abort_txn(self, txnid: int) -> None:
        self._end_txn(txnid, "a")

    def commit_txn(self, txnid: int) -> None:
        self._end_txn(txnid, "c")

    def _end_txn(self, txnid: int, state: str) -> None:
        """Commit ('c') or abort ('a') a transaction and release its locks; ending it the other way is an error."""
        with self._session() as (q, _):
            t = q.txn(txnid)
            if t is None:
                raise NoSuchTxn(f"No such transaction {_txn_name(txnid)}")
            if state == "a" and t.state == "c":
                raise NoSuchTxn(f"Transaction {_txn_name(txnid)} is already committed.")
            if state == "c" and t.state == "a":
                raise TxnAborted(f"Transaction {_txn_name(txnid)} already aborted")
            if t.state == "o":
                q.set_txn_state(txnid, state)
            q.delete_txn_locks(txnid)

    def get_open_txns(self) -> OpenTxns:
        with self._session() as (q, _):
            hwm = q.txn_high_water_mark()
            rows = q.txns(["o", "a"])
        ids = [r.id for r in rows if r.id <= hwm]
        opened = [r.id for r in rows if r.state == "o"]
        return OpenTxns(hwm, ids, min(opened) if opened else None, [r.id for r in rows if r.state == "a"])


def aborted_bits(ids: list[int], aborted: list[int]) -> bytes:
    """Hive's abortedBits: bit i (little-endian within each byte, as java.util.BitSet.toByteArray) set when
    open_txns[i] is aborted."""
    ab = set(aborted)
    out = bytearray((len(ids) + 7) // 8)
    for i, t in enumerate(ids):
        if t in ab:
            out[i // 8] |= 1 << (i % 8)
    while out and out[-1] == 0:  # BitSet.toByteArray drops trailing zero bytes
        out.pop()
    return bytes(out)
