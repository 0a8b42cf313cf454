"""The `metastore` command."""

from __future__ import annotations

import logging
import sys

import click

from . import __version__
from .app import command_settings
from .config import SettingsError
from .extras import MissingExtra


class _Main(click.Group):
    """The command group; a missing optional extra or an invalid setting ends any command with its message."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (MissingExtra, SettingsError) as e:
            raise click.ClickException(str(e)) from None


@click.group(cls=_Main)
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
@click.option("--audit-log", help="Append one JSON line per call to this file ('-': stdout) [none].")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, db: str | None, data_dir: str | None,
          warehouse: str | None, bus: str | None = None, relay: bool | None = None,
          workers: int | None = None, rest_port: int | None = None, rest: bool | None = None,
          audit_log: str | None = None) -> None:
    """Serve the Hive Metastore Thrift API and the Iceberg REST catalog."""
    from .app import Server, security_summary
    from .store.migrate import SchemaVersionError

    s = command_settings(ctx, host=host, port=port, db=db, data_dir=data_dir, warehouse=warehouse, bus=bus,
                         relay=relay, workers=workers, rest_port=rest_port, rest=rest, audit_log=audit_log)
    server = Server(s)
    try:
        server.open()
    except (ValueError, SchemaVersionError, OSError) as e:  # limits, the store's schema, a port
        raise click.ClickException(str(e)) from None
    for warning in server.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"metastore {__version__} serving {server.thrift_url} with {s.workers} process(es) "
               f"(store {server.store_url}, warehouse {s.warehouse_dir})", err=True)
    click.echo(f"metastore {security_summary(s)}", err=True)
    if server.rest is not None:
        url = server.rest.url
        click.echo(f"metastore Iceberg REST catalog at {url} (OpenAPI: {url}/v1/openapi.json)", err=True)
    server.run()


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
    from .app import open_engine
    from .store import migrate

    engine = open_engine(command_settings(ctx, db=db, data_dir=data_dir))
    before = migrate.current_revision(engine)
    migrate.upgrade(engine, revision)
    click.echo(f"schema {before or 'none'} -> {migrate.current_revision(engine)}")


@schema.command("status")
@_db_option
@_data_dir_option
@click.pass_context
def schema_status(ctx: click.Context, db: str | None, data_dir: str | None) -> None:
    """Show the store's schema version and whether this code can serve it."""
    from .app import open_engine
    from .store import migrate
    from .store.engine import describe as describe_store

    engine = open_engine(command_settings(ctx, db=db, data_dir=data_dir))
    click.echo(f"store {describe_store(engine)}: "
               f"version {migrate.current_revision(engine) or 'none'}, this code: {migrate.head_revision()}")
    try:
        migrate.check(engine)
    except migrate.SchemaVersionError as e:
        raise click.ClickException(str(e)) from None


@main.group()
def oauth() -> None:
    """OAuth2 clients of the REST front's token endpoint (rest_auth = oauth2)."""


@oauth.command("add-client")
@click.argument("client_id")
@click.option("--user", required=True, help="The user the client's tokens act as.")
@click.option("--secret-stdin", is_flag=True, help="Read the secret from standard input [a new random one].")
@_data_dir_option
@click.pass_context
def oauth_add_client(ctx: click.Context, client_id: str, user: str, secret_stdin: bool, data_dir: str | None) -> None:
    """Add (or replace) a client in the clients file (rest_clients), its secret hashed; prints the credential
    (CLIENT_ID:SECRET, PyIceberg's `credential`) once."""
    from .app import rest_clients_path
    from .rest.clients import ClientsError, add_client

    path = rest_clients_path(command_settings(ctx, data_dir=data_dir))
    secret = sys.stdin.readline().rstrip("\r\n") if secret_stdin else None
    try:
        secret = add_client(path, client_id, user, secret)
    except ClientsError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"client {client_id} (user {user}) written to {path}; its credential:", err=True)
    click.echo(f"{client_id}:{secret}")


@oauth.command("remove-client")
@click.argument("client_id")
@_data_dir_option
@click.pass_context
def oauth_remove_client(ctx: click.Context, client_id: str, data_dir: str | None) -> None:
    """Remove a client from the clients file (tokens it already has stay valid until they expire)."""
    from .app import rest_clients_path
    from .rest.clients import ClientsError, remove_client

    path = rest_clients_path(command_settings(ctx, data_dir=data_dir))
    try:
        if not remove_client(path, client_id):
            raise click.ClickException(f"no client {client_id} in {path}")
    except ClientsError as e:
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

from .grants_cli import grant, grants, revoke, roles  # noqa: E402 - `metastore grant|revoke|grants|roles ...`

main.add_command(grant)
main.add_command(revoke)
main.add_command(grants)
main.add_command(roles)

if __name__ == "__main__":
    main()
