"""Schema versions: Alembic migrations, and the check that refuses a store whose version we do not know."""

from __future__ import annotations

import functools
import os

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

MIGRATIONS = os.path.join(os.path.dirname(__file__), "migrations")


class SchemaVersionError(RuntimeError):
    """The store's schema is missing, older than this code, or from a version this code does not know."""


def _config(conn: sa.Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS)
    if conn is not None:
        cfg.attributes["connection"] = conn
    return cfg


@functools.cache
def head_revision() -> str:
    """The newest revision of this code's migrations. Read once a process (it parses every migration script):
    a server's forked workers reuse their parent's answer instead of each running Alembic's script loader,
    which alone made ~3.5 MiB of the parent's pages private to each worker (bench/run.py's memory row)."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


_SCHEMA_LOCK = "metastore.schema"
_PG_SCHEMA_LOCK = 0x6D657461  # pg_advisory_xact_lock key of the schema lock ("meta")


def upgrade(engine: Engine, revision: str = "head", only_if_empty: bool = False) -> bool:
    """Migrate the store to `revision` (with `only_if_empty`: only a store with no tables at all).

    Returns whether it migrated. The check and the migration run under a lock on the database, so several
    servers starting at once on an empty database do not race. They did: each saw no tables and ran the
    migration, and all but one failed (PostgreSQL: duplicate type, SQLite: "database is locked"), or, on
    MariaDB, whose DDL is not transactional, saw the tables of another's half-done migration, skipped it,
    and refused the not yet stamped schema.
    """
    # a store already at this code's head (every start but the first, and each worker of a server): nothing
    # to lock or inspect; a migration still under way elsewhere has not stamped the head, so it is waited for
    if only_if_empty and current_revision(engine) == head_revision():
        return False
    name = engine.dialect.name
    with engine.connect() as conn:
        if name in ("mysql", "mariadb"):  # a session lock: it outlives the commits that DDL implies
            if conn.exec_driver_sql(f"SELECT GET_LOCK('{_SCHEMA_LOCK}', 300)").scalar() != 1:
                raise SchemaVersionError(f"timed out waiting for the lock {_SCHEMA_LOCK} to migrate the store")
            conn.commit()  # end the transaction the statement began; the lock stays
        conn.info["write"] = True  # SQLite: BEGIN IMMEDIATE (engine.py), the database's write lock
        try:
            with conn.begin():
                if name == "postgresql":
                    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_SCHEMA_LOCK})")
                if only_if_empty and (MigrationContext.configure(conn).get_current_revision() is not None
                                      or sa.inspect(conn).get_table_names()):
                    return False
                command.upgrade(_config(conn), revision)
                return True
        finally:
            conn.info.pop("write", None)
            if name in ("mysql", "mariadb"):
                conn.exec_driver_sql(f"SELECT RELEASE_LOCK('{_SCHEMA_LOCK}')")


def check(engine: Engine) -> None:
    """Raise SchemaVersionError unless the store is at exactly the revision this code was written for."""
    current = current_revision(engine)
    head = head_revision()
    if current == head:
        return
    known = {r.revision for r in ScriptDirectory.from_config(_config()).walk_revisions()}
    url = engine.url.render_as_string(hide_password=True)
    if current is None:
        raise SchemaVersionError(f"the store at {url} has no metastore schema; run `metastore schema upgrade`")
    if current in known:
        raise SchemaVersionError(
            f"the store at {url} is at schema version {current}, older than this server's {head}; "
            "run `metastore schema upgrade`")
    raise SchemaVersionError(
        f"the store at {url} is at schema version {current}, which this server does not know "
        f"(it knows up to {head}); it was probably written by a newer metastore")
