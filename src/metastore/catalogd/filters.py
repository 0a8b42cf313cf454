"""Hive's partition filter evaluated on cached partitions, with the metastore's semantics (the store's SQL
translation of the same core.filters AST): integer literals on integral keys compare as numbers (a value that is
no integer is unknown), all else as strings; NOT/AND/OR in SQL's three-valued logic (core.filters' and3/or3/not3);
LIKE as the metastore's LIKE means it (core.filters.like_matcher), never through re on the client's pattern."""

from __future__ import annotations

import re
from typing import Any

from ..core import filters as pf

INTEGRAL = {"tinyint", "smallint", "int", "integer", "bigint"}
_INT = re.compile(r"-?[0-9]{1,65}")


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
            return pf.COMPARISONS[op](int(v), lit)
        return pf.COMPARISONS[op](v, str(lit))

    def _eval(self, n: Any, values: list[str]) -> bool | None:
        if isinstance(n, pf.Compare):
            return self._cmp(values, n.key, n.op, n.value)
        if isinstance(n, pf.Like):
            return self.like[n.pattern](values[self.index[n.key.lower()]])
        if isinstance(n, pf.In):
            r = pf.or3([self._cmp(values, n.key, "=", v) for v in n.values])
            return pf.not3(r) if n.negated else r
        if isinstance(n, pf.Between):
            r = pf.and3([self._cmp(values, n.key, ">=", n.low), self._cmp(values, n.key, "<=", n.high)])
            return pf.not3(r) if n.negated else r
        if isinstance(n, pf.And):
            return pf.and3([self._eval(c, values) for c in n.operands])
        if isinstance(n, pf.Or):
            return pf.or3([self._eval(c, values) for c in n.operands])
        if isinstance(n, pf.Not):
            return pf.not3(self._eval(n.operand, values))
        raise TypeError(f"not a partition filter node: {n!r}")

    def matches(self, values: list[str]) -> bool:
        return self._eval(self.node, values) is True


def _like_patterns(n: Any) -> set[str]:
    if isinstance(n, pf.Like):
        return {n.pattern}
    if isinstance(n, (pf.And, pf.Or)):
        return set().union(*(_like_patterns(c) for c in n.operands))
    if isinstance(n, pf.Not):
        return _like_patterns(n.operand)
    return set()
