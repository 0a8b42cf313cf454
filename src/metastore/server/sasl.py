"""SASL on the Thrift front (hive.metastore.sasl.enabled): GSSAPI with the server's Kerberos keytab, and
DIGEST-MD5 with the delegation tokens the server issued. A server configured for SASL that cannot honour it
refuses to start.

The wire is Thrift's SASL transport (TSaslServerTransport): negotiation frames `[status][4-byte length][payload]`
with status START (1, payload: the mechanism's name), OK (2), BAD (3), ERROR (4) and COMPLETE (5); then data
frames `[4-byte length][payload]`, whose payloads are wrapped by the security layer when one was chosen
(server/thrift_server.py serves those). The client sends START, then its initial response; each side answers
until the server says COMPLETE.

GSSAPI (RFC 4752): the server accepts the client's context with its keytab's key for the configured principal
(`_HOST` is this host's canonical name), then offers its security layers (hadoop.rpc.protection: authentication,
integrity, privacy) in a wrapped 4-byte message; the client picks one, wrapped. The client's principal becomes
the connection's user through the auth_to_local rules (`AuthToLocal`, Hadoop's). DIGEST-MD5 (RFC 2831, qop
auth): the user name is a delegation token's identifier in base64 and the password the token's, checked against
the tokens in the store (catalog/tokens.py).

A client of either mechanism that names an authorization id other than itself acts for that user when it may
impersonate it from its address (server/proxyusers.py: Hadoop's hadoop.proxyuser.* settings); the connection's
principal is then that user, its `real_user` the authenticated one (for the audit log). Otherwise it is refused.

Every negotiation is bounded: frames of at most MAX_FRAME bytes, at most MAX_STEPS messages, and the whole
within the connection's read_timeout from the accept (the connection's recv keeps that clock).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import re
import secrets
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from thriftpy2.transport import TTransportException

from ..config import Settings, SettingsError
from ..core import identity
from .thrift_server import Authenticated, ReadTimeout, recv_exact

if TYPE_CHECKING:
    from ..catalog.tokens import DelegationTokens
    from ..store.store import Store
    from .proxyusers import ProxyUsers

log = logging.getLogger(__name__)

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
MAX_FRAME = 256 * 1024  # a Kerberos AP-REQ with a large PAC stays well below this
MAX_STEPS = 16
MAX_NAME = 1024  # characters of a principal mapped by auth_to_local

# RFC 4752 security layers
LAYER_NONE, LAYER_INTEGRITY, LAYER_PRIVACY = 1, 2, 4
_PROTECTION = {"authentication": LAYER_NONE, "integrity": LAYER_INTEGRITY, "privacy": LAYER_PRIVACY}
MAX_WRAPPED = 0xFFFFFF  # the largest buffer a 3-byte size can announce


class SaslRefused(Exception):
    """The negotiation failed: the client gets a BAD (its fault) or ERROR frame with a short, fixed text and
    the connection is closed."""

    def __init__(self, message: str, status: int = BAD) -> None:
        super().__init__(message)
        self.status = status


# ---- names ----------------------------------------------------------------------------------------------

def canonical_host() -> str:
    """This host's canonical name, lower case: what `_HOST` in the principal stands for (as Hadoop's
    SecurityUtil puts it for a server)."""
    return (socket.getfqdn() or socket.gethostname()).lower()


def server_principal(configured: str) -> str:
    return configured.replace("_HOST", canonical_host())


def split_principal(name: str) -> tuple[list[str], str]:
    """`user/host@REALM` -> (["user", "host"], "REALM")."""
    base, _, realm = name.partition("@")
    return base.split("/"), realm


_RULE = re.compile(r"RULE:\[(\d+):([^\]]*)\](?:\(([^)]*)\))?(?:s/([^/]*)/([^/]*)/(g)?)?(/L)?")


@dataclass(frozen=True)
class _Rule:
    components: int
    fmt: str
    match: re.Pattern[str] | None
    sub_from: re.Pattern[str] | None
    sub_to: str
    global_sub: bool
    lower: bool

    def apply(self, parts: list[str], realm: str) -> str | None:
        if len(parts) != self.components:
            return None
        values = [realm, *parts]

        def field(m: re.Match[str]) -> str:
            i = int(m.group(1))
            if i >= len(values):
                raise ValueError(f"auth_to_local: ${i} in a rule for {self.components} components")
            return values[i]

        base = re.sub(r"\$(\d+)", field, self.fmt)
        if self.match is not None and not self.match.fullmatch(base):
            return None
        out = base
        if self.sub_from is not None:
            out = self.sub_from.sub(self.sub_to, base, count=0 if self.global_sub else 1)
        if "/" in out or "@" in out or not out:
            return None  # Hadoop refuses a rule's result that is not a simple name
        return out.lower() if self.lower else out


class AuthToLocal:
    """Hadoop's hadoop.security.auth_to_local: rules tried in order, the first that applies gives the short
    name. DEFAULT: a principal of the default realm with one or two components maps to its first component;
    RULE:[n:fmt](regex)s/from/to/[g][/L]: for principals of n components, fmt with $0 the realm and $1, $2 the
    components; applies when regex matches the whole of it; then the substitution (Java's $1 in `to` is a
    group). No rule applies: the principal is refused."""

    MAX_RULES = 256

    def __init__(self, rules: str, default_realm: str) -> None:
        self.default_realm = default_realm
        self.rules: list[_Rule | None] = []  # None: DEFAULT
        text = (rules or "DEFAULT").strip()
        tokens = re.findall(r"RULE:\[[^\]]*\](?:\([^)]*\))?(?:s/[^/]*/[^/]*/g?)?(?:/L)?|DEFAULT|\S+", text)
        if len(tokens) > self.MAX_RULES:
            raise SettingsError(f"settings: auth_to_local: more than {self.MAX_RULES} rules")
        for tok in tokens:
            if tok == "DEFAULT":
                self.rules.append(None)
                continue
            m = _RULE.fullmatch(tok)
            if m is None:
                raise SettingsError(f"settings: auth_to_local: not a rule: {tok[:100]!r}")
            n, fmt, regex, sfrom, sto, g, low = m.groups()
            try:
                self.rules.append(_Rule(int(n), fmt, re.compile(regex) if regex is not None else None,
                                        re.compile(sfrom) if sfrom is not None else None,
                                        re.sub(r"\$(\d)", r"\\g<\1>", sto or ""), bool(g), bool(low)))
            except re.error as e:
                raise SettingsError(f"settings: auth_to_local: bad regular expression in {tok[:100]!r}: {e}") \
                    from None

    def short_name(self, principal: str) -> str | None:
        if len(principal) > MAX_NAME:
            return None
        parts, realm = split_principal(principal)
        if not realm or len(parts) > 2 or not all(parts):
            return None
        for rule in self.rules:
            if rule is None:
                if realm == self.default_realm:
                    return parts[0]
                continue
            try:
                out = rule.apply(parts, realm)
            except (ValueError, re.error, IndexError):
                continue
            if out is not None:
                return out
        return None


def default_realm() -> str:
    """The Kerberos library's default realm (krb5.conf's default_realm)."""
    import gssapi

    try:
        name = gssapi.Name("probe", gssapi.NameType.user).canonicalize(gssapi.MechType.kerberos)
        return str(name).rpartition("@")[2]
    except gssapi.exceptions.GSSError:
        return ""


# ---- the wire -------------------------------------------------------------------------------------------

class _Wire:
    """Negotiation frames on the connection, bounded in size and number."""

    def __init__(self, recv: Callable[[int], bytes], send: Callable[[bytes], None]) -> None:
        self.recv, self.send = recv, send
        self.steps = 0

    def _exact(self, n: int) -> bytes:
        return recv_exact(self.recv, n)

    def read(self) -> tuple[int, bytes]:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise SaslRefused("too many SASL negotiation messages")
        head = self._exact(5)
        status, size = head[0], struct.unpack("!i", head[1:])[0]
        if status not in (START, OK, BAD, ERROR, COMPLETE):
            raise SaslRefused("not a SASL negotiation (this server requires SASL)")
        if size < 0 or size > MAX_FRAME:
            raise SaslRefused(f"SASL negotiation frame of {size} bytes (limit {MAX_FRAME})")
        payload = self._exact(size) if size else b""
        if status in (BAD, ERROR):
            raise ConnectionError("the client ended the SASL negotiation")
        return status, payload

    def write(self, status: int, payload: bytes = b"") -> None:
        self.send(bytes([status]) + struct.pack("!i", len(payload)) + payload)


# ---- the negotiator -------------------------------------------------------------------------------------

class Negotiator:
    """The SASL server of every connection of one server process: GSSAPI with the keytab's key, DIGEST-MD5
    with delegation tokens."""

    def __init__(self, principal: str, keytab: str, rules: AuthToLocal, protection: int,
                 tokens: DelegationTokens | None = None, proxy: ProxyUsers | None = None) -> None:
        import gssapi

        self.principal = principal
        self.rules = rules
        self.proxy = proxy  # who may act for whom (None: nobody)
        self.protection = protection  # bitmask of LAYER_*
        self.tokens = tokens  # the delegation tokens DIGEST-MD5 checks (use_store; None: no DIGEST-MD5)
        name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
        self.creds = gssapi.Credentials(name=name, usage="accept", store={"keytab": keytab})
        parts = split_principal(principal)[0]
        self.service = parts[0]
        # the digest-uri a DIGEST-MD5 client may name: this service on one of this host's names (RFC 2831's
        # serv-type/host), or what Hive's own Java client sends (its SASL client made with no protocol and the
        # server name "default": "null/default")
        hosts = {canonical_host(), socket.gethostname().lower(), "localhost"} | ({parts[1].lower()} if len(parts) > 1
                                                                                 else set())
        self.digest_uris = frozenset({f"{self.service.lower()}/{h}" for h in hosts} | {"null/default"})

    def use_store(self, store: Store) -> None:
        """Check DIGEST-MD5's delegation tokens on `store`: the catalog's of this process (one pool for both)."""
        from ..catalog.tokens import DelegationTokens

        self.tokens = DelegationTokens.of(store)

    def __call__(self, recv: Callable[[int], bytes], send: Callable[[bytes], None], address: str) -> Authenticated:
        wire = _Wire(recv, send)
        try:
            status, mech = wire.read()
            if status != START:
                raise SaslRefused("not a SASL negotiation (this server requires SASL)")
            status, first = wire.read()
            if status not in (OK, COMPLETE):
                raise SaslRefused("expected the client's initial SASL response")
            if mech == b"GSSAPI":
                auth = self._gssapi(wire, first, address)
            elif mech == b"DIGEST-MD5" and self.tokens is not None:
                auth = self._digest(wire, first, address)
            else:
                raise SaslRefused("unsupported SASL mechanism (GSSAPI, DIGEST-MD5)")
        except SaslRefused as e:
            log.info("SASL negotiation with %s refused: %s", address, e)
            self._answer(wire, e)
            raise
        except (ConnectionError, EOFError, OSError, TTransportException, ReadTimeout):  # gone, or silent too long
            raise
        except Exception as e:  # the store, the Kerberos library: the client gets an ERROR frame, the log the cause
            log.warning("SASL negotiation with %s failed: %s", address, type(e).__name__, exc_info=True)
            refused = SaslRefused("internal error during SASL negotiation", ERROR)
            self._answer(wire, refused)
            raise refused from None
        return auth

    @staticmethod
    def _answer(wire: _Wire, e: SaslRefused) -> None:
        try:
            wire.write(e.status, str(e).encode())
        except OSError:
            pass

    # ---- GSSAPI ---------------------------------------------------------------------------------------

    def _gssapi(self, wire: _Wire, token: bytes, address: str) -> Authenticated:
        import gssapi
        import gssapi.exceptions

        ctx = gssapi.SecurityContext(creds=self.creds, usage="accept")
        try:
            while True:
                out = ctx.step(token)
                if ctx.complete:
                    break
                wire.write(OK, out or b"")
                status, token = wire.read()
            if out:  # the mutual-authentication answer; the client answers it with an empty message
                wire.write(OK, out)
                status, _ = wire.read()
            offer = struct.pack("!I", (self.protection << 24) | MAX_WRAPPED)
            wire.write(OK, ctx.wrap(offer, False).message)
            status, answer = wire.read()
            chosen = ctx.unwrap(answer).message
        except gssapi.exceptions.GSSError as e:
            log.info("GSSAPI negotiation with %s failed: %s", address, e)
            raise SaslRefused("GSSAPI authentication failed") from None
        if len(chosen) < 4:
            raise SaslRefused("GSSAPI: malformed security layer answer")
        layer = chosen[0]
        if layer not in (LAYER_NONE, LAYER_INTEGRITY, LAYER_PRIVACY) or not layer & self.protection:
            raise SaslRefused("GSSAPI: the client chose a security layer the server does not offer")
        full = str(ctx.initiator_name)
        user = self.rules.short_name(full)
        if user is None:
            log.info("GSSAPI: %s authenticated as %r, which no auth_to_local rule maps", address, full[:MAX_NAME])
            raise SaslRefused("GSSAPI: the principal maps to no local user (auth_to_local)")
        principal = identity.Principal(user, method=identity.KERBEROS, full_name=full, address=address)
        authzid = chosen[4:]
        if authzid:
            try:
                claimed = authzid.decode("utf-8")
            except UnicodeDecodeError:
                raise SaslRefused("GSSAPI: malformed authorization id") from None
            if claimed not in (full, user):
                principal = self._acting_for(principal, claimed, "GSSAPI")
        wire.write(COMPLETE)
        if layer == LAYER_NONE:
            return Authenticated(principal)
        encrypt = layer == LAYER_PRIVACY

        def wrap(data: bytes) -> bytes:
            return bytes(ctx.wrap(data, encrypt).message)

        def unwrap(data: bytes) -> bytes:
            try:
                res = ctx.unwrap(data)
            except gssapi.exceptions.GSSError:
                raise ConnectionError("a frame failed its SASL integrity check") from None
            if encrypt and not res.encrypted:
                raise ConnectionError("an unencrypted frame on a SASL privacy connection")
            return bytes(res.message)

        return Authenticated(principal, wrap, unwrap)

    def _acting_for(self, real: identity.Principal, claimed: str, mech: str) -> identity.Principal:
        """The principal of a connection whose authenticated user `real` names `claimed` as its authorization
        id: that user, when `real` may impersonate it from its address (hadoop.proxyuser.*); else refused."""
        if not claimed or len(claimed) > MAX_NAME or any(c in claimed for c in "\x00\r\n"):
            raise SaslRefused(f"{mech}: malformed authorization id")
        # a principal's name (user@REALM) stands for its short name, as Hadoop's proxy user is created by it
        target = self.rules.short_name(claimed) if "@" in claimed or "/" in claimed else claimed
        why = "no impersonation is configured (hadoop.proxyuser.*)" if self.proxy is None or target is None \
            else self.proxy.refusal(real.name, real.full_name or real.name, target, real.address)
        if why is not None:
            log.warning("%s: %s (%s) may not act for %r: %s", real.address, real.name, mech, claimed[:MAX_NAME], why)
            raise SaslRefused(f"{mech}: the authenticated user may not act for the authorization id "
                              "(impersonation: hadoop.proxyuser.*)")
        assert target is not None
        return identity.Principal(target, method=real.method, full_name=claimed, address=real.address,
                                  real_user=real.full_name or real.name)

    # ---- DIGEST-MD5 with a delegation token ----------------------------------------------------------

    def _digest(self, wire: _Wire, first: bytes, address: str) -> Authenticated:
        tokens = self.tokens
        if tokens is None:
            raise SaslRefused("unsupported SASL mechanism (GSSAPI, DIGEST-MD5)")
        nonce = base64.b64encode(secrets.token_bytes(24)).decode()
        challenge = (f'realm="{DIGEST_REALM}",nonce="{nonce}",qop="auth",charset=utf-8,'
                     f'algorithm=md5-sess').encode()
        wire.write(OK, challenge)
        status, response = wire.read()
        fields = parse_digest(response)
        if fields.get("nonce") != nonce or fields.get("qop", "auth") != "auth":
            raise SaslRefused("DIGEST-MD5: malformed response")
        # RFC 2831: the response names this server's service, and counts its first use of this (fresh) nonce
        if fields.get("digest-uri", "").lower() not in self.digest_uris:
            raise SaslRefused("DIGEST-MD5: the digest-uri does not name this server's service")
        if fields.get("nc", "").lower() != "00000001":
            raise SaslRefused("DIGEST-MD5: the nonce count is not 00000001 (the nonce is fresh)")
        username = fields.get("username", "")
        try:
            ident = base64.b64decode(username, validate=True)
        except ValueError:
            raise SaslRefused("DIGEST-MD5: the user name is not a token identifier") from None
        found = tokens.password_for(ident)
        if found is None:
            raise SaslRefused("DIGEST-MD5: unknown or expired delegation token")
        owner, password, real_user = found
        expected, rspauth = digest_response(fields, base64.b64encode(password).decode())
        response = fields.get("response", "").encode("utf-8", "surrogatepass")  # any text a client sends
        if not hmac.compare_digest(expected.encode(), response):
            raise SaslRefused("DIGEST-MD5: authentication failed")
        user = self.rules.short_name(owner) or (owner if "@" not in owner and "/" not in owner else None)
        if user is None:
            raise SaslRefused("DIGEST-MD5: the token's owner maps to no local user")
        principal = identity.Principal(user, method=identity.TOKEN, full_name=owner, address=address,
                                       real_user=real_user or None)
        authzid = fields.get("authzid")
        if authzid and authzid not in (owner, user):
            principal = self._acting_for(principal, authzid, "DIGEST-MD5")
        wire.write(COMPLETE, f"rspauth={rspauth}".encode())
        return Authenticated(principal)


DIGEST_REALM = "default"  # the realm Hadoop's and Hive's DIGEST-MD5 servers name


def parse_digest(data: bytes) -> dict[str, str]:
    """A DIGEST-MD5 challenge or response's `key=value` and `key="value"` pairs (RFC 2831), bounded."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SaslRefused("DIGEST-MD5: not UTF-8") from None
    out: dict[str, str] = {}
    for m in re.finditer(r'\s*([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,]*))\s*(?:,|$)', text):
        if len(out) >= 32:
            break
        key = m.group(1).lower()
        value = m.group(2) if m.group(2) is not None else (m.group(3) or "")
        if m.group(2) is not None:
            value = re.sub(r"\\(.)", r"\1", value)
        if key in out:
            raise SaslRefused("DIGEST-MD5: a directive repeated")
        out[key] = value
    return out


