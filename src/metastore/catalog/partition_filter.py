"""Hive partition filter language: parser and SQL translation.

This is the ``filter`` string of the Thrift calls ``get_partitions_by_filter``
and ``get_num_partitions_by_filter``, e.g.::

    ds >= '2024-01-01' AND (hr = 3 OR hr BETWEEN 20 AND 23) AND NOT region LIKE 'eu.*'

Grammar (keywords are case-insensitive; precedence NOT > AND > OR)::

    filter     := or_expr EOF
    or_expr    := and_expr ("OR" and_expr)*
    and_expr   := not_expr ("AND" not_expr)*
    not_expr   := "NOT" not_expr | "(" or_expr ")" | predicate
    predicate  := key cmp_op literal
                | literal cmp_op key                    -- operator is flipped
                | key "LIKE" string
                | key ["NOT"] "BETWEEN" literal "AND" literal
                | key ["NOT"] "IN" "(" literal ("," literal)* ")"
    cmp_op     := "=" | "!=" | "<>" | "<" | "<=" | ">" | ">="
    key        := identifier | "`" any text, "``" for a backquote "`"
                | "(" key ")"           -- Hive's own IN form, "(ds) IN (...)", as Spark sends it
    literal    := string | integer
    identifier := [A-Za-z_][A-Za-z0-9_]*   (not a keyword; key names are lower-cased)
    string     := '...' | "..."            (\\\\, \\' and \\" are unescaped, any other
                                             backslash sequence is kept as written)
    integer    := -?[0-9]+                 (must fit in a signed 64-bit integer)

``parse`` builds an AST of frozen dataclasses, ``to_sql`` turns it into a
SQLAlchemy Core boolean expression in which every literal of the filter is a
bound parameter. Errors are raised as ``FilterError`` (a ``ValueError``) whose
message gives the 0-based character position; the Thrift layer maps them to
Hive's ``MetaException``. A filter is bounded before its cost grows (see
``FilterLimits``): tokens are read as the parser needs them and never past the
length limit, the literals of one IN list and the nesting depth are counted
as they are parsed, and the comparisons of the SQL as it is built. An empty or blank filter is an error here: Hive reads
it as "all partitions", so callers check for it before parsing.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import reduce
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.sql.visitors import InternalTraversal

__all__ = [
    "And",
    "Between",
    "Compare",
    "FilterError",
    "In",
    "KeyColumn",
    "Like",
    "LiteralValue",
    "Node",
    "Not",
    "Or",
    "FilterLimits",
    "keys_of",
    "like_matcher",
    "parse",
    "set_limits",
    "to_sql",
]


class FilterError(ValueError):
    """A partition filter that cannot be parsed or translated.

    ``position`` is the 0-based character offset in the filter text, when known.
    """

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


# --------------------------------------------------------------------------- AST

LiteralValue = str | int


@dataclass(frozen=True)
class Compare:
    """``key op value``; op is one of = != < <= > >= (``<>`` is stored as ``!=``)."""

    key: str
    op: str
    value: LiteralValue


@dataclass(frozen=True)
class Like:
    """``key LIKE pattern``; pattern is a (restricted) Java regex, see ``to_sql``."""

    key: str
    pattern: str


@dataclass(frozen=True)
class In:
    key: str
    values: tuple[LiteralValue, ...]
    negated: bool = False


@dataclass(frozen=True)
class Between:
    key: str
    low: LiteralValue
    high: LiteralValue
    negated: bool = False


@dataclass(frozen=True)
class And:
    operands: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    operands: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    operand: Node


Node = Compare | Like | In | Between | And | Or | Not

# ---------------------------------------------------------------------- tokenizer

_KEYWORDS = frozenset({"AND", "OR", "NOT", "LIKE", "BETWEEN", "IN"})
_COMPARE_OPS = frozenset({"=", "!=", "<>", "<", "<=", ">", ">="})
# Used for "literal OP key": the comparison is mirrored so the key is on the left.
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# Nesting limit, so a hostile filter cannot exhaust Python's recursion limit.
MAX_DEPTH = 100


@dataclass(frozen=True)
class FilterLimits:
    """How much one filter may make the server do. The length cap bounds the tokenizer and the parser (both
    linear); the IN-list cap keeps a list's parameters well below what one statement may carry (SQLite: 32,766);
    the depth cap keeps recursion far from Python's limit; the term cap bounds the SQL, whose cost is per
    comparison and partition. Refusals are FilterErrors, which the service answers as MetaException.
    """

    max_length: int = 100_000  # characters (settings.filter_max_length)
    max_in_list: int = 10_000  # literals of one IN list (settings.filter_max_in_list)
    max_depth: int = MAX_DEPTH  # nested parentheses and NOTs
    # Comparisons in the SQL (an IN list, or equalities of one key joined by OR, count once): each costs about
    # a millisecond per call per 1,000 partitions.
    max_terms: int = 500


# The process's limits, from the server's settings (set_limits); parse() applies them unless given others.
_limits = FilterLimits()


def set_limits(max_length: int | None = None, max_in_list: int | None = None) -> FilterLimits:
    """Set this process's filter limits (None keeps the current one); the limits now in force."""
    global _limits
    cur = _limits
    _limits = FilterLimits(cur.max_length if max_length is None else max(1, int(max_length)),
                           cur.max_in_list if max_in_list is None else max(1, int(max_in_list)), cur.max_depth,
                           cur.max_terms)
    return _limits


