"""Answers whose wire shape changed between generations of Hive's clients, written so that every generation reads
them.

Most of Hive's structs only grew (an old reader skips the new field ids), but a few changed the type of a field
in place, and a reader skips a field whose type is not the one it expects. GetOpenTxnsResponse is the one that
matters: Hive 2.3 declares `2: required set<i64> open_txns`, Hive 3 made it `list<i64>` and added
`4: required binary abortedBits`. Given Hive 3's shape, a Hive 2.3 client (its CLI, HiveServer2) finds its
required set missing and fails every ACID statement; given 2.3's, Hive 3+ clients (Impala, Doris, Trino, Hive 3
and 4, PyPI's hive-metastore-client) fail or read no open transactions.

Nothing in the call tells the two apart: get_open_txns has no arguments, and a connection's history does not
either (Trino opens a connection per operation whose first call is get_open_txns; PyPI's Hive 3 client names
databases as Hive 2.3's does). So the answer carries both: field 2 once as a set and once as a list, then
min_open_txn and abortedBits. Every Thrift reader (Java's, Python's, thriftpy2's generated code) reads a field
whose type matches its declaration and skips one whose type does not, so each generation takes the encoding it
declares and skips the other; Hive 2.3 skips abortedBits as an unknown field.
"""

from __future__ import annotations

from typing import Any

from thriftpy2.thrift import TType


class _FieldId(int):
    """A field id that may appear twice in one spec: equal only to itself, so a dict holds both occurrences (the
    writer iterates the spec and writes the int value of each key)."""

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other


class OpenTxnsEveryShape:
    """GetOpenTxnsResponse in Hive 2.3's shape and Hive 3's at once (see the module's docstring). Only written,
    never read: the server's Thrift writer takes a struct's fields from its `thrift_spec`."""

    thrift_spec: dict[int, tuple[Any, ...]] = {
        _FieldId(1): (TType.I64, "txn_high_water_mark", False),
        _FieldId(2): (TType.SET, "open_txns_set", TType.I64, False),  # Hive 2.3
        _FieldId(2): (TType.LIST, "open_txns", TType.I64, False),  # Hive 3 and later
        _FieldId(3): (TType.I64, "min_open_txn", False),
        _FieldId(4): (TType.STRING, "abortedBits", True),  # binary; Hive 3 and later
    }
    default_spec = [(spec[1], None) for spec in thrift_spec.values()]

    def __init__(self, txn_high_water_mark: int, open_txns: list[int], min_open_txn: int | None,
                 abortedBits: bytes) -> None:  # noqa: N803  # Hive's field name
        self.txn_high_water_mark = txn_high_water_mark
        self.open_txns = list(open_txns)
        self.open_txns_set = set(open_txns)
        self.min_open_txn = min_open_txn
        self.abortedBits = abortedBits
