"""The catalog service: Hive's metastore operations over the store.

Every change runs in one store write transaction together with its notification event, so an event
exists exactly when its change committed. File-system work (directories of managed objects) happens
after the metadata is validated; directories are removed only after the metadata change commits.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any, TypeVar

from ..core import hive_expr, hive_types, identity
from ..core import messages as ev
from ..core import model as m
from ..core.errors import (
    AlreadyExists,
    CatalogError,
    ExprUnreadable,
    InvalidInput,
    InvalidObject,
    InvalidOperation,
    MetaError,
    NoSuchObject,
    TableModified,
    UnknownDB,
)
from ..core.events import EventType
from ..core.filters import COMPARISONS, FilterError, Node, keys_of, parse
from ..core.names import (
    bad_values_message,
    column_error,
    hive_pattern,
    java_list,
    make_part_name,
    part_vals_from_name,
    valid_name,
)
from ..store.store import Store, TableRef, Tx
from . import acid, colstats
from .authz import Authorizer
from .constraints import ConstraintOps
from .locations import LocationPolicy, Occupant, is_under, lexical_path, overlap, resolve, spellings
from .locks import DEFAULT_TIMEOUT as DEFAULT_TXN_TIMEOUT
from .locks import Locks
from .privileges import Privileges
from .warehouse import DirBatch, EarlyRmdir, Warehouse

log = logging.getLogger(__name__)
_R = TypeVar("_R")

DDL_TIME = "transient_lastDdlTime"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
MANAGED_TABLE = "MANAGED_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"
DEFAULT_CATALOG = "hive"  # the one catalog the store holds
# a partition's storage descriptor as from_thrift makes it when the client sent none (model defaults; one the
# client sent has numBuckets 0 at least, as Hive reads an unset i32)
_UNSET_SD = m.StorageDescriptor()
FAST_STATS = ("numFiles", "totalSize")
DO_NOT_UPDATE_STATS = "DO_NOT_UPDATE_STATS"
STATS_GENERATED = "STATS_GENERATED"
COLUMN_STATS_ACCURATE = "COLUMN_STATS_ACCURATE"


def _now() -> int:
    return int(time.time())


class Catalog(ConstraintOps):
    def __init__(self, store: Store, warehouse: Warehouse, messages: ev.JsonMessageFactory | None = None,
                 stats_autogather: bool = True, txn_timeout: float = DEFAULT_TXN_TIMEOUT,
                 locations: LocationPolicy | None = None, authorization: str = "none",
                 admin_users: Sequence[str] = (), rights_ttl: float = 2.0) -> None:
        self.store = store
        self.wh = warehouse
        # where the server may create, move, delete and read on a client's behalf (see catalog/locations.py)
        self.locations = locations or LocationPolicy([warehouse.root])
        warehouse.policy = self.locations  # every directory made, moved or deleted passes the policy
        self.msg = messages or ev.JsonMessageFactory()
        self.stats_autogather = stats_autogather
        self.locks = Locks(self, txn_timeout)  # Hive's lock manager: lock, check_lock, unlock, transactions
        # roles and privileges (catalog/privileges.py); with authorization "sql" every operation of this instance
        # is checked by the authorizer (catalog/authz.py), with "none" nothing is installed
        self.privileges = Privileges(store, admin_users, enforce=authorization == "sql", ttl=rights_ttl)
        self.authorizer: Authorizer | None = None
        self._db_uuid: str | None = None  # the store's uuid, once read (it never changes)
        if authorization == "sql":
            self.authorizer = Authorizer(self.privileges)
            self.authorizer.install(self)

    # ---- plumbing -----------------------------------------------------------------------------------

    def connection_scope(self) -> AbstractContextManager[None]:
        """A context in which this thread's calls reuse one store connection (Store.connection_scope)."""
        return self.store.connection_scope()

    def transaction(self) -> AbstractContextManager[Tx]:
        """A store write transaction, for the catalog's writes and its parts that change the store with it (the
        lock manager): serialized with every other writer, committed at the end of the block, rolled back by an
        exception; a database failure comes out as a MetaError (AlreadyExists for a lost race on a unique key)."""
        return self.store.write()

    def _read(self) -> AbstractContextManager[Tx]:
        return self.store.read()

    def _event(self, tx: Tx, kind: str, db: str | None, table: str | None, message: str) -> None:
        tx.add_event(kind, db, table, message, self.msg.format, _now())

    def _owner(self, name: str | None, kind: int | None) -> tuple[str | None, int | None]:
        """The owner a new object gets: the caller when it is authenticated (a Kerberos, token or OAuth2
        principal), or when authorization is on and the caller is no administrator; else what the request says
        (an administrator, a replication load, may create objects for others)."""
        p = identity.current_or_none()
        if p is None or p.method == identity.INTERNAL:
            return name, kind
        if self.authorizer is not None:
            if self.authorizer.is_admin(p) and (name or not p.authenticated):
                return name or p.name, kind if name else m.USER
            return p.name, m.USER
        if p.authenticated:
            return p.name, m.USER
        return name, kind

    def ensure_default_database(self) -> None:
        with self.transaction() as tx:
            if tx.db_id("default") is None:
                tx.insert_database(m.Database(name="default", description="Default Hive database",
                                              locationUri=self.wh.database_location("default"), ownerName="public",
                                              ownerType=2, createTime=_now()))
        self.wh.mkdirs(self.wh.database_location("default"))

    # ---- locations ----------------------------------------------------------------------------------
    # A location is resolved (`..` and `.` gone, scheme checked) before it is stored or touched. A managed
    # object's directory is deleted with it, so its location may not hold the store or a root, nor, inside
    # the roots (outside them nothing is ever deleted or moved), share data with another database or table.

    @staticmethod
    def _resolve(location: str | None, what: str, exc: type[CatalogError] = InvalidObject) -> str | None:
        if not location:
            return location
        try:
            return resolve(location, what)
        except InvalidObject as e:
            raise (e if exc is InvalidObject else exc(e.message)) from None

    def _check_managed(self, tx: Tx, location: str | None, what: str, exc: type[CatalogError],
                       own_db: str | None = None, own_table: str | None = None, kind: str = "table",
                       others: bool = True) -> None:
        """Refuse a managed object's location whose drop would delete what is not the object's own; `others`:
        also look for other objects there (one statement; kind: database, table or partition)."""
        problem = self.locations.managed_problem(location)
        if problem is None and others:
            problem = self._shared(tx, location, own_db, own_table, kind)
        if problem is not None:
            raise exc(f"{what} {location} {problem}: a managed object's directory is deleted with it")

    def _shared(self, tx: Tx, location: str | None, own_db: str | None, own_table: str | None,
                kind: str) -> str | None:
        """Why a managed location inside the roots shares data with another database or table (overlap)."""
        if not self.locations.owns(location):
            return None  # outside the roots nothing is ever deleted or moved
        path = lexical_path(location)
        if path is None:
            return None
        return overlap(path, self._occupants(tx, path), own_db, own_table, kind)

    @staticmethod
    def _occupants(tx: Tx, path: str) -> list[Occupant]:
        """The databases, tables and partitions located at `path`, inside it, or at one of its parents (one
        statement). A partition counts as its table: dropping a managed table deletes its partitions."""
        return [(_PartOccupant if row[4] else Occupant)(*row[:4]) for row in tx.locations_near(spellings(path))]

    def _check_managed_many(self, tx: Tx, places: Sequence[tuple[str, str]], exc: type[CatalogError],
                            own_db: str, own_table: str, kind: str = "partition") -> None:
        """_check_managed for many (what, location) pairs: one statement per distinct parent directory (its
        occupants include those of every location directly inside it; directly in a root, one per location),
        not one per location."""
        groups: dict[str, list[tuple[str, str, str]]] = {}
        for what, location in places:
            problem = self.locations.managed_problem(location)
            if problem is not None:
                raise exc(f"{what} {location} {problem}: a managed object's directory is deleted with it")
            path = lexical_path(location) if self.locations.owns(location) else None
            if path is not None:
                groups.setdefault(posixpath.dirname(path), []).append((what, location, path))
        for parent, members in groups.items():
            if len(members) > 1 and self.locations.owns(parent):
                batches = [(self._occupants(tx, parent), members)]
            else:  # one, or directly in a root: whose occupants are every object there is
                batches = [(self._occupants(tx, member[2]), [member]) for member in members]
            for occupants, group in batches:
                for what, location, path in group:
                    problem = overlap(path, occupants, own_db, own_table, kind)
                    if problem is not None:
                        raise exc(f"{what} {location} {problem}: a managed object's directory is deleted with it")

    def check_location_free(self, location: str, exclude: tuple[str, str] | None = None) -> None:
        """Refuse (InvalidObject) a table location the server writes under (a REST table's) that is a root or
        the store's, or shares a directory with another database, table or partition (`exclude`: the table
        itself); REST tables are external, so the catalog checks nothing of theirs on its own."""
        own_db, own_table = exclude or (None, None)
        with self._read() as tx:
            self._check_managed(tx, location, "Table location", InvalidObject, own_db, own_table)

    def _inside_own(self, location: str | None, parent: str | None) -> bool:
        """Whether a location is its parent's or inside it (a partition in its table's directory)."""
        if not location or not parent:
            return False
        if _under(location, parent):
            return True
        a, b = lexical_path(location), lexical_path(parent)
        return a is not None and b is not None and is_under(a, b)

    # ---- databases ----------------------------------------------------------------------------------

    def create_database(self, db: m.Database) -> None:
        if not valid_name(db.name):
            raise InvalidObject(f"{db.name} is not a valid database name")
        # the store holds one catalog, Hive's default: a database for another is refused as Hive 3 refuses a
        # catalog that does not exist (it was recorded under the other name, and found as one of `hive`'s)
        if (db.catalogName or DEFAULT_CATALOG).lower() != DEFAULT_CATALOG:
            raise InvalidObject(f"No such catalog {db.catalogName}")
        db = replace(db, name=db.name.lower(), parameters=dict(db.parameters or {}), catalogName=DEFAULT_CATALOG)
        if not db.locationUri:
            db.locationUri = self.wh.database_location(db.name)
        else:
            db.locationUri = self._resolve(db.locationUri, "database location")
        if db.createTime is None:
            db.createTime = _now()
        db.ownerName, db.ownerType = self._owner(db.ownerName, db.ownerType)
        if db.ownerType is None:
            db.ownerType = 1  # Hive records a database without an owner type as owned by a USER
        with self.transaction() as tx:
            if tx.db_id(db.name) is not None:
                raise AlreadyExists(f"Database {db.name} already exists")
            self._check_managed(tx, db.locationUri, "Database location", InvalidObject, own_db=db.name,
                                kind="database")
            tx.insert_database(db)
            self._event(tx, EventType.CREATE_DATABASE, db.name, None, self.msg.create_database(db))
            # made before the commit, while writers are serialized: a create_table at its default place that
            # runs next finds the directory there and looks for its other occupants (it skips that only for a
            # directory it made itself)
            self.wh.mkdirs(db.locationUri)

    def get_database(self, name: str) -> m.Database:
        with self._read() as tx:
            db = tx.get_database(name.lower())
        if db is None:
            raise NoSuchObject(f"{name}")
        return db

    def get_databases(self, pattern: str | None = None) -> list[str]:
        with self._read() as tx:
            names = tx.database_names()
        match = hive_pattern(pattern)
        return [n for n in names if match(n)]

    def alter_database(self, name: str, new: m.Database) -> None:
        name = name.lower()
        with self.transaction() as tx:
            old = tx.get_database(name)
            if old is None:
                raise NoSuchObject(f"{name}")
            db_id = _db_id(tx, name)
            # Hive 2.3 alters the parameters and the owner only: the name, description and location stay
            # (Spark's ALTER DATABASE ... SET LOCATION reads the location back and reports it unsupported).
            merged = replace(old, parameters=dict(new.parameters or {}), ownerName=new.ownerName,
                             ownerType=new.ownerType if new.ownerType is not None else old.ownerType)
            tx.update_database(db_id, merged)
            self._event(tx, EventType.ALTER_DATABASE, name, None, self.msg.alter_database(old, merged))

    def drop_database(self, name: str, delete_data: bool, cascade: bool) -> None:
        name = name.lower()
        if name == "default":
            raise MetaError("Can not drop default database")
        locations: list[str | None] = []
        with self.transaction() as tx:
            db = tx.get_database(name)
            if db is None:
                raise NoSuchObject(f"{name}")
            db_id = _db_id(tx, name)
            tables = tx.get_tables(name)
            functions = tx.get_functions(name)
            if (tables or functions) and not cascade:
                what = "tables" if tables else "functions"
                raise InvalidOperation(f"Database {name} is not empty. One or more {what} exist.")
            for fn in functions:
                tx.delete_function(_function_id(tx, db_id, fn.functionName))
                self._event(tx, EventType.DROP_FUNCTION, name, None, self.msg.drop_function(fn))
            keep: list[str | None] = []  # external data inside the database's directory
            for t in tables:
                ref = tx.table_ref(t.dbName, t.tableName)
                assert ref is not None, "a table read in this transaction"
                if delete_data and t.tableType != MANAGED_TABLE and t.tableType != VIRTUAL_VIEW:
                    keep.append(t.sd.location)
                    keep += [loc for _, _, loc in (tx.table_partitions(ref.TBL_ID) if t.partitionKeys else [])]
                locations += self._drop_table_tx(tx, t, delete_data, ref)
            tx.delete_database(db_id)
            self._event(tx, EventType.DROP_DATABASE, name, None, self.msg.drop_database(db))
            path = lexical_path(db.locationUri) if delete_data and self.wh.owns(db.locationUri) else None
            # What else lives in the directory (another database's tables, a database): not this one's to delete
            shared = path is not None and (any(self._inside_own(loc, db.locationUri) for loc in keep) or any(
                q is not None and (q == path or q.startswith(path + "/"))
                for q in (lexical_path(o.location) for o in self._occupants(tx, path))))
        if delete_data:
            for loc in locations:
                self.wh.delete(loc)
            if shared:
                log.warning("drop database %s: its directory %s holds other objects' data: only its managed "
                            "tables' directories were deleted", name, db.locationUri)
                self.wh.delete_if_empty(db.locationUri)
            else:
                self.wh.delete(db.locationUri)

    # ---- tables -------------------------------------------------------------------------------------

    def _validate_table(self, t: m.Table) -> None:
        if not valid_name(t.tableName):
            raise InvalidObject(f"{t.tableName} is not a valid object name")
        for c in t.sd.cols:
            err = column_error(c.name, c.type)
            if err:
                raise InvalidObject(f"Invalid column {err}")
        for c in t.partitionKeys:
            err = column_error(c.name, c.type)
            if err:
                raise InvalidObject(f"Invalid partition column {err}")
        names = [c.name.lower() for c in t.sd.cols] + [k.name.lower() for k in t.partitionKeys]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise InvalidObject(f"Partition column name {dup} conflicts with table columns." if dup in
                                {k.name.lower() for k in t.partitionKeys} else f"Duplicate column name {dup}")

    def create_table(self, t: m.Table, env: dict[str, str] | None = None,
                     then: Callable[[Tx, m.Table], None] | None = None) -> None:
        """Create a table; `then(tx, table)` runs in its transaction after its CREATE_TABLE event (the
        constraints made with it)."""
        if t.sd is None:
            raise InvalidObject("Storage descriptor is not defined for the table")
        if not t.dbName:
            raise InvalidObject("Table has no database name")
        if (t.catName or DEFAULT_CATALOG).lower() != DEFAULT_CATALOG:  # Hive 3: its database is not in that catalog
            raise NoSuchObject(f"There is no database {t.catName}.{t.dbName}")
        self._validate_table(t)
        t = replace(t, tableName=t.tableName.lower(), dbName=t.dbName.lower(), parameters=dict(t.parameters or {}),
                    partitionKeys=[replace(k, name=k.name.lower()) for k in t.partitionKeys],
                    catName=DEFAULT_CATALOG)
        t.tableType = t.tableType or MANAGED_TABLE
        if t.parameters.get("EXTERNAL", "").upper() == "TRUE":
            t.tableType = EXTERNAL_TABLE
        acid.check(t, t.tableType == EXTERNAL_TABLE)
        if t.tableType != VIRTUAL_VIEW and t.sd.location:
            t.sd = replace(t.sd, location=self._resolve(t.sd.location, "table location"))
        now = _now()
        if not t.createTime:
            t.createTime = now
        owner, owner_type = self._owner(t.owner, t.ownerType)
        t.owner, t.ownerType = owner, owner_type if owner_type is not None else 1
        made_dir = False
        with self.transaction() as tx:
            db = tx.db_location(t.dbName)
            if db is None:
                raise InvalidObject(f"{t.dbName}")  # Hive: the table's database does not exist
            db_id, db_location = db
            if tx.table_ref(t.dbName, t.tableName) is not None:
                raise AlreadyExists(f"Table {t.tableName} already exists")
            default = self.wh.child(db_location or self.wh.database_location(t.dbName), t.tableName)
            if t.tableType != VIRTUAL_VIEW and not t.sd.location:
                t.sd.location = default
            # At its default place (Spark sends that too) a new managed table whose directory is new shares it
            # with nobody: other objects are looked for only elsewhere, or when the directory was there already
            at_default = t.tableType == MANAGED_TABLE and _same_location(t.sd.location, default)
            if t.tableType == MANAGED_TABLE:
                self._check_managed(tx, t.sd.location, "Table location", InvalidObject, t.dbName, t.tableName,
                                    others=not at_default)
            if t.tableType != VIRTUAL_VIEW:
                made_dir = self.wh.mkdirs(t.sd.location)
                if at_default and not made_dir:
                    self._check_managed(tx, t.sd.location, "Table location", InvalidObject, t.dbName,
                                        t.tableName)
                if self.stats_autogather and not t.partitionKeys:
                    self._fast_stats(t.parameters, t.sd.location, made_dir, False, env)
            t.parameters.setdefault(DDL_TIME, str(now))
            tbl_id = tx.insert_table(db_id, t)
            t.id, t.version = tbl_id, 1
            self._event(tx, EventType.CREATE_TABLE, t.dbName, t.tableName, self.msg.create_table(t, []))
            if then is not None:
                then(tx, t)

    def _fast_stats(self, params: dict[str, str], location: str | None, new_dir: bool, force: bool,
                    env: dict[str, str] | None) -> None:
        """Hive's quick statistics (numFiles, totalSize) from a directory listing."""
        env = env or {}
        if params.get(DO_NOT_UPDATE_STATS) is not None:
            params.pop(DO_NOT_UPDATE_STATS, None)
            return
        # only where the server may read: elsewhere a listing would reveal what is there (and file:/ is a walk of
        # the whole file system); the client's figures, if any, are kept
        if (force or not all(k in params for k in FAST_STATS)) and not new_dir and self.locations.may_read(location):
            files, size = self.wh.quick_stats(location) or (0, 0)
            params["numFiles"] = str(files)
            params["totalSize"] = str(size)
            if env.get(STATS_GENERATED) == "TASK":
                params[COLUMN_STATS_ACCURATE] = '{"BASIC_STATS":"true"}'
            else:
                params.pop(COLUMN_STATS_ACCURATE, None)

    def get_table(self, db: str, name: str) -> m.Table:
        with self._read() as tx:
            t = tx.get_table(db.lower(), name.lower())
        if t is None:
            raise NoSuchObject(f"{db}.{name} table not found")
        return t

    def get_tables_by_names(self, db: str, names: Sequence[str]) -> list[m.Table]:
        if db is None or not db.strip():
            raise UnknownDB("DB name is null or empty")
        if not names:  # Hive looks the database up only to fetch some table (PyIceberg lists so)
            return []
        with self._read() as tx:
            if tx.db_id(db.lower()) is None:
                raise NoSuchObject(f"Could not find database {db}")
            return tx.get_tables(db.lower(), [n.lower() for n in names])

    def get_tables(self, db: str, pattern: str | None = None, table_type: str | None = None) -> list[str]:
        with self._read() as tx:
            names = tx.table_names(db.lower(), table_type)
        match = hive_pattern(pattern)
        return [n for n in names if match(n)]

    def get_table_meta(self, db_pattern: str | None, tbl_pattern: str | None,
                       types: Sequence[str] | None) -> list[m.TableMeta]:
        mdb, mtbl = hive_pattern(db_pattern), hive_pattern(tbl_pattern)
        with self._read() as tx:
            metas = tx.table_metas()
        return [x for x in metas if mdb(x.dbName) and mtbl(x.tableName) and (not types or x.tableType in types)]

    def get_fields(self, db: str, name: str, with_partition_keys: bool) -> list[m.FieldSchema]:
        t = self.get_table(db, name)
        return list(t.sd.cols) + (list(t.partitionKeys) if with_partition_keys else [])

    def alter_table(self, db: str, name: str, new: m.Table, cascade: bool = False,
                    env: dict[str, str] | None = None, tx: Tx | None = None, check_col_types: bool = False) -> None:
        """Alter a table; within `tx` when given (see alter_tables_cas), else in its own transaction.

        `check_col_types` (the Thrift front's hive.metastore.disallow.incompatible.col.type.changes): refuse a
        column whose type changes to one Hive does not convert the old one to (core/hive_types.py), as Hive does."""
        db, name = db.lower(), name.lower()
        if new is None or new.sd is None:
            raise InvalidOperation("New table is invalid: " + str(new))
        try:
            self._validate_table(replace(new, tableName=new.tableName or name))
        except InvalidObject as e:  # Hive's alter_table reports invalid names and columns so
            raise InvalidOperation(e.message) from None
        new = replace(new, tableName=new.tableName.lower(), dbName=(new.dbName or db).lower(),
                      parameters=dict(new.parameters or {}),
                      partitionKeys=[replace(k, name=k.name.lower()) for k in new.partitionKeys])
        if new.sd.location:
            new.sd = replace(new.sd, location=self._resolve(new.sd.location, "table location", InvalidOperation))
        env = env or {}
        moved: tuple[str | None, str | None] | None = None
        with (nullcontext(tx) if tx is not None else self.transaction()) as tx:
            found = tx.get_table_and_ref(db, name)
            if found is None:
                raise InvalidOperation(f"{db}.{name} table not found")
            old, ref = found
            acid.check(new, (new.tableType or old.tableType) == EXTERNAL_TABLE, old)
            expected_key = env.get("expected_parameter_key")
            if expected_key is not None and old.parameters.get(expected_key) != env.get("expected_parameter_value"):
                raise TableModified(f"The table has been modified. The parameter value for key '{expected_key}' is "
                                f"'{old.parameters.get(expected_key)}'. The expected was value was "
                                f"'{env.get('expected_parameter_value')}'")
            if check_col_types and old.tableType != VIRTUAL_VIEW:  # a view's types follow its query (Hive 2.3.10)
                _check_col_types(old.sd.cols, new.sd.cols)
            # a key's type may change, not its name or the number of keys
            if len(old.partitionKeys) != len(new.partitionKeys) or any(
                    a.name != b.name for a, b in zip(old.partitionKeys, new.partitionKeys)):
                raise InvalidOperation("partition keys can not be changed.")
            renamed = (new.dbName, new.tableName) != (db, name)
            new_db_id = None
            if renamed:
                if not valid_name(new.tableName):
                    raise InvalidOperation(f"{new.tableName} is not a valid object name")
                new_db = tx.get_database(new.dbName)
                if new_db is None:
                    raise InvalidOperation(f"Unable to change partition or table. Database {new.dbName} does not "
                                           "exist Check metastore logs for detailed stack.")
                if tx.table_ref(new.dbName, new.tableName) is not None:
                    raise InvalidOperation(f"new table {new.dbName}.{new.tableName} already exists")
                new_db_id = tx.db_id(new.dbName)
                # A managed table at its default place follows the rename, as in Hive.
                old_default = self.wh.child(self._db_location(tx, db), name)
                if (old.tableType == MANAGED_TABLE and new.sd.location
                        and _same_location(new.sd.location, old.sd.location)
                        and _same_location(old.sd.location, old_default)):
                    new_loc = self.wh.child(new_db.locationUri or self.wh.database_location(new.dbName),
                                            new.tableName)
                    # Outside the roots the server moves nothing: the table keeps its directory and location
                    if self.wh.owns(old.sd.location) and self.wh.owns(new_loc):
                        moved = (old.sd.location, new_loc)
                        new.sd.location = new_loc
            # A table that is managed after this change may get its directory deleted: check a new place
            if (new.tableType or old.tableType) == MANAGED_TABLE and new.tableType != VIRTUAL_VIEW and (
                    old.tableType != MANAGED_TABLE or not _same_location(new.sd.location, old.sd.location)):
                self._check_managed(tx, new.sd.location, "Table location", InvalidOperation, db, name)
                if old.tableType != MANAGED_TABLE and old.partitionKeys:
                    # now dropped with its data: a partition outside its directory is checked as a managed one
                    custom = [("Partition location", loc) for _, _, loc in tx.table_partitions(ref.TBL_ID)
                              if loc and not self._inside_own(loc, new.sd.location)]
                    if custom:
                        self._check_managed_many(tx, custom, InvalidOperation, db, name)
            new.createTime = old.createTime
            if DDL_TIME not in new.parameters or new.parameters.get(DDL_TIME) == "0":
                new.parameters[DDL_TIME] = str(_now())
            if (self.stats_autogather and not new.partitionKeys and new.tableType != VIRTUAL_VIEW
                    and env.get(DO_NOT_UPDATE_STATS) != "true"):
                self._fast_stats(new.parameters, moved[0] if moved else new.sd.location, False, True, env)
            if moved:
                try:
                    self.wh.rename(moved[0], moved[1])
                except OSError as e:
                    raise InvalidOperation(f"Unable to rename {moved[0]} to {moved[1]}: {e}") from e
            try:
                cols_changed = [(c.name, c.type) for c in old.sd.cols] != [(c.name, c.type) for c in new.sd.cols]
                if cols_changed:  # a column gone or of another type loses its statistics, as in Hive
                    self._drop_changed_column_stats(tx, "TBL_ID", ref.TBL_ID, new.sd.cols, new.parameters)
                tx.update_table(ref, new, new_db_id)
                if renamed:
                    tx.lock_queries().rename_table_references(db, name, new.dbName, new.tableName)
                if moved:
                    self._relocate_partitions(tx, ref.TBL_ID, moved[0], moved[1])
                if cascade and cols_changed and old.partitionKeys:
                    self._cascade_columns(tx, new, ref.TBL_ID)
                    for pid in tx.part_ids_with_stats(ref.TBL_ID):
                        self._drop_changed_column_stats(tx, "PART_ID", pid, new.sd.cols)
                new.id = ref.TBL_ID
                # the event names the table as it is now (Hive's listener); the message names it as it was
                self._event(tx, EventType.ALTER_TABLE, new.dbName, new.tableName, self.msg.alter_table(old, new))
            except BaseException:
                if moved:  # put the directory back: the metadata change is rolled back
                    self.wh.rename(moved[1], moved[0])
                raise

    def alter_tables_cas(self, changes: Sequence[tuple[str, str, m.Table, dict[str, str]]]) -> None:
        """Alter several tables in one store transaction: all change or none (an Iceberg multi-table commit).

        Each change is (db, table, new table, environment); an environment carrying expected_parameter_key /
        expected_parameter_value makes that change a compare-and-swap, and one refused change (or a missing
        table) rolls back every other. Each change writes its ALTER_TABLE event. Renames are refused here:
        moving a managed table's directory could not be undone with the transaction.
        """
        for db, name, new, _env in changes:
            if (new.dbName or db).lower() != db.lower() or (new.tableName or name).lower() != name.lower():
                raise InvalidOperation(f"alter_tables_cas cannot rename {db}.{name}")
        with self.transaction() as tx:
            for db, name, new, env in changes:
                self.alter_table(db, name, new, env=env, tx=tx)

    def _db_location(self, tx: Tx, db: str) -> str:
        d = tx.get_database(db)
        return (d.locationUri if d and d.locationUri else self.wh.database_location(db))

    def _relocate_partitions(self, tx: Tx, tbl_id: int, old: str | None, new: str | None) -> None:
        if not old or not new:
            return
        tx.relocate_partitions(tbl_id, old.rstrip("/") + "/", new.rstrip("/") + "/")

    def _cascade_columns(self, tx: Tx, t: m.Table, tbl_id: int) -> None:
        parts = tx.partitions(replace(t, id=tbl_id))
        names = [make_part_name([k.name for k in t.partitionKeys], p.values) for p in parts]
        refs = tx.partition_refs(tbl_id, names)
        table_ref = tx.table_ref(t.dbName, t.tableName)
        assert table_ref is not None, "the table being altered"
        for n, p in zip(names, parts):
            p.sd.cols = list(t.sd.cols)
            tx.update_partition(tbl_id, refs[n], table_ref.CD_ID, t.sd.cols, n, p)

    def drop_table(self, db: str, name: str, delete_data: bool, env: dict[str, str] | None = None) -> None:
        db, name = db.lower(), name.lower()
        early: EarlyRmdir | None = None  # the table's directory, when empty, goes while the rows are deleted
        try:
            with self.transaction() as tx:
                found = tx.get_table_and_ref(db, name)
                if found is None:
                    raise NoSuchObject(f"{db}.{name} table not found")
                t, ref = found
                if delete_data and t.tableType == MANAGED_TABLE:
                    early = self.wh.start_rmdir(t.sd.location)
                locations = self._drop_table_tx(tx, t, delete_data, ref)
        except BaseException:
            if early is not None:
                early.restore()
            raise
        if early is not None and early.gone():
            locations = locations[1:]  # the table's own directory: removed already
        if delete_data:
            for loc in locations:
                self.wh.delete(loc)

    def _drop_table_tx(self, tx: Tx, t: m.Table, delete_data: bool, ref: TableRef) -> list[str | None]:
        parts = tx.table_partitions(ref.TBL_ID) if t.partitionKeys else []  # none without partition keys
        locations: list[str | None] = []
        if t.tableType == MANAGED_TABLE and delete_data:
            table_loc = t.sd.location
            locations = [table_loc] + [loc for _, _, loc in parts if loc and not _under(loc, table_loc)]
        tx.delete_table(ref, parts)
        tx.delete_table_txn_rows(t.dbName, t.tableName)  # its compaction requests and write ids, as Hive's
        self._event(tx, EventType.DROP_TABLE, t.dbName, t.tableName, self.msg.drop_table(t))
        return locations

    # ---- partitions ---------------------------------------------------------------------------------

    def _table_for_write(self, tx: Tx, db: str, name: str, exc: type[CatalogError] = InvalidObject,
                         missing: str | None = None) -> tuple[m.Table, TableRef]:
        """The table and its ids; `exc` with `missing` (or a default message) when there is no such table."""
        found = tx.get_table_and_ref(db.lower(), name.lower())
        if found is None:
            raise exc(missing if missing is not None else f"{db}.{name} table not found")
        return found

    def _check_values(self, t: m.Table, values: Sequence[str] | None, exc: type[CatalogError] = MetaError) -> list[str]:
        """Values for every key (Hive's message when they do not fit); unlike Hive, no value may be empty."""
        vals = list(values or [])
        if len(vals) != len(t.partitionKeys) or any(v is None or v == "" for v in vals):
            raise exc(bad_values_message([k.name for k in t.partitionKeys], vals))
        return vals

    def _part_name(self, t: m.Table, values: Sequence[str]) -> str:
        return make_part_name([k.name for k in t.partitionKeys], list(values))

    def add_partitions(self, db: str, table: str, parts: Sequence[m.Partition], if_not_exists: bool = False,
                       env: dict[str, str] | None = None, single: bool = False) -> list[m.Partition]:
        """Add partitions atomically; returns the ones added (all of them unless if_not_exists).

        `single`: the call adds one partition (Hive's add_partition), which words a missing table differently.
        """
        if not parts:
            return []
        missing = ("Unable to add partition because table or database do not exist" if single
                   else f"Unable to add partitions because database or table {db}.{table} does not exist")
        if any((p.catName or DEFAULT_CATALOG).lower() != DEFAULT_CATALOG for p in parts):
            raise InvalidObject(missing)  # Hive 3: no such table in that catalog
        dirs: DirBatch | None = None
        try:
            with self.transaction() as tx:
                t, ref = self._table_for_write(tx, db, table, InvalidObject, missing)
                seen: dict[str, m.Partition] = {}
                for p in parts:
                    if (p.dbName or "").lower() != t.dbName or (p.tableName or "").lower() != t.tableName:
                        raise MetaError(f"Partition does not belong to target table {t.dbName}.{t.tableName}: {p}")
                    vals = self._check_values(t, p.values)
                    name = self._part_name(t, vals)
                    if name in seen:
                        raise MetaError(f"Duplicate partitions in the list: {name}")
                    seen[name] = p
                existing = tx.partition_refs(ref.TBL_ID, list(seen))
                if existing and not if_not_exists:
                    name = next(iter(existing))
                    raise AlreadyExists(f"Partition already exists: {name}")
                now = _now()
                to_add: list[tuple[str, m.Partition]] = []
                custom: list[tuple[str, str]] = []  # managed partitions outside their table's directory
                for name, p in seen.items():
                    if name in existing:
                        continue
                    # no storage descriptor sent (the Thrift field unset): the table's, as append_partition's
                    if p.sd is None or p.sd == _UNSET_SD:
                        sd = m.shallow_copy(t.sd)
                        sd.location = None
                    else:
                        sd = m.shallow_copy(p.sd)
                    sd.parameters = dict(sd.parameters or {})
                    p = m.shallow_copy(p)
                    p.dbName, p.tableName, p.values, p.sd = t.dbName, t.tableName, list(p.values), sd
                    p.parameters = dict(p.parameters or {})
                    if not p.sd.location and t.tableType != VIRTUAL_VIEW:
                        p.sd.location = self.wh.child(t.sd.location or "", name) if t.sd.location else None
                    elif p.sd.location:
                        location = self._resolve(p.sd.location, "partition location")
                        assert location is not None, "a location resolved"
                        p.sd.location = location
                        if t.tableType == MANAGED_TABLE and not self._inside_own(location, t.sd.location):
                            custom.append((f"Partition {name} location", location))
                    to_add.append((name, p))
                if custom:
                    self._check_managed_many(tx, custom, InvalidObject, t.dbName, t.tableName)
                dirs = self.wh.start_mkdirs([p.sd.location for _, p in to_add])  # made while the rows are written
                new_dirs = set(dirs.made)
                ddl_time = str(now)
                for _, p in to_add:
                    if self.stats_autogather and t.tableType != VIRTUAL_VIEW:
                        self._fast_stats(p.parameters, p.sd.location, p.sd.location in new_dirs, False, env)
                    p.parameters.setdefault(DDL_TIME, ddl_time)
                    p.createTime = now
                tx.insert_partitions(ref.TBL_ID, ref.CD_ID, t.sd.cols, to_add)
                added = [p for _, p in to_add]
                if added:
                    self._event(tx, EventType.ADD_PARTITION, t.dbName, t.tableName,
                                self.msg.add_partition(t, added, [name for name, _ in to_add]))
                dirs.wait()  # before the commit: no partition is added without its directory
        except BaseException:
            if dirs is not None:
                dirs.discard()
            raise
        return added

    def append_partition(self, db: str, table: str, values: Sequence[str] | None = None, name: str | None = None,
                         env: dict[str, str] | None = None) -> m.Partition:
        with self._read() as tx:
            t = tx.get_table(db.lower(), table.lower())
        if t is None:
            raise InvalidObject(f"{db}.{table} table not found" if name is not None else
                                "Unable to add partition because table or database do not exist")
        if name is not None:
            values = part_vals_from_name([k.name for k in t.partitionKeys], name, InvalidObject)
        vals = self._check_values(t, values)
        p = m.Partition(values=vals, dbName=t.dbName, tableName=t.tableName, sd=replace(t.sd, location=None))
        self.add_partitions(t.dbName, t.tableName, [p], env=env, single=True)
        return self.get_partition(t.dbName, t.tableName, vals)

    def get_partition(self, db: str, table: str, values: Sequence[str]) -> m.Partition:
        t = self.get_table(db, table)
        if len(values or []) != len(t.partitionKeys):
            raise MetaError(bad_values_message([k.name for k in t.partitionKeys], values))
        name = self._part_name(t, values)
        with self._read() as tx:
            found = tx.partitions(t, names=[name])
        if not found:
            raise NoSuchObject(f"partition values={java_list(values)}")
        return found[0]

    def get_partition_by_name(self, db: str, table: str, name: str) -> m.Partition:
        t = self.get_table(db, table)
        vals = part_vals_from_name([k.name for k in t.partitionKeys], name, NoSuchObject)
        with self._read() as tx:
            found = tx.partitions(t, names=[self._part_name(t, vals)])
        if not found:
            raise NoSuchObject(f"partition values={java_list(vals)}")
        return found[0]

    def _table_or_nso(self, tx: Tx, db: str, table: str) -> m.Table:
        t = tx.get_table(db.lower(), table.lower())
        if t is None:
            raise NoSuchObject(f"{db}.{table} table not found")
        return t

    def get_partitions(self, db: str, table: str, max_parts: int = -1) -> list[m.Partition]:
        with self._read() as tx:
            t = self._table_or_nso(tx, db, table)
            return tx.partitions(t, limit=max_parts)

    def get_partition_names(self, db: str, table: str, max_parts: int = -1) -> list[str]:
        with self._read() as tx:
            t = self._table_or_nso(tx, db, table)
            return tx.partition_names(t, limit=max_parts)

    @staticmethod
    def _spec(t: m.Table, values: Sequence[str]) -> Sequence[str]:
        """A partial specification (values in key order; empty strings are wildcards, others must match the
        key's value), checked to name no more values than the table has keys."""
        if len(values) > len(t.partitionKeys):
            raise MetaError(f"Incorrect number of partition values. numPartKeys={len(t.partitionKeys)}, "
                            f"part_val={len(values)}")
        return values

    def get_partitions_ps(self, db: str, table: str, values: Sequence[str], max_parts: int = -1) -> list[m.Partition]:
        with self._read() as tx:
            t = self._table_or_nso(tx, db, table)
            return tx.partitions(t, spec=self._spec(t, values or []), limit=max_parts)

    def get_partition_names_ps(self, db: str, table: str, values: Sequence[str], max_parts: int = -1) -> list[str]:
        with self._read() as tx:
            t = self._table_or_nso(tx, db, table)
            return tx.partition_names(t, spec=self._spec(t, values or []), limit=max_parts)

    @staticmethod
    def _filter(t: m.Table, text: str | None) -> Node | None:
        """A client's filter parsed (None for a blank one: all partitions), its keys checked to be the table's.
        The store translates it; its FilterErrors (and the parser's) reach the client as MetaError."""
        if text is None or not text.strip():
            return None
        try:
            node = parse(text)
        except FilterError as e:
            raise MetaError(str(e)) from e
        missing = keys_of(node) - {k.name.lower() for k in t.partitionKeys}
        if missing:
            raise MetaError(f"Specified key <{sorted(missing)[0]}> is not a partitioning key for the table")
        return node

    def _filtered(self, t: m.Table, text: str | None, read: Callable[[Node | None], _R]) -> _R:
        """`read(node)` of a client's filter on `t` (see _filter); the store's FilterErrors (its limits on the
        translated filter) reach the client as MetaError."""
        node = self._filter(t, text)
        try:
            return read(node)
        except FilterError as e:
            raise MetaError(str(e)) from e

    def _by_filter(self, db: str, table: str, text: str | None,
                   read: Callable[[Tx, m.Table, Node | None], _R]) -> _R:
        with self._read() as tx:
            t = self._table_or_nso(tx, db, table)
            return self._filtered(t, text, lambda node: read(tx, t, node))

    def get_partitions_by_filter(self, db: str, table: str, text: str | None, max_parts: int = -1) -> list[m.Partition]:
        return self._by_filter(db, table, text, lambda tx, t, node: tx.partitions(t, filter=node, limit=max_parts))

    def get_partition_names_by_filter(self, db: str, table: str, text: str | None, max_parts: int = -1) -> list[str]:
        return self._by_filter(db, table, text,
                               lambda tx, t, node: tx.partition_names(t, filter=node, limit=max_parts))

    @staticmethod
    def _expr_filter(t: m.Table, data: bytes, default_name: str | None) -> Node:
        """A client's serialized Hive expression on `t` as a filter (core/hive_expr.py); ExprUnreadable for one
        this server cannot give Hive's meaning, or whose column types are not the table's."""
        try:
            expr = hive_expr.read(data, default_name or hive_expr.DEFAULT_PARTITION_NAME)
        except hive_expr.HiveExprError as e:
            raise ExprUnreadable(str(e)) from None
        keys = {k.name.lower(): k.type or "" for k in t.partitionKeys}
        for col, type_name in expr.columns.items():
            if col not in keys:
                raise MetaError(f"Specified key <{col}> is not a partitioning key for the table")
            if hive_expr.type_family(keys[col]) != hive_expr.type_family(type_name):
                raise ExprUnreadable(f"the expression reads {col} as {type_name}; the table's key is {keys[col]}")
        return expr.filter

    def _by_expr(self, db: str, table: str, data: bytes, default_name: str | None,
                 read: Callable[[Tx, m.Table, Node], _R]) -> _R:
        with self._read() as tx:
            t = self._table_or_nso(tx, db, table)
            node = self._expr_filter(t, data, default_name)
            try:
                return read(tx, t, node)
            except FilterError as e:  # the store's limits on the translated filter: the client prunes instead
                raise ExprUnreadable(str(e)) from e

    def get_partitions_by_expr(self, db: str, table: str, data: bytes, default_name: str | None = None,
                               max_parts: int = -1) -> list[m.Partition]:
        """The partitions Hive's serialized expression selects (get_partitions_by_expr)."""
        return self._by_expr(db, table, data, default_name,
                             lambda tx, t, node: tx.partitions(t, filter=node, limit=max_parts))

    def partition_names_by_expr(self, db: str, table: str, data: bytes, default_name: str | None = None) -> list[str]:
        """The names of the partitions Hive's serialized expression selects (drops by expression)."""
        return self._by_expr(db, table, data, default_name, lambda tx, t, node: tx.partition_names(t, filter=node))

    def table_version(self, db: str, name: str) -> tuple[int, int] | None:
        """(id, version) of a table; the version changes with every change to it or its partitions."""
        return self.store.table_version(db.lower(), name.lower())

    def count_partitions_by_filter(self, db: str, table: str, text: str | None) -> int:
        return self._by_filter(db, table, text, lambda tx, t, node: tx.count_partitions(t, filter=node))

    def get_partitions_by_names(self, db: str, table: str, names: Sequence[str]) -> list[m.Partition]:
        with self._read() as tx:
            t = self._table_or_nso(tx, db, table)
            _check_names_count(names)
            keys = [k.name for k in t.partitionKeys]
            canon = []
            for n in dict.fromkeys(names or []):
                try:
                    canon.append(make_part_name(keys, part_vals_from_name(keys, n)))
                except MetaError:
                    continue  # Hive returns only the partitions that exist
            return tx.partitions(t, names=canon)

    def alter_partitions(self, db: str, table: str, parts: Sequence[m.Partition],
                         env: dict[str, str] | None = None) -> None:
        env = env or {}
        with self.transaction() as tx:
            t, ref = self._table_for_write(tx, db, table, InvalidOperation,
                                           "Unable to alter partition because table or database does not exist.")
            names = []
            for p in parts:
                if p.values is None or len(p.values) != len(t.partitionKeys):
                    raise MetaError(bad_values_message([k.name for k in t.partitionKeys], p.values))
                names.append(self._part_name(t, p.values))
            refs = tx.partition_refs(ref.TBL_ID, names)
            missing = [n for n in names if n not in refs]
            if missing:
                raise InvalidOperation("alter is not possible: partition does not exist: " + missing[0])
            olds = {self._part_name(t, o.values): o for o in tx.partitions(t, names=names)}
            for name, p in zip(names, parts):
                old = olds[name]
                p = replace(p, dbName=t.dbName, tableName=t.tableName, parameters=dict(p.parameters or {}),
                            createTime=old.createTime, sd=p.sd or old.sd)
                self._partition_moved_to(tx, t, name, old, p, InvalidOperation)
                if p.parameters.get(DDL_TIME) in (None, "0"):
                    p.parameters[DDL_TIME] = str(_now())
                if self.stats_autogather and _require_stats(old, p, env):
                    self._fast_stats(p.parameters, p.sd.location, False, True, env)
                tx.update_partition(ref.TBL_ID, refs[name], ref.CD_ID, t.sd.cols, name, p)
                self._event(tx, EventType.ALTER_PARTITION, t.dbName, t.tableName, self.msg.alter_partition(t, old, p))

    def rename_partition(self, db: str, table: str, old_values: Sequence[str], new: m.Partition) -> None:
        if not old_values:
            return self.alter_partitions(db, table, [new])
        moved: tuple[str | None, str | None] | None = None
        with self.transaction() as tx:
            t, ref = self._table_for_write(tx, db, table, InvalidOperation)
            old_name = self._part_name(t, self._check_values(t, old_values, InvalidOperation))
            new_vals = self._check_values(t, new.values, InvalidOperation)
            new_name = self._part_name(t, new_vals)
            refs = tx.partition_refs(ref.TBL_ID, [old_name, new_name])
            if old_name not in refs:
                raise InvalidOperation("Unable to rename partition because old partition does not exist")
            if new_name in refs and new_name != old_name:
                raise InvalidOperation(f"Unable to rename partition because new partition already exists: {new_name}")
            old = tx.partitions(t, names=[old_name])[0]
            p = replace(new, dbName=t.dbName, tableName=t.tableName, values=new_vals, createTime=old.createTime,
                        parameters=dict(new.parameters or {}), sd=replace(new.sd or old.sd))
            if t.tableType == MANAGED_TABLE and _same_location(p.sd.location, old.sd.location) and t.sd.location:
                new_loc = self.wh.child(t.sd.location, new_name)
                # outside the roots nothing moves: the partition keeps its directory and location
                if self.wh.owns(old.sd.location) and self.wh.owns(new_loc):
                    p.sd.location = new_loc
                    moved = (old.sd.location, p.sd.location)
            else:
                self._partition_moved_to(tx, t, new_name, old, p, InvalidOperation)
            if p.parameters.get(DDL_TIME) in (None, "0"):
                p.parameters[DDL_TIME] = str(_now())
            if self.stats_autogather and _require_stats(old, p, {}):
                # As Hive 2.3: counted at the new location before the directory moves there (so 0 files
                # when it moves); Spark sends renamed partitions without their quick statistics.
                self._fast_stats(p.parameters, p.sd.location, False, True, {})
            if moved:
                self.wh.rename(*moved)
            try:
                tx.update_partition(ref.TBL_ID, refs[old_name], ref.CD_ID, t.sd.cols, new_name, p)
                self._event(tx, EventType.ALTER_PARTITION, t.dbName, t.tableName, self.msg.alter_partition(t, old, p))
            except BaseException:
                if moved:
                    self.wh.rename(moved[1], moved[0])
                raise

    def _partition_moved_to(self, tx: Tx, t: m.Table, name: str, old: m.Partition, p: m.Partition,
                            exc: type[CatalogError]) -> None:
        """Resolve a partition's changed location (in place); a managed table's partition moved out of the
        table's directory is checked as a managed object."""
        if not p.sd.location or p.sd.location == old.sd.location:
            return
        p.sd = replace(p.sd, location=self._resolve(p.sd.location, "partition location", exc))
        if (t.tableType == MANAGED_TABLE and not _same_location(p.sd.location, old.sd.location)
                and not self._inside_own(p.sd.location, t.sd.location)):
            self._check_managed(tx, p.sd.location, f"Partition {name} location", exc, t.dbName, t.tableName,
                                "partition")

    def drop_partitions(self, db: str, table: str, names: Sequence[str] | None = None,
                        values: Sequence[str] | None = None, delete_data: bool = True, if_exists: bool = False,
                        where: str | None = None) -> list[m.Partition]:
        """Drop partitions given by names, by full values, or by a filter; returns those dropped."""
        with self.transaction() as tx:
            t, ref = self._table_for_write(tx, db, table, NoSuchObject)
            if values is not None:
                vals = self._check_values(t, values, MetaError)
                wanted = [self._part_name(t, vals)]
                parts = tx.partitions(t, names=wanted)
            elif names is not None:
                _check_names_count(names)
                keys = [k.name for k in t.partitionKeys]
                wanted = [make_part_name(keys, part_vals_from_name(keys, n, NoSuchObject)) for n in names]
                parts = tx.partitions(t, names=wanted)
            else:
                parts = self._filtered(t, where, lambda node: tx.partitions(t, filter=node))
                wanted = [self._part_name(t, p.values) for p in parts]
            if len(parts) < len(set(wanted)) and not if_exists:
                have = {self._part_name(t, p.values) for p in parts}
                miss = next(n for n in wanted if n not in have)
                raise NoSuchObject("partition values=" + java_list(
                    part_vals_from_name([k.name for k in t.partitionKeys], miss) if values is None else values))
            if not parts:
                return []
            refs = tx.partition_refs(ref.TBL_ID, [self._part_name(t, p.values) for p in parts])
            tx.delete_partitions(ref.TBL_ID, list(refs.values()))
            for p in parts:  # one event per partition, as Hive's drop_partitions_req
                self._event(tx, EventType.DROP_PARTITION, t.dbName, t.tableName, self.msg.drop_partition(t, [p]))
        if delete_data and t.tableType == MANAGED_TABLE:
            for p in parts:
                self.wh.delete(p.sd.location)
                self.wh.delete_empty_parents(p.sd.location, len(t.partitionKeys) - 1)
        return parts

    # ---- functions ----------------------------------------------------------------------------------

    def create_function(self, fn: m.Function) -> None:
        if not valid_name(fn.functionName):
            raise InvalidObject(f"{fn.functionName} is not a valid object name")
        if not fn.className:
            raise InvalidObject("Function class name cannot be null")
        fn = replace(fn, functionName=fn.functionName.lower(), dbName=(fn.dbName or "").lower(),
                     createTime=fn.createTime or _now())
        fn.ownerName, fn.ownerType = self._owner(fn.ownerName, fn.ownerType)
        with self.transaction() as tx:
            db_id = tx.db_id(fn.dbName)
            if db_id is None:
                raise NoSuchObject(fn.dbName)  # Hive's message: the bare name of the missing database
            if tx.function_id(db_id, fn.functionName) is not None:
                raise AlreadyExists(f"Function {fn.functionName} already exists")
            tx.insert_function(db_id, fn)
            self._event(tx, EventType.CREATE_FUNCTION, fn.dbName, None, self.msg.create_function(fn))

    def get_function(self, db: str, name: str) -> m.Function:
        with self._read() as tx:
            found = tx.get_functions(db.lower(), name.lower())
        if not found:
            raise NoSuchObject(f"Function {db}.{name} does not exist")
        return found[0]

    def get_functions(self, db: str, pattern: str | None) -> list[str]:
        with self._read() as tx:
            names = [f.functionName for f in tx.get_functions(db.lower())]
        match = hive_pattern(pattern)
        return [n for n in names if match(n)]

    def get_all_functions(self) -> list[m.Function]:
        with self._read() as tx:
            return tx.get_functions()

    def drop_function(self, db: str, name: str) -> None:
        with self.transaction() as tx:
            fn = _delete_function(tx, db, name, NoSuchObject(f"Function {name} does not exist"))
            self._event(tx, EventType.DROP_FUNCTION, fn.dbName, None, self.msg.drop_function(fn))

    def alter_function(self, db: str, name: str, new: m.Function) -> None:
        if not valid_name(new.functionName):
            raise InvalidOperation(f"{new.functionName} is not a valid object name")
        with self.transaction() as tx:
            _delete_function(tx, db, name, MetaError(f"function {name} doesn't exist"))
            new = replace(new, functionName=new.functionName.lower(), dbName=(new.dbName or db).lower())
            db_id = tx.db_id(new.dbName)
            if db_id is None:
                raise InvalidOperation(f"The database {new.dbName} does not exist")
            tx.insert_function(db_id, new)

    # ---- column statistics --------------------------------------------------------------------------

    def update_column_statistics(self, stats: m.ColumnStatistics, tx: Tx | None = None) -> None:
        d = stats.statsDesc
        with (nullcontext(tx) if tx is not None else self.transaction()) as tx:
            db, table = (d.dbName or "").lower(), (d.tableName or "").lower()
            t = tx.get_table(db, table)
            if t is None:  # Hive's words for each level
                if d.isTblLevel:
                    raise NoSuchObject(_NO_TABLE + f"{db}.{table}")
                raise InvalidObject(f"{db}.{table} table not found")
            cols = {c.name.lower(): c for c in t.sd.cols}
            for o in stats.statsObj:
                if o.colName.lower() not in cols:
                    raise MetaError(f"Column {o.colName} doesn't exist in table {t.tableName} in database {t.dbName}")
            objs = list({o.colName.lower(): replace(o, colName=o.colName.lower()) for o in stats.statsObj}.values())
            when = _now()  # Hive's: the time of the update, whatever the client says
            if d.isTblLevel:
                tx.upsert_col_stats("TBL_ID", _tid(t), objs, when, stats.engine or "hive")
                params = dict(t.parameters)
                _mark_columns_accurate(params, [o.colName for o in objs])
                tx.update_table_params(_tid(t), params)
            else:
                keys = [k.name for k in t.partitionKeys]
                if not keys:
                    raise MetaError("Invalid partition key & values; keys [], values []")
                try:
                    name = make_part_name(keys, part_vals_from_name(keys, d.partName or ""))
                except MetaError as e:
                    raise InvalidInput(e.message) from e
                refs = tx.partition_refs(_tid(t), [name])
                if name not in refs:
                    raise NoSuchObject("Partition for which stats is gathered doesn't exist.")
                pid = refs[name].PART_ID
                tx.upsert_col_stats("PART_ID", pid, objs, when, stats.engine or "hive")
                params = {COLUMN_STATS_ACCURATE: tx.partition_param(pid, COLUMN_STATS_ACCURATE) or ""}
                _mark_columns_accurate(params, [o.colName for o in objs])
                tx.set_partition_param(pid, COLUMN_STATS_ACCURATE, params[COLUMN_STATS_ACCURATE])
                tx.bump_table_version(_tid(t))

    def _stats_table(self, tx: Tx, db: str, table: str) -> m.Table:
        """The table whose statistics are read, or Hive's NoSuchObjectException."""
        t = tx.get_table(db.lower(), table.lower())
        if t is None:
            raise NoSuchObject(_NO_TABLE + f"{db.lower()}.{table.lower()}")
        return t

    def get_table_column_statistics(self, db: str, table: str, cols: Sequence[str] | None,
                                    engine: str = "hive") -> m.ColumnStatistics | None:
        with self._read() as tx:
            t = self._stats_table(tx, db, table)
            found = tx.col_stats("TBL_ID", [_tid(t)], [c.lower() for c in cols] if cols is not None else None,
                                 engine).get(_tid(t), [])
        if not found:
            return None
        return m.ColumnStatistics(m.ColumnStatisticsDesc(True, t.dbName, t.tableName, None, max(w for _, w in found)),
                                  [o for o, _ in found], engine)

    def get_partition_column_statistics(self, db: str, table: str, part_names: Sequence[str],
                                        cols: Sequence[str] | None,
                                        engine: str = "hive") -> dict[str, m.ColumnStatistics]:
        with self._read() as tx:
            t = self._stats_table(tx, db, table)
            keys = [k.name for k in t.partitionKeys]
            canon = {}
            for n in part_names:
                try:
                    canon[make_part_name(keys, part_vals_from_name(keys, n))] = n
                except MetaError:
                    continue
            refs = tx.partition_refs(_tid(t), list(canon))
            by_id = {r.PART_ID: name for name, r in refs.items()}
            found = tx.col_stats("PART_ID", list(by_id), [c.lower() for c in cols] if cols is not None else None,
                                 engine)
        out = {}
        for pid, objs in found.items():
            name = by_id[pid]
            out[canon[name]] = m.ColumnStatistics(
                m.ColumnStatisticsDesc(False, t.dbName, t.tableName, name, max(w for _, w in objs)),
                [o for o, _ in objs], engine)
        return out

    def delete_column_statistics(self, db: str, table: str, part_name: str | None, col: str | None,
                                 engine: str | None = None) -> bool:
        with self.transaction() as tx:
            t = tx.get_table(db.lower(), table.lower())
            if t is None:  # Hive's words for each level
                if part_name is None:
                    raise NoSuchObject(f"Table {table}  for which stats deletion is requested doesn't exist")
                raise InvalidObject(f"{db.lower()}.{table.lower()} table not found")
            if part_name is None:
                n = tx.delete_col_stats("TBL_ID", _tid(t), col.lower() if col else None, engine)
            else:
                keys = [k.name for k in t.partitionKeys]
                name = make_part_name(keys, part_vals_from_name(keys, part_name))
                refs = tx.partition_refs(_tid(t), [name])
                if name not in refs:
                    raise NoSuchObject(f"Partition {part_name} for which stats deletion is requested doesn't exist")
                n = tx.delete_col_stats("PART_ID", refs[name].PART_ID, col.lower() if col else None, engine)
            if n == 0 and col is not None:
                where = "" if part_name is None else f" partition={part_name}"
                raise NoSuchObject(f"Column stats doesn't exist for db={t.dbName} table={t.tableName}{where} "
                                   f"col={col}")
            tx.bump_table_version(_tid(t))
        return True

    def get_aggr_stats(self, db: str, table: str, part_names: Sequence[str], cols: Sequence[str],
                       engine: str = "hive") -> tuple[list[m.ColumnStatisticsObj], int]:
        """get_aggr_stats_for: the partitions' statistics of `cols` merged as Hive does (catalog/colstats), and
        how many of the partitions have statistics for every column. Hive answers a missing partition or column
        with nothing found."""
        cols = [c.lower() for c in cols]
        with self._read() as tx:
            t = self._stats_table(tx, db, table)
            if not cols or not part_names:
                return [], 0
            keys = [k.name for k in t.partitionKeys]
            canon = []
            for n in part_names:
                try:
                    canon.append(make_part_name(keys, part_vals_from_name(keys, n)))
                except MetaError:
                    canon.append(n)  # found by no partition, still counted as requested (Hive's IN list)
            refs = tx.partition_refs(_tid(t), list(dict.fromkeys(canon)))
            by_id = {r.PART_ID: name for name, r in refs.items()}
            found = tx.col_stats("PART_ID", list(by_id), list(dict.fromkeys(cols)), engine)
        rows = [(o, by_id[pid]) for pid in sorted(found) for o, _ in found[pid]]
        return colstats.aggregate(rows, canon, cols)

    def set_aggr_stats(self, stats: Sequence[m.ColumnStatistics], need_merge: bool, engine: str = "hive") -> None:
        """set_aggr_stats_for: table statistics (exactly one ColumnStatistics) or partitions' statistics, merged
        with the stored ones when `need_merge` (Hive's mergers), in one transaction."""
        if not stats:
            return
        first = stats[0].statsDesc
        if first.isTblLevel and len(stats) != 1:
            raise MetaError(f"Expecting only 1 ColumnStatistics for table's column stats, but find {len(stats)}")
        with self.transaction() as tx:
            for cs in stats:
                cs = replace(cs, engine=cs.engine or engine,
                             statsDesc=replace(cs.statsDesc, isTblLevel=first.isTblLevel, dbName=first.dbName,
                                               tableName=first.tableName))
                if need_merge:
                    cs = self._merged(tx, cs)
                self.update_column_statistics(cs, tx)

    def _merged(self, tx: Tx, cs: m.ColumnStatistics) -> m.ColumnStatistics:
        d = cs.statsDesc
        names = [o.colName.lower() for o in cs.statsObj]
        if d.isTblLevel:
            old = self._table_stats_in(tx, d.dbName, d.tableName, names, cs.engine)
        else:
            old = self._part_stats_in(tx, d.dbName, d.tableName, [d.partName or ""], names, cs.engine)
        stored = {o.colName: o for o in (old or [])}
        try:
            objs = [colstats.merge(o, stored[o.colName.lower()]) if o.colName.lower() in stored else o
                    for o in cs.statsObj]
        except colstats.MergeError as e:
            raise InvalidInput(str(e)) from None
        return replace(cs, statsObj=objs)

    def _table_stats_in(self, tx: Tx, db: str, table: str, cols: Sequence[str],
                        engine: str) -> list[m.ColumnStatisticsObj]:
        t = tx.get_table((db or "").lower(), (table or "").lower())
        if t is None:
            return []
        return [o for o, _ in tx.col_stats("TBL_ID", [_tid(t)], cols, engine).get(_tid(t), [])]

    def _part_stats_in(self, tx: Tx, db: str, table: str, parts: Sequence[str], cols: Sequence[str],
                       engine: str) -> list[m.ColumnStatisticsObj]:
        t = tx.get_table((db or "").lower(), (table or "").lower())
        if t is None:
            return []
        keys = [k.name for k in t.partitionKeys]
        try:
            names = [make_part_name(keys, part_vals_from_name(keys, n)) for n in parts]
        except MetaError:
            return []
        refs = tx.partition_refs(_tid(t), names)
        found = tx.col_stats("PART_ID", [r.PART_ID for r in refs.values()], cols, engine)
        return [o for objs in found.values() for o, _ in objs]

    def _drop_changed_column_stats(self, tx: Tx, owner: str, owner_id: int, cols: Sequence[m.FieldSchema],
                                   params: dict[str, str] | None = None) -> None:
        """Hive's alter of a table's (or, with cascade, a partition's) columns: the statistics of a column that is
        no longer there with the same name and type go (for every engine), and leave COLUMN_STATS_ACCURATE."""
        kept = {(c.name.lower(), c.type.lower()) for c in cols}
        gone = set()
        for _, col, col_type, engine in tx.col_stats_kinds(owner, [owner_id]):
            if (col.lower(), (col_type or "").lower()) not in kept:
                tx.delete_col_stats(owner, owner_id, col, engine)
                gone.add(col)
        if gone and params is not None:
            _unmark_columns_accurate(params, gone)
        elif gone and owner == "PART_ID":
            part = {COLUMN_STATS_ACCURATE: tx.partition_param(owner_id, COLUMN_STATS_ACCURATE) or ""}
            _unmark_columns_accurate(part, gone)
            tx.set_partition_param(owner_id, COLUMN_STATS_ACCURATE, part[COLUMN_STATS_ACCURATE])

    # ---- DML events ---------------------------------------------------------------------------------

    def fire_insert_event(self, db: str, table: str, partition_values: Sequence[str] | None, replace: bool,
                          files: Sequence[str]) -> int:
        """Record that data was inserted into a table or one of its partitions (Hive's INSERT event)."""
        with self.transaction() as tx:
            t = self._table_or_nso(tx, db, table)
            part = None
            if partition_values:
                vals = self._check_values(t, partition_values)
                found = tx.partitions(t, names=[self._part_name(t, vals)])
                if not found:
                    raise NoSuchObject(f"partition values={java_list(vals)}")
                part = found[0]
            elif t.partitionKeys:
                raise MetaError(f"Table {t.dbName}.{t.tableName} is partitioned: an insert event names a partition")
            return tx.add_event(EventType.INSERT, t.dbName, t.tableName, self.msg.insert(t, part, replace, list(files)),
                                self.msg.format, _now())

    # ---- notifications ------------------------------------------------------------------------------

    def next_notifications(self, last_event: int, max_events: int | None, skip_types: Sequence[str] = (),
                           db: str | None = None, tables: Sequence[str] | None = None) -> list[m.NotificationEvent]:
        with self._read() as tx:
            events = tx.events(last_event, max_events, skip_types, db, tables)
            _check_events_kept(tx, last_event, events)
            return events

    def current_event_id(self) -> int:
        with self._read() as tx:
            return tx.current_event_id()

    def events_count(self, from_id: int, db: str | None, to_id: int | None = None, limit: int | None = None) -> int:
        with self._read() as tx:
            return tx.events_count(from_id, db, to_id, limit)

    # ---- notification consumers and retention -------------------------------------------------------
    # A consumer is a registered reader of the log (a relay's cursor, a replication policy): its position
    # is the last event it has read, and retention keeps every later event (up to the hard age cap).
    # One process at a time advances a consumer: the holder of its lease (owner, leaseUntil in epoch ms).

    def oldest_event_id(self) -> int | None:
        """The id of the oldest event still in the log (None when the log is empty)."""
        with self._read() as tx:
            return tx.min_event_id()

    def consumers(self) -> list[m.NotificationConsumer]:
        with self._read() as tx:
            return tx.consumers()

    def consumer(self, name: str) -> m.NotificationConsumer | None:
        with self._read() as tx:
            found = tx.consumers(name)
        return found[0] if found else None

    def register_consumer(self, name: str, last_event_id: int | None = None) -> m.NotificationConsumer:
        """Register a consumer positioned after `last_event_id` (default: the current event); an existing
        consumer keeps its position."""
        if not name:
            raise InvalidInput("a consumer needs a name")
        try:
            with self.transaction() as tx:
                found = tx.consumers(name)
                if found:
                    return found[0]
                pos = tx.current_event_id() if last_event_id is None else last_event_id
                tx.insert_consumer(name, pos, _now())
                return m.NotificationConsumer(name, pos, _now())
        except AlreadyExists:  # registered concurrently by another process
            found_c = self.consumer(name)
            assert found_c is not None
            return found_c

    def set_consumer(self, name: str, last_event_id: int) -> None:
        """Move a consumer's position (forward or back), whoever holds its lease."""
        with self.transaction() as tx:
            if not tx.update_consumer(name, LAST_EVENT_ID=last_event_id, UPDATED=_now()):
                raise NoSuchObject(f"notification consumer {name} does not exist")

    def remove_consumer(self, name: str) -> bool:
        with self.transaction() as tx:
            return tx.delete_consumer(name) > 0

    def claim_consumer(self, name: str, owner: str, lease_ms: int,
                       start_at: int | None = None) -> m.NotificationConsumer | None:
        """Take or renew the lease on consumer `name` for `owner`, registering the consumer (after `start_at`,
        default the current event) if it is new. None while another owner's lease has not expired."""
        now_ms = int(time.time() * 1000)
        try:
            with self.transaction() as tx:
                found = tx.consumers(name)
                if not found:
                    pos = tx.current_event_id() if start_at is None else start_at
                    tx.insert_consumer(name, pos, _now(), owner, now_ms + lease_ms)
                    return m.NotificationConsumer(name, pos, _now(), owner, now_ms + lease_ms)
                c = found[0]
                if c.owner not in (None, owner) and c.leaseUntil is not None and c.leaseUntil > now_ms:
                    return None
                tx.update_consumer(name, OWNER=owner, LEASE_UNTIL=now_ms + lease_ms, UPDATED=_now())
                return replace(c, owner=owner, leaseUntil=now_ms + lease_ms)
        except AlreadyExists:  # registered concurrently: the other process holds it now
            return None

    def advance_consumer(self, name: str, last_event_id: int, owner: str | None = None,
                         lease_ms: int | None = None) -> bool:
        """Move the consumer to `last_event_id` and renew the lease of `owner`; False (and nothing changed)
        when `owner` no longer holds the lease or the consumer is gone."""
        now_ms = int(time.time() * 1000)
        with self.transaction() as tx:
            found = tx.consumers(name)
            if not found or (owner is not None and found[0].owner != owner):
                return False
            values: dict[str, Any] = {"LAST_EVENT_ID": last_event_id, "UPDATED": _now()}
            if owner is not None and lease_ms is not None:
                values["LEASE_UNTIL"] = now_ms + lease_ms
            tx.update_consumer(name, **values)
            return True

    def release_consumer(self, name: str, owner: str) -> None:
        """Give up the lease (a clean stop), so another process may take over at once."""
        with self.transaction() as tx:
            found = tx.consumers(name)
            if found and found[0].owner == owner:
                tx.update_consumer(name, OWNER=None, LEASE_UNTIL=None)

    def clean_notifications(self, ttl: int, max_ttl: int | None = None, now: int | None = None,
                            chunk: int = 5000) -> int:
        """Delete the oldest events: those older than `ttl` seconds that every consumer has read, and those
        older than `max_ttl` (the hard cap) whether read or not. Only a prefix of the log is ever deleted,
        so the log stays a gap-free range and a reader behind it is told (EventsMissing). Returns how many."""
        now = _now() if now is None else now
        soft, hard = now - ttl, (now - max_ttl if max_ttl is not None else None)
        total = 0
        while True:
            with self.transaction() as tx:
                rows = tx.oldest_events(chunk)
                consumers = tx.consumers()
                floor = min((c.lastEventId for c in consumers), default=None)
                upto = None
                for eid, when in rows:
                    if when < soft and (floor is None or eid <= floor) or hard is not None and when < hard:
                        upto = eid
                    else:
                        break
                if upto is None:
                    return total
                total += tx.delete_events_upto(upto)
            behind = [c.name for c in consumers if c.lastEventId < upto]
            if behind:
                log.warning("notification log: events up to %d were older than the hard cap (%ss) and were "
                            "cleaned before consumers %s read them", upto, max_ttl, ", ".join(behind))
            if upto != rows[-1][0] or len(rows) < chunk:
                return total

    # ---- roles and privileges (catalog/privileges.py: the operations check their caller themselves) -----------

    def create_role(self, role: m.Role) -> None:
        self.privileges.create_role(role)

    def drop_role(self, name: str) -> None:
        self.privileges.drop_role(name)

    def role_names(self) -> list[str]:
        return self.privileges.role_names()

    def grant_role(self, role: str, name: str, ptype: int, grant_option: bool = False) -> None:
        self.privileges.grant_role(role, name, ptype, grant_option)

    def revoke_role(self, role: str, name: str, ptype: int, admin_option_only: bool = False) -> None:
        self.privileges.revoke_role(role, name, ptype, admin_option_only)

    def list_roles(self, name: str, ptype: int) -> list[m.Role]:
        return self.privileges.list_roles(name, ptype)

    def principals_in_role(self, role: str) -> list[m.RoleGrant]:
        return self.privileges.principals_in_role(role)

    def role_grants_for_principal(self, name: str, ptype: int) -> list[m.RoleGrant]:
        return self.privileges.role_grants_for_principal(name, ptype)

    def grant_privileges(self, grants: Sequence[m.PrivilegeGrant]) -> None:
        self.privileges.grant(grants)

    def revoke_privileges(self, grants: Sequence[m.PrivilegeGrant], grant_option_only: bool = False) -> None:
        self.privileges.revoke(grants, grant_option_only)

    def list_privileges(self, name: str | None, ptype: int | None,
                        obj: m.ObjectRef | None) -> list[m.PrivilegeGrant]:
        return self.privileges.list_privileges(name, ptype, obj)

    def privilege_set(self, obj: m.ObjectRef, user: str | None,
                      groups: Sequence[str]) -> dict[str, dict[str, list[m.PrivilegeGrant]]]:
        return self.privileges.privilege_set(obj, user, groups)

    # ---- the small operations engines call (issue 21) ---------------------------------------------------------

    def truncate_table(self, db: str, table: str, part_names: Sequence[str] | None = None) -> None:
        """Hive 3's truncate_table: the data files of a managed table, or of the named partitions, deleted, then
        their basic statistics reset (0 files, 0 rows, accurate) and their column statistics marked stale, by an
        alter (so with ALTER_TABLE or ALTER_PARTITION events, as Hive's alter handler writes them).

        Only directories inside the table's own location that the location policy lets this server delete are
        emptied (each is kept, empty); a partition elsewhere keeps its files (logged), whatever the caller asks.
        """
        t = self.get_table(db, table)
        if t.tableType != MANAGED_TABLE or (t.parameters or {}).get("EXTERNAL", "").upper() == "TRUE":
            raise MetaError(f"Cannot truncate non-managed table {t.tableName}.")
        if part_names is not None and not t.partitionKeys:
            raise MetaError(f"Table {t.dbName}.{t.tableName} is not partitioned: partitions cannot be truncated")
        parts: list[m.Partition] = []
        if t.partitionKeys:
            parts = (self.get_partitions_by_names(t.dbName, t.tableName, part_names) if part_names is not None
                     else self.get_partitions(t.dbName, t.tableName))
            locations = [p.sd.location for p in parts]
        else:
            locations = [t.sd.location]
        root = lexical_path(t.sd.location)
        for loc in locations:
            path = lexical_path(loc)
            if root is not None and path is not None and is_under(path, root):
                self.wh.empty(loc)
            elif loc:
                log.warning("truncate of %s.%s: %s is not inside the table's local directory, its files are left",
                            t.dbName, t.tableName, loc)
        env = {STATS_GENERATED: "TASK"}
        if t.partitionKeys:
            changed = []
            for p in parts:
                p = replace(p, parameters=dict(p.parameters or {}))
                _truncated_stats(p.parameters)
                changed.append(p)
            if changed:
                self.alter_partitions(t.dbName, t.tableName, changed, env)
        else:
            new = replace(t, parameters=dict(t.parameters or {}))
            _truncated_stats(new.parameters)
            self.alter_table(t.dbName, t.tableName, new, env=env)

    def get_partition_values(self, db: str, table: str, keys: Sequence[str], distinct: bool = True,
                             filter: str | None = None, max_parts: int = -1) -> list[list[str]]:
        """The values of the named partition keys of each partition (matching a filter), one row per partition,
        distinct rows when asked, at most `max_parts` rows. As Hive's ObjectStore, in no promised order (here:
        the partitions' names' order); a request's partitionOrder and ascending change nothing there either.
        A missing table is a MetaException, as Hive answers it."""
        if not keys:
            raise MetaError("Partition key cannot be empty")
        with self._read() as tx:
            t = tx.get_table(db.lower(), table.lower())
            if t is None:
                raise MetaError(f"{db}.{table} table not found")
            all_keys = [k.name.lower() for k in t.partitionKeys]
            for k in keys:
                if (k or "").lower() not in all_keys:
                    raise MetaError(f"Specified key <{k}> is not a partitioning key for the table")
            names = self._filtered(t, filter, lambda node: tx.partition_names(t, filter=node))
        pick = [all_keys.index(k.lower()) for k in keys]
        rows = [[v[i] for i in pick] for v in (part_vals_from_name(all_keys, n) for n in names)]
        if distinct:
            rows = [list(r) for r in dict.fromkeys(tuple(r) for r in rows)]
        return rows if max_parts < 0 else rows[:max_parts]

    def get_table_names_by_filter(self, db: str, text: str | None, max_tables: int = -1) -> list[str]:
        """Hive's table filter (get_table_names_by_filter): the names of `db`'s tables whose owner
        (hive_filter_field_owner__), last access time (hive_filter_field_last_access__) or parameters
        (hive_filter_field_params__KEY: =, <> and LIKE, on tables that have the key) match."""
        if db is None or not db.strip():
            raise UnknownDB("DB name is null or empty")
        if text is None:
            raise InvalidOperation("null cannot apply null filter")
        match = _table_filter(text)
        with self._read() as tx:
            tables = tx.get_tables(db.lower())
        names = [t.tableName for t in tables if match(t)]
        return names if max_tables < 0 else names[:max_tables]

    def metastore_db_uuid(self) -> str:
        """The store's uuid (get_metastore_db_uuid): made by the first call and kept in the store."""
        if self._db_uuid is None:
            with self.transaction() as tx:
                self._db_uuid = tx.db_property("guid", lambda: str(uuid.uuid4()), "Metastore DB GUID")
        return self._db_uuid


