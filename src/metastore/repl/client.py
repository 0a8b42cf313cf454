"""The metastores replication talks to, through the one Thrift client (metastore.thrift.client).

`connect(uri)` is the only way repl opens one: a bad URI becomes a ReplError when the client is made, and a
metastore that does not answer becomes Unreachable (a ReplError, so the commands print it as they print any
other failure), raised where the client is closed. Hive's exceptions pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..thrift.client import MetastoreClient, MetastoreUnavailable
from .errors import ReplError, Unreachable


@contextmanager
def connect(uri: str, timeout: float = 120.0) -> Iterator[MetastoreClient]:
    """A client of the metastore at thrift://HOST:PORT, closed on leaving the block."""
    try:
        client = MetastoreClient(uri, timeout)
    except ValueError as e:
        raise ReplError(str(e)) from None
    try:
        yield client
    except MetastoreUnavailable as e:
        raise Unreachable(f"the metastore did not answer: {e}") from None
    finally:
        client.close()
