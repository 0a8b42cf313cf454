"""Delegation tokens (Hive's get_delegation_token / renew / cancel, and the passwords SASL DIGEST-MD5 checks).

A token is Hadoop's: its identifier is AbstractDelegationTokenIdentifier's serialization (version byte 0; owner,
renewer, real user as Text; issue date and max date as VLong ms; sequence number and master key id as VInt),
its password HMAC-SHA1(master key, identifier), and what a client is handed is Token's encodeToUrlString:
URL-safe base64 (no padding) of (VInt length + identifier, VInt length + password, Text kind
HIVE_DELEGATION_TOKEN, Text service). The master keys and the issued tokens live in the store (store/tokens.py),
so a token issued by one server process is accepted, renewed and cancelled by every other on the database.

Rules (Hive's and Hadoop's): tokens are issued only to a caller authenticated by Kerberos, for itself; a token
lives until its renew-by time (issue + renew interval, pushed forward by renew_delegation_token up to the max
date); only the renewer named in the token renews it; the owner or the renewer cancels it.

Bounds: a key id in an identifier comes from a client before it is authenticated (SASL DIGEST-MD5), so an
unknown one reloads the master keys from the store at most once per KEY_RELOAD_INTERVAL a process, and never
under the lock the lookups of known keys take: made-up ids cost no more than one query every few seconds. A
key made by another process is found at the first reload after it was made (a client whose token is refused in
that window is accepted when it retries). Issuing sweeps the expired tokens of the store at most once per
SWEEP_INTERVAL, and refuses beyond MAX_TOKENS_PER_OWNER live tokens of the owner (its own expired ones are
removed first) and beyond MAX_LIVE_TOKENS tokens in all (expired ones counted until the next sweep).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import math
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core import identity
from ..core.errors import AccessDenied, InvalidInput, MetaError, NotAuthenticated
from ..store.tokens import TokenStore

if TYPE_CHECKING:
    from ..store.store import Store

KIND = b"HIVE_DELEGATION_TOKEN"
RENEW_INTERVAL_MS = 86_400_000  # hive.cluster.delegation.token.renew-interval: 1 day
MAX_LIFETIME_MS = 7 * 86_400_000  # hive.cluster.delegation.token.max-lifetime: 7 days
KEY_UPDATE_MS = 86_400_000  # hive.cluster.delegation.key.update-interval: a new master key every day
MAX_NAME = 256  # characters of an owner or renewer name
MAX_TOKEN_TEXT = 4096  # characters of a token string a client sends
MAX_LIVE_TOKENS = 100_000  # tokens the store holds at once, of all owners
MAX_TOKENS_PER_OWNER = 1_000  # live tokens of one owner: one user cannot take the whole store's room
SWEEP_INTERVAL = 60.0  # seconds: a process removes the store's expired tokens at most this often
KEY_RELOAD_INTERVAL = 5.0  # seconds: a process reloads the master keys for an unknown key id at most this often


# ---- Hadoop's Writable encodings --------------------------------------------------------------------------

def write_vlong(out: io.BytesIO, i: int) -> None:
    """WritableUtils.writeVLong."""
    if -112 <= i <= 127:
        out.write(bytes([i & 0xFF]))
        return
    length = -112
    if i < 0:
        i ^= -1
        length = -120
    tmp = i
    while tmp != 0:
        tmp >>= 8
        length -= 1
    out.write(bytes([length & 0xFF]))
    n = -(length + 120) if length < -120 else -(length + 112)
    for idx in range(n, 0, -1):
        out.write(bytes([(i >> ((idx - 1) * 8)) & 0xFF]))


def read_vlong(buf: io.BytesIO) -> int:
    first = _byte(buf)
    if first > 127:
        first -= 256
    if first >= -112:
        return first
    negative = first < -120
    n = (-119 - first) if negative else (-111 - first)
    i = 0
    for _ in range(n - 1):
        i = (i << 8) | _byte(buf)
    return i ^ -1 if negative else i


def _byte(buf: io.BytesIO) -> int:
    b = buf.read(1)
    if not b:
        raise ValueError("truncated")
    return b[0]


def write_text(out: io.BytesIO, s: bytes) -> None:
    write_vlong(out, len(s))
    out.write(s)


def read_text(buf: io.BytesIO, limit: int = 64 * 1024) -> bytes:
    n = read_vlong(buf)
    if n < 0 or n > limit:
        raise ValueError("bad length")
    b = buf.read(n)
    if len(b) != n:
        raise ValueError("truncated")
    return b


# ---- identifiers and tokens ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Identifier:
    owner: str
    renewer: str
    real_user: str
    issue_ms: int
    max_ms: int
    sequence: int
    key_id: int

    def encode(self) -> bytes:
        out = io.BytesIO()
        out.write(b"\x00")  # AbstractDelegationTokenIdentifier's version
        for s in (self.owner, self.renewer, self.real_user):
            write_text(out, s.encode())
        for v in (self.issue_ms, self.max_ms, self.sequence, self.key_id):
            write_vlong(out, v)
        return out.getvalue()

    @classmethod
    def decode(cls, data: bytes) -> Identifier:
        buf = io.BytesIO(data)
        try:
            if _byte(buf) != 0:
                raise ValueError("version")
            owner, renewer, real = (read_text(buf, MAX_NAME * 4).decode() for _ in range(3))
            issue, max_ms, seq, key = (read_vlong(buf) for _ in range(4))
        except (ValueError, UnicodeDecodeError):
            raise InvalidInput("not a delegation token identifier") from None
        if buf.read(1):
            raise InvalidInput("not a delegation token identifier")
        return cls(owner, renewer, real, issue, max_ms, seq, key)


def encode_token(ident: bytes, password: bytes) -> str:
    out = io.BytesIO()
    write_vlong(out, len(ident))
    out.write(ident)
    write_vlong(out, len(password))
    out.write(password)
    write_text(out, KIND)
    write_text(out, b"")
    return base64.urlsafe_b64encode(out.getvalue()).decode("ascii").rstrip("=")


def decode_token(text: str) -> tuple[bytes, bytes]:
    """(identifier, password) of a token string (Token.encodeToUrlString)."""
    if not text or len(text) > MAX_TOKEN_TEXT:
        raise InvalidInput("not a delegation token")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        buf = io.BytesIO(raw)
        ident = read_text(buf, 4096)
        password = read_text(buf, 1024)
        kind = read_text(buf, 1024)
        read_text(buf, 1024)
    except (ValueError, TypeError):
        raise InvalidInput("not a delegation token") from None
    if kind != KIND:
        raise InvalidInput("not a Hive delegation token")
    return ident, password


def _short(principal: str) -> str:
    """The first component of a principal: user/host@REALM -> user (the renewer is named so, as Hadoop does
    with its default rule)."""
    return principal.split("@", 1)[0].split("/", 1)[0]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _owner_prefix(owner: str) -> bytes:
    """The first bytes of every identifier of this owner (version, then the owner as Text)."""
    out = io.BytesIO()
    out.write(b"\x00")
    write_text(out, owner.encode())
    return out.getvalue()


def _owned_by(owner: str) -> Callable[[bytes], bool]:
    """Whether an identifier is one of this owner's."""

    def test(ident: bytes) -> bool:
        try:
            return Identifier.decode(ident).owner == owner
        except InvalidInput:
            return False

    return test


