"""The authorizer attacked through the Thrift front by an unprivileged user (authorization=sql, no authentication:
users are who set_ugi says, as in tests/test_privileges.py), on every backend.

`root` is the administrator (admin_users); `bob` and `carol` hold only what a test grants them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hive_metastore.ttypes import (
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    CompactionRequest,
    CompactionType,
    Database,
    GetPrincipalsInRoleRequest,
    GrantRevokePrivilegeRequest,
    LockComponent,
    LockRequest,
    LongColumnStatsData,
    MetaException,
    PartitionsStatsRequest,
    Role,
    SetPartitionsStatsRequest,
    ShowLocksRequest,
    UnlockRequest,
)
from test_privileges import (  # noqa: F401  (authz_server: the module's server, the same fixture)
    DATABASE,
    DENIED,
    REVOKE,
    ROLE,
    TABLE,
    USER,
    As,
    authz_server,
    obj,
    part,
    priv,
    table,
)
from thrift.Thrift import TApplicationException

from conftest import Server, unique


@pytest.fixture(scope="module")
def users(authz_server: Server) -> Iterator[dict[str, As]]:  # noqa: F811
    got = {u: As(authz_server, u) for u in ("root", "bob", "carol", "dave")}
    yield got
    for c in got.values():
        c.c.close()


def denied(call: object, *args: object) -> str:
    """The call is refused by the authorizer (Hive's MetaException text); its message."""
    with pytest.raises((MetaException, TApplicationException)) as e:
        call(*args)  # type: ignore[operator]
    message = str(e.value.message)
    assert DENIED in message, message
    return message


# ---- 1: the default database is owned by the role public: everyone creates in it, no one grants on it as owner


def test_ownership_through_public_gives_no_grant_on_the_default_database(users: dict[str, As]) -> None:
    root, bob, carol = users["root"], users["bob"], users["carol"]
    secret = unique("secret")
    root.create_table(table("default", secret))
    denied(bob.get_table, "default", secret)
    # everyone may create tables in default, and owns what he creates there
    mine = unique("bobs")
    bob.create_table(table("default", mine))
    assert root.get_table("default", mine).owner == "bob"
    # but the role public's ownership is no owner's right to grant: bob cannot give himself (or carol) every
    # table of the database, nor list or take away others' grants on it
    denied(bob.grant_privileges, priv(obj(DATABASE, "default"), "bob", USER, "SELECT"))
    denied(bob.grant_privileges, priv(obj(DATABASE, "default"), "carol", USER, "ALL", True))
    denied(bob.get_table, "default", secret)
    assert secret not in bob.get_all_tables("default") and mine in bob.get_all_tables("default")
    root.grant_privileges(priv(obj(DATABASE, "default"), "carol", USER, "SELECT"))
    denied(bob.list_privileges, None, 0, obj(DATABASE, "default"))
    denied(bob.revoke_privileges, priv(obj(DATABASE, "default"), "carol", USER, "SELECT"))
    assert carol.get_table("default", secret).tableName == secret
    root.revoke_privileges(priv(obj(DATABASE, "default"), "carol", USER, "SELECT"))
    # his own table is his to grant on
    bob.grant_privileges(priv(obj(TABLE, "default", mine), "carol", USER, "SELECT"))
    assert carol.get_table("default", mine).tableName == mine
    root.drop_table("default", mine, True)
    root.drop_table("default", secret, True)


# ---- 2: an owner is changed by an administrator only (stealing the default database, giving away a table)


def test_an_owner_is_changed_by_an_administrator_only(users: dict[str, As]) -> None:
    root, bob = users["root"], users["bob"]
    stolen = bob.get_database("default")
    stolen.ownerName, stolen.ownerType = "bob", USER
    denied(bob.alter_database, "default", stolen)
    after = root.get_database("default")
    assert (after.ownerName, after.ownerType) == ("public", ROLE)
    db = unique("odb")
    root.create_database(Database(name=db, description="d", parameters={}, ownerName="bob", ownerType=USER))
    assert root.get_database(db).ownerName == "bob"
    given = bob.get_database(db)
    given.ownerName = "carol"
    denied(bob.alter_database, db, given)
    given = bob.get_database(db)
    given.ownerType = ROLE
    denied(bob.alter_database, db, given)
    kept = bob.get_database(db)
    kept.parameters = {"k": "v"}
    bob.alter_database(db, kept)  # his to alter, keeping its owner
    assert (root.get_database(db).ownerName, root.get_database(db).parameters.get("k")) == ("bob", "v")
    bob.create_table(table(db, "t"))
    t = bob.get_table(db, "t")
    t.owner = "carol"
    denied(bob.alter_table, db, "t", t)
    assert root.get_table(db, "t").owner == "bob"
    t = root.get_table(db, "t")
    t.owner = "carol"
    root.alter_table(db, "t", t)  # an administrator may
    assert root.get_table(db, "t").owner == "carol"
    root.drop_database(db, True, True)


# ---- 3: a grant is revoked by its grantor, the object's owner, or an administrator


def test_a_grant_is_revoked_by_its_grantor_the_owner_or_an_administrator(users: dict[str, As]) -> None:
    root, bob, carol, dave = users["root"], users["bob"], users["carol"], users["dave"]
    db = unique("rdb")
    root.create_database(Database(name=db, description="d", parameters={}))
    root.create_table(table(db, "t"))
    root.grant_privileges(priv(obj(TABLE, db, "t"), "bob", USER, "SELECT", True))
    root.grant_privileges(priv(obj(TABLE, db, "t"), "carol", USER, "SELECT"))
    # bob may pass SELECT on; he may not take away what the administrator granted
    denied(bob.revoke_privileges, priv(obj(TABLE, db, "t"), "carol", USER, "SELECT"))
    denied(bob.grant_revoke_privileges, GrantRevokePrivilegeRequest(
        requestType=REVOKE, privileges=priv(obj(TABLE, db, "t"), "carol", USER, "SELECT"), revokeGrantOption=False))
    assert carol.get_table(db, "t").tableName == "t"
    # dave, whom bob gave SELECT with grant option, cannot take bob's away (nor its grant option)
    bob.grant_privileges(priv(obj(TABLE, db, "t"), "dave", USER, "SELECT", True))
    denied(dave.revoke_privileges, priv(obj(TABLE, db, "t"), "bob", USER, "SELECT"))
    denied(dave.grant_revoke_privileges, GrantRevokePrivilegeRequest(
        requestType=REVOKE, privileges=priv(obj(TABLE, db, "t"), "bob", USER, "SELECT"), revokeGrantOption=True))
    assert [(p.principalName, p.grantInfo.grantOption) for p in root.list_privileges("bob", USER, obj(
        TABLE, db, "t"))] == [("bob", True)]
    # bob revokes his own grant
    bob.revoke_privileges(priv(obj(TABLE, db, "t"), "dave", USER, "SELECT"))
    denied(dave.get_table, db, "t")
    # the owner of a table revokes any grant on it
    root.create_table(table(db, "o", owner="carol"))
    root.grant_privileges(priv(obj(TABLE, db, "o"), "dave", USER, "SELECT"))
    carol.revoke_privileges(priv(obj(TABLE, db, "o"), "dave", USER, "SELECT"))
    denied(dave.get_table, db, "o")
    root.drop_database(db, True, True)


# ---- 4: grants and privilege listings do not tell whether an object the caller cannot see exists


def test_grants_and_listings_do_not_tell_whether_a_hidden_object_exists(users: dict[str, As]) -> None:
    root, bob = users["root"], users["bob"]
    db = unique("hdb")
    root.create_database(Database(name=db, description="d", parameters={}))
    root.create_table(table(db, "t"))
    answers = []
    for o in (obj(TABLE, db, "t"), obj(TABLE, db, "nosuch"), obj(DATABASE, db), obj(DATABASE, unique("nodb"))):
        denied(bob.grant_privileges, priv(o, "bob", USER, "SELECT"))
        denied(bob.revoke_privileges, priv(o, "bob", USER, "SELECT"))
        assert bob.list_privileges("bob", USER, o) == []
        answers.append(bob.get_privilege_set(o, "bob", []))
    assert all(a == answers[0] for a in answers), answers
    # an administrator is told the object is missing
    with pytest.raises(MetaException, match="does not exist"):
        root.grant_privileges(priv(obj(TABLE, db, "nosuch"), "bob", USER, "SELECT"))
    root.drop_database(db, True, True)


# ---- 5: show_locks lists the locks on what the caller may see


def test_show_locks_lists_only_locks_on_what_the_caller_sees(users: dict[str, As]) -> None:
    root, bob = users["root"], users["bob"]
    hidden, seen = unique("ldb"), unique("sdb")
    for d in (hidden, seen):
        root.create_database(Database(name=d, description="d", parameters={}))
        root.create_table(table(d, "t"))
    root.grant_privileges(priv(obj(TABLE, seen, "t"), "bob", USER, "SELECT"))
    ids = [root.lock(LockRequest(component=[LockComponent(type=1, level=2 if t else 1, dbname=d, tablename=t)],
                                 user="root", hostname="h")).lockid
           for d, t in ((hidden, "t"), (hidden, None), (seen, "t"))]
    try:
        everything = {(x.dbname, x.tablename) for x in root.show_locks(ShowLocksRequest()).locks or []}
        assert {(hidden, "t"), (hidden, None), (seen, "t")} <= everything
        bobs = {(x.dbname, x.tablename) for x in bob.show_locks(ShowLocksRequest()).locks or []}
        assert (seen, "t") in bobs and not any(d == hidden for d, _ in bobs), bobs
        assert not bob.show_locks(ShowLocksRequest(dbname=hidden)).locks
    finally:
        for lockid in ids:
            root.unlock(UnlockRequest(lockid=lockid))
        for d in (hidden, seen):
            root.drop_database(d, True, True)


# ---- 6: a refusal quotes the names of the request clipped


def test_a_refusal_does_not_echo_a_huge_name(users: dict[str, As]) -> None:
    bob = users["bob"]
    huge = "x" * 200_000
    for call, args in ((bob.get_table, (huge, "t")), (bob.get_table, ("default_" + huge, huge)),
                       (bob.grant_privileges, (priv(obj(TABLE, huge, huge), "bob", USER, "SELECT"),)),
                       (bob.list_privileges, (None, 0, obj(TABLE, huge, "t")))):
        message = denied(call, *args)
        assert len(message) < 2000, len(message)


# ---- 7: role calls do not tell whether a role the caller does not administer exists


def test_role_calls_do_not_tell_whether_a_role_exists(users: dict[str, As]) -> None:
    root, bob = users["root"], users["bob"]
    role = unique("hidden_role")
    root.create_role(Role(roleName=role, createTime=0, ownerName="root"))
    for name in (role, unique("no_role")):
        denied(bob.get_principals_in_role, GetPrincipalsInRoleRequest(roleName=name))
        denied(bob.grant_role, name, "bob", USER, "bob", USER, True)
        denied(bob.revoke_role, name, "carol", USER)
    with pytest.raises(MetaException, match="does not exist"):  # an administrator is told
        root.get_principals_in_role(GetPrincipalsInRoleRequest(roleName=unique("no_role")))
    root.drop_role(role)


# ---- 8: aggregated statistics and compaction requests are authorized as the table's writes and reads


def test_aggregated_statistics_and_compactions_need_the_tables_rights(users: dict[str, As]) -> None:
    root, bob = users["root"], users["bob"]
    d = unique("sdb")
    root.create_database(Database(name=d, description="d", parameters={}))
    root.create_table(table(d, "t"))
    root.add_partition(part(d, "t", "x"))
    desc = ColumnStatisticsDesc(isTblLevel=False, dbName=d, tableName="t", partName="p=x")
    stats = ColumnStatistics(statsDesc=desc, statsObj=[ColumnStatisticsObj(
        colName="a", colType="int", statsData=ColumnStatisticsData(longStats=LongColumnStatsData(
            lowValue=1, highValue=5, numNulls=0, numDVs=5)))])
    try:
        denied(bob.set_aggr_stats_for, SetPartitionsStatsRequest(colStats=[stats]))
        denied(bob.get_aggr_stats_for, PartitionsStatsRequest(dbName=d, tblName="t", colNames=["a"],
                                                               partNames=["p=x"]))
        denied(bob.compact2, CompactionRequest(dbname=d, tablename="t", type=CompactionType.MAJOR))
        root.grant_privileges(priv(obj(TABLE, d, "t"), "bob", USER, "INSERT"))
        root.grant_privileges(priv(obj(TABLE, d, "t"), "bob", USER, "SELECT"))
        assert bob.set_aggr_stats_for(SetPartitionsStatsRequest(colStats=[stats]))
        got = bob.get_aggr_stats_for(PartitionsStatsRequest(dbName=d, tblName="t", colNames=["a"],
                                                             partNames=["p=x"]))
        assert got.partsFound == 1 and got.colStats[0].statsData.longStats.highValue == 5
        denied(bob.compact2, CompactionRequest(dbname=d, tablename="t", type=CompactionType.MAJOR))  # the owner's
        assert root.compact2(CompactionRequest(dbname=d, tablename="t", type=CompactionType.MAJOR)).accepted
    finally:
        root.drop_database(d, True, True)
