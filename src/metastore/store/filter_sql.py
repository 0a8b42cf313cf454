"""Hive partition filters (metastore.core.filters' AST) as SQLAlchemy Core conditions.

``to_sql`` turns a parsed filter into a boolean expression over the columns that hold the partition values,
in which every literal of the filter is a bound parameter (an IN list one expanding parameter), so a client's
text never becomes SQL. The catalog hands the store an AST; only the store builds SQL from it (Tx.partitions,
partition_names, count_partitions). Translation is bounded: more comparisons than the process's
``FilterLimits.max_terms`` raise ``FilterError`` before any SQL is built. A LIKE pattern has the meaning
``core.filters.like_pieces`` gives it, the one catalogd applies in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import reduce
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.sql.visitors import InternalTraversal

from ..core.filters import (
    ANY_MANY,
    ANY_ONE,
    COMPARISONS,
    And,
    Between,
    Compare,
    FilterError,
    FilterLimits,
    In,
    Like,
    LiteralValue,
    Node,
    Not,
    Or,
    Wildcard,
    current_limits,
    like_pieces,
)

__all__ = ["KeyColumn", "to_sql"]

@dataclass(frozen=True)
class KeyColumn:
    """How to reach one partition key in SQL.

    ``value`` holds the partition value as a string (PARTITION_KEY_VALS.PART_KEY_VAL);
    ``integral`` is true for tinyint/smallint/int/bigint keys.
    """

    value: ColumnElement[str]
    integral: bool = False


_SQL_OPS: dict[str, Callable[[Any, Any], ColumnElement[bool]]] = COMPARISONS

# Longest digit string that is cast; NUMERIC(65, 0) is the widest DECIMAL MariaDB has.
_MAX_DIGITS = 65


def _const(sql: str) -> ColumnElement[Any]:
    # Fixed SQL snippets written here (never user text), inlined for readable SQL.
    return sa.literal_column(sql)


def _as_integer(value: ColumnElement[str]) -> ColumnElement[Any]:
    """``value`` as an exact number, or NULL when it is not an integer.

    The guard keeps non-numeric partition values (``__HIVE_DEFAULT_PARTITION__``,
    empty, '12a') away from CAST, which fails on PostgreSQL. It is written with
    functions that exist and behave alike on SQLite, PostgreSQL and MariaDB:
    strip one leading '-', delete every digit with REPLACE and require nothing
    to be left. LENGTH (not ``= ''``) because MariaDB's PAD SPACE collations
    compare ' ' equal to ''.
    """
    body: ColumnElement[Any] = sa.case(
        (sa.func.substr(value, _const("1"), _const("1")) == _const("'-'"),
         sa.func.substr(value, _const("2"))),
        else_=value,
    )
    no_digits = reduce(
        lambda acc, digit: sa.func.replace(acc, _const(f"'{digit}'"), _const("''")),
        "0123456789",
        body,
    )
    is_integer = _IsInteger(value, sa.and_(
        sa.func.length(body) > _const("0"),
        sa.func.length(body) <= _const(str(_MAX_DIGITS)),
        sa.func.length(no_digits) == _const("0"),
    ))
    # NUMERIC, not BIGINT: exact on PostgreSQL/MariaDB for any value the guard
    # admits, so out-of-range values order correctly instead of overflowing.
    return sa.case((is_integer, sa.cast(value, sa.Numeric(_MAX_DIGITS, 0))), else_=sa.null())


class _IsInteger(ColumnElement[bool]):
    """Whether a value is an optional '-' and 1 to _MAX_DIGITS ASCII digits.

    The portable form (REPLACE of each digit) costs about ten times a pattern match, so each dialect that
    has a matcher with the same meaning uses it; the portable form is the fallback.
    """

    inherit_cache = True
    type = sa.Boolean()

    def __init__(self, value: ColumnElement[str], portable: ColumnElement[bool]) -> None:
        self.value = value
        self.portable = portable


@compiles(_IsInteger)
def _is_integer_default(element: _IsInteger, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.portable, **kw)


@compiles(_IsInteger, "sqlite")
def _is_integer_sqlite(element: _IsInteger, compiler: SQLCompiler, **kw: Any) -> str:
    v = compiler.process(element.value, **kw)
    return (f"(({v} GLOB '[0-9]*' OR {v} GLOB '-[0-9]*') AND substr({v}, 2) NOT GLOB '*[^0-9]*' "
            f"AND length({v}) <= {_MAX_DIGITS} + ({v} GLOB '-*'))")


@compiles(_IsInteger, "postgresql")
def _is_integer_postgresql(element: _IsInteger, compiler: SQLCompiler, **kw: Any) -> str:
    return f"({compiler.process(element.value, **kw)} ~ '^-?[0-9]{{1,{_MAX_DIGITS}}}$')"


@compiles(_IsInteger, "mysql")
@compiles(_IsInteger, "mariadb")
def _is_integer_mysql(element: _IsInteger, compiler: SQLCompiler, **kw: Any) -> str:
    return f"({compiler.process(element.value, **kw)} REGEXP '^-?[0-9]{{1,{_MAX_DIGITS}}}$')"


def _bind(value: LiteralValue, numeric: bool) -> ColumnElement[Any]:
    if numeric:
        return sa.literal(value, sa.BigInteger)
    return sa.literal(str(value), sa.String)


def _bind_list(values: list[LiteralValue], numeric: bool) -> Any:
    # One expanding parameter, not one per literal: SQLAlchemy compiles (and caches) it once and spreads the
    # values at execution, about 30 times faster for a long list, which is what makes a 10,000-value IN cheap.
    if numeric:
        return sa.bindparam(None, values, expanding=True, type_=sa.BigInteger)
    return sa.bindparam(None, [str(v) for v in values], expanding=True, type_=sa.String)


class _Group(ColumnElement[Any]):
    """Parentheses that SQLAlchemy keeps (it flattens nested AND/OR chains, and drops its own Grouping there)."""

    inherit_cache = True
    _traverse_internals = [("element", InternalTraversal.dp_clauseelement)]
    type = sa.types.NullType()  # not Boolean: SQLAlchemy would render a Boolean operand of AND/OR as "(...) = 1"

    def __init__(self, element: ColumnElement[bool]) -> None:
        self.element = element


@compiles(_Group)
def _compile_group(element: _Group, compiler: SQLCompiler, **kw: Any) -> str:
    return f"({compiler.process(element.element, **kw)})"


_CHAIN = 64  # operands of one AND/OR chain in the SQL; a longer one becomes nested chains of this many


def _chain(join: Callable[..., ColumnElement[bool]], items: list[ColumnElement[bool]]) -> ColumnElement[bool]:
    """`a OR b OR ...`, with a long chain nested in parenthesized chains of _CHAIN operands: the same meaning,
    but the depth SQLite's parser sees grows with the logarithm of the count (it refuses a depth of 1,000:
    about 300 comparisons in one flat chain)."""
    while len(items) > _CHAIN:
        items = [_Group(join(*items[i : i + _CHAIN])) for i in range(0, len(items), _CHAIN)]
    return join(*items)


class _Translator:
    def __init__(self, columns: Mapping[str, KeyColumn], max_terms: int) -> None:
        self._columns = {name.lower(): col for name, col in columns.items()}
        self._numeric: dict[str, ColumnElement[Any]] = {}
        self._terms_left = max_terms
        self._max_terms = max_terms

    def _term(self) -> None:
        self._terms_left -= 1
        if self._terms_left < 0:
            raise FilterError(f"Error parsing partition filter: more than {self._max_terms} comparisons "
                              "(an IN list, or equalities of one key joined by OR, count as one)")

    def _column(self, key: str) -> KeyColumn:
        try:
            return self._columns[key]
        except KeyError:
            raise FilterError(f"Invalid partition key name: {key}") from None

    def _side(self, key: str, value: LiteralValue) -> tuple[ColumnElement[Any], bool]:
        """The SQL expression to compare ``value`` with, and whether numerically.

        Integer literals on integral keys compare as numbers; everything else
        compares as strings (an integer literal on a string key as its decimal
        text), as Hive does.
        """
        col = self._column(key)
        if col.integral and isinstance(value, int):
            if key not in self._numeric:
                self._numeric[key] = _as_integer(col.value)
            return self._numeric[key], True
        return col.value, False

    def _compare(self, key: str, op: str, value: LiteralValue) -> ColumnElement[bool]:
        self._term()
        lhs, numeric = self._side(key, value)
        return _SQL_OPS[op](lhs, _bind(value, numeric))

    def _in_lists(self, pairs: list[tuple[str, LiteralValue]]) -> list[ColumnElement[bool]]:
        """`key IN (...)` for (key, literal) pairs, one per key and way of comparing; a single pair as `=`."""
        groups: dict[tuple[str, bool], tuple[ColumnElement[Any], list[LiteralValue]]] = {}
        for key, value in pairs:
            lhs, numeric = self._side(key, value)
            groups.setdefault((key, numeric), (lhs, []))[1].append(value)
        for _ in groups:
            self._term()
        return [lhs == _bind(values[0], numeric) if len(values) == 1 else lhs.in_(_bind_list(values, numeric))
                for (_, numeric), (lhs, values) in groups.items()]

    def translate(self, node: Node) -> ColumnElement[bool]:
        if isinstance(node, Compare):
            return self._compare(node.key, node.op, node.value)
        if isinstance(node, Like):
            self._term()
            return _like(self._column(node.key).value, node.pattern)
        if isinstance(node, In):
            expr = _chain(sa.or_, self._in_lists([(node.key, v) for v in node.values]))
            return sa.not_(expr) if node.negated else expr
        if isinstance(node, Between):
            lo_side, lo_num = self._side(node.key, node.low)
            _, hi_num = self._side(node.key, node.high)
            if lo_num == hi_num:
                self._term()
                expr = lo_side.between(_bind(node.low, lo_num), _bind(node.high, hi_num))
            else:
                expr = sa.and_(
                    self._compare(node.key, ">=", node.low),
                    self._compare(node.key, "<=", node.high),
                )
            return sa.not_(expr) if node.negated else expr
        if isinstance(node, And):
            return _chain(sa.and_, [self.translate(child) for child in node.operands])
        if isinstance(node, Or):
            # `k = 1 OR k = 2 OR ...` (how Spark sends an IN list) as one IN per key: the same meaning, a
            # fraction of the SQL; the other operands as they are
            equal = [(c.key, c.value) for c in node.operands if isinstance(c, Compare) and c.op == "="]
            if len(equal) < 2:
                return _chain(sa.or_, [self.translate(child) for child in node.operands])
            rest = [self.translate(c) for c in node.operands if not (isinstance(c, Compare) and c.op == "=")]
            return _chain(sa.or_, self._in_lists(equal) + rest)
        if isinstance(node, Not):
            return sa.not_(self.translate(node.operand))
        raise TypeError(f"not a partition filter node: {node!r}")


def to_sql(node: Node, columns: Mapping[str, KeyColumn], limits: FilterLimits | None = None) -> ColumnElement[bool]:
    """Translate a parsed filter into a SQLAlchemy boolean expression.

    ``columns`` maps each partition key name (any case) to its ``KeyColumn``; a
    key missing from it raises ``FilterError("Invalid partition key name: k")``.

    Semantics, following Hive 2.3's direct-SQL path:

    * String keys, and string literals on any key: string comparison, so the
      database collation decides ordering (use a binary / "C" collation for
      Hive's Java ordering).
    * Integer literal on an integral key: numeric comparison. Partition values
      that are not integers -- anything but an optional '-' and 1 to 65 ASCII
      digits, e.g. ``__HIVE_DEFAULT_PARTITION__``, '', '+1', ' 1' -- give NULL,
      so they match neither ``k = 1`` nor ``NOT k = 1``, like Hive, which maps
      the default partition to NULL before comparing. The comparison is exact
      on PostgreSQL and MariaDB; SQLite holds values outside the 64-bit range
      as REAL, which is approximate only for values just below -2**63.
    * ``NOT``/``AND``/``OR`` use SQL's three-valued logic; ``BETWEEN`` is
      inclusive; ``IN`` is an OR of equalities.
    * ``LIKE``: in Hive 2.3 the pattern is a Java regular expression that must
      match the whole value; the supported subset (``core.filters.like_pieces``)
      is translated to SQL LIKE (GLOB on SQLite); other regex syntax raises
      ``FilterError``. Matching is case-sensitive on SQLite and PostgreSQL; on
      MariaDB it follows the column collation.

    Every literal of the filter becomes a bound parameter (an IN list one
    expanding parameter). More comparisons than ``limits.max_terms`` (default:
    this process's limits) raise ``FilterError`` before any SQL is built.
    """
    return _Translator(columns, (limits or current_limits()).max_terms).translate(node)


# ------------------------------------------------------------------------ LIKE

_LIKE_ESCAPE = "!"


def _pattern(pieces: list[str | Wildcard], one: str, many: str, quote: Callable[[str], str]) -> str:
    """The pattern of a dialect: its two wildcards for ANY_ONE and ANY_MANY, every literal piece through quote."""
    out = []
    for p in pieces:
        if p is ANY_ONE:
            out.append(one)
        elif p is ANY_MANY:
            out.append(many)
        else:
            assert isinstance(p, str)
            out.append(quote(p))
    return "".join(out)


def _like_pattern(pieces: list[str | Wildcard]) -> str:
    return _pattern(pieces, "_", "%", lambda p: _LIKE_ESCAPE + p if p in ("%", "_", _LIKE_ESCAPE) else p)


def _glob_pattern(pieces: list[str | Wildcard]) -> str:
    return _pattern(pieces, "?", "*", lambda p: f"[{p}]" if p in ("*", "?", "[") else p)


class _PatternMatch(FunctionElement[bool]):
    """``value LIKE pattern ESCAPE '!'``, or ``value GLOB pattern`` on SQLite.

    SQLite's LIKE ignores ASCII case, unlike the Java regex Hive uses, while
    its GLOB is case-sensitive; the construct carries both patterns as bound
    parameters and each dialect renders the one it needs.
    """

    name = "pattern_match"
    type = sa.Boolean()
    inherit_cache = True


@compiles(_PatternMatch)
def _compile_like(element: _PatternMatch, compiler: SQLCompiler, **kw: Any) -> str:
    value, like, _glob = element.clauses.clauses
    value_sql = compiler.process(value.self_group(), **kw)
    return f"({value_sql} LIKE {compiler.process(like, **kw)} ESCAPE '{_LIKE_ESCAPE}')"


@compiles(_PatternMatch, "sqlite")
def _compile_glob(element: _PatternMatch, compiler: SQLCompiler, **kw: Any) -> str:
    value, _like, glob = element.clauses.clauses
    value_sql = compiler.process(value.self_group(), **kw)
    return f"({value_sql} GLOB {compiler.process(glob, **kw)})"


def _like(value: ColumnElement[str], pattern: str) -> ColumnElement[bool]:
    pieces = like_pieces(pattern)
    return _PatternMatch(
        value,
        sa.literal(_like_pattern(pieces), sa.String),
        sa.literal(_glob_pattern(pieces), sa.String),
    )
