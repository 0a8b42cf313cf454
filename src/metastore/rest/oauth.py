"""OAuth2 on the Iceberg REST front: the token endpoint and bearer-token validation (README "REST
authentication"). Needs the `oauth` extra (PyJWT with cryptography); app.py checks it before importing this.

Tokens of our own: POST /v1/oauth/tokens with the client-credentials grant (form-encoded, the client id and
secret in the body as PyIceberg's `credential="id:secret"` sends them, or in an HTTP Basic header as RFC 6749
prefers) answers the spec's OAuthTokenResponse (so does the token exchange of a valid token of ours whose client
is still registered, as Iceberg's clients refresh a token): a JWT signed HS256 with the server's key (rest_token_key),
iss ISSUER, sub the client's user, client_id, iat/nbf/exp (rest_token_lifetime), a random jti. Failures answer
the spec's OAuthError ({"error": "invalid_client", "error_description": ...}; 401 for a bad client, 400 for a
bad request). Every process that holds the key accepts the token: the workers of one server share the key file;
servers on one store share it by pointing rest_token_key at one file.

Tokens of an external issuer (rest_oidc_issuer): accepted when signed by a key of its JWKS (a file, re-read
when it changes, or an http(s) URL fetched within a timeout in all and a size cap, cached for JWKS_TTL, re-fetched
for an unknown key id at most every JWKS_MIN_REFRESH), with an algorithm of the allow-list that fits the key
(RSA: RS/PS 256-512, EC: ES 256-512; never `none`, never an HMAC keyed by a public key), and exp, nbf, iss and
aud checked (aud is required: a token the provider issued for another application is refused). The user is the
claim rest_oidc_user_claim (default sub).

A token is routed by its (unverified) iss: ours or the external issuer's; any other issuer is refused before a
signature is checked. Bounds: the token's length (MAX_TOKEN_CHARS), the form (MAX_FORM_BYTES, MAX_FORM_FIELDS),
the JWKS (MAX_JWKS_BYTES, MAX_JWKS_KEYS, JWKS_TIMEOUT), the key ids looked up (the JWKS is re-fetched at most
every JWKS_MIN_REFRESH whatever the tokens name), guessed secrets (FailedSecrets: MAX_FAILURES per client id and
address in FAILURE_WINDOW).
"""

from __future__ import annotations

import base64
import binascii
import http.client
import json
import logging
import os
import re
import secrets
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

import jwt
from jwt import PyJWK

from ..core import identity
from .clients import MAX_CLIENT_ID, MAX_SECRET, Client, ClientRegistry
from .errors import AuthFailed, TokenRequestError

log = logging.getLogger(__name__)

