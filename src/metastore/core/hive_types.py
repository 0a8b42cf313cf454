"""Hive's column type strings parsed as Hive 2.3's metastore parses them, and which column type changes it allows.

With hive.metastore.disallow.incompatible.col.type.changes (true by default), Hive's alter_table refuses a new
column list whose type at some position cannot be implicitly converted from the old type at that position
(positions past the shorter list are not compared). The facts, from Hive 2.3's serde (TypeInfoUtils):

- a type string is cut into tokens: each run of letters, digits, '_', '.', ' ' and '$' is one token, any other
  character a token of its own; type names are matched exactly (lower case), so 'INT' is no type there;
- decimal takes (precision, scale) (none: (10,0); one number is ignored, as Hive does); char and varchar take a
  length (char 1..255, varchar 1..65535); struct field names compare without case;
- two types are compatible if they are equal, or both primitive and the old one's category converts implicitly to
  the new one's: void to anything; string, char and varchar to one another and to double; date and timestamp to
  string types; any number to string types; and up the ladder tinyint < smallint < int < bigint < decimal <
  float < double < string (so decimal(10,2) to decimal(5,0) is allowed: only categories are compared);
- complex types (array, map, struct, uniontype) must be equal.

A type string Hive cannot parse makes the call fail with the Java exception's text (Hive wraps it in a
MetaException): `HiveTypeError.java_text` is that text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_IAE = "java.lang.IllegalArgumentException"
_RTE = "java.lang.RuntimeException"
_NFE = "java.lang.NumberFormatException"


class HiveTypeError(ValueError):
    """A type string Hive's parser refuses; `java_text` is what Hive's MetaException says."""

    def __init__(self, java_class: str, detail: str) -> None:
        super().__init__(detail)
        self.java_text = f"{java_class}: {detail}"


# primitive type name -> (group, rung on the numeric ladder or 0)
_PRIMITIVES: dict[str, tuple[str, int]] = {
    "void": ("void", 0), "boolean": ("boolean", 0),
    "tinyint": ("numeric", 1), "smallint": ("numeric", 2), "int": ("numeric", 3), "bigint": ("numeric", 4),
    "decimal": ("numeric", 5), "float": ("numeric", 6), "double": ("numeric", 7),
    "string": ("string", 8), "char": ("string", 0), "varchar": ("string", 0),
    "date": ("date", 0), "timestamp": ("date", 0),
    "interval_year_month": ("interval", 0), "interval_day_time": ("interval", 0), "binary": ("binary", 0),
    # Hive 3's (not Hive 2.3's): so that a table with such a column stays alterable
    "timestamp with local time zone": ("date", 0),
}
_COMPLEX = ("array", "map", "struct", "uniontype")
_UNKNOWN = "unknown"  # a name Hive's parser knows but cannot build a type of
_MAX_CHAR, _MAX_VARCHAR, _MAX_PRECISION = 255, 65535, 38
MAX_DEPTH = 100  # array/map/struct/uniontype levels in one type (Hive's own types nest a few)
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class Primitive:
    name: str  # the base name: int, varchar, decimal, ...
    text: str  # with its parameters, as Hive compares them: varchar(10), decimal(10,2)


@dataclass(frozen=True)
class Complex:
    kind: str  # array, map, struct or uniontype
    fields: tuple[str, ...]  # a struct's field names, lower case (Hive compares them without case)
    members: tuple[HiveType, ...]


HiveType = Primitive | Complex


@dataclass(frozen=True)
class _Token:
    at: int
    text: str
    word: bool  # a run of name characters (a type or field name, a number)


def _word_char(c: str) -> bool:
    return c.isalnum() or c in "_. $"


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or not _word_char(text[i - 1]) or not _word_char(text[i]):
            out.append(_Token(start, text[start:i], _word_char(text[start])))
            start = i
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0  # of the type() being read

    def _fail(self, detail: str, java_class: str = _IAE) -> HiveTypeError:
        return HiveTypeError(java_class, detail)

    def peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def expect(self, what: str, other: str | None = None) -> _Token:
        t = self.peek()
        if t is None:
            raise self._fail(f"Error: {what} expected at the end of '{self.text}'")
        if what == "type":
            ok = t.text in _PRIMITIVES or t.text in _COMPLEX or t.text == _UNKNOWN
        elif what == "name":
            ok = t.word
        else:
            ok = t.text == what
        if not ok and t.text != other:
            raise self._fail(f"Error: {what} expected at the position {t.at} of '{self.text}' but '{t.text}' "
                             "is found.")
        self.i += 1
        return t

    def params(self) -> list[str]:
        t = self.peek()
        if t is None or t.text != "(":
            return []
        self.expect("(")
        out: list[str] = []
        while (t := self.peek()) is None or t.text != ")":
            out.append(self.expect("name").text)
            if self.expect(",", ")").text == ")":
                break
        if not out:
            raise self._fail(f"type parameters expected for type string {self.text}")
        return out

    def number(self, s: str) -> int:
        if _JAVA_INT.fullmatch(s) is None or not -2**31 <= int(s) < 2**31:
            raise self._fail(f'For input string: "{s}"', _NFE)
        return int(s)

    def primitive(self, name: str) -> Primitive:
        ps = self.params()
        if name in ("char", "varchar"):
            if not ps:
                raise self._fail(f"{name} type is specified without length: {self.text}")
            if len(ps) > 1:
                raise self._fail(f"Type {name} only takes one parameter, but {len(ps)} is seen")
            n = self.number(ps[0])
            top = _MAX_CHAR if name == "char" else _MAX_VARCHAR
            if not 1 <= n <= top:
                raise self._fail(f"{name.capitalize()} length {n} out of allowed range [1, {top}]", _RTE)
            return Primitive(name, f"{name}({n})")
        if name == "decimal":
            precision, scale = 10, 0
            if len(ps) > 2:
                raise self._fail(f"Type decimal only takes two parameter, but {len(ps)} is seen")
            if len(ps) == 2:
                precision, scale = self.number(ps[0]), self.number(ps[1])
                if not 1 <= precision <= _MAX_PRECISION:
                    raise self._fail(f"Decimal precision out of allowed range [1,{_MAX_PRECISION}]")
                if not 0 <= scale <= _MAX_PRECISION:
                    raise self._fail(f"Decimal scale out of allowed range [0,{_MAX_PRECISION}]")
                if precision < scale:
                    raise self._fail("Decimal scale must be less than or equal to precision")
            return Primitive(name, f"decimal({precision},{scale})")
        return Primitive(name, name)

    def members(self, struct: bool) -> Complex:
        names: list[str] = []
        types: list[HiveType] = []
        self.expect("<")
        first = True
        while True:
            if not first and self.expect(">", ",").text == ">":
                break
            first = False
            if struct:
                name = self.expect("name", ">")
                if name.text == ">":
                    break
                names.append(name.text.lower())
                self.expect(":")
            types.append(self.type())
        return Complex("struct" if struct else "uniontype", tuple(names), tuple(types))

    def type(self) -> HiveType:
        # a client's type may nest without end: refused with a reason, not a RecursionError
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise self._fail(f"Type nested deeper than {MAX_DEPTH} levels")
            return self._type()
        finally:
            self.depth -= 1

    def _type(self) -> HiveType:
        t = self.expect("type")
        if t.text in _PRIMITIVES:
            return self.primitive(t.text)
        if t.text == "array":
            self.expect("<")
            element = self.type()
            self.expect(">")
            return Complex("array", (), (element,))
        if t.text == "map":
            self.expect("<")
            key = self.type()
            self.expect(",")
            value = self.type()
            self.expect(">")
            return Complex("map", (), (key, value))
        if t.text in ("struct", "uniontype"):
            return self.members(t.text == "struct")
        raise self._fail(f"Internal error parsing position {t.at} of '{self.text}'", _RTE)

    def first(self) -> HiveType:
        """The first of the types the text lists (separated by ',', ':' or ';'); the others are parsed too."""
        found: list[HiveType] = []
        while self.i < len(self.tokens):
            found.append(self.type())
            sep = self.peek()
            if sep is not None:
                if sep.text not in (",", ";", ":"):
                    shown = ", ".join(f"{x.at}:{x.text}" for x in self.tokens)
                    raise self._fail(f"Error: ',', ':', or ';' expected at position {sep.at} from '{self.text}' "
                                     f"[{shown}]")
                self.i += 1
        if not found:
            raise HiveTypeError("java.lang.IndexOutOfBoundsException", "Index: 0, Size: 0")
        return found[0]


def parse_type(text: str) -> HiveType:
    """The type `text` names, as Hive 2.3 reads it; raises HiveTypeError where Hive fails."""
    return _Parser(text).first()


def _converts(old: str, new: str) -> bool:
    if old == new:
        return True
    (old_group, old_rung), (new_group, new_rung) = _PRIMITIVES[old], _PRIMITIVES[new]
    if old_group == "void":
        return True
    if old_group == "string" and new == "double":
        return True
    if old_group in ("string", "date", "numeric") and new_group == "string":
        return True
    return bool(old_rung and new_rung and old_rung <= new_rung)


def compatible(old: str, new: str) -> bool:
    """Whether Hive allows a column of type `old` to become `new` (both parsed; HiveTypeError if one is not a
    type Hive reads)."""
    a, b = parse_type(old), parse_type(new)
    if a == b:
        return True
    return isinstance(a, Primitive) and isinstance(b, Primitive) and _converts(a.name, b.name)


def incompatible_columns(old: Sequence[tuple[str, str]], new: Sequence[tuple[str, str]]) -> list[str]:
    """The names (new ones) of the columns, position by position up to the shorter list, whose type Hive would not
    let change from the old column's at that position."""
    return [n for (_, a), (n, b) in zip(old, new) if not compatible(a, b)]


INCOMPATIBLE_MESSAGE = ("The following columns have types incompatible with the existing columns in their "
                        "respective positions :\n")


def incompatible_message(names: Iterable[str]) -> str:
    return INCOMPATIBLE_MESSAGE + ",".join(names)
