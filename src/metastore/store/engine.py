"""Engines for the three supported databases, tuned for the metastore's access pattern."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine


def create_engine(url: str, pool_size: int = 8) -> Engine:
    """An engine for `url`; SQLite gets WAL and explicit transactions, the others READ COMMITTED."""
    u = sa.engine.make_url(url)
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
        conn.connection.dbapi_connection.execute("BEGIN IMMEDIATE" if conn.info.pop("write", False) else "BEGIN")


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


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