def _tid(t: m.Table) -> int:
    """The id of a table the store returned (always set there)."""
    assert t.id is not None, "a table read from the store"
    return t.id


def _db_id(tx: Tx, name: str) -> int:
    """The id of a database this transaction has seen."""
    db_id = tx.db_id(name)
    assert db_id is not None, "a database read in this transaction"
    return db_id


def _function_id(tx: Tx, db_id: int, name: str) -> int:
    """The id of a function this transaction has read."""
    fid = tx.function_id(db_id, name)
    assert fid is not None, "a function read in this transaction"
    return fid


def _delete_function(tx: Tx, db: str, name: str, missing: CatalogError) -> m.Function:
    """Delete a function and return what it was; raise `missing` (Hive words it per call) when there is none."""
    found = tx.get_functions(db.lower(), name.lower())
    if not found:
        raise missing
    fn = found[0]
    tx.delete_function(_function_id(tx, _db_id(tx, fn.dbName), fn.functionName))
    return fn


def _check_events_kept(tx: Tx, last_event: int, events: list[m.NotificationEvent]) -> None:
    """Raise EventsMissing when events after `last_event` were already cleaned from the log."""
    if events and events[0].eventId == last_event + 1:
        return
    oldest = tx.min_event_id()
    current = tx.current_event_id()
    if oldest is None:
        if current <= last_event:
            return
        gap_end, kept = current, "no event is kept"
    elif oldest > last_event + 1:
        gap_end, kept = oldest - 1, f"events {oldest} to {current} are kept"
    else:
        return
    from ..core.errors import EventsMissing
    raise EventsMissing(
        f"events missing: events {last_event + 1} to {gap_end} were already cleaned from the notification log "
        f"({kept}). Retention deletes events older than the time-to-live that no registered consumer still "
        f"needs; bootstrap the reader again from the current event, or register it as a consumer")


