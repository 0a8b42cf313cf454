"""SQL of roles, role grants and privileges (ROLES, ROLE_MAP, GLOBAL_PRIVS, DB_PRIVS, TBL_PRIVS; schema.py).

Run inside a store transaction (Tx.privileges()); the rules (who may grant what, cycles, reserved names) are
the catalog's (catalog/privileges.py). Role names are stored lower-cased, as Hive does; principal and grantor
types as Hive's PrincipalType names (USER, ROLE, GROUP). A database's or table's grants key on its id, so they
follow a rename and go with a drop (ON DELETE CASCADE).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..core import model as m
from . import schema as s

R = s.roles.c
RM = s.role_map.c
_TYPE_NAMES = m.PRINCIPAL_TYPES
_TYPE_CODES = {v: k for k, v in _TYPE_NAMES.items()}


def _type(code: int) -> str:
    return _TYPE_NAMES[code]


def _code(name: str | None) -> int:
    return _TYPE_CODES.get(name or "", m.USER)


def _grant(obj: m.ObjectRef, r: Any, priv: str) -> m.PrivilegeGrant:
    return m.PrivilegeGrant(obj, r.PRINCIPAL_NAME, _code(r.PRINCIPAL_TYPE), getattr(r, priv), bool(r.GRANT_OPTION),
                            r.GRANTOR, _code(r.GRANTOR_TYPE), int(r.CREATE_TIME))


def _role_grant(r: Any) -> m.RoleGrant:
    return m.RoleGrant(r.ROLE_NAME, r.PRINCIPAL_NAME, _code(r.PRINCIPAL_TYPE), bool(r.GRANT_OPTION), int(r.ADD_TIME),
                       r.GRANTOR, _code(r.GRANTOR_TYPE))


class PrivilegeQueries:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # ---- roles --------------------------------------------------------------------------------------------

    def role_id(self, name: str) -> int | None:
        v = self.conn.execute(sa.select(R.ROLE_ID).where(R.ROLE_NAME == name)).scalar()
        return None if v is None else int(v)

    def roles(self) -> list[m.Role]:
        rows = self.conn.execute(sa.select(R.ROLE_NAME, R.CREATE_TIME, R.OWNER_NAME).order_by(R.ROLE_NAME))
        return [m.Role(r.ROLE_NAME, int(r.CREATE_TIME), r.OWNER_NAME) for r in rows]

    def insert_role(self, name: str, owner: str | None, now: int) -> None:
        self.conn.execute(s.roles.insert().values(ROLE_NAME=name, OWNER_NAME=owner, CREATE_TIME=now))

    def delete_role(self, role_id: int) -> None:
        """The role, its grants to principals, and its grants as a principal (of roles and privileges)."""
        name = self.conn.execute(sa.select(R.ROLE_NAME).where(R.ROLE_ID == role_id)).scalar()
        self.conn.execute(s.role_map.delete().where(RM.ROLE_ID == role_id))
        if name is not None:
            self.conn.execute(s.role_map.delete().where(RM.PRINCIPAL_NAME == name, RM.PRINCIPAL_TYPE == "ROLE"))
            for t in (s.global_privs, s.db_privs, s.tbl_privs):
                self.conn.execute(t.delete().where(t.c.PRINCIPAL_NAME == name, t.c.PRINCIPAL_TYPE == "ROLE"))
        self.conn.execute(s.roles.delete().where(R.ROLE_ID == role_id))

    def _role_grants(self) -> sa.Select[Any]:
        return sa.select(R.ROLE_NAME, RM.PRINCIPAL_NAME, RM.PRINCIPAL_TYPE, RM.GRANT_OPTION, RM.ADD_TIME, RM.GRANTOR,
                         RM.GRANTOR_TYPE).select_from(s.role_map.join(s.roles, R.ROLE_ID == RM.ROLE_ID))

    def role_grants(self, principals: Sequence[tuple[str, int]] | None = None,
                    role: str | None = None) -> list[m.RoleGrant]:
        """Grants of roles: to any of `principals` ((name, type) pairs), or of `role`, or every one."""
        q = self._role_grants()
        if principals is not None:
            if not principals:
                return []
            q = q.where(sa.or_(*[sa.and_(RM.PRINCIPAL_NAME == n, RM.PRINCIPAL_TYPE == _type(t))
                                 for n, t in principals]))
        if role is not None:
            q = q.where(R.ROLE_NAME == role)
        return [_role_grant(r) for r in self.conn.execute(q.order_by(R.ROLE_NAME, RM.PRINCIPAL_NAME))]

    def role_edges(self) -> list[tuple[str, str]]:
        """(role, member role) of every role granted to a role: the graph cycles are looked for in."""
        q = sa.select(R.ROLE_NAME, RM.PRINCIPAL_NAME).select_from(
            s.role_map.join(s.roles, R.ROLE_ID == RM.ROLE_ID)).where(RM.PRINCIPAL_TYPE == "ROLE")
        return [(r[0], r[1]) for r in self.conn.execute(q)]

    def grant_role(self, role_id: int, g: m.RoleGrant) -> None:
        self.conn.execute(s.role_map.insert().values(
            ROLE_ID=role_id, PRINCIPAL_NAME=g.principalName, PRINCIPAL_TYPE=_type(g.principalType),
            GRANT_OPTION=int(g.grantOption), ADD_TIME=g.grantTime, GRANTOR=g.grantorName,
            GRANTOR_TYPE=_type(g.grantorPrincipalType)))

    def set_role_admin_option(self, role_id: int, name: str, ptype: int, option: bool) -> int:
        return int(self.conn.execute(s.role_map.update().where(
            RM.ROLE_ID == role_id, RM.PRINCIPAL_NAME == name, RM.PRINCIPAL_TYPE == _type(ptype)).values(
            GRANT_OPTION=int(option))).rowcount)

    def revoke_role(self, role_id: int, name: str, ptype: int) -> int:
        return int(self.conn.execute(s.role_map.delete().where(
            RM.ROLE_ID == role_id, RM.PRINCIPAL_NAME == name, RM.PRINCIPAL_TYPE == _type(ptype))).rowcount)

    # ---- privileges ---------------------------------------------------------------------------------------

    @staticmethod
    def _table(obj: m.ObjectRef) -> tuple[sa.Table, str]:
        if obj.type == m.TABLE:
            return s.tbl_privs, "TBL_PRIV"
        if obj.type == m.DATABASE:
            return s.db_privs, "DB_PRIV"
        return s.global_privs, "USER_PRIV"

    def object_id(self, obj: m.ObjectRef) -> int | None:
        """The DB_ID or TBL_ID of a database or table object (None: no such object); 0 for GLOBAL."""
        if obj.type == m.GLOBAL:
            return 0
        d, t = s.dbs.c, s.tbls.c
        if obj.type == m.DATABASE:
            v = self.conn.execute(sa.select(d.DB_ID).where(d.NAME == obj.db)).scalar()
        else:
            v = self.conn.execute(sa.select(t.TBL_ID).select_from(s.tbls.join(s.dbs, d.DB_ID == t.DB_ID)).where(
                d.NAME == obj.db, t.TBL_NAME == obj.table)).scalar()
        return None if v is None else int(v)

    def _where(self, table: sa.Table, priv: str, obj: m.ObjectRef, object_id: int, name: str, ptype: int,
               privilege: str | None = None) -> list[Any]:
        c = table.c
        cond = [c.PRINCIPAL_NAME == name, c.PRINCIPAL_TYPE == _type(ptype)]
        if privilege is not None:
            cond.append(c[priv] == privilege)
        if obj.type == m.TABLE:
            cond.append(c.TBL_ID == object_id)
        elif obj.type == m.DATABASE:
            cond.append(c.DB_ID == object_id)
        return cond

    def find_grant(self, obj: m.ObjectRef, object_id: int, name: str, ptype: int, privilege: str) -> bool | None:
        """The grant option of a privilege granted to a principal on an object; None: not granted."""
        table, priv = self._table(obj)
        v = self.conn.execute(sa.select(table.c.GRANT_OPTION).where(
            *self._where(table, priv, obj, object_id, name, ptype, privilege))).scalar()
        return None if v is None else bool(v)

    def insert_grant(self, g: m.PrivilegeGrant, object_id: int) -> None:
        table, priv = self._table(g.object)
        values: dict[str, Any] = {
            "PRINCIPAL_NAME": g.principalName, "PRINCIPAL_TYPE": _type(g.principalType), priv: g.privilege,
            "GRANT_OPTION": int(g.grantOption), "GRANTOR": g.grantor, "GRANTOR_TYPE": _type(g.grantorType),
            "CREATE_TIME": g.createTime}
        if g.object.type == m.TABLE:
            values["TBL_ID"] = object_id
        elif g.object.type == m.DATABASE:
            values["DB_ID"] = object_id
        self.conn.execute(table.insert().values(**values))

    def update_grant_option(self, obj: m.ObjectRef, object_id: int, name: str, ptype: int, privilege: str,
                            option: bool) -> int:
        table, priv = self._table(obj)
        return int(self.conn.execute(table.update().where(
            *self._where(table, priv, obj, object_id, name, ptype, privilege)).values(
            GRANT_OPTION=int(option))).rowcount)

    def delete_grant(self, obj: m.ObjectRef, object_id: int, name: str, ptype: int, privilege: str) -> int:
        table, priv = self._table(obj)
        return int(self.conn.execute(table.delete().where(
            *self._where(table, priv, obj, object_id, name, ptype, privilege))).rowcount)

    def grants(self, principals: Sequence[tuple[str, int]] | None = None,
               obj: m.ObjectRef | None = None) -> list[m.PrivilegeGrant]:
        """Grants to any of `principals` (every principal: None), on `obj` (GLOBAL: the global grants only;
        None: on every object), with their objects' names."""
        out: list[m.PrivilegeGrant] = []
        if principals is not None and not principals:
            return out
        d, t = s.dbs.c, s.tbls.c
        for level in (m.GLOBAL, m.DATABASE, m.TABLE):
            if obj is not None and obj.type != level:
                continue
            table, priv = self._table(m.ObjectRef(level))
            c = table.c
            if level == m.GLOBAL:
                q = sa.select(table)
            elif level == m.DATABASE:
                q = sa.select(table, d.NAME.label("DB_NAME")).select_from(table.join(s.dbs, d.DB_ID == c.DB_ID))
                if obj is not None:
                    q = q.where(d.NAME == obj.db)
            else:
                q = sa.select(table, d.NAME.label("DB_NAME"), t.TBL_NAME).select_from(
                    table.join(s.tbls, t.TBL_ID == c.TBL_ID).join(s.dbs, d.DB_ID == t.DB_ID))
                if obj is not None:
                    q = q.where(d.NAME == obj.db, t.TBL_NAME == obj.table)
            if principals is not None:
                q = q.where(sa.or_(*[sa.and_(c.PRINCIPAL_NAME == n, c.PRINCIPAL_TYPE == _type(pt))
                                     for n, pt in principals]))
            for r in self.conn.execute(q):
                ref = (m.GLOBAL_OBJECT if level == m.GLOBAL else m.ObjectRef(m.DATABASE, r.DB_NAME)
                       if level == m.DATABASE else m.ObjectRef(m.TABLE, r.DB_NAME, r.TBL_NAME))
                out.append(_grant(ref, r, priv))
        out.sort(key=lambda g: (g.object.type, g.object.db or "", g.object.table or "", g.principalName,
                                g.privilege))
        return out

    # ---- owners (the authorizer's: owners have full rights on their objects) --------------------------------

    def database_owner(self, db: str) -> tuple[str | None, int] | None:
        d = s.dbs.c
        r = self.conn.execute(sa.select(d.OWNER_NAME, d.OWNER_TYPE).where(d.NAME == db)).first()
        return None if r is None else (r[0], _code(r[1]))

    def table_owner(self, db: str, table: str) -> tuple[str | None, int] | None:
        d, t = s.dbs.c, s.tbls.c
        r = self.conn.execute(sa.select(t.OWNER, t.OWNER_TYPE).select_from(s.tbls.join(s.dbs, d.DB_ID == t.DB_ID))
                              .where(d.NAME == db, t.TBL_NAME == table)).first()
        return None if r is None else (r[0], _code(r[1]))

    def owned_tables(self, principals: Sequence[tuple[str, int]], db: str | None = None) -> list[tuple[str, str]]:
        """(database, table) of the tables owned by any of `principals`, in `db` or in every database."""
        if not principals:
            return []
        d, t = s.dbs.c, s.tbls.c
        q = sa.select(d.NAME, t.TBL_NAME).select_from(s.tbls.join(s.dbs, d.DB_ID == t.DB_ID)).where(
            sa.or_(*[sa.and_(t.OWNER == n, t.OWNER_TYPE == _type(pt)) for n, pt in principals]))
        if db is not None:
            q = q.where(d.NAME == db)
        return [(r[0], r[1]) for r in self.conn.execute(q)]

    def owned_databases(self, principals: Sequence[tuple[str, int]]) -> list[str]:
        if not principals:
            return []
        d = s.dbs.c
        q = sa.select(d.NAME).where(sa.or_(*[sa.and_(d.OWNER_NAME == n, d.OWNER_TYPE == _type(pt))
                                             for n, pt in principals]))
        return [r[0] for r in self.conn.execute(q)]
