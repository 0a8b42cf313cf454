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

Write ids (Hive 3's, for insert-only and full ACID tables): a transaction that writes a table gets a write id on
it (allocate_table_write_ids), the table's next one (NEXT_WRITE_ID: 1, 2, ... without gaps, allocated inside the
serialized store write transaction, so several server processes never hand out one twice); a transaction that asks
again for the same table gets the same id. A reader turns its valid transaction list (Hive's ValidReadTxnList
string, or the current transactions) into each table's valid write-id list (valid_write_ids), as Hive's
TxnHandler: the high-water mark is the highest write id of a transaction at or under the list's high-water mark
(else the table's highest allocated id), and the invalid ids are those of open or aborted transactions (aborted
ones flagged in abortedBits) and of transactions above the mark. A committed transaction's write ids become valid;
an aborted one's stay invalid for good: an aborted transaction that was given write ids is never purged from
TXNS (store/locks.py), so get_open_txns keeps listing it as aborted.

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
from ..core.events import EventType
from ..core.messages import JsonMessageFactory, thrift_json
from ..core.names import java_list, make_part_name
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
# pending requests of one table that name a partition it does not have (Hive records them; with no compactor here
# they would stay, one row per distinct made-up name): beyond this, a request must name a real partition
MAX_REQUESTS_OF_NO_PARTITION = 1000
COMPACTION_STATES = {"i": "initiated", "w": "working", "r": "ready for cleaning", "f": "failed", "s": "succeeded",
                     "a": "attempted"}  # Hive's letters and the names SHOW COMPACTIONS prints
MAX_LOCK_COMPONENTS = 100_000  # one lock request's components (Hive locks a partition per component)
PURGE_INTERVAL = 60.0  # seconds: a process forgets ended transactions at most this often (and once a timeout)
TOO_MANY_TXNS = "Maximum allowed number of open transactions has been reached. See hive.max.open.txns."
MAX_HEARTBEAT_RANGE = 100_000  # transactions one heartbeat_txn_range may name (its answer lists each unknown one)
MAX_WRITE_NOTIFICATIONS = 10_000  # writes one add_write_notification_log_in_batch may record
MAX_FILES_TEXT = 64 * 1024 * 1024  # characters of the files one write notification keeps for a table or partition
NO_MIN_OPEN = 2**63 - 1  # Java's Long.MAX_VALUE: Hive's "no open transaction" in a valid transaction list

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


@dataclass
class ValidTxns:
    """A reader's view of transactions (Hive's ValidReadTxnList): every transaction at or under the high-water
    mark is committed but the exceptions (open, or aborted: `aborted`); any above it is not (yet) valid."""

    high_water_mark: int
    exceptions: list[int]  # sorted
    aborted: frozenset[int]

    def __post_init__(self) -> None:
        self._exc = frozenset(self.exceptions)

    def valid(self, txnid: int) -> bool:
        return txnid <= self.high_water_mark and txnid not in self._exc

    def is_aborted(self, txnid: int) -> bool:
        return txnid in self.aborted


def parse_valid_txns(text: str | None) -> ValidTxns:
    """Hive's ValidReadTxnList string, "hwm:minOpenTxn:open,ids:aborted,ids" (Hive 3 and 4; the lists may be
    empty, trailing parts left out). None or '': every transaction is valid, as Hive reads it."""
    if not text:
        return ValidTxns(NO_MIN_OPEN, [], frozenset())
    parts = text.split(":")
    while parts and parts[-1] == "":  # Java's split drops trailing empty strings
        parts.pop()
    try:
        if len(parts) < 2:
            raise ValueError(text)
        hwm = int(parts[0])
        int(parts[1])
        opened = [int(x) for x in parts[2].split(",")] if len(parts) > 2 and parts[2] else []
        aborted = [int(x) for x in parts[3].split(",")] if len(parts) > 3 and parts[3] else []
    except ValueError:
        raise MetaError(f"Invalid valid transaction list: {text[:200]!r}") from None
    return ValidTxns(hwm, sorted(set(opened) | set(aborted)), frozenset(aborted))


def format_valid_txns(v: ValidTxns) -> str:
    """The string Hive's ValidReadTxnList.writeToString makes of `v`."""
    opened = [t for t in v.exceptions if t not in v.aborted]
    low = min(opened) if opened else NO_MIN_OPEN
    return (f"{v.high_water_mark}:{low}:{','.join(map(str, opened))}:"
            f"{','.join(str(t) for t in v.exceptions if t in v.aborted)}")