# partition names one call may name (get_partitions_by_names, drop_partitions): each costs a bound parameter and a
# parse; a million took ~15 s before the store refused the statement
MAX_NAMES_PER_CALL = 100_000


def _check_names_count(names: Sequence[str] | None) -> None:
    if names is not None and len(names) > MAX_NAMES_PER_CALL:
        raise MetaError(f"Too many partition names in one call ({len(names)}; at most {MAX_NAMES_PER_CALL})")


def _check_col_types(old: Sequence[m.FieldSchema], new: Sequence[m.FieldSchema]) -> None:
    """Hive's refusal of incompatible column type changes (HiveAlterHandler with
    hive.metastore.disallow.incompatible.col.type.changes): a type Hive cannot parse fails as Hive's does."""
    try:
        bad = hive_types.incompatible_columns([(c.name, c.type) for c in old], [(c.name, c.type) for c in new])
    except hive_types.HiveTypeError as e:
        raise MetaError(e.java_text) from None
    if bad:
        raise InvalidOperation(hive_types.incompatible_message(bad))


def _same_location(a: str | None, b: str | None) -> bool:
    """Whether two locations name the same place ('file:/x' and '/x/' do)."""
    if not a or not b:
        return False
    pa, pb = Warehouse.local_path(a), Warehouse.local_path(b)
    if pa is not None and pb is not None:
        return pa.rstrip("/") == pb.rstrip("/")
    return a.rstrip("/") == b.rstrip("/")


