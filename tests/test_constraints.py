"""Constraints over Thrift (primary, foreign and unique keys; not-null, default and check constraints).

Hive 2.3's calls (create_table_with_constraints, add_primary_key, add_foreign_key, drop_constraint,
get_primary_keys, get_foreign_keys) run as one scripted series through the same client
(metastore.thrift.client) against the reference Hive 2.3.10 metastore and our server on every backend: each
step's answer (result, or exception class and message) must be equal, except the deliberate differences in
DIFFERENT (asserted as ours). Hive 3/4's calls (unique, not-null, default and check constraints, and
get_all_table_constraints), the events, and what ALTER/RENAME/DROP TABLE do to constraints are ours alone, on
every backend.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from test_privileges import authz_server  # noqa: F401  (a server with authorization=sql, the same fixture)

from metastore.store import schema
from metastore.thrift import hms, tjson
from metastore.thrift.client import MetastoreClient, MetastoreUnavailable

from conftest import Database, Server, unique
from reference import Steps, reference, run_fixtures, struct_fields, text_storage  # noqa: F401  (the session fixture)

# a name Hive generates: <kind>_<hash>_<milliseconds>_<n> (Hive 2.3's hash may be negative)
GENERATED = re.compile(r"(pk|fk|uk|nn|dc|cc)_-?\d+_\d{13}_\d")

# label -> why ours differs from Hive 2.3's answer (asserted as ours in test_deliberate_differences)
DIFFERENT: dict[str, str] = {
    "pk missing table": "Hive raises InvalidObjectException, which add_primary_key does not declare: a "
                        "TApplicationException 'Internal error'; ours the MetaException that names it",
    "pk missing column": "as 'pk missing table'",
    "pk name taken": "Hive 2.3 does not look for the name and fails on its unique index (MetaException 'One or "
                     "more instances could not be made persistent'); ours names the constraint",
    "pks parent upper": "Hive 2.3 compares the names of get_primary_keys as sent (no key found); ours lower-cases "
                        "them as Hive 3 does",
    "fks to child": "Hive 2.3 fails on a missing foreign table name (a NullPointerException); ours lists the "
                    "foreign keys that reference the parent, as Hive 3",
    "fk missing parent column": "as 'pk missing table'",
    "fk to no key": "Hive 2.3 accepts a foreign key to columns that are no key (Hive 3 refuses it, as ours)",
    "drop unknown": "Hive 2.3 turns its NoSuchObjectException into an undeclared InvalidObjectException (a "
                    "TApplicationException); ours the declared NoSuchObjectException",
}


def _table(db: str, name: str, cols: list[tuple[str, str]], keys: tuple[str, ...] = ()) -> Any:
    return hms.Table(tableName=name, dbName=db, owner="alice", sd=text_storage(cols), parameters={},
                     tableType="MANAGED_TABLE",
                     partitionKeys=[hms.FieldSchema(name=k, type="string", comment=None) for k in keys])


def pk(db: str, table: str, col: str, seq: int = 1, name: str | None = None, rely: bool = False) -> Any:
    return hms.SQLPrimaryKey(table_db=db, table_name=table, column_name=col, key_seq=seq, pk_name=name,
                             enable_cstr=False, validate_cstr=False, rely_cstr=rely)


def fk(db: str, parent: str, pcol: str, child: str, ccol: str, seq: int = 1, name: str | None = None) -> Any:
    return hms.SQLForeignKey(pktable_db=db, pktable_name=parent, pkcolumn_name=pcol, fktable_db=db,
                             fktable_name=child, fkcolumn_name=ccol, key_seq=seq, update_rule=0, delete_rule=0,
                             fk_name=name, enable_cstr=False, validate_cstr=False, rely_cstr=True)


# fields of our (newer) IDL that Hive 2.3's structs lack
_NEWER = {"catName"}


def norm(v: Any) -> Any:
    if isinstance(v, list):
        return [norm(x) for x in v]
    if hasattr(v, "thrift_spec") and type(v).__name__.endswith("Response") and len(v.thrift_spec) == 1:
        (spec,) = v.thrift_spec.values()  # PrimaryKeysResponse, ...: their list
        return norm(getattr(v, spec[1]))
    if hasattr(v, "thrift_spec"):
        return {name: "<generated>" if isinstance(x, str) and GENERATED.fullmatch(x) else norm(x)
                for name, x in struct_fields(v, _NEWER)}
    return v


def outcome(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", norm(fn()))
    except MetastoreUnavailable as e:  # a TApplicationException: its text after the call's name
        return ("TApplicationException", str(e).split(": ", 2)[-1])
    except Exception as e:  # noqa: BLE001 - the answer is what is compared
        return (type(e).__name__, getattr(e, "message", None) or str(e))


class Script(Steps):
    """Records every step's outcome on one server."""

    def __init__(self, c: MetastoreClient) -> None:
        super().__init__(c, outcome)


