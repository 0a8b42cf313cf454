"""Hive's rules for names, column types and partition names."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

from .errors import MetaError

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
MAX_NAME_LENGTH = 128

# Java's \w is ASCII-only, so is ours: Hive accepts [A-Za-z0-9_]+ for database and table names.
_NAME = re.compile(r"[A-Za-z0-9_]+")
# The first word of a column type must be one of Hive's type names (Hive checks only the first).
_TYPE_WORD = re.compile(r"[A-Za-z0-9_]+")
TYPE_NAMES = frozenset({
    "void", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "varchar", "char",
    "date", "datetime", "timestamp", "decimal", "binary", "array", "map", "struct", "uniontype",
    "interval_year_month", "interval_day_time", "timestamplocaltz", "integer", "real", "numeric",
})
INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})


def valid_name(name: str | None) -> bool:
    return bool(name) and len(name) <= MAX_NAME_LENGTH and _NAME.fullmatch(name) is not None  # type: ignore[arg-type]


def column_error(name: str | None, type_: str | None) -> str | None:
    """Why a column is invalid (Hive's wording), or None."""
    if not name or any(c in name for c in ",\0"):
        return f"name: {name}"
    m = _TYPE_WORD.match(type_ or "")
    if not type_ or m is None or m.group(0).lower() not in TYPE_NAMES:
        return f"type: {type_}"
    return None


# Characters Hive escapes in partition path names (FileUtils.escapePathName on a POSIX file system).
_ESCAPE = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 32)}


_ESCAPE_ANY = re.compile("[" + re.escape("".join(sorted(_ESCAPE))) + "]")


def escape_path_name(s: str) -> str:
    if not s:
        return DEFAULT_PARTITION_NAME
    if _ESCAPE_ANY.search(s) is None:
        return s
    return "".join(f"%{ord(c):02X}" if c in _ESCAPE else c for c in s)


def unescape_path_name(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "%" and i + 2 < len(s):
            try:
                out.append(chr(int(s[i + 1 : i + 3], 16)))
                i += 3
                continue
            except ValueError:
                pass
        out.append(c)
        i += 1
    return "".join(out)


def make_part_name(keys: list[str], values: list[str]) -> str:
    """Hive's partition name, k1=v1/k2=v2, with keys lower-cased and both sides escaped."""
    if len(keys) != len(values):
        raise MetaError(f"Invalid partition key & values; keys {keys}, values {values}")
    return "/".join(f"{escape_path_name(k.lower())}={escape_path_name(v)}" for k, v in zip(keys, values))


def split_part_name(name: str) -> list[tuple[str, str]]:
    """The (key, value) pairs of a partition name, unescaped; raises MetaError if it is malformed."""
    pairs = []
    for comp in name.split("/"):
        if not comp:
            continue
        k, eq, v = comp.partition("=")
        if not eq or not k:
            raise MetaError(f"Invalid partition name {name}")  # Hive: partition name is invalid
        pairs.append((unescape_path_name(k), unescape_path_name(v)))
    if not pairs:
        raise MetaError(f"Invalid partition name {name}")
    return pairs


def java_list(values: object) -> str:
    """A list as Java prints it ([a, b]), as Hive's messages show partition values."""
    return "[" + ", ".join(str(v) for v in (values or [])) + "]"  # type: ignore[attr-defined]


def bad_values_message(keys: list[str], values: object) -> str:
    """Hive's message for partition values that do not fit the keys (its odd trailing ', ' included)."""
    return ("Invalid partition key & values; keys [" + "".join(f"{k}, " for k in keys) + "], values ["
            + "".join(f"{v}, " for v in (values or [])) + "]")  # type: ignore[attr-defined]


def part_vals_from_name(keys: list[str], name: str, exc: type[Exception] = MetaError) -> list[str]:
    """The values of a partition name (k1=v1/k2=v2, any order) in key order.

    As Hive, components that are not key=value (an empty value included) are ignored, and a key of the
    table that the name lacks is an error of type `exc` ("incomplete partition name - missing k").
    Unlike Hive, which ignores them, a key that is not one of the table's is an error too.
    """
    if not name:
        raise MetaError(f"Partition name is invalid. {name}")
    spec: dict[str, str] = {}
    for comp in name.split("/"):
        k, eq, v = comp.partition("=")
        if eq and k and v:
            spec[unescape_path_name(k).lower()] = unescape_path_name(v)
    lower = [k.lower() for k in keys]
    for k in lower:
        if k not in spec:
            raise exc(f"incomplete partition name - missing {k}")
    extra = [k for k in spec if k not in lower]
    if extra:
        raise exc(f"Invalid partition name {name}: {extra[0]} is not a partition key (keys {java_list(lower)})")
    return [spec[k] for k in lower]


def hive_pattern(pattern: str | None) -> Callable[[str], bool]:
    """Hive's name patterns, as Hive 2.3's server matches them (its ORM turns the regular expression it builds
    into SQL LIKE): '*' any characters, '.' one character, '|' between alternatives, every other character
    itself, case-insensitively. So Hive's CLI's `.*` is any name and `pl.in` matches `plain`; an empty pattern or
    alternative matches nothing. None (no pattern given) matches everything."""
    if pattern is None:
        return lambda _n: True
    alts = [re.compile(_glob_of_hive_pattern(p), re.S) for p in pattern.strip().lower().split("|") if p]
    return lambda n: any(a.match(n.lower()) for a in alts)


def _glob_of_hive_pattern(alt: str) -> str:
    # Hive replaces '*' by '.*' and keeps the rest as a regular expression; its ORM reads '.*' as LIKE's '%', a
    # lone '.' as '_' and every other character literally. fnmatch's translation is linear (no backtracking
    # blow-up from a client's pattern).
    rx, glob, i = alt.replace("*", ".*"), [], 0
    while i < len(rx):
        if rx.startswith(".*", i):
            glob.append("*")
            i += 2
        elif rx[i] == ".":
            glob.append("?")
            i += 1
        else:
            glob.append(f"[{rx[i]}]" if rx[i] in "*?[]!" else rx[i])
            i += 1
    return fnmatch.translate("".join(glob))