ISSUER = "metastore"  # the iss of the tokens this server issues
TOKEN_ALG = "HS256"
LEEWAY = 30  # seconds of clock skew allowed on exp/nbf/iat
MAX_TOKEN_CHARS = 8192
MAX_FORM_BYTES = 16 * 1024
MAX_FORM_FIELDS = 32
MAX_JWKS_BYTES = 1 << 20
MAX_JWKS_KEYS = 100
JWKS_TIMEOUT = 10.0
JWKS_TTL = 300.0
JWKS_MIN_REFRESH = 30.0
KEY_BYTES = 32
EXTERNAL_ALGS = {"RSA": ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"), "EC": ("ES256", "ES384", "ES512")}
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
MAX_FAILURES = 10  # failed secret checks of one client from one address...
FAILURE_WINDOW = 60.0  # ...within this many seconds: then its requests are refused unchecked until the window passes
MAX_FAILING = 10_000  # (address, client id) pairs whose failures are kept
MAX_SESSION = 24 * 3600  # a token is refreshed by exchange up to this long after its client's secret was checked
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*")  # RFC 6749 3.3
_USER = re.compile(r"[^\x00-\x1f\x7f]{1,128}")


@dataclass(frozen=True)
class TokenIdentity:
    """Who a valid token says the caller is."""

    user: str
    subject: str
    issuer: str
    client_id: str | None = None
    auth_time: int | None = None  # ours: when the client last authenticated with its secret


# ---- the signing key ------------------------------------------------------------------------------------

def load_key(path: str) -> bytes:
    """The token signing key in `path`, made (KEY_BYTES random bytes, base64, mode 0600) when the file does not
    exist. Made in a temporary file and linked into place, so a process starting at the same moment reads the
    winner's whole key, never a half-written one. ValueError when the file is not a key or others may read it."""
    path = os.path.abspath(path)
    if not os.path.exists(path):
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".rest-token-key.", dir=directory)  # mode 0600
        try:
            with os.fdopen(fd, "w") as f:
                f.write(base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode() + "\n")
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, path)
                log.info("made the REST token signing key %s", path)
            except FileExistsError:
                pass  # another process made it first: theirs is the key
        finally:
            os.unlink(tmp)
    try:
        st = os.stat(path)
        if st.st_mode & 0o077:
            raise ValueError(f"the REST token key {path} may be read by others (mode {st.st_mode & 0o777:o}): "
                             "chmod 600 it")
        with open(path, "rb") as f:
            raw = f.read(4096)
    except OSError as e:
        raise ValueError(f"cannot read the REST token key {path}: {e.strerror}") from None
    try:
        key = base64.b64decode(raw.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"the REST token key {path} is not base64 text") from None
    if len(key) < KEY_BYTES:
        raise ValueError(f"the REST token key {path} holds {len(key)} bytes, at least {KEY_BYTES} are needed")
    return key


# ---- an external issuer's keys --------------------------------------------------------------------------

class _HttpRedirectsOnly(urllib.request.HTTPRedirectHandler):
    """A JWKS URL may redirect (at most urllib's 10 times) to another http(s) URL, never to ftp: or file:."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        if urllib.parse.urlsplit(newurl).scheme.lower() not in ("http", "https"):
            raise urllib.error.URLError(f"the JWKS URL redirects to a {urllib.parse.urlsplit(newurl).scheme}: URL")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_HttpRedirectsOnly)


@dataclass(frozen=True)
class IssuerKey:
    kid: str | None
    kty: str
    alg: str | None  # the algorithm the JWK declares, if it does
    jwk: PyJWK

    def fits(self, alg: str) -> bool:
        """Whether a token signed with `alg` may be checked with this key: an allowed algorithm of the key's
        type, and the key's own algorithm when it declares one."""
        return alg in EXTERNAL_ALGS.get(self.kty, ()) and self.alg in (None, alg)


