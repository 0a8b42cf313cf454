"""Transactional tables over Thrift, against the reference Hive 2.3.10 metastore on every backend: Hive's rules
for creating and altering them, SHOW TRANSACTIONS (get_open_txns_info), compaction requests (compact2,
show_compact), and get_open_txns read by a client of Hive 2.3's generation (open_txns a set) and of Hive 3's (a
list, with abortedBits) from the same answer (server/wire_shapes.py).

Deliberate differences: `transactional_properties` = insert_only (Hive 3's insert-only tables) is accepted with
any format, as Hive 3 accepts it (Hive 2.3 refuses the format); a compaction request for a table that does not
exist is refused with NoSuchObjectException (Hive 2.3's server records it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hive_metastore.ttypes import (
    AbortTxnRequest,
    CommitTxnRequest,
    CompactionRequest,
    CompactionType,
    Database,
    FieldSchema,
    OpenTxnRequest,
    Partition,
    SerDeInfo,
    ShowCompactRequest,
    StorageDescriptor,
    Table,
    TxnState,
)
from thrift.Thrift import TApplicationException, TType

from conftest import Client, Server, unique
from reference import Reference, reference  # noqa: F401  (the session fixture)

ORC = ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
       "org.apache.hadoop.hive.ql.io.orc.OrcSerde")
TEXT = ("org.apache.hadoop.mapred.TextInputFormat", "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")


def _table(db: str, name: str, params: dict[str, str], fmt: tuple[str, str, str] = ORC, bucketed: bool = True,
           table_type: str = "MANAGED_TABLE") -> Table:
    sd = StorageDescriptor(cols=[FieldSchema("id", "int", "")], inputFormat=fmt[0], outputFormat=fmt[1],
                           serdeInfo=SerDeInfo(serializationLib=fmt[2], parameters={}),
                           bucketCols=["id"] if bucketed else [], numBuckets=2 if bucketed else -1, parameters={})
    return Table(dbName=db, tableName=name, tableType=table_type, parameters=dict(params), partitionKeys=[], sd=sd)


CREATES: list[tuple[str, dict[str, str], tuple[str, str, str], bool, str]] = [
    ("plain_true", {"transactional": "true"}, ORC, True, "MANAGED_TABLE"),
    ("upper_value", {"transactional": "TRUE"}, ORC, True, "MANAGED_TABLE"),
    ("upper_key", {"TRANSACTIONAL": "true"}, TEXT, False, "MANAGED_TABLE"),
    ("false_dropped", {"transactional": "false"}, TEXT, False, "MANAGED_TABLE"),
    ("other_value", {"transactional": "yes"}, ORC, True, "MANAGED_TABLE"),
    ("text_format", {"transactional": "true"}, TEXT, True, "MANAGED_TABLE"),
    ("not_bucketed", {"transactional": "true"}, ORC, False, "MANAGED_TABLE"),
    ("external", {"transactional": "true", "EXTERNAL": "TRUE"}, ORC, True, "EXTERNAL_TABLE"),
    ("bad_kind", {"transactional": "true", "transactional_properties": "bogus"}, ORC, True, "MANAGED_TABLE"),
    ("default_kind", {"transactional": "true", "transactional_properties": "default"}, ORC, True, "MANAGED_TABLE"),
    ("none", {}, TEXT, False, "MANAGED_TABLE"),
    ("orc_none", {}, ORC, True, "MANAGED_TABLE"),
]
ALTERS: list[tuple[str, dict[str, str]]] = [
    ("none", {"transactional": "true"}),  # a text table made transactional
    ("orc_none", {"transactional": "true"}),
    ("plain_true", {}),  # unset
    ("plain_true", {"transactional": "false"}),
    ("orc_none", {"transactional": "false"}),
]


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except Exception as e:  # the class and Hive's message are what is compared
        return type(e).__name__, getattr(e, "message", str(e))


def _acid_params(c: Client, db: str, name: str) -> dict[str, str]:
    return {k: v for k, v in c.get_table(db, name).parameters.items() if "transactional" in k.lower()}


def _rules(c: Client, db: str) -> list[Any]:
    c.create_database(Database(name=db, parameters={}))
    got: list[Any] = []
    for name, params, fmt, bucketed, table_type in CREATES:
        t = _table(db, name, params, fmt, bucketed, table_type)

        def create(t: Table = t) -> dict[str, str]:
            c.create_table(t)
            return _acid_params(c, db, t.tableName)
        got.append((name, _outcome(create)))
    for name, params in ALTERS:
        def alter(name: str = name, params: dict[str, str] = params) -> dict[str, str]:
            t = c.get_table(db, name)
            t.parameters = {k: v for k, v in t.parameters.items() if "transactional" not in k.lower()}
            t.parameters.update(params)
            c.alter_table(db, name, t)
            return _acid_params(c, db, name)
        got.append((name, params, _outcome(alter)))
    c.drop_database(db, True, True)
    return got


@pytest.fixture(scope="module")
def clients(server: Server, reference: Reference) -> Iterator[tuple[Client, Client]]:  # noqa: F811
    ours, ref = Client(server.port), Client(reference.port)
    try:
        yield ours, ref
    finally:
        ours.close()
        ref.close()


def test_transactional_table_rules(clients: tuple[Client, Client]) -> None:
    ours, ref = clients
    db = unique("acid")  # one name: Hive's messages carry it
    assert _rules(ours, db) == _rules(ref, db)


def test_insert_only_tables_of_any_format(client: Client) -> None:
    """Deliberate: Hive 3's insert-only tables need neither ORC nor buckets (Hive 2.3 refuses them)."""
    db = unique("mm")
    client.create_database(Database(name=db, parameters={}))
    try:
        client.create_table(_table(db, "mm", {"transactional": "true", "transactional_properties": "insert_only"},
                                   TEXT, bucketed=False))
        assert _acid_params(client, db, "mm") == {"transactional": "true",
                                                  "transactional_properties": "insert_only"}
    finally:
        client.drop_database(db, True, True)