def digest_response(f: dict[str, str], password: str) -> tuple[str, str]:
    """The response a client with `password` sends for the directives `f`, and the server's rspauth."""

    def h(b: bytes) -> bytes:
        return hashlib.md5(b).digest()  # noqa: S324  # DIGEST-MD5 is MD5 by definition (RFC 2831)

    def hx(b: bytes) -> str:
        return hashlib.md5(b).hexdigest()  # noqa: S324

    user, realm = f.get("username", ""), f.get("realm", "")
    nonce, cnonce, nc = f.get("nonce", ""), f.get("cnonce", ""), f.get("nc", "")
    qop, uri = f.get("qop", "auth"), f.get("digest-uri", "")
    a1 = h(f"{user}:{realm}:{password}".encode()) + f":{nonce}:{cnonce}".encode()
    if f.get("authzid"):
        a1 += f":{f['authzid']}".encode()
    ha1 = hx(a1)

    def kd(a2: str) -> str:
        return hx(f"{ha1}:{nonce}:{nc}:{cnonce}:{qop}:{hx(a2.encode())}".encode())

    return kd(f"AUTHENTICATE:{uri}"), kd(f":{uri}")


# ---- from the settings ----------------------------------------------------------------------------------

def negotiator(settings: Settings) -> Negotiator:
    """The SASL server of `settings`, or SettingsError when it cannot be had (never an open server)."""
    try:
        import gssapi  # noqa: F401
        import gssapi.exceptions
    except ImportError:
        raise SettingsError("settings: hive.metastore.sasl.enabled = true needs the kerberos extra: "
                            "pip install 'metastore[kerberos]'") from None
    if not settings.kerberos_principal:
        raise SettingsError("settings: hive.metastore.sasl.enabled = true but hive.metastore.kerberos.principal "
                            "is not set: the server does not start rather than serve unauthenticated")
    keytab = settings.kerberos_keytab
    if not keytab:
        raise SettingsError("settings: hive.metastore.sasl.enabled = true but hive.metastore.kerberos.keytab.file "
                            "is not set: the server does not start rather than serve unauthenticated")
    if not os.path.isfile(keytab) or not os.access(keytab, os.R_OK):
        raise SettingsError(f"settings: hive.metastore.kerberos.keytab.file = {keytab!r}: not a readable file")
    layers = 0
    for word in settings.rpc_protection.replace(" ", "").lower().split(","):
        if word not in _PROTECTION:
            raise SettingsError(f"settings: hadoop.rpc.protection = {settings.rpc_protection[:100]!r}: "
                                "not authentication, integrity or privacy")
        layers |= _PROTECTION[word]
    from .proxyusers import ProxyUsers

    principal = server_principal(settings.kerberos_principal)
    if "@" not in principal:
        realm = default_realm()
        principal = f"{principal}@{realm}" if realm else principal
    rules = AuthToLocal(settings.auth_to_local, default_realm())
    try:
        neg = Negotiator(principal, keytab, rules, layers, proxy=ProxyUsers(settings.proxy_users, principal))
    except gssapi.exceptions.GSSError as e:
        raise SettingsError(f"settings: no key for {principal!r} in the keytab {keytab!r} "
                            f"(hive.metastore.kerberos.keytab.file): {_gss_text(e)}") from None
    return neg


def _gss_text(e: Exception) -> str:
    text = " ".join(str(e).split())
    return text[:300]
