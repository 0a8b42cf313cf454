"""The one Thrift client of a Hive Metastore at thrift://HOST:PORT, for the services beside the metastore
(notification readers, catalogd, replication, the pipeline, bench set-up), which reach it through its Thrift
API only.

Invariants:
- A URI is parsed once, by `parse_uri`, when the client is made; a bad URI is a ValueError then, never later.
- Connections are opened on first use, one per thread (a client may be shared by a thread pool), and a
  connection is dropped after a transport failure: the next call on that thread reconnects.
- Errors: a transport failure (refused, reset, timeout, a TApplicationException) raises MetastoreUnavailable,
  a ConnectionError; Hive's declared exceptions (hms.NoSuchObjectException, hms.MetaException, ...) pass
  through unchanged, because they are the metastore's answer, not a failure to get one.
- Retrying: with `retry_reads=True`, a read (a call that changes nothing) that fails with MetastoreUnavailable
  is tried once more on a fresh connection, so a metastore restart or an idle-timeout close does not surface.
  Writes are never retried here: the first attempt may have committed before its answer was lost.
- `get_next_notification` declares no exceptions, so the metastore reports cleaned events as a
  TApplicationException's text; `next_notification` alone reads that text and raises core EventsMissing.
- TLS: a client connects over TLS with its `tls` context, or, when made without one, with the process's
  (`use_tls`: the composition root sets it from the settings' hive.metastore.use.SSL and truststore, for every
  client a command makes: catalogd, repl, the relay's reader, the scheduler); `tls=False` is plain whatever
  the process says. A server that is not TLS, or a certificate the context does not trust, is
  MetastoreUnavailable, as any failed connect.
- Acting for a user (`user=`): a connection is opened for that user, as Hive's client does for a proxy user:
  over Kerberos the SASL authorization id names it (the server accepts it when the ticket's principal may
  impersonate the user: hadoop.proxyuser.*, or the server's own principal), without SASL the client claims it
  with set_ugi right after connecting (believed only by a server that authenticates no one). Replication's
  scheduled policies run so, as their EXECUTED AS user.
- `forward(name, *args)` is for fronts that pass any Thrift call through by the name a client sent (catalogd's
  pass-through); everything else uses the typed methods.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any, Literal, Self

from ..core.errors import EventsMissing
from . import hms

# Hive's exceptions: the metastore's answers, not failures of the connection.
HIVE_ERRORS: tuple[type[BaseException], ...] = tuple(getattr(hms, n) for n in (
    "MetaException", "NoSuchObjectException", "InvalidObjectException", "InvalidOperationException",
    "AlreadyExistsException", "UnknownDBException", "UnknownTableException", "InvalidInputException",
    "NoSuchTxnException", "TxnAbortedException", "NoSuchLockException", "TxnOpenException",
    "UnknownPartitionException", "InvalidPartitionException", "ConfigValSecurityException") if hasattr(hms, n))

# The server's text for cleaned events (catalog/service.py next_notifications); it arrives as a
# TApplicationException because get_next_notification declares no exception.
_EVENTS_MISSING = "events missing"

# Calls that change nothing: `forward` retries these (with retry_reads) by their name.
READ_PREFIXES = ("get_", "getMeta", "getName", "getVersion", "getStatus", "getCounter", "aliveSince",
                 "show_locks", "check_lock", "partition_name_", "show_compact")


# The process's TLS for clients made without a context of their own: a factory, built on first use (so a command
# that never connects is not stopped by its truststore), or None for plain connections.
_tls_factory: Callable[[], ssl.SSLContext] | None = None
_tls_context: ssl.SSLContext | None = None
_tls_lock = threading.Lock()


def use_tls(factory: Callable[[], ssl.SSLContext] | None) -> None:
    """Set what clients made without a `tls` context connect with: a factory of the TLS context (called once,
    by the first such client; its errors, such as a SettingsError, surface there), or None for plain TCP."""
    global _tls_factory, _tls_context
    with _tls_lock:
        _tls_factory, _tls_context = factory, None


def default_tls() -> ssl.SSLContext | None:
    """The process's client TLS context (see use_tls), or None."""
    global _tls_context
    with _tls_lock:
        if _tls_factory is not None and _tls_context is None:
            _tls_context = _tls_factory()
        return _tls_context


# Whether clients made without `kerberos=` authenticate with Kerberos (SASL GSSAPI): the composition root sets it
# from the settings' hive.metastore.sasl.enabled; and with whose key: the ticket cache's (None), or a
# (principal, keytab) pair (`serve`: its own principal, for the scheduler's connections to itself)
_kerberos = False
_keytab: tuple[str, str] | None = None


