"""Write ids and Hive 3's transaction calls (issue 21): allocate_table_write_ids, get_valid_write_ids,
get_max_allocated_table_write_id, seed_write_id, seed_txn_id, abort_txns, heartbeat_txn_range, get_open_txns_req,
add_write_notification_log(_in_batch), get_latest_txnid_in_conflict, on every backend.

The valid write-id lists are compared with what Hive computes, worked out from Hive's code: its client's
ValidReadTxnList from get_open_txns (TxnCommonUtils.createValidReadTxnList), the server's TxnHandler
.getValidWriteIds, and the client's ValidReaderWriteIdList string (writeToString: table:hwm:minOpen:open:aborted),
both rewritten below (`hive_txn_list`, `hive_write_id_string`). The two methods Hive 2.3 has (abort_txns,
heartbeat_txn_range) are also run against the reference Hive 2.3 metastore, with ids relative to the first
transaction of each run.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from hive_metastore.ttypes import (
    AbortTxnRequest,
    AbortTxnsRequest,
    AllocateTableWriteIdsRequest,
    CommitTxnRequest,
    Database,
    FieldSchema,
    GetOpenTxnsRequest,
    GetValidWriteIdsRequest,
    HeartbeatTxnRangeRequest,
    InsertEventRequestData,
    LockComponent,
    LockRequest,
    MaxAllocatedTableWriteIdRequest,
    MetaException,
    NoSuchTxnException,
    NotificationEventRequest,
    OpenTxnRequest,
    Partition,
    SeedTableWriteIdsRequest,
    SeedTxnIdRequest,
    SerDeInfo,
    ShowLocksRequest,
    StorageDescriptor,
    Table,
    TableValidWriteIds,
    TxnAbortedException,
    TxnState,
    WriteNotificationLogBatchRequest,
    WriteNotificationLogRequest,
)
from test_privileges import authz_server  # noqa: F401  (a server with authorization=sql, the same fixture)
from thrift.Thrift import TApplicationException

from metastore.core.messages import AllocWriteId, decode
from metastore.thrift import hms
from metastore.thrift.client import MetastoreClient

from conftest import Client, Server, unique
from reference import Reference, reference, text_storage  # noqa: F401  (the session fixture)

LONG_MAX = 2**63 - 1


# ---- Hive's client side, rewritten: what its readers make of the answers ---------------------------------------

def _bits(raw: bytes, i: int) -> bool:
    return i // 8 < len(raw) and bool(raw[i // 8] >> (i % 8) & 1)


def hive_txn_list(c: Client, current: int = 0) -> str:
    """The ValidReadTxnList string Hive's client makes from get_open_txns for transaction `current` (0: none)."""
    o = c.get_open_txns()
    hwm = min(current, o.txn_high_water_mark) if current else o.txn_high_water_mark
    opened, aborted = [], []
    for i, t in enumerate(o.open_txns):
        if current and t >= current:
            break
        (aborted if _bits(o.abortedBits, i) else opened).append(t)
    low = min(opened) if opened else LONG_MAX
    return f"{hwm}:{low}:{','.join(map(str, opened))}:{','.join(map(str, aborted))}"


def hive_write_id_string(t: TableValidWriteIds) -> str:
    """ValidReaderWriteIdList.writeToString of the list Hive's client makes of a TableValidWriteIds."""
    opened = [w for i, w in enumerate(t.invalidWriteIds) if not _bits(t.abortedBits, i)]
    aborted = [w for i, w in enumerate(t.invalidWriteIds) if _bits(t.abortedBits, i)]
    low = t.minOpenWriteId if t.minOpenWriteId is not None else LONG_MAX
    return (f"{t.fullTableName}:{t.writeIdHighWaterMark}:{low}:{','.join(map(str, opened))}:"
            f"{','.join(map(str, aborted))}")


# ---- helpers -------------------------------------------------------------------------------------------------

def _open(c: Client, n: int = 1) -> list[int]:
    return list(c.open_txns(OpenTxnRequest(num_txns=n, user="u", hostname="h")).txn_ids)


