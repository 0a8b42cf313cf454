"""A Thrift client of a metastore (source or target), with Hive's exceptions turned into readable errors."""

from __future__ import annotations

from typing import Any

from ..thrift import hms
from ..thrift.client import HIVE_ERRORS, MetastoreClient, error_text
from .errors import ReplError


class TargetUnreachable(ReplError):
    """The metastore did not answer: a retry may succeed, so no failure marker is written."""


class EventsGone(ReplError):
    """get_next_notification: the events asked for were already cleaned from the log."""


class Metastore(MetastoreClient):
    """thrift://HOST:PORT; `call` raises ReplError for transport failures and passes Hive's exceptions on."""

    def __init__(self, uri: str, timeout: float = 120.0) -> None:
        try:
            super().__init__(uri, timeout)
        except ValueError as e:
            raise ReplError(str(e)) from None

    def failure(self, fn: str, e: BaseException) -> BaseException:
        text = error_text(e)
        if "events missing" in text:  # get_next_notification declares no exceptions: it comes as text
            return EventsGone(text.split("MetaException: ", 1)[-1])
        return TargetUnreachable(f"the metastore at {self.uri} failed on {fn}: {type(e).__name__}: {e}")

    def maybe(self, fn: str, *args: Any) -> Any:
        """The call's result, or None when the object does not exist."""
        try:
            return self.call(fn, *args)
        except hms.NoSuchObjectException:
            return None

    def __enter__(self) -> Metastore:
        return self


def hive_message(e: BaseException) -> str:
    return f"{type(e).__name__}: {getattr(e, 'message', None) or e}"
