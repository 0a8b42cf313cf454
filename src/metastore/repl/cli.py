"""`metastore repl dump|load|status|reset`."""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from ..app import command_settings
from . import NothingToDo, ReplError, dump, load, reset, root_dir, status


def _options(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for p in pairs:
        k, eq, v = p.partition("=")
        if not eq or not k.strip():
            raise click.BadParameter(f"{p!r} is not KEY=VALUE", param_hint="--with")
        out[k.strip().strip("'\"")] = v.strip().strip("'\"")
    return out


_with = click.option("--with", "with_", multiple=True, metavar="KEY=VALUE",
                     help="Options as in REPL ... WITH (...): hive.repl.rootdir (staging root), "
                          "metastore.repl.copy.engine (spark|local), spark.master, spark.* ...")
_metastore = click.option("--metastore", "uri", help="The metastore: the source for dump, the target for load "
                                                    "and status [setting `metastore`, thrift://127.0.0.1:9083].")


def _uri(ctx: click.Context, uri: str | None) -> str:
    """The metastore's URI: --metastore, else the settings' (checked: thrift://HOST:PORT)."""
    return command_settings(ctx, metastore=uri).metastore_uri


@click.group()
def repl() -> None:
    """Replication: REPL DUMP on a source metastore, REPL LOAD on a target."""


@repl.command("dump")
@click.argument("db")
@_with
@_metastore
@click.pass_context
def dump_cmd(ctx: click.Context, db: str, with_: tuple[str, ...], uri: str | None) -> None:
    """Dump DB: a bootstrap the first time, then the events since the last dump."""
    opts = _options(with_)
    try:
        r = dump(_uri(ctx, uri), db, root_dir(opts))
    except NothingToDo as e:
        click.echo(str(e))
        return
    except ReplError as e:
        raise click.ClickException(str(e)) from None
    click.echo(r.describe())


@repl.command("load")
@click.argument("srcdb")
@click.option("--into", "into", help="The target database [SRCDB].")
@_with
@_metastore
@click.pass_context
def load_cmd(ctx: click.Context, srcdb: str, into: str | None, with_: tuple[str, ...],
             uri: str | None) -> None:
    """Load the dumps of SRCDB not yet loaded into the target database."""
    opts = _options(with_)
    try:
        results = load(_uri(ctx, uri), srcdb, into or srcdb, root_dir(opts), opts)
    except NothingToDo as e:
        click.echo(str(e))
        return
    except ReplError as e:
        raise click.ClickException(str(e)) from None
    for r in results:
        click.echo(r.describe())


@repl.command("status")
@click.argument("tgtdb")
@_metastore
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def status_cmd(ctx: click.Context, tgtdb: str, uri: str | None, as_json: bool) -> None:
    """The replication state kept on the target database TGTDB."""
    try:
        s = status(_uri(ctx, uri), tgtdb)
    except ReplError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps(s))
        return
    if s["source"] is None and s["last_id"] is None:
        click.echo(f"{s['database']}: not a replication target")
        return
    click.echo(f"{s['database']}: replica of {s['source']}, last replicated event {s['last_id']}"
               + (f", loading dump {s['loading']} (interrupted or running)" if s["loading"] else ""))


@repl.command("reset")
@click.argument("srcdb")
@click.option("--bootstrap", is_flag=True, help="Remove every dump of SRCDB: the next dump is a bootstrap.")
@_with
def reset_cmd(srcdb: str, bootstrap: bool, with_: tuple[str, ...]) -> None:
    """Clear a failed load's marker so the next load retries (or start over with --bootstrap)."""
    done = reset(root_dir(_options(with_)), srcdb, bootstrap)
    click.echo("\n".join(done) if done else "nothing to reset")


@click.command()
@click.argument("statement", required=False)
@click.option("--db", help="SQLAlchemy URL of the metastore's store (default: SQLite in the data directory).")
@click.option("--data-dir", help="Data directory for the embedded defaults [./metastore-data].")
@click.pass_context
def sql(ctx: click.Context, statement: str | None, db: str | None, data_dir: str | None) -> None:
    """Run a scheduled-query statement (CREATE/ALTER/DROP SCHEDULED QUERY, SELECT * FROM
    information_schema.scheduled_queries | information_schema.scheduled_executions | sys.replication_metrics);
    without STATEMENT, an interactive shell (statements end with ';'). The statements are the OS user's: with
    authorization "sql", a policy executing as another user is an administrator's to create, change or drop."""
    from ..app import scheduled_store
    from ..store.migrate import SchemaVersionError

    settings = command_settings(ctx, db=db, data_dir=data_dir)
    try:
        store = scheduled_store(settings)
    except SchemaVersionError as e:
        raise click.ClickException(str(e)) from None
    is_admin = None
    if settings.authorization == "sql":
        from ..catalog.privileges import Privileges
        from ..core import identity
        from ..store.store import Store

        privileges = Privileges(Store(store.engine), [u.strip() for u in settings.admin_users.split(",")])

        def is_admin(user: str) -> bool:
            return privileges.rights(identity.Principal(user)).admin

    if statement is not None:
        if not _run_one(store, statement, is_admin):
            raise SystemExit(1)
        return
    _shell(store, is_admin)


def _run_one(store: object, text: str, is_admin: Callable[[str], bool] | None = None) -> bool:
    from .policies import execute

    try:
        out = execute(store, text, is_admin=is_admin)  # type: ignore[arg-type]
    except ReplError as e:
        click.echo(f"Error: {e}", err=True)
        return False
    if isinstance(out, str):
        click.echo(out)
        return True
    cols, rows = out
    click.echo("\t".join(cols))
    for r in rows:
        click.echo("\t".join("NULL" if v is None else str(v) for v in r))
    click.echo(f"({len(rows)} row{'s' if len(rows) != 1 else ''})", err=True)
    return True


def _shell(store: object, is_admin: Callable[[str], bool] | None = None) -> None:
    click.echo("metastore sql: scheduled queries and replication metrics; end statements with ';', "
               "quit with \\q or Ctrl-D", err=True)
    buf: list[str] = []
    while True:
        try:
            line = input("sql> " if not buf else "...> ")
        except EOFError:
            click.echo("", err=True)
            return
        if line.strip() in ("\\q", "quit", "exit") and not buf:
            return
        buf.append(line)
        text = "\n".join(buf).strip()
        if text.endswith(";"):
            buf = []
            if text.strip(";").strip():
                _run_one(store, text, is_admin)
