"""The authorization check's cost per call (README "Authorization"), in process on SQLite:

- the check alone: the authorizer's wrapper around an operation that does nothing, for a user holding SELECT
  through a role (the cached rights answer) and for a table's owner (the cached owner answers);
- a whole catalog read (table_version: what every serialized fast path does first; get_table) with
  authorization "none" and "sql", as the server (no check), the role's user and the owner.

The figures are the best of several rounds, the configurations interleaved.

    .venv/bin/python bench/authz_check.py [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable

from metastore.app import build_catalog, load_settings
from metastore.catalog import authz
from metastore.catalog.service import Catalog
from metastore.core import identity
from metastore.core import model as m

ALICE = identity.Principal("alice")  # in role readers, which holds SELECT on b.t
BOB = identity.Principal("bob")  # the owner of b.t


def catalog(tmp: str, authorization: str) -> Catalog:
    cat = build_catalog(load_settings(env={
        "METASTORE_DB": f"sqlite:///{tmp}/{authorization}.db", "METASTORE_DATA_DIR": f"{tmp}/{authorization}",
        "METASTORE_AUTHORIZATION": authorization, "METASTORE_ADMIN_USERS": "root"}))
    cat.create_database(m.Database("b"))
    cat.create_table(m.Table("t", "b", owner="bob", sd=m.StorageDescriptor(cols=[m.FieldSchema("a", "int")])))
    return cat


def timed(fn: Callable[[], object], who: identity.Principal, n: int) -> float:
    with identity.acting_as(who):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain, checked = catalog(tmp, "none"), catalog(tmp, "sql")
        checked.create_role(m.Role("readers"))
        checked.grant_role("readers", "alice", m.USER)
        checked.grant_privileges([m.PrivilegeGrant(m.ObjectRef(m.TABLE, "b", "t"), "readers", m.ROLE, "SELECT")])
        assert checked.authorizer is not None
        rule = authz.RULES["get_table"]
        only_check = checked.authorizer._guarded("get_table", lambda db, name: None, *rule)

        def noop(db: str, name: str) -> None:
            return None

        cases: list[tuple[str, Callable[[], object], identity.Principal]] = [
            ("check alone, alice (SELECT via a role)", lambda: only_check("b", "t"), ALICE),
            ("check alone, bob (owner)", lambda: only_check("b", "t"), BOB),
            ("no check (the bare call)", lambda: noop("b", "t"), ALICE),
        ]
        for what in ("table_version", "get_table"):
            cases += [
                (f"{what}: authorization none", lambda w=what: getattr(plain, w)("b", "t"), ALICE),
                (f"{what}: sql, server", lambda w=what: getattr(checked, w)("b", "t"), identity.SERVER),
                (f"{what}: sql, alice", lambda w=what: getattr(checked, w)("b", "t"), ALICE),
                (f"{what}: sql, bob", lambda w=what: getattr(checked, w)("b", "t"), BOB),
            ]
        best = {name: float("inf") for name, _, _ in cases}
        for _ in range(args.rounds):
            for name, fn, who in cases:
                best[name] = min(best[name], timed(fn, who, args.calls))
        for name, us in best.items():
            print(f"{name:42} {us:8.2f} us/call")


if __name__ == "__main__":
    main()
