"""Engines for the three supported databases, tuned for the metastore's access pattern.

SQLite's driver comes with Python; PostgreSQL's and MariaDB's are extras (`metastore[postgres]`,
`metastore[mysql]`): create_engine imports the URL's driver first, so a missing one is named with its extra
(metastore.extras.MissingExtra) rather than failing inside SQLAlchemy.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, TypeAlias

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine

log = logging.getLogger(__name__)

# The store's engine as the layers above name it: they hold one only to hand it back to the store's functions
# (migrate, Store, ScheduledStore), so nothing above the store imports SQLAlchemy.
StoreEngine: TypeAlias = Engine

# (backend, driver) of a store URL -> (the driver's module, the extra that installs it); None: SQLAlchemy's
# default driver for the backend
DRIVERS: dict[tuple[str, str | None], tuple[str, str]] = {
    ("postgresql", None): ("psycopg2", "postgres"),
    ("postgresql", "psycopg2"): ("psycopg2", "postgres"),
    ("postgresql", "psycopg"): ("psycopg", "postgres"),
    ("mysql", "pymysql"): ("pymysql", "mysql"),
    ("mariadb", "pymysql"): ("pymysql", "mysql"),
}


def driver_module(url: str | sa.engine.URL) -> tuple[str, str] | None:
    """(module, extra) of the driver a store URL needs beyond the core install; None for SQLite."""
    u = sa.engine.make_url(url)
    return DRIVERS.get((u.get_backend_name(), u.get_driver_name() if "+" in u.drivername else None))


def create_engine(url: str, pool_size: int = 8) -> Engine:
    """An engine for `url`; SQLite gets WAL and explicit transactions, the others READ COMMITTED."""
    u = sa.engine.make_url(url)
    needed = driver_module(u)
    if needed is not None:
        from ..extras import require

        require(needed[0], needed[1])
    if u.get_backend_name() == "sqlite":
        engine = sa.create_engine(url, connect_args={"timeout": 60, "check_same_thread": False},
                                  pool_size=pool_size, max_overflow=2 * pool_size, pool_pre_ping=False,
                                  poolclass=sa.pool.QueuePool if u.database not in (None, "", ":memory:") else None)
        _sqlite_tuning(engine)
        return engine
    return sa.create_engine(
        url,
        pool_size=pool_size,
        max_overflow=2 * pool_size,
        pool_pre_ping=True,
        pool_recycle=3600,
        isolation_level="READ COMMITTED",
    )


def _sqlite_tuning(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        # pysqlite's own transaction handling would defer BEGIN; we issue BEGIN ourselves (below).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        # A catalog write touches one leaf of some twenty tables and indexes, and a WAL commit writes each
        # whole page: 1 KiB pages halve a create or drop's commit (a new file only; an existing one keeps its size).
        cur.execute("PRAGMA page_size=1024")
        cur.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL survives a crash of the process (kill -9); only a power loss can drop the
        # last commits, and FULL would cost an fsync per commit.
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        # Writers take the write lock at BEGIN, so two writers never deadlock upgrading read locks.
        # On the driver's connection directly: SQLAlchemy's statement machinery costs more than BEGIN itself.
        sql = "BEGIN IMMEDIATE" if conn.info.pop("write", False) else "BEGIN"
        dbapi = conn.dialect.loaded_dbapi
        try:
            conn.connection.dbapi_connection.execute(sql)
        except dbapi.Error as e:  # as SQLAlchemy wraps a statement's (a lock not had in busy_timeout, ...)
            raise sa.exc.DBAPIError.instance(sql, (), e, dbapi.Error) from e


def describe(engine: Engine) -> str:
    """The engine's URL with its password hidden: what logs and messages may show of a store."""
    return engine.url.render_as_string(hide_password=True)


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def is_sqlite_file(engine: Engine) -> bool:
    db = engine.url.database or ""
    return is_sqlite(engine) and db not in ("", ":memory:") and "mode=memory" not in str(engine.url)


def store_files(url: str) -> list[str]:
    """The files of a store on this host (a SQLite database and its -wal, -shm and -journal files; none for a
    server database), as absolute paths: places the location policy keeps every client away from."""
    u = sa.engine.make_url(url)
    db = u.database or ""
    if u.get_backend_name() != "sqlite" or db in ("", ":memory:") or u.query.get("mode") == "memory":
        return []
    if db.startswith("file:"):  # a URI filename (?uri=true)
        db = db[len("file:"):].partition("?")[0]
    path = os.path.abspath(db)
    return [path] + [path + suffix for suffix in ("-wal", "-shm", "-journal")]


