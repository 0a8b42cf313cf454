"""Store.connection_scope: a server thread keeps one SQLite connection for its calls, within bounds."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from metastore.app import build_catalog
from metastore.config import Settings
from metastore.core import model as m
from metastore.core.errors import MetaError

from conftest import BACKENDS, Database


def _table(name: str) -> m.Table:
    return m.Table(tableName=name, dbName="default", tableType="MANAGED_TABLE",
                   sd=m.StorageDescriptor(cols=[m.FieldSchema(name="c", type="string")],
                                          serdeInfo=m.SerDeInfo(serializationLib="x"), parameters={}),
                   partitionKeys=[], parameters={})


def _dbapi_of_writes(catalog, n: int) -> set[int]:  # type: ignore[no-untyped-def]
    """The driver connections that n write transactions of this thread ran on."""
    seen = set()
    for _ in range(n):
        with catalog.store.write() as tx:
            seen.add(id(tx.conn.connection.dbapi_connection))
    return seen


def test_a_scope_keeps_one_connection_and_gives_it_back(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    pool = catalog.store.engine.pool
    with catalog.connection_scope():
        assert len(_dbapi_of_writes(catalog, 5)) == 1
        assert pool.checkedout() == 1  # kept between the transactions
        catalog.create_table(_table("a"))
        assert catalog.get_table("default", "a").tableName == "a"
    assert pool.checkedout() == 0


def test_a_nested_transaction_in_a_scope_takes_another_connection(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    catalog.create_table(_table("a"))
    with catalog.connection_scope():
        # the inner read would fail on the outer write's connection: BEGIN inside BEGIN
        with catalog.store.write() as outer, catalog.store.read() as inner:
            assert inner.conn is not outer.conn
            assert inner.get_table("default", "a") is not None
        assert catalog.store.engine.pool.checkedout() == 1


def test_a_scoped_thread_sees_writes_made_elsewhere_at_once(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    other = build_catalog(Settings(data_dir=str(tmp_path)))  # another server process's store, same file
    with catalog.connection_scope():
        assert catalog.get_tables("default") == []
        other.create_table(_table("b"))
        assert catalog.get_tables("default") == ["b"]  # no snapshot held between transactions
        other.drop_table("default", "b", True)
        assert catalog.get_tables("default") == []


def test_no_more_kept_connections_than_half_the_pool(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    pool = catalog.store.engine.pool
    limit = pool.size() // 2
    threads_n = limit + 3
    inside = threading.Barrier(threads_n + 1)
    done = threading.Barrier(threads_n + 1)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            with catalog.connection_scope():
                catalog.create_table(_table(f"t{i}"))
                inside.wait(timeout=30)
                done.wait(timeout=30)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(threads_n)]
    for t in threads:
        t.start()
    inside.wait(timeout=30)
    assert pool.checkedout() == limit  # the others gave theirs back after each call
    done.wait(timeout=30)
    for t in threads:
        t.join(timeout=30)
    assert not errors
    assert pool.checkedout() == 0
    assert sorted(catalog.get_tables("default")) == sorted(f"t{i}" for i in range(threads_n))


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "sqlite"], indirect=True)
def test_server_databases_keep_nothing(fresh_database: Database, tmp_path: Path) -> None:
    # their connections are bounded by the pool alone: every call takes one and gives it back
    catalog = build_catalog(Settings(data_dir=str(tmp_path), db=fresh_database.url))
    with catalog.connection_scope():
        catalog.create_table(_table("a"))
        assert catalog.store.engine.pool.checkedout() == 0
        assert catalog.get_table("default", "a").tableName == "a"


def test_a_kept_connection_outlives_a_failed_begin(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    db_file = str(tmp_path / "metastore.db")
    with catalog.connection_scope():
        catalog.create_table(_table("a"))
        with catalog.store.read() as tx:  # the kept connection: give up on a lock after 50 ms
            tx.conn.exec_driver_sql("PRAGMA busy_timeout=50")
        holder = sqlite3.connect(db_file, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process's writer holds the write lock
        try:
            with pytest.raises(MetaError):
                catalog.create_table(_table("b"))
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        catalog.create_table(_table("b"))  # the same thread, after the failure: works again
        assert sorted(catalog.get_tables("default")) == ["a", "b"]
