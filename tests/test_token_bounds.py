"""Delegation tokens' housekeeping on each backend's store, without a KDC (the caller's Kerberos identity is set
directly): an unknown master key id (a client's, before authentication) reloads the keys at most once per
interval and never under the lock known keys are looked up with; issuing sweeps expired tokens at most once per
interval and caps the live tokens of each owner as well as of all."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from metastore.catalog import tokens as T
from metastore.core import identity
from metastore.core.errors import MetaError
from metastore.store import migrate
from metastore.store.engine import create_engine

from conftest import Database, unique

REALM = "EXAMPLE.TEST"


@pytest.fixture(scope="module")
def engine(database: Database) -> Iterator[sa.Engine]:
    eng = create_engine(database.url)
    migrate.upgrade(eng, only_if_empty=True)
    yield eng
    eng.dispose()


@pytest.fixture
def tokens(engine: sa.Engine) -> T.DelegationTokens:
    """A fresh process's token service (nothing cached, never swept) on the module's store."""
    return T.DelegationTokens(T.TokenStore(engine))


def kerberos_user(short: str, realm: str = REALM) -> identity.Principal:
    return identity.Principal(short, method=identity.KERBEROS, full_name=f"{short}@{realm}")


def issue(tokens: T.DelegationTokens, who: identity.Principal) -> str:
    with identity.acting_as(who):
        return tokens.get(who.full_name or who.name, who.name)


def ident_of(token: str) -> bytes:
    return T.decode_token(token)[0]


class Statements:
    """The SQL statements the engine runs (a listener on the real engine), those matching `pred` counted; with
    `hold`, the first matching one waits until released (to catch a lock held over a store query)."""

    def __init__(self, engine: sa.Engine, pred: Any, hold: bool = False) -> None:
        self.engine, self.pred, self.hold = engine, pred, hold
        self.count = 0
        self.entered, self.release = threading.Event(), threading.Event()
        sa.event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not self.pred(statement):
            return
        self.count += 1
        if self.hold and self.count == 1:
            self.entered.set()
            self.release.wait(120)

    def close(self) -> None:
        self.release.set()
        sa.event.remove(self.engine, "before_cursor_execute", self._seen)


def _master_keys_select(sql: str) -> bool:
    return sql.lstrip().upper().startswith("SELECT") and "MASTER_KEYS" in sql.upper()


def made_up(key_id: int, seq: int) -> bytes:
    """An identifier a client made up (no such key, no such token)."""
    return T.Identifier("mallory", "mallory", "", 1, 2**40, seq, key_id).encode()


# ---- master keys: what a client sends before it is authenticated ------------------------------------------

def test_unknown_key_ids_reload_the_keys_at_most_once_per_interval(engine: sa.Engine, tokens: T.DelegationTokens,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    alice = kerberos_user(unique("alice"))
    good = ident_of(issue(tokens, alice))
    seen = Statements(engine, _master_keys_select)
    try:
        for i in range(200):  # SASL DIGEST-MD5 attempts with made-up key ids
            assert tokens.password_for(made_up(10**9 + i, i + 1)) is None
        assert seen.count == 1, f"{seen.count} reloads of the master keys for 200 unknown key ids"
        assert tokens.password_for(good) is not None  # the known key: from the process's copy
        assert seen.count == 1
        # a key another process made since: found at the next reload once the interval has passed
        key = secrets.token_bytes(64)
        key_id = tokens.store.add_master_key(key, T._now_ms() + T.MAX_LIFETIME_MS)
        ident = T.Identifier(f"{alice.name}@{REALM}", alice.name, "", T._now_ms(),
                             T._now_ms() + T.MAX_LIFETIME_MS, 7, key_id).encode()
        password = hmac.new(key, ident, hashlib.sha1).digest()
        tokens.store.add_token(ident, password, T._now_ms() + T.RENEW_INTERVAL_MS)
        monkeypatch.setattr(T, "KEY_RELOAD_INTERVAL", 0.0)
        assert tokens.password_for(ident) == (f"{alice.name}@{REALM}", password, "")
        assert seen.count == 2
    finally:
        seen.close()


def test_a_reload_does_not_hold_up_known_keys(engine: sa.Engine, tokens: T.DelegationTokens) -> None:
    """While one attempt's reload waits for the store (here: held at its query), another client's token with a
    known key is checked at once: the store query runs outside the lock of the key copy."""
    good = ident_of(issue(tokens, kerberos_user(unique("alice"))))
    seen = Statements(engine, _master_keys_select, hold=True)
    try:
        reloading = threading.Thread(target=tokens.password_for, args=(made_up(10**9, 1),), daemon=True)
        reloading.start()
        assert seen.entered.wait(60), "the made-up key id did not reload the keys"
        answers: list[Any] = []
        known = threading.Thread(target=lambda: answers.append(tokens.password_for(good)), daemon=True)
        known.start()
        known.join(60)  # a deadlock guard, not a measurement: before, this waited for the held reload
        assert not known.is_alive(), "the lookup of a known key waited for another caller's reload"
        assert answers and answers[0] is not None
    finally:
        seen.release.set()
        reloading.join(60)  # out of the listener before it is removed
        seen.close()


# ---- issuing ----------------------------------------------------------------------------------------------

def test_expired_tokens_are_swept_at_most_once_per_interval(tokens: T.DelegationTokens,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    alice = kerberos_user(unique("alice"))
    issue(tokens, alice)  # a fresh process: sweeps
    stale = b"\x00stale-" + unique("t").encode()  # an expired row of the store (another owner's)
    tokens.store.add_token(stale, b"pw", T._now_ms() - 1000)
    issue(tokens, alice)
    assert tokens.store.token(stale) is not None, "issuing swept the whole store again within the interval"
    monkeypatch.setattr(T, "SWEEP_INTERVAL", 0.0)
    issue(tokens, alice)
    assert tokens.store.token(stale) is None


def test_live_tokens_are_capped_per_owner(tokens: T.DelegationTokens, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(T, "MAX_TOKENS_PER_OWNER", 2)
    name = unique("alice")
    while (2 + len(f"{name}@{REALM}")) % 3 == 0:  # the owner's last byte outside the base64 prefix's whole groups
        name += "x"
    alice = kerberos_user(name)
    twin = kerberos_user(name, REALM[:-1] + "U")  # another owner whose tokens the store's prefix query also finds
    assert T._owner_prefix(f"{name}@{REALM}")[:-1] == T._owner_prefix(twin.full_name or "")[:-1]
    mine = [issue(tokens, alice) for _ in range(2)]
    with pytest.raises(MetaError, match=f"too many live delegation tokens of {name}@"):
        issue(tokens, alice)
    issue(tokens, twin)  # others are not locked out
    issue(tokens, twin)
    issue(tokens, kerberos_user(unique("bob")))
    with identity.acting_as(alice):
        tokens.cancel(mine[0])
    issue(tokens, alice)  # room again
    with pytest.raises(MetaError, match="too many live delegation tokens of"):
        issue(tokens, alice)


def test_an_owners_expired_tokens_make_room_at_once(tokens: T.DelegationTokens,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An owner at its cap whose tokens expired gets a new one without waiting for the next sweep."""
    monkeypatch.setattr(T, "MAX_TOKENS_PER_OWNER", 2)
    alice = kerberos_user(unique("alice"))
    old = [T.decode_token(issue(tokens, alice)) for _ in range(2)]
    with pytest.raises(MetaError, match="too many live delegation tokens of"):
        issue(tokens, alice)
    for ident, password in old:  # both past their renew-by time
        assert tokens.store.renew_token(ident, password, T._now_ms() - 1000)
    monkeypatch.setattr(T, "SWEEP_INTERVAL", 3600.0)  # no sweep: the owner's own expired ones go
    issue(tokens, alice)
    assert all(tokens.store.token(ident) is None for ident, _ in old)


def test_the_global_cap_still_holds(tokens: T.DelegationTokens, monkeypatch: pytest.MonkeyPatch) -> None:
    issue(tokens, kerberos_user(unique("carol")))
    monkeypatch.setattr(T, "MAX_LIVE_TOKENS", tokens.store.token_count() + 1)
    issue(tokens, kerberos_user(unique("dave")))
    with pytest.raises(MetaError, match=r"too many live delegation tokens \(at most"):
        issue(tokens, kerberos_user(unique("erin")))
