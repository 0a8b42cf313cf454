"""Roles and privileges: Hive's model, its management calls, and each principal's effective rights.

The model (README "Authorization"): roles (names case-insensitive, stored lower-cased; `public` holds everyone,
`admin` the administrators: the users of the `admin_users` setting are granted it at start-up), role grants
(to users, groups and roles; WITH ADMIN OPTION lets the grantee grant and revoke the role; a grant that would
make a role a member of itself, directly or through other roles, is refused), and privileges on the whole
metastore (GLOBAL), a database or a table, each WITH GRANT OPTION or not. A privilege on a level holds on the
levels below it (a database's SELECT reads each of its tables), as Hive's legacy authorizer checks them.

Who may manage (with authorization "sql"; with "none" anyone may, as Hive without an authorizer):
- roles: create, drop, list all names: admin; grant, revoke, list members of a role: admin or a holder of the
  role WITH ADMIN OPTION; a principal's roles: admin or the principal itself;
- privileges: grant: admin, the object's owner, or a holder of the privilege (or ALL) WITH GRANT OPTION on the
  object or a level above it; revoke: admin, the object's owner, or the grant's grantor (as Hive's SQL-standard
  authorizer: a holder WITH GRANT OPTION takes back what it gave, not what others did); list a principal's:
  admin or the principal itself. An object owned
  by the role `public` (the `default` database) is everyone's to create in, no one's to grant on as its owner.

`rights(principal)` is what the authorizer (catalog/authz.py) checks against: the principal's roles (the
closure over role grants, `public` included) and every privilege granted to it, its groups and its roles, kept
`ttl` seconds per principal. A grant or revoke through this process clears the cache at once; another server
process on the same store sees it within `ttl` (README: several servers share one store).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..core import identity
from ..core import model as m
from ..core.errors import AccessDenied, MetaError, NoSuchObject
from ..store.privileges import PrivilegeQueries
from ..store.store import Store

RESERVED_ROLES = ("all", "default", "none", m.PUBLIC, m.ADMIN)
MAX_CACHED = 10_000  # principals whose rights are kept (names are a client's when set_ugi is believed)
_NAME_LEN = 128  # a role's or principal's name, as the store keeps it


def _now() -> int:
    return int(time.time())


@dataclass(frozen=True)
class Rights:
    """What one principal holds: its roles and every privilege granted to it, its groups or its roles."""

    user: str
    groups: tuple[str, ...]
    roles: frozenset[str]
    admin: bool
    glob: frozenset[str] = frozenset()
    dbs: dict[str, frozenset[str]] = field(default_factory=dict)
    tables: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    table_dbs: frozenset[str] = frozenset()  # databases in which some table privilege is held

    @property
    def principals(self) -> list[tuple[str, int]]:
        """(name, PrincipalType) of the user, its groups and its roles: whose grants and ownership count."""
        return [(self.user, m.USER), *((g, m.GROUP) for g in self.groups), *((r, m.ROLE) for r in self.roles)]

    def holds(self, any_of: Iterable[str], db: str | None = None, table: str | None = None) -> bool:
        """Whether one of `any_of` is granted on the object or a level above it."""
        if self.admin or not self.glob.isdisjoint(any_of):
            return True
        if db is None:
            return False
        held = self.dbs.get(db)
        if held is not None and not held.isdisjoint(any_of):
            return True
        held = self.tables.get((db, table)) if table is not None else None
        return held is not None and not held.isdisjoint(any_of)

    def owner_is(self, owner: tuple[str | None, int] | None) -> bool:
        """Whether an object's (ownerName, ownerType) is this principal, one of its groups or roles."""
        if owner is None or owner[0] is None:
            return False
        name, kind = owner
        if name is None:
            return False
        if kind == m.ROLE:
            return name.lower() in self.roles
        if kind == m.GROUP:
            return name in self.groups
        return name == self.user


SERVER_RIGHTS = Rights(identity.SERVER.name, (), frozenset({m.PUBLIC, m.ADMIN}), True)


def _principal_type(value: int | None) -> int:
    if value not in m.PRINCIPAL_TYPES:
        raise MetaError(f"Unknown principal type {value}: USER (1), ROLE (2) or GROUP (3)")
    return value


def _name(value: str | None, what: str) -> str:
    if not value or len(value) > _NAME_LEN or any(ord(c) < 32 for c in value):
        raise MetaError(f"{what} must be 1 to {_NAME_LEN} printable characters")
    return value


