"""Errors of the Iceberg REST front, in the spec's error model: {"error": {"message", "type", "code"}}."""

from __future__ import annotations

from ..core.errors import AccessDenied, CatalogError, NotAuthenticated
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


class NotAuthorizedException(RestError):
    """401: no bearer token, or one that is expired, forged or of an issuer not accepted. `challenge` is the
    WWW-Authenticate header's value (RFC 6750)."""

    def __init__(self, message: str, error: str = "invalid_token") -> None:
        super().__init__(401, "NotAuthorizedException", message)
        self.challenge = 'Bearer realm="metastore"'
        if error:
            shown = "".join(c if " " <= c <= "~" and c not in '"\\' else "'" for c in message[:200])
            self.challenge += f', error="{error}", error_description="{shown}"'


def access_error(e: CatalogError) -> RestError | None:
    """The answer to the catalog's refusals: AccessDenied is 403 ForbiddenException, NotAuthenticated 401."""
    if isinstance(e, AccessDenied):
        return forbidden(e.message)
    if isinstance(e, NotAuthenticated):
        return NotAuthorizedException(e.message)
    return None


class AuthFailed(Exception):
    """A request's bearer token is missing or not valid: 401 NotAuthorizedException, with WWW-Authenticate.
    `error` is RFC 6750's code ('' when no token was sent); the message never repeats the token."""

    def __init__(self, message: str, error: str = "invalid_token") -> None:
        super().__init__(message)
        self.message, self.error = message, error


class TokenRequestError(Exception):
    """A refused token request, in the spec's OAuthError model."""

    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(description)
        self.status, self.error, self.description = status, error, description

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}
