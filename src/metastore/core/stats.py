"""Which column statistics kind Hive reads for a column type (Hive 2.3's StatObjectConverter).

Hive stores the values of every kind in the same columns and reads a row back as the kind of its column type,
whatever kind was written (a timestamp's as a long's: Hive 2.3 has no timestamp kind). Newer clients write
timestampStats for a timestamp column, which is read back as written.
"""

from __future__ import annotations

_LONG_TYPES = ("bigint", "int", "smallint", "tinyint", "timestamp")


def kind_of_type(col_type: str) -> str | None:
    """The statistics kind Hive 2.3 reads for a column type, or None for a type it has none for."""
    t = col_type.lower()
    if t == "boolean":
        return "booleanStats"
    if t == "string" or t.startswith("varchar") or t.startswith("char"):
        return "stringStats"
    if t == "binary":
        return "binaryStats"
    if t in _LONG_TYPES:
        return "longStats"
    if t == "date":
        return "dateStats"
    if t in ("double", "float"):
        return "doubleStats"
    if t.startswith("decimal"):
        return "decimalStats"
    return None


def read_kind(col_type: str, written: str) -> str:
    """The kind a row written as `written` for a column of `col_type` is read as."""
    if written == "timestampStats" and col_type.lower() == "timestamp":
        return written
    return kind_of_type(col_type) or written
