"""The `metastore` command."""

from __future__ import annotations

import logging
import signal
import sys

import click

from . import __version__, config


def _settings(ctx: click.Context, **kw: object) -> config.Settings:
    return config.load(ctx.obj.get("config"), **kw)


@click.group()
@click.version_option(__version__)
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False),
              help="TOML file, or a hive-site.xml style XML file.")
@click.option("-v", "--verbose", count=True, help="More logging (-vv for debug).")
@click.pass_context
def main(ctx: click.Context, config_file: str | None, verbose: int) -> None:
    """A Hive-Metastore-compatible metadata service."""
    logging.basicConfig(level=[logging.WARNING, logging.INFO, logging.DEBUG][min(verbose, 2)],
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ctx.obj = {"config": config_file}


_db_option = click.option("--db", help="SQLAlchemy URL of the store (default: SQLite in the data directory).")
_data_dir_option = click.option("--data-dir", help="Data directory for the embedded defaults [./metastore-data].")


@main.command()
@click.option("--host", help="Address to listen on [127.0.0.1].")
@click.option("--port", type=int, help="Thrift port [9083].")
@_db_option
@_data_dir_option
@click.option("--warehouse", help="Warehouse directory [<data-dir>/warehouse].")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, db: str | None, data_dir: str | None,
          warehouse: str | None) -> None:
    """Serve the Hive Metastore Thrift API."""
    from .app import build_catalog
    from .server.handler import Handler
    from .server.thrift_server import ThriftServer
    from .store.migrate import SchemaVersionError

    s = _settings(ctx, host=host, port=port, db=db, data_dir=data_dir, warehouse=warehouse)
    try:
        catalog = build_catalog(s)
    except SchemaVersionError as e:
        raise click.ClickException(str(e)) from None
    from .server.serialized import SerializedReads

    server = ThriftServer(Handler(catalog, s.hive_config()), s.host, s.port, fast=SerializedReads(catalog).methods())
    port = server.bind()
    signal.signal(signal.SIGTERM, lambda *_: (server.close(), sys.exit(0)))
    click.echo(f"metastore {__version__} serving thrift://{s.host}:{port} "
               f"(store {catalog.store.engine.url.render_as_string(hide_password=True)}, "
               f"warehouse {s.warehouse_dir})", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.close()


@main.group()
def schema() -> None:
    """The store's schema: versions and migrations."""


@schema.command("upgrade")
@_db_option
@_data_dir_option
@click.option("--revision", default="head", show_default=True)
@click.pass_context
def schema_upgrade(ctx: click.Context, db: str | None, data_dir: str | None, revision: str) -> None:
    """Create or migrate the store's schema."""
    import os

    from .store import migrate
    from .store.engine import create_engine

    s = _settings(ctx.parent.parent if ctx.parent and ctx.parent.parent else ctx, db=db, data_dir=data_dir)
    if s.db is None:
        os.makedirs(s.data_dir, exist_ok=True)
    engine = create_engine(s.db_url)
    before = migrate.current_revision(engine)
    migrate.upgrade(engine, revision)
    click.echo(f"schema {before or 'none'} -> {migrate.current_revision(engine)}")


@schema.command("status")
@_db_option
@_data_dir_option
@click.pass_context
def schema_status(ctx: click.Context, db: str | None, data_dir: str | None) -> None:
    """Show the store's schema version and whether this code can serve it."""
    from .store import migrate
    from .store.engine import create_engine

    s = _settings(ctx.parent.parent if ctx.parent and ctx.parent.parent else ctx, db=db, data_dir=data_dir)
    engine = create_engine(s.db_url)
    click.echo(f"store {engine.url.render_as_string(hide_password=True)}: "
               f"version {migrate.current_revision(engine) or 'none'}, this code: {migrate.head_revision()}")
    try:
        migrate.check(engine)
    except migrate.SchemaVersionError as e:
        raise click.ClickException(str(e)) from None


if __name__ == "__main__":
    main()
