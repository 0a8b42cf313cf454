"""Real transaction events (issue 23, acceptance 5): open_txns / commit_txn / abort_txn / abort_txns through Thrift
write Hive's OPEN_TXN, COMMIT_TXN and ABORT_TXN events (JSONOpenTxnMessage, JSONCommitTxnMessage with the
transaction's write notifications, JSONAbortTxnMessage), each in the transaction of the change, and a transaction
aborted by the timeout gets its ABORT_TXN too. catalogd's transaction barrier runs on these real events: an ACID
write's events (OPEN_TXN, ALLOC_WRITE_ID, ADD_PARTITION, COMMIT_TXN) reach a catalogd processor, which applies
them in order, the commit's pseudo events after each table's own earlier events."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_catalogd_barriers import Run

from metastore.catalogd.events import PseudoCommitTxnTask
from metastore.core.messages import TxnMessage, decode
from metastore.thrift import hms

from catalogd_support import Metastore, table_obj
from conftest import Database, Server, unique


@pytest.fixture(scope="module")
def ms(server: Server) -> Iterator[Metastore]:
    m = Metastore(server.uri)
    yield m
    m.close()


def events_after(ms: Metastore, after: int) -> list[Any]:
    out: list[Any] = []
    while True:
        batch = ms.next_notification(after, 1000)
        if not batch:
            return out
        out += batch
        after = batch[-1].eventId


def open_txn(ms: Metastore) -> int:
    return int(ms.open_txns(hms.OpenTxnRequest(num_txns=1, user="u", hostname="h")).txn_ids[0])


def write_id(ms: Metastore, db: str, table: str, txnid: int) -> int:
    got = ms.allocate_table_write_ids(hms.AllocateTableWriteIdsRequest(dbName=db, tableName=table, txnIds=[txnid]))
    return int(got.txnToWriteIds[0].writeId)


def note_write(ms: Metastore, txnid: int, wid: int, db: str, table: str, files: list[str],
               part: list[str] | None = None) -> None:
    ms.add_write_notification_log(hms.WriteNotificationLogRequest(
        txnId=txnid, writeId=wid, db=db, table=table, fileInfo=hms.InsertEventRequestData(filesAdded=files),
        partitionVals=part))


def local(location: str) -> Path:
    path = location.removeprefix("file:")
    while path.startswith("//"):
        path = path[1:]
    return Path(path)


ACID = {"transactional": "true", "transactional_properties": "insert_only"}


def test_transaction_calls_write_hives_events(ms: Metastore) -> None:
    db = unique("tx")
    ms.create_database(hms.Database(name=db, description="", locationUri=None, parameters={}))
    ms.create_table(table_obj(db, "t", False, ACID))
    start = ms.current_event_id()
    ids = [int(i) for i in ms.open_txns(hms.OpenTxnRequest(num_txns=3, user="u", hostname="h")).txn_ids]
    wid = write_id(ms, db, "t", ids[0])
    note_write(ms, ids[0], wid, db, "t", ["file:/x/delta_1/f0"])
    ms.commit_txn(hms.CommitTxnRequest(txnid=ids[0]))
    ms.commit_txn(hms.CommitTxnRequest(txnid=ids[0]))  # again: no error, no second event
    ms.abort_txn(hms.AbortTxnRequest(txnid=ids[1]))
    ms.abort_txns(hms.AbortTxnsRequest(txn_ids=[ids[0], ids[1], ids[2]]))  # only ids[2] is open
    evs = events_after(ms, start)
    assert [e.eventType for e in evs] == ["OPEN_TXN", "ALLOC_WRITE_ID", "COMMIT_TXN", "ABORT_TXN", "ABORT_TXN"]
    assert all(e.dbName is None and e.tableName is None for e in evs if e.eventType != "ALLOC_WRITE_ID")
    docs = [json.loads(e.message) for e in evs]
    assert all(e.messageFormat == "json-0.2" for e in evs)
    opened = docs[0]
    assert opened["txnIds"] == ids and (opened["fromTxnId"], opened["toTxnId"]) == (ids[0], ids[-1])
    assert {"server", "servicePrincipal", "timestamp"} <= set(opened)
    commit = docs[2]
    assert commit["txnid"] == ids[0] and commit["writeIds"] == [wid]
    assert (commit["databases"], commit["tables"], commit["partitions"]) == ([db], ["t"], [""])
    assert json.loads(commit["files"][0]) == ["file:/x/delta_1/f0"]
    assert commit["partitionObjs"] == [None] and commit["tableObjs"][0].startswith("{")
    m = decode(evs[2])
    assert isinstance(m, TxnMessage) and m.txn_id == ids[0] and m.tables() == [(db, "t")]
    assert [(d["txnid"], d["dbsUpdated"]) for d in docs[3:]] == [(ids[1], []), (ids[2], [])]
    assert all(isinstance(decode(e), TxnMessage) for e in evs if e.eventType != "ALLOC_WRITE_ID")


@pytest.fixture(scope="module")
def short_timeout(database: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with a 2 s transaction timeout."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("METASTORE_TXN_TIMEOUT", "2s")
        s = Server(database, tmp_path_factory.mktemp("short")).start()
    yield s
    s.stop()


def test_a_timed_out_transaction_gets_its_abort_event(short_timeout: Server) -> None:
    ms = Metastore(short_timeout.uri)
    try:
        db = unique("to")
        ms.create_database(hms.Database(name=db, description="", locationUri=None, parameters={}))
        ms.create_table(table_obj(db, "t", False, ACID))
        txnid = open_txn(ms)
        wid = write_id(ms, db, "t", txnid)
        note_write(ms, txnid, wid, db, "t", ["file:/x/f"])
        start = ms.current_event_id()
        time.sleep(2.5)  # no heartbeat: past the timeout, the next call aborts it
        ms.get_open_txns()
        aborts = [json.loads(e.message) for e in events_after(ms, start) if e.eventType == "ABORT_TXN"]
        assert [(d["txnid"], d["dbsUpdated"]) for d in aborts] == [(txnid, [db])]
        with pytest.raises(hms.TxnAbortedException):
            ms.commit_txn(hms.CommitTxnRequest(txnid=txnid))
    finally:
        ms.close()


def test_catalogd_applies_an_acid_writes_real_events_in_order(ms: Metastore) -> None:
    d = unique("acid")
    ms.create_database(hms.Database(name=d, description="", locationUri=None, parameters={}))
    ms.create_table(table_obj(d, "pt", True, ACID))
    ms.create_table(table_obj(d, "ut", False, ACID))
    r = Run(ms)
    try:
        proc = r.make()
        assert r.loader is not None
        for n in ("pt", "ut"):
            assert r.loader.ensure_loaded(d, n) is not None
        # the ACID write: a transaction, write ids for both tables, a new partition, files written into it and
        # into the unpartitioned table, their write notifications, the commit
        txnid = open_txn(ms)
        wids = {n: write_id(ms, d, n, txnid) for n in ("pt", "ut")}
        ms.lock(hms.LockRequest(component=[hms.LockComponent(type=2, level=2, dbname=d, tablename=n)
                                           for n in ("pt", "ut")], txnid=txnid, user="u", hostname="h"))
        t = ms.get_table_objects_by_name(d, ["pt"])[0]
        t.sd.location = None
        ms.add_partition(hms.Partition(values=["1"], dbName=d, tableName="pt", sd=t.sd, parameters={}))
        added = ms.current_event_id()
        proc.poll_once()
        assert proc.wait_synced(added, 30)  # catalogd has the partition, and lists its files: none yet
        ploc = ms.get_partition(d, "pt", ["1"]).sd.location
        uloc = ms.get_table_objects_by_name(d, ["ut"])[0].sd.location
        cached = r.cache.table(d, "pt")
        assert cached is not None and cached.files.get(ploc) == []
        files = {}
        for n, loc in (("pt", ploc), ("ut", uloc)):
            path = local(loc) / f"{n}_{wids[n]}_000000_0"  # catalogd lists the files right under a location
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("1\n")
            files[n] = str(path)
            note_write(ms, txnid, wids[n], d, n, [f"file:{path}"], ["1"] if n == "pt" else None)
        ms.commit_txn(hms.CommitTxnRequest(txnid=txnid))
        commit = ms.current_event_id()

        evs = events_after(ms, r.start)
        mine = [e.eventType for e in evs if e.dbName in (d, None)]
        assert mine == ["OPEN_TXN", "ALLOC_WRITE_ID", "ALLOC_WRITE_ID", "ADD_PARTITION", "COMMIT_TXN"]
        assert evs[-1].eventId == commit

        proc.poll_once()
        assert proc.wait_synced(commit, 30)
        parts = r.tasks(type="COMMIT_TXN")
        assert sorted((x[3], x[4]) for x in parts) == [(n, PseudoCommitTxnTask.__name__) for n in ("pt", "ut")]
        add = r.one(type="ADD_PARTITION", table="pt")
        assert add[6] <= r.one(type="COMMIT_TXN", table="pt")[5], "the commit's part ran before the partition"
        assert r.cache.history[(d, "pt")][-2:] == [add[0], commit]
        assert r.cache.history[(d, "ut")][-1] == commit
        # the commit made catalogd list the tables' files again: the transaction's files are there
        pt, ut = r.cache.table(d, "pt"), r.cache.table(d, "ut")
        assert pt is not None and ut is not None

        def names(t: Any, loc: str) -> set[str]:
            return {f.name for f in t.files.get(loc, [])}
        assert any(files["pt"].endswith(n) for n in names(pt, ploc)), (names(pt, ploc), files["pt"])
        assert any(files["ut"].endswith(n) for n in names(ut, uloc)), (names(ut, uloc), files["ut"])

        # an abort: its event names no tables (Hive's), so nothing is applied, and catalogd goes past it
        other = open_txn(ms)
        ms.abort_txn(hms.AbortTxnRequest(txnid=other))
        aborted = ms.current_event_id()
        proc.poll_once()
        assert proc.wait_synced(aborted, 30)
        assert not r.tasks(type="ABORT_TXN")
    finally:
        r.close()
