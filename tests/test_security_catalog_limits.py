"""Bounds inside the catalog service against requests sized by a client, through the real Thrift front on each
backend: open_txns (Hive's batch clamp and its cap on open transactions), partition filters (length, IN-list
size, nesting, comparisons: refused with MetaException, a following call served, filters within the caps
answered exactly), and lock requests (components per request; finding a blocker is linear)."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hive_metastore.ttypes import (
    AbortTxnRequest,
    FieldSchema,
    LockComponent,
    LockLevel,
    LockRequest,
    LockType,
    MetaException,
    OpenTxnRequest,
    Partition,
    SerDeInfo,
    ShowLocksRequest,
    StorageDescriptor,
    Table,
    UnlockRequest,
)
from hive_metastore.ttypes import Database as HiveDatabase
from thrift.Thrift import TApplicationException

from metastore.catalog.locks import conflicts, first_conflict
from metastore.core.filters import FilterError, like_matcher
from metastore.store.locks import LockRow

from conftest import Client, Database, Server, unique
from reference import Reference, reference  # noqa: F401  (the session fixture)

# ---- finding a lock's blocker: one pass, same answer as comparing every pair --------------------------------


def _row(rnd: random.Random, ext: int, txnid: int) -> LockRow:
    db = rnd.choice(["a", "b"])
    table = rnd.choice([None, "t", "u"])
    part = rnd.choice([None, "p=1", "p=2"]) if table else None
    return LockRow(ext, 1, txnid, db, table, part, rnd.choice("aw"), rnd.choice("rwxe"), 0, None, "u", "h", 0,
                   None)


def test_first_conflict_is_the_pairwise_answer() -> None:
    rnd = random.Random(18)
    for _ in range(3000):
        txnid = rnd.choice([0, 0, 7])
        mine = [_row(rnd, 100, txnid) for _ in range(rnd.randint(1, 4))]
        others = [_row(rnd, rnd.randint(1, 99), rnd.choice([0, 7, 8])) for _ in range(rnd.randint(0, 8))]
        naive = next((o for o in others if any(conflicts(m, o) for m in mine)), None)
        assert first_conflict(mine, others) is naive


# ---- through the server -------------------------------------------------------------------------------------


@pytest.fixture
def c(server: Server) -> Iterator[Client]:
    cl = Client(server.port)
    yield cl
    cl.close()


def test_open_txns_batch_is_clamped_as_hive_does(c: Client) -> None:
    """Hive 2.3 (TxnHandler.openTxns, checked against the reference metastore: 5000 asked, 1000 opened) opens
    at most hive.txn.max.open.batch transactions per call and does not refuse a larger count."""
    hwm = c.get_open_txns().txn_high_water_mark
    ids = c.open_txns(OpenTxnRequest(num_txns=5000, user="u", hostname="h")).txn_ids
    assert len(ids) == 1000 and ids == list(range(ids[0], ids[0] + 1000)) and ids[0] > hwm
    got = c.get_open_txns()
    assert got.txn_high_water_mark == ids[-1] and set(ids) <= set(got.open_txns)
    ids2 = c.open_txns(OpenTxnRequest(num_txns=2**31 - 1, user="u", hostname="h")).txn_ids
    assert len(ids2) == 1000 and ids2[0] == ids[-1] + 1


@pytest.mark.slow
@pytest.mark.reference
def test_open_txns_batch_clamp_matches_the_reference(reference: Reference, server: Server) -> None:  # noqa: F811
    """Side by side with Hive 2.3.10: the same request opens the same number of transactions."""
    for port in (reference.port, server.port):
        cl = Client(port)
        try:
            assert len(cl.open_txns(OpenTxnRequest(num_txns=1001, user="u", hostname="h")).txn_ids) == 1000
        finally:
            cl.close()


@pytest.mark.slow
def test_open_txns_refused_beyond_hives_cap(fresh_database: Database, tmp_path: Path) -> None:
    """100,000 open transactions (Hive's hive.max.open.txns): the next open_txns is refused with Hive's
    message and opens nothing; the server keeps serving; once one ends, a transaction opens again."""
    srv = Server(fresh_database, tmp_path).start()
    try:
        cl = Client(srv.port)
        for _ in range(100):
            cl.open_txns(OpenTxnRequest(num_txns=1000, user="u", hostname="h"))
        before = cl.get_open_txns()
        assert len(before.open_txns) == 100_000
        # open_txns declares no exceptions in Hive's IDL: the MetaException reaches the client as a
        # TApplicationException (Hive's own says "Internal error processing open_txns"), with Hive's message
        with pytest.raises(TApplicationException, match=r"MetaException: Maximum allowed number of open transactions "
                                                        r"has been reached\. See hive\.max\.open\.txns\.$"):
            cl.open_txns(OpenTxnRequest(num_txns=1, user="u", hostname="h"))
        after = cl.get_open_txns()
        assert (after.txn_high_water_mark, after.open_txns) == (before.txn_high_water_mark, before.open_txns)
        assert cl.get_all_databases() == ["default"]
        cl.abort_txn(AbortTxnRequest(txnid=before.open_txns[0]))
        assert len(cl.open_txns(OpenTxnRequest(num_txns=1, user="u", hostname="h")).txn_ids) == 1
        cl.close()
    finally:
        srv.stop()


# ---- partition filters ----------------------------------------------------------------------------------------

N_PARTS = 60


@pytest.fixture(scope="module")
def parts_table(server: Server) -> Iterator[tuple[str, str]]:
    """A table partitioned by (a int, s string) with N_PARTS partitions a=i/s=vi."""
    cl = Client(server.port)
    db = unique("lim")
    cl.create_database(HiveDatabase(name=db))
    sd = StorageDescriptor(cols=[FieldSchema("x", "string", "")],
                           inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                           outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                           serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"))
    cl.create_table(Table(tableName="t", dbName=db, sd=sd, tableType="MANAGED_TABLE", parameters={},
                          partitionKeys=[FieldSchema("a", "int", ""), FieldSchema("s", "string", "")]))
    cl.add_partitions([Partition(values=[str(i), f"v{i}"], dbName=db, tableName="t", sd=sd, parameters={})
                       for i in range(N_PARTS)])
    yield db, "t"
    cl.close()


def names(cl: Client, db: str, table: str, text: str) -> list[str]:
    return sorted("/".join(p.values) for p in cl.get_partitions_by_filter(db, table, text, -1))


def served(cl: Client, db: str, table: str) -> None:
    """The server answers the next call, and answers it right."""
    assert names(cl, db, table, "a = 7") == ["7/v7"]


@pytest.mark.parametrize("text, message", [
    ("a IN (" + ",".join(str(i) for i in range(10_001)) + ")", "IN list of more than 10000 values"),
    ("s IN (" + ",".join(f"'v{i}'" for i in range(100_000)) + ")", "IN list of more than 10000 values"),
    ("a = 1 OR " + "s = 'x' OR " * 10_000 + "a = 2", "characters, more than 100000"),
    ("s = '" + "x" * 1_000_000 + "'", "the filter has 1000006 characters, more than 100000"),
    ("(" * 101 + "a = 1" + ")" * 101, "nested deeper than 100 levels"),
    ("NOT " * 1_000_000 + "a = 1", "nested deeper than 100 levels"),
    (" OR ".join(f"a < {-i}" for i in range(501)), "more than 500 comparisons"),
    (" AND ".join(f"s != 'v{i}'" for i in range(501)), "more than 500 comparisons"),
], ids=["in-10001", "in-100k", "long", "1MB", "parens", "nots", "or-terms", "and-terms"])
def test_filters_beyond_the_caps_are_refused(c: Client, parts_table: tuple[str, str], text: str,
                                             message: str) -> None:
    db, table = parts_table
    with pytest.raises(MetaException) as info:
        c.get_partitions_by_filter(db, table, text, -1)
    assert message in info.value.message and len(info.value.message) < 300  # no echo of the filter
    with pytest.raises(MetaException, match=re.escape(message)):
        c.get_num_partitions_by_filter(db, table, text)
    served(c, db, table)


def test_filters_within_the_caps_are_answered(c: Client, parts_table: tuple[str, str]) -> None:
    db, table = parts_table
    every = sorted(f"{i}/v{i}" for i in range(N_PARTS))
    # the largest IN list, on the int key and on the string key (with literals that match nothing)
    assert names(c, db, table, "a IN (" + ",".join(str(-i) for i in range(1, 10_000)) + ", 3)") == ["3/v3"]
    assert names(c, db, table, "s IN (" + ",".join(f"'w{i}'" for i in range(1, 10_000)) + ", 'v4')") == ["4/v4"]
    assert names(c, db, table, "a NOT IN (" + ",".join(str(i) for i in range(1, 10_000)) + ")") == ["0/v0"]
    # Spark sends an IN list as equalities joined by OR (up to 1,000 values): one comparison, on every store
    spark = "(" + " or ".join(f"(a = {i})" for i in range(0, 2000, 2)) + ") and (s != 'v2')"
    assert names(c, db, table, spark) == sorted(f"{i}/v{i}" for i in range(0, N_PARTS, 2) if i != 2)
    assert c.get_num_partitions_by_filter(db, table, spark) == N_PARTS // 2 - 1
    # 500 comparisons that are no IN list: at the cap, answered
    assert names(c, db, table, " AND ".join(f"s != 'w{i}'" for i in range(500))) == every
    # the deepest nesting, and a filter of just under the length limit
    assert names(c, db, table, "(" * 100 + "a = 5" + ")" * 100) == ["5/v5"]
    assert names(c, db, table, "a = 6" + " " * (100_000 - 5)) == ["6/v6"]


@pytest.mark.slow  # 100,000 names on the wire, three times
def test_partition_names_per_call_are_bounded(c: Client, parts_table: tuple[str, str]) -> None:
    """get_partitions_by_names and drop_partitions_req by names take at most 100,000 names (a million held the
    server for ~15 s); within the cap, repeated and unknown names are answered as Hive does."""
    from hive_metastore.ttypes import DropPartitionsRequest, RequestPartsSpec

    db, table = parts_table
    many = [f"a={i}/s=v{i}" for i in range(100_001)]
    with pytest.raises(MetaException, match=re.escape("Too many partition names in one call (100001; at most 100000)")):
        c.get_partitions_by_names(db, table, many)
    # the same through the serialized fast path, which serves a table's partitions once they were read whole
    c.get_partitions(db, table, -1)
    with pytest.raises(MetaException, match=re.escape("Too many partition names in one call (100001; at most 100000)")):
        c.get_partitions_by_names(db, table, many)
    with pytest.raises(MetaException, match="Too many partition names"):
        c.drop_partitions_req(DropPartitionsRequest(dbName=db, tblName=table, parts=RequestPartsSpec(names=many),
                                                    deleteData=True, ifExists=True))
    assert len(c.get_partition_names(db, table, -1)) == N_PARTS  # nothing dropped
    got = c.get_partitions_by_names(db, table, many[:99_999] + ["a=3/s=v3"])
    assert sorted("/".join(p.values) for p in got) == sorted(f"{i}/v{i}" for i in range(N_PARTS))
    served(c, db, table)


# ---- lock requests --------------------------------------------------------------------------------------------


@pytest.mark.slow  # 100,000 / 9,000 components on the wire: a few seconds
def test_lock_request_with_too_many_components_is_refused(c: Client) -> None:
    db = unique("lk")
    comps = [LockComponent(type=LockType.SHARED_READ, level=LockLevel.PARTITION, dbname=db, tablename="t",
                           partitionname=f"p={i}") for i in range(100_001)]
    # lock declares no MetaException in Hive's IDL: it arrives as a TApplicationException with the message
    with pytest.raises(TApplicationException, match="has 100001 components, more than 100000"):
        c.lock(LockRequest(component=comps, user="u", hostname="h"))
    assert not c.show_locks(ShowLocksRequest(dbname=db)).locks
    r = c.lock(LockRequest(component=comps[:2], user="u", hostname="h"))
    c.unlock(UnlockRequest(lockid=r.lockid))


@pytest.mark.slow  # 100,000 / 9,000 components on the wire: a few seconds
def test_many_components_against_many_locks(c: Client) -> None:
    """3,000 partition locks held; a request of 3,000 components, one of them on a held partition, waits for
    exactly that lock (9 million pairs, were they compared pairwise); without it, it is granted."""
    db = unique("lk")

    def comp(i: int, kind: int = LockType.EXCLUSIVE) -> LockComponent:
        return LockComponent(type=kind, level=LockLevel.PARTITION, dbname=db, tablename="t", partitionname=f"p={i}")

    held = c.lock(LockRequest(component=[comp(i) for i in range(3000)], user="u", hostname="h"))
    waits = c.lock(LockRequest(component=[comp(i) for i in range(3000, 5999)] + [comp(2999)], user="u",
                               hostname="h"))
    assert waits.state == 2  # WAITING
    blocked = {x.blockedByExtId for x in c.show_locks(ShowLocksRequest(dbname=db)).locks if x.lockid == waits.lockid}
    assert blocked == {held.lockid}
    free = c.lock(LockRequest(component=[comp(i) for i in range(6000, 9000)], user="u", hostname="h"))
    assert free.state == 1  # ACQUIRED
    for lk in (held, waits, free):
        c.unlock(UnlockRequest(lockid=lk.lockid))


# ---- LIKE on cached partitions (catalogd): a wildcard match, never a client's regex ---------------------------


def test_like_matcher_means_what_the_sql_means() -> None:
    import re as regex

    rnd = random.Random(18)
    checked = 0
    for _ in range(5000):
        pattern = "".join(rnd.choice(["a", "b", ".", ".*", ".+", "\\.", "\\*", "%", "_"])
                          for _ in range(rnd.randint(0, 6)))
        match = like_matcher(pattern)
        for _ in range(4):
            value = "".join(rnd.choice("ab.*%_\n") for _ in range(rnd.randint(0, 7)))
            assert match(value) == (regex.fullmatch(pattern, value, regex.DOTALL) is not None), (pattern, value)
            checked += 1
    assert checked == 20000


def test_like_matcher_refuses_regex_syntax_and_never_backtracks() -> None:
    for pattern in ["(a|a)*b", "a+", "[ab]", "a{2}", "\\d"]:
        with pytest.raises(FilterError, match="Unsupported LIKE pattern"):
            like_matcher(pattern)
    # many wildcards over a long value: at most (pattern x value) steps
    assert like_matcher(".*a" * 40 + ".*b")("a" * 20_000) is False
    assert like_matcher(".*a" * 40 + ".*b")("a" * 20_000 + "b") is True