def _alloc(c: Client, db: str, table: str, txns: list[int], **kw: Any) -> list[tuple[int, int]]:
    r = c.allocate_table_write_ids(AllocateTableWriteIdsRequest(dbName=db, tableName=table, txnIds=txns, **kw))
    return [(x.txnId, x.writeId) for x in r.txnToWriteIds]


def _valid(c: Client, names: list[str], txn_list: str | None = None) -> list[TableValidWriteIds]:
    return list(c.get_valid_write_ids(GetValidWriteIdsRequest(fullTableNames=names,
                                                              validTxnList=txn_list)).tblValidWriteIds)


def _max(c: Client, db: str, table: str) -> int:
    return int(c.get_max_allocated_table_write_id(MaxAllocatedTableWriteIdRequest(dbName=db,
                                                                                  tableName=table)).maxWriteId)


def _events(c: Client, since: int) -> list[Any]:
    return list(c.get_next_notification(NotificationEventRequest(lastEvent=since)).events)


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__


def _table(db: str, name: str, part_keys: list[str] | None = None) -> Table:
    sd = StorageDescriptor(cols=[FieldSchema("id", "int", "")],
                           inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                           outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                           serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                                               parameters={}), parameters={})
    return Table(dbName=db, tableName=name, tableType="MANAGED_TABLE", sd=sd, parameters={
        "transactional": "true", "transactional_properties": "insert_only"},
        partitionKeys=[FieldSchema(k, "string", "") for k in part_keys or []])


@pytest.fixture
def db(client: Client) -> Iterator[str]:
    name = unique("wid")
    client.create_database(Database(name=name, parameters={}))
    yield name
    client.drop_database(name, True, True)


# ---- allocation ----------------------------------------------------------------------------------------------

