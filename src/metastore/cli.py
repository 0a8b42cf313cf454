"""The `metastore` command."""

from __future__ import annotations

import logging
import signal
import sys

from typing import Any

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
@click.option("--bus", help="Message bus for notifications: activemq://HOST:61613, amqp://..., ... [none: "
                            "subscribers read the log].")
@click.option("--relay/--no-relay", default=None, help="Run the notification relay in this server [on with --bus].")
@click.option("--workers", type=int, help="Server processes sharing the port [1].")
@click.option("--rest-port", type=int, help="HTTP port of the Iceberg REST catalog [8181].")
@click.option("--rest/--no-rest", default=None, help="Serve the Iceberg REST catalog [on].")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, db: str | None, data_dir: str | None,
          warehouse: str | None, bus: str | None = None, relay: bool | None = None,
          workers: int | None = None, rest_port: int | None = None, rest: bool | None = None) -> None:
    """Serve the Hive Metastore Thrift API and the Iceberg REST catalog."""
    from .app import build_catalog
    from .server.handler import Handler
    from .server.thrift_server import ThriftServer
    from .store.migrate import SchemaVersionError

    from .app import register_relay, start_notifications
    from .repl.policies import start_scheduler
    from .server.serialized import SerializedReads
    from .server.workers import front_limits, small_thread_stacks, supervise
    from .store.engine import start_wal_checkpointer

    s = _settings(ctx, host=host, port=port, db=db, data_dir=data_dir, warehouse=warehouse, bus=bus, relay=relay,
                  workers=workers, rest_port=rest_port, rest=rest)
    try:  # the bounds of both fronts, in each process (README "Security")
        limits = front_limits(s, fronts=2 if s.rest else 1)
        if s.max_message_bytes < 1 or s.max_request_bytes < 1:
            raise ValueError("max_message_bytes and max_request_bytes must be positive")
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    small_thread_stacks()  # a connection costs a thread: thousands of them reserve 1 MiB each, not 8
    try:
        catalog = build_catalog(s)  # schema check and default database, once, before any worker starts
    except SchemaVersionError as e:
        raise click.ClickException(str(e)) from None
    register_relay(catalog, s)

    def make_server(catalog: Any) -> ThriftServer:
        return ThriftServer(Handler(catalog, s.hive_config()), s.host, s.port,
                            max_message_bytes=s.max_message_bytes, limits=limits,
                            fast=SerializedReads(catalog).methods(), connection_scope=catalog.connection_scope)

    rest_server = None
    if s.rest:  # the Iceberg REST catalog: its socket is bound here, served by every worker (see metastore.rest)
        from .rest.server import RestServer

        rest_server = RestServer(catalog, s.host, s.rest_port, limits, s.max_request_bytes)
        try:
            rest_server.bind()
        except OSError as e:
            msg = (f"cannot listen on {s.host}:{s.rest_port} for the Iceberg REST catalog: {e} "
                   "(--rest-port N, or --no-rest)")
            if rest_port is not None or s.rest_port != config.Settings.rest_port:
                raise click.ClickException(msg) from None
            # the default port taken (another server on this host): serve Thrift alone rather than not at all
            click.echo(f"warning: {msg}; serving without it", err=True)
            rest_server = None
    server = make_server(catalog)
    port = server.bind()  # after the REST socket: a client that finds the Thrift port open finds both
    store = catalog.store.engine.url.render_as_string(hide_password=True)
    click.echo(f"metastore {__version__} serving thrift://{s.host}:{port} with {max(1, s.workers)} process(es) "
               f"(store {store}, warehouse {s.warehouse_dir})", err=True)
    if rest_server is not None:
        click.echo(f"metastore Iceberg REST catalog at {rest_server.url} (OpenAPI: {rest_server.url}/v1/openapi.json)",
                   err=True)
    if s.workers <= 1:
        start_wal_checkpointer(catalog.store.engine)
        if rest_server is not None:
            rest_server.start()
        start_notifications(catalog, s, f"thrift://{s.host}:{port}")
        start_scheduler(catalog, f"thrift://{s.host}:{port}")  # scheduled replication policies
        signal.signal(signal.SIGTERM, lambda *_: (server.close(), sys.exit(0)))
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            server.close()
        return

    listening = server._sock
    assert listening is not None
    catalog.store.engine.dispose()  # connections are not shared across fork

    rest_listening = rest_server.socket if rest_server is not None else None

    def run_worker(i: int) -> None:
        own = build_catalog(s)
        start_wal_checkpointer(own.store.engine)  # one per process: a PASSIVE checkpoint never waits for another
        worker = make_server(own)
        worker.adopt(listening)
        if rest_listening is not None:  # every worker accepts REST connections on the shared socket too
            from .rest.server import RestServer

            own_rest = RestServer(own, s.host, s.rest_port, limits, s.max_request_bytes)
            own_rest.adopt(rest_listening)
            own_rest.start()
        if i == 0:  # one relay and one cleaner for the whole server
            start_notifications(own, s, f"thrift://{s.host}:{port}")
            start_scheduler(own, f"thrift://{s.host}:{port}")
        worker.serve_forever()

    supervise(s.workers, run_worker)


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


from .notify.cli import events, relay  # noqa: E402 - `metastore relay`, `metastore events ...`

main.add_command(relay)
main.add_command(events)

from .pipeline.cli import pipeline  # noqa: E402 - `metastore pipeline status`

main.add_command(pipeline)

from .repl.cli import repl, sql  # noqa: E402 - `metastore repl dump|load|status|reset`, `metastore sql`

main.add_command(repl)
main.add_command(sql)

from .catalogd.cli import catalogd  # noqa: E402 - `metastore catalogd [status]`

main.add_command(catalogd)

if __name__ == "__main__":
    main()
