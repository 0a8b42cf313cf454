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


def _run(fn: Callable[..., _R], *args: Any) -> _R:
    try:
        return fn(*args)
    except CatalogError as e:
        raise click.ClickException(e.message) from None


def _shown(p: str, kind: int) -> str:
    return f"{m.PRINCIPAL_TYPES[kind].lower()}:{p}"


@click.command()
@click.argument("privileges")
@click.option("--on", "on", required=True, help="global, database:DB or table:DB.TABLE.")
@click.option("--to", "to", required=True, help="user:NAME, role:NAME or group:NAME.")
@click.option("--with-grant-option", is_flag=True, help="The grantee may grant the privileges on.")
@_db_option
@_data_dir_option
@click.pass_context
def grant(ctx: click.Context, privileges: str, on: str, to: str, with_grant_option: bool, db: str | None,
          data_dir: str | None) -> None:
    """Grant PRIVILEGES (comma-separated: SELECT, INSERT, UPDATE, DELETE, ALL, CREATE) on an object."""
    obj, (name, kind) = _object(on), _principal(to)
    grants = [m.PrivilegeGrant(obj, name, kind, p.strip(), with_grant_option) for p in privileges.split(",")]
    _run(_catalog(ctx, db, data_dir).grant_privileges, grants)
    click.echo(f"granted {privileges.upper()} on {obj.audit()} to {_shown(name, kind)}")


@click.command()
@click.argument("privileges")
@click.option("--on", "on", required=True, help="global, database:DB or table:DB.TABLE.")
@click.option("--from", "from_", required=True, help="user:NAME, role:NAME or group:NAME.")
@click.option("--grant-option-only", is_flag=True, help="Revoke only the grant option (GRANT OPTION FOR).")
@_db_option
@_data_dir_option
@click.pass_context
def revoke(ctx: click.Context, privileges: str, on: str, from_: str, grant_option_only: bool, db: str | None,
           data_dir: str | None) -> None:
    """Revoke PRIVILEGES (comma-separated) on an object."""
    obj, (name, kind) = _object(on), _principal(from_)
    grants = [m.PrivilegeGrant(obj, name, kind, p.strip()) for p in privileges.split(",")]
    _run(_catalog(ctx, db, data_dir).revoke_privileges, grants, grant_option_only)
    click.echo(f"revoked {privileges.upper()} on {obj.audit()} from {_shown(name, kind)}")


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


@roles.command("grant")
@click.argument("role")
@click.argument("principal")
@click.option("--with-admin-option", is_flag=True, help="The grantee may grant and revoke the role.")
@_db_option
@_data_dir_option
@click.pass_context
def roles_grant(ctx: click.Context, role: str, principal: str, with_admin_option: bool, db: str | None,
                data_dir: str | None) -> None:
    """Grant ROLE to PRINCIPAL (user:NAME, role:NAME or group:NAME)."""
    name, kind = _principal(principal)
    _run(_catalog(ctx, db, data_dir).grant_role, role, name, kind, with_admin_option)
    click.echo(f"role {role.lower()} granted to {_shown(name, kind)}")


@roles.command("revoke")
@click.argument("role")
@click.argument("principal")
@click.option("--admin-option-only", is_flag=True, help="Revoke only the admin option (ADMIN OPTION FOR).")
@_db_option
@_data_dir_option
@click.pass_context
def roles_revoke(ctx: click.Context, role: str, principal: str, admin_option_only: bool, db: str | None,
                 data_dir: str | None) -> None:
    """Revoke ROLE from PRINCIPAL."""
    name, kind = _principal(principal)
    _run(_catalog(ctx, db, data_dir).revoke_role, role, name, kind, admin_option_only)
    click.echo(f"role {role.lower()} revoked from {_shown(name, kind)}")


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