def test_allocation_per_table_and_repeated(client: Client, server: Server) -> None:
    db, t1, t2 = unique("d"), "t1", "t2"
    a, b, c2 = _open(client, 3)
    assert _max(client, db, t1) == 0  # nothing allocated yet
    assert _alloc(client, db, t1, [a]) == [(a, 1)]
    assert _alloc(client, db, t2, [a]) == [(a, 1)]  # each table numbers its own writers
    assert _alloc(client, db, t1, [a]) == [(a, 1)]  # asked again: the same id
    assert _alloc(client, db.upper(), t1.upper(), [a]) == [(a, 1)]  # names are Hive's, lower-cased
    assert _alloc(client, db, t1, [c2, b]) == [(b, 2), (c2, 3)]  # consecutive, in transaction order
    assert _alloc(client, db, t1, [a, b, c2]) == [(a, 1), (b, 2), (c2, 3)]
    assert (_max(client, db, t1), _max(client, db, t2)) == (3, 1)
    d = _open(client)[0]
    assert _alloc(client, db, t1, [d]) == [(d, 4)]  # a later transaction: the next id
    # Hive 4's reallocation (a field PyIceberg's Hive 4 IDL lacks: through our client): a new id
    with MetastoreClient(server.uri) as ours:
        r = ours.forward("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName=db, tableName=t1, txnIds=[d], reallocate=True))
    assert [(x.txnId, x.writeId) for x in r.txnToWriteIds] == [(d, 5)]
    assert _alloc(client, db, t1, [d]) == [(d, 5)]
    assert _max(client, db, t1) == 5
    for t in (a, b, c2, d):
        client.commit_txn(CommitTxnRequest(txnid=t))


def test_allocation_errors(client: Client) -> None:
    db = unique("d")
    a, b, c2 = _open(client, 3)
    client.abort_txn(AbortTxnRequest(txnid=b))
    client.commit_txn(CommitTxnRequest(txnid=c2))
    hwm = client.get_open_txns().txn_high_water_mark
    with pytest.raises(TxnAbortedException, match="not all input txns in open state"):
        _alloc(client, db, "t", [a, b])
    with pytest.raises(NoSuchTxnException):
        _alloc(client, db, "t", [c2])  # committed
    with pytest.raises(NoSuchTxnException):
        _alloc(client, db, "t", [hwm + 1000])  # never opened
    assert _max(client, db, "t") == 0  # a refused call allocates nothing, not even for its open transaction
    with pytest.raises(MetaException, match="not supported"):
        _alloc(client, db, "t", [a], replPolicy="p")
    assert _alloc(client, db, "t", [a]) == [(a, 1)]
    client.abort_txn(AbortTxnRequest(txnid=a))


def test_alloc_write_id_events(client: Client) -> None:
    db = unique("d")
    a, b = _open(client, 2)
    start = client.get_current_notificationEventId().eventId
    _alloc(client, db, "t", [a, b])
    _alloc(client, db, "t", [a])  # nothing new: no event
    events = _events(client, start)
    assert [(e.eventType, e.dbName, e.tableName) for e in events] == [("ALLOC_WRITE_ID", db, "t")]
    msg = json.loads(events[0].message)
    assert (msg["dbName"], msg["tableName"], msg["txnIdList"], msg["writeIdList"]) == (db, "t", [a, b], [1, 2])
    decoded = decode(events[0])  # what the project's readers (catalogd, repl) make of it
    assert isinstance(decoded, AllocWriteId)
    assert (decoded.pairs(), decoded.tables()) == ([(a, 1), (b, 2)], [(db, "t")])
    for t in (a, b):
        client.commit_txn(CommitTxnRequest(txnid=t))


# ---- valid write-id lists --------------------------------------------------------------------------------

def test_valid_write_ids_as_hive_computes_them(client: Client) -> None:
    """Four writers of a table: a and d commit, b aborts, c stays open. A reader opened after them sees 1 and 4:
    its list is hwm 4, invalid [2 (aborted), 3 (open)], minOpenWriteId 3, as Hive's TxnHandler answers."""
    db = unique("d")
    full = f"{db}.t"
    a, b, c2, d = _open(client, 4)
    for t in (a, b, c2, d):
        _alloc(client, db, "t", [t])
    client.commit_txn(CommitTxnRequest(txnid=a))
    client.abort_txn(AbortTxnRequest(txnid=b))
    client.commit_txn(CommitTxnRequest(txnid=d))
    reader = _open(client)[0]
    (t,) = _valid(client, [full], hive_txn_list(client, reader))
    assert (t.fullTableName, t.writeIdHighWaterMark, t.invalidWriteIds, t.minOpenWriteId) == (full, 4, [2, 3], 3)
    assert t.abortedBits == b"\x01"
    assert hive_write_id_string(t) == f"{full}:4:3:3:2"
    # no list given: the transactions of now (Hive makes it as for no transaction)
    assert hive_write_id_string(_valid(client, [full])[0]) == f"{full}:4:3:3:2"
    # c commits: only the aborted write stays invalid, for good
    client.commit_txn(CommitTxnRequest(txnid=c2))
    assert hive_write_id_string(_valid(client, [full], hive_txn_list(client, reader))[0]) == f"{full}:4:{LONG_MAX}::2"
    # a snapshot taken while b was open (hwm b, b open): write 2 open, nothing above the mark counted
    assert hive_write_id_string(_valid(client, [full], f"{b}:{b}:{b}:")[0]) == f"{full}:2:2:2:"
    # a snapshot from before any of them: no writer under the mark, so the table's highest id is the mark and
    # every write is invalid, as open (Hive 3's rule)
    assert hive_write_id_string(_valid(client, [full], f"{a - 1}:{LONG_MAX}::")[0]) == f"{full}:4:1:1,2,3,4:"
    # a table nobody wrote, and several tables in one call, in the order asked
    other = f"{db}.nothing"
    got = _valid(client, [other, full], hive_txn_list(client, reader))
    assert [hive_write_id_string(x) for x in got] == [f"{other}:0:{LONG_MAX}::", f"{full}:4:{LONG_MAX}::2"]
    client.commit_txn(CommitTxnRequest(txnid=reader))


def test_own_writes_are_valid_to_the_writer(client: Client) -> None:
    """A transaction's snapshot (hwm = itself, itself not an exception) sees its own write id; others' open ones
    not."""
    db = unique("d")
    full = f"{db}.t"
    a, b = _open(client, 2)
    _alloc(client, db, "t", [a])
    _alloc(client, db, "t", [b])
    assert hive_write_id_string(_valid(client, [full], hive_txn_list(client, b))[0]) == f"{full}:2:1:1:"
    assert hive_write_id_string(_valid(client, [full], hive_txn_list(client, a))[0]) == f"{full}:1:{LONG_MAX}::"
    for t in (a, b):
        client.commit_txn(CommitTxnRequest(txnid=t))


def test_valid_write_ids_bad_requests(client: Client) -> None:
    with pytest.raises(MetaException, match="db.table"):
        _valid(client, ["no_dot"])
    with pytest.raises(MetaException, match="Invalid valid transaction list"):
        _valid(client, ["d.t"], "x:y")


# ---- seeds ---------------------------------------------------------------------------------------------------

def test_write_ids_follow_a_rename_and_go_with_a_drop(client: Client, db: str) -> None:
    """As Hive's onRename and drop: a renamed table keeps its write ids (the next one follows them), a dropped
    table's are forgotten (a new table of the name starts again at 1)."""
    client.create_table(_table(db, "t"))
    a, b = _open(client, 2)
    assert _alloc(client, db, "t", [a, b]) == [(a, 1), (b, 2)]
    renamed = client.get_table(db, "t")
    renamed.tableName = "u"
    client.alter_table(db, "t", renamed)
    assert (_max(client, db, "t"), _max(client, db, "u")) == (0, 2)
    c = _open(client)[0]
    assert _alloc(client, db, "u", [c]) == [(c, 3)]
    for t in (a, b, c):
        client.commit_txn(CommitTxnRequest(txnid=t))
    client.drop_table(db, "u", True)
    assert _max(client, db, "u") == 0
    client.create_table(_table(db, "u"))
    d = _open(client)[0]
    assert _alloc(client, db, "u", [d]) == [(d, 1)]
    client.commit_txn(CommitTxnRequest(txnid=d))


def test_seed_write_id(client: Client) -> None:
    db = unique("d")
    client.seed_write_id(SeedTableWriteIdsRequest(dbName=db, tableName="t", seedWriteId=10))
    assert _max(client, db, "t") == 10
    a = _open(client)[0]
    assert _alloc(client, db, "t", [a]) == [(a, 11)]
    with pytest.raises(MetaException, match="allocated already"):
        client.seed_write_id(SeedTableWriteIdsRequest(dbName=db, tableName="t", seedWriteId=20))
    client.commit_txn(CommitTxnRequest(txnid=a))


def test_seed_txn_id(client: Client) -> None:
    hwm = client.get_open_txns().txn_high_water_mark
    with pytest.raises(MetaException, match="Invalid txnId seed"):
        client.seed_txn_id(SeedTxnIdRequest(seedTxnId=hwm))
    client.seed_txn_id(SeedTxnIdRequest(seedTxnId=hwm + 100))
    (t,) = _open(client)
    assert t == hwm + 100
    client.commit_txn(CommitTxnRequest(txnid=t))


# ---- several transactions at once ----------------------------------------------------------------------------

def _abort_and_heartbeat(c: Client) -> dict[str, Any]:
    """The script run on both servers; ids relative to its first transaction."""
    ids = _open(c, 5)
    base = ids[0]

    def rel(xs: Any) -> list[int]:
        return sorted(x - base for x in xs)

    c.commit_txn(CommitTxnRequest(txnid=ids[1]))
    c.abort_txn(AbortTxnRequest(txnid=ids[2]))
    db = unique("hb")
    lock = c.lock(LockRequest(component=[LockComponent(type=1, level=1, dbname=db)], txnid=ids[3], user="u",
                              hostname="h"))
    out: dict[str, Any] = {}
    r = c.heartbeat_txn_range(HeartbeatTxnRangeRequest(min=base, max=ids[-1] + 2))
    out["range"] = (rel(r.aborted), rel(r.nosuch))
    out["empty range"] = _outcome(lambda: c.heartbeat_txn_range(HeartbeatTxnRangeRequest(min=base, max=base - 1)))
    out["inverted"] = _outcome(lambda: c.heartbeat_txn_range(HeartbeatTxnRangeRequest(min=ids[-1], max=base)))
    # abort the open ones among them, pass over a committed, an aborted and an unknown one
    out["abort_txns"] = _outcome(lambda: c.abort_txns(AbortTxnsRequest(txn_ids=[*ids[1:4], ids[-1] + 50])))
    info = {t.id - base: t.state for t in c.get_open_txns_info().open_txns if t.id in ids}
    out["states"] = sorted(info.items())
    out["locks"] = [x.lockid for x in c.show_locks(ShowLocksRequest()).locks or [] if x.lockid == lock.lockid]
    r = c.heartbeat_txn_range(HeartbeatTxnRangeRequest(min=base, max=ids[-1]))
    out["after"] = (rel(r.aborted), rel(r.nosuch))
    out["empty"] = _outcome(lambda: c.abort_txns(AbortTxnsRequest(txn_ids=[])))
    for t in (ids[0], ids[4]):
        c.commit_txn(CommitTxnRequest(txnid=t))
    return out


def test_abort_txns_and_heartbeat_txn_range_as_hive(client: Client, reference: Reference) -> None:  # noqa: F811
    ref = Client(reference.port)
    try:
        theirs = _abort_and_heartbeat(ref)
    finally:
        ref.close()
    ours = _abort_and_heartbeat(client)
    assert ours == theirs
    assert ours["range"] == ([2], [1, 5, 6])  # what Hive 2.3 answers, spelled out
    assert ours["states"] == [(0, TxnState.OPEN), (2, TxnState.ABORTED), (3, TxnState.ABORTED),
                              (4, TxnState.OPEN)]
    assert ours["locks"] == []  # the aborted transaction's lock went with it


def test_heartbeat_range_is_bounded(client: Client) -> None:
    with pytest.raises(TApplicationException, match="more than"):
        client.heartbeat_txn_range(HeartbeatTxnRangeRequest(min=1, max=10**9))


def test_get_open_txns_req_and_latest_txnid_in_conflict(client: Client) -> None:
    a, b = _open(client, 2)
    client.abort_txn(AbortTxnRequest(txnid=b))
    r = client.get_open_txns_req(GetOpenTxnsRequest(excludeTxnTypes=[2]))
    o = client.get_open_txns()
    assert (r.txn_high_water_mark, r.open_txns, r.min_open_txn, r.abortedBits) == (
        o.txn_high_water_mark, o.open_txns, o.min_open_txn, o.abortedBits)
    assert a in r.open_txns and _bits(r.abortedBits, r.open_txns.index(b))
    assert client.get_latest_txnid_in_conflict(a) == 0  # no write sets kept: no conflict
    client.commit_txn(CommitTxnRequest(txnid=a))


# ---- write notifications -------------------------------------------------------------------------------------

def _wnl_rows(server: Server, txnid: int) -> list[dict[str, Any]]:
    engine = sa.create_engine(server.db.url)
    try:
        with engine.connect() as conn:
            q = sa.text('SELECT * FROM "TXN_WRITE_NOTIFICATION_LOG" WHERE "WNL_TXNID" = :t ORDER BY "WNL_ID"')
            if server.db.backend == "mariadb":
                q = sa.text("SELECT * FROM TXN_WRITE_NOTIFICATION_LOG WHERE WNL_TXNID = :t ORDER BY WNL_ID")
            return [dict(r._mapping) for r in conn.execute(q, {"t": txnid})]
    finally:
        engine.dispose()


def test_write_notification_log(client: Client, server: Server, db: str) -> None:
    client.create_table(_table(db, "p", ["k"]))
    client.create_table(_table(db, "u"))
    client.add_partition(Partition(dbName=db, tableName="p", values=["1"], sd=client.get_table(db, "p").sd,
                                   parameters={}))
    a = _open(client)[0]
    (_, wid), = _alloc(client, db, "p", [a])
    start = client.get_current_notificationEventId().eventId

    def note(table: str, files: list[str], vals: list[str] | None = None) -> WriteNotificationLogRequest:
        return WriteNotificationLogRequest(txnId=a, writeId=wid, db=db, table=table,
                                           fileInfo=InsertEventRequestData(filesAdded=files), partitionVals=vals)

    client.add_write_notification_log(note("p", ["f1"], ["1"]))
    client.add_write_notification_log(note("p", ["f1", "f2"], ["1"]))  # a repeat adds only its new files
    client.add_write_notification_log(note("u", ["g1"]))
    with pytest.raises(TApplicationException, match="partition values"):
        client.add_write_notification_log(note("p", ["x"], ["2"]))
    with pytest.raises(TApplicationException, match="table not found"):
        client.add_write_notification_log(note("nope", ["x"]))
    # a batch passes over a partition that does not exist, as Hive's
    client.add_write_notification_log_in_batch(WriteNotificationLogBatchRequest(
        catalog="hive", db=db, table="p", requestList=[note("p", ["f3"], ["1"]), note("p", ["y"], ["9"])]))
    client.add_write_notification_log_in_batch(WriteNotificationLogBatchRequest(
        catalog="hive", db=db, table="nope", requestList=[]))  # empty: nothing to check, as Hive
    rows = _wnl_rows(server, a)
    got = [(r["WNL_TABLE"], r["WNL_PARTITION"], r["WNL_WRITEID"], json.loads(r["WNL_FILES"])) for r in rows]
    assert got == [("p", "k=1", wid, ["f1", "f2", "f3"]), ("u", "", wid, ["g1"])]
    assert json.loads(rows[0]["WNL_TABLE_OBJ"])["1"]["str"] == "p"  # the table's Thrift JSON (tableName: 1)
    assert rows[1]["WNL_PARTITION_OBJ"] is None
    assert _events(client, start) == []  # Hive writes no event for them (its COMMIT_TXN message carries them)
    client.commit_txn(CommitTxnRequest(txnid=a))


def test_authorized_as_writes(authz_server: Server) -> None:  # noqa: F811
    """Write ids and write notifications are a writer's (WRITE on the table, as a write lock); seeds an
    administrator's; the rest (reading write ids, transactions by id) open, as Hive leaves them."""
    denied = "does not have following privileges"
    with MetastoreClient(authz_server.uri, user="root") as root, \
            MetastoreClient(authz_server.uri, user="alice") as alice, \
            MetastoreClient(authz_server.uri, user="bob") as bob:
        db = unique("wauth")
        root.create_database(hms.Database(name=db, description="", locationUri=None, parameters={}))
        root.create_table(hms.Table(tableName="t", dbName=db, owner="alice", sd=text_storage([("a", "int")]),
                                    parameters={}, tableType="MANAGED_TABLE", partitionKeys=[]))
        (txn,) = bob.forward("open_txns", hms.OpenTxnRequest(num_txns=1, user="bob", hostname="h")).txn_ids
        alloc = hms.AllocateTableWriteIdsRequest(dbName=db, tableName="t", txnIds=[txn])
        with pytest.raises(hms.MetaException, match=denied):
            bob.forward("allocate_table_write_ids", alloc)
        assert [x.writeId for x in alice.forward("allocate_table_write_ids", alloc).txnToWriteIds] == [1]
        note = hms.WriteNotificationLogRequest(txnId=txn, writeId=1, db=db, table="t",
                                               fileInfo=hms.InsertEventRequestData(filesAddedChecksum=["f"]))
        with pytest.raises(Exception, match=denied):  # no exception declared: TApplicationException's text
            bob.forward("add_write_notification_log", note)
        alice.forward("add_write_notification_log", note)
        for call, arg in (("seed_txn_id", hms.SeedTxnIdRequest(seedTxnId=10**12)),
                          ("seed_write_id", hms.SeedTableWriteIdsRequest(dbName=db, tableName="u", seedWriteId=5))):
            with pytest.raises(hms.MetaException, match="does not have"):
                bob.forward(call, arg)
        got = bob.forward("get_valid_write_ids", hms.GetValidWriteIdsRequest(fullTableNames=[f"{db}.t"]))
        assert got.tblValidWriteIds[0].invalidWriteIds == [1]
        bob.forward("abort_txns", hms.AbortTxnsRequest(txn_ids=[txn]))
        root.drop_database(db, True, True)


# ---- the store: concurrency, purge, schema ------------------------------------------------------------------

def _store_locks(server: Server, timeout: float = 300) -> tuple[Any, Any]:
    from metastore.catalog.locks import Locks
    from metastore.store.engine import create_engine
    from metastore.store.store import Store

    class OnStore:
        def __init__(self, store: Any) -> None:
            self.store = store

        def transaction(self) -> Any:
            return self.store.write()

    engine = create_engine(server.db.url)
    return Locks(OnStore(Store(engine)), timeout=timeout), engine


def test_concurrent_allocation_has_no_duplicates(server: Server) -> None:
    """Two writers at once on one table, one through the server, one as another process on the same database
    would (its own engine): the ids are 1..n, each once."""
    db, n = unique("d"), 25
    locks, engine = _store_locks(server)
    got: list[list[int]] = [[], []]
    errors: list[BaseException] = []

    def through_server() -> None:
        c = Client(server.port)
        try:
            for _ in range(n):
                t = _open(c)[0]
                got[0] += [w for _, w in _alloc(c, db, "t", [t])]
                c.commit_txn(CommitTxnRequest(txnid=t))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            c.close()

    def directly() -> None:
        try:
            for _ in range(n):
                (t,) = locks.open_txns(1, "u", "h")
                got[1] += [w for _, w in locks.allocate_table_write_ids(db, "t", [t])]
                locks.commit_txn(t)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=through_server), threading.Thread(target=directly)]
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join(300)
    finally:
        engine.dispose()
    assert errors == []
    assert sorted(got[0] + got[1]) == list(range(1, 2 * n + 1))
    assert got[0] == sorted(got[0]) and got[1] == sorted(got[1])