def _under(loc: str | None, parent: str | None) -> bool:
    return bool(loc and parent) and (loc.rstrip("/") + "/").startswith(parent.rstrip("/") + "/")  # type: ignore[union-attr]


def _require_stats(old: m.Partition, new: m.Partition, env: dict[str, str]) -> bool:
    if env.get(DO_NOT_UPDATE_STATS) == "true":
        return False
    if not all(k in new.parameters for k in FAST_STATS):
        return True
    if env.get(STATS_GENERATED) in ("TASK", "USER"):
        return True
    return any(old.parameters.get(k) != new.parameters.get(k) for k in FAST_STATS)


_NO_TABLE = "Specified database/table does not exist : "


def _unmark_columns_accurate(params: dict[str, str], cols: set[str]) -> None:
    """Hive's removeColumnStatsState: the columns leave COLUMN_STATS_ACCURATE, which is written even when it was
    not there (as `{}`)."""
    state = _stats_state(params)
    stats = state.get("COLUMN_STATS")
    if isinstance(stats, dict):
        for c in cols:
            stats.pop(c, None)
        if not stats:
            state.pop("COLUMN_STATS")
    params[COLUMN_STATS_ACCURATE] = json.dumps(state, separators=(",", ":"))


def _stats_state(params: dict[str, str]) -> dict[str, Any]:
    """COLUMN_STATS_ACCURATE read as Hive reads it: anything but a JSON object is an empty state."""
    try:
        state = json.loads(params.get(COLUMN_STATS_ACCURATE) or "{}")
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def _mark_columns_accurate(params: dict[str, str], cols: Sequence[str]) -> None:
    state = _stats_state(params)
    stats = state.setdefault("COLUMN_STATS", {})
    for c in cols:
        stats[c] = "true"
    state["COLUMN_STATS"] = dict(sorted(stats.items()))  # Hive's is a sorted map
    params[COLUMN_STATS_ACCURATE] = json.dumps(state, separators=(",", ":"))


