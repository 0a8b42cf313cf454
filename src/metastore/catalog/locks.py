"""Hive's lock manager (the semantics of DbTxnManager's locks and transactions) over the store.

A lock request is granted as a whole or not at all. Compatibility: a shared read is compatible with shared
reads and shared writes (and exclusive writes); a shared write with shared reads only; an exclusive lock with
nothing. A database lock covers every table and partition of the database, a table lock every partition of the
table. Waiting locks are granted in request order: a lock waits for every conflicting lock requested before it,
granted or not, so a later request never overtakes an earlier conflicting one (clients poll check_lock).

Locks outside transactions expire when their holder has not heartbeated (lock, check_lock, heartbeat) for
`timeout` seconds; transactions (and their locks) likewise. Expiry runs first in every lock call, so a
killed holder blocks others for at most the timeout. A transaction that ended is forgotten (TXNS row deleted)
a timeout or a little more after it ended: each process purges them at most once per min(timeout,
PURGE_INTERVAL), not in every call. Every change runs in one store write transaction, which
serializes writers across all server processes on the database.

Locks the server takes for itself (the Iceberg REST commit's table locks, `own=True`) carry their holder in
the agent info: a key of the machine and pid namespace, the pid and the process's start time. A server
process killed while holding one would otherwise block that table's commits for the whole timeout; instead
any process of the same machine releases it as soon as the holder is provably gone (no such pid, a zombie, or
a pid reused by a process started at another time): once when a process makes its first lock call, and
whenever such a lock blocks a request. A holder on another machine, or one whose state cannot be read, is
never judged dead: its locks expire with the timeout as before, so no live holder ever loses its lock.

Bounds (a client's request must not make the server allocate or loop without limit): open_txns opens at most
`max_open_batch` transactions per call (Hive 2.3 clamps the count the same way, it does not refuse) and
refuses beyond `max_open_txns` open transactions in all (Hive's hive.max.open.txns, same message); a lock
request has at most MAX_LOCK_COMPONENTS components, and finding its blocker is linear in the request and the
locks it meets, not their product.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..core.errors import MetaError, NoSuchLock, NoSuchObject, NoSuchTxn, TxnAborted, TxnOpen
from ..store.locks import CompactionRow, LockQueries, LockRow, TxnRow

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ..store.store import Tx

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
MAX_OPEN_BATCH = 1000  # Hive's hive.txn.max.open.batch (settings.txn_max_open_batch)
MAX_OPEN_TXNS = 100_000  # Hive's hive.max.open.txns
MAX_COMPACTION_PROPERTIES = 2048  # characters of a compaction request's properties (Hive's CQ_TBLPROPERTIES column)
MAX_COMPACTIONS_SHOWN = 100_000
MAX_PARTITION_NAME = 767  # COMPACTION_QUEUE.CQ_PARTITION, as Hive's
COMPACTION_STATES = {"i": "initiated", "w": "working", "r": "ready for cleaning", "f": "failed", "s": "succeeded",
                     "a": "attempted"}  # Hive's letters and the names SHOW COMPACTIONS prints
MAX_LOCK_COMPONENTS = 100_000  # one lock request's components (Hive locks a partition per component)
PURGE_INTERVAL = 60.0  # seconds: a process forgets ended transactions at most this often (and once a timeout)
TOO_MANY_TXNS = "Maximum allowed number of open transactions has been reached. See hive.max.open.txns."

log = logging.getLogger(__name__)


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
    """Whether two locks' components conflict: the definition, which first_conflict computes in one pass."""
    if a.ext_id == b.ext_id or (a.txnid and a.txnid == b.txnid):  # one lock, or one transaction's
        return False
    return _overlap(a, b) and (a.type, b.type) not in _COMPATIBLE


