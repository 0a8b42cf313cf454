"""EXECUTED AS (README "Authorization"): a scheduled replication policy runs as its user. On a server with
authorization=sql (no authentication: users are who set_ugi says), the run's calls are authorized as that
user's: a policy executed as a user without rights on the source database fails its run, recorded FAILED with
the metastore's refusal; after a grant the same policy succeeds. Only an administrator, or the user itself, may
create a policy executing as a user, or change or drop one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hive_metastore.ttypes import (
    Database,
    FieldSchema,
    HiveObjectPrivilege,
    HiveObjectRef,
    PrivilegeBag,
    PrivilegeGrantInfo,
    Table,
)

from metastore.repl.staging import Staging

from common import parquet_storage
from conftest import ROOT, Client, Server, make_database, unique

AUTHZ = {"METASTORE_AUTHORIZATION": "sql", "METASTORE_ADMIN_USERS": "root"}
GLOBAL, USER = 1, 1


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("executed_as")
    dbs = make_database("sqlite", tmp)
    s = Server(next(dbs), tmp, "--no-rest", env=AUTHZ).start()
    yield s
    s.stop()
    for _ in dbs:
        pass


def client(srv: Server, user: str) -> Client:
    c = Client(srv.port)
    c.set_ugi(user, [])
    return c


def sql(srv: Server, user: str, statement: str) -> subprocess.CompletedProcess[str]:
    """`metastore sql` run by the OS user `user` (getpass reads LOGNAME first)."""
    env = dict(os.environ, LOGNAME=user, USER=user, **AUTHZ)
    return subprocess.run([sys.executable, "-m", "metastore.cli", "sql", "--db", srv.db.url, statement],
                          capture_output=True, text=True, cwd=ROOT, timeout=60, env=env)


def rows(srv: Server, view: str, name: str) -> list[dict[str, str]]:
    p = sql(srv, "root", f"SELECT * FROM {view} WHERE schedule_name='{name}'")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    cols = lines[0].split("\t")
    return [dict(zip(cols, line.split("\t"))) for line in lines[1:]]


def executions(srv: Server, name: str) -> list[dict[str, str]]:
    return rows(srv, "information_schema.scheduled_executions", name)


def run_once(srv: Server, user: str, name: str) -> dict[str, str]:
    """ALTER ... EXECUTE by `user`, then the execution it started, once ended."""
    before = len(executions(srv, name))
    p = sql(srv, user, f"ALTER SCHEDULED QUERY {name} EXECUTE")
    assert p.returncode == 0, p.stderr
    deadline = time.time() + 60
    while time.time() < deadline:
        done = [e for e in executions(srv, name)[before:] if e["state"] != "EXECUTING"]
        if done:
            return done[0]
        time.sleep(0.5)
    raise AssertionError(f"the execution of {name} did not end")


def refused(p: subprocess.CompletedProcess[str], *words: str) -> None:
    assert p.returncode == 1, (p.stdout, p.stderr)
    for w in ("does not have privileges", *words):
        assert w in p.stderr, p.stderr


def test_policy_runs_as_its_user(srv: Server, tmp_path: Path) -> None:
    db, name, root_dir = unique("srcdb"), unique("pol"), tmp_path / "staging"
    root = client(srv, "root")
    root.create_database(Database(name=db, parameters={}))
    root.create_table(Table(tableName="t", dbName=db, owner="root", sd=parquet_storage([("a", "int")], None),
                            parameters={}, tableType="MANAGED_TABLE", partitionKeys=[FieldSchema("p", "string", None)]))
    dump = f"REPL DUMP {db} WITH ('hive.repl.rootdir'='{root_dir}')"

    # bob may not make a policy run as carol; nor may he make his own run as root later
    refused(sql(srv, "bob", f"CREATE SCHEDULED QUERY {name} EVERY 5 HOURS EXECUTED AS carol DISABLED AS {dump}"),
            "carol")
    assert rows(srv, "information_schema.scheduled_queries", name) == []
    p = sql(srv, "bob", f"CREATE SCHEDULED QUERY {name} EVERY 5 HOURS EXECUTED AS bob DISABLED AS {dump}")
    assert p.returncode == 0, p.stderr
    [q] = rows(srv, "information_schema.scheduled_queries", name)
    assert q["user"] == "bob"

    # bob has no rights on the database: the run fails with the metastore's refusal, nothing dumped
    e = run_once(srv, "bob", name)
    assert e["state"] == "FAILED", e
    assert "Principal [name=bob, type=USER] does not have following privileges" in e["error_message"], e
    assert not Staging(str(root_dir), db).dumps()

    # after a grant (the dump reads the database and the notification log: a GLOBAL SELECT), it succeeds
    root.grant_privileges(PrivilegeBag(privileges=[HiveObjectPrivilege(
        hiveObject=HiveObjectRef(objectType=GLOBAL, dbName=None, objectName=None, partValues=[], columnName=None),
        principalName="bob", principalType=USER, grantInfo=PrivilegeGrantInfo(privilege="SELECT",
                                                                               grantOption=False))]))
    e = run_once(srv, "bob", name)
    assert e["state"] == "FINISHED", e
    [d] = Staging(str(root_dir), db).dumps()
    assert d.dumped and os.path.isfile(d.file(db, "t", "_metadata"))

    # changing or dropping bob's policy is bob's or an administrator's; executing as another is an admin's
    refused(sql(srv, "bob", f"ALTER SCHEDULED QUERY {name} EXECUTED AS root"), "root")
    refused(sql(srv, "carol", f"ALTER SCHEDULED QUERY {name} EXECUTE"), "bob")
    refused(sql(srv, "carol", f"DROP SCHEDULED QUERY {name}"), "bob")
    assert rows(srv, "information_schema.scheduled_queries", name)[0]["user"] == "bob"
    p = sql(srv, "root", f"ALTER SCHEDULED QUERY {name} EXECUTED AS carol")
    assert p.returncode == 0, p.stderr
    assert rows(srv, "information_schema.scheduled_queries", name)[0]["user"] == "carol"
    # carol has no rights: her run fails, as bob's first did (to a fresh staging root: bob's dump is not loaded)
    p = sql(srv, "carol", f"ALTER SCHEDULED QUERY {name} AS REPL DUMP {db} WITH "
                          f"('hive.repl.rootdir'='{tmp_path / 'staging2'}')")
    assert p.returncode == 0, p.stderr
    e = run_once(srv, "carol", name)
    assert e["state"] == "FAILED" and "Principal [name=carol, type=USER]" in e["error_message"], e
    p = sql(srv, "carol", f"DROP SCHEDULED QUERY {name}")
    assert p.returncode == 0, p.stderr
    root.close()


def test_admin_may_create_for_anyone(srv: Server) -> None:
    name = unique("pol")
    p: Any = sql(srv, "root", f"CREATE SCHEDULED QUERY {name} EVERY 5 HOURS EXECUTED AS dave DISABLED "
                              "AS REPL DUMP somedb")
    assert p.returncode == 0, p.stderr
    assert rows(srv, "information_schema.scheduled_queries", name)[0]["user"] == "dave"
    assert sql(srv, "root", f"DROP SCHEDULED QUERY {name}").returncode == 0
