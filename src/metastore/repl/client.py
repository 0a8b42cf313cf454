"""The metastores replication talks to, through the one Thrift client (metastore.thrift.client).

`connect(uri)` is the only way repl opens one: a bad URI becomes a ReplError when the client is made, and a
metastore that does not answer becomes Unreachable (a ReplError, so the commands print it as they print any
other failure), raised where the client is closed. Hive's exceptions pass through unchanged.

A client opened while a principal is set for the work (core/identity.acting_as: a scheduled policy's run, as its
EXECUTED AS user) acts for that user (MetastoreClient's `user`), so the metastore authorizes what the run does as
that user's, not as the server's or the command's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..core import identity
from ..thrift.client import MetastoreClient, MetastoreUnavailable
from .errors import ReplError, Unreachable


@contextmanager
def connect(uri: str, timeout: float = 120.0) -> Iterator[MetastoreClient]:
    """A client of the metastore at thrift://HOST:PORT, closed on leaving the block."""
    p = identity.current_or_none()
    user = p.name if p is not None and p.method != identity.INTERNAL else None
    try:
        client = MetastoreClient(uri, timeout, user=user)
    except ValueError as e:
        raise ReplError(str(e)) from None
    try:
        yield client
    except MetastoreUnavailable as e:
        raise Unreachable(f"the metastore did not answer: {e}") from None
    finally:
        client.close()
