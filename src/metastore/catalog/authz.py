"""The authorizer: with authorization "sql", every operation of the catalog service is checked against the
caller's rights (catalog/privileges.py) before it runs, whichever front called it (Thrift, REST, catalogd's
pass-through, the serialized fast paths, which read through Catalog.table_version first).

`Authorizer.install(catalog)` replaces each public method of the Catalog (and the lock manager's `lock`) on
that instance with a checked one, by the rule RULES names for it; a public method without a rule stops the
server at start-up, so a new operation cannot go unchecked. With authorization "none" nothing is installed:
the methods are the class's own, at no cost. A check runs once per call: operations that call other operations
(append_partition, alter_tables_cas) are checked at the outside only.

The rules (README "Authorization"; SQL-standard Hive as a data platform expects it). A privilege on a level
holds below it (GLOBAL > DATABASE > TABLE); `admin` holds everything; owners have full rights on their objects:
- read a table, its partitions, statistics, fields: SELECT (or ALL); write partitions, statistics, insert
  events: INSERT (DELETE to drop partitions; UPDATE, INSERT or DELETE for statistics), or ALL;
- create a table in a database: CREATE on the database (or its ownership); alter or drop a table: its
  ownership, except an alter that changes only parameters (statistics, Iceberg's metadata pointer), which
  needs INSERT (or ALL); a rename into another database also needs CREATE there;
- create a database: admin; alter or drop one: its ownership; read one: any privilege on it, on one of its
  tables, or ownership of it or of one of its tables (listings show only those);
- change the owner of a database or table (alter_database, alter_table): admin, as Hive's ALTER ... SET OWNER;
- functions: anyone reads them; create, alter, drop: CREATE on the database, its ownership, or (alter, drop)
  the function's;
- locks: SHARED_READ on a table needs SELECT; SHARED_WRITE/EXCLUSIVE needs INSERT (or UPDATE, DELETE, ALL) or
  ownership; on a database only: seeing it, or CREATE on it for a write lock; show_locks lists the locks on the
  tables and databases the caller sees;
- the notification log (next events, current id, counts): a GLOBAL SELECT (or admin); its consumers and
  retention: admin.
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core import identity
from ..core import model as m
from ..core.errors import AccessDenied
from .privileges import Privileges, Rights, object_text, principal_text

if TYPE_CHECKING:
    from .service import Catalog

READ = ("SELECT", "ALL")
INSERT = ("INSERT", "ALL")
DELETE = ("DELETE", "ALL")
WRITE = ("INSERT", "UPDATE", "DELETE", "ALL")
SEE = ("SELECT", "INSERT", "UPDATE", "DELETE", "ALL")  # any of these makes a table visible
CREATE = ("CREATE", "ALL")
OWNERSHIP = "OBJECT OWNERSHIP"
ADMIN = "ADMIN PRIVILEGE"

# a call is checked once, at the outside: operations it calls on the catalog are part of it
_inside: contextvars.ContextVar[bool] = contextvars.ContextVar("metastore_authz_inside", default=False)

# Hive's operation names, for the error text (others: the method's name, upper-cased)
_OPERATIONS = {
    "create_database": "CREATEDATABASE", "drop_database": "DROPDATABASE", "alter_database": "ALTERDATABASE",
    "get_database": "DESCDATABASE", "create_table": "CREATETABLE", "drop_table": "DROPTABLE",
    "alter_table": "ALTERTABLE_PROPERTIES", "alter_tables_cas": "ALTERTABLE_PROPERTIES",
    "add_partitions": "ALTERTABLE_ADDPARTS", "append_partition": "ALTERTABLE_ADDPARTS",
    "drop_partitions": "ALTERTABLE_DROPPARTS", "alter_partitions": "ALTERPARTITION_PROPERTIES",
    "rename_partition": "ALTERTABLE_RENAMEPART", "update_column_statistics": "ANALYZE_TABLE",
    "set_aggr_stats": "ANALYZE_TABLE",
    "delete_column_statistics": "ANALYZE_TABLE", "fire_insert_event": "QUERY", "create_function": "CREATEFUNCTION",
    "drop_function": "DROPFUNCTION", "alter_function": "CREATEFUNCTION", "lock": "LOCKTABLE",
    "truncate_table": "TRUNCATETABLE", "compact": "ALTERTABLE_COMPACT",
}


class Check:
    """The checks of one call: the caller's rights, the operation's name, the audit record."""

    __slots__ = ("authz", "r", "op", "call")

    def __init__(self, authz: Authorizer, r: Rights, op: str) -> None:
        self.authz, self.r, self.op = authz, r, op
        self.call = identity.current_call()

    def _seen(self, obj: m.ObjectRef) -> None:
        if self.call is not None:
            self.call.objects.append(obj.audit())

    def deny(self, what: str, obj: m.ObjectRef) -> AccessDenied:
        if self.call is not None:
            self.call.denied = what
        return AccessDenied(f"Permission denied: {principal_text(self.r.user, m.USER)} does not have following "
                            f"privileges for operation {self.op} [[{what}] on {object_text(obj)}]")

    def _store(self) -> Any:
        return self.authz.privileges.store

    def table_owner(self, db: str, table: str) -> tuple[str | None, int] | None:
        return self.authz.privileges.owner(db, table)

    def database_owner(self, db: str) -> tuple[str | None, int] | None:
        return self.authz.privileges.owner(db)

    # ---- the checks ---------------------------------------------------------------------------------------

    def admin(self) -> None:
        self._seen(m.GLOBAL_OBJECT)
        if not self.r.admin:
            raise self.deny(ADMIN, m.GLOBAL_OBJECT)

    def global_priv(self, any_of: tuple[str, ...]) -> None:
        self._seen(m.GLOBAL_OBJECT)
        if not self.r.holds(any_of):
            raise self.deny(any_of[0], m.GLOBAL_OBJECT)

    def table(self, db: str, table: str, any_of: tuple[str, ...]) -> None:
        """One of `any_of` on the table (or above it), or its ownership."""
        db, table = (db or "").lower(), (table or "").lower()
        if self.call is not None:
            self.call.objects.append(f"table:{db}.{table}")
        if self.r.holds(any_of, db, table) or self._owns_or_missing(db, table):
            return
        raise self.deny(any_of[0], m.ObjectRef(m.TABLE, db, table))

    def _owns_or_missing(self, db: str, table: str) -> bool:
        """Whether the caller owns the table, or it does not exist in a database the caller sees (the call then
        answers NoSuchObject, as clients expect when they look before they create: Spark does)."""
        owner = self.table_owner(db, table)
        return self.r.owner_is(owner) or (owner is None and bool(self.visible_databases([db])))

    def table_ownership(self, db: str, table: str) -> None:
        db, table = (db or "").lower(), (table or "").lower()
        obj = m.ObjectRef(m.TABLE, db, table)
        self._seen(obj)
        if not (self.r.admin or self._owns_or_missing(db, table)):
            raise self.deny(OWNERSHIP, obj)

    def database_ownership(self, db: str) -> None:
        db = (db or "").lower()
        obj = m.ObjectRef(m.DATABASE, db)
        self._seen(obj)
        if not (self.r.admin or self._owns_or_missing_database(db)):
            raise self.deny(OWNERSHIP, obj)

    def create_in(self, db: str) -> None:
        """CREATE (or ALL) on the database or globally, or the database's ownership."""
        db = (db or "").lower()
        obj = m.ObjectRef(m.DATABASE, db)
        self._seen(obj)
        if not (self.r.holds(CREATE, db) or self._owns_or_missing_database(db)):
            raise self.deny("CREATE", obj)

    def _owns_or_missing_database(self, db: str) -> bool:
        """Whether the caller owns the database, or there is none of that name (the call answers that)."""
        owner = self.database_owner(db)
        return owner is None or self.r.owner_is(owner)

    def owner_change(self, obj: m.ObjectRef) -> None:
        """An alter that gives the object another owner: an administrator's (an owner could otherwise give
        away what it owns, or anyone take the default database, which the role public owns)."""
        if not self.r.admin:
            raise self.deny(ADMIN, obj)

    def see_database(self, db: str) -> None:
        db = (db or "").lower()
        obj = m.ObjectRef(m.DATABASE, db)
        self._seen(obj)
        if not self.visible_databases([db]) and self.database_owner(db) is not None:
            raise self.deny("SELECT", obj)

    # ---- what a caller may see ------------------------------------------------------------------------------

    def _owned_tables(self, db: str | None) -> set[tuple[str, str]]:
        with self._store().read() as tx:
            return set(tx.privileges().owned_tables(self.r.principals, db))

    def visible_databases(self, names: Iterable[str]) -> list[str]:
        names = list(names)
        r = self.r
        if r.admin or r.glob:
            return names
        direct = set(r.dbs) | r.table_dbs
        if all(n in direct for n in names):
            return names
        with self._store().read() as tx:
            q = tx.privileges()
            owned = set(q.owned_databases(r.principals)) | {d for d, _ in q.owned_tables(r.principals)}
        return [n for n in names if n in direct or n in owned]

    def visible_tables(self, pairs: list[tuple[str, str]]) -> list[bool]:
        r = self.r
        if r.admin or set(SEE) & r.glob:
            return [True] * len(pairs)
        seen = [r.holds(SEE, d.lower(), t.lower()) for d, t in pairs]
        if all(seen):
            return seen
        dbs = {d.lower() for d, _ in pairs}
        owned = self._owned_tables(next(iter(dbs)) if len(dbs) == 1 else None)
        return [s or (d.lower(), t.lower()) in owned for s, (d, t) in zip(seen, pairs)]


