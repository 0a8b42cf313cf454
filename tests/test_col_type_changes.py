"""Column type changes on alter_table (issue 21): Hive refuses a change its types do not convert, while
hive.metastore.disallow.incompatible.col.type.changes is true (Hive's default).

A matrix of (old columns, new columns) alters (primitive widening and narrowing, string <-> numeric, decimal
precision, char/varchar lengths, date/timestamp, complex types, column count changes, type strings Hive cannot
parse) runs through alter_table, alter_table_with_environment_context and alter_table_with_cascade against the
reference Hive 2.3 metastore and our server: the same outcome (accepted, or the same exception and message).
Hive does not check partitions' columns, views' or partition keys' the same way: compared too. The store plays no
part (sqlite only); a server started with the setting false accepts every change.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from metastore.core import hive_types
from metastore.thrift import hms
from metastore.thrift.client import MetastoreClient

from conftest import Database, Server, unique
from reference import Steps, reference, run_fixtures, text_storage  # noqa: F401  (the session fixture)

pytestmark = [pytest.mark.reference]

KEY = "hive.metastore.disallow.incompatible.col.type.changes"


@pytest.fixture(scope="module", params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


# (old type, new type) of a one-column table
PAIRS: list[tuple[str, str]] = [
    # same, and renamed-only
    ("int", "int"), ("string", "string"), ("array<int>", "array<int>"),
    # primitive widening
    ("tinyint", "smallint"), ("smallint", "int"), ("int", "bigint"), ("bigint", "float"), ("int", "double"),
    ("float", "double"), ("int", "decimal(10,2)"), ("bigint", "decimal(38,0)"), ("decimal(10,2)", "double"),
    ("decimal(10,2)", "float"), ("tinyint", "double"), ("void", "int"), ("void", "array<int>"),
    # primitive narrowing
    ("bigint", "int"), ("int", "smallint"), ("smallint", "tinyint"), ("double", "float"), ("double", "int"),
    ("float", "decimal(10,2)"), ("decimal(10,2)", "int"), ("double", "decimal(38,10)"), ("int", "void"),
    # string <-> numeric
    ("int", "string"), ("double", "string"), ("decimal(10,2)", "string"), ("tinyint", "varchar(3)"),
    ("bigint", "char(2)"), ("string", "int"), ("string", "double"), ("varchar(10)", "double"),
    ("char(5)", "double"), ("string", "float"), ("string", "decimal(10,2)"), ("string", "bigint"),
    # decimal precision and scale
    ("decimal(10,2)", "decimal(5,0)"), ("decimal(5,0)", "decimal(38,10)"), ("decimal", "decimal(12,4)"),
    ("decimal(10,2)", "decimal"),
    # varchar / char lengths
    ("varchar(10)", "varchar(5)"), ("varchar(5)", "varchar(10)"), ("varchar(5)", "string"), ("string", "varchar(5)"),
    ("char(5)", "varchar(10)"), ("varchar(10)", "char(3)"), ("char(10)", "char(1)"), ("string", "char(255)"),
    # date / timestamp / others
    ("date", "timestamp"), ("timestamp", "date"), ("date", "string"), ("timestamp", "varchar(30)"),
    ("string", "date"), ("string", "timestamp"), ("int", "timestamp"), ("timestamp", "bigint"),
    ("boolean", "int"), ("int", "boolean"), ("boolean", "string"), ("string", "boolean"), ("binary", "string"),
    ("string", "binary"), ("interval_day_time", "string"),
    # complex types
    ("array<int>", "array<bigint>"), ("array<string>", "array<varchar(10)>"),
    ("map<string,int>", "map<string,bigint>"), ("map<string,int>", "map<string,int>"),
    ("struct<a:int>", "struct<a:int,b:string>"), ("struct<a:int>", "struct<A:int>"),
    ("struct<a:int>", "struct<b:int>"), ("struct<a:int>", "string"), ("string", "array<string>"),
    ("array<int>", "string"), ("uniontype<int,string>", "uniontype<int,string>"),
    ("uniontype<int,string>", "uniontype<string,int>"), ("array<decimal(5)>", "array<decimal(10,0)>"),
    ("map<int,array<string>>", "map<int,array<string>>"),
    # type strings Hive's parser refuses (the first word is a type: create and alter's own validation accept them)
    ("int", "varchar"), ("int", "char"), ("int", "varchar(0)"), ("int", "varchar(70000)"), ("int", "char(300)"),
    ("int", "varchar(x)"), ("int", "decimal(40,2)"), ("int", "decimal(5,6)"), ("int", "decimal(10,2,3)"),
    ("int", "decimal()"), ("int", "array<int"), ("int", "int string"), ("int", "struct<a int>"),
    ("int", "array<int>x"), ("int", "map<int>"), ("int", "datetime"), ("varchar", "varchar"), ("int", "decimal(5)"),
    ("int", "varchar(2,3)"), ("int", "array<integer>"),
]

# (label, old columns, new columns)
COUNTS: list[tuple[str, list[tuple[str, str]], list[tuple[str, str]]]] = [
    ("add column", [("a", "int")], [("a", "int"), ("b", "string")]),
    ("add columns narrowing", [("a", "bigint")], [("a", "int"), ("b", "string")]),
    ("drop last column", [("a", "int"), ("b", "string")], [("a", "int")]),
    ("drop first column shifts", [("a", "string"), ("b", "int")], [("b", "int")]),
    ("drop first column compatible", [("a", "int"), ("b", "string")], [("b", "string")]),
    ("drop every column", [("a", "int"), ("b", "string")], []),
    ("two refused", [("a", "bigint"), ("b", "string"), ("c", "double")],
     [("x", "int"), ("b", "string"), ("z", "float")]),
    ("renamed", [("a", "int"), ("b", "string")], [("x", "int"), ("y", "string")]),
]

METHODS = ("alter_table", "alter_table_with_environment_context", "alter_table_with_cascade")


def _table(db: str, name: str, cols: list[tuple[str, str]], keys: tuple[tuple[str, str], ...] = (),
           kind: str = "MANAGED_TABLE") -> Any:
    t = hms.Table(tableName=name, dbName=db, owner="alice", sd=text_storage(cols), parameters={}, tableType=kind,
                  partitionKeys=[hms.FieldSchema(name=k, type=v, comment=None) for k, v in keys])
    if kind == "VIRTUAL_VIEW":
        t.viewOriginalText = t.viewExpandedText = "select 1"
    return t


def outcome(fn: Callable[[], Any]) -> Any:
    try:
        fn()
        return ("ok",)
    except Exception as e:  # noqa: BLE001 - the answer is what is compared
        return (type(e).__name__, getattr(e, "message", None) or str(e))


class Script(Steps):
    def __init__(self, c: MetastoreClient, db: str) -> None:
        super().__init__(c, outcome)
        self.db, self.n = db, 0

    def alter(self, label: str, old: list[tuple[str, str]], new: list[tuple[str, str]], method: str = "alter_table",
              keys: tuple[tuple[str, str], ...] = (), new_keys: tuple[tuple[str, str], ...] | None = None,
              kind: str = "MANAGED_TABLE") -> None:
        self.n += 1
        name = f"t{self.n}"
        self.c.create_table(_table(self.db, name, old, keys, kind))
        t = self.c.get_table(self.db, name)
        t.sd.cols = [hms.FieldSchema(name=n, type=ty, comment=None) for n, ty in new]
        if new_keys is not None:
            t.partitionKeys = [hms.FieldSchema(name=k, type=v, comment=None) for k, v in new_keys]
        args: tuple[Any, ...] = (self.db, name, t)
        if method == "alter_table_with_environment_context":
            args += (hms.EnvironmentContext(properties={"a": "b"}),)
        elif method == "alter_table_with_cascade":
            args += (True,)
        self(label, method, *args)


def script(c: MetastoreClient, db: str) -> dict[str, Any]:
    c.create_database(hms.Database(name=db, description="", parameters={}))
    run = Script(c, db)
    for old, new in PAIRS:
        run.alter(f"{old} -> {new}", [("c", old)], [("c", new)])
    for label, old_cols, new_cols in COUNTS:
        run.alter(label, old_cols, new_cols)
    for method in METHODS[1:]:
        run.alter(f"{method} narrowing", [("c", "bigint")], [("c", "int")], method)
        run.alter(f"{method} widening", [("c", "int")], [("c", "bigint")], method)
        run.alter(f"{method} partitioned narrowing", [("c", "bigint")], [("c", "int")], method, (("k", "string"),))
    run.alter("view narrowing", [("c", "bigint")], [("c", "int")], kind="VIRTUAL_VIEW")
    run.alter("partition key narrowing", [("c", "int")], [("c", "int")], keys=(("k", "bigint"),),
              new_keys=(("k", "int"),))
    run.alter("partition key to string", [("c", "int")], [("c", "int")], keys=(("k", "int"),),
              new_keys=(("k", "string"),))
    # a partition's own columns: Hive's alter_partition does not compare them
    c.create_table(_table(db, "p", [("c", "bigint")], (("k", "string"),)))
    t = c.get_table(db, "p")
    sd = copy.deepcopy(t.sd)
    sd.location = None
    c.add_partition(hms.Partition(values=["1"], dbName=db, tableName="p", sd=sd, parameters={}))
    part = c.get_partition(db, "p", ["1"])
    part.sd.cols = [hms.FieldSchema(name="c", type="int", comment=None)]
    run("partition narrowing", "alter_partition", db, "p", part)
    run.steps["partition narrowed"] = [(f.name, f.type) for f in c.get_partition(db, "p", ["1"]).sd.cols]
    return run.steps


reference_run, our_run = run_fixtures("coltype", script)


def _labels() -> list[str]:
    return ([f"{o} -> {n}" for o, n in PAIRS] + [x[0] for x in COUNTS]
            + [f"{m} {k}" for m in METHODS[1:] for k in ("narrowing", "widening", "partitioned narrowing")]
            + ["view narrowing", "partition key narrowing", "partition key to string", "partition narrowing",
               "partition narrowed"])


@pytest.mark.parametrize("label", _labels())
def test_same_as_hive(label: str, reference_run: dict[str, Any], our_run: dict[str, Any]) -> None:
    assert our_run[label] == reference_run[label]


def test_every_step_compared(our_run: dict[str, Any]) -> None:
    assert sorted(our_run) == sorted(_labels())


def test_refusals_seen(our_run: dict[str, Any]) -> None:
    """The matrix exercises both answers and both errors (a refusal, and a type Hive cannot parse)."""
    kinds = {v[0] for v in our_run.values()}
    assert {"ok", "InvalidOperationException", "MetaException"} <= kinds
    assert our_run["bigint -> int"] == ("InvalidOperationException", hive_types.incompatible_message(["c"]))
    assert our_run["two refused"] == ("InvalidOperationException", hive_types.incompatible_message(["x", "z"]))


def test_connection_setting(server: Server) -> None:
    """Hive 3's: a connection's setMetaConf of the key governs its own alters (Hive 2.3 refuses the key there);
    another connection keeps the server's setting."""
    db = unique("metaconf")
    with MetastoreClient(server.uri) as c, MetastoreClient(server.uri) as other:
        c.create_database(hms.Database(name=db, description="", parameters={}))
        try:
            assert c.forward("getMetaConf", KEY) == "true"
            c.forward("setMetaConf", "metastore.disallow.incompatible.col.type.changes", "false")
            run = Script(c, db)
            run.alter("lenient", [("c", "bigint")], [("c", "int")])
            theirs = Script(other, db)
            theirs.n = 100
            theirs.alter("strict", [("c", "bigint")], [("c", "int")])
            c.forward("setMetaConf", KEY, "TRUE")
            run.alter("strict again", [("c", "bigint")], [("c", "int")])
            refused = ("InvalidOperationException", hive_types.incompatible_message(["c"]))
            assert (run.steps, theirs.steps) == ({"lenient": ("ok",), "strict again": refused}, {"strict": refused})
        finally:
            c.drop_database(db, True, True)



