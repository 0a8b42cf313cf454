"""Schema versions: Alembic migrations, and the check that refuses a store whose version we do not know."""

from __future__ import annotations

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


def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    with engine.begin() as conn:
        command.upgrade(_config(conn), revision)


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
