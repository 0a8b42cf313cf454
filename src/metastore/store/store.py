"""The metastore's queries over Hive's schema.

`Store.read()` and `Store.write()` hand out a `Tx`, a connection in one transaction. A write transaction
first locks the single NOTIFICATION_SEQUENCE row (SQLite: BEGIN IMMEDIATE), so writers are serialized
across every server process on the same database: event ids are gap-free and in commit order, and a
read-check-write inside a write transaction cannot lose an update.

Reads of many partitions are a fixed number of set-based queries (one per child table), never one per
partition. Partitions are selected by plain values (canonical names, a partial specification) or a parsed
filter (core.filters' AST, translated here by filter_sql): callers build no SQL.

The store is the only layer that sees SQLAlchemy's errors: `read()`, `write()` and `table_version()` raise a
database failure as a core error (MetaError; AlreadyExists for a unique key a concurrent writer took first), so
nothing above the store imports SQLAlchemy.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, namedtuple
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from operator import itemgetter
from typing import Any, NamedTuple, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.sql import util as sql_util

from ..core.errors import AlreadyExists, CatalogError, MetaError
from ..core.filters import Node, keys_of
from ..core.model import (
    ColumnStatisticsObj,
    Database,
    FieldSchema,
    Function,
    NotificationEvent,
    Order,
    Partition,
    ResourceUri,
    SerDeInfo,
    SkewedInfo,
    StorageDescriptor,
    Table,
    TableMeta,
)
from ..core.names import INTEGRAL_TYPES
from ..core.stats import read_kind
from . import schema as s
from .constraints import ConstraintQueries
from .engine import describe, is_sqlite_file, raw_sqlite_connection
from .filter_sql import KeyColumn, to_sql
from .locks import LockQueries
from .privileges import PrivilegeQueries

_CHUNK = 500  # ids per IN (...) list; well under every dialect's bound-parameter limit
_OWNER_TYPES = {1: "USER", 2: "ROLE", 3: "GROUP"}
_OWNER_CODES = {v: k for k, v in _OWNER_TYPES.items()}
AnySelect = sa.Select[*tuple[Any, ...]]  # a SELECT of any columns


def _chunks(seq: Sequence[Any], n: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


class _Prepared:
    """A statement compiled once for the engine's driver, run on a raw connection.

    For the point lookups on the hot path (one per cached read), where building and compiling the
    statement and a transaction around it cost several times the query itself. On a SQLite file each
    thread keeps a read-only connection of its own for them: taking one from SQLAlchemy's pool and giving
    it back (with its reset) cost more than the lookup. Other databases use the pool, whose size bounds
    the server's connections.
    """

    def __init__(self, engine: Engine, stmt: AnySelect) -> None:
        compiled = stmt.compile(dialect=engine.dialect)
        self.engine = engine
        self.sql = str(compiled)
        self.order = list(compiled.positiontup or []) if compiled.positional else None
        self._local = threading.local() if is_sqlite_file(engine) else None

    def _thread_connection(self) -> Any:
        assert self._local is not None
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = raw_sqlite_connection(self.engine, timeout=60)  # each lookup its own read transaction
            conn.execute("PRAGMA query_only=1")
            self._local.conn = conn
        return conn

    def first(self, **params: Any) -> Any:
        args: Any = tuple(params[k] for k in self.order) if self.order is not None else params
        if self._local is not None:
            try:
                cur = self._thread_connection().execute(self.sql, args)
                row = cur.fetchone()
                cur.close()
                return row
            except self.engine.dialect.loaded_dbapi.Error as e:
                self._local.conn = None  # a fresh connection next time
                raise sa.exc.DBAPIError.instance(self.sql, args, e, self.engine.dialect.loaded_dbapi.Error) from e
        conn = self.engine.raw_connection()
        try:
            cur = conn.cursor()
            cur.execute(self.sql, args)
            row = cur.fetchone()
            cur.close()
            return row
        except self.engine.dialect.loaded_dbapi.Error as e:  # as SQLAlchemy would wrap it
            raise sa.exc.DBAPIError.instance(self.sql, args, e, self.engine.dialect.loaded_dbapi.Error) from e
        finally:
            conn.close()  # back to the pool, which ends the driver's implicit transaction


class TableRef(NamedTuple):
    TBL_ID: int
    DB_ID: int
    SD_ID: int | None
    CD_ID: int | None
    TBL_TYPE: str | None
    VERSION: int


class _Stmt:
    """A write statement built once and compiled once per dialect, run on the transaction's own DBAPI cursor.

    For the short inserts and deletes that make up table DDL (about forty per create+drop pair), where
    SQLAlchemy's per-execution work (cache key, parameter processing, result set-up) costs several times
    what the database takes to run them. Values must be of the driver's plain types (str, int, bool, None).
    """

    def __init__(self, stmt: Any) -> None:
        self.stmt = stmt
        self._sql: dict[str, tuple[str, list[str] | None, dict[str, Any]]] = {}
        # rows of a SELECT come back as named tuples of its selected columns' names
        self.row = (namedtuple("Row", [c.key for c in stmt.selected_columns], rename=True)  # type: ignore[misc]
                    if isinstance(stmt, sa.Select) else None)

    def sql(self, dialect: Any) -> tuple[str, list[str] | None, dict[str, Any]]:
        """(SQL text, bind names in order for positional drivers, values of the statement's own literals)."""
        got = self._sql.get(dialect.name)
        if got is None:
            c = self.stmt.compile(dialect=dialect, column_keys=[])
            fixed = {k: v for k, v in c.params.items() if v is not None}
            got = self._sql[dialect.name] = (str(c), list(c.positiontup or []) if c.positional else None, fixed)
        return got


_STMTS: dict[tuple[Any, ...], _Stmt] = {}
_SD_REFS = _Stmt(sa.select(s.sds.c.SERDE_ID, s.sds.c.CD_ID).where(s.sds.c.SD_ID == sa.bindparam("v")))
_CD_USED = _Stmt(sa.select(s.sds.c.SD_ID).where(s.sds.c.CD_ID == sa.bindparam("v")).limit(1))
_READ_SEQUENCE = _Stmt(sa.select(s.notification_sequence.c.NEXT_EVENT_ID).where(s.notification_sequence.c.NNI_ID == 1))
_LOCK_SEQUENCE = _Stmt(_READ_SEQUENCE.stmt.with_for_update())
_DB_ID = _Stmt(sa.select(s.dbs.c.DB_ID).where(s.dbs.c.NAME == sa.bindparam("name")))
_DB_LOCATION = _Stmt(sa.select(s.dbs.c.DB_ID, s.dbs.c.DB_LOCATION_URI).where(s.dbs.c.NAME == sa.bindparam("name")))
_TABLE_REF = _Stmt(sa.select(s.tbls.c.TBL_ID, s.tbls.c.DB_ID, s.tbls.c.SD_ID, s.sds.c.CD_ID, s.tbls.c.TBL_TYPE,
                             s.tbls.c.VERSION)
                   .select_from(s.tbls.join(s.dbs, s.dbs.c.DB_ID == s.tbls.c.DB_ID)
                                .outerjoin(s.sds, s.sds.c.SD_ID == s.tbls.c.SD_ID))
                   .where(s.dbs.c.NAME == sa.bindparam("db"), s.tbls.c.TBL_NAME == sa.bindparam("name")))
_TABLE_PARTS = _Stmt(sa.select(s.partitions.c.PART_ID, s.partitions.c.SD_ID, s.sds.c.LOCATION)
                     .select_from(s.partitions.outerjoin(s.sds, s.sds.c.SD_ID == s.partitions.c.SD_ID))
                     .where(s.partitions.c.TBL_ID == sa.bindparam("v")))
_DATABASE = _Stmt(sa.select(s.dbs).where(s.dbs.c.NAME == sa.bindparam("name")))
# a dropped table's transactional rows, named by database and table (Hive's TxnHandler tables keep names, not ids)
_TABLE_TXN_ROWS = [_Stmt(t.delete().where(t.c[d] == sa.bindparam("db"), t.c[n] == sa.bindparam("name")))
                   for t, d, n in ((s.compaction_queue, "CQ_DATABASE", "CQ_TABLE"),
                                   (s.txn_to_write_id, "T2W_DATABASE", "T2W_TABLE"),
                                   (s.next_write_id, "NWI_DATABASE", "NWI_TABLE"))]
_COLUMNS_OF = _Stmt(sa.select(s.columns_v2.c.COLUMN_NAME, s.columns_v2.c.TYPE_NAME, s.columns_v2.c.COMMENT)
                    .where(s.columns_v2.c.CD_ID == sa.bindparam("v")).order_by(s.columns_v2.c.INTEGER_IDX))
_KEYS_OF = _Stmt(sa.select(s.partition_keys.c.PKEY_NAME, s.partition_keys.c.PKEY_TYPE, s.partition_keys.c.PKEY_COMMENT)
                 .where(s.partition_keys.c.TBL_ID == sa.bindparam("v")).order_by(s.partition_keys.c.INTEGER_IDX))
_SD_COLUMNS = (s.sds.c.SD_ID, s.sds.c.CD_ID, s.sds.c.SERDE_ID, s.sds.c.INPUT_FORMAT, s.sds.c.OUTPUT_FORMAT,
               s.sds.c.LOCATION, s.sds.c.IS_COMPRESSED, s.sds.c.IS_STOREDASSUBDIRECTORIES, s.sds.c.NUM_BUCKETS,
               s.sds.c.BUCKET_COLS, s.sds.c.SORT_COLS, s.sds.c.SKEWED_INFO, s.serdes.c.NAME.label("SERDE_NAME"),
               s.serdes.c.SLIB, s.serdes.c.DESCRIPTION, s.serdes.c.SERIALIZER_CLASS, s.serdes.c.DESERIALIZER_CLASS,
               s.serdes.c.SERDE_TYPE)


_LOCATIONS_NEAR: dict[int, _Stmt] = {}


def _locations_near(n: int) -> _Stmt:
    """Tx.locations_near's statement for n spellings: a location equal to one, under one (LIKE), or a parent of one
    (the spelling starts with the location and a slash)."""
    def near(col: Any) -> Any:
        conds = []
        for i in range(n):
            e, p = sa.bindparam(f"e{i}", type_=sa.String), sa.bindparam(f"p{i}", type_=sa.String)
            conds += [col == e, col.like(p, escape="!"),
                      sa.func.substr(e, 1, sa.func.char_length(col) + 1) == col.concat("/")]
        return sa.or_(*conds)
    d, t, sd = s.dbs.c, s.tbls.c, s.sds.c
    none = sa.cast(sa.null(), sa.String(256))
    return _Stmt(sa.union_all(
        sa.select(d.NAME, none, none, sa.cast(d.DB_LOCATION_URI, sa.String(4000)), sa.literal_column("0"))
        .where(near(d.DB_LOCATION_URI)),
        sa.select(d.NAME, sa.cast(t.TBL_NAME, sa.String(256)), sa.cast(t.TBL_TYPE, sa.String(256)),
                  sa.cast(sd.LOCATION, sa.String(4000)), sa.literal_column("0"))
        .select_from(s.tbls.join(s.sds, sd.SD_ID == t.SD_ID).join(s.dbs, d.DB_ID == t.DB_ID))
        .where(near(sd.LOCATION)),
        # partitions too: one placed at another table's or database's directory (Spark's SET LOCATION) is
        # deleted with whatever managed object shares it
        sa.select(d.NAME, sa.cast(t.TBL_NAME, sa.String(256)), sa.cast(t.TBL_TYPE, sa.String(256)),
                  sa.cast(sd.LOCATION, sa.String(4000)), sa.literal_column("1"))
        .select_from(s.partitions.join(s.sds, sd.SD_ID == s.partitions.c.SD_ID)
                     .join(s.tbls, t.TBL_ID == s.partitions.c.TBL_ID).join(s.dbs, d.DB_ID == t.DB_ID))
        .where(near(sd.LOCATION))))


def _tables_query() -> AnySelect:
    """Tables with their database's name and their descriptor and serde columns (see Tx._load_sds)."""
    t = s.tbls.c
    return (sa.select(t.TBL_ID, t.TBL_NAME, t.OWNER, t.OWNER_TYPE, t.CREATE_TIME, t.LAST_ACCESS_TIME, t.RETENTION,
                      t.TBL_TYPE, t.VIEW_ORIGINAL_TEXT, t.VIEW_EXPANDED_TEXT, t.IS_REWRITE_ENABLED, t.VERSION,
                      t.DB_ID, s.dbs.c.NAME.label("DB_NAME"), s.dbs.c.CTLG_NAME, *_SD_COLUMNS)
            .select_from(s.tbls.join(s.dbs, s.dbs.c.DB_ID == t.DB_ID)
                         .outerjoin(s.sds, s.sds.c.SD_ID == t.SD_ID)
                         .outerjoin(s.serdes, s.serdes.c.SERDE_ID == s.sds.c.SERDE_ID)))


_ONE_TABLE = _Stmt(_tables_query().where(s.dbs.c.NAME == sa.bindparam("db"), s.tbls.c.TBL_NAME == sa.bindparam("name")))


def _one_table_children() -> sa.CompoundSelect[*tuple[Any, ...]]:
    """Everything under one table in one statement: (kind, a, b, c, position) rows of its parameters (0),
    its descriptor's (1) and serde's (2) parameters, its columns (3) and partition keys (4), in order.
    Reading a table (get_table's cold path, every DDL's read of the table it changes) is five statements
    fewer than one per child table."""
    def part(kind: int, a: Any, b: Any, c: Any, pos: Any, where: Any) -> AnySelect:
        return sa.select(sa.literal_column(str(kind)).label("KIND"), a.label("A"), b.label("B"),
                         (c if c is not None else sa.null()).label("C"),
                         (pos if pos is not None else sa.literal_column("0")).label("POS")).where(where)

    tp, sp, ep = s.table_params.c, s.sd_params.c, s.serde_params.c
    col, pk = s.columns_v2.c, s.partition_keys.c
    return sa.union_all(
        part(0, tp.PARAM_KEY, tp.PARAM_VALUE, None, None, tp.TBL_ID == sa.bindparam("tbl")),
        part(1, sp.PARAM_KEY, sp.PARAM_VALUE, None, None, sp.SD_ID == sa.bindparam("sd")),
        part(2, ep.PARAM_KEY, ep.PARAM_VALUE, None, None, ep.SERDE_ID == sa.bindparam("serde")),
        part(3, col.COLUMN_NAME, col.TYPE_NAME, col.COMMENT, col.INTEGER_IDX, col.CD_ID == sa.bindparam("cd")),
        part(4, pk.PKEY_NAME, pk.PKEY_TYPE, pk.PKEY_COMMENT, pk.INTEGER_IDX, pk.TBL_ID == sa.bindparam("tbl")),
    ).order_by(sa.literal_column("1"), sa.literal_column("5"))


_ONE_TABLE_CHILDREN = _Stmt(_one_table_children())
_ADVANCE_SEQUENCE = _Stmt(s.notification_sequence.update().where(s.notification_sequence.c.NNI_ID == 1)
                          .values(NEXT_EVENT_ID=sa.bindparam("next")))


def _insert_stmt(table: sa.Table, cols: Sequence[str]) -> _Stmt:
    """INSERT of these columns (on PostgreSQL with RETURNING of the serial key, if the table has one)."""
    key = ("insert", table.name, tuple(cols))
    st = _STMTS.get(key)
    if st is None:
        st = _STMTS[key] = _Stmt(table.insert().values({c: sa.bindparam(c) for c in cols}) if cols
                                 else table.insert())
    return st


def _params_stmt(table: sa.Table, owner: str) -> _Stmt:
    key = ("params", table.name, owner)
    st = _STMTS.get(key)
    if st is None:
        col = table.c[owner]
        st = _STMTS[key] = _Stmt(sa.select(col, table.c.PARAM_KEY, table.c.PARAM_VALUE).where(col == sa.bindparam("v")))
    return st


def _delete_stmt(table: sa.Table, col: str) -> _Stmt:
    key = ("delete", table.name, col)
    st = _STMTS.get(key)
    if st is None:
        st = _STMTS[key] = _Stmt(table.delete().where(table.c[col] == sa.bindparam("v")))
    return st


class Store:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._scope = threading.local()  # see connection_scope
        pool_size = engine.pool.size() if isinstance(engine.pool, sa.pool.QueuePool) else 0
        self._keep = pool_size // 2 if is_sqlite_file(engine) else 0
        self._kept = 0
        self._kept_lock = threading.Lock()
        self._on_events: tuple[Callable[[], None], ...] = ()  # see on_events_committed
        t = s.tbls.c
        self._table_version = _Prepared(engine, sa.select(t.TBL_ID, t.VERSION).select_from(
            s.tbls.join(s.dbs, s.dbs.c.DB_ID == t.DB_ID)).where(
            s.dbs.c.NAME == sa.bindparam("db"), t.TBL_NAME == sa.bindparam("name")))

    def table_version(self, db: str, name: str) -> tuple[int, int] | None:
        """(TBL_ID, VERSION) of a table, outside any transaction: the key of cached serialized forms."""
        try:
            row = self._table_version.first(db=db, name=name)
        except sa.exc.SQLAlchemyError as e:
            raise _store_error(e) from e
        return (int(row[0]), int(row[1])) if row is not None else None

    def describe(self) -> str:
        """The store's URL, without its password (for logs and status)."""
        return describe(self.engine)

    def on_events_committed(self, callback: Callable[[], None]) -> None:
        """Run `callback()` (in the committing thread, after the commit) whenever a write transaction of this
        Store that added notification events commits: a hint for in-process readers of the log, which need not
        wait for their next poll. It must be quick and not raise; it is never removed."""
        with self._kept_lock:
            self._on_events = (*self._on_events, callback)

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Tx]:
        started = False
        try:
            with self._connection() as conn:
                if write:
                    conn.info["write"] = True  # consumed by the SQLite begin hook
                with conn.begin():
                    tx = Tx(conn, self.dialect)
                    try:
                        if write:
                            tx.lock_sequence()
                        started = True
                        yield tx
                    finally:
                        tx.close()
        except sa.exc.SQLAlchemyError as e:
            raise _store_error(e, started) from e

    def read(self) -> AbstractContextManager[Tx]:
        """A read transaction; errors of the database come out as core errors (see _store_error)."""
        return self._transaction(write=False)

    @contextmanager
    def write(self) -> Iterator[Tx]:
        """A write transaction, serialized with every other writer on the database (see the module docstring);
        errors of the database come out as core errors (see _store_error)."""
        with self._transaction(write=True) as tx:
            yield tx
        if tx.events_written:
            for callback in self._on_events:
                callback()

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        """The thread's kept connection (see connection_scope) when it has one free, else one from the pool."""
        kept = getattr(self._scope, "conn", None)
        if kept is None or self._scope.busy:
            with self.engine.connect() as conn:
                yield conn
            return
        self._scope.busy = True
        try:
            yield kept
        except sa.exc.DBAPIError as e:
            if e.connection_invalidated or kept.invalidated:
                self._scope.conn = None  # this one is broken: the pool's, for the rest of the scope
                kept.close()
            raise
        finally:
            self._scope.busy = False

    @contextmanager
    def connection_scope(self) -> Iterator[None]:
        """Let this thread keep one connection for its transactions until the scope ends.

        A server thread that answers one client's calls one after another takes a connection from the pool
        and gives it back (with its reset) for every call; on SQLite that costs as much as a short statement.
        Kept only for SQLite files, and by at most half the pool's connections at once, so that threads
        without one still find connections in the pool.
        """
        if not self._keep or getattr(self._scope, "conn", None) is not None:
            yield
            return
        with self._kept_lock:
            keep = self._kept < self._keep
            if keep:
                self._kept += 1
        if not keep:
            yield
            return
        try:
            with self.engine.connect() as conn:
                self._scope.conn, self._scope.busy = conn, False
                try:
                    yield
                finally:
                    self._scope.conn = None
        finally:
            with self._kept_lock:
                self._kept -= 1

    def initialize(self) -> None:
        """Make the sequence row if it is missing (a fresh schema)."""
        with self.engine.begin() as conn:
            if conn.execute(sa.select(sa.func.count()).select_from(s.notification_sequence)).scalar() == 0:
                conn.execute(s.notification_sequence.insert().values(NNI_ID=1, NEXT_EVENT_ID=1))