_Rule = Callable[[Check, dict[str, Any]], None]
_Post = Callable[[Check, dict[str, Any], Any], Any]


def _table_rule(any_of: tuple[str, ...], db: str = "db", table: str = "table") -> _Rule:
    def rule(c: Check, a: dict[str, Any]) -> None:
        c.table(a[db], a[table], any_of)
    return rule


def _alter_rule(c: Check, a: dict[str, Any]) -> None:
    _check_alter(c, a["db"], a["name"], a["new"])


def _check_alter(c: Check, db: str, name: str, new: m.Table) -> None:
    """Ownership, or INSERT when only writers' parameters change (WRITER_PARAMETERS); admin to change its owner."""
    db, name = db.lower(), name.lower()
    new_db, new_name = (new.dbName or db).lower(), (new.tableName or name).lower()
    renamed = (new_db, new_name) != (db, name)
    if c.r.admin:
        c.table_ownership(db, name)
        if new_db != db:
            c.create_in(new_db)
        return
    try:
        old = c.authz.catalog.get_table(db, name)
    except Exception:  # a missing table: the operation answers it, after the ownership check
        c.table_ownership(db, name)
        return
    if renamed:
        c.table_ownership(db, name)
        if new_db != db:
            c.create_in(new_db)
    elif _params_only(old, new):
        c.table(db, name, INSERT)
    else:
        c.table_ownership(db, name)
    if (new.owner, new.ownerType or m.USER) != (old.owner, old.ownerType or m.USER):
        c.owner_change(m.ObjectRef(m.TABLE, db, name))


