"""Hive's partition filter evaluated on cached partitions, with the metastore's semantics (partition_filter.py's
to_sql): integer literals on integral keys compare as numbers (a value that is no integer is unknown), all
else as strings; NOT/AND/OR in three-valued logic; LIKE is a Java regex matching the whole value."""

from __future__ import annotations

import operator
import re
from typing import Any

from ..core import filters as pf

INTEGRAL = {"tinyint", "smallint", "int", "integer", "bigint"}
_INT = re.compile(r"-?[0-9]{1,65}")
_OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
        ">=": operator.ge}


class FilterEval:
    def __init__(self, text: str, keys: list[tuple[str, str]]) -> None:
        self.node = pf.parse(text)
        # LIKE as the metastore's SQL means it, never through re (a client's '(a|a)*b' backtracks for seconds
        # per value); a pattern the metastore refuses raises here, so the call goes on to the metastore
        self.like = {p: pf.like_matcher(p) for p in _like_patterns(self.node)}
        self.index = {k.lower(): i for i, (k, _) in enumerate(keys)}
        self.integral = {k.lower() for k, t in keys if t.lower().split("(")[0] in INTEGRAL}
        for k in pf.keys_of(self.node):
            if k.lower() not in self.index:
                raise pf.FilterError(f"Invalid partition key name: {k}")

    def _cmp(self, values: list[str], key: str, op: str, lit: Any) -> bool | None:
        v = values[self.index[key.lower()]]
        if isinstance(lit, int) and key.lower() in self.integral:
            if not _INT.fullmatch(v):
                return None
            return _OPS[op](int(v), lit)
        return _OPS[op](v, str(lit))

    def _eval(self, n: Any, values: list[str]) -> bool | None:
        if isinstance(n, pf.Compare):
            return self._cmp(values, n.key, n.op, n.value)
        if isinstance(n, pf.Like):
            return self.like[n.pattern](values[self.index[n.key.lower()]])
        if isinstance(n, pf.In):
            r = _or([self._cmp(values, n.key, "=", v) for v in n.values])
            return _not(r) if n.negated else r
        if isinstance(n, pf.Between):
            r = _and([self._cmp(values, n.key, ">=", n.low), self._cmp(values, n.key, "<=", n.high)])
            return _not(r) if n.negated else r
        if isinstance(n, pf.And):
            return _and([self._eval(c, values) for c in n.operands])
        if isinstance(n, pf.Or):
            return _or([self._eval(c, values) for c in n.operands])
        if isinstance(n, pf.Not):
            return _not(self._eval(n.operand, values))
        raise TypeError(f"not a partition filter node: {n!r}")

    def matches(self, values: list[str]) -> bool:
        return self._eval(self.node, values) is True


def _not(v: bool | None) -> bool | None:
    return None if v is None else not v


def _and(vs: list[bool | None]) -> bool | None:
    if any(v is False for v in vs):
        return False
    return None if any(v is None for v in vs) else True


def _or(vs: list[bool | None]) -> bool | None:
    if any(v is True for v in vs):
        return True
    return None if any(v is None for v in vs) else False


def _like_patterns(n: Any) -> set[str]:
    if isinstance(n, pf.Like):
        return {n.pattern}
    if isinstance(n, (pf.And, pf.Or)):
        return set().union(*(_like_patterns(c) for c in n.operands))
    if isinstance(n, pf.Not):
        return _like_patterns(n.operand)
    return set()
