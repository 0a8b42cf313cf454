"""SQL of table constraints (KEY_CONSTRAINTS; schema.py, core/constraints.py).

Run inside a store transaction (Tx.constraints()); the rules (the columns exist, names are unique in a
database, a foreign key references a key of its parent) are the catalog's (catalog/constraints.py). A column is
stored as Hive stores it: (CD_ID, INTEGER_IDX) of the table's columns, or a NULL CD_ID and the index of a
partition key; names are read back through COLUMNS_V2 and PARTITION_KEYS, so a rename of the table needs
nothing here, and an alteration of its columns moves its constraints to the new columns (`follow_columns`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..core import constraints as c
from ..core.model import FieldSchema
from . import schema as s

K = s.key_constraints.c


@dataclass
class ColumnRef:
    """A table's column as KEY_CONSTRAINTS holds it: the table, its column descriptor (None for a partition
    key) and the column's index there."""

    tbl_id: int
    cd_id: int | None
    index: int


@dataclass
class KeyRow:
    """One row to insert: a column of a constraint (`child`: a foreign key's own column)."""

    name: str
    kind: int
    position: int
    parent: ColumnRef
    flags: int
    child: ColumnRef | None = None
    update_rule: int | None = None
    delete_rule: int | None = None
    value: str | None = None


def _side(prefix: str) -> tuple[Any, Any, Any, Any, sa.ColumnElement[Any]]:
    """TBLS, DBS, COLUMNS_V2 and PARTITION_KEYS aliased for one side of a constraint, and its column's name."""
    t = s.tbls.alias(f"{prefix}_t")
    d = s.dbs.alias(f"{prefix}_d")
    cv = s.columns_v2.alias(f"{prefix}_c")
    pk = s.partition_keys.alias(f"{prefix}_k")
    return t, d, cv, pk, sa.func.coalesce(cv.c.COLUMN_NAME, pk.c.PKEY_NAME)


def _join(base: Any, prefix: str, tbl_col: Any, cd_col: Any, idx_col: Any, outer: bool = False) -> tuple[Any, ...]:
    t, d, cv, pk, name = _side(prefix)
    j = base.join(t, t.c.TBL_ID == tbl_col, isouter=outer).join(d, d.c.DB_ID == t.c.DB_ID, isouter=outer)
    j = j.outerjoin(cv, sa.and_(cv.c.CD_ID == cd_col, cv.c.INTEGER_IDX == idx_col))
    j = j.outerjoin(pk, sa.and_(cd_col.is_(None), pk.c.TBL_ID == tbl_col, pk.c.INTEGER_IDX == idx_col))
    return j, t, d, name


