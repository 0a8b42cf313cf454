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
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.info.pop("write", False) else "BEGIN")


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"