# ---- issue 21's small operations: helpers ----------------------------------------------------------------------

_BASIC_STATS = ("numFiles", "numRows", "totalSize", "rawDataSize", "numFilesErasureCoded")
_FILTER_OWNER, _FILTER_LAST_ACCESS, _FILTER_PARAMS = (
    "hive_filter_field_owner__", "hive_filter_field_last_access__", "hive_filter_field_params__")
_PARAM_KEY = re.compile(re.escape(_FILTER_PARAMS) + r"([A-Za-z0-9_]+)", re.I)


def _truncated_stats(params: dict[str, str]) -> None:
    """Hive's statistics after a truncate: each basic statistic present is 0, accurate; column statistics stale."""
    for k in _BASIC_STATS:
        if k in params:
            params[k] = "0"
    params[COLUMN_STATS_ACCURATE] = json.dumps({"BASIC_STATS": "true"}, separators=(",", ":"))


def _table_filter(text: str) -> Callable[[m.Table], bool]:
    """Hive's filter on tables as a test of one table (SQL's three-valued logic: unknown is not selected)."""
    from ..core.filters import And, Between, Compare, In, Like, Not, Or, and3, like_matcher, not3, or3

    try:
        node = parse(text)
    except FilterError as e:
        raise MetaError(f"Error parsing partition filter; {e}") from e
    # the parser lower-cases key names; Hive compares parameter keys as written
    cased = {k.lower(): k for k in _PARAM_KEY.findall(text)}

    def field(key: str, op: str) -> Callable[[m.Table], Any]:
        if key == _FILTER_OWNER:
            return lambda t: t.owner
        if key == _FILTER_LAST_ACCESS:
            if op == "LIKE":
                raise MetaError("Like is not supported for HIVE_FILTER_FIELD_LAST_ACCESS")
            return lambda t: t.lastAccessTime or 0
        if key.startswith(_FILTER_PARAMS):
            if op not in ("=", "!=", "LIKE"):
                raise MetaError("Only [=, <>, LIKE, !=] are supported operators for HIVE_FILTER_FIELD_PARAMS")
            name = cased.get(key[len(_FILTER_PARAMS):], key[len(_FILTER_PARAMS):])
            return lambda t: (t.parameters or {}).get(name)
        raise MetaError("Invalid key name in filter.  Use constants from org.apache.hadoop.hive.metastore.api")

    def value(key: str, v: Any) -> Any:
        if key == _FILTER_LAST_ACCESS:
            if not isinstance(v, int):
                raise MetaError("Filtering on HIVE_FILTER_FIELD_LAST_ACCESS needs an integer")
            return v
        return str(v)

    def compile_(n: Any) -> Callable[[m.Table], bool | None]:
        if isinstance(n, Compare):
            get, want, cmp = field(n.key, n.op), value(n.key, n.value), COMPARISONS[n.op]
            return lambda t: None if get(t) is None else bool(cmp(get(t), want))
        if isinstance(n, Like):
            get, like = field(n.key, "LIKE"), like_matcher(n.pattern)
            return lambda t: None if get(t) is None else like(str(get(t)))
        if isinstance(n, In):  # as the comparisons it stands for
            alts = Or(tuple(Compare(n.key, "=", v) for v in n.values))
            return compile_(Not(alts) if n.negated else alts)
        if isinstance(n, Between):
            both = And((Compare(n.key, ">=", n.low), Compare(n.key, "<=", n.high)))
            return compile_(Not(both) if n.negated else both)
        if isinstance(n, And | Or):
            ops = [compile_(o) for o in n.operands]
            join = and3 if isinstance(n, And) else or3
            return lambda t: join([o(t) for o in ops])
        assert isinstance(n, Not)
        inner = compile_(n.operand)
        return lambda t: not3(inner(t))

    test = compile_(node)
    return lambda t: test(t) is True


class _PartOccupant(Occupant):
    """A partition found near a location: it counts as its table (dropped, and deleted, with it)."""

    __slots__ = ()

    def describe(self) -> str:
        return f"a partition of table {self.db}.{self.table}"
