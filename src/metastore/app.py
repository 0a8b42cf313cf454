"""The composition root: settings -> store -> catalog -> fronts, relay, cleaner, scheduler, catalogd.

Invariants:
- This is the one place that wires the layers together. Every command (`metastore serve`, `relay`, `events`,
  `repl`, `sql`, `schema`, `catalogd`, `pipeline`) gets its settings from `command_settings` and its parts from
  the functions here; no command builds a Catalog, a store engine or a server itself.
- Everything is built from one typed Settings (metastore.config), parsed and checked once, before anything
  starts: an invalid value ends a command with the message naming the key and its source.
- `Server` binds every listening socket in the parent process, before it forks its workers; each worker builds
  its own catalog (store connections are not shared across fork) and adopts the sockets.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .config import Settings, SettingsError, load
from .core import filters

if TYPE_CHECKING:
    import socket
    import ssl

    import click

    from .catalog.audit import AuditLog
    from .catalog.locations import LocationPolicy
    from .catalog.service import Catalog
    from .catalogd.service import CatalogdService
    from .notify.background import Notifications
    from .notify.relay import Relay
    from .repl.policies import Scheduler
    from .rest.oauth import OAuth2
    from .rest.server import RestServer
    from .server.thrift_server import Negotiate, ThriftServer
    from .server.workers import FrontLimits
    from .store.engine import StoreEngine
    from .store.scheduled import ScheduledStore
    from .store.store import Store

log = logging.getLogger(__name__)

__all__ = ["Settings", "SettingsError", "command_settings", "load_settings", "open_engine", "open_store",
           "location_policy", "open_catalog", "build_catalog", "thrift_server", "rest_server", "Server",
           "register_relay", "start_notifications", "start_scheduler", "build_relay", "scheduled_store",
           "catalogd_service", "pipeline_state"]


# ---- settings ---------------------------------------------------------------------------------------------

def load_settings(config_file: str | None = None, env: dict[str, str] | None = None,
                  **overrides: object) -> Settings:
    """The settings: defaults < file (config_file or $METASTORE_CONFIG) < environment < `overrides` (flags)."""
    return load(config_file, env, **overrides)


def command_settings(ctx: click.Context, **overrides: object) -> Settings:
    """A command's settings, with the nearest --config given (the command's own, a group's, or `metastore
    --config`); an invalid value ends the command with the message naming key, value and source."""
    import click

    config_file = None
    c: click.Context | None = ctx
    while c is not None and config_file is None:
        config_file = c.params.get("config_file")
        if config_file is None and isinstance(c.obj, dict):
            config_file = c.obj.get("config")
        c = c.parent
    try:
        settings = load(config_file, None, **overrides)
    except SettingsError as e:
        raise click.ClickException(str(e)) from None
    client_tls(settings)
    return settings


def client_tls(settings: Settings) -> None:
    """The command's Thrift clients (catalogd, repl, the relay's reader, the scheduler) connect over TLS when
    the settings say hive.metastore.use.SSL, trusting the truststore (server/tls.py client_context; built when
    the first client is made)."""
    from .thrift.client import use_tls

    if settings.use_ssl:
        from .server.tls import client_context

        use_tls(lambda: client_context(settings))
    else:
        use_tls(None)
    from .thrift.client import use_kerberos

    use_kerberos(settings.sasl)  # and Kerberos (SASL GSSAPI, the ticket cache's) when hive.metastore.sasl.enabled


# ---- the store and the catalog ----------------------------------------------------------------------------

def open_engine(settings: Settings) -> StoreEngine:
    """An engine on the settings' store, its data directory made for the embedded default."""
    from .store.engine import create_engine

    if settings.db is None:
        os.makedirs(settings.data_dir, exist_ok=True)
    return create_engine(settings.db_url, pool_size=settings.pool_size)


def open_store(settings: Settings, create_if_empty: bool = True) -> Store:
    """The store at settings.db_url, at this code's schema version.

    An empty database gets the schema (so the embedded default needs no set-up step); a database at any
    other version is refused with SchemaVersionError.
    """
    from .store import migrate
    from .store.engine import describe as describe_store
    from .store.engine import seed_sqlite_stats
    from .store.store import Store

    engine = open_engine(settings)
    if create_if_empty and migrate.upgrade(engine, only_if_empty=True):
        log.info("empty store at %s: created the schema", describe_store(engine))
    migrate.check(engine)
    seed_sqlite_stats(engine)
    return Store(engine)


def location_policy(settings: Settings) -> LocationPolicy:
    """Where the server may act: the warehouse and the other allowed roots, the read roots, and the store's
    own files and data directory, which no managed location may contain."""
    from .catalog.locations import LocationPolicy, split_roots
    from .store.engine import store_files

    roots = [settings.warehouse_dir] + split_roots(settings.allowed_roots)
    protected = [os.path.abspath(settings.data_dir)] + store_files(settings.db_url)
    return LocationPolicy(roots, split_roots(settings.read_roots), protected)


def open_catalog(settings: Settings) -> Catalog:
    """The catalog on the settings' store, configured as the server's (warehouse, location policy, timeouts,
    limits), without the server's start-up duties: what a command-line tool works on."""
    from .catalog.service import Catalog
    from .catalog.warehouse import Warehouse

    catalog = Catalog(open_store(settings), Warehouse(settings.warehouse_dir),
                      stats_autogather=settings.stats_autogather, txn_timeout=settings.txn_timeout,
                      locations=location_policy(settings), authorization=settings.authorization,
                      admin_users=[u.strip() for u in settings.admin_users.split(",") if u.strip()])
    catalog.locks.max_open_batch = settings.txn_max_open_batch
    filters.set_limits(settings.filter_max_length, settings.filter_max_in_list)
    return catalog


def build_catalog(settings: Settings) -> Catalog:
    """The server's catalog: open_catalog, then what a server does once at start."""
    catalog = open_catalog(settings)
    catalog.locks.release_gone_holders()  # a crashed server's REST commit locks on this machine, now
    catalog.ensure_default_database()
    catalog.privileges.bootstrap()  # the public and admin roles, and admin_users in admin
    return catalog


# ---- the fronts -------------------------------------------------------------------------------------------

def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def security_summary(settings: Settings) -> str:
    """One line for the startup banner: how callers are authenticated and authorized."""
    s = settings
    thrift = "Kerberos (SASL)" if s.sasl else "none (set_ugi names are believed)"
    if s.use_ssl:
        thrift += " over TLS"
    rest = f", REST {s.rest_auth}" if s.rest else ""
    where = " (bound to loopback: only this host can connect)" if _loopback(s.host) else ""
    return f"authentication: Thrift {thrift}{rest}{where}; authorization: {s.authorization}"


@dataclass
class TransportSecurity:
    """The Thrift front's TLS context and SASL server, built once from the settings before anything serves
    (a configured setting that cannot be honoured stops the server there: never silently open)."""

    tls: ssl.SSLContext | None = None
    sasl: Negotiate | None = None
    kerberos_principal: str | None = None  # the server's own principal (its keytab's), with SASL


def transport_security(settings: Settings) -> TransportSecurity:
    out = TransportSecurity()
    if settings.use_ssl:
        from .server.tls import server_context

        out.tls = server_context(settings)
    if settings.sasl:
        from .server.sasl import negotiator

        neg = negotiator(settings)
        out.sasl, out.kerberos_principal = neg, neg.principal
    return out


def thrift_server(catalog: Catalog, settings: Settings, limits: FrontLimits,
                  security: TransportSecurity | None = None) -> ThriftServer:
    """The Hive Metastore Thrift front on `catalog` (not yet listening: bind() or adopt())."""
    from .server.handler import Handler
    from .server.serialized import SerializedReads
    from .server.thrift_server import ThriftServer

    security = security if security is not None else transport_security(settings)
    if security.sasl is not None:
        from .server.sasl import Negotiator

        if isinstance(security.sasl, Negotiator):  # DIGEST-MD5's tokens: on this process's catalog's store
            security.sasl.use_store(catalog.store)
    audit = audit_log(settings)
    # an audited call goes through the handler: the ready-made answers would skip its line
    fast = SerializedReads(catalog).methods() if audit is None else {}
    return ThriftServer(Handler(catalog, settings.hive_config(), audit), settings.host, settings.port,
                        max_message_bytes=settings.max_message_bytes, limits=limits,
                        fast=fast, connection_scope=catalog.connection_scope,
                        tls=security.tls, sasl=security.sasl)


def rest_server(catalog: Catalog, settings: Settings, limits: FrontLimits) -> RestServer:
    """The Iceberg REST catalog front on `catalog` (not yet listening: bind() or adopt())."""
    from .rest.server import RestServer

    return RestServer(catalog, settings.host, settings.rest_port, limits, settings.max_request_bytes,
                      audit=audit_log(settings), auth=rest_oauth2(settings))


def rest_token_key_path(settings: Settings) -> str:
    return settings.rest_token_key or os.path.join(settings.data_dir, "rest-token.key")


def rest_clients_path(settings: Settings) -> str:
    return settings.rest_clients or os.path.join(settings.data_dir, "rest-clients.toml")


def rest_oauth2(settings: Settings) -> OAuth2 | None:
    """The REST front's OAuth2 (rest_auth = oauth2): its signing key (made when absent), its clients, the
    external issuer. MissingExtra without the oauth extra; SettingsError when the settings cannot be honoured."""
    if settings.rest_auth != "oauth2":
        return None
    from .extras import require

    what = "OAuth2 on the REST front (rest_auth = oauth2)"
    require("jwt", "oauth", what)
    require("cryptography", "oauth", what)
    from .rest.oauth import build

    try:
        return build(rest_token_key_path(settings), settings.rest_token_lifetime, rest_clients_path(settings),
                     settings.rest_oidc_issuer, settings.rest_oidc_audience, settings.rest_oidc_jwks,
                     settings.rest_oidc_user_claim)
    except ValueError as e:
        raise SettingsError(f"settings: REST authentication: {e}") from None


_AUDIT: dict[str, AuditLog] = {}


def audit_log(settings: Settings) -> AuditLog | None:
    """The process's audit log of `settings.audit_log` (one per path, shared by the fronts), or None."""
    from .catalog.audit import AuditLog

    path = settings.audit_log
    if not path:
        return None
    if path not in _AUDIT:
        _AUDIT[path] = AuditLog(path)
    return _AUDIT[path]


class Server:
    """`metastore serve`: the Thrift front and, unless it is off, the REST front, on one catalog per process;
    the WAL checkpointer, the log's cleaner, the relay (with a bus) and the replication scheduler beside them.

    open() does everything that can fail before serving (limits, the store's schema, the sockets); run()
    serves until SIGTERM/SIGINT, in this process or in `settings.workers` worker processes."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.catalog: Catalog | None = None
        self.limits: FrontLimits | None = None
        self.thrift_socket: socket.socket | None = None
        self.rest: RestServer | None = None
        self.warnings: list[str] = []  # what open() chose to do without (shown by the command)
        self.security: TransportSecurity | None = None

    @property
    def thrift_url(self) -> str:
        assert self.thrift_socket is not None, "open() first"
        return f"thrift://{self.settings.host}:{self.thrift_socket.getsockname()[1]}"

    @property
    def store_url(self) -> str:
        assert self.catalog is not None, "open() first"
        return self.catalog.store.describe()

    def open(self) -> Server:
        """Check the limits and the store, register the relay's cursor, listen. ValueError (limits),
        SchemaVersionError (the store), OSError (a port) say what is wrong."""
        from .notify.background import relay_enabled, require_bus_client
        from .server.workers import front_limits, listen, small_thread_stacks

        s = self.settings
        self.security = transport_security(s)  # SettingsError: configured security that cannot be honoured
        if self.security.kerberos_principal is not None:
            from .thrift.client import use_kerberos

            # the server's own clients (its scheduler's connections to itself) authenticate with its keytab: its
            # principal may act for a policy's EXECUTED AS user (server/proxyusers.py)
            use_kerberos(True, (self.security.kerberos_principal, s.kerberos_keytab))
        try:
            audit_log(s)
        except OSError as e:
            raise OSError(f"cannot open the audit log {s.audit_log}: {e.strerror}") from None
        open_fronts = [front for front, unauthenticated in (("Thrift", not s.sasl),
                                                             ("REST", s.rest and s.rest_auth == "none"))
                       if unauthenticated]
        if open_fronts and not _loopback(s.host):
            self.warnings.append(f"listening on {s.host} without authentication on the {' and '.join(open_fronts)} "
                                 "front: anyone who reaches the port acts as any user (README \"Security\")")
        if relay_enabled(s):  # the bus's client library, before anything is built
            require_bus_client(s.bus)
        self.limits = front_limits(s, fronts=2 if s.rest else 1)  # the bounds of both fronts, in each process
        small_thread_stacks()  # a connection costs a thread: thousands of them reserve 1 MiB each, not 8
        self.catalog = build_catalog(s)  # schema check and default database, once, before any worker starts
        register_relay(self.catalog, s)
        if s.rest:  # its socket is bound here, served by every worker (see metastore.rest)
            rest = rest_server(self.catalog, s, self.limits)
            try:
                rest.bind()
                self.rest = rest
            except OSError as e:
                msg = (f"cannot listen on {s.host}:{s.rest_port} for the Iceberg REST catalog: {e} "
                       "(--rest-port N, or --no-rest)")
                if s.explicit("rest_port") or s.rest_port != Settings.rest_port:
                    raise OSError(msg) from None
                # the default port taken (another server on this host): serve Thrift alone rather than not at all
                self.warnings.append(f"{msg}; serving without it")
        try:  # after the REST socket: a client that finds the Thrift port open finds both
            self.thrift_socket = listen(s.host, s.port)
        except OSError as e:
            raise OSError(f"cannot listen on {s.host}:{s.port} for the Thrift API: {e} (--port N)") from None
        return self

    def run(self) -> None:
        """Serve until SIGTERM (or Ctrl-C)."""
        assert self.catalog is not None and self.thrift_socket is not None and self.limits is not None, "open()"
        s = self.settings
        if s.workers <= 1:
            server = self._start_process(self.catalog, first=True)

            def stop(*_: object) -> None:
                server.close()
                sys.exit(0)

            signal.signal(signal.SIGTERM, stop)
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                server.close()
            return
        # the modules every worker runs, imported once here: their pages stay shared with the workers after the
        # fork (imported in each worker, they cost each its own copy: ~3.8 MiB a worker)
        from .server import handler, serialized, thrift_server  # noqa: F401
        from .server.workers import supervise

        self.catalog.store.engine.dispose()  # connections are not shared across fork
        supervise(s.workers, lambda i: self._start_process(build_catalog(s), first=i == 0).serve_forever())

    def _start_process(self, catalog: Catalog, first: bool) -> ThriftServer:
        """This process's fronts on `catalog` and its background threads; the Thrift front, to serve."""
        from .store.engine import start_wal_checkpointer

        assert self.thrift_socket is not None and self.limits is not None
        start_wal_checkpointer(catalog.store.engine)  # one per process: a PASSIVE checkpoint never waits
        server = thrift_server(catalog, self.settings, self.limits, self.security)
        server.adopt(self.thrift_socket)
        if self.rest is not None:
            rest = self.rest
            if catalog is not self.catalog:  # a worker: its own REST front on the shared socket
                rest = rest_server(catalog, self.settings, self.limits)
                rest.adopt(self.rest.socket)
            rest.start()
        if first:  # one relay, one cleaner and one scheduler for the whole server
            start_notifications(catalog, self.settings, self.thrift_url)
            start_scheduler(catalog, self.thrift_url)
        return server


# ---- notifications ----------------------------------------------------------------------------------------

def register_relay(catalog: Catalog, settings: Settings) -> None:
    from .notify.background import register_relay as register

    register(catalog, settings)


def start_notifications(catalog: Catalog, settings: Settings, server_url: str) -> Notifications:
    """Beside the Thrift front: the notification log's cleaner, and the relay to the bus when one is set."""
    from .notify.background import start_notifications as start

    n = start(catalog, settings, server_url)
    if n.relay is not None:
        log.info("notifications: relaying the log to %s", n.relay.broker.describe())
    return n


def build_relay(settings: Settings, catalog: Catalog, name: str, start_at: int | None = None,
                server_url: str | None = None, **options: Any) -> Relay:
    """A relay (`metastore relay`) of `catalog`'s log to the settings' bus, under cursor `name`."""
    from .notify.background import hcat_messages, require_bus_client
    from .notify.brokers import open_broker
    from .notify.relay import Relay

    assert settings.bus is not None
    require_bus_client(settings.bus)
    messages = hcat_messages(settings, server_url or f"thrift://{settings.host}:{settings.port}")
    return Relay(catalog, open_broker(settings.bus), messages, name=name, start_at=start_at, **options)


# ---- replication --------------------------------------------------------------------------------------------

def start_scheduler(catalog: Catalog, server_url: str) -> Scheduler:
    """The scheduler of replication policies, on the server's own store."""
    from .repl.policies import start_scheduler as start

    return start(catalog, server_url)


def scheduled_store(settings: Settings) -> ScheduledStore:
    """The scheduled queries and replication metrics of the settings' store (`metastore sql`)."""
    from .store.scheduled import ScheduledStore

    return ScheduledStore.of(open_store(settings))


# ---- catalogd and the pipeline --------------------------------------------------------------------------

def catalogd_service(settings: Settings, host: str, port: int, **options: Any) -> CatalogdService:
    """catalogd on the settings' metastore (settings.metastore_uri), with the metastore fronts' bounds, and its
    Thrift front on TLS when the settings say hive.metastore.use.SSL, with the metastore's keystore (SettingsError
    when it cannot be had: never served in the clear instead)."""
    from .catalogd.service import CatalogdService
    from .server.workers import front_limits

    tls = None
    if settings.use_ssl:
        from .server.tls import server_context

        tls = server_context(settings)
    return CatalogdService(settings.metastore_uri, host=host, port=port,
                           limits=front_limits(settings, fronts=2),
                           max_message_bytes=settings.max_message_bytes, tls=tls, **options)


def pipeline_state(settings: Settings) -> str:
    """The default state file of a pipeline run beside this metastore."""
    return os.path.join(settings.data_dir, "pipeline", "pipeline.sqlite")
