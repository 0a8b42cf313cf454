"""The schema check at a server's start: a store already at this code's head is neither locked nor migrated."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from metastore.store import migrate
from metastore.store.engine import create_engine


def test_a_store_at_head_starts_while_another_process_holds_its_write_lock(tmp_path: Path) -> None:
    """Each worker of a server, and every later server, runs the start's upgrade-if-empty on a store at head: it
    answers from the version alone, without the schema lock (SQLite's write lock, which a busy writer may hold
    for a while: the old path waited for it up to the busy timeout and then failed)."""
    path = tmp_path / "m.db"
    engine = create_engine(f"sqlite:///{path}")
    try:
        assert migrate.upgrade(engine, only_if_empty=True)  # empty: migrated
        writer = sqlite3.connect(path, timeout=0)
        try:
            writer.execute("BEGIN IMMEDIATE")  # another process's write transaction, held
            assert migrate.upgrade(engine, only_if_empty=True) is False
            migrate.check(engine)
            assert migrate.current_revision(engine) == migrate.head_revision()
        finally:
            writer.rollback()
            writer.close()
    finally:
        engine.dispose()


def test_an_older_store_is_not_taken_for_the_head(tmp_path: Path) -> None:
    """The quick answer is only for the head: a store at an older revision is neither migrated by the start's
    upgrade-if-empty (it is not empty) nor accepted by the check."""
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    try:
        migrate.upgrade(engine, "0001")
        assert migrate.upgrade(engine, only_if_empty=True) is False
        assert migrate.current_revision(engine) == "0001"
        with pytest.raises(migrate.SchemaVersionError, match="older"):
            migrate.check(engine)
    finally:
        engine.dispose()