class Jwks:
    """An issuer's JSON Web Key Set from a file (re-read when it changes) or an http(s) URL (fetched with
    JWKS_TIMEOUT and MAX_JWKS_BYTES, kept JWKS_TTL, re-fetched for an unknown key id at most every
    JWKS_MIN_REFRESH). Only keys usable for a signature with an allowed algorithm are kept."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.url = "://" in source
        self._lock = threading.Lock()
        self._keys: list[IssuerKey] = []
        self._stamp: object = None
        self._fetched = 0.0  # monotonic time of the last fetch (URL)
        self._fetching: threading.Thread | None = None  # a fetch given up on that has not ended yet
        if not self.url:  # a file is read now: a missing or malformed one stops the server
            self._keys, self._stamp = self._read_file()

    def _read_file(self) -> tuple[list[IssuerKey], object]:
        try:
            st = os.stat(self.source)
            with open(self.source, "rb") as f:
                raw = f.read(MAX_JWKS_BYTES + 1)
        except OSError as e:
            raise ValueError(f"cannot read the JWKS {self.source}: {e.strerror}") from None
        return self._parse(raw), (st.st_mtime_ns, st.st_size)

    def _fetch(self) -> list[IssuerKey]:
        """The URL's keys, within JWKS_TIMEOUT in all: urllib's timeout bounds each read, not the whole, and an
        issuer trickling its answer held the lock (every request with one of its tokens waited) for as long as
        it liked. The download runs in a thread of its own, waited for JWKS_TIMEOUT; one given up on is not
        started again until it has ended (its reads end at the deadline; the headers' at their timeout)."""
        if self._fetching is not None and self._fetching.is_alive():
            raise TimeoutError(f"the previous fetch of the JWKS {self.source} has not ended")
        deadline = time.monotonic() + JWKS_TIMEOUT
        box: list[list[IssuerKey] | BaseException] = []

        def download() -> None:
            try:
                request = urllib.request.Request(self.source, headers={"Accept": "application/json"})
                raw = bytearray()
                with _OPENER.open(request, timeout=JWKS_TIMEOUT) as r:
                    while chunk := r.read1(MAX_JWKS_BYTES + 1 - len(raw)):
                        raw += chunk
                        if len(raw) > MAX_JWKS_BYTES:
                            break
                        if time.monotonic() > deadline:
                            raise TimeoutError(f"the JWKS {self.source} did not arrive within {JWKS_TIMEOUT:g} s")
                box.append(self._parse(bytes(raw)))
            except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
                box.append(e)

        self._fetching = threading.Thread(target=download, name="jwks-fetch", daemon=True)
        self._fetching.start()
        self._fetching.join(JWKS_TIMEOUT)
        if not box:
            raise TimeoutError(f"the JWKS {self.source} did not arrive within {JWKS_TIMEOUT:g} s")
        result = box[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def _parse(self, raw: bytes) -> list[IssuerKey]:
        if len(raw) > MAX_JWKS_BYTES:
            raise ValueError(f"the JWKS {self.source} is larger than {MAX_JWKS_BYTES} bytes")
        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise ValueError(f"the JWKS {self.source} is not JSON") from None
        entries = doc.get("keys") if isinstance(doc, dict) else None
        if not isinstance(entries, list):
            raise ValueError(f"the JWKS {self.source} has no \"keys\" list")
        keys = []
        for entry in entries[:MAX_JWKS_KEYS]:
            if not isinstance(entry, dict) or entry.get("kty") not in EXTERNAL_ALGS or \
                    entry.get("use", "sig") != "sig" or ("alg" in entry and entry["alg"] not in
                                                          EXTERNAL_ALGS[entry["kty"]]):
                continue
            kid = entry.get("kid")
            try:
                keys.append(IssuerKey(kid if isinstance(kid, str) else None, entry["kty"], entry.get("alg"),
                                      PyJWK.from_dict(entry)))
            except (jwt.PyJWTError, ValueError, TypeError):
                continue
        return keys

    def _refresh(self, wanted: str | None) -> None:
        """Bring the keys up to date (called under the lock)."""
        if not self.url:
            try:
                st = os.stat(self.source)
                if (st.st_mtime_ns, st.st_size) != self._stamp:
                    self._keys, self._stamp = self._read_file()
            except ValueError as e:
                log.error("JWKS not reloaded, the previous keys stay: %s", e)
            return
        now = time.monotonic()
        age = now - self._fetched
        known = wanted is None or any(k.kid == wanted for k in self._keys)
        if self._fetched and age < JWKS_TTL and (known or age < JWKS_MIN_REFRESH):
            return
        self._fetched = now
        try:
            self._keys = self._fetch()
        except (OSError, ValueError, http.client.HTTPException) as e:  # the last keys stay; an unknown kid is refused
            log.warning("cannot fetch the JWKS %s: %s", self.source, e)

    def keys_for(self, kid: str | None) -> list[IssuerKey]:
        with self._lock:
            self._refresh(kid)
            keys = self._keys
        if kid is not None:
            return [k for k in keys if k.kid == kid]
        return keys[:1] if len(keys) == 1 else []  # no key id: only an unambiguous set


@dataclass
class ExternalIssuer:
    issuer: str
    audience: str
    jwks: Jwks
    user_claim: str = "sub"

    def validate(self, token: str, header: dict[str, Any]) -> TokenIdentity:
        alg, kid = header.get("alg"), header.get("kid")
        if not isinstance(alg, str) or not any(alg in algs for algs in EXTERNAL_ALGS.values()):
            raise AuthFailed(f"token algorithm {str(alg)[:16]!r} is not accepted")
        if kid is not None and (not isinstance(kid, str) or len(kid) > 256):
            raise AuthFailed("token key id is not valid")
        keys = [k for k in self.jwks.keys_for(kid) if k.fits(alg)]
        if not keys:
            raise AuthFailed("token signed by a key the issuer does not list")
        try:
            claims = jwt.decode(token, keys[0].jwk.key, algorithms=[alg], audience=self.audience, issuer=self.issuer,
                                leeway=LEEWAY, options={"require": ["exp", "iss", "aud"]})
        except jwt.ExpiredSignatureError:
            raise AuthFailed("token expired") from None
        except jwt.PyJWTError as e:
            raise AuthFailed(f"token not valid: {_why(e)}") from None
        user = claims.get(self.user_claim)
        if not isinstance(user, str) or not _USER.fullmatch(user):
            raise AuthFailed(f"token has no user claim {self.user_claim!r}")
        sub = claims.get("sub")
        return TokenIdentity(user, sub if isinstance(sub, str) else user, self.issuer)


def _audit_client(client_id: str) -> None:
    """The audit line of a token request names the client it is for (client:ID, clipped by the log), so that
    the failures of a guessed secret can be counted per client; never the secret."""
    call = identity.current_call()
    if call is not None:
        call.objects.append(f"client:{client_id}")


def _why(e: Exception) -> str:
    return str(e)[:200]


# ---- the front's authority ------------------------------------------------------------------------------

class FailedSecrets:
    """The bound on guessing a client's secret: at most MAX_FAILURES failed checks of one client id from one
    address within FAILURE_WINDOW; beyond, that pair's requests are refused without a check (the right secret
    too) until the oldest failure is FAILURE_WINDOW old. A success forgets the pair's failures. At most
    MAX_FAILING pairs are kept (the stalest dropped first); per server process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[tuple[str, str], list[float]] = {}

    def wait(self, address: str, client_id: str) -> float:
        """Seconds until the pair may be checked again (0: now)."""
        now = time.monotonic()
        with self._lock:
            times = self._failures.get((address, client_id))
            if times is None or len(times) < MAX_FAILURES:
                return 0.0
            return max(0.0, times[0] + FAILURE_WINDOW - now)

    def failed(self, address: str, client_id: str) -> None:
        now = time.monotonic()
        with self._lock:
            key = (address, client_id)
            times = [t for t in self._failures.pop(key, []) if now - t < FAILURE_WINDOW][-(MAX_FAILURES - 1):]
            self._failures[key] = times + [now]  # re-inserted: the dict's order is the pairs' last failure
            if len(self._failures) > MAX_FAILING:
                del self._failures[next(iter(self._failures))]

    def succeeded(self, address: str, client_id: str) -> None:
        with self._lock:
            self._failures.pop((address, client_id), None)


class OAuth2:
    """Issues our tokens and validates bearer tokens (ours and an external issuer's)."""

    def __init__(self, key: bytes, lifetime: float, clients: ClientRegistry,
                 external: ExternalIssuer | None = None) -> None:
        self.key, self.lifetime, self.clients, self.external = key, lifetime, clients, external
        self.failures = FailedSecrets()

    # -- the token endpoint --
    def token(self, body: bytes, authorization: str | None, address: str = "") -> dict[str, Any]:
        """The OAuthTokenResponse for a token request (its form body and Authorization header) from the client
        at `address` (its host)."""
        if len(body) > MAX_FORM_BYTES:
            raise TokenRequestError(400, "invalid_request", f"request larger than {MAX_FORM_BYTES} bytes")
        try:
            pairs = urllib.parse.parse_qsl(body.decode("ascii"), keep_blank_values=True, strict_parsing=False,
                                           max_num_fields=MAX_FORM_FIELDS)
        except (UnicodeDecodeError, ValueError):
            raise TokenRequestError(400, "invalid_request", "not a form-encoded request") from None
        form: dict[str, str] = {}
        for k, v in pairs:
            if k in form:  # RFC 6749 3.2: parameters must not be repeated
                raise TokenRequestError(400, "invalid_request", f"parameter {k[:64]!r} repeated")
            form[k] = v
        grant = form.get("grant_type")
        scope = form.get("scope")
        if scope is not None and (len(scope) > 256 or not _SCOPE.fullmatch(scope)):
            raise TokenRequestError(400, "invalid_scope", "malformed scope")
        if grant == TOKEN_EXCHANGE:
            return self._issue(*self._exchanged(form), scope)
        if grant != "client_credentials":
            if grant is None:
                raise TokenRequestError(400, "invalid_request", "grant_type is required")
            raise TokenRequestError(400, "unsupported_grant_type",
                                    "the client_credentials grant is served, and the token exchange of a token "
                                    "this server issued")
        client_id, secret = form.get("client_id"), form.get("client_secret")
        scheme, _, value = (authorization or "").strip().partition(" ")
        # another scheme is not client authentication: PyIceberg asks for a new token (its credential in the
        # form) with its expired one still in a Bearer header
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                raise TokenRequestError(400, "invalid_request", "malformed Basic credentials") from None
            basic_id, _, basic_secret = decoded.partition(":")
            client_id = urllib.parse.unquote_plus(basic_id)
            secret = urllib.parse.unquote_plus(basic_secret)
        if not client_id or secret is None:
            raise TokenRequestError(401, "invalid_client", "client_id and client_secret are required")
        _audit_client(client_id)
        if len(client_id) > MAX_CLIENT_ID or len(secret) > MAX_SECRET:
            raise TokenRequestError(401, "invalid_client", "client authentication failed")
        wait = self.failures.wait(address, client_id)
        if wait:
            raise TokenRequestError(401, "invalid_client", f"too many failed attempts for this client: retry in "
                                                           f"{int(wait) + 1} s")
        client = self.clients.check(client_id, secret)
        if client is None:
            self.failures.failed(address, client_id)
            raise TokenRequestError(401, "invalid_client", "client authentication failed")
        self.failures.succeeded(address, client_id)
        return self._issue(client, int(time.time()), scope)

    def _exchanged(self, form: dict[str, str]) -> tuple[Client, int]:
        """A token exchange (RFC 8693) as Iceberg's clients refresh a token before it expires: the subject token
        must be a valid token of this server (not expired) whose client is still registered for the same user;
        the new token is that client's. A token of an external issuer is not exchanged."""
        subject = form.get("subject_token")
        if not subject or form.get("subject_token_type") not in (ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE):
            raise TokenRequestError(400, "invalid_request", "subject_token and subject_token_type (access_token) "
                                                            "are required")
        if len(subject) > MAX_TOKEN_CHARS:
            raise TokenRequestError(400, "invalid_grant", "subject token too long")
        try:
            who = self._ours(subject, jwt.get_unverified_header(subject))
        except (AuthFailed, jwt.PyJWTError):
            raise TokenRequestError(400, "invalid_grant", "the subject token is not a valid token of this server") \
                from None
        if who.client_id:
            _audit_client(who.client_id)
        client = self.clients.get(who.client_id) if who.client_id else None
        if client is None or client.user != who.user:
            raise TokenRequestError(400, "invalid_grant", "the subject token's client is no longer registered")
        if who.auth_time is None or time.time() - who.auth_time > MAX_SESSION:
            raise TokenRequestError(400, "invalid_grant", "the session is too old to refresh: authenticate with "
                                                          "the client's secret again")
        return client, who.auth_time

    def _issue(self, client: Client, auth_time: int, scope: str | None) -> dict[str, Any]:
        now = int(time.time())
        lifetime = max(1, int(self.lifetime))
        claims = {"iss": ISSUER, "sub": client.user, "client_id": client.client_id, "iat": now, "nbf": now,
                  "exp": now + lifetime, "jti": secrets.token_urlsafe(12), "auth_time": auth_time}
        if scope:
            claims["scope"] = scope
        answer: dict[str, Any] = {
            "access_token": jwt.encode(claims, self.key, algorithm=TOKEN_ALG, headers={"typ": "JWT"}),
            "token_type": "bearer", "expires_in": lifetime, "issued_token_type": ACCESS_TOKEN_TYPE}
        if scope:
            answer["scope"] = scope
        return answer

    # -- validating a bearer token --
    def authenticate(self, authorization: list[str]) -> TokenIdentity:
        """The identity of a request from its Authorization header values; AuthFailed when there is no valid
        bearer token."""
        if not authorization:
            raise AuthFailed("authentication required: send an OAuth2 bearer token (POST /v1/oauth/tokens)", "")
        if len(authorization) > 1:
            raise AuthFailed("more than one Authorization header", "invalid_request")
        scheme, _, token = authorization[0].strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise AuthFailed("authentication required: an OAuth2 bearer token (Authorization: Bearer ...)",
                             "invalid_request")
        if len(token) > MAX_TOKEN_CHARS:
            raise AuthFailed(f"token longer than {MAX_TOKEN_CHARS} characters")
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise AuthFailed("token is not a JWT") from None
        issuer = unverified.get("iss")
        if issuer == ISSUER:
            return self._ours(token, header)
        if self.external is not None and issuer == self.external.issuer:
            return self.external.validate(token, header)
        raise AuthFailed("token of an issuer this server does not accept")

    def _ours(self, token: str, header: dict[str, Any]) -> TokenIdentity:
        if header.get("alg") != TOKEN_ALG:
            raise AuthFailed("token algorithm is not accepted")
        try:
            claims = jwt.decode(token, self.key, algorithms=[TOKEN_ALG], issuer=ISSUER, leeway=LEEWAY,
                                options={"require": ["exp", "iat", "iss", "sub"], "verify_aud": False})
        except jwt.ExpiredSignatureError:
            raise AuthFailed("token expired") from None
        except jwt.PyJWTError as e:
            raise AuthFailed(f"token not valid: {_why(e)}") from None
        user, client_id, auth_time = claims.get("sub"), claims.get("client_id"), claims.get("auth_time")
        if not isinstance(user, str) or not _USER.fullmatch(user):
            raise AuthFailed("token has no valid subject")
        return TokenIdentity(user, user, ISSUER, client_id if isinstance(client_id, str) else None,
                             auth_time if isinstance(auth_time, int) else None)


def build(key_path: str, lifetime: float, clients_path: str, oidc_issuer: str = "", oidc_audience: str = "",
          oidc_jwks: str = "", oidc_user_claim: str = "sub") -> OAuth2:
    """The front's OAuth2 from its settings; ValueError (the clients file's ClientsError included) when they
    cannot be honoured."""
    external = None
    if oidc_issuer or oidc_jwks or oidc_audience:
        missing = [name for name, v in (("rest_oidc_issuer", oidc_issuer), ("rest_oidc_audience", oidc_audience),
                                        ("rest_oidc_jwks", oidc_jwks)) if not v]
        if missing:
            raise ValueError(f"an external OAuth2 issuer needs {', '.join(missing)} too")
        if oidc_issuer == ISSUER:
            raise ValueError(f"rest_oidc_issuer may not be {ISSUER!r}: that is the issuer of this server's tokens")
        external = ExternalIssuer(oidc_issuer, oidc_audience, Jwks(oidc_jwks), oidc_user_claim)
    return OAuth2(load_key(key_path), lifetime, ClientRegistry(clients_path), external)
