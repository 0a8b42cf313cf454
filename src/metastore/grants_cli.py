"""`metastore grant`, `metastore revoke`, `metastore grants`, `metastore roles ...`: the privilege model
(README "Authorization") managed on the store directly, acting as the server (an administrator).

Principals are written KIND:NAME (user:alice, role:analysts, group:etl); objects `global`, `database:DB` or
`table:DB.TABLE`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .app import command_settings
from .core import model as m
from .core.errors import CatalogError

if TYPE_CHECKING:
    from .catalog.service import Catalog

_R = TypeVar("_R")
_KINDS = {"user": m.USER, "role": m.ROLE, "group": m.GROUP}
_db_option = click.option("--db", help="SQLAlchemy URL of the store (default: SQLite in the data directory).")
_data_dir_option = click.option("--data-dir", help="Data directory for the embedded defaults [./metastore-data].")


def _principal(text: str) -> tuple[str, int]:
    kind, sep, name = text.partition(":")
    if not sep or kind.lower() not in _KINDS or not name:
        raise click.BadParameter(f"{text!r}: expected user:NAME, role:NAME or group:NAME")
    return name, _KINDS[kind.lower()]


def _object(text: str) -> m.ObjectRef:
    if text.lower() == "global":
        return m.GLOBAL_OBJECT
    kind, sep, name = text.partition(":")
    if sep and kind.lower() == "database" and name:
        return m.ObjectRef(m.DATABASE, name.lower())
    db, dot, table = name.partition(".")
    if sep and kind.lower() == "table" and dot and db and table:
        return m.ObjectRef(m.TABLE, db.lower(), table.lower())
    raise click.BadParameter(f"{text!r}: expected global, database:DB or table:DB.TABLE")


def _catalog(ctx: click.Context, db: str | None, data_dir: str | None) -> Catalog:
    """The store's catalog, acting as the server (no principal: an administrator); the built-in roles made."""
    from .app import open_catalog

    catalog = open_catalog(command_settings(ctx, db=db, data_dir=data_dir))
    catalog.ensure_default_database()  # as a server's start would: the objects grants name may be there
    catalog.privileges.bootstrap()
    return catalog


def _run(fn: Callable[..., _R], *args: Any, **kwargs: Any) -> _R:
    try:
        return fn(*args, **kwargs)
    except CatalogError as e:
        raise click.ClickException(e.message) from None


def _shown(p: str, kind: int) -> str:
    return f"{m.PRINCIPAL_TYPES[kind].lower()}:{p}"


def _changing(register: Callable[[Callable[..., None]], click.Command], params: list[Callable[[Any], Any]],
              doc: str, change: Callable[..., str]) -> click.Command:
    """A command that grants or revokes: its PARAMS (a `principal`, parsed; an `option` flag; the object of the
    change), the store's options; change(catalog, principal name, kind, option, **the object) does it on the
    store and says what it did."""

    def command(ctx: click.Context, principal: tuple[str, int], option: bool, db: str | None, data_dir: str | None,
                **target: Any) -> None:
        click.echo(_run(change, _catalog(ctx, db, data_dir), *principal, option, **target))

    command.__doc__ = doc
    for decorate in reversed([*params, _db_option, _data_dir_option, click.pass_context]):
        command = decorate(command)
    return register(command)