def _alter_database_rule(c: Check, a: dict[str, Any]) -> None:
    """Ownership of the database; admin to give it another owner (an ownerType left out keeps the old one)."""
    c.database_ownership(a["name"])
    if c.r.admin:
        return
    try:
        old = c.authz.catalog.get_database(a["name"])
    except Exception:  # a missing database: the operation answers it
        return
    new = a["new"]
    old_type = old.ownerType or m.USER
    if (new.ownerName, new.ownerType or old_type) != (old.ownerName, old_type):
        c.owner_change(m.ObjectRef(m.DATABASE, (a["name"] or "").lower()))


# The table parameters a writer (INSERT) changes as it writes: basic statistics (Hive, Spark, Impala), an Iceberg
# commit's pointer and snapshot summary. Any other parameter (storage_handler, transactional, auto.purge, ...)
# changes what the table is, which is its owner's to decide.
WRITER_PARAMETERS = frozenset({
    "numFiles", "numRows", "totalSize", "rawDataSize", "numFilesErasureCoded", "COLUMN_STATS_ACCURATE",
    "STATS_GENERATED", "STATS_GENERATED_VIA_STATS_TASK", "transient_lastDdlTime", "last_modified_by",
    "last_modified_time", "metadata_location", "previous_metadata_location", "current-snapshot-id",
    "current-snapshot-summary", "current-snapshot-timestamp-ms", "snapshot-count", "current-schema",
    "default-partition-spec", "default-sort-order"})
