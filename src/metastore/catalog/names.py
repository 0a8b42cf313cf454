"""Hive's rules for names, column types and partition names."""

from __future__ import annotations

import re

from .errors import InvalidObject, MetaError

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


def escape_path_name(s: str) -> str:
    if not s:
        return DEFAULT_PARTITION_NAME
    if not any(c in _ESCAPE for c in s):
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


def part_vals_from_name(keys: list[str], name: str) -> list[str]:
    """The values of a partition name in key order; it must name exactly the table's keys."""
    pairs = split_part_name(name)
    spec = {k.lower(): v for k, v in pairs}
    if len(pairs) != len(keys) or any(k.lower() not in spec for k in keys):
        raise MetaError(f"Invalid partition name {name} for partition keys {[k.lower() for k in keys]}")
    return [spec[k.lower()] for k in keys]
