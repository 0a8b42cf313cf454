"""Alembic environment: runs the migrations on the connection that `metastore.store.migrate` hands in."""

from alembic import context

from metastore.store.schema import metadata

config = context.config
connection = config.attributes.get("connection")

if connection is None:
    raise RuntimeError("run migrations through `metastore schema upgrade`, which provides the connection")

context.configure(connection=connection, target_metadata=metadata, render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