WRITER_PREFIXES = ("spark.sql.statistics.", "impala.events.", "impala.lastComputeStatsTime")


def _writer_key(key: str) -> bool:
    return key in WRITER_PARAMETERS or key.startswith(WRITER_PREFIXES)


def _params_only(old: m.Table, new: m.Table) -> bool:
    """Whether `new` differs from `old` in writers' parameters only (WRITER_PARAMETERS)."""
    before, after = old.parameters or {}, new.parameters or {}
    if not all(_writer_key(k) for k in before.keys() ^ after.keys()) or \
            not all(_writer_key(k) for k in before.keys() & after.keys() if before[k] != after[k]):
        return False

    def shape(t: m.Table) -> tuple[Any, ...]:
        sd = t.sd
        return (t.owner, t.ownerType or 1, t.tableType, t.viewOriginalText, t.viewExpandedText,
                [(k.name.lower(), k.type) for k in t.partitionKeys],
                None if sd is None else ([(x.name.lower(), x.type) for x in sd.cols], (sd.location or "").rstrip("/"),
                                         sd.inputFormat, sd.outputFormat, sd.serdeInfo.serializationLib
                                         if sd.serdeInfo else None),
                (t.parameters or {}).get("EXTERNAL", "").upper())
    return shape(old) == shape(new)


def _cas_rule(c: Check, a: dict[str, Any]) -> None:
    for db, name, new, _env in a["changes"]:
        _check_alter(c, db, name, new)


def _stats_rule(c: Check, a: dict[str, Any]) -> None:
    d = a["stats"].statsDesc
    c.table(d.dbName, d.tableName, WRITE)


def _stats_list_rule(c: Check, a: dict[str, Any]) -> None:
    """set_aggr_stats_for writes the statistics of each table it names."""
    for db, table in dict.fromkeys((s.statsDesc.dbName or "", s.statsDesc.tableName or "") for s in a["stats"]):
        c.table(db, table, WRITE)


def _function_rule(db: str, name: str | None) -> _Rule:
    def rule(c: Check, a: dict[str, Any]) -> None:
        dbname = (a[db] if name is not None else a[db].dbName) or ""
        try:
            c.create_in(dbname)
        except AccessDenied:
            if name is None:
                raise
            try:
                fn = c.authz.catalog.get_function(dbname, a[name])
            except Exception:
                raise c.deny("CREATE", m.ObjectRef(m.DATABASE, dbname.lower())) from None
            if not c.r.owner_is((fn.ownerName, fn.ownerType or m.USER)):
                raise
            if c.call is not None:
                c.call.denied = None
        if name is not None and a.get("new") is not None and (a["new"].dbName or dbname).lower() != dbname.lower():
            c.create_in(a["new"].dbName)
    return rule


def _lock_rule(c: Check, a: dict[str, Any]) -> None:
    from .locks import SHARED_READ

    for comp in a["components"]:
        reading = comp.type == SHARED_READ
        if comp.table:
            c.table(comp.db, comp.table, READ if reading else WRITE)
        elif reading:
            c.see_database(comp.db)
        else:
            c.create_in(comp.db)