def use_kerberos(on: bool, keytab: tuple[str, str] | None = None) -> None:
    global _kerberos, _keytab
    _kerberos, _keytab = on, keytab


def _sasl_factories(host: str, authzid: str | None = None) -> dict[str, Any]:
    from thriftpy2.protocol.binary import TBinaryProtocolFactory  # the pure one: the SASL transport is Python

    from .sasl import GssapiTransportFactory

    return {"trans_factory": GssapiTransportFactory(host, authzid=authzid, keytab=_keytab),
            "proto_factory": TBinaryProtocolFactory()}


class MetastoreUnavailable(ConnectionError):
    """The metastore did not answer (refused, reset, timed out, or failed outside Hive's exceptions)."""


def parse_uri(uri: str) -> tuple[str, int]:
    """(host, port) of thrift://HOST[:PORT]; ValueError for anything else."""
    try:
        p = urllib.parse.urlsplit(uri)
        port = p.port
    except ValueError:
        raise ValueError(f"a metastore is named by a thrift://HOST:PORT URI, not {uri!r}") from None
    if p.scheme != "thrift" or p.path not in ("", "/") or p.query or p.fragment:
        raise ValueError(f"a metastore is named by a thrift://HOST:PORT URI, not {uri!r}")
    return p.hostname or "127.0.0.1", port or 9083


def _tls_failure(e: BaseException) -> str:
    """Why a TLS connect failed (thriftpy2's error names only the address; the SSLError is its context)."""
    cause = e.__cause__ or e.__context__
    if isinstance(cause, ssl.SSLError):
        return f" (TLS: {cause.reason or type(cause).__name__}"\
               f"{': ' + cause.verify_message if isinstance(cause, ssl.SSLCertVerificationError) else ''})"
    return ""


def error_text(e: BaseException) -> str:
    """The message of a Hive exception or TApplicationException (their str() is often empty)."""
    return str(getattr(e, "message", None) or e)


def hive_message(e: BaseException) -> str:
    """'NoSuchObjectException: text' for a log line or an error a user reads."""
    return f"{type(e).__name__}: {error_text(e)}"


