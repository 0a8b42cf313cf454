"""Table constraints as Hive keeps them (KEY_CONSTRAINTS): one `KeyColumn` per column of a constraint.

Kinds and their numbers are Hive's (MConstraint): a primary key, foreign key or unique constraint spans columns
in order (`position`, Hive's key_seq, from 1); a not-null, default or check constraint is of one column
(position 1). A foreign key's column is the child's (`db`, `table`, `column`); `ref_*` is the column it
references (the parent's). `enable`, `validate` and `rely` are Hive's three flags, stored as one number
(ENABLE_VALIDATE_RELY: 4, 2 and 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..thrift import hms

PRIMARY_KEY, FOREIGN_KEY, UNIQUE, NOT_NULL, DEFAULT, CHECK = 0, 1, 2, 3, 4, 5
KINDS = (PRIMARY_KEY, FOREIGN_KEY, UNIQUE, NOT_NULL, DEFAULT, CHECK)
# the last part of a generated name (Hive's ObjectStore.generateConstraintName)
NAME_SUFFIX = {PRIMARY_KEY: "pk", FOREIGN_KEY: "fk", UNIQUE: "uk", NOT_NULL: "nn", DEFAULT: "dc", CHECK: "cc"}
# kinds whose constraint spans several columns, numbered by position
MULTI_COLUMN = frozenset({PRIMARY_KEY, FOREIGN_KEY, UNIQUE})

MAX_NAME = 400  # Hive's CONSTRAINT_NAME column
MAX_VALUE = 400  # Hive's DEFAULT_VALUE column (a default value or a check expression)
MAX_COLUMNS = 1000  # columns in one request: bounded as every client-controlled resource


@dataclass
class KeyColumn:
    kind: int
    db: str
    table: str
    column: str
    name: str | None = None
    position: int = 1
    enable: bool = False
    validate: bool = False
    rely: bool = False
    value: str | None = None  # a DEFAULT's value, a CHECK's expression
    ref_db: str | None = None  # FOREIGN_KEY: the referenced (parent) table and column
    ref_table: str | None = None
    ref_column: str | None = None
    ref_name: str | None = None  # FOREIGN_KEY: the name of the parent's primary key, as read
    update_rule: int | None = None
    delete_rule: int | None = None

    @property
    def flags(self) -> int:
        """Hive's ENABLE_VALIDATE_RELY."""
        return (4 if self.enable else 0) + (2 if self.validate else 0) + (1 if self.rely else 0)

    def set_flags(self, evr: int) -> None:
        self.enable, self.validate, self.rely = bool(evr & 4), bool(evr & 2), bool(evr & 1)


def java_hash(text: str) -> int:
    """Java's String.hashCode (over UTF-16 code units), as a signed 32-bit integer."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


# ---- the Thrift structs (SQLPrimaryKey, ...): what the fronts receive, and what messages embed ----

# per kind: the struct, its field of the constraint's name, of the key position, of the value
_STRUCTS: dict[int, tuple[str, str, str | None, str | None]] = {
    PRIMARY_KEY: ("SQLPrimaryKey", "pk_name", "key_seq", None),
    FOREIGN_KEY: ("SQLForeignKey", "fk_name", "key_seq", None),
    UNIQUE: ("SQLUniqueConstraint", "uk_name", "key_seq", None),
    NOT_NULL: ("SQLNotNullConstraint", "nn_name", None, None),
    DEFAULT: ("SQLDefaultConstraint", "dc_name", None, "default_value"),
    CHECK: ("SQLCheckConstraint", "dc_name", None, "check_expression"),
}


def from_thrift(kind: int, x: Any) -> KeyColumn:
    """A client's SQLPrimaryKey (or other kind's struct) as a KeyColumn, names as sent."""
    _, name_field, seq_field, value_field = _STRUCTS[kind]
    if kind == FOREIGN_KEY:
        k = KeyColumn(kind, x.fktable_db, x.fktable_name, x.fkcolumn_name, ref_db=x.pktable_db,
                      ref_table=x.pktable_name, ref_column=x.pkcolumn_name, update_rule=x.update_rule,
                      delete_rule=x.delete_rule)
    else:
        k = KeyColumn(kind, x.table_db, x.table_name, x.column_name)
    k.name = getattr(x, name_field)
    if seq_field is not None:
        k.position = getattr(x, seq_field)
    if value_field is not None:
        k.value = getattr(x, value_field)
    k.enable, k.validate, k.rely = bool(x.enable_cstr), bool(x.validate_cstr), bool(x.rely_cstr)
    return k


def to_thrift(k: KeyColumn, catalog: str = "hive") -> Any:
    """A KeyColumn as its kind's Thrift struct."""
    struct, name_field, seq_field, value_field = _STRUCTS[k.kind]
    fields: dict[str, Any] = {name_field: k.name, "enable_cstr": k.enable, "validate_cstr": k.validate,
                              "rely_cstr": k.rely, "catName": catalog}
    if k.kind == FOREIGN_KEY:
        fields.update(pktable_db=k.ref_db, pktable_name=k.ref_table, pkcolumn_name=k.ref_column, fktable_db=k.db,
                      fktable_name=k.table, fkcolumn_name=k.column, update_rule=k.update_rule,
                      delete_rule=k.delete_rule, pk_name=k.ref_name)
    else:
        fields.update(table_db=k.db, table_name=k.table, column_name=k.column)
    if seq_field is not None:
        fields[seq_field] = k.position
    if value_field is not None:
        fields[value_field] = k.value
    return getattr(hms, struct)(**fields)