def first_conflict(mine: list[LockRow], others: list[LockRow]) -> LockRow | None:
    """The first of `others` (in their order) that conflicts with one of `mine` (one lock's components): one
    pass over each list, so a request of many components against many locks costs what its rows cost."""
    in_db: dict[str, set[str]] = {}  # lock types of my components in a database (a database lock meets them)
    db_wide: dict[str, set[str]] = {}  # ... of my database locks (they meet everything in the database)
    in_table: dict[tuple[str, str], set[str]] = {}  # ... of my table and partition locks on a table
    table_wide: dict[tuple[str, str], set[str]] = {}  # ... of my table locks
    part: dict[tuple[str, str, str], set[str]] = {}  # ... of my partition locks
    for m in mine:
        in_db.setdefault(m.db, set()).add(m.type)
        if m.table is None:
            db_wide.setdefault(m.db, set()).add(m.type)
            continue
        in_table.setdefault((m.db, m.table), set()).add(m.type)
        if m.partition is None:
            table_wide.setdefault((m.db, m.table), set()).add(m.type)
        else:
            part.setdefault((m.db, m.table, m.partition), set()).add(m.type)
    ext, txnid, none = mine[0].ext_id, mine[0].txnid, frozenset[str]()
    for o in others:
        if o.ext_id == ext or (txnid and o.txnid == txnid):  # one lock, or one transaction's
            continue
        met = set(db_wide.get(o.db, none))
        if o.table is None:
            met |= in_db.get(o.db, none)
        else:
            met |= table_wide.get((o.db, o.table), none)
            if o.partition is None:
                met |= in_table.get((o.db, o.table), none)
            else:
                met |= part.get((o.db, o.table, o.partition), none)
        if any((t, o.type) not in _COMPATIBLE for t in met):
            return o
    return None


# ---- the holder of the server's own locks --------------------------------------------------------------

_HOLDER = re.compile(r"\[holder ([0-9a-f]{16}) ([1-9][0-9]{0,9}) ([0-9]{0,20})\]\Z")


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return ""


def _machine_key() -> str:
    """Who may judge a pid: the same host name, boot (Linux's boot id) and pid namespace (containers sharing a
    host name see other pids), as a short hash."""
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        ns = ""
    raw = "\0".join((socket.gethostname(), _read("/proc/sys/kernel/random/boot_id"), ns))
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


_MACHINE = _machine_key()


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks since boot) of a process from Linux's /proc; None where unreadable."""
    text = _read(f"/proc/{pid}/stat")
    if ")" not in text:
        return None
    fields = text.rsplit(")", 1)[1].split()  # the command name, in parentheses, may hold spaces
    return (fields[0], fields[19]) if len(fields) > 19 else None


_own_start: dict[int, str] = {}


def holder_tag(purpose: str | None = None) -> str:
    """Agent info for a lock this process holds: its purpose and the holder's identity (at most 128 chars)."""
    pid = os.getpid()
    if pid not in _own_start:  # a forked worker is another process: its own entry
        st = _proc_stat(pid)
        _own_start[pid] = st[1] if st else ""
    tag = f"[holder {_MACHINE} {pid} {_own_start[pid]}]"
    return f"{(purpose or '')[:128 - len(tag) - 1]} {tag}".lstrip()


def holder_gone(agent_info: str | None) -> bool:
    """Whether the lock's agent info names a holder process of this machine that is provably gone: no such
    pid, a zombie, or a pid now used by a process started at another time. Anything unknown: not gone."""
    m = _HOLDER.search(agent_info or "")
    if m is None or m.group(1) != _MACHINE:
        return False
    pid, started = int(m.group(2)), m.group(3)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except OSError:  # e.g. another user's process: it exists
        return False
    st = _proc_stat(pid)
    if st is None:
        return False
    return st[0] in ("Z", "X") or bool(started and st[1] != started)


class Transactional(Protocol):
    """What the lock manager needs of the catalog: a store write transaction (Catalog.transaction)."""

    def transaction(self) -> AbstractContextManager[Tx]: ...