def hive23_script(c: MetastoreClient, db: str) -> dict[str, Any]:
    """Hive 2.3's constraint calls, in the order and shape Hive 2.3's CLI sends them."""
    run = Script(c)

    def n(name: str) -> str:  # Hive 2.3's constraint names are unique in the whole metastore
        return f"{db}_{name}"

    c.create_database(hms.Database(name=db, description="", locationUri=None, parameters={}))
    parent = _table(db, "parent", [("id", "int"), ("code", "string"), ("label", "string")])
    run("create parent", "create_table_with_constraints", parent,
        [pk(db, "parent", "id", 1, n("parent_pk"), rely=True)], [])
    run("create multi pk", "create_table_with_constraints", _table(db, "multi", [("a", "int"), ("b", "int")]),
        [pk(db, "multi", "a", 1, n("multi_pk")), pk(db, "multi", "b", 2, n("multi_pk"))], [])
    run("pks parent", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name="parent"))
    run("pks parent upper", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db.upper(), tbl_name="PARENT"))
    child = _table(db, "child", [("cid", "int"), ("pid", "int"), ("pcode", "string")])
    run("create child", "create_table_with_constraints", child, [],
        [fk(db, "parent", "id", "child", "pid", 1, n("child_fk"))])
    run("fks child", "get_foreign_keys", hms.ForeignKeysRequest(parent_db_name=None, parent_tbl_name=None,
                                                                foreign_db_name=db, foreign_tbl_name="child"))
    run("fks both", "get_foreign_keys", hms.ForeignKeysRequest(parent_db_name=db, parent_tbl_name="parent",
                                                               foreign_db_name=db, foreign_tbl_name="child"))
    run("pks child none", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name="child"))
    run("pk generated", "add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "child", "cid")]))
    run("pks child", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name="child"))
    run("pk again", "add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "parent", "label")]))
    run("pk missing table", "add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "nope", "id")]))
    c.create_table(_table(db, "other", [("x", "int"), ("y", "string")]))
    run("pk missing column", "add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "other", "z")]))
    run("pk name taken", "add_primary_key",
        hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "other", "x", 1, n("parent_pk"))]))
    run("pks other none", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name="other"))
    run("pks missing table", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name="nope"))
    run("fks missing table", "get_foreign_keys", hms.ForeignKeysRequest(parent_db_name=None, parent_tbl_name=None,
                                                                        foreign_db_name=db, foreign_tbl_name="nope"))
    run("fk added", "add_foreign_key", hms.AddForeignKeyRequest(foreignKeyCols=[
        fk(db, "child", "cid", "other", "x", 1, n("other_fk"))]))
    run("fks other", "get_foreign_keys", hms.ForeignKeysRequest(parent_db_name=None, parent_tbl_name=None,
                                                                foreign_db_name=db, foreign_tbl_name="other"))
    run("fks to child", "get_foreign_keys", hms.ForeignKeysRequest(parent_db_name=db, parent_tbl_name="child",
                                                                   foreign_db_name=None, foreign_tbl_name=None))
    run("fk missing parent column", "add_foreign_key", hms.AddForeignKeyRequest(foreignKeyCols=[
        fk(db, "child", "nope", "other", "x", 1, n("bad_fk"))]))
    run("fk to no key", "add_foreign_key", hms.AddForeignKeyRequest(foreignKeyCols=[
        fk(db, "parent", "label", "other", "y", 1, n("label_fk"))]))
    run("fks after fk to no key", "get_foreign_keys", hms.ForeignKeysRequest(
        parent_db_name=db, parent_tbl_name="parent", foreign_db_name=db, foreign_tbl_name="other"))
    run("drop unknown", "drop_constraint", hms.DropConstraintRequest(dbname=db, tablename="other",
                                                                     constraintname="nope"))
    run("drop fk", "drop_constraint", hms.DropConstraintRequest(dbname=db, tablename="other",
                                                                constraintname=n("other_fk")))
    run("fks other after drop", "get_foreign_keys", hms.ForeignKeysRequest(
        parent_db_name=None, parent_tbl_name=None, foreign_db_name=db, foreign_tbl_name="other"))
    run("drop fk by parent", "drop_constraint", hms.DropConstraintRequest(dbname=db, tablename="parent",
                                                                          constraintname=n("child_fk")))
    run("fks child after drop", "get_foreign_keys", hms.ForeignKeysRequest(
        parent_db_name=None, parent_tbl_name=None, foreign_db_name=db, foreign_tbl_name="child"))
    renamed = c.get_table(db, "parent")
    renamed.tableName = "parent2"
    c.alter_table(db, "parent", renamed)
    run("pks renamed", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name="parent2"))
    run("pks old name", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name="parent"))
    run("drop pk", "drop_constraint", hms.DropConstraintRequest(dbname=db, tablename="parent2",
                                                                constraintname=n("parent_pk")))
    run("pks after drop", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name="parent2"))
    c.drop_table(db, "child", True)
    c.create_table(_table(db, "child", [("cid", "int")]))
    run("pks recreated", "get_primary_keys", hms.PrimaryKeysRequest(db_name=db, tbl_name="child"))
    return run.steps