def test_aborted_writers_stay_aborted_after_the_purge(server: Server) -> None:
    """Ended transactions are forgotten after the timeout, but an aborted one that was given write ids stays
    listed as aborted (its writes invalid for good); a committed one goes, its writes valid."""
    import time

    db = unique("d")
    locks, engine = _store_locks(server, timeout=0.5)
    try:
        a, b, c2 = locks.open_txns(3, "u", "h")
        locks.allocate_table_write_ids(db, "t", [a])
        locks.allocate_table_write_ids(db, "t", [b])
        locks.abort_txn(a)
        locks.commit_txn(b)
        locks.abort_txn(c2)  # no write ids: forgotten as before
        time.sleep(1.2)
        locks._purged = (0, float("-inf"))  # purge now
        locks.heartbeat(None, None)
        o = locks.get_open_txns()
        assert a in o.aborted and b not in o.open_txns and c2 not in o.open_txns
        (t,) = locks.valid_write_ids([f"{db}.t"], None)
        assert (t.high_water_mark, t.invalid, t.aborted, t.min_open) == (2, [1], [1], None)
    finally:
        engine.dispose()


def test_migration_matches_the_schema(server: Server) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from metastore.store import schema

    engine = sa.create_engine(server.db.url)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), schema.metadata)
    finally:
        engine.dispose()
    mine = ("TXN_TO_WRITE_ID", "NEXT_WRITE_ID", "TXN_WRITE_NOTIFICATION_LOG")
    assert [d for d in diff if any(t in repr(d) for t in mine)] == []
