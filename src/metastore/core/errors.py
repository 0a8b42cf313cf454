"""Errors of the catalog, one per Hive exception type; the wire fronts map them to their protocol."""

from __future__ import annotations

# the longest message a client is sent: a message quotes the client's names, values and locations, which may be
# megabytes (Hive's own messages stay far below)
MAX_MESSAGE = 4096


class CatalogError(Exception):
    """Base of every error the catalog reports to a client; `message` is what the client sees (clipped to
    MAX_MESSAGE characters)."""

    def __init__(self, message: str) -> None:
        if len(message) > MAX_MESSAGE:
            message = message[:MAX_MESSAGE] + "..."
        super().__init__(message)
        self.message = message


class NoSuchObject(CatalogError):
    """Hive's NoSuchObjectException."""


class AlreadyExists(CatalogError):
    """Hive's AlreadyExistsException."""


class InvalidObject(CatalogError):
    """Hive's InvalidObjectException."""


class InvalidOperation(CatalogError):
    """Hive's InvalidOperationException."""


class InvalidInput(CatalogError):
    """Hive's InvalidInputException."""


class MetaError(CatalogError):
    """Hive's MetaException: anything else, including failures of the store."""


class UnknownDB(CatalogError):
    """Hive's UnknownDBException (only a few calls declare it)."""


class UnknownTable(CatalogError):
    """Hive's UnknownTableException (only a few calls declare it)."""


class NoSuchLock(CatalogError):
    """Hive's NoSuchLockException."""


class NoSuchTxn(CatalogError):
    """Hive's NoSuchTxnException."""


class TxnAborted(CatalogError):
    """Hive's TxnAbortedException."""


class TxnOpen(CatalogError):
    """Hive's TxnOpenException."""


class TableModified(MetaError):
    """A compare-and-swap on a table parameter (alter_table's expected_parameter_key/value) found another
    value: a concurrent commit won. A MetaException on the wire, as Hive's; the REST front answers 409."""


class EventsMissing(MetaError):
    """A reader asked for notification events that retention already cleaned from the log (a MetaException)."""


class ConfigValSecurity(CatalogError):
    """Hive's ConfigValSecurityException: a configuration key a client may not read or set."""


class NotAuthenticated(MetaError):
    """The caller could not be authenticated (no, expired or forged credentials): a MetaException on Thrift
    (where the transport refuses such a connection before any call), 401 on REST."""


class AccessDenied(MetaError):
    """The authenticated caller lacks a privilege the call needs: Hive's MetaException "... does not have
    privileges for ...", 403 ForbiddenException on REST. Nothing was changed."""


class ExprUnreadable(MetaError):
    """A serialized Hive expression (get_partitions_by_expr, drops by expression) this server cannot give Hive's
    meaning: get_partitions_by_expr answers so that Hive's client prunes on its own side; a drop answers a
    MetaException, as Hive's server does (core/hive_expr.py)."""