reference_run, our_run = run_fixtures("cons", hive23_script)  # the script run once on each server


LABELS = ["create parent", "create multi pk", "pks parent", "pks parent upper", "create child", "fks child", "fks both",
          "pks child none", "pk generated", "pks child", "pk again", "pk missing table", "pk missing column",
          "pk name taken", "pks other none", "pks missing table", "fks missing table", "fk added", "fks other",
          "fks to child", "fk missing parent column", "fk to no key", "fks after fk to no key", "drop unknown",
          "drop fk", "fks other after drop", "drop fk by parent", "fks child after drop", "pks renamed",
          "pks old name", "drop pk", "pks after drop", "pks recreated"]


def _db_free(v: Any) -> Any:
    """Each side's own database name (a unique one per run) left out."""
    if isinstance(v, dict):
        return {k: _db_free(x) for k, x in v.items() if k not in ("table_db", "pktable_db", "fktable_db")}
    if isinstance(v, (list, tuple)):
        return type(v)(_db_free(x) for x in v)
    return re.sub(r"cons_[0-9a-f]{8}", "<db>", v) if isinstance(v, str) else v


@pytest.mark.slow
@pytest.mark.reference
@pytest.mark.parametrize("label", LABELS)
def test_same_as_hive(label: str, reference_run: dict[str, Any], our_run: dict[str, Any]) -> None:
    if label in DIFFERENT:
        pytest.skip(DIFFERENT[label])
    assert _db_free(our_run[label]) == _db_free(reference_run[label])


def test_script_is_complete(our_run: dict[str, Any]) -> None:
    assert list(our_run) == LABELS


def test_deliberate_differences(our_run: dict[str, Any]) -> None:
    ours = {k: _db_free(v) for k, v in our_run.items()}
    assert ours["pk missing table"] == ("MetaException", "InvalidObjectException: Parent table not found: nope")
    assert ours["pk missing column"] == ("MetaException", "InvalidObjectException: Parent column not found: z")
    assert ours["pk name taken"] == ("MetaException", "InvalidObjectException: Constraint name already exists: "
                                                      "<db>_parent_pk")
    assert ours["fk missing parent column"] == ("MetaException",
                                                "InvalidObjectException: Parent column not found: nope")
    assert ours["fk to no key"][0] == "MetaException"
    assert "no corresponding primary key or unique key" in ours["fk to no key"][1]
    assert ours["fks after fk to no key"] == ("ok", [])
    assert [(x["fk_name"], x["pktable_name"]) for x in ours["fks to child"][1]] == [("<db>_other_fk", "child")]
    assert ours["drop unknown"] == ("NoSuchObjectException", "The constraint: nope does not exist for the "
                                                             "associated table: <db>.other")


