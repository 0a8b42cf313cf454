"""Table constraints (primary, foreign and unique keys; not-null, default and check constraints), as Hive's
metastore keeps and checks them: the operations of the catalog service (a mixin of Catalog, so the authorizer
checks them as every other operation, catalog/authz.py).

Hive's rules (ObjectStore.add*, HMSHandler): identifiers are trimmed and lower-cased; the table and each column
(a partition key too) must exist; a table has one primary key; a name is unique in the database of its table
(a foreign key's: its child table) and generated when absent as Hive generates it
(`<kind>_<hash of the names>_<milliseconds>_<n>`); the columns of a primary, foreign or unique key arrive in
order of position, a new key starting at position 1; a foreign key references the primary key or a unique
constraint of its parent, all of its columns. Each request writes its event (ADD_PRIMARYKEY, ADD_FOREIGNKEY,
..., DROP_CONSTRAINT) in the transaction of its change, with the names generated. Dropping a table drops its
constraints and the foreign keys that reference it; renaming it keeps them (they key on the table's id).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..core import constraints as c
from ..core import model as m
from ..core.errors import InvalidObject, MetaError, NoSuchObject
from ..core.events import EventType
from ..store.constraints import ColumnRef, KeyRow

if TYPE_CHECKING:
    from ..core import messages as ev
    from ..store.store import Tx

# per kind: the event an addition writes and its message's list key
_EVENTS = {
    c.PRIMARY_KEY: (EventType.ADD_PRIMARYKEY, "primaryKeyListJson"),
    c.FOREIGN_KEY: (EventType.ADD_FOREIGNKEY, "foreignKeyListJson"),
    c.UNIQUE: (EventType.ADD_UNIQUECONSTRAINT, "uniqueConstraintListJson"),
    c.NOT_NULL: (EventType.ADD_NOTNULLCONSTRAINT, "notNullConstraintListJson"),
    c.DEFAULT: (EventType.ADD_DEFAULTCONSTRAINT, "defaultConstraintListJson"),
    c.CHECK: (EventType.ADD_CHECKCONSTRAINT, "checkConstraintListJson"),
}
# the order create_table_with_constraints adds them in: a foreign key may reference a key made with the table
CREATE_ORDER = (c.PRIMARY_KEY, c.UNIQUE, c.FOREIGN_KEY, c.NOT_NULL, c.DEFAULT, c.CHECK)


def _norm(name: str | None) -> str:
    """Hive's normalizeIdentifier: trimmed, lower-cased ('' for a missing name)."""
    return (name or "").strip().lower()


@dataclass
class _Table:
    """A table as constraints see it: its id, column descriptor, columns and partition keys."""

    db: str
    name: str
    tbl_id: int
    db_id: int
    cd_id: int | None
    cols: list[str]
    keys: list[str]

    def column(self, name: str) -> ColumnRef | None:
        if name in self.cols:
            return ColumnRef(self.tbl_id, self.cd_id, self.cols.index(name))
        if name in self.keys:
            return ColumnRef(self.tbl_id, None, self.keys.index(name))
        return None


@dataclass
class _Group:
    """The columns of one constraint in a request."""

    cols: list[c.KeyColumn] = field(default_factory=list)


def _table_of(tx: Tx, db: str, name: str, made: m.Table | None = None) -> _Table | None:
    if made is not None and (made.dbName, made.tableName) == (db, name):  # the table being created with them
        found: tuple[m.Table, Any] | None = (made, tx.table_ref(db, name))
    else:
        found = tx.get_table_and_ref(db, name)
    if found is None or found[1] is None:
        return None
    t, ref = found
    return _Table(db, name, ref.TBL_ID, ref.DB_ID, ref.CD_ID, [x.name.lower() for x in t.sd.cols],
                  [k.name.lower() for k in t.partitionKeys])


def _generated(parts: Sequence[str], taken: Any) -> str:
    """Hive's generated name: the last part (pk, fk, ...), a hash of all, the time in ms and a counter."""
    h = c.java_hash("{" + ",".join(parts) + "}")  # signed, as Java prints an int
    ms = int(time.time() * 1000)
    for n in range(10):
        name = f"{parts[-1]}_{h}_{ms}_{n}"
        if not taken(name):
            return name
    raise MetaError(f"Error while trying to generate the constraint name for {{{','.join(parts)}}}")