@dataclass(frozen=True)
class _Token:
    kind: str  # IDENT, KEYWORD, STRING, INT, OP, LPAREN, RPAREN, COMMA, EOF
    value: Any  # key name, upper-cased keyword, unescaped string, int, operator
    pos: int
    text: str  # the source text, for error messages


def _is_ident_start(c: str) -> bool:
    return c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z")


def _is_ident_char(c: str) -> bool:
    return _is_ident_start(c) or ("0" <= c <= "9")


def _parse_error(what: str, pos: int) -> FilterError:
    return FilterError(f"Error parsing partition filter: {what} at position {pos}", pos)


def _tokenize(text: str) -> Iterator[_Token]:
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        start = i
        if c in " \t\r\n":
            i += 1
        elif c == "(":
            i += 1
            yield _Token("LPAREN", c, start, c)
        elif c == ")":
            i += 1
            yield _Token("RPAREN", c, start, c)
        elif c == ",":
            i += 1
            yield _Token("COMMA", c, start, c)
        elif c in "=<>!":
            two = text[i : i + 2]
            if two in ("<=", ">=", "<>", "!="):
                i += 2
                yield _Token("OP", two, start, two)
            elif c == "!":
                raise _parse_error("unexpected character '!'", start)
            else:
                i += 1
                yield _Token("OP", c, start, c)
        elif c in "'\"":
            i += 1
            chars: list[str] = []
            while True:
                if i >= n:
                    raise _parse_error("unterminated string literal", start)
                ch = text[i]
                if ch == c:
                    i += 1
                    break
                if ch == "\\":
                    if i + 1 >= n:
                        raise _parse_error("unterminated string literal", start)
                    nxt = text[i + 1]
                    # Only quotes and backslash are unescaped; other sequences are
                    # kept so that regex escapes such as \. reach LIKE unchanged.
                    chars.append(nxt if nxt in "\\'\"" else ch + nxt)
                    i += 2
                else:
                    chars.append(ch)
                    i += 1
            yield _Token("STRING", "".join(chars), start, text[start:i])
        elif ("0" <= c <= "9") or (c == "-" and i + 1 < n and "0" <= text[i + 1] <= "9"):
            i += 1
            while i < n and "0" <= text[i] <= "9":
                i += 1
            if i < n and _is_ident_char(text[i]):
                raise _parse_error(f"invalid number '{text[start : i + 1]}'", start)
            number = int(text[start:i])
            if not _INT64_MIN <= number <= _INT64_MAX:
                raise _parse_error(f"integer literal {text[start:i]} out of range", start)
            yield _Token("INT", number, start, text[start:i])
        elif _is_ident_start(c):
            while i < n and _is_ident_char(text[i]):
                i += 1
            word = text[start:i]
            if word.upper() in _KEYWORDS:
                yield _Token("KEYWORD", word.upper(), start, word)
            else:
                yield _Token("IDENT", word.lower(), start, word)
        elif c == "`":
            i += 1
            chars = []
            while True:
                if i >= n:
                    raise _parse_error("unterminated quoted identifier", start)
                if text[i] == "`":
                    if text[i + 1 : i + 2] == "`":  # `` is an escaped backquote
                        chars.append("`")
                        i += 2
                        continue
                    i += 1
                    break
                chars.append(text[i])
                i += 1
            if not chars:
                raise _parse_error("empty quoted identifier", start)
            yield _Token("IDENT", "".join(chars).lower(), start, text[start:i])
        else:
            raise _parse_error(f"unexpected character {c!r}", start)
    yield _Token("EOF", None, n, "")