def test_our_answers(our_run: dict[str, Any]) -> None:
    """What the script's answers are (equal to Hive's, checked above when the reference runs)."""
    ours = {k: _db_free(v) for k, v in our_run.items()}
    assert ours["create multi pk"] == ("ok", None)
    assert ours["pks parent"] == ("ok", [
        {"table_name": "parent", "column_name": "id", "key_seq": 1, "pk_name": "<db>_parent_pk", "enable_cstr": False,
         "validate_cstr": False, "rely_cstr": True}])
    assert ours["pks parent upper"] == ours["pks parent"]
    fks = ours["fks child"][1]
    assert [(x["fk_name"], x.get("pk_name"), x["key_seq"], x["pkcolumn_name"], x["fkcolumn_name"]) for x in fks] == [
        ("<db>_child_fk", "<db>_parent_pk", 1, "id", "pid")]
    assert ours["pks child"][1][0]["pk_name"] == "<generated>"
    assert ours["pk again"][0] == "MetaException" and "Primary key already exists" in ours["pk again"][1]
    assert ours["pks missing table"] == ours["fks missing table"] == ("ok", [])
    assert ours["fks other after drop"] == ours["fks child after drop"] == ours["pks after drop"] == ("ok", [])
    assert ours["pks renamed"][1][0]["table_name"] == "parent2" and ours["pks old name"] == ("ok", [])
    assert ours["pks recreated"] == ("ok", [])


# ---------------------------------------------------------------------------------- Hive 3/4's calls, ours alone

@pytest.fixture
def client(server: Server) -> Iterator[MetastoreClient]:
    with MetastoreClient(server.uri) as c:
        yield c


@pytest.fixture
def db(client: MetastoreClient) -> str:
    name = unique("cons")
    client.create_database(hms.Database(name=name, description="", locationUri=None, parameters={}))
    return name


def uk(db: str, table: str, col: str, seq: int = 1, name: str | None = None) -> Any:
    return hms.SQLUniqueConstraint(catName="hive", table_db=db, table_name=table, column_name=col, key_seq=seq,
                                   uk_name=name, enable_cstr=True, validate_cstr=False, rely_cstr=False)


def nn(db: str, table: str, col: str, name: str | None = None) -> Any:
    return hms.SQLNotNullConstraint(catName="hive", table_db=db, table_name=table, column_name=col, nn_name=name,
                                    enable_cstr=True, validate_cstr=True, rely_cstr=False)


def dc(db: str, table: str, col: str, value: str, name: str | None = None) -> Any:
    return hms.SQLDefaultConstraint(catName="hive", table_db=db, table_name=table, column_name=col,
                                    default_value=value, dc_name=name, enable_cstr=True, validate_cstr=False,
                                    rely_cstr=False)


def cc(db: str, table: str, col: str, expr: str, name: str | None = None) -> Any:
    return hms.SQLCheckConstraint(catName="hive", table_db=db, table_name=table, column_name=col,
                                  check_expression=expr, dc_name=name, enable_cstr=True, validate_cstr=False,
                                  rely_cstr=False)


def _all(c: MetastoreClient, db: str, table: str) -> Any:
    return c.forward("get_all_table_constraints", hms.AllTableConstraintsRequest(dbName=db, tblName=table,
                                                                                 catName="hive"))


def _events_since(c: MetastoreClient, after: int) -> list[Any]:
    return c.forward("get_next_notification", hms.NotificationEventRequest(lastEvent=after, maxEvents=100)).events