class _OpenTxns23:
    """Hive 2.3's GetOpenTxnsResponse as its generated reader reads it: each field only in the type Hive 2.3
    declares (open_txns a set), any other skipped."""

    def __init__(self) -> None:
        self.txn_high_water_mark: int | None = None
        self.open_txns: set[int] | None = None
        self.min_open_txn: int | None = None

    def read(self, iprot: Any) -> None:
        iprot.readStructBegin()
        while True:
            _, ftype, fid = iprot.readFieldBegin()
            if ftype == TType.STOP:
                break
            if fid == 1 and ftype == TType.I64:
                self.txn_high_water_mark = iprot.readI64()
            elif fid == 2 and ftype == TType.SET:
                _, n = iprot.readSetBegin()
                self.open_txns = {iprot.readI64() for _ in range(n)}
                iprot.readSetEnd()
            elif fid == 3 and ftype == TType.I64:
                self.min_open_txn = iprot.readI64()
            else:
                iprot.skip(ftype)
            iprot.readFieldEnd()
        iprot.readStructEnd()


def _get_open_txns_as_hive23(c: Client) -> _OpenTxns23:
    c.api.send_get_open_txns()
    iprot = c.api._iprot
    iprot.readMessageBegin()
    out = _OpenTxns23()
    iprot.readStructBegin()  # get_open_txns_result: field 0, the answer
    while True:
        _, ftype, fid = iprot.readFieldBegin()
        if ftype == TType.STOP:
            break
        if fid == 0 and ftype == TType.STRUCT:
            out.read(iprot)
        else:
            iprot.skip(ftype)
        iprot.readFieldEnd()
    iprot.readStructEnd()
    iprot.readMessageEnd()
    return out