def _filter_locks(c: Check, a: dict[str, Any], result: list[Any]) -> list[Any]:
    """show_locks: the locks on tables the caller sees, and on databases it sees (a lock's user, host and
    agent would tell what others work on)."""
    on_tables = [x for x in result if x.table]
    tables = {(x.db, x.table) for x, ok in zip(on_tables, c.visible_tables([(x.db, x.table) for x in on_tables]))
              if ok}
    dbs = set(c.visible_databases(sorted({x.db for x in result if not x.table})))
    return [x for x in result if ((x.db, x.table) in tables if x.table else x.db in dbs)]


def _filter_databases(c: Check, a: dict[str, Any], result: list[str]) -> list[str]:
    return c.visible_databases(result)


def _filter_table_names(c: Check, a: dict[str, Any], result: list[str]) -> list[str]:
    db = a["db"].lower()
    return [n for n, ok in zip(result, c.visible_tables([(db, n) for n in result])) if ok]


def _filter_tables(c: Check, a: dict[str, Any], result: list[m.Table]) -> list[m.Table]:
    return [t for t, ok in zip(result, c.visible_tables([(t.dbName, t.tableName) for t in result])) if ok]


def _filter_metas(c: Check, a: dict[str, Any], result: list[m.TableMeta]) -> list[m.TableMeta]:
    return [t for t, ok in zip(result, c.visible_tables([(t.dbName, t.tableName) for t in result])) if ok]


def _open(c: Check, a: dict[str, Any]) -> None:
    return None


def _admin(c: Check, a: dict[str, Any]) -> None:
    c.admin()


def _log_reader(c: Check, a: dict[str, Any]) -> None:
    c.global_priv(READ)


def _constraints_rule(c: Check, a: dict[str, Any]) -> None:
    """Adding constraints alters their tables: each one's ownership."""
    for t in dict.fromkeys((k.db or "", k.table or "") for k in a["cols"]):
        c.table_ownership(*t)


def _foreign_keys_rule(c: Check, a: dict[str, Any]) -> None:
    for db, table in ((a["db"], a["table"]), (a["parent_db"], a["parent_table"])):
        if table:
            c.table(db or "", table, READ)


_READ_TABLE = _table_rule(READ)
_READ_TABLE_N = _table_rule(READ, "db", "name")