def test_hive3_kinds_and_all_table_constraints(client: MetastoreClient, db: str) -> None:
    c = client
    c.forward("create_table_with_constraints", _table(db, "t", [("a", "int"), ("b", "string"), ("c", "int")],
                                                       keys=("ds",)),
              [pk(db, "t", "a", 1, "t_pk")], None, [uk(db, "t", "b", 1, "t_uk"), uk(db, "t", "ds", 2, "t_uk")],
              [nn(db, "t", "c")], [dc(db, "t", "c", "42", "t_dc")], [cc(db, "t", "a", "a > 0", "t_cc")])
    got = _all(c, db, "t").allTableConstraints
    assert [(x.column_name, x.pk_name) for x in got.primaryKeys] == [("a", "t_pk")]
    assert [(x.column_name, x.key_seq, x.uk_name, x.enable_cstr) for x in got.uniqueConstraints] == [
        ("b", 1, "t_uk", True), ("ds", 2, "t_uk", True)]  # a partition key may be in a key
    (n,) = got.notNullConstraints
    assert n.column_name == "c" and GENERATED.fullmatch(n.nn_name) and n.nn_name.startswith("nn_")
    assert (n.enable_cstr, n.validate_cstr, n.rely_cstr) == (True, True, False)
    assert [(x.column_name, x.default_value, x.dc_name) for x in got.defaultConstraints] == [("c", "42", "t_dc")]
    assert [(x.column_name, x.check_expression) for x in got.checkConstraints] == [("a", "a > 0")]
    assert got.foreignKeys == []
    for call, req, field in (
            ("get_unique_constraints", hms.UniqueConstraintsRequest, "uniqueConstraints"),
            ("get_not_null_constraints", hms.NotNullConstraintsRequest, "notNullConstraints"),
            ("get_default_constraints", hms.DefaultConstraintsRequest, "defaultConstraints"),
            ("get_check_constraints", hms.CheckConstraintsRequest, "checkConstraints")):
        one = getattr(c.forward(call, req(catName="hive", db_name=db, tbl_name="t")), field)
        assert one == getattr(got, field), call
    # the adds of each kind, and a foreign key to a unique constraint (not the primary key)
    c.create_table(_table(db, "u", [("x", "int"), ("y", "string"), ("z", "string")], keys=("p",)))
    c.forward("add_unique_constraint", hms.AddUniqueConstraintRequest(uniqueConstraintCols=[uk(db, "u", "x")]))
    c.forward("add_not_null_constraint", hms.AddNotNullConstraintRequest(notNullConstraintCols=[
        nn(db, "u", "x", "u_nn1"), nn(db, "u", "y", "u_nn2")]))
    c.forward("add_default_constraint", hms.AddDefaultConstraintRequest(defaultConstraintCols=[
        dc(db, "u", "y", "'none'")]))
    c.forward("add_check_constraint", hms.AddCheckConstraintRequest(checkConstraintCols=[
        cc(db, "u", "x", "x < 10", "u_cc")]))
    c.forward("add_foreign_key", hms.AddForeignKeyRequest(foreignKeyCols=[
        fk(db, "t", "b", "u", "z", 1, "u_fk"), fk(db, "t", "ds", "u", "p", 2, "u_fk")]))
    got = _all(c, db, "u").allTableConstraints
    assert [x.column_name for x in got.uniqueConstraints] == ["x"]
    assert [(x.column_name, x.nn_name) for x in got.notNullConstraints] == [("x", "u_nn1"), ("y", "u_nn2")]
    assert [x.default_value for x in got.defaultConstraints] == ["'none'"]
    assert [(x.fkcolumn_name, x.pkcolumn_name, x.pk_name) for x in got.foreignKeys] == [
        ("z", "b", "t_pk"), ("p", "ds", "t_pk")]
    # a foreign key must cover a whole key of its parent
    with pytest.raises(hms.MetaException, match="no corresponding primary key or unique key"):
        c.forward("add_foreign_key", hms.AddForeignKeyRequest(foreignKeyCols=[fk(db, "t", "b", "u", "y")]))
    c.create_table(_table(db, "nokey", [("k", "string")]))
    with pytest.raises(hms.MetaException, match="no primary keys or unique keys"):
        c.forward("add_foreign_key", hms.AddForeignKeyRequest(foreignKeyCols=[fk(db, "nokey", "k", "t", "b")]))
    # the getters of a missing table answer nothing, as Hive's
    assert _all(c, db, "nope").allTableConstraints == hms.SQLAllTableConstraints(
        primaryKeys=[], foreignKeys=[], uniqueConstraints=[], notNullConstraints=[], defaultConstraints=[],
        checkConstraints=[])