class ConstraintQueries:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def name_taken(self, db_id: int, name: str) -> bool:
        """Whether a constraint of a table of the database (a foreign key's: its child table) has this name."""
        owner = sa.func.coalesce(K.CHILD_TBL_ID, K.PARENT_TBL_ID)
        q = (sa.select(K.KC_ID).select_from(s.key_constraints.join(s.tbls, s.tbls.c.TBL_ID == owner))
             .where(K.CONSTRAINT_NAME == name, s.tbls.c.DB_ID == db_id).limit(1))
        return self.conn.execute(q).first() is not None

    def names_of(self, tbl_id: int, kind: int) -> list[str]:
        """The names of the table's own constraints of a kind (a foreign key's: those on the table)."""
        owner = K.CHILD_TBL_ID if kind == c.FOREIGN_KEY else K.PARENT_TBL_ID
        q = (sa.select(K.CONSTRAINT_NAME).where(owner == tbl_id, K.CONSTRAINT_TYPE == kind).distinct()
             .order_by(K.CONSTRAINT_NAME))
        return [r[0] for r in self.conn.execute(q)]

    def insert(self, rows: Sequence[KeyRow]) -> None:
        if not rows:
            return
        self.conn.execute(s.key_constraints.insert(), [dict(
            CHILD_CD_ID=r.child.cd_id if r.child else None, CHILD_INTEGER_IDX=r.child.index if r.child else None,
            CHILD_TBL_ID=r.child.tbl_id if r.child else None, PARENT_CD_ID=r.parent.cd_id,
            PARENT_INTEGER_IDX=r.parent.index, PARENT_TBL_ID=r.parent.tbl_id, POSITION=r.position,
            CONSTRAINT_NAME=r.name, CONSTRAINT_TYPE=r.kind, UPDATE_RULE=r.update_rule, DELETE_RULE=r.delete_rule,
            ENABLE_VALIDATE_RELY=r.flags, DEFAULT_VALUE=r.value) for r in rows])

    def read(self, kind: int, tbl_id: int | None = None, parent_id: int | None = None,
             child_id: int | None = None) -> list[c.KeyColumn]:
        """The columns of the constraints of a kind on a table (`tbl_id`), ordered by name and position; for
        foreign keys, those from `child_id` and/or to `parent_id`."""
        base = s.key_constraints
        j, pt, pd, pname = _join(base, "p", K.PARENT_TBL_ID, K.PARENT_CD_ID, K.PARENT_INTEGER_IDX)
        cols: list[Any] = [K.CONSTRAINT_NAME, K.POSITION, K.ENABLE_VALIDATE_RELY, K.DEFAULT_VALUE, K.UPDATE_RULE,
                           K.DELETE_RULE, pd.c.NAME.label("p_db"), pt.c.TBL_NAME.label("p_table"),
                           pname.label("p_col")]
        where = [K.CONSTRAINT_TYPE == kind]
        if kind == c.FOREIGN_KEY:
            j, ct, cd, cname = _join(j, "c", K.CHILD_TBL_ID, K.CHILD_CD_ID, K.CHILD_INTEGER_IDX)
            cols += [cd.c.NAME.label("c_db"), ct.c.TBL_NAME.label("c_table"), cname.label("c_col")]
            if parent_id is not None:
                where.append(K.PARENT_TBL_ID == parent_id)
            if child_id is not None:
                where.append(K.CHILD_TBL_ID == child_id)
        else:
            where.append(K.PARENT_TBL_ID == tbl_id)
        q = sa.select(*cols).select_from(j).where(*where).order_by(K.CONSTRAINT_NAME, K.POSITION)
        out = []
        for r in self.conn.execute(q):
            if kind == c.FOREIGN_KEY:
                k = c.KeyColumn(kind, r.c_db, r.c_table, r.c_col, r.CONSTRAINT_NAME, int(r.POSITION),
                                ref_db=r.p_db, ref_table=r.p_table, ref_column=r.p_col,
                                update_rule=r.UPDATE_RULE, delete_rule=r.DELETE_RULE)
            else:
                k = c.KeyColumn(kind, r.p_db, r.p_table, r.p_col, r.CONSTRAINT_NAME, int(r.POSITION),
                                value=r.DEFAULT_VALUE)
            k.set_flags(int(r.ENABLE_VALIDATE_RELY))
            out.append(k)
        return out

    def delete(self, tbl_id: int, name: str) -> int:
        """Delete the constraint of this name on the table or referencing it; how many rows went."""
        q = s.key_constraints.delete().where(K.CONSTRAINT_NAME == name,
                                             sa.or_(K.PARENT_TBL_ID == tbl_id, K.CHILD_TBL_ID == tbl_id))
        return int(self.conn.execute(q).rowcount or 0)

    def follow_columns(self, tbl_id: int, old_cd: int | None, new_cd: int, old_cols: Sequence[FieldSchema],
                       new_cols: Sequence[FieldSchema]) -> None:
        """The table's columns moved to a new descriptor: its constraints' columns follow them by name; a
        constraint one of whose columns is gone goes with it (Hive drops the constraints of a descriptor it
        drops)."""
        if old_cd is None:
            return
        at = {col.name.lower(): i for i, col in enumerate(new_cols)}
        gone: set[tuple[str, int]] = set()
        for tbl_col, cd_col, idx_col in ((K.PARENT_TBL_ID, K.PARENT_CD_ID, K.PARENT_INTEGER_IDX),
                                         (K.CHILD_TBL_ID, K.CHILD_CD_ID, K.CHILD_INTEGER_IDX)):
            owner = sa.func.coalesce(K.CHILD_TBL_ID, K.PARENT_TBL_ID)
            rows = self.conn.execute(sa.select(K.KC_ID, idx_col, K.CONSTRAINT_NAME, owner)
                                     .where(tbl_col == tbl_id, cd_col == old_cd)).all()
            for kc_id, idx, name, owner_id in rows:
                col = old_cols[idx].name.lower() if 0 <= idx < len(old_cols) else None
                if col is None or col not in at:
                    gone.add((name, int(owner_id)))
                    continue
                self.conn.execute(s.key_constraints.update().where(K.KC_ID == kc_id)
                                  .values({cd_col.name: new_cd, idx_col.name: at[col]}))
        for name, owner_id in gone:
            self.conn.execute(s.key_constraints.delete().where(
                K.CONSTRAINT_NAME == name, sa.func.coalesce(K.CHILD_TBL_ID, K.PARENT_TBL_ID) == owner_id))