# ------------------------------------------------------------------------ parser


def _bounded_tokens(text: str, max_length: int) -> Iterator[_Token]:
    """The tokens of a text longer than `max_length`, never reading past that many characters: it is refused
    when the parser gets there (the work is bounded whatever the length, and an earlier error still shows)."""
    try:
        for tok in _tokenize(text[:max_length]):
            if tok.kind == "EOF":
                break
            yield tok
    except FilterError:  # a token cut at the limit; or an error before it, in a filter refused anyway
        pass
    raise FilterError(f"Error parsing partition filter: the filter has {len(text)} characters, more than "
                      f"{max_length} (the filter_max_length setting)", max_length)


class _Parser:
    def __init__(self, text: str, limits: FilterLimits) -> None:
        self._limits = limits
        # A filter within the length limit is tokenized at once (the common case, and the fastest); a longer
        # one as the parser needs tokens, so an earlier error (depth, IN list) stops the work where it is.
        short = len(text) <= limits.max_length
        self._tokens: list[_Token] = list(_tokenize(text)) if short else []
        self._source = iter(()) if short else _bounded_tokens(text, limits.max_length)
        self._i = 0
        self._depth = 0

    def _ahead(self, k: int) -> list[_Token]:
        """The next k tokens (fewer at the end)."""
        while len(self._tokens) < self._i + k and (not self._tokens or self._tokens[-1].kind != "EOF"):
            self._tokens.append(next(self._source))
        return self._tokens[self._i : self._i + k]

    def _peek(self) -> _Token:
        if self._i < len(self._tokens):
            return self._tokens[self._i]
        return self._ahead(1)[0]

    def _next(self) -> _Token:
        tok = self._peek()
        if tok.kind != "EOF":
            self._i += 1
        return tok

    def _is_keyword(self, word: str) -> bool:
        tok = self._peek()
        return tok.kind == "KEYWORD" and tok.value == word

    def _unexpected(self, tok: _Token, expected: str) -> FilterError:
        if tok.kind == "EOF":
            return _parse_error(f"unexpected end of filter (expected {expected})", tok.pos)
        return _parse_error(f"unexpected token '{tok.text}' (expected {expected})", tok.pos)

    def _expect(self, kind: str, expected: str, value: str | None = None) -> _Token:
        tok = self._next()
        if tok.kind != kind or (value is not None and tok.value != value):
            raise self._unexpected(tok, expected)
        return tok

    def parse(self) -> Node:
        if self._peek().kind == "EOF":
            # Hive treats an empty filter as "all partitions"; callers must
            # short-circuit that case, there is no AST for it.
            raise _parse_error("empty filter", 0)
        node = self._or()
        tok = self._peek()
        if tok.kind != "EOF":
            raise self._unexpected(tok, "AND, OR or end of filter")
        return node

    def _or(self) -> Node:
        operands = [self._and()]
        while self._is_keyword("OR"):
            self._next()
            operands.append(self._and())
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def _and(self) -> Node:
        operands = [self._not()]
        while self._is_keyword("AND"):
            self._next()
            operands.append(self._not())
        return operands[0] if len(operands) == 1 else And(tuple(operands))

    def _parenthesized_key(self) -> bool:
        """At '(' key ')': Hive's IN form, `(key) IN (...)`, which Spark sends; the key is no group."""
        toks = self._ahead(3)
        return len(toks) == 3 and [t.kind for t in toks] == ["LPAREN", "IDENT", "RPAREN"]

    def _not(self) -> Node:
        tok = self._peek()
        if tok.kind == "LPAREN" and self._parenthesized_key():
            return self._predicate()
        if (tok.kind == "KEYWORD" and tok.value == "NOT") or tok.kind == "LPAREN":
            self._depth += 1
            if self._depth > self._limits.max_depth:
                raise _parse_error(f"filter nested deeper than {self._limits.max_depth} levels", tok.pos)
            self._next()
            if tok.kind == "LPAREN":
                node: Node = self._or()
                self._expect("RPAREN", "')'")
            else:
                node = Not(self._not())
            self._depth -= 1
            return node
        return self._predicate()

    def _literal(self) -> LiteralValue:
        tok = self._next()
        if tok.kind not in ("STRING", "INT"):
            raise self._unexpected(tok, "a string or integer literal")
        value: LiteralValue = tok.value
        return value

    def _predicate(self) -> Node:
        if self._parenthesized_key():
            self._next()
            tok = self._next()
            self._next()
        else:
            tok = self._next()
        if tok.kind in ("STRING", "INT"):
            # Reversed form: literal OP key.
            op_tok = self._next()
            if op_tok.kind != "OP":
                raise self._unexpected(op_tok, "a comparison operator")
            key_tok = self._next()
            if key_tok.kind != "IDENT":
                raise self._unexpected(key_tok, "a partition key name")
            op = "!=" if op_tok.value == "<>" else op_tok.value
            return Compare(key_tok.value, _FLIPPED[op], tok.value)
        if tok.kind != "IDENT":
            raise self._unexpected(tok, "a partition key name, literal, NOT or '('")
        key: str = tok.value

        tok = self._next()
        if tok.kind == "OP":
            op = "!=" if tok.value == "<>" else tok.value
            return Compare(key, op, self._literal())
        negated = False
        if tok.kind == "KEYWORD" and tok.value == "NOT":
            negated = True
            tok = self._next()
            if not (tok.kind == "KEYWORD" and tok.value in ("BETWEEN", "IN")):
                raise self._unexpected(tok, "BETWEEN or IN")
        if tok.kind == "KEYWORD" and tok.value == "LIKE":
            pattern = self._next()
            if pattern.kind != "STRING":
                raise self._unexpected(pattern, "a string pattern after LIKE")
            return Like(key, pattern.value)
        if tok.kind == "KEYWORD" and tok.value == "BETWEEN":
            low = self._literal()
            self._expect("KEYWORD", "AND", "AND")
            high = self._literal()
            return Between(key, low, high, negated)
        if tok.kind == "KEYWORD" and tok.value == "IN":
            self._expect("LPAREN", "'('")
            values = [self._literal()]
            cap = self._limits.max_in_list
            while self._peek().kind == "COMMA":
                comma = self._next()
                if len(values) >= cap:
                    raise _parse_error(f"IN list of more than {cap} values (the filter_max_in_list setting)",
                                       comma.pos)
                values.append(self._literal())
            self._expect("RPAREN", "',' or ')'")
            return In(key, tuple(values), negated)
        raise self._unexpected(tok, "a comparison operator, LIKE, BETWEEN, IN or NOT")