def _role_name(value: str | None) -> str:
    return _name(value, "A role name").lower()


def _principal_name(name: str | None, ptype: int) -> str:
    n = _name(name, "A principal name")
    return n.lower() if ptype == m.ROLE else n


def principal_text(name: str, ptype: int) -> str:
    return f"Principal [name={name}, type={m.PRINCIPAL_TYPES.get(ptype, ptype)}]"


_SHOWN = 256  # characters of a client's database or table name an error message repeats


def object_text(obj: m.ObjectRef) -> str:
    """Hive's rendering of an object in an error (ObjectRef.describe), its names cut after _SHOWN characters: a
    name is the client's and may be as long as a request."""
    def cut(name: str | None) -> str | None:
        return name if name is None or len(name) <= _SHOWN else name[:_SHOWN] + "..."
    return m.ObjectRef(obj.type, cut(obj.db), cut(obj.table)).describe()


class Privileges:
    def __init__(self, store: Store, admin_users: Sequence[str] = (), enforce: bool = False,
                 ttl: float = 2.0) -> None:
        self.store = store
        self.admin_users = frozenset(u for u in admin_users if u)
        self.enforce = enforce  # authorization "sql": management calls check the caller too
        self.ttl = ttl
        self._cache: dict[tuple[str, tuple[str, ...]], tuple[float, Rights]] = {}
        self._owners: dict[tuple[str, str | None], tuple[float, tuple[str | None, int]]] = {}
        self._lock = threading.Lock()
        self.on_change: list[Callable[[], None]] = []

    # ---- effective rights ---------------------------------------------------------------------------------

    def rights(self, p: identity.Principal | None = None) -> Rights:
        p = p or identity.current()
        if p.method == identity.INTERNAL:
            return SERVER_RIGHTS
        key = (p.name, p.groups)
        now = time.monotonic()
        hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        with self.store.read() as tx:
            rights = self._load(tx.privileges(), p.name, p.groups)
        with self._lock:
            if len(self._cache) >= MAX_CACHED:
                self._cache.clear()
            self._cache[key] = (now + self.ttl, rights)
        return rights

    def owner(self, db: str, table: str | None = None) -> tuple[str | None, int] | None:
        """(ownerName, ownerType) of a table (or, table None, of a database); None: no such object. Kept `ttl`
        seconds like the rights (an owner change or a drop through this process clears it at once)."""
        key = (db, table)
        now = time.monotonic()
        hit = self._owners.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        with self.store.read() as tx:
            q = tx.privileges()
            found = q.table_owner(db, table) if table is not None else q.database_owner(db)
        if found is not None:  # a missing object is not remembered: it may be created next
            with self._lock:
                if len(self._owners) >= MAX_CACHED:
                    self._owners.clear()
                self._owners[key] = (now + self.ttl, found)
        return found

    def forget_owner(self, db: str, table: str | None = None) -> None:
        """Forget the cached owner of a table or database (after an alter of it in this process)."""
        with self._lock:
            self._owners.pop((db.lower(), table.lower() if table is not None else None), None)

    def invalidate(self) -> None:
        """Forget every principal's rights (after a grant, a revoke, a drop or rename in this process)."""
        with self._lock:
            self._cache.clear()
            self._owners.clear()
        for callback in self.on_change:
            callback()

    def _roles_of(self, q: PrivilegeQueries, principals: list[tuple[str, int]]) -> set[str]:
        """The roles of `principals`, through every role grant (`public` for everyone)."""
        roles = {m.PUBLIC}
        frontier = [*principals, (m.PUBLIC, m.ROLE)]
        while frontier:
            new = {g.roleName for g in q.role_grants(frontier)} - roles
            roles |= new
            frontier = [(r, m.ROLE) for r in new]
        return roles

    def _load(self, q: PrivilegeQueries, user: str, groups: tuple[str, ...]) -> Rights:
        roles = self._roles_of(q, [(user, m.USER), *((g, m.GROUP) for g in groups)])
        admin = m.ADMIN in roles or user in self.admin_users
        base = Rights(user, groups, frozenset(roles), admin)
        glob: set[str] = set()
        dbs: dict[str, set[str]] = {}
        tables: dict[tuple[str, str], set[str]] = {}
        for g in q.grants(base.principals):
            o = g.object
            if o.type == m.GLOBAL:
                glob.add(g.privilege)
            elif o.type == m.DATABASE and o.db is not None:
                dbs.setdefault(o.db, set()).add(g.privilege)
            elif o.db is not None and o.table is not None:
                tables.setdefault((o.db, o.table), set()).add(g.privilege)
        return Rights(user, groups, base.roles, admin, frozenset(glob), {k: frozenset(v) for k, v in dbs.items()},
                      {k: frozenset(v) for k, v in tables.items()}, frozenset(d for d, _ in tables))

    # ---- start-up -----------------------------------------------------------------------------------------

    def bootstrap(self) -> None:
        """The built-in roles, and the admin role for each of the admin_users (Hive's start-up duty)."""
        with self.store.write() as tx:
            q = tx.privileges()
            for role in (m.PUBLIC, m.ADMIN):
                if q.role_id(role) is None:
                    q.insert_role(role, m.ADMIN, _now())
            admin_id = q.role_id(m.ADMIN)
            assert admin_id is not None
            have = {(g.principalName, g.principalType) for g in q.role_grants(role=m.ADMIN)}
            for user in sorted(self.admin_users):
                if (user, m.USER) not in have:
                    q.grant_role(admin_id, m.RoleGrant(m.ADMIN, user, m.USER, True, _now(), m.ADMIN, m.ROLE))
        self.invalidate()

    # ---- who may manage -----------------------------------------------------------------------------------

    def _caller(self) -> tuple[Rights, identity.Principal]:
        p = identity.current()
        return (self.rights(p) if self.enforce else SERVER_RIGHTS), p

    @staticmethod
    def _deny(r: Rights, operation: str, what: str) -> AccessDenied:
        call = identity.current_call()
        if call is not None:
            call.denied = what
        return AccessDenied(f"Permission denied: {principal_text(r.user, m.USER)} does not have following "
                            f"privileges for operation {operation} [{what}]")

    def _require_admin(self, r: Rights, operation: str) -> None:
        if not r.admin:
            call = identity.current_call()
            if call is not None:
                call.objects.append("global")
            raise self._deny(r, operation, "[ADMIN PRIVILEGE] on Object [type=GLOBAL, name=null]")

    def _is_self(self, r: Rights, name: str, ptype: int) -> bool:
        return ((ptype == m.USER and name == r.user) or (ptype == m.GROUP and name in r.groups)
                or (ptype == m.ROLE and name.lower() in r.roles))

    def _administered_role(self, q: PrivilegeQueries, r: Rights, role: str, operation: str) -> int:
        """The id of `role`, which must exist and which the caller must administer (grant and revoke): admin, or
        it holds the role WITH ADMIN OPTION; else AccessDenied for `operation`, or NoSuchObject (told only to an
        administrator: listing the roles is its alone, so no one else learns whether a role exists)."""
        if not (r.admin or any(g.grantOption for g in q.role_grants(r.principals, role=role))):
            raise self._deny(r, operation, f"[ADMIN OPTION] on Role [name={role}]")
        role_id = q.role_id(role)
        if role_id is None:
            raise NoSuchObject(f"Role {role} does not exist")
        return role_id

    # ---- roles --------------------------------------------------------------------------------------------

    def create_role(self, role: m.Role) -> None:
        r, p = self._caller()
        self._require_admin(r, "CREATEROLE")
        name = _role_name(role.roleName)
        if name in RESERVED_ROLES:
            raise MetaError(f"Role name cannot be one of the reserved roles: {[x.upper() for x in RESERVED_ROLES]}")
        with self.store.write() as tx:
            q = tx.privileges()
            if q.role_id(name) is not None:
                raise MetaError(f"Role {name} already exists.")
            q.insert_role(name, role.ownerName if p.method == identity.INTERNAL and role.ownerName else p.name,
                          _now())

    def drop_role(self, name: str) -> None:
        r, _ = self._caller()
        self._require_admin(r, "DROPROLE")
        name = _role_name(name)
        if name in (m.PUBLIC, m.ADMIN):
            raise MetaError(f"Role {name} is a built-in role and cannot be dropped")
        with self.store.write() as tx:
            q = tx.privileges()
            role_id = q.role_id(name)
            if role_id is None:
                raise NoSuchObject(f"Role {name} does not exist")
            q.delete_role(role_id)
        self.invalidate()

    def role_names(self) -> list[str]:
        r, _ = self._caller()
        self._require_admin(r, "SHOW_ROLES")
        with self.store.read() as tx:
            return [x.roleName for x in tx.privileges().roles()]

    def grant_role(self, role: str, name: str, ptype: int, grant_option: bool = False) -> None:
        r, p = self._caller()
        role, ptype = _role_name(role), _principal_type(ptype)
        name = _principal_name(name, ptype)
        if role == m.PUBLIC:
            raise MetaError("No user can be added to public: it holds everyone already")
        with self.store.write() as tx:
            q = tx.privileges()
            role_id = self._administered_role(q, r, role, "GRANT_ROLE")
            if ptype == m.ROLE:
                if q.role_id(name) is None:
                    raise NoSuchObject(f"Role {name} does not exist")
                if name == role or name in _member_of(q.role_edges(), role):
                    raise MetaError(f"Cannot grant role {role} to {name}: it would make a cycle of role grants")
            existing = [g for g in q.role_grants([(name, ptype)], role=role)]
            if existing:
                if grant_option and not existing[0].grantOption:
                    q.set_role_admin_option(role_id, name, ptype, True)
                else:
                    raise MetaError(f"{principal_text(name, ptype)} already has the role {role}")
            else:
                grantor, gtype = ((p.name, m.USER) if p.method != identity.INTERNAL else (m.ADMIN, m.ROLE))
                q.grant_role(role_id, m.RoleGrant(role, name, ptype, grant_option, _now(), grantor, gtype))
        self.invalidate()

    def revoke_role(self, role: str, name: str, ptype: int, admin_option_only: bool = False) -> None:
        r, _ = self._caller()
        role, ptype = _role_name(role), _principal_type(ptype)
        name = _principal_name(name, ptype)
        with self.store.write() as tx:
            q = tx.privileges()
            role_id = self._administered_role(q, r, role, "REVOKE_ROLE")
            n = (q.set_role_admin_option(role_id, name, ptype, False) if admin_option_only
                 else q.revoke_role(role_id, name, ptype))
            if not n:
                raise MetaError(f"Cannot find role grant of {role} to {principal_text(name, ptype)}")
        self.invalidate()

    def list_roles(self, name: str, ptype: int) -> list[m.Role]:
        """The roles granted to a principal directly (and `public`, which everyone holds)."""
        grants = self.role_grants_for_principal(name, ptype)
        with self.store.read() as tx:
            roles = {x.roleName: x for x in tx.privileges().roles()}
        names = {g.roleName for g in grants}
        if ptype != m.ROLE:
            names.add(m.PUBLIC)
        return [roles[n] for n in sorted(names) if n in roles]

    def role_grants_for_principal(self, name: str, ptype: int) -> list[m.RoleGrant]:
        r, _ = self._caller()
        ptype = _principal_type(ptype)
        name = _principal_name(name, ptype)
        if not (r.admin or self._is_self(r, name, ptype)):
            raise self._deny(r, "SHOW_ROLE_GRANT", f"[ADMIN PRIVILEGE] on {principal_text(name, ptype)}")
        with self.store.read() as tx:
            return tx.privileges().role_grants([(name, ptype)])

    def principals_in_role(self, role: str) -> list[m.RoleGrant]:
        r, _ = self._caller()
        role = _role_name(role)
        with self.store.read() as tx:
            q = tx.privileges()
            self._administered_role(q, r, role, "SHOW_ROLE_PRINCIPALS")
            return q.role_grants(role=role)

    # ---- privileges ---------------------------------------------------------------------------------------

    @staticmethod
    def _ref(obj: m.ObjectRef) -> m.ObjectRef:
        """The object a privilege is on, checked and its names lower-cased (whether it exists is not looked at:
        that is told only to who may grant on it)."""
        if obj.type not in m.OBJECT_TYPES:
            raise MetaError(f"Privileges are kept on the metastore (GLOBAL), a DATABASE or a TABLE, not on object "
                            f"type {obj.type}")
        obj = m.ObjectRef(obj.type, (obj.db or "").lower() or None if obj.type != m.GLOBAL else None,
                          (obj.table or "").lower() or None if obj.type == m.TABLE else None)
        if (obj.type != m.GLOBAL and not obj.db) or (obj.type == m.TABLE and not obj.table):
            raise MetaError("A DATABASE object needs a database name, a TABLE object a database and a table name")
        return obj

    @staticmethod
    def _object_id(q: PrivilegeQueries, obj: m.ObjectRef) -> int:
        object_id = q.object_id(obj)
        if object_id is None:
            raise NoSuchObject(f"{object_text(obj)} does not exist")
        return object_id

    @staticmethod
    def _owns(q: PrivilegeQueries, r: Rights, obj: m.ObjectRef) -> bool:
        """Whether the caller owns the database or table `obj` as an owner that grants on it: not through the role
        `public`, whose ownership (the default database's) lets everyone create in it, not grant, list or revoke
        every privilege on it."""
        if obj.type == m.TABLE and obj.db and obj.table:
            owner = q.table_owner(obj.db, obj.table)
        elif obj.type == m.DATABASE and obj.db:
            owner = q.database_owner(obj.db)
        else:
            return False
        if owner is None or (owner[1] == m.ROLE and (owner[0] or "").lower() == m.PUBLIC):
            return False
        return r.owner_is(owner)

    def _may_grant(self, q: PrivilegeQueries, r: Rights, obj: m.ObjectRef, privilege: str) -> bool:
        """admin, the object's owner, or a holder of the privilege (or ALL) WITH GRANT OPTION on it or above."""
        if r.admin or self._owns(q, r, obj):
            return True
        levels = [m.GLOBAL_OBJECT]
        if obj.type != m.GLOBAL:
            levels.append(m.ObjectRef(m.DATABASE, obj.db))
        if obj.type == m.TABLE:
            levels.append(obj)
        for level in levels:
            for g in q.grants(r.principals, level):
                if g.grantOption and g.privilege in (privilege, "ALL"):
                    return True
        return False

    def _grants_in(self, grants: Sequence[m.PrivilegeGrant]) -> list[m.PrivilegeGrant]:
        """The grants checked and their names normalized (nothing looked up: see _existing)."""
        out = []
        for g in grants:
            obj = self._ref(g.object)
            ptype = _principal_type(g.principalType)
            name = _principal_name(g.principalName, ptype)
            privilege = (g.privilege or "").strip().upper()
            if privilege not in m.PRIVILEGES:
                raise MetaError(f"Privilege {g.privilege!r:.80} is not one of {', '.join(m.PRIVILEGES)}")
            out.append(m.PrivilegeGrant(obj, name, ptype, privilege, g.grantOption, g.grantor, g.grantorType,
                                        g.createTime))
        return out

    def _existing(self, q: PrivilegeQueries, grants: list[m.PrivilegeGrant]) -> list[tuple[m.PrivilegeGrant, int]]:
        """The grants with their objects' ids; NoSuchObject for a missing object or grantee role (asked after the
        caller is found to be allowed: it is not told what exists of objects it may not see)."""
        out = []
        for g in grants:
            if g.principalType == m.ROLE and q.role_id(g.principalName) is None:
                raise NoSuchObject(f"Role {g.principalName} does not exist")
            out.append((g, self._object_id(q, g.object)))
        return out

    def _grantable(self, q: PrivilegeQueries, r: Rights, grants: Sequence[m.PrivilegeGrant],
                   operation: str) -> list[tuple[m.PrivilegeGrant, int]]:
        """The grants (checked, with their objects' ids) the caller may grant, all of them: else AccessDenied
        for `operation` before anything is changed."""
        out = self._grants_in(grants)
        for g in out:
            if not self._may_grant(q, r, g.object, g.privilege):
                raise self._deny(r, operation, f"[{g.privilege} with grant] on {object_text(g.object)}")
        return self._existing(q, out)

    def _revocable(self, q: PrivilegeQueries, r: Rights,
                   grants: Sequence[m.PrivilegeGrant]) -> list[tuple[m.PrivilegeGrant, int]]:
        """The grants (checked, with their objects' ids) the caller may revoke, all of them: an administrator
        any, the object's owner any on it, anyone else the ones it granted; else AccessDenied before anything is
        changed."""
        out = self._grants_in(grants)
        for g in out:
            if r.admin or self._owns(q, r, g.object):
                continue
            made = q.grants([(g.principalName, g.principalType)], g.object)
            if not any(x.privilege == g.privilege and x.grantor == r.user and x.grantorType == m.USER for x in made):
                raise self._deny(r, "REVOKE_PRIVILEGE", f"[{g.privilege} granted by {principal_text(r.user, m.USER)}]"
                                                        f" on {object_text(g.object)}")
        return self._existing(q, out)

    def grant(self, grants: Sequence[m.PrivilegeGrant]) -> None:
        r, p = self._caller()
        with self.store.write() as tx:
            q = tx.privileges()
            for g, object_id in self._grantable(q, r, grants, "GRANT_PRIVILEGE"):
                had = q.find_grant(g.object, object_id, g.principalName, g.principalType, g.privilege)
                if had is not None:
                    if g.grantOption and not had:
                        q.update_grant_option(g.object, object_id, g.principalName, g.principalType, g.privilege,
                                              True)
                        continue
                    raise MetaError(f"{g.privilege} is already granted on {object_text(g.object)} to "
                                    f"{principal_text(g.principalName, g.principalType)}")
                if p.method == identity.INTERNAL:
                    grantor, gtype = (g.grantor or m.ADMIN, g.grantorType if g.grantor else m.ROLE)
                else:
                    grantor, gtype = p.name, m.USER
                q.insert_grant(m.PrivilegeGrant(g.object, g.principalName, g.principalType, g.privilege,
                                                g.grantOption, grantor, gtype, _now()), object_id)
        self.invalidate()

    def revoke(self, grants: Sequence[m.PrivilegeGrant], grant_option_only: bool = False) -> None:
        r, _ = self._caller()
        with self.store.write() as tx:
            q = tx.privileges()
            for g, object_id in self._revocable(q, r, grants):
                if grant_option_only:
                    n = q.update_grant_option(g.object, object_id, g.principalName, g.principalType, g.privilege,
                                              False)
                else:
                    n = q.delete_grant(g.object, object_id, g.principalName, g.principalType, g.privilege)
                if not n:
                    raise MetaError(f"No {g.privilege} privilege on {object_text(g.object)} is granted to "
                                    f"{principal_text(g.principalName, g.principalType)}")
        self.invalidate()

    def list_privileges(self, name: str | None, ptype: int | None, obj: m.ObjectRef | None) -> list[m.PrivilegeGrant]:
        """The grants to one principal (name None: to every principal, on `obj`), on `obj` or on every object (a
        missing object has none, as in Hive)."""
        r, _ = self._caller()
        principals = None
        if name is not None:
            ptype = _principal_type(ptype)
            name = _principal_name(name, ptype)
            principals = [(name, ptype)]
        with self.store.read() as tx:
            q = tx.privileges()
            if obj is not None:
                obj = self._ref(obj)
            allowed = r.admin or (name is not None and self._is_self(r, name, ptype or m.USER)) or (
                obj is not None and self._owns(q, r, obj))
            if not allowed:
                raise self._deny(r, "SHOW_GRANT", "[ADMIN PRIVILEGE] on Object [type=GLOBAL, name=null]")
            return q.grants(principals, obj)

    def privilege_set(self, obj: m.ObjectRef, user: str | None,
                      groups: Sequence[str]) -> dict[str, dict[str, list[m.PrivilegeGrant]]]:
        """Hive's PrincipalPrivilegeSet of a user on an object: its own grants, its groups' and its roles'."""
        r, _ = self._caller()
        user = _name(user, "A user name")
        groups = tuple(groups or ())
        if not (r.admin or (user == r.user and set(groups) <= set(r.groups))):
            raise self._deny(r, "SHOW_GRANT", f"[ADMIN PRIVILEGE] on {principal_text(user, m.USER)}")
        with self.store.read() as tx:
            q = tx.privileges()
            obj = self._ref(obj)  # a missing object: no grants, as in Hive
            roles = self._roles_of(q, [(user, m.USER), *((g, m.GROUP) for g in groups)])
            out: dict[str, dict[str, list[m.PrivilegeGrant]]] = {"user": {}, "group": {}, "role": {}}
            kinds = {m.USER: "user", m.GROUP: "group", m.ROLE: "role"}
            principals = [(user, m.USER), *((g, m.GROUP) for g in groups), *((x, m.ROLE) for x in sorted(roles))]
            for g in q.grants(principals, obj):
                out[kinds[g.principalType]].setdefault(g.principalName, []).append(g)
            return out


def _member_of(edges: Sequence[tuple[str, str]], start: str) -> set[str]:
    """The roles `start` belongs to through role grants (granting one of them to `start` makes a cycle)."""
    up: dict[str, list[str]] = {}
    for role, member in edges:
        up.setdefault(member, []).append(role)
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in up.get(todo.pop(), []):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen

