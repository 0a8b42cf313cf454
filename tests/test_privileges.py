"""The privilege model (README "Authorization"), enforced by the catalog for every call: a server with
authorization=sql and no authentication (users are who set_ugi says), on every backend.

The matrix: `root` (admin_users), `alice` (in role `analysts`, which holds SELECT on db.t), `bob` (nothing
until granted), `carol` (a GLOBAL SELECT). Every allowed call succeeds; every other is refused with Hive's
MetaException "... does not have following privileges ..." and changes nothing: the databases, tables,
partitions, functions and the notification log's id are the same after it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hive_metastore.ttypes import (
    Database,
    FieldSchema,
    Function,
    GetPrincipalsInRoleRequest,
    GetRoleGrantsForPrincipalRequest,
    GrantRevokePrivilegeRequest,
    GrantRevokeRoleRequest,
    HiveObjectPrivilege,
    HiveObjectRef,
    LockComponent,
    LockRequest,
    MetaException,
    NoSuchObjectException,
    NotificationEventRequest,
    Partition,
    PrivilegeBag,
    PrivilegeGrantInfo,
    Role,
    Table,
    UnlockRequest,
)
from thrift.Thrift import TApplicationException

from common import parquet_storage
from conftest import Client, Server, unique
from conftest import Database as StoreDb

USER, ROLE, GROUP = 1, 2, 3
GLOBAL, DATABASE, TABLE = 1, 2, 3
GRANT, REVOKE = 1, 2
SHARED_READ, SHARED_WRITE, EXCLUSIVE = 1, 2, 3
DENIED = "does not have following privileges"


@pytest.fixture(scope="module")
def authz_server(database: StoreDb, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(database, tmp_path_factory.mktemp("authz"), "--no-rest",
                 env={"METASTORE_AUTHORIZATION": "sql", "METASTORE_ADMIN_USERS": "root"}).start()
    yield srv
    srv.stop()


class As:
    """A Thrift connection that claimed a user with set_ugi."""

    def __init__(self, srv: Server, user: str, groups: tuple[str, ...] = ()) -> None:
        self.c = Client(srv.port)
        self.c.set_ugi(user, list(groups))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.c, name)


@pytest.fixture(scope="module")
def users(authz_server: Server) -> Iterator[dict[str, As]]:
    got = {u: As(authz_server, u) for u in ("root", "alice", "bob", "carol")}
    yield got
    for c in got.values():
        c.c.close()


def obj(type_: int, db: str | None = None, table: str | None = None) -> HiveObjectRef:
    return HiveObjectRef(objectType=type_, dbName=db, objectName=table, partValues=[], columnName=None)


def priv(o: HiveObjectRef, name: str, ptype: int, privilege: str, grant_option: bool = False) -> PrivilegeBag:
    return PrivilegeBag(privileges=[HiveObjectPrivilege(hiveObject=o, principalName=name, principalType=ptype,
                                                        grantInfo=PrivilegeGrantInfo(privilege=privilege,
                                                                                     grantOption=grant_option))])


def table(db: str, name: str, owner: str = "root") -> Table:
    return Table(tableName=name, dbName=db, owner=owner, sd=parquet_storage([("a", "int")], None), parameters={},
                 tableType="MANAGED_TABLE", partitionKeys=[FieldSchema("p", "string", None)])


def part(db: str, name: str, value: str) -> Partition:
    return Partition(values=[value], dbName=db, tableName=name, parameters={},
                     sd=parquet_storage([("a", "int")], None))


def lock(c: As, type_: int, db: str, tbl: str | None) -> int:
    req = LockRequest(component=[LockComponent(type=type_, level=2 if tbl else 1, dbname=db, tablename=tbl)],
                      user="u", hostname="h")
    lockid = c.lock(req).lockid
    c.unlock(UnlockRequest(lockid=lockid))
    return lockid


@pytest.fixture(scope="module")
def world(users: dict[str, As]) -> dict[str, str]:
    """db (owned by root) with a partitioned table t (one partition) and a function f; role analysts (alice in
    it) holds SELECT on db.t; carol holds a GLOBAL SELECT."""
    root = users["root"]
    db = unique("pdb")
    root.create_database(Database(name=db, description="d", parameters={}))
    root.create_table(table(db, "t"))
    root.add_partition(part(db, "t", "1"))
    root.create_function(Function(functionName="f", dbName=db, className="x.F", ownerName="root", ownerType=USER,
                                  createTime=0, functionType=1, resourceUris=[]))
    role = unique("Analysts")  # names are case-insensitive: kept lower-cased
    root.create_role(Role(roleName=role, createTime=0, ownerName="root"))
    assert role.lower() in root.get_role_names()
    root.grant_role(role, "alice", USER, "root", USER, False)
    root.grant_privileges(priv(obj(TABLE, db, "t"), role.lower(), ROLE, "SELECT"))
    root.grant_privileges(priv(obj(GLOBAL), "carol", USER, "SELECT"))
    return {"db": db, "role": role.lower()}


def snapshot(root: As, db: str) -> tuple[Any, ...]:
    return (sorted(root.get_all_databases()), sorted(root.get_all_tables(db)),
            root.get_partition_names(db, "t", -1), sorted(root.get_functions(db, "*")),
            root.get_current_notificationEventId().eventId)


def refused(root: As, db: str, call: Any, *args: Any) -> str:
    """`call` is refused with the authorizer's MetaException and changes nothing; its message."""
    before = snapshot(root, db)
    with pytest.raises((MetaException, TApplicationException)) as e:
        call(*args)
    # a call that declares no MetaException (lock, the notification log's) gets it as an application error
    message = str(e.value.message)
    assert DENIED in message and (isinstance(e.value, MetaException) or message.startswith("MetaException: ")), \
        message
    assert snapshot(root, db) == before
    return message


def test_read_matrix(users: dict[str, As], world: dict[str, str]) -> None:
    root, alice, bob, carol = users["root"], users["alice"], users["bob"], users["carol"]
    db = world["db"]
    # allowed: SELECT through the role (alice), a GLOBAL SELECT (carol), admin (root)
    for c in (root, alice, carol):
        assert c.get_table(db, "t").tableName == "t"
        assert c.get_partition_names(db, "t", -1) == ["p=1"]
        assert [p.values for p in c.get_partitions(db, "t", -1)] == [["1"]]
        assert c.get_partitions_by_filter(db, "t", "p = '1'", -1)[0].values == ["1"]
        assert db in c.get_all_databases() and c.get_all_tables(db) == ["t"]
        assert c.get_database(db).name == db
        assert lock(c, SHARED_READ, db, "t") > 0
    # refused: bob holds nothing on db
    message = refused(root, db, bob.get_table, db, "t")
    assert message == (f"Permission denied: Principal [name=bob, type=USER] does not have following privileges "
                       f"for operation GET_TABLE [[SELECT] on Object [type=TABLE_OR_VIEW, name={db}.t]]")
    refused(root, db, bob.get_partitions, db, "t", -1)
    refused(root, db, bob.get_partition_names, db, "t", -1)
    refused(root, db, bob.get_database, db)
    refused(root, db, lock, bob, SHARED_READ, db, "t")
    # listings show what the caller may see: bob sees neither the database nor its tables
    assert db not in bob.get_all_databases() and "default" in bob.get_all_databases()
    assert bob.get_all_tables(db) == []
    assert [m.tableName for m in bob.get_table_meta(db, "*", [])] == []
    assert [m.tableName for m in alice.get_table_meta(db, "*", [])] == ["t"]
    # a missing table: NoSuchObject to whoever sees its database (Spark looks before it creates), refused else
    with pytest.raises(NoSuchObjectException):
        alice.get_table(db, "missing")
    refused(root, db, bob.get_table, db, "missing")
    with pytest.raises(NoSuchObjectException):
        bob.get_database(unique("missing"))
    # functions are read by anyone
    assert bob.get_function(db, "f").className == "x.F"


def test_write_matrix(users: dict[str, As], world: dict[str, str]) -> None:
    root, alice, bob = users["root"], users["alice"], users["bob"]
    db = world["db"]
    # SELECT is not INSERT, DELETE or ownership
    refused(root, db, alice.add_partition, part(db, "t", "2"))
    refused(root, db, alice.drop_partition, db, "t", ["1"], False)
    refused(root, db, lock, alice, EXCLUSIVE, db, "t")
    altered = alice.get_table(db, "t")
    altered.sd.cols.append(FieldSchema("b", "string", None))
    refused(root, db, alice.alter_table, db, "t", altered)
    refused(root, db, alice.drop_table, db, "t", False)
    refused(root, db, alice.create_table, table(db, "a1"))
    refused(root, db, alice.create_database, Database(name=unique("no"), parameters={}))
    refused(root, db, alice.drop_database, db, True, True)
    refused(root, db, alice.create_function, Function(functionName="g", dbName=db, className="x.G", ownerType=USER,
                                                      functionType=1, resourceUris=[]))
    refused(root, db, alice.drop_function, db, "f")
    # INSERT on the table, with grant option: partitions, a write lock, a parameters-only alter
    root.grant_privileges(priv(obj(TABLE, db, "t"), "alice", USER, "INSERT", True))
    alice.add_partition(part(db, "t", "2"))
    assert lock(alice, EXCLUSIVE, db, "t") > 0
    stats = alice.get_table(db, "t")
    stats.parameters["numRows"] = "7"
    alice.alter_table(db, "t", stats)
    assert root.get_table(db, "t").parameters["numRows"] == "7"
    for key, value in (("storage_handler", "org.example.Handler"), ("transactional", "true"),
                       ("auto.purge", "true")):  # what the table is: its owner's to change
        changed = alice.get_table(db, "t")
        changed.parameters[key] = value
        refused(root, db, alice.alter_table, db, "t", changed)
    changed = alice.get_table(db, "t")
    changed.parameters.pop("numRows")
    changed.parameters["spark.sql.statistics.numRows"] = "7"
    alice.alter_table(db, "t", changed)
    refused(root, db, alice.drop_partition, db, "t", ["2"], False)  # DELETE is another privilege
    # grant option: alice passes INSERT on; bob, without it, cannot pass it further
    alice.grant_privileges(priv(obj(TABLE, db, "t"), "bob", USER, "INSERT"))
    refused(root, db, bob.grant_privileges, priv(obj(TABLE, db, "t"), "carol", USER, "INSERT"))
    refused(root, db, alice.grant_privileges, priv(obj(TABLE, db, "t"), "bob", USER, "SELECT"))
    bob.add_partition(part(db, "t", "3"))
    refused(root, db, bob.get_table, db, "t")  # INSERT alone does not read
    root.revoke_privileges(priv(obj(TABLE, db, "t"), "bob", USER, "INSERT"))
    refused(root, db, bob.add_partition, part(db, "t", "4"))
    root.drop_partition(db, "t", ["2"], False)
    root.drop_partition(db, "t", ["3"], False)


def test_create_in_database_and_ownership(users: dict[str, As], world: dict[str, str]) -> None:
    root, alice, bob = users["root"], users["alice"], users["bob"]
    db = world["db"]
    refused(root, db, bob.create_table, table(db, "bt", owner="root"))
    root.grant_privileges(priv(obj(DATABASE, db), "bob", USER, "CREATE"))
    bob.create_table(table(db, "bt", owner="root"))  # the request's owner is not believed: bob owns it
    assert root.get_table(db, "bt").owner == "bob"
    assert bob.get_all_tables(db) == ["bt"]  # his own table only
    bob.add_partition(part(db, "bt", "1"))  # owners have full rights on their objects
    assert bob.get_partition_names(db, "bt", -1) == ["p=1"]
    changed = bob.get_table(db, "bt")
    changed.sd.cols.append(FieldSchema("b", "string", None))
    bob.alter_table(db, "bt", changed)
    bob.create_function(Function(functionName="bf", dbName=db, className="x.B", ownerName="root", ownerType=USER,
                                 createTime=0, functionType=1, resourceUris=[]))
    assert root.get_function(db, "bf").ownerName == "bob"
    bob.drop_function(db, "bf")
    refused(root, db, alice.get_table, db, "bt")
    # the owner grants on his table; a revoke by someone else is refused
    bob.grant_privileges(priv(obj(TABLE, db, "bt"), "alice", USER, "SELECT"))
    assert alice.get_table(db, "bt").tableName == "bt"
    refused(root, db, alice.revoke_privileges, priv(obj(TABLE, db, "bt"), "alice", USER, "SELECT"))
    bob.drop_table(db, "bt", True)
    # the dropped table took its grants: a new table of that name is not alice's to read
    root.create_table(table(db, "bt"))
    refused(root, db, alice.get_table, db, "bt")
    root.drop_table(db, "bt", True)
    root.revoke_privileges(priv(obj(DATABASE, db), "bob", USER, "CREATE"))
    refused(root, db, bob.create_table, table(db, "bt2"))


def test_database_level_and_global_grants(users: dict[str, As], world: dict[str, str]) -> None:
    root, bob, carol = users["root"], users["bob"], users["carol"]
    db = world["db"]
    other = unique("pdb2")
    root.create_database(Database(name=other, description="d", parameters={}))
    root.create_table(table(other, "x"))
    # a database's SELECT reads each of its tables, and no other database's
    root.grant_privileges(priv(obj(DATABASE, other), "bob", USER, "SELECT"))
    assert bob.get_table(other, "x").tableName == "x"
    assert other in bob.get_all_databases() and db not in bob.get_all_databases()
    refused(root, db, bob.get_table, db, "t")
    # GLOBAL SELECT reads everything, and the notification log; without it the log is refused
    assert carol.get_table(other, "x").tableName == "x"
    now = carol.get_current_notificationEventId().eventId
    assert now == root.get_current_notificationEventId().eventId
    assert carol.get_next_notification(NotificationEventRequest(lastEvent=now - 1, maxEvents=1)).events
    refused(root, db, bob.get_current_notificationEventId)
    refused(root, db, bob.get_next_notification, NotificationEventRequest(lastEvent=0, maxEvents=10))
    # carol reads, she does not write
    refused(root, db, carol.drop_table, other, "x", True)
    refused(root, db, carol.add_partition, part(other, "x", "1"))
    # a dropped database takes its grants
    root.drop_database(other, True, True)
    root.create_database(Database(name=other, description="d", parameters={}))
    assert other not in bob.get_all_databases()
    assert [p.hiveObject.dbName for p in root.list_privileges("bob", USER, None)].count(other) == 0
    root.drop_database(other, True, True)


def test_roles(users: dict[str, As], world: dict[str, str]) -> None:
    root, alice, bob = users["root"], users["alice"], users["bob"]
    db, role = world["db"], world["role"]
    refused(root, db, alice.create_role, Role(roleName=unique("r"), createTime=0, ownerName="alice"))
    refused(root, db, alice.get_role_names)
    refused(root, db, alice.grant_role, role, "bob", USER, "alice", USER, False)
    assert [g.principalName for g in root.get_principals_in_role(GetPrincipalsInRoleRequest(roleName=role))
            .principalGrants] == ["alice"]
    mine = alice.get_role_grants_for_principal(GetRoleGrantsForPrincipalRequest(principal_name="alice",
                                                                                 principal_type=USER))
    assert [g.roleName for g in mine.principalGrants] == [role]
    assert {r.roleName for r in alice.list_roles("alice", USER)} == {role, "public"}
    refused(root, db, bob.get_role_grants_for_principal,
            GetRoleGrantsForPrincipalRequest(principal_name="alice", principal_type=USER))
    # WITH ADMIN OPTION: alice may then grant the role on, and bob reads what the role reads
    root.grant_revoke_role(GrantRevokeRoleRequest(requestType=GRANT, roleName=role, principalName="alice",
                                                  principalType=USER, grantOption=True))
    alice.grant_role(role.upper(), "bob", USER, "alice", USER, False)
    assert bob.get_table(db, "t").tableName == "t"
    alice.revoke_role(role, "bob", USER)
    refused(root, db, bob.get_table, db, "t")
    root.grant_revoke_role(GrantRevokeRoleRequest(requestType=REVOKE, roleName=role, principalName="alice",
                                                  principalType=USER, grantOption=True))
    refused(root, db, alice.grant_role, role, "bob", USER, "alice", USER, False)
    # roles granted to roles: cycles are refused
    r1, r2 = unique("r1"), unique("r2")
    for r in (r1, r2):
        root.create_role(Role(roleName=r, createTime=0, ownerName="root"))
    root.grant_role(r1, r2, ROLE, "root", USER, False)
    with pytest.raises(MetaException, match="cycle"):
        root.grant_role(r2, r1, ROLE, "root", USER, False)
    with pytest.raises(MetaException, match="cycle"):
        root.grant_role(r1, r1, ROLE, "root", USER, False)
    # a privilege through two levels of roles
    root.grant_privileges(priv(obj(TABLE, db, "t"), r1, ROLE, "SELECT"))
    root.grant_role(r2, "bob", USER, "root", USER, False)
    assert bob.get_table(db, "t").tableName == "t"
    root.drop_role(r1)  # its grants go with it
    refused(root, db, bob.get_table, db, "t")
    root.drop_role(r2)
    with pytest.raises(MetaException):
        root.drop_role("admin")


def test_privilege_listings(users: dict[str, As], world: dict[str, str]) -> None:
    root, alice, carol = users["root"], users["alice"], users["carol"]
    db, role = world["db"], world["role"]
    on_t = root.list_privileges(None, 0, obj(TABLE, db, "t"))
    assert (role, ROLE, "SELECT") in {(p.principalName, p.principalType, p.grantInfo.privilege) for p in on_t}
    assert [p.grantInfo.privilege for p in carol.list_privileges("carol", USER, None)] == ["SELECT"]
    refused(root, db, alice.list_privileges, "carol", USER, None)
    ps = alice.get_privilege_set(obj(TABLE, db, "t"), "alice", [])
    assert [g.privilege for g in ps.rolePrivileges[role]] == ["SELECT"]
    with pytest.raises(MetaException):
        root.grant_privileges(priv(obj(TABLE, db, "t"), "alice", USER, "FLY"))
    with pytest.raises(MetaException):
        root.grant_revoke_privileges(GrantRevokePrivilegeRequest(requestType=GRANT, privileges=priv(
            obj(TABLE, db, "missing"), "alice", USER, "SELECT")))


def test_cli_grants_and_roles(authz_server: Server, users: dict[str, As], world: dict[str, str]) -> None:
    """`metastore grant|revoke|grants|roles` on the store, acting as the server (click's runner, in process)."""
    from click.testing import CliRunner

    from metastore.cli import main

    db, root = world["db"], users["root"]

    def cli(*args: str, ok: bool = True) -> str:
        out = CliRunner().invoke(main, [*args, "--db", authz_server.db_url, "--data-dir",
                                        str(authz_server.workdir / "data")])
        assert (out.exit_code == 0) == ok, out.output
        return out.output

    role = unique("CliRole")
    cli("roles", "create", role)
    cli("roles", "grant", role, "user:erin", "--with-admin-option")
    cli("grant", "select", "--on", f"table:{db}.t", "--to", f"role:{role}")
    assert role.lower() in cli("roles", "list").split()
    assert "user:erin\twith admin option" in cli("roles", "members", role)
    assert f"table:{db}.t\trole:{role.lower()}\tSELECT" in cli("grants", "--on", f"table:{db}.t")
    erin = As(authz_server, "erin")  # a principal the server has no cached rights of
    try:
        assert erin.get_table(db, "t").tableName == "t"
    finally:
        erin.c.close()
    cli("revoke", "select", "--on", f"table:{db}.t", "--from", f"role:{role}")
    assert f"role:{role.lower()}" not in cli("grants", "--on", f"table:{db}.t")
    cli("roles", "drop", role)
    assert role.lower() not in root.get_role_names()
    assert "is not one of SELECT" in cli("grant", "fly", "--on", "global", "--to", "user:x", ok=False)
    assert "expected user:NAME" in cli("grant", "select", "--on", "global", "--to", "x", ok=False)


def test_an_oauth2_principal_is_authorized_by_the_same_authorizer(fresh_database: StoreDb, tmp_path: Path) -> None:
    """What the REST front does for a request with a bearer token: the catalog, acting as that principal."""
    from metastore.app import build_catalog, load_settings
    from metastore.core import identity
    from metastore.core import model as m
    from metastore.core.errors import AccessDenied

    cat = build_catalog(load_settings(env={
        "METASTORE_DB": fresh_database.url, "METASTORE_WAREHOUSE_DIR": str(tmp_path / "wh"),
        "METASTORE_DATA_DIR": str(tmp_path / "data"), "METASTORE_AUTHORIZATION": "sql",
        "METASTORE_ADMIN_USERS": "root"}))
    cat.create_database(m.Database("rdb"))

    def cols() -> m.StorageDescriptor:
        return m.StorageDescriptor(cols=[m.FieldSchema("a", "int")])

    cat.create_table(m.Table("t", "rdb", owner="root", sd=cols()))
    bob = identity.Principal("bob", method=identity.OAUTH2)
    with identity.acting_as(bob):
        with pytest.raises(AccessDenied, match=r"Principal \[name=bob, type=USER\] does not have"):
            cat.get_table("rdb", "t")
        with pytest.raises(AccessDenied):
            cat.create_table(m.Table("u", "rdb", owner="root", sd=cols()))
        assert "rdb" not in cat.get_databases()
    cat.grant_privileges([m.PrivilegeGrant(m.ObjectRef(m.DATABASE, "rdb"), "bob", m.USER, "CREATE")])
    with identity.acting_as(bob):
        cat.create_table(m.Table("u", "rdb", owner="root", sd=cols()))
        assert cat.get_table("rdb", "u").owner == "bob"  # an authenticated caller owns what it creates
        assert cat.get_tables("rdb") == ["u"]
    assert cat.get_tables("rdb") == ["t", "u"]  # the server itself is admin


@pytest.mark.slow
@pytest.mark.spark
def test_spark_without_create_fails_cleanly_then_succeeds(database: StoreDb, tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    if database.backend != "sqlite":
        pytest.skip("one backend is enough for Spark")
    srv = Server(database, tmp_path, "--no-rest",
                 env={"METASTORE_AUTHORIZATION": "sql", "METASTORE_ADMIN_USERS": "root"}).start()
    try:
        _spark_create(srv, tmp_path)
    finally:
        srv.stop()


def _spark_create(srv: Server, tmp_path: Path) -> None:
    import subprocess
    import sys

    db = unique("sdb")
    root = As(srv, "root")
    try:
        root.create_database(Database(name=db, description="d", parameters={}))
        root.grant_privileges(priv(obj(DATABASE, db), "dave", USER, "SELECT"))  # dave reads the database
        script = tmp_path / "create.py"
        script.write_text(f"""
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.catalogImplementation", "hive")
         .config("spark.hadoop.hive.metastore.uris", "{srv.uri}")
         .config("spark.sql.warehouse.dir", "{srv.warehouse}").getOrCreate())
try:
    spark.sql("CREATE TABLE {db}.st (a INT) USING parquet")
    spark.sql("INSERT INTO {db}.st VALUES (1)")
    print("ROWS", spark.table("{db}.st").count())
except Exception as e:
    print("FAILED", type(e).__name__, str(e).splitlines()[0][:300])
    sys.exit(3)
""")
        env = dict(os.environ, HADOOP_USER_NAME="dave", USER="dave", PYSPARK_PYTHON=sys.executable,
                   PYSPARK_DRIVER_PYTHON=sys.executable)

        def run() -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env,
                                  cwd=tmp_path)

        out = run()
        assert out.returncode == 3, out.stdout + out.stderr[-3000:]
        assert DENIED in out.stdout and "CREATETABLE [[CREATE] on Object [type=DATABASE" in out.stdout, out.stdout
        assert root.get_all_tables(db) == []
        root.grant_privileges(priv(obj(DATABASE, db), "dave", USER, "CREATE"))
        out = run()
        assert out.returncode == 0 and "ROWS 1" in out.stdout, out.stdout + out.stderr[-3000:]
        assert root.get_table(db, "st").owner == "dave"
    finally:
        root.drop_database(db, True, True)
        root.c.close()


def test_every_catalog_operation_has_a_rule() -> None:
    """A new public Catalog method without a rule stops a server with authorization=sql at start-up (install); a
    rule for a method that is gone is a stale one."""
    import inspect

    from metastore.catalog import authz
    from metastore.catalog.locks import Locks
    from metastore.catalog.service import Catalog

    public = {n for n, v in inspect.getmembers(Catalog) if not n.startswith("_") and callable(v)}
    assert public - authz.EXEMPT == set(authz.RULES)
    lock_public = {n for n, v in inspect.getmembers(Locks) if not n.startswith("_") and callable(v)}
    assert lock_public - authz.LOCK_OPEN == set(authz.LOCK_RULES)