# method -> (check before, filter of the result after)
RULES: dict[str, tuple[_Rule, _Post | None]] = {
    # databases
    "create_database": (_admin, None),
    "get_database": (lambda c, a: c.see_database(a["name"]), None),
    "get_databases": (_open, _filter_databases),
    "alter_database": (_alter_database_rule, None),
    "drop_database": (lambda c, a: c.database_ownership(a["name"]), None),
    "ensure_default_database": (_admin, None),
    # tables
    "create_table": (lambda c, a: c.create_in(a["t"].dbName), None),
    "get_table": (_READ_TABLE_N, None),
    "table_version": (_READ_TABLE_N, None),
    "get_fields": (_READ_TABLE_N, None),
    "get_tables_by_names": (_open, _filter_tables),
    "get_tables": (_open, _filter_table_names),
    "get_table_meta": (_open, _filter_metas),
    "alter_table": (_alter_rule, None),
    "alter_tables_cas": (_cas_rule, None),
    "drop_table": (lambda c, a: c.table_ownership(a["db"], a["name"]), None),
    "check_location_free": (_open, None),
    # partitions
    "add_partitions": (_table_rule(INSERT), None),
    "append_partition": (_table_rule(INSERT), None),
    "alter_partitions": (_table_rule(INSERT), None),
    "rename_partition": (_table_rule(INSERT), None),
    "drop_partitions": (_table_rule(DELETE), None),
    "get_partition": (_READ_TABLE, None),
    "get_partition_by_name": (_READ_TABLE, None),
    "get_partitions": (_READ_TABLE, None),
    "get_partition_names": (_READ_TABLE, None),
    "get_partitions_ps": (_READ_TABLE, None),
    "get_partition_names_ps": (_READ_TABLE, None),
    "get_partitions_by_filter": (_READ_TABLE, None),
    "get_partition_names_by_filter": (_READ_TABLE, None),
    "count_partitions_by_filter": (_READ_TABLE, None),
    "get_partitions_by_expr": (_READ_TABLE, None),
    "partition_names_by_expr": (_READ_TABLE, None),
    "get_partitions_by_names": (_READ_TABLE, None),
    # constraints (catalog/constraints.py): added and dropped as the table is altered, read as it is read
    "add_constraints": (_constraints_rule, None),
    "create_table_with_constraints": (lambda c, a: c.create_in(a["t"].dbName), None),
    "drop_constraint": (lambda c, a: c.table_ownership(a["db"], a["table"]), None),
    "get_constraints": (_READ_TABLE, None),
    "get_all_constraints": (_READ_TABLE, None),
    "get_foreign_keys": (_foreign_keys_rule, None),
    # statistics and insert events
    "update_column_statistics": (_stats_rule, None),
    "set_aggr_stats": (_stats_list_rule, None),
    "get_aggr_stats": (_READ_TABLE, None),
    "get_table_column_statistics": (_READ_TABLE, None),
    "get_partition_column_statistics": (_READ_TABLE, None),
    "delete_column_statistics": (_table_rule(WRITE), None),
    "fire_insert_event": (_table_rule(INSERT), None),
    # functions: anyone reads them
    "create_function": (_function_rule("fn", None), None),
    "drop_function": (_function_rule("db", "name"), None),
    "alter_function": (_function_rule("db", "name"), None),
    "get_function": (_open, None),
    "get_functions": (_open, None),
    "get_all_functions": (_open, None),
    # the notification log
    "next_notifications": (_log_reader, None),
    "current_event_id": (_log_reader, None),
    "events_count": (_log_reader, None),
    "oldest_event_id": (_log_reader, None),
    "consumers": (_admin, None),
    "consumer": (_admin, None),
    "register_consumer": (_admin, None),
    "set_consumer": (_admin, None),
    "remove_consumer": (_admin, None),
    "claim_consumer": (_admin, None),
    "advance_consumer": (_admin, None),
    "release_consumer": (_admin, None),
    "clean_notifications": (_admin, None),
    # the small operations engines call (issue 21): truncating deletes data (the owner's, as Hive's TRUNCATETABLE)
    "truncate_table": (lambda c, a: c.table_ownership(a["db"], a["table"]), None),
    "get_partition_values": (_READ_TABLE, None),
    "get_table_names_by_filter": (_open, _filter_table_names),
    "metastore_db_uuid": (_open, None),
    # roles and privileges: the operations check their caller themselves (catalog/privileges.py)
    **{name: (_open, None) for name in (
        "create_role", "drop_role", "role_names", "grant_role", "revoke_role", "list_roles", "principals_in_role",
        "role_grants_for_principal", "grant_privileges", "revoke_privileges", "list_privileges", "privilege_set")},
}
# plumbing, not operations: the store's transactions and connections
EXEMPT = frozenset({"connection_scope", "transaction"})
LOCK_RULES: dict[str, tuple[_Rule, _Post | None]] = {
    "lock": (_lock_rule, None),
    "show_locks": (_open, _filter_locks),
    # a compaction request is the table owner's (Hive's SQL standard authorization: ALTERTABLE_COMPACT)
    "compact": (lambda c, a: c.table_ownership(a["db"], a["table"]), None),
    # write ids and write notifications are a writer's (as a write lock on the table)
    "allocate_table_write_ids": (lambda c, a: c.table(a["db"], a["table"], WRITE), None),
    "add_write_notifications": (lambda c, a: c.table(a["db"], a["table"], WRITE), None),
    # seeds move where ids start (replication, migration): an administrator's
    "seed_txn_id": (_admin, None),
    "seed_write_id": (_admin, None),
}
# the lock manager's other calls act on a lock or transaction id the caller holds, or list transactions and
# compaction requests (as Hive, unchecked)
LOCK_OPEN = frozenset({"release_gone_holders", "check_lock", "unlock", "heartbeat", "open_txns",
                       "abort_txn", "commit_txn", "get_open_txns", "transaction", "add_dynamic_partitions",
                       "get_open_txns_info", "show_compactions", "abort_txns", "heartbeat_txn_range",
                       "latest_txnid_in_conflict", "max_allocated_write_id", "valid_write_ids"})


