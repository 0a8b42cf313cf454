"""SQL of delegation tokens and the master keys that sign them (DELEGATION_TOKENS, MASTER_KEYS: schema.py,
migration 0005), shared by every server process on one database.

A master key row's MASTER_KEY is `<expiry ms>:<base64 key>`; a token row is keyed by the base64 of its
identifier, and its TOKEN is `<renew-by ms>:<base64 password>` (Hive's DBTokenStore keeps the same two facts).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..core.errors import MetaError
from .schema import delegation_tokens as DT
from .schema import master_keys as MK

if TYPE_CHECKING:
    from .store import Store


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


class TokenStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def of(cls, store: Store) -> TokenStore:
        return cls(store.engine)

    @classmethod
    def open(cls, url: str, pool_size: int = 2) -> TokenStore:
        from .engine import create_engine

        return cls(create_engine(url, pool_size=pool_size))

    def _run(self, fn, write: bool = False):  # type: ignore[no-untyped-def]
        try:
            if write:
                with self.engine.begin() as conn:
                    return fn(conn)
            with self.engine.connect() as conn:
                return fn(conn)
        except sa.exc.SQLAlchemyError as e:
            first = (str(getattr(e, "orig", e)).splitlines() or [""])[0][:300]
            raise MetaError(f"delegation token store: {e.__class__.__name__}: {first}") from e

    # ---- master keys --------------------------------------------------------------------------------

    def master_keys(self) -> dict[int, tuple[bytes, int]]:
        """Every master key: id -> (key, expiry ms)."""

        def q(conn: sa.Connection) -> dict[int, tuple[bytes, int]]:
            out = {}
            for key_id, value in conn.execute(sa.select(MK.c.KEY_ID, MK.c.MASTER_KEY)):
                expiry, _, key = str(value or "").partition(":")
                try:
                    out[int(key_id)] = (base64.b64decode(key), int(expiry))
                except ValueError:
                    continue  # a row this code did not write
            return out

        result: dict[int, tuple[bytes, int]] = self._run(q)
        return result

    def add_master_key(self, key: bytes, expiry_ms: int) -> int:
        def q(conn: sa.Connection) -> int:
            res = conn.execute(MK.insert().values(MASTER_KEY=f"{expiry_ms}:{_b64(key)}"))
            pk = res.inserted_primary_key
            assert pk is not None
            return int(pk[0])

        result: int = self._run(q, write=True)
        return result

    def remove_master_keys_expired(self, now_ms: int) -> None:
        gone = [k for k, (_, exp) in self.master_keys().items() if exp < now_ms]
        if gone:
            self._run(lambda conn: conn.execute(MK.delete().where(MK.c.KEY_ID.in_(gone))), write=True)

    # ---- tokens -------------------------------------------------------------------------------------

    def add_token(self, ident: bytes, password: bytes, renew_ms: int) -> None:
        self._run(lambda conn: conn.execute(DT.insert().values(TOKEN_IDENT=_b64(ident),
                                                               TOKEN=f"{renew_ms}:{_b64(password)}")),
                  write=True)

    def token(self, ident: bytes) -> tuple[bytes, int] | None:
        """(password, renew-by ms) of a token not cancelled, or None."""
        key = _b64(ident)
        if len(key) > 767:
            return None

        def q(conn: sa.Connection) -> tuple[bytes, int] | None:
            row = conn.execute(sa.select(DT.c.TOKEN).where(DT.c.TOKEN_IDENT == key)).first()
            if row is None:
                return None
            renew, _, pw = str(row[0] or "").partition(":")
            try:
                return base64.b64decode(pw), int(renew)
            except ValueError:
                return None

        result: tuple[bytes, int] | None = self._run(q)
        return result

    def renew_token(self, ident: bytes, password: bytes, renew_ms: int) -> bool:
        key = _b64(ident)

        def q(conn: sa.Connection) -> bool:
            res = conn.execute(DT.update().where(DT.c.TOKEN_IDENT == key).values(
                TOKEN=f"{renew_ms}:{_b64(password)}"))
            return bool(res.rowcount)

        result: bool = self._run(q, write=True)
        return result

    def remove_token(self, ident: bytes) -> bool:
        key = _b64(ident)
        result: bool = self._run(lambda conn: bool(conn.execute(DT.delete().where(DT.c.TOKEN_IDENT == key))
                                                   .rowcount), write=True)
        return result

    def token_count(self) -> int:
        result: int = self._run(lambda conn: int(conn.execute(sa.select(sa.func.count()).select_from(DT))
                                                 .scalar() or 0))
        return result

    def owner_token_count(self, ident_prefix: bytes, owned: Callable[[bytes], bool], now_ms: int) -> int:
        """How many live tokens one owner has: those whose identifier starts with `ident_prefix` and that
        `owned` accepts (the rows are found by the base64 of the prefix's whole 3-byte groups, a superset that
        `owned` narrows). The owner's expired tokens are removed on the way."""
        like = _b64(ident_prefix[:len(ident_prefix) // 3 * 3]) + "%"  # base64 has no LIKE wildcards

        def q(conn: sa.Connection) -> tuple[int, list[str]]:
            live, gone = 0, []
            for key, value in conn.execute(sa.select(DT.c.TOKEN_IDENT, DT.c.TOKEN).where(
                    DT.c.TOKEN_IDENT.like(like))):
                try:
                    ident = base64.b64decode(key, validate=True)
                except ValueError:
                    continue  # a row this code did not write
                if not ident.startswith(ident_prefix) or not owned(ident):
                    continue
                renew, _, _ = str(value or "").partition(":")
                if renew.isdigit() and int(renew) >= now_ms:
                    live += 1
                else:
                    gone.append(key)
            return live, gone

        live, gone = self._run(q)
        if gone:
            self._remove(gone)
        result: int = live
        return result

    def _remove(self, idents: list[str]) -> None:
        def q(conn: sa.Connection) -> None:
            for i in range(0, len(idents), 500):
                conn.execute(DT.delete().where(DT.c.TOKEN_IDENT.in_(idents[i:i + 500])))

        self._run(q, write=True)

    def remove_tokens_expired(self, now_ms: int) -> int:
        def q(conn: sa.Connection) -> int:
            gone = []
            for ident, value in conn.execute(sa.select(DT.c.TOKEN_IDENT, DT.c.TOKEN)):
                renew, _, _ = str(value or "").partition(":")
                if not renew.isdigit() or int(renew) < now_ms:
                    gone.append(ident)
            for i in range(0, len(gone), 500):
                conn.execute(DT.delete().where(DT.c.TOKEN_IDENT.in_(gone[i:i + 500])))
            return len(gone)

        result: int = self._run(q, write=True)
        return result