def test_open_txns_in_every_generations_shape(client: Client) -> None:
    ids = client.open_txns(OpenTxnRequest(num_txns=3, user="alice", hostname="h1")).txn_ids
    client.abort_txn(AbortTxnRequest(txnid=ids[1]))
    try:
        hive3 = client.get_open_txns()  # the Hive 4 IDL's client: a list and abortedBits
        assert set(ids) <= set(hive3.open_txns) and hive3.txn_high_water_mark >= ids[-1]
        aborted = {t for i, t in enumerate(hive3.open_txns) if hive3.abortedBits[i // 8: i // 8 + 1]
                   and hive3.abortedBits[i // 8] >> (i % 8) & 1}
        assert ids[1] in aborted and ids[0] not in aborted and ids[2] not in aborted
        hive23 = _get_open_txns_as_hive23(client)
        assert hive23.open_txns == set(hive3.open_txns)
        assert (hive23.txn_high_water_mark, hive23.min_open_txn) == (hive3.txn_high_water_mark,
                                                                     hive3.min_open_txn)
        info = {t.id: t for t in client.get_open_txns_info().open_txns}
        assert info[ids[0]].state == TxnState.OPEN and info[ids[1]].state == TxnState.ABORTED
        assert (info[ids[2]].user, info[ids[2]].hostname) == ("alice", "h1")
    finally:
        client.commit_txn(CommitTxnRequest(txnid=ids[0]))
        client.abort_txn(AbortTxnRequest(txnid=ids[2]))
    assert not {ids[0], ids[2]} & {t.id for t in client.get_open_txns_info().open_txns
                                   if t.state == TxnState.OPEN}


def _compactions(c: Client) -> list[Any]:
    db = unique("cmp")
    c.create_database(Database(name=db, parameters={}))
    c.create_table(_table(db, "t", {"transactional": "true"}))
    got: list[Any] = []
    first = c.compact2(CompactionRequest(dbname=db, tablename="t", type=CompactionType.MAJOR))
    again = c.compact2(CompactionRequest(dbname=db, tablename="t", type=CompactionType.MINOR))
    part = c.compact2(CompactionRequest(dbname=db, tablename="t", partitionname="ds=1", type=CompactionType.MINOR,
                                        properties={"compactor.mapreduce.map.memory.mb": "1024"}))
    got.append((first.state, first.accepted, again.state, again.accepted, again.id == first.id,
                part.accepted, part.id != first.id))
    mine = [e for e in c.show_compact(ShowCompactRequest()).compacts if e.dbname == db]
    got.append(sorted((e.tablename, e.partitionname or "", e.type, e.state, e.workerid, e.hadoopJobId) for e in mine))
    c.drop_table(db, "t", True)
    got.append([e for e in c.show_compact(ShowCompactRequest()).compacts if e.dbname == db])
    c.drop_database(db, True, True)
    return got


def test_compaction_requests(clients: tuple[Client, Client]) -> None:
    ours, ref = clients
    assert _compactions(ours) == _compactions(ref)


def test_compaction_of_a_missing_table(client: Client) -> None:
    """Deliberate: Hive 2.3's server records a request for any name; ours refuses one for no table (compact2
    declares no exception: the client gets a TApplicationException with the reason, as from Hive's server)."""
    with pytest.raises(TApplicationException, match="table not found"):
        client.compact2(CompactionRequest(dbname="default", tablename=unique("missing"), type=CompactionType.MAJOR))


def test_compaction_of_a_huge_partition_name(client: Client) -> None:
    """A partition name wider than the column is refused with the reason, not a database error quoting it."""
    db = unique("cmpbig")
    client.create_database(Database(name=db, parameters={}))
    try:
        client.create_table(_table(db, "t", {"transactional": "true"}))
        with pytest.raises(TApplicationException, match="more than 767 characters") as e:
            client.compact2(CompactionRequest(dbname=db, tablename="t", partitionname="ds=" + "x" * 5000,
                                              type=CompactionType.MAJOR))
        assert "xxxx" not in str(e.value)
    finally:
        client.drop_database(db, True, True)


def test_requests_naming_no_partition_are_bounded(client: Client) -> None:
    """Hive records a request for any partition name; with no compactor each stays, so a table takes at most 1,000
    pending requests naming partitions it does not have (one for a real partition is still recorded)."""
    from metastore.catalog.locks import MAX_REQUESTS_OF_NO_PARTITION

    db = unique("cmpmany")
    client.create_database(Database(name=db, parameters={}))
    try:
        t = _table(db, "t", {"transactional": "true"})
        t.partitionKeys = [FieldSchema("ds", "string", "")]
        client.create_table(t)
        client.add_partition(Partition(dbName=db, tableName="t", values=["1"], sd=t.sd, parameters={}))
        for i in range(MAX_REQUESTS_OF_NO_PARTITION):
            assert client.compact2(CompactionRequest(dbname=db, tablename="t", partitionname=f"ds=no{i}",
                                                     type=CompactionType.MINOR)).accepted
        with pytest.raises(TApplicationException, match="pending compaction requests naming partitions"):
            client.compact2(CompactionRequest(dbname=db, tablename="t", partitionname="ds=one_more",
                                              type=CompactionType.MINOR))
        again = client.compact2(CompactionRequest(dbname=db, tablename="t", partitionname="ds=no0",
                                                  type=CompactionType.MINOR))
        assert not again.accepted  # the pending one is answered, as before
        assert client.compact2(CompactionRequest(dbname=db, tablename="t", partitionname="ds=1",
                                                 type=CompactionType.MAJOR)).accepted
        assert len([e for e in client.show_compact(ShowCompactRequest()).compacts if e.dbname == db]) == \
            MAX_REQUESTS_OF_NO_PARTITION + 1
    finally:
        client.drop_database(db, True, True)
    assert not [e for e in client.show_compact(ShowCompactRequest()).compacts if e.dbname == db]
