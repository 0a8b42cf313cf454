"""A Thrift client of a Hive Metastore at thrift://HOST:PORT, for the services beside the metastore
(notification readers, catalogd, replication), which reach it through its Thrift API only."""

from __future__ import annotations

import urllib.parse
from typing import Any

from . import hms

# Hive's exceptions: the metastore's answers, not failures of the connection.
HIVE_ERRORS: tuple[type[BaseException], ...] = tuple(getattr(hms, n) for n in (
    "MetaException", "NoSuchObjectException", "InvalidObjectException", "InvalidOperationException",
    "AlreadyExistsException", "UnknownDBException", "UnknownTableException", "InvalidInputException",
    "NoSuchTxnException", "TxnAbortedException", "NoSuchLockException", "TxnOpenException",
    "UnknownPartitionException", "InvalidPartitionException") if hasattr(hms, n))


def parse_uri(uri: str) -> tuple[str, int]:
    """(host, port) of thrift://HOST[:PORT]; ValueError for anything else."""
    p = urllib.parse.urlsplit(uri)
    if p.scheme != "thrift":
        raise ValueError(f"a metastore is named by a thrift://HOST:PORT URI, not {uri!r}")
    return p.hostname or "127.0.0.1", p.port or 9083


def error_text(e: BaseException) -> str:
    return str(getattr(e, "message", None) or e)


class MetastoreClient:
    """One connection, opened on first use and dropped after a transport failure (the next call reconnects).
    Not for several threads at once. Subclasses turn transport failures into their own errors (`failure`)."""

    def __init__(self, uri: str, timeout: float = 60.0) -> None:
        self.host, self.port = parse_uri(uri)
        self.uri = f"thrift://{self.host}:{self.port}"
        self.timeout = timeout
        self._client: Any = None

    def failure(self, fn: str, e: BaseException) -> BaseException:
        """The error raised when a call fails other than with one of Hive's exceptions."""
        return ConnectionError(f"{self.uri}: {fn}: {type(e).__name__}: {error_text(e)}")

    def _connected(self) -> Any:
        if self._client is None:
            from thriftpy2.rpc import make_client

            self._client = make_client(hms.ThriftHiveMetastore, self.host, self.port, timeout=int(self.timeout * 1000))
        return self._client

    def call(self, fn: str, *args: Any) -> Any:
        try:
            return getattr(self._connected(), fn)(*args)
        except HIVE_ERRORS:
            raise
        except Exception as e:  # noqa: BLE001 - thriftpy2 raises transport errors of its own
            self.close()
            raise self.failure(fn, e) from None

    def __getattr__(self, fn: str) -> Any:
        if fn.startswith("_"):
            raise AttributeError(fn)
        return lambda *args: self.call(fn, *args)

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except Exception:  # noqa: BLE001
                pass
            self._client = None

    def __enter__(self) -> MetastoreClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