class Locks:
    def __init__(self, catalog: Transactional, timeout: float = DEFAULT_TIMEOUT, max_open_batch: int = MAX_OPEN_BATCH,
                 max_open_txns: int = MAX_OPEN_TXNS) -> None:
        self.catalog = catalog
        self.timeout = float(timeout)
        self.max_open_batch = max_open_batch
        self.max_open_txns = max_open_txns
        self._swept_pid = 0  # the process that last released dead holders' locks (a fork must sweep again)
        self._purged: tuple[int, float] = (0, -math.inf)  # (pid, time.monotonic()) of the last purge of TXNS

    @contextmanager
    def _session(self, txnid: int | None = None) -> Iterator[tuple[LockQueries, int]]:
        """(queries, now in ms) inside one store write transaction, expired locks and transactions already
        gone (every call expires first, so a dead holder blocks others for at most the timeout); with
        `txnid`, that transaction is checked to be open before anything else."""
        pid = os.getpid()
        sweep = self._swept_pid != pid
        mono = time.monotonic()
        purge = self._purged[0] != pid or mono - self._purged[1] >= self._purge_interval()
        with self.catalog.transaction() as tx:
            q = tx.lock_queries()
            now = _now_ms()
            self._expire(q, now, purge)
            if sweep:
                self._release_gone(q)
            if txnid:
                self._open_txn(q, txnid)
            yield q, now
        if sweep:  # only once committed: a call that failed rolled the release back
            self._swept_pid = pid
        if purge:  # likewise
            self._purged = (pid, mono)

    def _purge_interval(self) -> float:
        """Seconds between two purges of ended transactions by this process: the timeout, at most PURGE_INTERVAL."""
        return min(self.timeout, PURGE_INTERVAL)

    def _expire(self, q: LockQueries, now: int, purge: bool = True) -> None:
        """Release the expired locks and abort the expired transactions (every call: a dead holder blocks others
        for at most the timeout); with `purge`, also forget the transactions that ended a timeout ago (TXNS
        holds only the recent past, not every transaction): housekeeping, which a process does at most once per
        _purge_interval, not in every call."""
        older = now - int(self.timeout * 1000)
        q.expire_locks(older)
        q.expire_txns(older, now)
        if purge:
            q.purge_ended_txns(older)

    @staticmethod
    def _release_gone(q: LockQueries) -> int:
        """Release the locks of this machine's server processes that are gone (a crash, kill -9)."""
        n = 0
        for ext, info in q.tagged_locks(f"%[holder {_MACHINE} %"):
            if holder_gone(info) and q.delete_lock(ext):
                n += 1
                log.warning("released %s, held by a server process of this host that is gone (%r)",
                            _lock_name(ext), info)
        return n

    def release_gone_holders(self) -> int:
        """Release now the locks of this machine's server processes that are gone; how many (for start-up)."""
        with self._session() as (q, _):
            return self._release_gone(q)

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
             agent_info: str | None = None, own: bool = False) -> tuple[int, int]:
        """(lock id, ACQUIRED or WAITING). `own`: a lock this server process takes for itself, released by
        the others of its machine as soon as the process is gone (see the module's comment)."""
        if not components:
            raise MetaError("A lock request needs at least one component")
        if len(components) > MAX_LOCK_COMPONENTS:
            raise MetaError(f"A lock request has {len(components)} components, more than {MAX_LOCK_COMPONENTS}")
        if own:
            agent_info = holder_tag(agent_info)
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
        return first_conflict(mine, q.locks_in_dbs(sorted({m.db for m in mine}), mine[0].ext_id))

    def _evaluate(self, q: LockQueries, mine: list[LockRow], now: int) -> int:
        if all(m.state == "a" for m in mine):
            return ACQUIRED
        while (b := self._blocker(q, mine)) is not None:
            if b.txnid or not holder_gone(b.agent_info):
                return WAITING
            q.delete_lock(b.ext_id)  # a dead server process's own lock: it would block until the timeout
            log.warning("released %s, held by a server process of this host that is gone (%s)",
                        _lock_name(b.ext_id), b.agent_info)
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
            blockers: dict[int, int | None] = {}  # per lock, not per component: one query for each lock
            for r in rows:
                blocker = None
                if r.state == "w":
                    if r.ext_id not in blockers:
                        b = self._blocker(q, q.locks(ext_id=r.ext_id))
                        blockers[r.ext_id] = b.ext_id if b is not None else None
                    blocker = blockers[r.ext_id]
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
        n = min(n, self.max_open_batch)  # as Hive's TxnHandler.openTxns: the client gets the ids it got
        with self._session() as (q, now):
            if q.count_txns("o") + n > self.max_open_txns:
                raise MetaError(TOO_MANY_TXNS)
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
        with self._session() as (q, now):
            t = q.txn(txnid)
            if t is None:
                raise NoSuchTxn(f"No such transaction {_txn_name(txnid)}")
            if state == "a" and t.state == "c":
                raise NoSuchTxn(f"Transaction {_txn_name(txnid)} is already committed.")
            if state == "c" and t.state == "a":
                raise TxnAborted(f"Transaction {_txn_name(txnid)} already aborted")
            if t.state == "o":
                q.set_txn_state(txnid, state, now)
            q.delete_txn_locks(txnid)

    def get_open_txns(self) -> OpenTxns:
        with self._session() as (q, _):
            hwm = q.txn_high_water_mark()
            rows = q.txns(["o", "a"])
        ids = [r.id for r in rows if r.id <= hwm]
        opened = [r.id for r in rows if r.state == "o"]
        return OpenTxns(hwm, ids, min(opened) if opened else None, [r.id for r in rows if r.state == "a"])

    def get_open_txns_info(self) -> tuple[int, list[TxnRow]]:
        """SHOW TRANSACTIONS: the high-water mark and the open and aborted transactions up to it, as Hive's
        getOpenTxnsInfo lists them."""
        with self._session() as (q, _):
            hwm = q.txn_high_water_mark()
            rows = q.txns(["o", "a"])
        return hwm, [r for r in rows if r.id <= hwm]

    def compact(self, db: str, table: str, partition: str | None, major: bool, run_as: str | None = None,
                properties: dict[str, str] | None = None) -> tuple[int, str, bool]:
        """Record a compaction request, as Hive's TxnHandler.compact: (its id, its state, True), or, when one for
        the same table or partition is initiated or working already, (that one's id, its state, False). No
        compactor runs here: a request stays initiated (SHOW COMPACTIONS lists it)."""
        if partition is not None and len(partition) > MAX_PARTITION_NAME:  # the column's width: a clear refusal
            raise MetaError(f"a partition name of more than {MAX_PARTITION_NAME} characters")
        props = json.dumps(properties, sort_keys=True) if properties else None
        if props is not None and len(props) > MAX_COMPACTION_PROPERTIES:
            raise MetaError(f"compaction properties longer than {MAX_COMPACTION_PROPERTIES} characters")
        with self.catalog.transaction() as tx:
            if tx.table_ref(db, table) is None:
                raise NoSuchObject(f"{db}.{table} table not found")
            q = tx.lock_queries()
            pending = q.pending_compaction(db, table, partition)
            if pending is not None:
                return pending.id, COMPACTION_STATES.get(pending.state, pending.state), False
            cid = q.next_compaction_id()
            q.insert_compaction({"CQ_ID": cid, "CQ_DATABASE": db, "CQ_TABLE": table, "CQ_PARTITION": partition,
                                 "CQ_STATE": "i", "CQ_TYPE": "a" if major else "i", "CQ_TBLPROPERTIES": props,
                                 "CQ_RUN_AS": (run_as or None) and run_as[:128]})
            return cid, COMPACTION_STATES["i"], True

    def show_compactions(self) -> list[CompactionRow]:
        """SHOW COMPACTIONS: every recorded request, oldest first."""
        with self.catalog.transaction() as tx:
            return tx.lock_queries().compactions(MAX_COMPACTIONS_SHOWN)

    def add_dynamic_partitions(self, txnid: int) -> None:
        """Hive's add_dynamic_partitions records, for its compactor, the partitions a transaction's dynamic-partition
        write made; this server has no compactor and keeps no such record, so it only checks, as Hive does first,
        that the transaction is open (NoSuchTxn, TxnAborted)."""
        with self._session(txnid):
            pass


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