def parse(text: str, limits: FilterLimits | None = None) -> Node:
    """Parse a Hive partition filter into an AST; raises ``FilterError``, also for a filter beyond ``limits``
    (default: this process's, see ``set_limits``)."""
    return _Parser(text, limits or _limits).parse()


def keys_of(node: Node) -> set[str]:
    """The (lower-case) partition key names referenced by ``node``."""
    if isinstance(node, (And, Or)):
        return set().union(*(keys_of(child) for child in node.operands))
    if isinstance(node, Not):
        return keys_of(node.operand)
    return {node.key}


# ------------------------------------------------------------------ SQL output


@dataclass(frozen=True)
class KeyColumn:
    """How to reach one partition key in SQL.

    ``value`` holds the partition value as a string (PARTITION_KEY_VALS.PART_KEY_VAL);
    ``integral`` is true for tinyint/smallint/int/bigint keys.
    """

    value: ColumnElement[str]
    integral: bool = False


_SQL_OPS: dict[str, Callable[[Any, Any], ColumnElement[bool]]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

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
def _is_integer_default(element: _IsInteger, compiler: Any, **kw: Any) -> str:
    return compiler.process(element.portable, **kw)


@compiles(_IsInteger, "sqlite")
def _is_integer_sqlite(element: _IsInteger, compiler: Any, **kw: Any) -> str:
    v = compiler.process(element.value, **kw)
    return (f"(({v} GLOB '[0-9]*' OR {v} GLOB '-[0-9]*') AND substr({v}, 2) NOT GLOB '*[^0-9]*' "
            f"AND length({v}) <= {_MAX_DIGITS} + ({v} GLOB '-*'))")


@compiles(_IsInteger, "postgresql")
def _is_integer_postgresql(element: _IsInteger, compiler: Any, **kw: Any) -> str:
    return f"({compiler.process(element.value, **kw)} ~ '^-?[0-9]{{1,{_MAX_DIGITS}}}$')"


@compiles(_IsInteger, "mysql")
@compiles(_IsInteger, "mariadb")
def _is_integer_mysql(element: _IsInteger, compiler: Any, **kw: Any) -> str:
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
def _compile_group(element: _Group, compiler: Any, **kw: Any) -> str:
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
      match the whole value. Only the commonly used subset is supported and is
      translated to SQL LIKE: ``.*`` (any sequence), ``.+`` (one or more),
      ``.`` (any one character), a backslash before a non-alphanumeric ASCII
      character (that character literally), ``^`` at the start and ``$`` at the
      end (no-ops, the match is anchored anyway), any other character
      literally. Other regex syntax (``* + ? | ( ) [ { \\d`` ...) raises
      ``FilterError``. Unlike Java, ``.`` also matches line terminators.
      Matching is case-sensitive on SQLite and PostgreSQL; on MariaDB it
      follows the column collation.

    Every literal of the filter becomes a bound parameter (an IN list one
    expanding parameter). More comparisons than ``limits.max_terms`` (default:
    this process's limits) raise ``FilterError`` before any SQL is built.
    """
    return _Translator(columns, (limits or _limits).max_terms).translate(node)


# ------------------------------------------------------------------------ LIKE

_LIKE_ESCAPE = "!"
_REGEX_META = frozenset("\\^$|?*+()[{.")

# Pattern pieces: a literal character, or one of these two wildcards.
_ANY_ONE = object()
_ANY_MANY = object()


def _regex_pieces(pattern: str) -> list[object]:
    def unsupported(i: int, what: str) -> FilterError:
        return FilterError(
            f"Unsupported LIKE pattern {pattern!r}: {what} at position {i} of the pattern"
            " (only '.', '.*', '.+' and backslash-escaped characters are supported)"
        )

    pieces: list[object] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                raise unsupported(i, "trailing backslash")
            nxt = pattern[i + 1]
            if not nxt.isascii() or nxt.isalnum():
                raise unsupported(i, f"escape sequence '\\{nxt}'")
            pieces.append(nxt)
            i += 2
        elif c == ".":
            following = pattern[i + 1 : i + 2]
            if following == "*":
                pieces.append(_ANY_MANY)
                i += 2
            elif following == "+":
                pieces.extend((_ANY_ONE, _ANY_MANY))
                i += 2
            else:
                pieces.append(_ANY_ONE)
                i += 1
        elif (c == "^" and i == 0) or (c == "$" and i == n - 1):
            i += 1  # the match is anchored at both ends anyway
        elif c in _REGEX_META:
            raise unsupported(i, f"regex operator '{c}'")
        else:
            pieces.append(c)
            i += 1
    return pieces


def _like_pattern(pieces: list[object]) -> str:
    out = []
    for p in pieces:
        if p is _ANY_ONE:
            out.append("_")
        elif p is _ANY_MANY:
            out.append("%")
        else:
            assert isinstance(p, str)
            out.append(_LIKE_ESCAPE + p if p in ("%", "_", _LIKE_ESCAPE) else p)
    return "".join(out)


def _glob_pattern(pieces: list[object]) -> str:
    out = []
    for p in pieces:
        if p is _ANY_ONE:
            out.append("?")
        elif p is _ANY_MANY:
            out.append("*")
        else:
            assert isinstance(p, str)
            out.append(f"[{p}]" if p in ("*", "?", "[") else p)
    return "".join(out)


def like_matcher(pattern: str) -> Callable[[str], bool]:
    """The LIKE pattern with the meaning ``to_sql`` gives it, as a test of a value in Python (for filters
    evaluated on cached partitions). No regex engine: a client's pattern such as ``(a|a)*b`` would backtrack
    for ever there; this one is a wildcard match, at most (pattern x value) steps. Unsupported regex syntax
    raises ``FilterError``, as in ``to_sql``."""
    pieces = _regex_pieces(pattern)
    n = len(pieces)

    def match(value: str) -> bool:
        p = v = 0
        star, resume = -1, 0  # the last '.*' seen, and where in the value its match ends so far
        while v < len(value):
            if p < n and pieces[p] is _ANY_MANY:
                star, resume, p = p, v, p + 1
            elif p < n and (pieces[p] is _ANY_ONE or pieces[p] == value[v]):
                p, v = p + 1, v + 1
            elif star >= 0:  # let the last '.*' take one more character
                resume += 1
                p, v = star + 1, resume
            else:
                return False
        while p < n and pieces[p] is _ANY_MANY:
            p += 1
        return p == n

    return match


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
    pieces = _regex_pieces(pattern)
    return _PatternMatch(
        value,
        sa.literal(_like_pattern(pieces), sa.String),
        sa.literal(_glob_pattern(pieces), sa.String),
    )