def test_names_unique_per_database_and_all_or_nothing(client: MetastoreClient, db: str) -> None:
    c = client
    c.create_table(_table(db, "a", [("x", "int"), ("y", "int")]))
    c.create_table(_table(db, "b", [("x", "int")]))
    c.forward("add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "a", "x", 1, "Same")]))
    for req in (hms.AddNotNullConstraintRequest(notNullConstraintCols=[nn(db, "b", "x", "same")]),
                hms.AddNotNullConstraintRequest(notNullConstraintCols=[nn(db, "b", "x", "n1"),
                                                                       nn(db, "a", "y", "n1")])):
        with pytest.raises(hms.MetaException, match="Constraint name already exists"):
            c.forward("add_not_null_constraint", req)
    # nothing of a refused call was added
    assert c.forward("get_not_null_constraints", hms.NotNullConstraintsRequest(
        catName="hive", db_name=db, tbl_name="b")).notNullConstraints == []
    other = unique("cons")
    c.create_database(hms.Database(name=other, description="", locationUri=None, parameters={}))
    c.create_table(_table(other, "a", [("x", "int")]))
    c.forward("add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(other, "a", "x", 1, "same")]))
    # a table made with a refused constraint is not made
    with pytest.raises(hms.InvalidObjectException, match="Constraint name already exists: same"):
        c.forward("create_table_with_constraints", _table(db, "c", [("x", "int")]),
                  [pk(db, "c", "x", 1, "same")], None, None, None, None, None)
    assert c.find_table(db, "c") is None
    with pytest.raises(hms.InvalidObjectException, match="cannot be made with table"):
        c.forward("create_table_with_constraints", _table(db, "c", [("x", "int")]),
                  [pk(db, "a", "y", 1, "elsewhere")], None, None, None, None, None)
    with pytest.raises(hms.MetaException, match="at position 1"):
        c.forward("add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "b", "x", 2)]))
    with pytest.raises(hms.MetaException, match="limited to 400"):
        c.forward("add_check_constraint", hms.AddCheckConstraintRequest(checkConstraintCols=[
            cc(db, "b", "x", "x > " + "1" * 400)]))


def test_columns_follow_alter_and_drop_table(client: MetastoreClient, db: str) -> None:
    c = client
    c.create_table(_table(db, "p", [("a", "int"), ("b", "int"), ("c", "int")]))
    c.create_table(_table(db, "q", [("r", "int"), ("s", "int")]))
    c.forward("add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "p", "b", 1, "p_pk")]))
    c.forward("add_not_null_constraint", hms.AddNotNullConstraintRequest(notNullConstraintCols=[
        nn(db, "p", "c", "p_nn")]))
    c.forward("add_foreign_key", hms.AddForeignKeyRequest(foreignKeyCols=[fk(db, "p", "b", "q", "s", 1, "q_fk")]))
    # a column added before them, and one dropped: the constraints follow their columns by name
    t = c.get_table(db, "p")
    t.sd.cols = [hms.FieldSchema(name="new", type="int", comment=None), t.sd.cols[1], t.sd.cols[2]]
    c.alter_table(db, "p", t)
    got = _all(c, db, "p").allTableConstraints
    assert [(x.column_name, x.pk_name) for x in got.primaryKeys] == [("b", "p_pk")]
    assert [x.column_name for x in got.notNullConstraints] == ["c"]
    fks = c.forward("get_foreign_keys", hms.ForeignKeysRequest(foreign_db_name=db, foreign_tbl_name="q")).foreignKeys
    assert [(x.pkcolumn_name, x.fkcolumn_name) for x in fks] == [("b", "s")]
    # dropping a constraint's column drops the constraint (Hive drops those of a column descriptor it drops)
    t = c.get_table(db, "p")
    t.sd.cols = [x for x in t.sd.cols if x.name != "c"]
    c.alter_table(db, "p", t)
    assert _all(c, db, "p").allTableConstraints.notNullConstraints == []
    # a rename keeps them all; dropping the parent drops the foreign keys that reference it
    t.tableName = "p2"
    c.alter_table(db, "p", t)
    assert [x.pktable_name for x in c.forward("get_foreign_keys", hms.ForeignKeysRequest(
        foreign_db_name=db, foreign_tbl_name="q")).foreignKeys] == ["p2"]
    c.drop_table(db, "p2", True)
    assert _all(c, db, "q").allTableConstraints.foreignKeys == []
    # and a new table of the old name has none
    c.create_table(_table(db, "p2", [("a", "int")]))
    assert _all(c, db, "p2").allTableConstraints.primaryKeys == []


def test_events(client: MetastoreClient, db: str) -> None:
    c = client
    c.create_table(_table(db, "e", [("a", "int"), ("b", "int")]))
    c.create_table(_table(db, "f", [("a", "int")]))
    start = c.current_event_id()
    c.forward("add_primary_key", hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "e", "a")]))
    c.forward("add_foreign_key", hms.AddForeignKeyRequest(foreignKeyCols=[fk(db, "e", "a", "f", "a", 1, "f_fk")]))
    c.forward("add_not_null_constraint", hms.AddNotNullConstraintRequest(notNullConstraintCols=[
        nn(db, "e", "b", "e_nn")]))
    c.forward("drop_constraint", hms.DropConstraintRequest(dbname=db, tablename="f", constraintname="F_FK"))
    events = _events_since(c, start)
    assert [(e.eventType, e.dbName, e.tableName) for e in events] == [
        ("ADD_PRIMARYKEY", db, "e"), ("ADD_FOREIGNKEY", db, "e"),  # Hive names a foreign key's parent
        ("ADD_NOTNULLCONSTRAINT", db, "e"), ("DROP_CONSTRAINT", db, "f")]
    msgs = [json.loads(e.message) for e in events]
    (pk_text,) = msgs[0]["primaryKeyListJson"]
    key = tjson.loads(pk_text, hms.SQLPrimaryKey)
    assert (key.table_db, key.table_name, key.column_name, key.key_seq) == (db, "e", "a", 1)
    assert GENERATED.fullmatch(key.pk_name)  # the message names the generated name
    (fk_text,) = msgs[1]["foreignKeyListJson"]
    assert tjson.loads(fk_text, hms.SQLForeignKey).pk_name == key.pk_name
    assert tjson.loads(msgs[2]["notNullConstraintListJson"][0], hms.SQLNotNullConstraint).nn_name == "e_nn"
    assert {k: v for k, v in msgs[3].items() if k not in ("server", "servicePrincipal", "timestamp")} == {
        "dbName": db, "tableName": "f", "constraintName": "f_fk"}
    # create_table_with_constraints: CREATE_TABLE, then its constraints' events
    start = c.current_event_id()
    c.forward("create_table_with_constraints", _table(db, "g", [("a", "int")]), [pk(db, "g", "a", 1, "g_pk")],
              None, None, None, None, None)
    assert [e.eventType for e in _events_since(c, start)] == ["CREATE_TABLE", "ADD_PRIMARYKEY"]


def test_migration_matches_the_schema(server: Server, database: Database) -> None:
    """The store the server migrated has KEY_CONSTRAINTS as schema.py declares it (migration 0006)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    engine = sa.create_engine(database.url)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), schema.metadata)
            cols = {c["name"] for c in sa.inspect(conn).get_columns("KEY_CONSTRAINTS")}
    finally:
        engine.dispose()
    assert [d for d in diff if "KEY_CONSTRAINTS" in repr(d)] == []
    assert cols == {c.name for c in schema.key_constraints.columns}




def test_authorized_as_the_table(authz_server: Server) -> None:  # noqa: F811
    """Constraints are added and dropped as the table is altered (its owner), read as it is read (SELECT)."""
    with MetastoreClient(authz_server.uri, user="root") as root, \
            MetastoreClient(authz_server.uri, user="alice") as alice, \
            MetastoreClient(authz_server.uri, user="bob") as bob:
        db = unique("cons")
        root.create_database(hms.Database(name=db, description="", locationUri=None, parameters={}))
        root.create_table(_table(db, "t", [("a", "int"), ("b", "int")]))  # owned by alice
        add = hms.AddPrimaryKeyRequest(primaryKeyCols=[pk(db, "t", "a", 1, "t_pk")])
        with pytest.raises(hms.MetaException, match="does not have following privileges"):
            bob.forward("add_primary_key", add)
        alice.forward("add_primary_key", add)
        read = hms.PrimaryKeysRequest(db_name=db, tbl_name="t")
        with pytest.raises(hms.MetaException, match="does not have following privileges"):
            bob.forward("get_primary_keys", read)
        with pytest.raises(hms.MetaException, match="does not have following privileges"):
            bob.forward("get_all_table_constraints", hms.AllTableConstraintsRequest(dbName=db, tblName="t",
                                                                                    catName="hive"))
        with pytest.raises(hms.MetaException, match="does not have following privileges"):
            bob.forward("drop_constraint", hms.DropConstraintRequest(dbname=db, tablename="t",
                                                                     constraintname="t_pk"))
        assert [x.pk_name for x in alice.forward("get_primary_keys", read).primaryKeys] == ["t_pk"]
        with pytest.raises(hms.MetaException, match="does not have following privileges"):
            bob.forward("create_table_with_constraints", _table(db, "u", [("a", "int")]),
                        [pk(db, "u", "a", 1, "u_pk")], None, None, None, None, None)
        alice.forward("drop_constraint", hms.DropConstraintRequest(dbname=db, tablename="t", constraintname="t_pk"))
        assert alice.forward("get_primary_keys", read).primaryKeys == []
