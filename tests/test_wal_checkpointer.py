"""The WAL checkpointer of SQLite stores (store.engine.WalCheckpointer): commits leave the copying of the
write-ahead log to its thread, which does it, and a store without it still checkpoints at SQLite's default."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from metastore.app import build_catalog
from metastore.config import Settings
from metastore.core import model as m
from metastore.store.engine import FALLBACK_AUTOCHECKPOINT_PAGES, WalCheckpointer, start_wal_checkpointer


def _table(name: str) -> m.Table:
    cols = [m.FieldSchema(name=f"c{i}", type="string", comment="x" * 200) for i in range(20)]
    return m.Table(tableName=name, dbName="default", tableType="MANAGED_TABLE",
                   sd=m.StorageDescriptor(cols=cols, serdeInfo=m.SerDeInfo(serializationLib="x"), parameters={}),
                   partitionKeys=[], parameters={})


def _write_tables(catalog, prefix: str, n: int) -> None:  # type: ignore[no-untyped-def]
    for i in range(n):
        catalog.create_table(_table(f"{prefix}{i}"))


def _db_file(tmp_path: Path) -> Path:
    (found,) = list(tmp_path.rglob("*.db"))
    return found


def test_commits_leave_the_copy_to_the_thread_which_makes_it(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    db = _db_file(tmp_path)
    # the last connection to close checkpoints too; this one stays open so that only the thread can
    keeper = sqlite3.connect(db)
    keeper.execute("SELECT count(*) FROM TBLS").fetchone()  # now it has the WAL open
    checkpointer = WalCheckpointer(catalog.store.engine, interval_s=0.05)
    try:
        checkpointer.leave_to_thread()
        with catalog.store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == FALLBACK_AUTOCHECKPOINT_PAGES
        before = db.stat().st_size
        _write_tables(catalog, "a", 40)  # well past SQLite's default of 1,000 pages
        assert Path(f"{db}-wal").stat().st_size > 1_200_000
        assert db.stat().st_size == before  # no commit copied the WAL: it all waits there
        checkpointer.start()
        deadline = time.monotonic() + 10
        while db.stat().st_size == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert db.stat().st_size > before  # copied into the database file by the thread
        assert {f"a{i}" for i in range(40)} <= set(catalog.get_tables("default"))
    finally:
        checkpointer.stop()
        keeper.close()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM TBLS WHERE TBL_NAME LIKE 'a%'").fetchone()[0] == 40
    finally:
        conn.close()


def test_without_the_thread_commits_checkpoint_at_sqlite_default(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    with catalog.store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 1000
    db = _db_file(tmp_path)
    keeper = sqlite3.connect(db)  # as above: only a commit can have copied it
    keeper.execute("SELECT count(*) FROM TBLS").fetchone()
    before = db.stat().st_size
    _write_tables(catalog, "b", 40)
    keeper.close()
    assert db.stat().st_size > before  # a commit copied the WAL once it passed 1,000 pages


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_no_thread_for_a_database_without_a_file(url: str) -> None:
    assert start_wal_checkpointer(sa.create_engine(url)) is None
    assert not os.path.exists(":memory:")