def raw_sqlite_connection(engine: Engine, **extra: Any) -> Any:
    """A driver connection to `engine`'s SQLite database outside its pool, in autocommit (no implicit BEGIN)."""
    cargs, cparams = engine.dialect.create_connect_args(engine.url)
    conn = engine.dialect.loaded_dbapi.connect(*cargs, **{**cparams, "check_same_thread": False, **extra})
    conn.isolation_level = None
    return conn


# With the checkpointer running, a commit checkpoints by itself only when the WAL has grown this far behind
# (SQLite's default is 1,000 pages: a 1,000-partition add_partitions passes it at every commit).
FALLBACK_AUTOCHECKPOINT_PAGES = 20_000


class WalCheckpointer:
    """Copies a SQLite file's write-ahead log back into the database from a thread of its own.

    By default the commit that takes the WAL past 1,000 pages copies them, and syncs both files, before it
    returns (about 9% of an add_partitions batch here). This thread does it instead, every `interval_s`, with
    a PASSIVE checkpoint, which waits for no reader or writer; sqlite3 lets go of the GIL while it runs, so it
    overlaps the request threads. Commits still checkpoint if the WAL gets FALLBACK_AUTOCHECKPOINT_PAGES
    behind, so a stalled thread cannot let it grow without bound.
    """

    def __init__(self, engine: Engine, interval_s: float = 0.2) -> None:
        self.engine = engine
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wal-checkpointer", daemon=True)

    def start(self) -> WalCheckpointer:
        self.leave_to_thread()
        self._thread.start()
        return self

    def leave_to_thread(self) -> None:
        """Raise the store's connections' own checkpoint threshold to the fallback (start() does this first)."""
        if event.contains(self.engine, "connect", _fallback_autocheckpoint):
            return
        event.listen(self.engine, "connect", _fallback_autocheckpoint)
        self.engine.dispose()  # pooled connections made before this get the setting when they are made again

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        conn = None
        while not self._stop.wait(self.interval_s):
            try:
                if conn is None:
                    conn = raw_sqlite_connection(self.engine)
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except Exception as e:  # the next round tries again on a new connection; commits still fall back
                log.warning("WAL checkpoint failed: %s", e)
                if conn is not None:
                    try:
                        conn.close()
                    except Exception:
                        pass
                conn = None
        if conn is not None:
            conn.close()


def _fallback_autocheckpoint(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    dbapi_conn.execute(f"PRAGMA wal_autocheckpoint={FALLBACK_AUTOCHECKPOINT_PAGES}")


def start_wal_checkpointer(engine: Engine, interval_s: float = 0.2) -> WalCheckpointer | None:
    """A running WalCheckpointer for a SQLite file; None for other databases (they have no WAL of ours)."""
    return WalCheckpointer(engine, interval_s).start() if is_sqlite_file(engine) else None


# Planner statistics for SQLite, in sqlite_stat1's format ("rows, rows per first column, per first two").
# Without any, SQLite walks a table's partitions and probes each one's key values even for an equality
# filter; with these it uses the (key index, value) index. They describe the shape of a metastore (many
# partitions per table, few per key value) and are used only until a real ANALYZE replaces them.
_SQLITE_STATS = [
    ("PARTITION_KEY_VALS", "IX_PARTITION_KEY_VALS_IDX_VAL", "1000000 200000 20"),
    ("PARTITION_KEY_VALS", "sqlite_autoindex_PARTITION_KEY_VALS_1", "1000000 2 1"),
    ("PARTITIONS", "UQ_PARTITIONS_TBL_ID_PART_NAME", "500000 2000 1"),
    ("PARTITIONS", "IX_PARTITIONS_SD_ID", "500000 1"),
]


def seed_sqlite_stats(engine: Engine) -> None:
    if not is_sqlite(engine):
        return
    with engine.connect() as conn:
        conn.info["write"] = True
        with conn.begin():
            has = conn.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'").scalar()
            if not has:
                conn.exec_driver_sql("ANALYZE sqlite_master")  # creates sqlite_stat1, analyzing nothing
                conn.exec_driver_sql("DELETE FROM sqlite_stat1")
            present = {r[0] for r in conn.exec_driver_sql("SELECT idx FROM sqlite_stat1")}
            for tbl, idx, stat in _SQLITE_STATS:
                if idx not in present:
                    conn.exec_driver_sql("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)", (tbl, idx, stat))
    # connections opened before this read the old statistics; start the pool afresh
    engine.dispose()