def _renamed(a: dict[str, Any]) -> bool:
    new = a.get("new")
    return new is not None and ((new.dbName or a["db"]).lower(), (new.tableName or a["name"]).lower()) != (
        a["db"].lower(), a["name"].lower())


_DROPS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "drop_table": lambda a: True, "drop_database": lambda a: True, "alter_table": _renamed}


def _forget_each(p: Privileges, changes: Iterable[tuple[str, str, Any, Any]]) -> None:
    for db, name, _, _ in changes:
        p.forget_owner(db, name)


_ALTERS: dict[str, Callable[[Privileges, dict[str, Any]], None]] = {
    "alter_table": lambda p, a: p.forget_owner(a["db"], a["name"]),
    "alter_tables_cas": lambda p, a: _forget_each(p, a["changes"]),
    "alter_database": lambda p, a: p.forget_owner(a["name"]),
}


def _then(fn: Callable[..., Any], params: list[str], when: Callable[[dict[str, Any]], bool],
          after: Callable[..., None]) -> Callable[..., Any]:
    """`fn`, then `after()` (or `after(args)`, when it takes them) when `when(args)` says so."""
    takes_args = bool(inspect.signature(after).parameters)

    def call(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        a = dict(zip(params, args))
        a.update(kwargs)
        if when(a):
            after(a) if takes_args else after()
        return result
    return call


def _public(obj: object) -> list[str]:
    return [n for n, v in inspect.getmembers(type(obj)) if not n.startswith("_") and callable(v)]


class Authorizer:
    def __init__(self, privileges: Privileges) -> None:
        self.privileges = privileges
        self.catalog: Catalog

    def install(self, catalog: Catalog) -> None:
        """Check every operation of `catalog` (and its lock manager) from now on."""
        self.catalog = catalog
        for target, rules, skip in ((catalog, RULES, EXEMPT), (catalog.locks, LOCK_RULES, LOCK_OPEN)):
            for name in _public(target):
                if name in skip or isinstance(inspect.getattr_static(target, name), (property, staticmethod)):
                    continue
                rule = rules.get(name)
                if rule is None:
                    raise RuntimeError(f"{type(target).__name__}.{name} has no authorization rule (catalog/authz.py)")
                setattr(target, name, self._guarded(name, getattr(target, name), *rule))

    def _guarded(self, name: str, fn: Callable[..., Any], pre: _Rule, post: _Post | None) -> Callable[..., Any]:
        params = [p for p in inspect.signature(fn).parameters]
        op = _OPERATIONS.get(name, name.upper())
        rights = self.privileges.rights

        if name in _DROPS:  # grants go with a dropped or renamed object: forget what was cached of them
            fn = _then(fn, params, _DROPS[name], self.privileges.invalidate)
        if name in _ALTERS:  # its owner may have changed
            fn = _then(fn, params, lambda a: True, lambda a: _ALTERS[name](self.privileges, a))

        def call(*args: Any, **kwargs: Any) -> Any:
            if _inside.get():
                return fn(*args, **kwargs)
            p = identity.current()
            if p.method == identity.INTERNAL:
                return fn(*args, **kwargs)
            r = rights(p)
            token = _inside.set(True)
            try:
                if r.admin and identity.current_call() is None:  # audited: the objects are named, below
                    return fn(*args, **kwargs)
                a = dict(zip(params, args))
                if kwargs:
                    a.update(kwargs)
                c = Check(self, r, op)
                pre(c, a)
                result = fn(*args, **kwargs)
                return result if post is None else post(c, a, result)
            finally:
                _inside.reset(token)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = fn.__doc__
        return call

    def is_admin(self, p: identity.Principal | None = None) -> bool:
        return self.privileges.rights(p).admin