class ConstraintOps:
    """The constraint operations of the catalog service (mixed into Catalog)."""

    msg: ev.JsonMessageFactory

    if TYPE_CHECKING:
        def transaction(self) -> Any: ...
        def _read(self) -> Any: ...
        def _event(self, tx: Tx, kind: str, db: str | None, table: str | None, message: str) -> None: ...
        def create_table(self, t: m.Table, env: dict[str, str] | None = None, then: Any = None) -> None: ...

    # ---- additions --------------------------------------------------------------------------------------

    def add_constraints(self, kind: int, cols: Sequence[c.KeyColumn]) -> list[c.KeyColumn]:
        """Add the constraints of one kind whose columns `cols` lists (add_primary_key, ...): all or none, in
        one transaction with its event. The columns as stored (names generated) are returned."""
        with self.transaction() as tx:
            return self._add(tx, kind, cols)

    def _add(self, tx: Tx, kind: int, cols: Sequence[c.KeyColumn], made: m.Table | None = None,
             claimed: set[tuple[int, str]] | None = None) -> list[c.KeyColumn]:
        if kind not in c.KINDS:
            raise MetaError(f"Unknown constraint type {kind}")
        if len(cols) > c.MAX_COLUMNS:
            raise MetaError(f"At most {c.MAX_COLUMNS} constraint columns may be added in one call")
        if not cols:
            return []
        claimed = claimed if claimed is not None else set()  # (db id, name) given in this call
        cq = tx.constraints()
        tables: dict[tuple[str, str], _Table | None] = {}

        def table(db: str, name: str, what: str) -> _Table:
            key = (db, name)
            if key not in tables:
                tables[key] = _table_of(tx, db, name, made)
            t = tables[key]
            if t is None:
                raise InvalidObject(f"{what} table not found: {name}")
            return t

        def taken(db_id: int, name: str) -> bool:
            return (db_id, name) in claimed or cq.name_taken(db_id, name)

        out: list[c.KeyColumn] = []
        rows: list[KeyRow] = []
        name: str | None = None
        group_table: tuple[int, int] | None = None  # (tbl_id, db_id) of the constraint being read
        with_pk: set[int] = set()
        fks: list[tuple[_Table, str, list[c.KeyColumn]]] = []  # (parent, name, columns) of each foreign key
        for raw in cols:
            k = replace(raw, db=_norm(raw.db), table=_norm(raw.table), column=_norm(raw.column),
                        name=_norm(raw.name) or None)
            if k.kind != kind:
                raise MetaError("The columns of one call must be constraints of one kind")
            if kind in c.MULTI_COLUMN:
                if k.position is None or k.position < 1:
                    raise MetaError(f"Invalid key position {k.position} of column {k.column}")
            else:
                k.position = 1
            if k.value is not None and len(k.value) > c.MAX_VALUE:
                raise MetaError(f"A default value or check expression is limited to {c.MAX_VALUE} characters")
            if k.name is not None and len(k.name) > c.MAX_NAME:
                raise MetaError(f"A constraint name is limited to {c.MAX_NAME} characters")
            if kind == c.FOREIGN_KEY:
                child = table(k.db, k.table, "Child")
                child_col = child.column(k.column)
                if child_col is None:
                    raise InvalidObject(f"Child column not found: {k.column}")
                k.ref_db, k.ref_table, k.ref_column = _norm(k.ref_db), _norm(k.ref_table), _norm(k.ref_column)
                parent = table(k.ref_db, k.ref_table, "Parent")
                parent_col = parent.column(k.ref_column)
                if parent_col is None:
                    raise InvalidObject(f"Parent column not found: {k.ref_column}")
                own, row_parent, row_child = child, parent_col, child_col
            else:
                own = table(k.db, k.table, "Parent")
                col = own.column(k.column)
                if col is None:
                    raise InvalidObject(f"Parent column not found: {k.column}")
                row_parent, row_child = col, None
                if kind == c.PRIMARY_KEY and own.tbl_id not in with_pk and cq.names_of(own.tbl_id, c.PRIMARY_KEY):
                    raise MetaError(f" Primary key already exists for: {own.db}.{own.name}")
            # a new constraint starts at position 1 (or at a new name); the others continue the one before
            starts = (kind not in c.MULTI_COLUMN or k.position == 1 or name is None
                      or (k.name is not None and k.name != name) or group_table != (own.tbl_id, own.db_id))
            if starts:
                if kind == c.PRIMARY_KEY and own.tbl_id in with_pk:
                    raise MetaError(f" Primary key already exists for: {own.db}.{own.name}")
                if k.name is None:
                    if kind in c.MULTI_COLUMN and k.position != 1:
                        raise MetaError(f"The first column of a constraint without a name must be at position 1, "
                                        f"not {k.position}")
                    parts = ([own.db, own.name, k.ref_db or "", k.ref_table or "", k.ref_column or "", k.column]
                             if kind == c.FOREIGN_KEY else [own.db, own.name, k.column])
                    k.name = _generated([*parts, c.NAME_SUFFIX[kind]], lambda n, db_id=own.db_id: taken(db_id, n))
                elif taken(own.db_id, k.name):
                    raise InvalidObject(f"Constraint name already exists: {k.name}")
                claimed.add((own.db_id, k.name))
                name, group_table = k.name, (own.tbl_id, own.db_id)
                if kind == c.PRIMARY_KEY:
                    with_pk.add(own.tbl_id)
                if kind == c.FOREIGN_KEY:
                    fks.append((table(k.ref_db or "", k.ref_table or "", "Parent"), k.name, []))
            else:
                k.name = name
                if kind == c.FOREIGN_KEY and fks[-1][0] is not parent:
                    raise MetaError(f"The columns of foreign key {name} reference more than one table")
            if kind == c.FOREIGN_KEY:
                fks[-1][2].append(k)
            rows.append(KeyRow(k.name or "", kind, k.position, row_parent, k.flags, row_child,
                               k.update_rule, k.delete_rule, k.value))
            out.append(k)
        for parent, fk_name, fk_cols in fks:
            self._check_references(tx, parent, fk_name, fk_cols)
        cq.insert(rows)
        if kind == c.FOREIGN_KEY:
            for k in out:
                pk = cq.names_of(table(k.ref_db or "", k.ref_table or "", "Parent").tbl_id, c.PRIMARY_KEY)
                k.ref_name = pk[0] if pk else None
        event, key = _EVENTS[kind]
        first = out[0]
        db, tbl = (first.ref_db, first.ref_table) if kind == c.FOREIGN_KEY else (first.db, first.table)
        self._event(tx, event, db, tbl, self.msg.add_constraint(key, [c.to_thrift(k) for k in out]))
        return out

    @staticmethod
    def _check_references(tx: Tx, parent: _Table, name: str, cols: list[c.KeyColumn]) -> None:
        """A foreign key references all the columns of the parent's primary key or of one of its unique
        constraints (Hive 3's rule), in their order."""
        cq = tx.constraints()
        keys: dict[str, list[str]] = {}
        for kind in (c.PRIMARY_KEY, c.UNIQUE):
            for k in cq.read(kind, tbl_id=parent.tbl_id):
                keys.setdefault(k.name or "", []).append(k.column)
        if not keys:
            raise MetaError("Trying to define foreign key but there are no primary keys or unique keys for "
                            "referenced table")
        referenced = [k.ref_column for k in sorted(cols, key=lambda k: k.position)]
        if referenced not in keys.values():
            raise MetaError(f"Foreign key {name} references {parent.db}.{parent.name} columns "
                            f"{','.join(x or '' for x in referenced)} but no corresponding primary key or unique "
                            f"key exists. Possible keys: {sorted(','.join(v) for v in keys.values())}")

    def create_table_with_constraints(self, t: m.Table, by_kind: Mapping[int, Sequence[c.KeyColumn]],
                                      env: dict[str, str] | None = None) -> None:
        """Create a table and its constraints (by kind) in one transaction: CREATE_TABLE, then each kind's
        event, in CREATE_ORDER. The columns must be of the new table; a foreign key's parent may be any table."""
        self.create_table(t, env, then=self._new_table_constraints(t, by_kind))

    def _new_table_constraints(self, t: m.Table, by_kind: Mapping[int, Sequence[c.KeyColumn]]) -> Any:
        """What create_table runs in its transaction after the table is inserted."""
        claimed: set[tuple[int, str]] = set()
        for kind, cols in by_kind.items():
            for k in cols:
                if (_norm(k.db), _norm(k.table)) != (t.dbName.lower(), t.tableName.lower()):
                    raise InvalidObject(f"A constraint of table {k.db}.{k.table} cannot be made with table "
                                        f"{t.dbName}.{t.tableName}")
            if kind not in c.KINDS:
                raise MetaError(f"Unknown constraint type {kind}")

        def then(tx: Tx, made: m.Table) -> None:
            for kind in CREATE_ORDER:
                cols = by_kind.get(kind) or ()
                if cols:
                    self._add(tx, kind, cols, made, claimed)
        return then

    # ---- reads ------------------------------------------------------------------------------------------

    def get_constraints(self, kind: int, db: str, table: str) -> list[c.KeyColumn]:
        """The table's constraints of a kind other than foreign keys (none for a missing table, as Hive)."""
        if kind == c.FOREIGN_KEY:
            return self.get_foreign_keys(None, None, db, table)
        with self._read() as tx:
            ref = tx.table_ref(_norm(db), _norm(table))
            return [] if ref is None else tx.constraints().read(kind, tbl_id=ref.TBL_ID)

    def get_foreign_keys(self, parent_db: str | None, parent_table: str | None, db: str | None,
                         table: str | None) -> list[c.KeyColumn]:
        """The foreign keys on a table (`db`.`table`) and/or referencing a parent table; none when a named
        table is missing, or when neither is named."""
        with self._read() as tx:
            ids: list[int | None] = []
            for d, n in ((parent_db, parent_table), (db, table)):
                if not n:
                    ids.append(None)
                    continue
                ref = tx.table_ref(_norm(d), _norm(n))
                if ref is None:
                    return []
                ids.append(ref.TBL_ID)
            parent_id, child_id = ids
            if parent_id is None and child_id is None:
                return []
            cq = tx.constraints()
            out = cq.read(c.FOREIGN_KEY, parent_id=parent_id, child_id=child_id)
            pk_names: dict[tuple[str | None, str | None], str | None] = {}
            for k in out:
                key = (k.ref_db, k.ref_table)
                if key not in pk_names:
                    ref = tx.table_ref(k.ref_db or "", k.ref_table or "")
                    names = cq.names_of(ref.TBL_ID, c.PRIMARY_KEY) if ref is not None else []
                    pk_names[key] = names[0] if names else None
                k.ref_name = pk_names[key]
            return out

    def get_all_constraints(self, db: str, table: str) -> dict[int, list[c.KeyColumn]]:
        """Every kind's constraints of the table (get_all_table_constraints), foreign keys those on it."""
        return {kind: self.get_constraints(kind, db, table) for kind in c.KINDS}

    # ---- drop -------------------------------------------------------------------------------------------

    def drop_constraint(self, db: str, table: str, name: str) -> None:
        """Drop the named constraint of the table (or a foreign key referencing it), with its event."""
        db_n, table_n, name_n = _norm(db), _norm(table), _norm(name)
        with self.transaction() as tx:
            ref = tx.table_ref(db_n, table_n)
            if ref is None or not name_n or tx.constraints().delete(ref.TBL_ID, name_n) == 0:
                raise NoSuchObject(f"The constraint: {name_n} does not exist for the associated table: "
                                   f"{db_n}.{table_n}")
            self._event(tx, EventType.DROP_CONSTRAINT, db_n, table_n, self.msg.drop_constraint(db_n, table_n, name_n))
