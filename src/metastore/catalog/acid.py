"""Hive's rules for transactional (ACID) tables, checked where Hive's server checks them (its transactional
validation listener, before a table is created or altered).

- `transactional` is a table property whose name is read in any case; its value may only be true (any case,
  kept as "true") or false (which removes it).
- A transactional table is managed, bucketed and stored in an ACID format (ORC's input and output formats:
  Hive loads the classes and asks whether they implement its ACID interfaces; no other format Hive ships does).
  Hive 3's insert-only tables (`transactional_properties` = insert_only) may have any format, as Hive 3 allows.
- `transactional_properties` is one of default, legacy (Hive 2.3) or insert_only (Hive 3).
- Once true, `transactional` cannot be removed or set to false.
"""

from __future__ import annotations

from ..core import model as m
from ..core.errors import MetaError

TRANSACTIONAL = "transactional"
TRANSACTIONAL_PROPERTIES = "transactional_properties"
INSERT_ONLY = "insert_only"
_KINDS = ("default", "legacy", INSERT_ONLY)
_ACID_INPUT = frozenset({"org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"})
_ACID_OUTPUT = frozenset({"org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"})


def _key(params: dict[str, str], name: str) -> str | None:
    return next((k for k in params if k.lower() == name), None)


def is_transactional(params: dict[str, str]) -> bool:
    key = _key(params, TRANSACTIONAL)
    return key is not None and (params[key] or "").lower() == "true"


def _conforms(t: m.Table, params: dict[str, str]) -> bool:
    kind_key = _key(params, TRANSACTIONAL_PROPERTIES)
    if kind_key is not None and (params[kind_key] or "").lower() == INSERT_ONLY:
        return True
    return bool(t.sd.bucketCols) and t.sd.inputFormat in _ACID_INPUT and t.sd.outputFormat in _ACID_OUTPUT


def check(t: m.Table, external: bool, old: m.Table | None = None) -> None:
    """Check a table about to be created (`old` None) or altered from `old`; normalizes `t.parameters` in place
    (the property's name and value as Hive keeps them, false removed). MetaException with Hive's messages."""
    params = t.parameters
    was = old is not None and is_transactional(old.parameters)
    key = _key(params, TRANSACTIONAL)
    if key is None:
        if was:
            raise MetaError("TBLPROPERTIES with 'transactional'='true' cannot be unset")
        return
    value = (params.pop(key) or "").lower()
    if value == "false":
        if was:
            raise MetaError("TBLPROPERTIES with 'transactional'='true' cannot be unset")
        return
    if value != "true":
        raise MetaError("'transactional' property of TBLPROPERTIES may only have value 'true'")
    params[TRANSACTIONAL] = "true"
    if not _conforms(t, params):
        raise MetaError("The table must be bucketed and stored using an ACID compliant format (such as ORC)")
    if external:
        raise MetaError(f"{t.dbName}.{t.tableName} cannot be declared transactional because it's an external table")
    kind_key = _key(params, TRANSACTIONAL_PROPERTIES)
    if kind_key is not None and (params[kind_key] or "").lower() not in _KINDS:
        raise MetaError("Invalid transactional properties specified for the table with the error unknown value "
                        f"{(params[kind_key] or '')[:100]} for transactional_properties")
