"""Errors of the Iceberg REST front, in the spec's error model: {"error": {"message", "type", "code"}}."""

from __future__ import annotations

from ..server.http import HttpError
from .types import JsonObject


class RestError(HttpError):
    """An error answered to the client with an HTTP status and an Iceberg exception type name."""

    def __init__(self, code: int, type_: str, message: str) -> None:
        super().__init__(code, message, type_)  # the type name is HttpError's kind

    def body(self) -> JsonObject:
        return {"error": {"message": self.message, "type": self.kind, "code": self.code}}


def bad_request(message: str) -> RestError:
    return RestError(400, "BadRequestException", message)


def no_such_namespace(ns: str) -> RestError:
    return RestError(404, "NoSuchNamespaceException", f"Namespace does not exist: {ns}")


def no_such_table(ident: str, why: str = "") -> RestError:
    return RestError(404, "NoSuchTableException", f"Table does not exist: {ident}" + (f" ({why})" if why else ""))


def commit_failed(message: str) -> RestError:
    return RestError(409, "CommitFailedException", message)


def already_exists(message: str) -> RestError:
    return RestError(409, "AlreadyExistsException", message)


def forbidden(message: str) -> RestError:
    """A refusal of the location policy: the server may not read or write there on a client's behalf."""
    return RestError(403, "ForbiddenException", message)