class MetastoreClient:
    """Typed calls on the metastore at `uri` (thrift://HOST[:PORT]); safe to share between threads."""

    def __init__(self, uri: str, timeout: float = 60.0, retry_reads: bool = False,
                 tls: ssl.SSLContext | Literal[False] | None = None, kerberos: bool | None = None,
                 user: str | None = None) -> None:
        self.host, self.port = parse_uri(uri)
        self.user = user or None  # the user the connections act for (see the module's doc), or None: its own
        # SASL GSSAPI with the ticket cache's credentials (thrift/sasl.py); None: the process's (use_kerberos)
        self.kerberos = _kerberos if kerberos is None else kerberos
        # None: the process's (use_tls); False: plain TCP
        self.tls: ssl.SSLContext | None = default_tls() if tls is None else (tls or None)
        self.uri = f"thrift://{self.host}:{self.port}"
        self.timeout = timeout
        self.retry_reads = retry_reads
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: list[tuple[threading.Thread, Any]] = []  # every thread's connection, with its thread

    # -- connections ----------------------------------------------------------------------------------
    def _connected(self) -> Any:
        c = getattr(self._local, "client", None)
        if c is None:
            from thriftpy2.rpc import make_client

            try:
                c = make_client(hms.ThriftHiveMetastore, self.host, self.port, timeout=int(self.timeout * 1000),
                                ssl_context=self.tls,
                                **_sasl_factories(self.host, self.user) if self.kerberos else {})
                if self.user is not None and not self.kerberos:
                    try:
                        c.set_ugi(self.user, [])
                    except BaseException:
                        _close_quietly(c)
                        raise
            except Exception as e:  # noqa: BLE001 - thriftpy2 raises transport errors of its own
                raise MetastoreUnavailable(f"{self.uri}: connect: {type(e).__name__}: {error_text(e)}"
                                           f"{_tls_failure(e)}") from None
            self._local.client = c
            with self._lock:
                # a thread that ended took its thread-local with it: its connection is closed here, not leaked
                gone = [x for t, x in self._open if not t.is_alive()]
                self._open = [(t, x) for t, x in self._open if t.is_alive()]
                self._open.append((threading.current_thread(), c))
            for x in gone:
                _close_quietly(x)
        return c

    def _drop(self) -> None:
        c = getattr(self._local, "client", None)
        self._local.client = None
        if c is not None:
            with self._lock:
                self._open = [(t, x) for t, x in self._open if x is not c]
            _close_quietly(c)

    def _call(self, fn: str, *args: Any, read: bool = False) -> Any:
        attempts = 2 if read and self.retry_reads else 1
        for attempt in range(attempts):
            try:
                return getattr(self._connected(), fn)(*args)
            except HIVE_ERRORS:
                raise
            except MetastoreUnavailable:
                if attempt + 1 == attempts:
                    raise
            except Exception as e:  # noqa: BLE001 - thriftpy2 raises transport errors of its own
                self._drop()
                if attempt + 1 == attempts:
                    raise MetastoreUnavailable(f"{self.uri}: {fn}: {type(e).__name__}: {error_text(e)}") from None
        raise AssertionError("unreachable")

    def _found(self, fn: str, *args: Any) -> Any:
        """A read's answer, or None when the metastore answers that the object does not exist."""
        try:
            return self._call(fn, *args, read=True)
        except hms.NoSuchObjectException:
            return None

    def forward(self, fn: str, *args: Any) -> Any:
        """Any Thrift call by name, for a front that passes calls through; reads retried as `_call` does."""
        if fn.startswith("_") or not hasattr(hms.ThriftHiveMetastore, fn + "_args"):
            raise AttributeError(f"the metastore has no call {fn!r}")
        return self._call(fn, *args, read=fn.startswith(READ_PREFIXES))

    def close(self) -> None:
        """Closes every thread's connection; the client stays usable (the next call reconnects)."""
        with self._lock:
            open_, self._open = self._open, []
        self._local = threading.local()
        for _, c in open_:
            _close_quietly(c)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- notifications --------------------------------------------------------------------------------
    def next_notification(self, after: int, limit: int) -> list[hms.NotificationEvent]:
        """Events with ids above `after`, at most `limit`, in id order; EventsMissing if some were cleaned."""
        req = hms.NotificationEventRequest(lastEvent=after, maxEvents=limit)
        try:
            resp = self._call("get_next_notification", req, read=True)
        except (MetastoreUnavailable, hms.MetaException) as e:
            text = error_text(e)
            if _EVENTS_MISSING in text:
                raise EventsMissing(text[text.index(_EVENTS_MISSING):]) from None
            raise
        return list(resp.events or [])

    def current_event_id(self) -> int:
        return int(self._call("get_current_notificationEventId", read=True).eventId)

    def fire_listener_event(self, req: hms.FireEventRequest) -> list[int]:
        """The ids of the events written for a FireEventRequest."""
        return [int(i) for i in (self._call("fire_listener_event", req).eventIds or [])]

    # -- databases ------------------------------------------------------------------------------------
    def get_all_databases(self) -> list[str]:
        return list(self._call("get_all_databases", read=True) or [])

    def get_database(self, name: str) -> hms.Database:
        return self._call("get_database", name, read=True)

    def find_database(self, name: str) -> hms.Database | None:
        """The database, or None when it does not exist."""
        return self._found("get_database", name)

    def create_database(self, db: hms.Database) -> None:
        self._call("create_database", db)

    def alter_database(self, name: str, db: hms.Database) -> None:
        self._call("alter_database", name, db)

    def drop_database(self, name: str, delete_data: bool = True, cascade: bool = False) -> None:
        self._call("drop_database", name, delete_data, cascade)

    # -- tables ---------------------------------------------------------------------------------------
    def get_all_tables(self, db: str) -> list[str]:
        return list(self._call("get_all_tables", db, read=True) or [])

    def get_tables(self, db: str, pattern: str) -> list[str]:
        return list(self._call("get_tables", db, pattern, read=True) or [])

    def get_table(self, db: str, name: str) -> hms.Table:
        return self._call("get_table", db, name, read=True)

    def find_table(self, db: str, name: str) -> hms.Table | None:
        """The table, or None when it (or its database) does not exist."""
        return self._found("get_table", db, name)

    def get_table_objects_by_name(self, db: str, names: list[str]) -> list[hms.Table]:
        return list(self._call("get_table_objects_by_name", db, names, read=True) or [])

    def create_table(self, table: hms.Table, context: hms.EnvironmentContext | None = None) -> None:
        if context is None:
            self._call("create_table", table)
        else:
            self._call("create_table_with_environment_context", table, context)

    def alter_table(self, db: str, name: str, table: hms.Table, context: hms.EnvironmentContext | None = None) -> None:
        if context is None:
            self._call("alter_table", db, name, table)
        else:
            self._call("alter_table_with_environment_context", db, name, table, context)

    def drop_table(self, db: str, name: str, delete_data: bool = True) -> None:
        self._call("drop_table", db, name, delete_data)

    # -- partitions -----------------------------------------------------------------------------------
    def get_partition_names(self, db: str, table: str, limit: int = -1) -> list[str]:
        return list(self._call("get_partition_names", db, table, limit, read=True) or [])

    def get_partitions(self, db: str, table: str, limit: int = -1) -> list[hms.Partition]:
        return list(self._call("get_partitions", db, table, limit, read=True) or [])

    def get_partitions_by_filter(self, db: str, table: str, expr: str, limit: int = -1) -> list[hms.Partition]:
        """Partitions matching a filter in Hive's partition filter language (day >= "2024-01-01" and ...)."""
        return list(self._call("get_partitions_by_filter", db, table, expr, limit, read=True) or [])

    def get_partition(self, db: str, table: str, values: list[str]) -> hms.Partition:
        return self._call("get_partition", db, table, values, read=True)

    def get_partition_by_name(self, db: str, table: str, name: str) -> hms.Partition:
        return self._call("get_partition_by_name", db, table, name, read=True)

    def get_partitions_by_names(self, db: str, table: str, names: list[str]) -> list[hms.Partition]:
        return list(self._call("get_partitions_by_names", db, table, names, read=True) or [])

    def add_partition(self, part: hms.Partition) -> hms.Partition:
        return self._call("add_partition", part)

    def add_partitions(self, parts: list[hms.Partition]) -> int:
        """The number of partitions added (all or none)."""
        return int(self._call("add_partitions", parts) or 0)

    def add_partitions_req(self, req: hms.AddPartitionsRequest) -> list[hms.Partition]:
        """An AddPartitionsRequest (ifNotExists, needResult); the partitions added, when asked for."""
        return list(self._call("add_partitions_req", req).partitions or [])

    def alter_partitions(self, db: str, table: str, parts: list[hms.Partition],
                         context: hms.EnvironmentContext | None = None) -> None:
        if context is None:
            self._call("alter_partitions", db, table, parts)
        else:
            self._call("alter_partitions_with_environment_context", db, table, parts, context)

    def alter_partition(self, db: str, table: str, part: hms.Partition, context: hms.EnvironmentContext | None = None
                        ) -> None:
        if context is None:
            self._call("alter_partition", db, table, part)
        else:
            self._call("alter_partition_with_environment_context", db, table, part, context)

    def drop_partition(self, db: str, table: str, values: list[str], delete_data: bool = True) -> bool:
        return bool(self._call("drop_partition", db, table, values, delete_data))

    def drop_partitions_req(self, req: hms.DropPartitionsRequest) -> list[hms.Partition]:
        """A DropPartitionsRequest; the partitions dropped, when asked for."""
        return list(self._call("drop_partitions_req", req).partitions or [])

    # -- functions ------------------------------------------------------------------------------------
    def get_functions(self, db: str, pattern: str = "*") -> list[str]:
        return list(self._call("get_functions", db, pattern, read=True) or [])

    def get_function(self, db: str, name: str) -> hms.Function:
        return self._call("get_function", db, name, read=True)

    def find_function(self, db: str, name: str) -> hms.Function | None:
        """The function, or None when it does not exist."""
        return self._found("get_function", db, name)

    def create_function(self, fn: hms.Function) -> None:
        self._call("create_function", fn)

    def alter_function(self, db: str, name: str, fn: hms.Function) -> None:
        self._call("alter_function", db, name, fn)

    def drop_function(self, db: str, name: str) -> None:
        self._call("drop_function", db, name)

    # -- locks ----------------------------------------------------------------------------------------
    def lock(self, req: hms.LockRequest) -> hms.LockResponse:
        return self._call("lock", req)

    def check_lock(self, lockid: int) -> hms.LockResponse:
        return self._call("check_lock", hms.CheckLockRequest(lockid=lockid), read=True)

    def unlock(self, lockid: int) -> None:
        self._call("unlock", hms.UnlockRequest(lockid=lockid))


def _close_quietly(c: Any) -> None:
    # closing a broken connection may fail again; it is gone either way
    with contextlib.suppress(Exception):
        c.close()