def test_call_environment_turns_the_check_off(server: Server) -> None:
    """An alter whose environment context sets the key false is not checked (what `metastore repl load` sends: the
    target takes the changes its source accepted); one setting it otherwise is."""
    from metastore.repl.load import NO_STATS

    db = unique("envconf")
    with MetastoreClient(server.uri) as c:
        c.create_database(hms.Database(name=db, description="", parameters={}))
        try:
            for n, props in enumerate(({KEY: "true", "a": "b"}, dict(NO_STATS.properties or {}))):
                c.create_table(_table(db, f"t{n}", [("c", "bigint")], (), "MANAGED_TABLE"))
                t = c.get_table(db, f"t{n}")
                t.sd.cols = [hms.FieldSchema(name="c", type="int", comment=None)]
                if n == 0:
                    with pytest.raises(hms.InvalidOperationException, match="incompatible"):
                        c.alter_table(db, f"t{n}", t, hms.EnvironmentContext(properties=props))
                else:
                    c.alter_table(db, f"t{n}", t, hms.EnvironmentContext(properties=props))
                    assert c.get_table(db, f"t{n}").sd.cols[0].type == "int"
        finally:
            c.drop_database(db, True, True)


@pytest.fixture(scope="module")
def lenient(database: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the setting false (Hive's key in the environment's form)."""
    srv = Server(database, tmp_path_factory.mktemp("lenient"),
                 env={"METASTORE_DISALLOW_INCOMPATIBLE_COL_TYPE_CHANGES": "false"}).start()
    yield srv
    srv.stop()


def test_server_setting_off(lenient: Server) -> None:
    db = unique("lenient")
    with MetastoreClient(lenient.uri) as c:
        c.create_database(hms.Database(name=db, description="", parameters={}))
        try:
            assert c.forward("getMetaConf", KEY) == "false"
            run = Script(c, db)
            run.alter("narrowing", [("c", "bigint"), ("d", "string")], [("c", "int"), ("d", "array<int>")])
            run.alter("unparsable", [("c", "int")], [("c", "varchar")])
            assert run.steps == {"narrowing": ("ok",), "unparsable": ("ok",)}
            assert [f.type for f in c.get_table(db, "t1").sd.cols] == ["int", "array<int>"]
        finally:
            c.drop_database(db, True, True)


def test_parser_units() -> None:
    """The parsed forms Hive compares: parameters normalized, struct names without case."""
    p = hive_types.parse_type
    assert p("decimal") == p("decimal(10,0)") == p("decimal(7)")
    assert p("struct<A:int,b:array<string>>") == p("struct<a:int,B:array<string>>")
    assert p("varchar(10)") != p("varchar(11)")
    assert hive_types.compatible("decimal(10,2)", "decimal(5,0)")  # Hive compares categories only
    assert not hive_types.compatible("array<int>", "array<bigint>")
    with pytest.raises(hive_types.HiveTypeError) as e:
        p("map<int,string")
    assert e.value.java_text == "java.lang.IllegalArgumentException: Error: > expected at the end of 'map<int,string'"


def test_a_type_nested_thousands_deep_is_refused_with_the_reason(server: Server) -> None:
    """A column type nested 5,000 levels deep is refused with a MetaException naming the limit (it was a
    RecursionError the handler reported as unexpected), and the server serves on."""
    db = unique("deep")
    with MetastoreClient(server.uri) as c:
        c.create_database(hms.Database(name=db, description="", parameters={}))
        try:
            c.create_table(_table(db, "t", [("c", "int")], (), "MANAGED_TABLE"))
            t = c.get_table(db, "t")
            t.sd.cols = [hms.FieldSchema(name="c", type="array<" * 5000 + "int" + ">" * 5000, comment=None)]
            with pytest.raises(hms.MetaException, match=f"nested deeper than {hive_types.MAX_DEPTH} levels"):
                c.alter_table(db, "t", t)
            assert c.get_table(db, "t").sd.cols[0].type == "int"
        finally:
            c.drop_database(db, True, True)
