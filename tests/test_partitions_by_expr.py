"""get_partitions_by_expr and drop_partitions_req by expression, with the bytes Hive 2.3.10's own CLI sent
(tests/hive_expr_captured.txt), against our server (every backend) and the reference Hive metastore: the same
partitions selected and dropped. An expression this server cannot give Hive's meaning answers UNKNOWN_METHOD,
on which Hive's client prunes by itself: never a wrong answer."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from hive_metastore.ttypes import (
    Database,
    DropPartitionsExpr,
    DropPartitionsRequest,
    FieldSchema,
    MetaException,
    NoSuchObjectException,
    Partition,
    PartitionsByExprRequest,
    RequestPartsSpec,
    Table,
)
from test_hive_expr import captured_requests
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from common import parquet_storage
from conftest import Server, unique
from reference import Reference, connected, made_on_both, reference  # noqa: F401  (the session fixture)

pytestmark = [pytest.mark.reference]

KEYS = [("ds", "string"), ("hr", "int"), ("d", "date"), ("big", "bigint")]
DEFAULT = "__HIVE_DEFAULT_PARTITION__"
# a grid with values each captured statement selects some of, and the default partition of every key
VALUES = [[ds, hr, d, big] for ds, hr, d, big in [
    ("2024-01-01", "1", "2024-01-01", "5"), ("2024-01-01", "3", "2024-01-02", "1"), ("a", "2", "2023-12-31", "2"),
    ("b", "5", "2024-02-01", "9000000000"), ("x", "7", "2024-01-01", "3"), ("a_b-1", "0", "2024-03-01", "4"),
    ("déjà vu", "4", "2024-01-15", "-1"), ("2025-06-01", "6", "2022-01-01", "7"), (DEFAULT, "2", "2024-01-01", "1"),
    ("c", DEFAULT, "2024-01-02", "2"), ("d", "1", DEFAULT, "3"), ("e", "3", "2024-01-01", DEFAULT),
]]


CAPTURED = captured_requests()
SELECTS = [(s, b) for s, b in CAPTURED if s.startswith("SELECT")]
DROPS = [(s, b) for s, b in CAPTURED if s.startswith("ALTER")]


def _make(c: Any, db: str, table: str) -> None:
    c.create_database(Database(name=db, description="", parameters={}))
    c.create_table(Table(tableName=table, dbName=db, owner="t", sd=parquet_storage([("x", "int")]), parameters={},
                         tableType="MANAGED_TABLE", partitionKeys=[FieldSchema(k, t, None) for k, t in KEYS]))
    sd = parquet_storage([("x", "int")])
    c.add_partitions([Partition(values=v, dbName=db, tableName=table, sd=copy.deepcopy(sd), parameters={})
                      for v in VALUES])


@pytest.fixture(scope="module")
def both(server: Server, reference: Reference) -> Iterator[tuple[int, int, str]]:  # noqa: F811
    """(our port, the reference's port, the database holding table p on both)."""
    yield from made_on_both((server.port, reference.port), "expr", lambda c, db: _make(c, db, "p"))


class Unevaluated(Exception):
    """The server did not evaluate the expression (refused it, or, the reference, failed on it)."""


def _names(port: int, db: str, table: str, expr: bytes) -> list[str]:
    """The partition names the expression selects, on a connection of its own (the reference's worker thread
    dies on an expression it cannot evaluate in Java: it lacks a class of Hive's LLAP)."""
    with connected(port) as c:
        try:
            r = c.get_partitions_by_expr(PartitionsByExprRequest(dbName=db, tblName=table, expr=expr, maxParts=-1))
        except TApplicationException as e:
            raise Unevaluated(f"TApplicationException {e.type}: {e.message}") from None
        except (MetaException, TTransportException) as e:
            raise Unevaluated(f"{type(e).__name__}") from None
    assert not r.hasUnknownPartitions
    keys = [k for k, _ in KEYS]
    return sorted("/".join(f"{k}={v}" for k, v in zip(keys, p.values)) for p in r.partitions)


@pytest.mark.parametrize("statement", [s for s, _ in SELECTS])
def test_selects_the_references_partitions(both: tuple[int, int, str], statement: str) -> None:
    ours, ref, db = both
    expr = dict(SELECTS)[statement]
    try:
        mine = _names(ours, db, "p", expr)
    except Unevaluated as e:  # refused with UNKNOWN_METHOD: Hive's client prunes by itself
        assert str(e).startswith(f"TApplicationException {TApplicationException.UNKNOWN_METHOD}:"), e
        return
    try:
        theirs = _names(ref, db, "p", expr)
    except Unevaluated as e:
        pytest.skip(f"the reference cannot evaluate it ({e})")
    assert mine == theirs, statement


def test_most_of_what_hive_sends_is_evaluated_here(both: tuple[int, int, str]) -> None:
    ours, _, db = both
    refused = []
    for statement, expr in SELECTS:
        try:
            _names(ours, db, "p", expr)
        except Unevaluated:
            refused.append(statement)
    # what Hive would compare as doubles or through a function: its client prunes these by itself
    assert refused == ["SELECT * FROM p WHERE ds = 5", "SELECT * FROM p WHERE upper(ds) = 'A'",
                       "SELECT * FROM p WHERE cast(hr as string) = '1'", "SELECT * FROM p WHERE hr BETWEEN '1' AND '5'",
                       "SELECT * FROM p WHERE d IN ('2024-01-01', '2024-01-02')"], refused


def test_max_parts_and_missing_table(both: tuple[int, int, str]) -> None:
    ours, _, db = both
    expr = dict(SELECTS)["SELECT * FROM p WHERE hr IN (1,2)"]
    with connected(ours) as c:
        r = c.get_partitions_by_expr(PartitionsByExprRequest(dbName=db, tblName="p", expr=expr, maxParts=1))
        assert len(r.partitions) == 1
        with pytest.raises(NoSuchObjectException):
            c.get_partitions_by_expr(PartitionsByExprRequest(dbName=db, tblName="nope", expr=expr, maxParts=-1))
    for junk in (b"", b"\x00" * 10, b"\x01\x01\x00" + b"\xff" * 50):
        with pytest.raises(Unevaluated, match="TApplicationException"):  # never a wrong answer
            _names(ours, db, "p", junk)


@pytest.mark.parametrize("statement", [s for s, _ in DROPS])
def test_drops_what_the_reference_drops(server: Server, reference: Reference, statement: str) -> None:  # noqa: F811
    expr = dict(DROPS)[statement]
    left: dict[str, Any] = {}
    for side, port in (("ours", server.port), ("reference", reference.port)):
        db = unique("xdrop")
        with connected(port) as c:
            _make(c, db, "p")
            req = DropPartitionsRequest(dbName=db, tblName="p", parts=RequestPartsSpec(exprs=[
                DropPartitionsExpr(expr=expr, partArchiveLevel=4)]), deleteData=True, ifExists=False,
                needResult=True)
            try:
                dropped = c.drop_partitions_req(req)
                left[side] = (sorted(tuple(p.values) for p in dropped.partitions),
                              sorted(c.get_partition_names(db, "p", -1)))
            except (MetaException, NoSuchObjectException) as e:
                left[side] = type(e).__name__
            except TTransportException:
                left[side] = "failed"
        with connected(port) as c:
            c.drop_database(db, True, True)
    if left["reference"] == "failed":
        pytest.skip("the reference cannot evaluate it")
    assert left["ours"] == left["reference"], statement