@dataclass
class TableWriteIds:
    """A table's valid write-id list for a reader (Hive's TableValidWriteIds)."""

    full_name: str
    high_water_mark: int
    invalid: list[int]  # sorted
    aborted: list[int]  # those of `invalid` whose transaction aborted
    min_open: int | None


@dataclass
class WriteNote:
    """One write a transaction reports (add_write_notification_log): its write id, the partition's values (none
    for an unpartitioned table) and the files written."""

    txnid: int
    write_id: int
    partition_values: list[str] | None
    files: list[str]


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
        with self._session_tx(txnid) as (_, q, now):
            yield q, now

    @contextmanager
    def _session_tx(self, txnid: int | None = None) -> Iterator[tuple[Tx, LockQueries, int]]:
        """_session, with the store transaction itself (to write events in it)."""
        pid = os.getpid()
        sweep = self._swept_pid != pid
        mono = time.monotonic()
        purge = self._purged[0] != pid or mono - self._purged[1] >= self._purge_interval()
        with self.catalog.transaction() as tx:
            q = tx.lock_queries()
            now = _now_ms()
            self._expire(tx, q, now, purge)
            if sweep:
                self._release_gone(q)
            if txnid:
                self._open_txn(q, txnid)
            yield tx, q, now
        if sweep:  # only once committed: a call that failed rolled the release back
            self._swept_pid = pid
        if purge:  # likewise
            self._purged = (pid, mono)

    def _purge_interval(self) -> float:
        """Seconds between two purges of ended transactions by this process: the timeout, at most PURGE_INTERVAL."""
        return min(self.timeout, PURGE_INTERVAL)

    def _expire(self, tx: Tx, q: LockQueries, now: int, purge: bool = True) -> None:
        """Release the expired locks and abort the expired transactions (every call: a dead holder blocks others
        for at most the timeout), each with its ABORT_TXN event, as Hive's housekeeper writes one for a timed-out
        transaction; with `purge`, also forget the transactions that ended a timeout ago (TXNS
        holds only the recent past, not every transaction): housekeeping, which a process does at most once per
        _purge_interval, not in every call."""
        older = now - int(self.timeout * 1000)
        q.expire_locks(older)
        for txnid in q.expire_txns(older, now):
            self._abort_event(tx, q, txnid, now)
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
        """Open n transactions (at most max_open_batch), with one OPEN_TXN event naming them."""
        if n is None or n <= 0:
            raise MetaError(f"Invalid input for number of txns: {n}")
        n = min(n, self.max_open_batch)  # as Hive's TxnHandler.openTxns: the client gets the ids it got
        with self._session_tx() as (tx, q, now):
            if q.count_txns("o") + n > self.max_open_txns:
                raise MetaError(TOO_MANY_TXNS)
            first = q.next_txn_ids(n)
            ids = list(range(first, first + n))
            q.insert_txns([{"TXN_ID": i, "TXN_STATE": "o", "TXN_STARTED": now, "TXN_LAST_HEARTBEAT": now,
                            "TXN_USER": (user or "")[:128], "TXN_HOST": (host or "")[:128],
                            "TXN_AGENT_INFO": agent_info[:128] if agent_info else None}
                           for i in ids])
            # Hive 3's JSONOpenTxnMessage: the range (fromTxnId, toTxnId); Hive 4 reads txnIds first
            self._txn_event(tx, EventType.OPEN_TXN, {"txnIds": ids, "fromTxnId": ids[0], "toTxnId": ids[-1]}, now)
            return ids

    def abort_txn(self, txnid: int) -> None:
        self._end_txn(txnid, "a")

    def commit_txn(self, txnid: int) -> None:
        self._end_txn(txnid, "c")

    def _end_txn(self, txnid: int, state: str) -> None:
        """Commit ('c') or abort ('a') a transaction and release its locks, with its COMMIT_TXN or ABORT_TXN event;
        ending it the other way is an error (ending it again the same way is no error, and writes no event)."""
        with self._session_tx() as (tx, q, now):
            t = q.txn(txnid)
            if t is None:
                raise NoSuchTxn(f"No such transaction {_txn_name(txnid)}")
            if state == "a" and t.state == "c":
                raise NoSuchTxn(f"Transaction {_txn_name(txnid)} is already committed.")
            if state == "c" and t.state == "a":
                raise TxnAborted(f"Transaction {_txn_name(txnid)} already aborted")
            if t.state == "o":
                q.set_txn_state(txnid, state, now)
                if state == "c":
                    self._commit_event(tx, q, txnid, now)
                else:
                    self._abort_event(tx, q, txnid, now)
            q.delete_txn_locks(txnid)

    # ---- transaction events (Hive's JSONOpenTxnMessage, JSONCommitTxnMessage, JSONAbortTxnMessage) ------------

    def _txn_event(self, tx: Tx, kind: EventType, fields: dict[str, object], now: int) -> None:
        """An event of no database or table (as Hive writes the transaction events), in the change's transaction."""
        msg = self._messages()
        tx.add_event(kind, None, None, msg.transaction(now // 1000, **fields), msg.format, now // 1000)

    def _commit_event(self, tx: Tx, q: LockQueries, txnid: int, now: int) -> None:
        """COMMIT_TXN: the transaction's id and, as Hive adds them from its write notification log, one entry per
        write (table or partition) in parallel lists: database, table, write id, partition name, the table's and
        partition's Thrift-JSON, the files. A transaction that recorded no write names none (Hive likewise)."""
        fields: dict[str, object] = {"txnid": txnid}
        writes = q.write_notifications(txnid)
        if writes:
            fields.update(
                databases=[w["WNL_DATABASE"] for w in writes], tables=[w["WNL_TABLE"] for w in writes],
                writeIds=[int(w["WNL_WRITEID"]) for w in writes], partitions=[w["WNL_PARTITION"] for w in writes],
                tableObjs=[w["WNL_TABLE_OBJ"] for w in writes], partitionObjs=[w["WNL_PARTITION_OBJ"] for w in writes],
                files=[w["WNL_FILES"] for w in writes])
        self._txn_event(tx, EventType.COMMIT_TXN, fields, now)

    def _abort_event(self, tx: Tx, q: LockQueries, txnid: int, now: int) -> None:
        """ABORT_TXN: the transaction's id and (Hive 4's dbsUpdated) the databases its recorded writes were in."""
        dbs = list(dict.fromkeys(str(w["WNL_DATABASE"]) for w in q.write_notifications(txnid)))
        self._txn_event(tx, EventType.ABORT_TXN, {"txnid": txnid, "dbsUpdated": dbs}, now)

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
            ref = tx.table_ref(db, table)
            if ref is None:
                raise NoSuchObject(f"{db}.{table} table not found")
            q = tx.lock_queries()
            pending = q.pending_compaction(db, table, partition)
            if pending is not None:
                return pending.id, COMPACTION_STATES.get(pending.state, pending.state), False
            if partition is not None and not tx.partition_refs(ref.TBL_ID, [partition]) and \
                    q.pending_compactions_of_no_partition(db, table, ref.TBL_ID) >= MAX_REQUESTS_OF_NO_PARTITION:
                raise MetaError(f"{db}.{table} has no partition {partition} and {MAX_REQUESTS_OF_NO_PARTITION} "
                                "pending compaction requests naming partitions it does not have")
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


    # ---- Hive 3's transaction calls: several transactions at once, seeds ----------------------------------

    def abort_txns(self, txnids: list[int]) -> None:
        """Abort those of the transactions that are open and release their locks, as Hive's abortTxns: any other
        (committed, aborted, unknown) is passed over, no error."""
        with self._session_tx() as (tx, q, now):
            ids = [t.id for t in q.txns_in(txnids) if t.state == "o"]
            q.end_txns(ids, "a", now)
            for txnid in ids:
                self._abort_event(tx, q, txnid, now)

    def heartbeat_txn_range(self, lo: int, hi: int) -> tuple[set[int], set[int]]:
        """Heartbeat the open transactions of ids lo..hi; (the aborted ones, the ones unknown or committed), as
        Hive's heartbeatTxnRange; an empty range (max below min) is an error, as in Hive (whose query of no ids
        fails)."""
        if hi - lo + 1 > MAX_HEARTBEAT_RANGE:
            raise MetaError(f"A heartbeat range of {hi - lo + 1} transactions, more than {MAX_HEARTBEAT_RANGE}")
        if hi < lo:
            raise MetaError(f"A heartbeat range from {lo} to {hi} is empty: its max is below its min")
        with self._session() as (q, now):
            rows = q.txns_between(lo, hi)
            q.heartbeat_txns([t.id for t in rows if t.state == "o"], now)
        aborted = {t.id for t in rows if t.state == "a"}
        live = {t.id for t in rows if t.state in ("o", "a")}
        return aborted, {i for i in range(lo, hi + 1) if i not in live}

    def seed_txn_id(self, seed: int) -> None:
        """The next transaction id becomes `seed` (Hive's seed_txn_id, for replication and migration), which must
        lie above every id given out."""
        with self._session() as (q, _):
            hwm = q.txn_high_water_mark()
            if seed <= hwm:
                raise MetaError(f"Invalid txnId seed {seed}, the highWaterMark is {hwm}")
            q.seed_txn_id(seed)

    def latest_txnid_in_conflict(self, txnid: int) -> int:
        """Hive's get_latest_txnid_in_conflict: the latest committed transaction whose updates or deletes overlap
        those of `txnid` (a materialized view's rebuild checks it). No write set of updates and deletes is kept
        here (Hive's WRITE_SET), so no transaction is ever in conflict: 0, Hive's answer for none."""
        return 0

    # ---- write ids ------------------------------------------------------------------------------------

    def allocate_table_write_ids(self, db: str, table: str, txnids: list[int],
                                 reallocate: bool = False) -> list[tuple[int, int]]:
        """(txn id, write id) on the table of each transaction, by txn id: a transaction that has one keeps it
        (unless `reallocate`, Hive 4's: it gets a new one), the others get the table's next ids in txn-id order,
        and an ALLOC_WRITE_ID event names them. Every transaction must be open (TxnAborted when one aborted,
        NoSuchTxn when one is unknown or committed)."""
        db, table = db.lower(), table.lower()
        ids = sorted(set(txnids))
        if len(ids) > self.max_open_txns:
            raise MetaError(f"Write ids for {len(ids)} transactions, more than {self.max_open_txns}")
        if not ids:
            return []
        with self._session_tx() as (tx, q, now):
            found = {t.id: t.state for t in q.txns_in(ids)}
            bad = [(i, found.get(i, "unknown")) for i in ids if found.get(i) != "o"]
            if bad:
                text = (f"Write ID allocation failed on {db}.{table} as not all input txns in open state: "
                        + "".join(f"{{{i},{st}}}" for i, st in bad[:100]))
                raise (TxnAborted if any(st == "a" for _, st in bad) else NoSuchTxn)(text)
            if reallocate:
                q.delete_write_ids_of_txns(db, table, ids)
                have: dict[int, int] = {}
            else:
                have = q.write_ids_of_txns(db, table, ids)
            missing = [i for i in ids if i not in have]
            if missing:
                first = q.next_write_ids(db, table, len(missing))
                new = [(t, first + k) for k, t in enumerate(missing)]
                q.insert_write_ids(db, table, new)
                msg = self._messages()
                tx.add_event(EventType.ALLOC_WRITE_ID, db, table, msg.alloc_write_id(db, table, new), msg.format,
                             now // 1000)
                have.update(new)
            return sorted(have.items())

    def _messages(self) -> JsonMessageFactory:
        msg = getattr(self.catalog, "msg", None)
        return msg if isinstance(msg, JsonMessageFactory) else JsonMessageFactory()

    def max_allocated_write_id(self, db: str, table: str) -> int:
        """The table's highest allocated write id; 0 when it has none (Hive's get_max_allocated_table_write_id)."""
        with self.catalog.transaction() as tx:
            nxt = tx.lock_queries().next_write_id(db.lower(), table.lower())
        return 0 if nxt is None else nxt - 1

    def seed_write_id(self, db: str, table: str, seed: int) -> None:
        """The table's write ids start after `seed` (Hive's seed_write_id, when a table becomes transactional or
        is replicated): only for a table that has allocated none."""
        if seed < 0:
            raise MetaError(f"Invalid write id seed {seed}")
        db, table = db.lower(), table.lower()
        with self.catalog.transaction() as tx:
            q = tx.lock_queries()
            if q.next_write_id(db, table) is not None:
                raise MetaError(f"Write ids of {db}.{table} are allocated already: a seed is for a table that has "
                                "none")
            q.seed_write_id(db, table, seed + 1)

    def valid_write_ids(self, full_names: list[str], valid_txn_list: str | None,
                        write_id: int | None = None) -> list[TableWriteIds]:
        """Each table's ("db.table") valid write-id list against the reader's valid transaction list (Hive's
        ValidReadTxnList string); without one, against the transactions now (as seen by the transaction of
        `write_id` on the first table, Hive 4's, when given), as Hive's getValidWriteIds."""
        names = [_split_full_name(n) for n in full_names]
        with self._session() as (q, _):
            if valid_txn_list:
                v = parse_valid_txns(valid_txn_list)
            else:
                current = 0
                if write_id is not None and names:
                    current = q.txn_of_write_id(*names[0], write_id) or 0
                v = self._current_txns(q, current)
            return [self._table_write_ids(q, full, db, table, v)
                    for full, (db, table) in zip(full_names, names)]

    @staticmethod
    def _current_txns(q: LockQueries, current: int) -> ValidTxns:
        """The valid transaction list of now, as Hive's client makes it from get_open_txns for transaction
        `current` (0: none): its own and later transactions are left out, and the mark is at most `current`."""
        hwm = q.txn_high_water_mark()
        rows = [r for r in q.txns(["o", "a"]) if r.id <= hwm and (not current or r.id < current)]
        if current:
            hwm = min(hwm, current)
        return ValidTxns(hwm, [r.id for r in rows], frozenset(r.id for r in rows if r.state == "a"))

    @staticmethod
    def _table_write_ids(q: LockQueries, full: str, db: str, table: str, v: ValidTxns) -> TableWriteIds:
        hwm = q.max_write_id_under(db, table, min(v.high_water_mark, NO_MIN_OPEN))
        if hwm <= 0:  # no transaction under the mark wrote it: the table's highest allocated id, if any
            nxt = q.next_write_id(db, table)
            hwm = max(nxt - 1, 0) if nxt is not None else 0
        invalid: list[int] = []
        aborted: list[int] = []
        min_open: int | None = None
        for txnid, wid in q.write_ids_not_valid(db, table, hwm, v.exceptions, v.high_water_mark):
            if v.valid(txnid):
                continue
            invalid.append(wid)
            if v.is_aborted(txnid):
                aborted.append(wid)
            elif min_open is None or wid < min_open:
                min_open = wid
        return TableWriteIds(full, hwm, invalid, aborted, min_open)

    # ---- write notifications --------------------------------------------------------------------------

    def add_write_notifications(self, db: str, table: str, writes: list[WriteNote], batch: bool = False) -> None:
        """Record what transactions wrote to the table or its partitions (Hive's add_write_notification_log, and
        with `batch` add_write_notification_log_in_batch): one row per transaction and table or partition
        (TXN_WRITE_NOTIFICATION_LOG) with the table's and partition's JSON and the files; a repeated write adds
        its files. As Hive: the table must exist (NoSuchObject); a partition too, but a batch passes over the
        writes to partitions that do not exist. Hive writes no notification event for them (its COMMIT_TXN
        message carries them), nor does this server."""
        if len(writes) > MAX_WRITE_NOTIFICATIONS:
            raise MetaError(f"{len(writes)} write notifications in one call, more than {MAX_WRITE_NOTIFICATIONS}")
        db, table = db.lower(), table.lower()
        with self.catalog.transaction() as tx:
            t = tx.get_table(db, table)
            if t is None:
                raise NoSuchObject(f"{db}.{table} table not found")
            keys = [k.name for k in t.partitionKeys or []]
            table_json = thrift_json(t)
            q = tx.lock_queries()
            for w in writes:
                pname, part_json = "", None
                if keys:
                    vals = list(w.partition_values or [])
                    found = tx.partitions(t, names=[make_part_name(keys, vals)]) if len(vals) == len(keys) else []
                    if not found:
                        if batch:
                            continue
                        raise NoSuchObject(f"partition values={java_list(vals)}")
                    pname, part_json = make_part_name(keys, vals), thrift_json(found[0])
                self._note_write(q, w, db, table, pname, table_json, part_json)

    @staticmethod
    def _note_write(q: LockQueries, w: WriteNote, db: str, table: str, pname: str, table_json: str,
                    part_json: str | None) -> None:
        now = int(time.time())
        old = q.write_notification(w.txnid, db, table, pname)
        files = [str(f) for f in w.files]
        if old is not None:
            before = [str(f) for f in json.loads(old[1] or "[]")]
            added = [f for f in files if f not in set(before)]
            if not added:  # a retried call: its files are there already
                return
            files = before + added
        text = json.dumps(files)
        if len(text) > MAX_FILES_TEXT:
            raise MetaError(f"The files written by {_txn_name(w.txnid)} to {db}.{table} exceed "
                            f"{MAX_FILES_TEXT} characters")
        values = {"WNL_TABLE_OBJ": table_json, "WNL_PARTITION_OBJ": part_json, "WNL_FILES": text,
                  "WNL_EVENT_TIME": now}
        if old is None:
            q.insert_write_notification({"WNL_TXNID": w.txnid, "WNL_WRITEID": w.write_id, "WNL_DATABASE": db,
                                         "WNL_TABLE": table, "WNL_PARTITION": pname, **values})
        else:
            q.update_write_notification(old[0], values)


def _split_full_name(name: str) -> tuple[str, str]:
    """(db, table) of Hive's "db.table", lower-cased."""
    db, dot, table = (name or "").partition(".")
    if not dot or not db or not table or "." in table:
        raise MetaError(f"A table's full name is db.table, not {name!r}")
    return db.lower(), table.lower()


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