class DelegationTokens:
    """The operations; `store` is the database's token store."""

    def __init__(self, store: TokenStore, renew_interval_ms: int = RENEW_INTERVAL_MS,
                 max_lifetime_ms: int = MAX_LIFETIME_MS) -> None:
        self.store = store
        self.renew_interval_ms = renew_interval_ms
        self.max_lifetime_ms = max_lifetime_ms
        self._lock = threading.Lock()  # the key copy and the clocks below; never held over a store query
        self._issue_lock = threading.Lock()  # one thread of the process makes a new master key
        self._keys: dict[int, tuple[bytes, int]] = {}
        self._keys_loaded_at = -math.inf  # time.monotonic() of the last reload for an unknown key id
        self._swept_at = -math.inf  # ... of the last sweep of expired tokens

    @classmethod
    def open(cls, url: str, pool_size: int = 2) -> DelegationTokens:
        """On an engine of their own (the SASL server of a process, which has no catalog)."""
        return cls(TokenStore.open(url, pool_size))

    @classmethod
    def of(cls, store: Store) -> DelegationTokens:
        """On the catalog's store."""
        return cls(TokenStore.of(store))

    # ---- keys ---------------------------------------------------------------------------------------

    def _key(self, key_id: int) -> bytes | None:
        """The master key of this id: from the process's copy; an unknown id reloads the copy from the store, at
        most once per KEY_RELOAD_INTERVAL (the id is a client's, before authentication) and outside the lock."""
        with self._lock:
            found = self._keys.get(key_id)
            if found is not None:
                return found[0]
            now = time.monotonic()
            if now - self._keys_loaded_at < KEY_RELOAD_INTERVAL:
                return None
            self._keys_loaded_at = now  # this caller reloads; the others within the interval do not wait for it
        found = self._reload_keys().get(key_id)
        return found[0] if found is not None else None

    def _reload_keys(self) -> dict[int, tuple[bytes, int]]:
        """The store's master keys, merged into the process's copy (the query outside the lock: a key another
        thread added meanwhile stays); expired keys dropped from the copy."""
        loaded = self.store.master_keys()
        now = _now_ms()
        with self._lock:
            merged = {k: v for k, v in self._keys.items() if v[1] >= now}
            merged.update(loaded)
            self._keys = merged
            return merged

    def _current_key(self, now: int) -> tuple[int, bytes]:
        """The newest master key still good for a whole token lifetime from now; a new one when none is (made
        by one thread of the process at a time; the lookups of other keys never wait for it)."""
        with self._issue_lock:
            usable = [(k, v) for k, v in self._reload_keys().items() if v[1] > now + self.max_lifetime_ms]
            if usable:
                key_id, (key, _) = max(usable)
                return key_id, key
            key = secrets.token_bytes(64)
            expiry = now + KEY_UPDATE_MS + self.max_lifetime_ms
            key_id = self.store.add_master_key(key, expiry)
            with self._lock:
                self._keys[key_id] = (key, expiry)
            self.store.remove_master_keys_expired(now)
            return key_id, key

    def _sweep(self, now: int) -> None:
        """Remove the store's expired tokens, at most once per SWEEP_INTERVAL in this process."""
        with self._lock:
            mono = time.monotonic()
            if mono - self._swept_at < SWEEP_INTERVAL:
                return
            self._swept_at = mono
        self.store.remove_tokens_expired(now)

    # ---- the calls ----------------------------------------------------------------------------------

    def get(self, owner: str, renewer: str) -> str:
        """A new token for the calling Kerberos user (`owner`: its principal or short name)."""
        caller = identity.current()
        if caller.method != identity.KERBEROS:
            raise NotAuthenticated("delegation tokens are issued only to callers authenticated by Kerberos")
        if not owner or len(owner) > MAX_NAME or len(renewer or "") > MAX_NAME:
            raise InvalidInput(f"a token owner and renewer of at most {MAX_NAME} characters")
        if owner not in (caller.name, caller.full_name):
            raise AccessDenied(f"User {caller.name} does not have privileges for get_delegation_token "
                               "for another user (impersonation is not supported)")
        now = _now_ms()
        self._sweep(now)
        token_owner = caller.full_name or caller.name
        if self.store.owner_token_count(_owner_prefix(token_owner), _owned_by(token_owner),
                                        now) >= MAX_TOKENS_PER_OWNER:
            raise MetaError(f"too many live delegation tokens of {token_owner} (at most {MAX_TOKENS_PER_OWNER}): "
                            "cancel unused ones")
        if self.store.token_count() >= MAX_LIVE_TOKENS:  # expired ones included until the next sweep
            raise MetaError(f"too many live delegation tokens (at most {MAX_LIVE_TOKENS}): cancel unused ones")
        key_id, key = self._current_key(now)
        for _ in range(3):
            # a proxy user's token is the user's, with the proxy as its real user (Hadoop's realUser), as the
            # token's later connections are audited
            ident = Identifier(token_owner, _short(renewer or ""), caller.real_user or "", now,
                               now + self.max_lifetime_ms, secrets.randbelow(2**31 - 1) + 1, key_id).encode()
            password = hmac.new(key, ident, hashlib.sha1).digest()
            try:
                self.store.add_token(ident, password, min(now + self.renew_interval_ms, now + self.max_lifetime_ms))
            except MetaError:
                continue  # the same sequence number in the same millisecond: another one
            return encode_token(ident, password)
        raise MetaError("could not issue a delegation token")

    def _checked(self, text: str) -> tuple[bytes, bytes, Identifier]:
        ident, password = decode_token(text)
        parsed = Identifier.decode(ident)
        key = self._key(parsed.key_id)
        if key is None or not hmac.compare_digest(hmac.new(key, ident, hashlib.sha1).digest(), password):
            raise InvalidInput("not a delegation token of this metastore")
        return ident, password, parsed

    def renew(self, text: str) -> int:
        """The token's new renew-by time (ms); only its renewer may."""
        caller = identity.current()
        ident, password, parsed = self._checked(text)
        if not parsed.renewer or parsed.renewer != caller.name:
            raise AccessDenied(f"User {caller.name} does not have privileges for renew_delegation_token "
                               "(not the token's renewer)")
        now = _now_ms()
        if parsed.max_ms < now:
            raise InvalidInput("the delegation token is past its max lifetime")
        stored = self.store.token(ident)
        if stored is None or stored[1] < now:
            raise InvalidInput("the delegation token is cancelled or expired")
        renew_by = min(now + self.renew_interval_ms, parsed.max_ms)
        if not self.store.renew_token(ident, password, renew_by):
            raise InvalidInput("the delegation token is cancelled or expired")
        return renew_by

    def cancel(self, text: str) -> None:
        caller = identity.current()
        ident, _, parsed = self._checked(text)
        if caller.name not in (_short(parsed.owner), parsed.renewer) and caller.full_name != parsed.owner:
            raise AccessDenied(f"User {caller.name} does not have privileges for cancel_delegation_token "
                               "(neither the token's owner nor its renewer)")
        if not self.store.remove_token(ident):
            raise InvalidInput("the delegation token is cancelled or expired")

    def password_for(self, ident: bytes) -> tuple[str, bytes, str] | None:
        """(owner, password, real user or "") of a live token with this identifier, or None (SASL DIGEST-MD5)."""
        try:
            parsed = Identifier.decode(ident)
        except InvalidInput:
            return None
        key = self._key(parsed.key_id)
        if key is None:
            return None
        now = _now_ms()
        stored = self.store.token(ident)
        if stored is None or stored[1] < now or parsed.max_ms < now:
            return None
        password = hmac.new(key, ident, hashlib.sha1).digest()
        if not hmac.compare_digest(password, stored[0]):
            return None
        return parsed.owner, password, parsed.real_user
