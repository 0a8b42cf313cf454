"""Hive's partition filter language: the parser, its AST and its limits (shared vocabulary).

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

``parse`` builds an AST of frozen dataclasses. The store translates it to SQL
(metastore.store.filter_sql: every literal a bound parameter), catalogd
evaluates it on cached partitions; both give a pattern of ``Like`` the meaning
``like_pieces`` gives it. Errors are raised as ``FilterError`` (a
``ValueError``) whose message gives the 0-based character position; the
catalog maps them to Hive's ``MetaException``. A filter is bounded before its
cost grows (see ``FilterLimits``): tokens are read as the parser needs them and
never past the length limit, the literals of one IN list and the nesting depth
are counted as they are parsed, and the comparisons of the SQL as it is built
(``max_terms``, applied by the translation). An empty or blank filter is an
error here: Hive reads it as "all partitions", so callers check for it before
parsing. Nothing here imports a database library.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANY_MANY",
    "ANY_ONE",
    "COMPARISONS",
    "And",
    "Between",
    "Compare",
    "FilterError",
    "FilterLimits",
    "In",
    "Like",
    "LiteralValue",
    "MAX_DEPTH",
    "Node",
    "Not",
    "Or",
    "Wildcard",
    "and3",
    "current_limits",
    "keys_of",
    "like_matcher",
    "like_pieces",
    "not3",
    "or3",
    "parse",
    "set_limits",
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
    """``key LIKE pattern``; pattern is a (restricted) Java regex, see ``like_pieces``."""

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

# ---------------------------------------------------------------------- meaning

# The comparison of each operator of a Compare: the same functions compare Python values (catalogd's evaluation)
# and build SQL expressions (the store's translation: SQLAlchemy columns overload the operators).
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


# SQL's three-valued logic, None standing for NULL (unknown): what an evaluation outside the database follows so
# that it selects what the SQL would.
def and3(values: list[bool | None]) -> bool | None:
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def or3(values: list[bool | None]) -> bool | None:
    if any(v is True for v in values):
        return True
    return None if any(v is None for v in values) else False


def not3(value: bool | None) -> bool | None:
    return None if value is None else not value


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


def current_limits() -> FilterLimits:
    """The limits in force in this process (see ``set_limits``)."""
    return _limits


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
        return self._joined("OR", self._and, Or)

    def _and(self) -> Node:
        return self._joined("AND", self._not, And)

    def _joined(self, keyword: str, operand: Callable[[], Node], node: type[And] | type[Or]) -> Node:
        """Operands joined by `keyword`, flat (a OR b OR c is one Or); a single one is itself."""
        operands = [operand()]
        while self._is_keyword(keyword):
            self._next()
            operands.append(operand())
        return operands[0] if len(operands) == 1 else node(tuple(operands))

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


# ------------------------------------------------------------------------ LIKE

_REGEX_META = frozenset("\\^$|?*+()[{.")


class Wildcard:
    """A wildcard piece of a LIKE pattern (ANY_ONE or ANY_MANY; compare with `is`)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


# Pattern pieces: a literal character, or one of these two wildcards.
ANY_ONE = Wildcard("ANY_ONE")  # `.`: any one character
ANY_MANY = Wildcard("ANY_MANY")  # `.*`: any sequence, empty too


def like_pieces(pattern: str) -> list[str | Wildcard]:
    """The pieces of a ``Like`` pattern: characters to match literally, ANY_ONE and ANY_MANY.

    In Hive 2.3 the pattern is a Java regular expression that must match the
    whole value. Only the commonly used subset is supported: ``.*`` (any
    sequence), ``.+`` (one or more), ``.`` (any one character), a backslash
    before a non-alphanumeric ASCII character (that character literally), ``^``
    at the start and ``$`` at the end (no-ops, the match is anchored anyway),
    any other character literally. Other regex syntax (``* + ? | ( ) [ { \\d``
    ...) raises ``FilterError``. Unlike Java, ``.`` also matches line
    terminators.
    """
    def unsupported(i: int, what: str) -> FilterError:
        return FilterError(
            f"Unsupported LIKE pattern {pattern!r}: {what} at position {i} of the pattern"
            " (only '.', '.*', '.+' and backslash-escaped characters are supported)"
        )

    pieces: list[str | Wildcard] = []
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
                pieces.append(ANY_MANY)
                i += 2
            elif following == "+":
                pieces.extend((ANY_ONE, ANY_MANY))
                i += 2
            else:
                pieces.append(ANY_ONE)
                i += 1
        elif (c == "^" and i == 0) or (c == "$" and i == n - 1):
            i += 1  # the match is anchored at both ends anyway
        elif c in _REGEX_META:
            raise unsupported(i, f"regex operator '{c}'")
        else:
            pieces.append(c)
            i += 1
    return pieces


def like_matcher(pattern: str) -> Callable[[str], bool]:
    """The LIKE pattern with the meaning the SQL translation gives it, as a test of a value in Python (for filters
    evaluated on cached partitions). No regex engine: a client's pattern such as ``(a|a)*b`` would backtrack
    for ever there; this one is a wildcard match, at most (pattern x value) steps. Unsupported regex syntax
    raises ``FilterError``, as in the SQL translation."""
    pieces = like_pieces(pattern)
    n = len(pieces)

    def match(value: str) -> bool:
        p = v = 0
        star, resume = -1, 0  # the last '.*' seen, and where in the value its match ends so far
        while v < len(value):
            if p < n and pieces[p] is ANY_MANY:
                star, resume, p = p, v, p + 1
            elif p < n and (pieces[p] is ANY_ONE or pieces[p] == value[v]):
                p, v = p + 1, v + 1
            elif star >= 0:  # let the last '.*' take one more character
                resume += 1
                p, v = star + 1, resume
            else:
                return False
        while p < n and pieces[p] is ANY_MANY:
            p += 1
        return p == n

    return match
