"""Who is calling: the principal of the current call, set by the front that authenticated it and read by the
catalog service, which makes every authorization decision (and by the audit log).

A front sets the principal for the whole of a connection (Thrift: SASL/Kerberos, TLS, or the user a client
claims with set_ugi when the server has no authentication) or of one request (REST: the bearer token), with
`acting_as`; the value lives in a context variable, so each connection thread and each request sees its own.
Code that runs with no principal set (the server's own background work, a CLI on the store) acts as the
server itself (SERVER), which the authorizer treats as an administrator.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# how the principal's name was established
CLAIMED = "claimed"  # a name the client sent (set_ugi, no authentication configured): believed, as Hive does
KERBEROS = "kerberos"  # SASL GSSAPI
TOKEN = "token"  # SASL DIGEST-MD5 with a delegation token the server issued
OAUTH2 = "oauth2"  # a bearer token the server issued, or one of a configured external issuer
INTERNAL = "internal"  # the server itself


@dataclass(frozen=True)
class Principal:
    """The caller: `name` is the short user name privileges are granted to (Kerberos principals mapped by the
    auth_to_local rules); `full_name` what it authenticated as (user/host@REALM, a token's subject)."""

    name: str
    groups: tuple[str, ...] = ()
    method: str = CLAIMED
    full_name: str | None = None
    address: str | None = None  # the client's address, for the audit log
    # a proxy user's own name (Hadoop's impersonation, hadoop.proxyuser.*): it authenticated, `name` is whom it
    # acts for; None when the caller acts for itself. The audit log keeps both.
    real_user: str | None = None

    @property
    def authenticated(self) -> bool:
        return self.method in (KERBEROS, TOKEN, OAUTH2, INTERNAL)


SERVER = Principal("metastore", method=INTERNAL)


@dataclass
class Call:
    """What the audit log says about the current call: filled in by the front (method) and the authorizer
    (the objects checked, the decision)."""

    method: str
    objects: list[str] = field(default_factory=list)
    denied: str | None = None  # the privilege refused, when a check failed


_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("metastore_principal", default=None)
_call: contextvars.ContextVar[Call | None] = contextvars.ContextVar("metastore_call", default=None)


def current() -> Principal:
    """The principal of the current call; SERVER when no front set one."""
    return _principal.get() or SERVER


def current_or_none() -> Principal | None:
    return _principal.get()


@contextmanager
def acting_as(principal: Principal) -> Iterator[Principal]:
    token = _principal.set(principal)
    try:
        yield principal
    finally:
        _principal.reset(token)


def set_principal(principal: Principal) -> None:
    """Replace the principal of the current context (a Thrift connection's set_ugi, when names are claimed)."""
    _principal.set(principal)


@contextmanager
def calling(method: str) -> Iterator[Call]:
    """The audit record of one call, for the duration of the call."""
    call = Call(method)
    token = _call.set(call)
    try:
        yield call
    finally:
        _call.reset(token)


def current_call() -> Call | None:
    return _call.get()