def _principal_param(option: str | None = None) -> Callable[[Any], Any]:
    """The principal (KIND:NAME, parsed to (name, kind) as click reads it): the argument PRINCIPAL, or an option
    (--to, --from)."""

    def parse(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[str, int]:
        return _principal(value)

    if option is None:
        return click.argument("principal", callback=parse)
    return click.option(option, "principal", required=True, callback=parse, help="user:NAME, role:NAME or group:NAME.")


def _privileges_params(to: str, flag: str, flag_help: str) -> list[Callable[[Any], Any]]:
    return [click.argument("privileges"),
            click.option("--on", "on", required=True, callback=lambda _c, _p, v: _object(v),
                         help="global, database:DB or table:DB.TABLE."),
            _principal_param(to), click.option(flag, "option", is_flag=True, help=flag_help)]


def _grant(catalog: Catalog, name: str, kind: int, option: bool, privileges: str, on: m.ObjectRef) -> str:
    catalog.grant_privileges([m.PrivilegeGrant(on, name, kind, p.strip(), option) for p in privileges.split(",")])
    return f"granted {privileges.upper()} on {on.audit()} to {_shown(name, kind)}"


def _revoke(catalog: Catalog, name: str, kind: int, option: bool, privileges: str, on: m.ObjectRef) -> str:
    catalog.revoke_privileges([m.PrivilegeGrant(on, name, kind, p.strip()) for p in privileges.split(",")], option)
    return f"revoked {privileges.upper()} on {on.audit()} from {_shown(name, kind)}"


grant = _changing(click.command("grant"), _privileges_params(
    "--to", "--with-grant-option", "The grantee may grant the privileges on."),
    "Grant PRIVILEGES (comma-separated: SELECT, INSERT, UPDATE, DELETE, ALL, CREATE) on an object.", _grant)
revoke = _changing(click.command("revoke"), _privileges_params(
    "--from", "--grant-option-only", "Revoke only the grant option (GRANT OPTION FOR)."),
    "Revoke PRIVILEGES (comma-separated) on an object.", _revoke)


@click.command()
@click.option("--principal", help="Only the grants to user:NAME, role:NAME or group:NAME.")
@click.option("--on", "on", help="Only the grants on global, database:DB or table:DB.TABLE.")
@_db_option
@_data_dir_option
@click.pass_context
def grants(ctx: click.Context, principal: str | None, on: str | None, db: str | None, data_dir: str | None) -> None:
    """List privilege grants: object, principal, privilege, grant option, grantor."""
    name, kind = _principal(principal) if principal else (None, None)
    obj = _object(on) if on else None
    for g in _run(_catalog(ctx, db, data_dir).list_privileges, name, kind, obj):
        click.echo(f"{g.object.audit()}\t{_shown(g.principalName, g.principalType)}\t{g.privilege}\t"
                   f"{'with grant option' if g.grantOption else '-'}\t{_shown(g.grantor, g.grantorType)}")


@click.group()
def roles() -> None:
    """Roles: list, create, drop, grant, revoke, members, of."""


@roles.command("list")
@_db_option
@_data_dir_option
@click.pass_context
def roles_list(ctx: click.Context, db: str | None, data_dir: str | None) -> None:
    """Every role's name."""
    for name in _run(_catalog(ctx, db, data_dir).role_names):
        click.echo(name)


@roles.command("create")
@click.argument("name")
@_db_option
@_data_dir_option
@click.pass_context
def roles_create(ctx: click.Context, name: str, db: str | None, data_dir: str | None) -> None:
    """Create a role (names are case-insensitive)."""
    _run(_catalog(ctx, db, data_dir).create_role, m.Role(name, ownerName=m.ADMIN))
    click.echo(f"role {name.lower()} created")


@roles.command("drop")
@click.argument("name")
@_db_option
@_data_dir_option
@click.pass_context
def roles_drop(ctx: click.Context, name: str, db: str | None, data_dir: str | None) -> None:
    """Drop a role, its grants and the grants to it."""
    _run(_catalog(ctx, db, data_dir).drop_role, name)
    click.echo(f"role {name.lower()} dropped")


def _grant_role(catalog: Catalog, name: str, kind: int, option: bool, role: str) -> str:
    catalog.grant_role(role, name, kind, option)
    return f"role {role.lower()} granted to {_shown(name, kind)}"


def _revoke_role(catalog: Catalog, name: str, kind: int, option: bool, role: str) -> str:
    catalog.revoke_role(role, name, kind, option)
    return f"role {role.lower()} revoked from {_shown(name, kind)}"


roles_grant = _changing(roles.command("grant"), [
    click.argument("role"), _principal_param(),
    click.option("--with-admin-option", "option", is_flag=True, help="The grantee may grant and revoke the role.")],
    "Grant ROLE to PRINCIPAL (user:NAME, role:NAME or group:NAME).", _grant_role)
roles_revoke = _changing(roles.command("revoke"), [
    click.argument("role"), _principal_param(),
    click.option("--admin-option-only", "option", is_flag=True,
                 help="Revoke only the admin option (ADMIN OPTION FOR).")],
    "Revoke ROLE from PRINCIPAL.", _revoke_role)


@roles.command("members")
@click.argument("role")
@_db_option
@_data_dir_option
@click.pass_context
def roles_members(ctx: click.Context, role: str, db: str | None, data_dir: str | None) -> None:
    """The principals ROLE is granted to."""
    for g in _run(_catalog(ctx, db, data_dir).principals_in_role, role):
        click.echo(f"{_shown(g.principalName, g.principalType)}\t{'with admin option' if g.grantOption else '-'}")


@roles.command("of")
@click.argument("principal")
@_db_option
@_data_dir_option
@click.pass_context
def roles_of(ctx: click.Context, principal: str, db: str | None, data_dir: str | None) -> None:
    """The roles granted to PRINCIPAL directly."""
    name, kind = _principal(principal)
    for g in _run(_catalog(ctx, db, data_dir).role_grants_for_principal, name, kind):
        click.echo(f"{g.roleName}\t{'with admin option' if g.grantOption else '-'}")