def _store_error(e: sa.exc.SQLAlchemyError, started: bool = True) -> CatalogError:
    """A database error as the error clients get (a MetaException, or AlreadyExists for a write that lost a race
    on a unique key); `started`: whether the transaction had begun (otherwise the store is unavailable). The
    text is the driver's first line, capped: enough to tell what failed."""
    short = (str(getattr(e, "orig", e)).splitlines() or [""])[0][:500]
    if not started:
        return MetaError(f"store unavailable: {e.__class__.__name__}: {short}")
    if isinstance(e, sa.exc.IntegrityError):
        return AlreadyExists(f"the object was created concurrently: {short}")
    return MetaError(f"{e.__class__.__name__}: {short}")


def _inserted_id(result: sa.CursorResult[Any]) -> int:
    """The generated key of a one-row INSERT."""
    key = result.inserted_primary_key
    assert key is not None, "an INSERT of one row"
    return int(key[0])


def _json(v: Any) -> str | None:
    return json.dumps(v) if v else None


class Tx:
    """One transaction's worth of queries. Methods take and return catalog model objects or ids."""

    def __init__(self, conn: Connection, dialect: str) -> None:
        self.conn = conn
        self.dialect = dialect
        self._next_event: int | None = None
        self._cur: Any = None
        self.events_written = False  # whether add_event ran (Store.on_events_committed)

    def lock_queries(self) -> LockQueries:
        """The lock manager's queries (HIVE_LOCKS, TXNS, ...) in this transaction."""
        return LockQueries(self.conn)

    def privileges(self) -> PrivilegeQueries:
        """Roles, role grants, privileges and owners (store/privileges.py) in this transaction."""
        return PrivilegeQueries(self.conn)

    def constraints(self) -> ConstraintQueries:
        """Table constraints (store/constraints.py) in this transaction."""
        return ConstraintQueries(self.conn)

    def db_property(self, key: str, make: Callable[[], str], description: str | None = None) -> str:
        """A property of the store (METASTORE_DB_PROPERTIES), made with `make()` and kept when it has none."""
        t = s.metastore_db_properties
        value = self.conn.execute(sa.select(t.c.PROPERTY_VALUE).where(t.c.PROPERTY_KEY == key)).scalar()
        if value is None:
            value = make()
            self.conn.execute(t.insert().values(PROPERTY_KEY=key, PROPERTY_VALUE=value, DESCRIPTION=description))
        return str(value)

    def close(self) -> None:
        if self._cur is not None:
            self._cur.close()
            self._cur = None

    def _run(self, st: _Stmt, params: dict[str, Any] | None = None) -> Any:
        """Execute on this transaction's connection; driver errors are raised as SQLAlchemy's."""
        sql, order, fixed = st.sql(self.conn.dialect)
        if fixed:
            params = {**fixed, **(params or {})}
        args: Any = tuple(params[k] for k in order) if order is not None and params else (params or ())
        if self._cur is None:
            self._cur = self.conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            self._cur.execute(sql, args)
        except self.conn.dialect.loaded_dbapi.Error as e:
            raise sa.exc.DBAPIError.instance(sql, args, e, self.conn.dialect.loaded_dbapi.Error) from e
        return self._cur

    def _rows(self, st: _Stmt, params: dict[str, Any]) -> list[Any]:
        cur, row = self._run(st, params), st.row
        assert row is not None, "a SELECT's statement"
        return [row(*r) for r in cur.fetchall()]

    def _insert_id(self, table: sa.Table, values: dict[str, Any]) -> int:
        """Insert one row; its generated key."""
        cur = self._run(_insert_stmt(table, tuple(values)), values)
        return int(cur.fetchone()[0]) if self.dialect == "postgresql" else int(cur.lastrowid)

    def _insert_rows(self, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        """Insert rows that all have the same keys (and no generated key to return)."""
        if rows:
            cols = tuple(rows[0])
            get = itemgetter(*cols)  # builds each row's tuple in C
            self._insert_values(table, cols, list(map(get, rows)) if len(cols) > 1 else [(get(r),) for r in rows])

    def _insert_values(self, table: sa.Table, cols: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        """Insert rows given as tuples of the values of `cols`, in that order (and no generated key to return).
        Batches are built as tuples: a batch's rows (seven a partition) built as dicts cost about as much as the
        database's inserts."""
        if not rows:
            return
        st = _insert_stmt(table, cols)
        if len(rows) == 1:
            self._run(st, dict(zip(cols, rows[0])))
            return
        sql, order, fixed = st.sql(self.conn.dialect)
        if order is None:  # a named paramstyle (psycopg2): SQLAlchemy batches these into multi-row inserts
            self.conn.execute(table.insert(), [dict(zip(cols, r)) for r in rows])
            return
        # sqlite3 runs executemany in C; PyMySQL turns it into multi-row INSERTs
        if order != list(cols):  # the statement binds in the table's column order, and maybe values of its own
            at = {c: i for i, c in enumerate(cols)}
            if fixed or not at.keys() >= set(order):
                rows = [tuple(r[at[n]] if n in at else fixed.get(n) for n in order) for r in rows]
            else:
                pick = itemgetter(*[at[n] for n in order])
                rows = list(map(pick, rows)) if len(order) > 1 else [(pick(r),) for r in rows]
        if self._cur is None:
            self._cur = self.conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            self._cur.executemany(sql, rows)
        except self.conn.dialect.loaded_dbapi.Error as e:
            raise sa.exc.DBAPIError.instance(sql, rows[:3], e, self.conn.dialect.loaded_dbapi.Error) from e

    def _delete_where(self, table: sa.Table, col: str, value: Any) -> None:
        self._run(_delete_stmt(table, col), {"v": value})

    # ---- notification log -------------------------------------------------------------------------

    def lock_sequence(self) -> None:
        row = self._run(_LOCK_SEQUENCE if self.dialect != "sqlite" else _READ_SEQUENCE).fetchone()
        if row is None:
            raise sa.exc.NoResultFound("the notification sequence row is missing")
        self._next_event = int(row[0])

    def add_event(self, event_type: str, db: str | None, table: str | None, message: str, fmt: str,
                  when: int, cat: str | None = "hive") -> int:
        assert self._next_event is not None, "events are written in write transactions only"
        eid = self._next_event
        self._insert_rows(s.notification_log, [dict(
            NL_ID=eid, EVENT_ID=eid, EVENT_TIME=when, EVENT_TYPE=event_type, CAT_NAME=cat, DB_NAME=db,
            TBL_NAME=table, MESSAGE=message, MESSAGE_FORMAT=fmt)])
        self._next_event = eid + 1
        self._run(_ADVANCE_SEQUENCE, {"next": eid + 1})
        self.events_written = True
        return eid

    def current_event_id(self) -> int:
        q = sa.select(s.notification_sequence.c.NEXT_EVENT_ID).where(s.notification_sequence.c.NNI_ID == 1)
        return int(self.conn.execute(q).scalar_one()) - 1

    def events(self, after: int, limit: int | None, skip_types: Sequence[str] = (), db: str | None = None,
               tables: Sequence[str] | None = None) -> list[NotificationEvent]:
        t = s.notification_log
        q = sa.select(t).where(t.c.EVENT_ID > after).order_by(t.c.EVENT_ID)
        if skip_types:
            q = q.where(t.c.EVENT_TYPE.not_in(list(skip_types)))
        if db is not None:
            q = q.where(sa.func.lower(t.c.DB_NAME) == db.lower())
        if tables:
            q = q.where(sa.func.lower(t.c.TBL_NAME).in_([x.lower() for x in tables]))
        if limit is not None and limit > 0:
            q = q.limit(limit)
        return [NotificationEvent(r.EVENT_ID, r.EVENT_TIME, r.EVENT_TYPE, r.DB_NAME, r.TBL_NAME, r.MESSAGE or "",
                                  r.MESSAGE_FORMAT or "", r.CAT_NAME) for r in self.conn.execute(q)]

    def events_count(self, from_id: int, db: str | None, to_id: int | None = None, limit: int | None = None) -> int:
        t = s.notification_log
        q = sa.select(t.c.EVENT_ID).where(t.c.EVENT_ID > from_id)
        if db is not None:
            q = q.where(sa.func.lower(t.c.DB_NAME) == db.lower())
        if to_id is not None and to_id > 0:
            q = q.where(t.c.EVENT_ID <= to_id)
        if limit is not None and limit > 0:
            q = q.order_by(t.c.EVENT_ID).limit(limit)
        return int(self.conn.execute(sa.select(sa.func.count()).select_from(q.subquery())).scalar_one())

    def min_event_id(self) -> int | None:
        return self.conn.execute(sa.select(sa.func.min(s.notification_log.c.EVENT_ID))).scalar()

    # ---- databases ----------------------------------------------------------------------------------

    def db_id(self, name: str) -> int | None:
        row = self._run(_DB_ID, {"name": name}).fetchone()
        return int(row[0]) if row is not None else None

    def db_location(self, name: str) -> tuple[int, str | None] | None:
        """(DB_ID, location) of a database, or None: what a new table needs of it, in one statement."""
        row = self._run(_DB_LOCATION, {"name": name}).fetchone()
        return (int(row[0]), row[1]) if row is not None else None

    def get_database(self, name: str) -> Database | None:
        found = self._rows(_DATABASE, {"name": name})
        if not found:
            return None
        row = found[0]
        params = self._params(s.database_params, "DB_ID", [row.DB_ID])[row.DB_ID]
        return Database(name=row.NAME, description=row.DESC, locationUri=row.DB_LOCATION_URI, parameters=params,
                        ownerName=row.OWNER_NAME, ownerType=_OWNER_CODES.get(row.OWNER_TYPE or ""),
                        catalogName=row.CTLG_NAME, createTime=row.CREATE_TIME)

    def database_names(self) -> list[str]:
        return list(self.conn.execute(sa.select(s.dbs.c.NAME).order_by(s.dbs.c.NAME)).scalars())

    def insert_database(self, db: Database) -> int:
        db_id = _inserted_id(self.conn.execute(s.dbs.insert().values(
            NAME=db.name, DESC=db.description, DB_LOCATION_URI=db.locationUri or "", OWNER_NAME=db.ownerName,
            OWNER_TYPE=_OWNER_TYPES.get(db.ownerType or 0), CTLG_NAME=db.catalogName or "hive",
            CREATE_TIME=db.createTime)))
        self._insert_params(s.database_params, "DB_ID", db_id, db.parameters)
        return db_id

    def update_database(self, db_id: int, db: Database) -> None:
        self.conn.execute(s.dbs.update().where(s.dbs.c.DB_ID == db_id).values(
            DESC=db.description, DB_LOCATION_URI=db.locationUri or "", OWNER_NAME=db.ownerName,
            OWNER_TYPE=_OWNER_TYPES.get(db.ownerType or 0)))
        self.conn.execute(s.database_params.delete().where(s.database_params.c.DB_ID == db_id))
        self._insert_params(s.database_params, "DB_ID", db_id, db.parameters)

    def delete_database(self, db_id: int) -> None:
        self.conn.execute(s.database_params.delete().where(s.database_params.c.DB_ID == db_id))
        self.conn.execute(s.dbs.delete().where(s.dbs.c.DB_ID == db_id))

    # ---- parameters ---------------------------------------------------------------------------------

    def _insert_params(self, table: sa.Table, owner: str, owner_id: int, params: dict[str, str] | None) -> None:
        if params:
            self._insert_rows(table, [{owner: owner_id, "PARAM_KEY": k, "PARAM_VALUE": v} for k, v in params.items()])

    def _params(self, table: sa.Table, owner: str, ids: Sequence[int] | AnySelect) -> dict[int, dict[str, str]]:
        out: dict[int, dict[str, str]] = defaultdict(dict)
        if not isinstance(ids, sa.Select) and len(ids) == 1:
            for oid, k, v in self._run(_params_stmt(table, owner), {"v": ids[0]}).fetchall():
                out[oid][k] = v if v is not None else ""
            return out
        col = table.c[owner]
        if isinstance(ids, sa.Select):
            batches: Iterable[Any] = [col.in_(ids)]
        else:
            batches = [col.in_(list(c)) for c in _chunks(list(ids))] if ids else []
        for cond in batches:
            for oid, k, v in self.conn.execute(sa.select(col, table.c.PARAM_KEY, table.c.PARAM_VALUE).where(cond)):
                out[oid][k] = v if v is not None else ""
        return out

    # ---- storage descriptors ------------------------------------------------------------------------

    def _insert_cd(self, cols: Sequence[FieldSchema]) -> int:
        cd_id = self._insert_id(s.cds, {})
        if cols:
            self._insert_rows(s.columns_v2, [
                {"CD_ID": cd_id, "INTEGER_IDX": i, "COLUMN_NAME": c.name, "TYPE_NAME": c.type, "COMMENT": c.comment}
                for i, c in enumerate(cols)])
        return cd_id

    def _insert_sds(self, sds: Sequence[StorageDescriptor], cd_ids: Sequence[int | None]) -> list[int]:
        """Insert descriptors (with their serdes and parameters) in bulk; returns their ids in order."""
        if not sds:
            return []
        serde_ids = self._returning(s.serdes, "SERDE_ID", _SERDE_COLS, [
            (se.name, se.serializationLib, se.description, se.serializerClass, se.deserializerClass, se.serdeType)
            for se in (sd.serdeInfo for sd in sds)])
        sd_ids = self._returning(s.sds, "SD_ID", _SD_COLS, [
            (cd, se, sd.inputFormat, sd.outputFormat, sd.location, bool(sd.compressed),
             bool(sd.storedAsSubDirectories), sd.numBuckets if sd.numBuckets is not None else -1,
             _json(sd.bucketCols), _json([[o.col, o.order] for o in sd.sortCols]), _skewed_json(sd.skewedInfo))
            for sd, cd, se in zip(sds, cd_ids, serde_ids)])
        self._insert_values(s.serde_params, ("SERDE_ID", "PARAM_KEY", "PARAM_VALUE"), [
            (i, k, v) for i, sd in zip(serde_ids, sds) for k, v in (sd.serdeInfo.parameters or {}).items()])
        self._insert_values(s.sd_params, ("SD_ID", "PARAM_KEY", "PARAM_VALUE"), [
            (i, k, v) for i, sd in zip(sd_ids, sds) for k, v in (sd.parameters or {}).items()])
        return sd_ids

    def _returning(self, table: sa.Table, pk: str, cols: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[int]:
        """Insert rows (tuples of the values of `cols`) and return their generated keys in order."""
        if len(rows) == 1:
            return [self._insert_id(table, dict(zip(cols, rows[0])))]
        if self.dialect != "postgresql":
            # SQLite and MariaDB cannot promise RETURNING in parameter order, so SQLAlchemy would insert row by
            # row. Writers are serialized on the sequence row (see lock_sequence), so the ids after the
            # current maximum are ours: one multi-row insert with them, and the auto-increment follows.
            assert self._next_event is not None, "bulk inserts are made in write transactions only"
            start = int(self.conn.execute(sa.select(sa.func.max(table.c[pk]))).scalar() or 0) + 1
            ids = list(range(start, start + len(rows)))
            self._insert_values(table, (pk, *cols), [(i, *r) for i, r in zip(ids, rows)])
            return ids
        stmt = table.insert().returning(table.c[pk], sort_by_parameter_order=True)
        return [int(r[0]) for r in self.conn.execute(stmt, [dict(zip(cols, r)) for r in rows])]

    def _delete_sds(self, sd_ids: Sequence[int]) -> None:
        """Delete descriptors, their serdes, and column descriptors no longer used by any descriptor."""
        if not sd_ids:
            return
        if len(sd_ids) == 1:  # a table's or one partition's: the statements of the fast path
            self._delete_sd(sd_ids[0])
            return
        for chunk in _chunks(list(sd_ids)):
            rows = self.conn.execute(sa.select(s.sds.c.SERDE_ID, s.sds.c.CD_ID).where(s.sds.c.SD_ID.in_(chunk))).all()
            serde_ids = [r[0] for r in rows if r[0] is not None]
            cd_ids = {r[1] for r in rows if r[1] is not None}
            self.conn.execute(s.sd_params.delete().where(s.sd_params.c.SD_ID.in_(chunk)))
            self.conn.execute(s.sds.delete().where(s.sds.c.SD_ID.in_(chunk)))
            if serde_ids:
                self.conn.execute(s.serde_params.delete().where(s.serde_params.c.SERDE_ID.in_(serde_ids)))
                self.conn.execute(s.serdes.delete().where(s.serdes.c.SERDE_ID.in_(serde_ids)))
            if cd_ids:
                used = set(self.conn.execute(sa.select(s.sds.c.CD_ID).where(s.sds.c.CD_ID.in_(cd_ids)).distinct())
                           .scalars())
                unused = list(cd_ids - used)
                if unused:
                    self.conn.execute(s.columns_v2.delete().where(s.columns_v2.c.CD_ID.in_(unused)))
                    self.conn.execute(s.cds.delete().where(s.cds.c.CD_ID.in_(unused)))

    def _delete_sd(self, sd_id: int) -> None:
        row = self._run(_SD_REFS, {"v": sd_id}).fetchone()
        self._delete_where(s.sd_params, "SD_ID", sd_id)
        self._delete_where(s.sds, "SD_ID", sd_id)
        if row is None:
            return
        serde_id, cd_id = row
        if serde_id is not None:
            self._delete_where(s.serde_params, "SERDE_ID", serde_id)
            self._delete_where(s.serdes, "SERDE_ID", serde_id)
        if cd_id is not None and self._run(_CD_USED, {"v": cd_id}).fetchone() is None:
            self._delete_where(s.columns_v2, "CD_ID", cd_id)
            self._delete_where(s.cds, "CD_ID", cd_id)

    def _load_sds(self, rows: Sequence[Any], sd_scope: AnySelect | None) -> dict[int, StorageDescriptor]:
        """Build descriptors from rows of SDS joined with SERDES (see _SD_COLUMNS); children in bulk.

        `sd_scope` is a SELECT of the SD_IDs concerned, used instead of IN-lists when given.
        """
        if not rows:
            return {}
        sd_ids = [r.SD_ID for r in rows]
        serde_ids = [r.SERDE_ID for r in rows]
        if sd_scope is not None:
            serde_scope = sa.select(s.sds.c.SERDE_ID).where(s.sds.c.SD_ID.in_(sd_scope))
            sd_params = self._params(s.sd_params, "SD_ID", sd_scope)
            serde_params = self._params(s.serde_params, "SERDE_ID", serde_scope)
        else:
            sd_params = self._params(s.sd_params, "SD_ID", sd_ids)
            serde_params = self._params(s.serde_params, "SERDE_ID", serde_ids)
        cols = self._columns({r.CD_ID for r in rows if r.CD_ID is not None})
        return {r.SD_ID: self._build_sd(r, serde_params.get(r.SERDE_ID, {}), sd_params.get(r.SD_ID, {}),
                                        list(cols.get(r.CD_ID, ()))) for r in rows}

    @staticmethod
    def _build_sd(r: Any, serde_params: dict[str, str], sd_params: dict[str, str],
                  cols: list[FieldSchema]) -> StorageDescriptor:
        """A descriptor from a row with _SD_COLUMNS and its children."""
        serde = SerDeInfo(name=r.SERDE_NAME, serializationLib=r.SLIB, parameters=serde_params,
                          description=r.DESCRIPTION, serializerClass=r.SERIALIZER_CLASS,
                          deserializerClass=r.DESERIALIZER_CLASS, serdeType=r.SERDE_TYPE)
        return StorageDescriptor(
            cols=cols, location=r.LOCATION, inputFormat=r.INPUT_FORMAT,
            outputFormat=r.OUTPUT_FORMAT, compressed=bool(r.IS_COMPRESSED), numBuckets=r.NUM_BUCKETS,
            serdeInfo=serde, bucketCols=json.loads(r.BUCKET_COLS) if r.BUCKET_COLS else [],
            sortCols=[Order(c, o) for c, o in json.loads(r.SORT_COLS)] if r.SORT_COLS else [],
            parameters=sd_params, skewedInfo=_skewed_load(r.SKEWED_INFO),
            storedAsSubDirectories=bool(r.IS_STOREDASSUBDIRECTORIES))

    def _columns(self, cd_ids: set[int]) -> dict[int, list[FieldSchema]]:
        out: dict[int, list[FieldSchema]] = defaultdict(list)
        c = s.columns_v2.c
        if len(cd_ids) == 1:
            (cd,) = cd_ids
            out[cd] = [FieldSchema(n, t, cm) for n, t, cm in self._run(_COLUMNS_OF, {"v": cd}).fetchall()]
            return out
        for chunk in _chunks(sorted(cd_ids)):
            q = sa.select(c.CD_ID, c.COLUMN_NAME, c.TYPE_NAME, c.COMMENT).where(c.CD_ID.in_(chunk)).order_by(
                c.CD_ID, c.INTEGER_IDX)
            for cd, name, typ, comment in self.conn.execute(q):
                out[cd].append(FieldSchema(name, typ, comment))
        return out

    _SD_COLUMNS = _SD_COLUMNS

    # ---- tables -------------------------------------------------------------------------------------

    def table_ref(self, db: str, name: str) -> TableRef | None:
        """(TBL_ID, DB_ID, SD_ID, CD_ID, TBL_TYPE, VERSION) of a table, or None."""
        row = self._run(_TABLE_REF, {"db": db, "name": name}).fetchone()
        return TableRef(*row) if row is not None else None

    def get_table_and_ref(self, db: str, name: str) -> tuple[Table, TableRef] | None:
        """A table, fully built, and its ids (as table_ref), from two statements."""
        rows = self._rows(_ONE_TABLE, {"db": db, "name": name})
        if not rows:
            return None
        r = rows[0]
        params: dict[str, str] = {}
        sd_params: dict[str, str] = {}
        serde_params: dict[str, str] = {}
        cols: list[FieldSchema] = []
        keys: list[FieldSchema] = []
        maps, lists = (params, sd_params, serde_params), (cols, keys)
        for kind, a, b, c, _ in self._run(_ONE_TABLE_CHILDREN, {"tbl": r.TBL_ID, "sd": r.SD_ID, "serde": r.SERDE_ID,
                                                                 "cd": r.CD_ID}).fetchall():
            if kind < 3:
                maps[kind][a] = b if b is not None else ""
            else:
                lists[kind - 3].append(FieldSchema(a, b, c))
        sd = self._build_sd(r, serde_params, sd_params, cols) if r.SD_ID is not None else StorageDescriptor()
        table = self._build_table(r, sd, keys, params)
        return table, TableRef(r.TBL_ID, r.DB_ID, r.SD_ID, r.CD_ID, r.TBL_TYPE, r.VERSION)

    def get_tables(self, db: str, names: Sequence[str] | None = None) -> list[Table]:
        """Tables of `db` (all of them, or those named), each fully built, in name order."""
        t = s.tbls.c
        if names is not None and len(names) == 1:  # get_table
            found = self.get_table_and_ref(db, names[0])
            return [found[0]] if found is not None else []
        else:
            q = _tables_query().where(s.dbs.c.NAME == db).order_by(t.TBL_NAME)
            if names is not None:
                if not names:
                    return []
                q = q.where(t.TBL_NAME.in_(list(names)))
            rows = self.conn.execute(q).all()
        if not rows:
            return []
        ids = [r.TBL_ID for r in rows]
        params = self._params(s.table_params, "TBL_ID", ids)
        sds = self._load_sds([r for r in rows if r.SD_ID is not None], None)
        pkeys: dict[int, list[FieldSchema]] = defaultdict(list)
        pk = s.partition_keys.c
        if len(ids) == 1:
            pkeys[ids[0]] = [FieldSchema(n, ty, c) for n, ty, c in self._run(_KEYS_OF, {"v": ids[0]}).fetchall()]
            ids = []
        for chunk in _chunks(ids):
            for tid, n, ty, c in self.conn.execute(
                    sa.select(pk.TBL_ID, pk.PKEY_NAME, pk.PKEY_TYPE, pk.PKEY_COMMENT).where(pk.TBL_ID.in_(chunk))
                    .order_by(pk.TBL_ID, pk.INTEGER_IDX)):
                pkeys[tid].append(FieldSchema(n, ty, c))
        return [self._build_table(r, sds.get(r.SD_ID) or StorageDescriptor(), pkeys.get(r.TBL_ID, []),
                                  params.get(r.TBL_ID, {})) for r in rows]

    @staticmethod
    def _build_table(r: Any, sd: StorageDescriptor, keys: list[FieldSchema], params: dict[str, str]) -> Table:
        return Table(
            tableName=r.TBL_NAME, dbName=r.DB_NAME, owner=r.OWNER, createTime=r.CREATE_TIME,
            lastAccessTime=r.LAST_ACCESS_TIME, retention=r.RETENTION, sd=sd, partitionKeys=keys,
            parameters=params, viewOriginalText=r.VIEW_ORIGINAL_TEXT,
            viewExpandedText=r.VIEW_EXPANDED_TEXT, tableType=r.TBL_TYPE, rewriteEnabled=bool(r.IS_REWRITE_ENABLED),
            catName=r.CTLG_NAME, ownerType=_OWNER_CODES.get(r.OWNER_TYPE or "", 1), id=r.TBL_ID, version=r.VERSION)

    def get_table(self, db: str, name: str) -> Table | None:
        found = self.get_tables(db, [name])
        return found[0] if found else None

    def table_names(self, db: str, table_type: str | None = None) -> list[str]:
        t = s.tbls.c
        q = (sa.select(t.TBL_NAME).select_from(s.tbls.join(s.dbs, s.dbs.c.DB_ID == t.DB_ID))
             .where(s.dbs.c.NAME == db).order_by(t.TBL_NAME))
        if table_type:
            q = q.where(t.TBL_TYPE == table_type)
        return list(self.conn.execute(q).scalars())

    def table_metas(self) -> list[TableMeta]:
        t = s.tbls.c
        comment = (sa.select(s.table_params.c.PARAM_VALUE)
                   .where(s.table_params.c.TBL_ID == t.TBL_ID, s.table_params.c.PARAM_KEY == "comment")
                   .scalar_subquery())
        q = (sa.select(s.dbs.c.NAME, t.TBL_NAME, t.TBL_TYPE, comment, s.dbs.c.CTLG_NAME)
             .select_from(s.tbls.join(s.dbs, s.dbs.c.DB_ID == t.DB_ID)).order_by(s.dbs.c.NAME, t.TBL_NAME))
        return [TableMeta(d, n, ty, c, cat) for d, n, ty, c, cat in self.conn.execute(q)]

    def count_tables(self, db_id: int) -> int:
        return int(self.conn.execute(sa.select(sa.func.count()).where(s.tbls.c.DB_ID == db_id)).scalar_one())

    def insert_table(self, db_id: int, t: Table) -> int:
        cd_id = self._insert_cd(t.sd.cols)
        sd_id = self._insert_sds([t.sd], [cd_id])[0]
        # The table's id is the id of the event this transaction writes next (its CREATE_TABLE): unique for
        # ever, where an auto-increment may give a dropped table's id to the next one (SQLite does), and
        # (TBL_ID, VERSION) keys the serialized caches of every server process. Ids given before this rule
        # are below every new one: each table creation wrote an event.
        assert self._next_event is not None, "tables are created in write transactions only"
        tbl_id = self._next_event
        self._insert_rows(s.tbls, [dict(
            TBL_ID=tbl_id, DB_ID=db_id, TBL_NAME=t.tableName, OWNER=t.owner,
            OWNER_TYPE=_OWNER_TYPES.get(t.ownerType or 0), CREATE_TIME=t.createTime,
            LAST_ACCESS_TIME=t.lastAccessTime, RETENTION=t.retention, SD_ID=sd_id, TBL_TYPE=t.tableType,
            VIEW_ORIGINAL_TEXT=t.viewOriginalText, VIEW_EXPANDED_TEXT=t.viewExpandedText,
            IS_REWRITE_ENABLED=bool(t.rewriteEnabled), VERSION=1)])
        self._insert_params(s.table_params, "TBL_ID", tbl_id, t.parameters)
        if t.partitionKeys:
            self._insert_rows(s.partition_keys, [
                {"TBL_ID": tbl_id, "INTEGER_IDX": i, "PKEY_NAME": k.name, "PKEY_TYPE": k.type,
                 "PKEY_COMMENT": k.comment}
                for i, k in enumerate(t.partitionKeys)])
        return tbl_id

    def update_table(self, ref: Any, t: Table, new_db_id: int | None = None) -> None:
        """Replace a table's row, parameters and descriptor (partition keys are kept unless they differ)."""
        tbl_id = ref.TBL_ID
        old_cols = self._columns({ref.CD_ID}).get(ref.CD_ID, []) if ref.CD_ID is not None else []
        same = ref.CD_ID is not None and _same_cols(old_cols, t.sd.cols)
        cd_id = ref.CD_ID if same else self._insert_cd(t.sd.cols)
        if not same:  # the table's constraints follow its columns to the new descriptor
            ConstraintQueries(self.conn).follow_columns(tbl_id, ref.CD_ID, cd_id, old_cols, t.sd.cols)
        new_sd = self._insert_sds([t.sd], [cd_id])[0]
        self.conn.execute(s.tbls.update().where(s.tbls.c.TBL_ID == tbl_id).values(
            DB_ID=new_db_id if new_db_id is not None else ref.DB_ID, TBL_NAME=t.tableName, OWNER=t.owner,
            OWNER_TYPE=_OWNER_TYPES.get(t.ownerType or 0), LAST_ACCESS_TIME=t.lastAccessTime, RETENTION=t.retention,
            SD_ID=new_sd, TBL_TYPE=t.tableType, VIEW_ORIGINAL_TEXT=t.viewOriginalText,
            VIEW_EXPANDED_TEXT=t.viewExpandedText, IS_REWRITE_ENABLED=bool(t.rewriteEnabled),
            VERSION=s.tbls.c.VERSION + 1))
        if ref.SD_ID is not None:
            self._delete_sds([ref.SD_ID])
        self.conn.execute(s.table_params.delete().where(s.table_params.c.TBL_ID == tbl_id))
        self._insert_params(s.table_params, "TBL_ID", tbl_id, t.parameters)
        pk = s.partition_keys
        self.conn.execute(pk.delete().where(pk.c.TBL_ID == tbl_id))
        if t.partitionKeys:
            self.conn.execute(pk.insert(), [
                {"TBL_ID": tbl_id, "INTEGER_IDX": i, "PKEY_NAME": k.name, "PKEY_TYPE": k.type,
                 "PKEY_COMMENT": k.comment}
                for i, k in enumerate(t.partitionKeys)])

    def relocate_partitions(self, tbl_id: int, old_prefix: str, new_prefix: str) -> None:
        """Move the locations of a table's partitions under old_prefix to the same place under new_prefix."""
        rows = self.conn.execute(sa.select(s.sds.c.SD_ID, s.sds.c.LOCATION)
                                 .select_from(s.partitions.join(s.sds, s.sds.c.SD_ID == s.partitions.c.SD_ID))
                                 .where(s.partitions.c.TBL_ID == tbl_id)).all()
        for sd_id, loc in rows:
            if loc and loc.startswith(old_prefix):
                self.conn.execute(s.sds.update().where(s.sds.c.SD_ID == sd_id)
                                  .values(LOCATION=new_prefix + loc[len(old_prefix):]))

    def locations_near(self, spellings: Sequence[str]) -> list[tuple[str, str | None, str | None, str | None, int]]:
        """(database, table or None, table type, location, 1 for a partition of that table else 0) of the
        databases, tables and partitions located at a path, inside it, or at one of its parents, the path given
        in each spelling stored locations may use (`file:/x`, `/x`, ...). One statement, built once (LIKE may
        match more, e.g. case-insensitively: the caller compares exactly). No index on locations: a scan, so
        callers use it on the rare write paths only (not for new directories at their default places)."""
        st = _LOCATIONS_NEAR.get(len(spellings))
        if st is None:
            st = _LOCATIONS_NEAR[len(spellings)] = _locations_near(len(spellings))
        params: dict[str, Any] = {}
        for i, sp in enumerate(spellings):
            params[f"e{i}"] = sp
            params[f"p{i}"] = sp.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "/%"
        return [tuple(r) for r in self._run(st, params).fetchall()]

    def bump_table_version(self, tbl_id: int) -> None:
        self.conn.execute(s.tbls.update().where(s.tbls.c.TBL_ID == tbl_id).values(VERSION=s.tbls.c.VERSION + 1))

    def table_partitions(self, tbl_id: int) -> list[tuple[int, int | None, str | None]]:
        """(PART_ID, SD_ID, location) of every partition of a table."""
        return [tuple(r) for r in self._run(_TABLE_PARTS, {"v": tbl_id}).fetchall()]

    def delete_table_txn_rows(self, db: str, name: str) -> None:
        """Forget a dropped table's compaction requests and write ids (statements compiled once: a drop's cost)."""
        for st in _TABLE_TXN_ROWS:
            self._run(st, {"db": db, "name": name})

    def delete_table(self, ref: Any, parts: Sequence[tuple[int, int | None, str | None]] | None = None) -> None:
        """Delete a table and its partitions; `parts` when the caller read them already (table_partitions)."""
        tbl_id = ref.TBL_ID
        if parts is None:
            parts = self.table_partitions(tbl_id)
        part_sds = [sd for _, sd, _ in parts]
        if parts:  # four statements saved on the common unpartitioned drop
            self._delete_all_partitions(tbl_id)
        for table in (s.tab_col_stats, s.table_params, s.partition_keys, s.tbls):
            self._delete_where(table, "TBL_ID", tbl_id)
        self._delete_sds([x for x in part_sds if x is not None] + ([ref.SD_ID] if ref.SD_ID is not None else []))

    def update_table_params(self, tbl_id: int, params: dict[str, str]) -> None:
        self.conn.execute(s.table_params.delete().where(s.table_params.c.TBL_ID == tbl_id))
        self._insert_params(s.table_params, "TBL_ID", tbl_id, params)
        self.bump_table_version(tbl_id)

    # ---- partitions ---------------------------------------------------------------------------------

    def insert_partitions(self, tbl_id: int, table_cd: int | None, table_cols: Sequence[FieldSchema],
                          parts: Sequence[tuple[str, Partition]]) -> None:
        """Insert (name, partition) pairs; partitions whose columns are the table's share its descriptor."""
        if not parts:
            return
        same: dict[int, bool] = {}  # by the id of a column list: a batch's partitions usually share one
        cd_ids = []
        for _, p in parts:
            cols = p.sd.cols
            shared = same.get(id(cols))
            if shared is None:
                shared = same[id(cols)] = table_cd is not None and _same_cols(cols, table_cols)
            cd_ids.append(table_cd if shared else self._insert_cd(cols))
        sd_ids = self._insert_sds([p.sd for _, p in parts], cd_ids)
        part_ids = self._returning(s.partitions, "PART_ID", ("TBL_ID", "PART_NAME", "CREATE_TIME", "LAST_ACCESS_TIME",
                                                             "SD_ID"), [
            (tbl_id, name, p.createTime, p.lastAccessTime, sd) for (name, p), sd in zip(parts, sd_ids)])
        self._insert_values(s.partition_key_vals, ("PART_ID", "INTEGER_IDX", "PART_KEY_VAL"), [
            (pid, i, v) for pid, (_, p) in zip(part_ids, parts) for i, v in enumerate(p.values)])
        self._insert_values(s.partition_params, ("PART_ID", "PARAM_KEY", "PARAM_VALUE"), [
            (pid, k, v) for pid, (_, p) in zip(part_ids, parts) for k, v in (p.parameters or {}).items()])
        self.bump_table_version(tbl_id)

    def _where(self, table: Table, filter: Node | None,
               spec: Sequence[str | None] | None) -> sa.ColumnElement[bool] | None:
        """The condition over PARTITIONS of a filter and/or a partial specification, None for all partitions.

        `filter`: a parsed partition filter whose keys are all the table's (the caller checks them; an unknown one
        raises FilterError); it is translated by filter_sql.to_sql, whose FilterErrors (too many comparisons, an
        unsupported LIKE pattern) pass through. `spec`: values in key order, an empty string or None a wildcard,
        any other value must equal the key's (at most as many values as keys, which the caller checks).
        """
        where: sa.ColumnElement[bool] | None = None
        if spec:
            conds = [self._key_value_column(i) == v for i, v in enumerate(spec) if v not in ("", None)]
            where = sa.and_(*conds) if conds else None
        if filter is not None:
            used = keys_of(filter)
            cols = {k.name.lower(): KeyColumn(self._key_value_column(i), k.type.lower() in INTEGRAL_TYPES)
                    for i, k in enumerate(table.partitionKeys) if k.name.lower() in used}
            translated = to_sql(filter, cols)
            where = translated if where is None else sa.and_(where, translated)
        return where

    def partition_scope(self, tbl_id: int, where: sa.ColumnElement[bool] | None = None,
                        names: Sequence[str] | None = None) -> AnySelect:
        """A SELECT of the PART_IDs of a table matching `where` (built over PARTITIONS) and/or `names`."""
        p = s.partitions.c
        q = _where_keys(sa.select(p.PART_ID).where(p.TBL_ID == tbl_id), where)
        if names is not None:
            q = q.where(p.PART_NAME.in_(list(names)))
        return q

    def partitions(self, table: Table, filter: Node | None = None, spec: Sequence[str | None] | None = None,
                   names: Sequence[str] | None = None, limit: int = -1) -> list[Partition]:
        """Partitions of `table` in PART_NAME order, built with one query per child table; those matching a
        filter and/or a partial specification (see _where) and/or named by `names` (canonical names)."""
        assert table.id is not None
        where = self._where(table, filter, spec)
        p = s.partitions.c
        q = (sa.select(p.PART_ID, p.PART_NAME, p.CREATE_TIME, p.LAST_ACCESS_TIME, *self._SD_COLUMNS)
             .select_from(s.partitions.outerjoin(s.sds, s.sds.c.SD_ID == p.SD_ID)
                          .outerjoin(s.serdes, s.serdes.c.SERDE_ID == s.sds.c.SERDE_ID))
             .where(p.PART_ID.in_(self.partition_scope(table.id, where, names))).order_by(p.PART_NAME))
        if names is not None and not names:
            return []
        if limit is not None and limit >= 0:
            q = q.limit(limit)
        rows = self.conn.execute(q).all()
        if not rows:
            return []
        part_ids = [r.PART_ID for r in rows]
        # Without a limit the scope query selects exactly these rows; with one, fall back to id lists.
        scope = self.partition_scope(table.id, where, names) if limit is None or limit < 0 else None
        sd_scope = (sa.select(s.partitions.c.SD_ID).where(s.partitions.c.PART_ID.in_(scope))
                    if scope is not None else None)
        sds = self._load_sds([r for r in rows if r.SD_ID is not None], sd_scope)
        params = self._params(s.partition_params, "PART_ID", scope if scope is not None else part_ids)
        vals: dict[int, list[str]] = defaultdict(list)
        kv = s.partition_key_vals.c
        conds = [kv.PART_ID.in_(scope)] if scope is not None else [kv.PART_ID.in_(list(c)) for c in _chunks(part_ids)]
        for cond in conds:
            for pid, v in self.conn.execute(sa.select(kv.PART_ID, kv.PART_KEY_VAL).where(cond)
                                            .order_by(kv.PART_ID, kv.INTEGER_IDX)):
                vals[pid].append(v if v is not None else "")
        return [Partition(values=vals.get(r.PART_ID, []), dbName=table.dbName, tableName=table.tableName,
                          createTime=r.CREATE_TIME, lastAccessTime=r.LAST_ACCESS_TIME,
                          sd=sds.get(r.SD_ID) or StorageDescriptor(), parameters=params.get(r.PART_ID, {}),
                          catName=table.catName)
                for r in rows]

    def partition_names(self, table: Table, filter: Node | None = None, spec: Sequence[str | None] | None = None,
                        limit: int = -1) -> list[str]:
        """Names of `table`'s partitions (matching a filter and/or a partial specification, see _where), sorted."""
        p = s.partitions.c
        q = _where_keys(sa.select(p.PART_NAME).where(p.TBL_ID == table.id).order_by(p.PART_NAME),
                        self._where(table, filter, spec))
        if limit is not None and limit >= 0:
            q = q.limit(limit)
        return list(self.conn.execute(q).scalars())

    def count_partitions(self, table: Table, filter: Node | None = None) -> int:
        """How many of `table`'s partitions match a filter (all without one)."""
        p = s.partitions.c
        q = _where_keys(sa.select(sa.func.count()).where(p.TBL_ID == table.id), self._where(table, filter, None))
        return int(self.conn.execute(q).scalar_one())

    def partition_refs(self, tbl_id: int, names: Sequence[str]) -> dict[str, Any]:
        """name -> (PART_ID, SD_ID, CD_ID, LOCATION) for the named partitions that exist."""
        p = s.partitions.c
        out = {}
        for chunk in _chunks(list(names)):
            q = (sa.select(p.PART_NAME, p.PART_ID, p.SD_ID, s.sds.c.CD_ID, s.sds.c.LOCATION)
                 .select_from(s.partitions.outerjoin(s.sds, s.sds.c.SD_ID == p.SD_ID))
                 .where(p.TBL_ID == tbl_id, p.PART_NAME.in_(list(chunk))))
            for r in self.conn.execute(q):
                out[r.PART_NAME] = r
        return out

    @staticmethod
    def _key_value_column(index: int) -> sa.ColumnElement[str]:
        """The value of partition key `index` for the PARTITIONS row in scope, for a `where` over PARTITIONS.

        It is a column of the alias kv<index> of PARTITION_KEY_VALS, which the partition queries join
        (_where_keys): a correlated subquery instead would run once per row and per use.
        """
        return s.partition_key_vals.alias(f"kv{index}").c.PART_KEY_VAL

    def update_partition(self, tbl_id: int, ref: Any, table_cd: int | None, table_cols: Sequence[FieldSchema],
                         new_name: str, part: Partition) -> None:
        """Replace a partition's descriptor, parameters, times, and (for a rename) name and values."""
        cd = table_cd if table_cd is not None and _same_cols(part.sd.cols, table_cols) else (
            ref.CD_ID
            if ref.CD_ID is not None and _same_cols(part.sd.cols, self._columns({ref.CD_ID}).get(ref.CD_ID, []))
            else self._insert_cd(part.sd.cols))
        new_sd = self._insert_sds([part.sd], [cd])[0]
        self.conn.execute(s.partitions.update().where(s.partitions.c.PART_ID == ref.PART_ID).values(
            PART_NAME=new_name, LAST_ACCESS_TIME=part.lastAccessTime, SD_ID=new_sd))
        if ref.SD_ID is not None:
            self._delete_sds([ref.SD_ID])
        pp = s.partition_params
        self.conn.execute(pp.delete().where(pp.c.PART_ID == ref.PART_ID))
        self._insert_params(pp, "PART_ID", ref.PART_ID, part.parameters)
        kv = s.partition_key_vals
        self.conn.execute(kv.delete().where(kv.c.PART_ID == ref.PART_ID))
        self.conn.execute(kv.insert(), [{"PART_ID": ref.PART_ID, "INTEGER_IDX": i, "PART_KEY_VAL": v}
                                        for i, v in enumerate(part.values)])
        self.bump_table_version(tbl_id)

    def delete_partitions(self, tbl_id: int, refs: Sequence[Any]) -> None:
        if not refs:
            return
        ids = [r.PART_ID for r in refs]
        for chunk in _chunks(ids):
            for t in (s.part_col_stats, s.partition_params, s.partition_key_vals, s.partitions):
                self.conn.execute(t.delete().where(t.c.PART_ID.in_(list(chunk))))
        self._delete_sds([r.SD_ID for r in refs if r.SD_ID is not None])
        self.bump_table_version(tbl_id)

    def _delete_all_partitions(self, tbl_id: int) -> None:
        scope = sa.select(s.partitions.c.PART_ID).where(s.partitions.c.TBL_ID == tbl_id)
        for t in (s.part_col_stats, s.partition_params, s.partition_key_vals):
            self.conn.execute(t.delete().where(t.c.PART_ID.in_(scope)))
        self.conn.execute(s.partitions.delete().where(s.partitions.c.TBL_ID == tbl_id))

    # ---- functions ----------------------------------------------------------------------------------

    def get_functions(self, db: str | None = None, name: str | None = None) -> list[Function]:
        f = s.funcs.c
        q = (sa.select(f.FUNC_ID, f.FUNC_NAME, f.CLASS_NAME, f.OWNER_NAME, f.OWNER_TYPE, f.CREATE_TIME, f.FUNC_TYPE,
                       s.dbs.c.NAME.label("DB_NAME"), s.dbs.c.CTLG_NAME)
             .select_from(s.funcs.join(s.dbs, s.dbs.c.DB_ID == f.DB_ID)).order_by(s.dbs.c.NAME, f.FUNC_NAME))
        if db is not None:
            q = q.where(s.dbs.c.NAME == db)
        if name is not None:
            q = q.where(f.FUNC_NAME == name)
        rows = self.conn.execute(q).all()
        res: dict[int, list[ResourceUri]] = defaultdict(list)
        ids = [r.FUNC_ID for r in rows]
        for chunk in _chunks(ids):
            ru = s.func_ru.c
            found = self.conn.execute(sa.select(ru.FUNC_ID, ru.RESOURCE_TYPE, ru.RESOURCE_URI)
                                      .where(ru.FUNC_ID.in_(list(chunk))).order_by(ru.FUNC_ID, ru.INTEGER_IDX))
            for fid, typ, uri in found:
                res[fid].append(ResourceUri(typ, uri))
        return [Function(functionName=r.FUNC_NAME, dbName=r.DB_NAME, className=r.CLASS_NAME, ownerName=r.OWNER_NAME,
                         ownerType=_OWNER_CODES.get(r.OWNER_TYPE or "", 1), createTime=r.CREATE_TIME,
                         functionType=r.FUNC_TYPE, resourceUris=res.get(r.FUNC_ID, []), catName=r.CTLG_NAME)
                for r in rows]

    def function_id(self, db_id: int, name: str) -> int | None:
        return self.conn.execute(sa.select(s.funcs.c.FUNC_ID).where(s.funcs.c.DB_ID == db_id,
                                                                    s.funcs.c.FUNC_NAME == name)).scalar()

    def insert_function(self, db_id: int, fn: Function) -> int:
        fid = _inserted_id(self.conn.execute(s.funcs.insert().values(
            DB_ID=db_id, FUNC_NAME=fn.functionName, CLASS_NAME=fn.className, OWNER_NAME=fn.ownerName,
            OWNER_TYPE=_OWNER_TYPES.get(fn.ownerType or 0), CREATE_TIME=fn.createTime,
            FUNC_TYPE=fn.functionType)))
        if fn.resourceUris:
            self.conn.execute(s.func_ru.insert(), [{"FUNC_ID": fid, "INTEGER_IDX": i, "RESOURCE_TYPE": r.resourceType,
                                                    "RESOURCE_URI": r.uri} for i, r in enumerate(fn.resourceUris)])
        return fid

    def delete_function(self, func_id: int) -> None:
        self.conn.execute(s.func_ru.delete().where(s.func_ru.c.FUNC_ID == func_id))
        self.conn.execute(s.funcs.delete().where(s.funcs.c.FUNC_ID == func_id))

    def count_functions(self, db_id: int) -> int:
        return int(self.conn.execute(sa.select(sa.func.count()).where(s.funcs.c.DB_ID == db_id)).scalar_one())

    # ---- column statistics --------------------------------------------------------------------------

    def upsert_col_stats(self, owner: str, owner_id: int, objs: Sequence[ColumnStatisticsObj], last_analyzed: int,
                         engine: str) -> None:
        t = s.tab_col_stats if owner == "TBL_ID" else s.part_col_stats
        if not objs:
            return
        names = [o.colName for o in objs]
        stored = {r[0]: r[1] for r in self.conn.execute(sa.select(t.c.COLUMN_NAME, t.c.CS_ID).where(
            t.c[owner] == owner_id, t.c.COLUMN_NAME.in_(names), t.c.ENGINE == engine))}
        # every row binds every statistics column: an executemany's rows must have the same keys
        rows = [{"LAST_ANALYZED": last_analyzed, **_STATS_NONE, **_stats_row(o)} for o in objs]
        changed = [r for r in rows if r["COLUMN_NAME"] in stored]
        if changed:  # updated where they are (a reader sees the columns in the order they were first written)
            cols = [k for k in changed[0] if k != "COLUMN_NAME"]
            self.conn.execute(t.update().where(t.c.CS_ID == sa.bindparam("cs_id")).values(
                {k: sa.bindparam("v_" + k) for k in cols}),
                [{"cs_id": stored[r["COLUMN_NAME"]], **{"v_" + k: r[k] for k in cols}} for r in changed])
        new = [r for r in rows if r["COLUMN_NAME"] not in stored]
        if new:
            self.conn.execute(t.insert(), [{owner: owner_id, "ENGINE": engine, **r} for r in new])

    def col_stats(self, owner: str, owner_ids: Sequence[int], cols: Sequence[str] | None,
                  engine: str = "hive") -> dict[int, list[tuple[ColumnStatisticsObj, int]]]:
        t = s.tab_col_stats if owner == "TBL_ID" else s.part_col_stats
        out: dict[int, list[tuple[ColumnStatisticsObj, int]]] = defaultdict(list)
        for chunk in _chunks(list(owner_ids)):
            q = sa.select(t).where(t.c[owner].in_(list(chunk)), t.c.ENGINE == engine).order_by(t.c.CS_ID)
            if cols is not None:
                q = q.where(t.c.COLUMN_NAME.in_(list(cols)))
            for r in self.conn.execute(q):
                out[r._mapping[owner]].append((_stats_obj(r), r.LAST_ANALYZED))
        return out

    def col_stats_kinds(self, owner: str, owner_ids: Sequence[int]) -> list[tuple[int, str, str, str]]:
        """(owner id, column, column type, engine) of every statistics row of the owners."""
        t = s.tab_col_stats if owner == "TBL_ID" else s.part_col_stats
        out: list[tuple[int, str, str, str]] = []
        for chunk in _chunks(list(owner_ids)):
            q = sa.select(t.c[owner], t.c.COLUMN_NAME, t.c.COLUMN_TYPE, t.c.ENGINE).where(t.c[owner].in_(list(chunk)))
            out.extend((r[0], r[1], r[2], r[3]) for r in self.conn.execute(q))
        return out

    def partition_param(self, part_id: int, key: str) -> str | None:
        pp = s.partition_params.c
        return cast(str | None, self.conn.execute(sa.select(pp.PARAM_VALUE).where(
            pp.PART_ID == part_id, pp.PARAM_KEY == key)).scalar_one_or_none())

    def set_partition_param(self, part_id: int, key: str, value: str) -> None:
        """One parameter of a partition (column statistics' COLUMN_STATS_ACCURATE), the others kept."""
        pp = s.partition_params
        self.conn.execute(pp.delete().where(pp.c.PART_ID == part_id, pp.c.PARAM_KEY == key))
        self.conn.execute(pp.insert().values(PART_ID=part_id, PARAM_KEY=key, PARAM_VALUE=value))

    def part_ids_with_stats(self, tbl_id: int) -> list[int]:
        """The PART_IDs of a table's partitions that have column statistics."""
        pc, p = s.part_col_stats.c, s.partitions.c
        q = (sa.select(pc.PART_ID).distinct().select_from(s.part_col_stats.join(s.partitions, p.PART_ID == pc.PART_ID))
             .where(p.TBL_ID == tbl_id))
        return [r[0] for r in self.conn.execute(q)]

    def delete_col_stats(self, owner: str, owner_id: int, col: str | None, engine: str | None = None) -> int:
        t = s.tab_col_stats if owner == "TBL_ID" else s.part_col_stats
        q = t.delete().where(t.c[owner] == owner_id)
        if col is not None:
            q = q.where(t.c.COLUMN_NAME == col)
        if engine is not None:
            q = q.where(t.c.ENGINE == engine)
        return int(self.conn.execute(q).rowcount)

    # ---- notification consumers and retention ------------------------------------------------------

    def consumers(self, name: str | None = None) -> list[Any]:
        """Registered readers of the notification log (NotificationConsumer), by name."""
        from ..core.model import NotificationConsumer

        c = s.notification_consumers.c
        q = sa.select(s.notification_consumers).order_by(c.NAME)
        if name is not None:
            q = q.where(c.NAME == name)
        return [NotificationConsumer(r.NAME, int(r.LAST_EVENT_ID), int(r.UPDATED), r.OWNER,
                                     int(r.LEASE_UNTIL) if r.LEASE_UNTIL is not None else None)
                for r in self.conn.execute(q)]

    def insert_consumer(self, name: str, last_event_id: int, updated: int, owner: str | None = None,
                        lease_until: int | None = None) -> None:
        self.conn.execute(s.notification_consumers.insert().values(
            NAME=name, LAST_EVENT_ID=last_event_id, UPDATED=updated, OWNER=owner, LEASE_UNTIL=lease_until))

    def update_consumer(self, name: str, **values: Any) -> int:
        """Set columns (LAST_EVENT_ID, UPDATED, OWNER, LEASE_UNTIL) of a consumer; returns rows changed."""
        c = s.notification_consumers.c
        return int(self.conn.execute(s.notification_consumers.update().where(c.NAME == name).values(**values))
                   .rowcount)

    def delete_consumer(self, name: str) -> int:
        c = s.notification_consumers.c
        return int(self.conn.execute(s.notification_consumers.delete().where(c.NAME == name)).rowcount)

    def oldest_events(self, limit: int) -> list[tuple[int, int]]:
        """(EVENT_ID, EVENT_TIME) of the oldest events of the log, in id order."""
        t = s.notification_log.c
        q = sa.select(t.EVENT_ID, t.EVENT_TIME).order_by(t.EVENT_ID).limit(limit)
        return [(int(i), int(w)) for i, w in self.conn.execute(q)]

    def delete_events_upto(self, event_id: int) -> int:
        """Delete the log's events with ids up to `event_id` (a prefix of the log); returns how many."""
        t = s.notification_log
        return int(self.conn.execute(t.delete().where(t.c.EVENT_ID <= event_id)).rowcount)


def _where_keys(q: AnySelect, where: sa.ColumnElement[bool] | None) -> AnySelect:
    """`q` (over PARTITIONS) restricted by `where`, joining the key-value aliases (kv<i>) it refers to."""
    if where is None:
        return q
    aliases = {a.name: a for a in sql_util.find_tables(where, include_aliases=True, check_columns=True)
               if isinstance(a, sa.Alias) and a.name.startswith("kv") and a.name[2:].isdigit()}
    src: sa.FromClause = s.partitions
    for name in sorted(aliases):
        kv = aliases[name]
        src = src.join(kv, sa.and_(kv.c.PART_ID == s.partitions.c.PART_ID, kv.c.INTEGER_IDX == int(name[2:])))
    return q.select_from(src).where(where)


def _same_cols(a: Sequence[FieldSchema], b: Sequence[FieldSchema]) -> bool:
    return len(a) == len(b) and all(x.name == y.name and x.type == y.type and (x.comment or None) == (y.comment or None)
                                    for x, y in zip(a, b))


_SERDE_COLS = ("NAME", "SLIB", "DESCRIPTION", "SERIALIZER_CLASS", "DESERIALIZER_CLASS", "SERDE_TYPE")
_SD_COLS = ("CD_ID", "SERDE_ID", "INPUT_FORMAT", "OUTPUT_FORMAT", "LOCATION", "IS_COMPRESSED",
            "IS_STOREDASSUBDIRECTORIES", "NUM_BUCKETS", "BUCKET_COLS", "SORT_COLS", "SKEWED_INFO")


def _skewed_json(sk: SkewedInfo | None) -> str | None:
    if sk is None or not (sk.skewedColNames or sk.skewedColValues or sk.skewedColValueLocationMaps):
        return None
    return json.dumps({"names": sk.skewedColNames, "values": sk.skewedColValues,
                       "locations": [[list(k), v] for k, v in sk.skewedColValueLocationMaps.items()]})


def _skewed_load(text: str | None) -> SkewedInfo:
    if not text:
        return SkewedInfo()
    d = json.loads(text)
    return SkewedInfo(d["names"], d["values"], {tuple(k): v for k, v in d["locations"]})


_STATS_FIELDS = {
    "booleanStats": {"numTrues": "NUM_TRUES", "numFalses": "NUM_FALSES", "numNulls": "NUM_NULLS",
                     "bitVectors": "BIT_VECTOR"},
    "longStats": {"lowValue": "LONG_LOW_VALUE", "highValue": "LONG_HIGH_VALUE", "numNulls": "NUM_NULLS",
                  "numDVs": "NUM_DISTINCTS", "bitVectors": "BIT_VECTOR"},
    "dateStats": {"lowValue": "LONG_LOW_VALUE", "highValue": "LONG_HIGH_VALUE", "numNulls": "NUM_NULLS",
                  "numDVs": "NUM_DISTINCTS", "bitVectors": "BIT_VECTOR"},
    "timestampStats": {"lowValue": "LONG_LOW_VALUE", "highValue": "LONG_HIGH_VALUE", "numNulls": "NUM_NULLS",
                       "numDVs": "NUM_DISTINCTS", "bitVectors": "BIT_VECTOR"},
    "doubleStats": {"lowValue": "DOUBLE_LOW_VALUE", "highValue": "DOUBLE_HIGH_VALUE", "numNulls": "NUM_NULLS",
                    "numDVs": "NUM_DISTINCTS", "bitVectors": "BIT_VECTOR"},
    "decimalStats": {"lowValue": "BIG_DECIMAL_LOW_VALUE", "highValue": "BIG_DECIMAL_HIGH_VALUE",
                     "numNulls": "NUM_NULLS", "numDVs": "NUM_DISTINCTS", "bitVectors": "BIT_VECTOR"},
    "stringStats": {"maxColLen": "MAX_COL_LEN", "avgColLen": "AVG_COL_LEN", "numNulls": "NUM_NULLS",
                    "numDVs": "NUM_DISTINCTS", "bitVectors": "BIT_VECTOR"},
    "binaryStats": {"maxColLen": "MAX_COL_LEN", "avgColLen": "AVG_COL_LEN", "numNulls": "NUM_NULLS",
                    "bitVectors": "BIT_VECTOR"},
}


_STATS_NONE: dict[str, Any] = {col: None for fields in _STATS_FIELDS.values() for col in fields.values()}


def _stats_row(o: ColumnStatisticsObj) -> dict[str, Any]:
    row: dict[str, Any] = {"COLUMN_NAME": o.colName, "COLUMN_TYPE": o.colType, "STATS_KIND": o.kind, "NUM_NULLS": 0}
    for f, col in _STATS_FIELDS[o.kind].items():
        v = o.values.get(f)
        if v is None:
            continue
        if o.kind == "decimalStats" and f in ("lowValue", "highValue"):
            unscaled, scale = cast(tuple[bytes, int], v)
            v = f"{int.from_bytes(unscaled, 'big', signed=True)}:{scale}"
        row[col] = v
    return row


def _stats_obj(r: Any) -> ColumnStatisticsObj:
    """A stored row as Hive reads it: as the kind of its column type (a row written as another kind reads as
    that type's fields of it), a kind of its own for types Hive has none for."""
    kind = read_kind(r.COLUMN_TYPE or "", r.STATS_KIND)
    values: dict[str, object] = {}
    for f, col in _STATS_FIELDS[kind].items():
        v = getattr(r, col)
        if v is None:
            continue
        if kind == "decimalStats" and f in ("lowValue", "highValue"):
            num, scale = str(v).split(":")
            n = int(num)
            v = (n.to_bytes(max(1, (n.bit_length() + 8) // 8), "big", signed=True), int(scale))
        values[f] = v
    return ColumnStatisticsObj(r.COLUMN_NAME, r.COLUMN_TYPE, kind, values)
