"""metastore.core.hive_expr: Hive's Kryo-serialized partition expressions, read into the partition-filter AST.

The expressions are made by Hive 2.3.10 itself: tests/java/HiveExprCases.java builds ExprNodeDesc trees as Hive's
type checker, partition pruner and DROP PARTITION analyzer build them and serializes them with Hive's
SerializationUtilities (the jars of the pyspark wheel). It is compiled and run once; its output is cached under
build/ (git-ignored), keyed by the source and the jars. Every case must decode to the filter it means, or be
refused with HiveExprError; broken, truncated, oversized and hostile bytes are refused with HiveExprError too.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from metastore.core import hive_expr
from metastore.core.filters import And, Between, Compare, In, Like, Node, Not, Or, like_matcher
from metastore.core.hive_expr import ExprLimits, HiveExprError, decode

from conftest import ROOT

JAVA_SOURCE = ROOT / "tests" / "java" / "HiveExprCases.java"
JVM_FLAGS = ["-XX:+UnlockDiagnosticVMOptions", "-XX:-BytecodeVerificationRemote",
             *(f"--add-opens=java.base/{p}=ALL-UNNAMED"
               for p in ("java.lang", "java.lang.reflect", "java.util", "java.net", "java.io", "java.nio"))]
D = "__HIVE_DEFAULT_PARTITION__"


def _dated(node: Compare | Between) -> And:
    """A comparison of a date column: the default partition (a NULL date to Hive) is excluded."""
    return And((node, Compare(node.key, "!=", D)))


# name -> the filter the case means; None: refused (no exact translation).
EXPECTED: dict[str, Node | None] = {
    "eq_string": Compare("ds", "=", "2024-01-01"),
    "eq_int": Compare("hr", "=", 3),
    "eq_reversed": Compare("hr", "=", 3),
    "ne_string": Compare("ds", "!=", "x"),
    "lt_int": Compare("hr", "<", 10),
    "le_int": Compare("hr", "<=", 10),
    "gt_string": Compare("ds", ">", "2024"),
    "ge_int": Compare("hr", ">=", -5),
    "gt_reversed": Compare("hr", "<", 7),
    "eq_bigint": Compare("big", "=", 9_000_000_000),
    "eq_smallint": Compare("sm", "=", 12),
    "eq_tinyint": Compare("ti", "=", -3),
    "bigint_col_int_const": Compare("big", "<", 100),
    "eq_date": _dated(Compare("d", "=", "2024-03-05")),
    "ge_date": _dated(Compare("d", ">=", "1999-12-31")),
    "not_le_date": _dated(Compare("d", ">", "2024-01-01")),
    "date_tokyo": _dated(Compare("d", "=", "2024-03-05")),
    "date_kolkata": _dated(Compare("d", "=", "2024-03-05")),
    "date_los_angeles": _dated(Compare("d", "=", "2024-03-05")),
    "date_auckland_winter": _dated(Compare("d", "=", "2024-07-01")),
    "refuse_date_kiritimati": None,
    "date_1583": _dated(Compare("d", "=", "1583-01-01")),
    "date_9999": _dated(Compare("d", "=", "9999-12-31")),
    "date_col_string_const": _dated(Compare("d", "=", "2024-03-05")),
    "refuse_date_col_odd_string": None,
    "eq_varchar": Compare("vc", "=", "abc"),
    "eq_unicode": Compare("ds", "=", "d\u00e9j\u00e0 \u4e2d\u6587 \U0001f600"),
    "eq_empty": Compare("ds", "=", ""),
    "eq_one_char": Compare("ds", "=", "a"),
    "eq_long_string": Compare("ds", "=", "abcdefghij" * 40),
    "and2": And((Compare("ds", "=", "a"), Compare("hr", "=", 1))),
    "and3": And((Compare("ds", "=", "a"), Compare("hr", "=", 1), Compare("region", "=", "eu"))),
    "or2": Or((Compare("ds", "=", "a"), Compare("ds", "=", "b"))),
    "not_eq": Not(Compare("ds", "=", "a")),
    "nested": Or((And((Compare("ds", "=", "a"), Not(Compare("hr", "<", 5)))),
                  And((Compare("ds", "=", "b"), Compare("hr", ">", 20))))),
    "shared_string": And((Compare("ds", "=", "same"), Compare("region", "=", "same"))),
    "in_string": In("ds", ("a", "b", "c")),
    "in_int": In("hr", (1, 2, 3)),
    "not_in": Not(In("ds", ("a", "b"))),
    "between_int": Between("hr", 1, 5),
    "not_between_string": Between("ds", "2024-01-01", "2024-12-31", negated=True),
    "like_prefix": Like("ds", "2024\\-.*"),
    "like_one": Like("ds", "2024\\-0.\\-01"),
    "like_meta": Like("ds", "a\\.b\\*c.*"),
    "like_escape": Like("ds", "100\\%"),
    "is_null": Compare("ds", "=", D),
    "is_not_null": Compare("ds", "!=", D),
    "cast_string_identity": Compare("ds", "=", "a"),
    "cast_int_widen": Compare("hr", "=", 4),
    "drop_spec": And((Compare("ds", "=", "2024-01-01"), Compare("hr", "<", 12), Compare("region", "=", D))),
    "drop_default_int": Compare("hr", "!=", D),
    "refuse_cast_int_to_string": None,
    "refuse_cast_to_double": None,
    "refuse_cast_narrow": None,
    "refuse_upper": None,
    "refuse_date_honolulu": None,
    "refuse_date_auckland_summer": None,
    "refuse_date_julian": None,
    "refuse_decimal": None,
    "refuse_double": None,
    "refuse_char": None,
    "refuse_timestamp": None,
    "refuse_string_col_int_const": None,
    "refuse_int_col_string_const": None,
    "refuse_col_col": None,
    "refuse_const_const": None,
    "refuse_null_const": None,
    "refuse_like_column_pattern": None,
    "refuse_in_column": None,
    "refuse_concat": None,
    "not_deep": None,  # checked in test_nesting
    "refuse_too_deep": None,
}

# What Hive's UDFLike matches for each LIKE case: (value, matches).
LIKE_SAMPLES = {
    "like_prefix": [("2024-05-01", True), ("2024-", True), ("2023-05-01", False), ("x2024-1", False)],
    "like_one": [("2024-05-01", True), ("2024-12-01", False), ("2024-0x-01", True)],
    "like_meta": [("a.b*c", True), ("a.b*cdef", True), ("axb*c", False), ("a.bbc", False)],
    "like_escape": [("100%", True), ("1000", False), ("100%x", False)],
}


def _unavailable(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is not available, and CI must run the Hive expression tests")
    pytest.skip(f"{what} is not available")


def _jars() -> Path:
    pyspark = pytest.importorskip("pyspark")
    jars = Path(pyspark.__file__).parent / "jars"
    if not (jars / "hive-exec-2.3.10-core.jar").exists():
        _unavailable(f"hive-exec-2.3.10-core.jar under {jars}")
    return jars


@pytest.fixture(scope="module")
def cases() -> dict[str, bytes]:
    """name -> Hive's bytes for every case of HiveExprCases.java (compiled and run once, cached under build/)."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        _unavailable("javac")
    jars = _jars()
    key = hashlib.sha256(JAVA_SOURCE.read_bytes() + "\n".join(sorted(p.name for p in jars.glob("*.jar"))).encode())
    out_dir = ROOT / "build" / "hive-expr-cases" / key.hexdigest()[:16]
    out_file = out_dir / "cases.txt"
    if not out_file.exists():
        classes = out_dir / "classes"
        classes.mkdir(parents=True, exist_ok=True)
        cp = f"{jars}/*"
        r = subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", cp, str(JAVA_SOURCE)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        r = subprocess.run(["java", *JVM_FLAGS, "-cp", f"{classes}:{cp}", "HiveExprCases"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        tmp = out_dir / f"cases.{os.getpid()}.tmp"
        tmp.write_text(r.stdout)
        tmp.replace(out_file)  # atomic: a concurrent run reads a whole file or none
    found: dict[str, bytes] = {}
    for line in out_file.read_text().splitlines():
        name, hexed, _text = line.split(" ", 2)
        found[name] = bytes.fromhex(hexed)
    return found


def test_every_case_has_an_expectation(cases: dict[str, bytes]) -> None:
    assert sorted(cases) == sorted(EXPECTED)


@pytest.mark.parametrize("name", [n for n in EXPECTED if n not in ("not_deep",)])
def test_case(cases: dict[str, bytes], name: str) -> None:
    expected = EXPECTED[name]
    if expected is None:
        with pytest.raises(HiveExprError):
            decode(cases[name])
    else:
        assert decode(cases[name]) == expected


@pytest.mark.parametrize("name", sorted(LIKE_SAMPLES))
def test_like_means_what_hive_matches(cases: dict[str, bytes], name: str) -> None:
    node = decode(cases[name])
    assert isinstance(node, Like)
    match = like_matcher(node.pattern)
    assert [(value, match(value)) for value, _ in LIKE_SAMPLES[name]] == LIKE_SAMPLES[name]


def test_column_types(cases: dict[str, bytes]) -> None:
    """read() also gives the type the client gave each column, for the caller to check against the table."""
    assert hive_expr.read(cases["drop_spec"]).columns == {"ds": "string", "hr": "int", "region": "string"}
    assert hive_expr.read(cases["eq_varchar"]).columns == {"vc": "varchar(10)"}
    assert hive_expr.read(cases["date_col_string_const"]).columns == {"d": "date"}


def test_default_partition_name_is_the_clients(cases: dict[str, bytes]) -> None:
    assert decode(cases["is_null"], default_partition_name="__DEF__") == Compare("ds", "=", "__DEF__")


def test_nesting(cases: dict[str, bytes]) -> None:
    """40 nested NOTs decode; 150 exceed the default depth limit and are refused, as a smaller limit refuses 40."""
    node = decode(cases["not_deep"])
    depth = 0
    while isinstance(node, Not):
        node, depth = node.operand, depth + 1
    assert (depth, node) == (40, Compare("ds", "=", "a"))
    with pytest.raises(HiveExprError, match="nested deeper"):
        decode(cases["not_deep"], limits=ExprLimits(max_depth=60))
    with pytest.raises(HiveExprError, match="nested deeper"):
        decode(cases["refuse_too_deep"])


def test_limits(cases: dict[str, bytes]) -> None:
    data = cases["eq_long_string"]
    with pytest.raises(HiveExprError, match="more than 100"):
        decode(data, limits=ExprLimits(max_bytes=100))
    with pytest.raises(HiveExprError, match="400 characters, more than 399"):
        decode(data, limits=ExprLimits(max_string=399))
    assert decode(data, limits=ExprLimits(max_string=400)) == EXPECTED["eq_long_string"]
    with pytest.raises(HiveExprError, match="4 elements, more than 2"):
        decode(cases["in_string"], limits=ExprLimits(max_elements=2))
    with pytest.raises(HiveExprError):
        decode(b"")


def test_every_truncation_is_refused(cases: dict[str, bytes]) -> None:
    for name in ("nested", "not_between_string", "eq_unicode", "eq_date", "drop_spec"):
        data = cases[name]
        for n in range(len(data)):
            with pytest.raises(HiveExprError):
                decode(data[:n])
        with pytest.raises(HiveExprError, match="bytes after"):
            decode(data + b"\x00")


def test_mutations_never_crash(cases: dict[str, bytes]) -> None:
    """Every one-byte change of a few cases decodes to a filter or is refused: no other exception, no hang."""
    rng = random.Random(21)
    for name in ("and3", "between_int", "in_string", "like_escape", "eq_date"):
        data = bytearray(cases[name])
        for i in range(len(data)):
            for value in (0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF, rng.randrange(256)):
                mutated = bytearray(data)
                mutated[i] = value
                try:
                    decode(bytes(mutated))
                except HiveExprError:
                    pass


def test_garbage_is_refused() -> None:
    rng = random.Random(7)
    for size in (1, 2, 5, 17, 100, 1000, 10_000):
        for _ in range(20):
            with pytest.raises(HiveExprError):
                decode(bytes(rng.randrange(256) for _ in range(size)))
    with pytest.raises(HiveExprError):
        decode("not bytes")  # type: ignore[arg-type]


# Hand-made Kryo, for shapes Hive never writes: each must be refused early, whatever it claims.

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _ascii(text: str) -> bytes:
    raw = bytearray(text.encode("ascii"))
    raw[-1] |= 0x80
    return bytes(raw)


def _new_class(name_id: int, name: str) -> bytes:
    return b"\x01" + _varint(name_id) + _ascii(name)


LIST = _new_class(0, "java.util.ArrayList")


@pytest.mark.parametrize("data, message", [
    # the children list claims 4 billion elements
    (b"\x01" + LIST + b"\x01" + _varint(0xFFFFFFFF), "elements"),
    # a string claims a billion characters
    (b"\x01" + LIST + b"\x01\x01" + _new_class(1, hive_expr._EXPR_COLUMN) + b"\x01\x01" + b"\xff\xff\xff\xff\x0f",
     "characters"),
    # a back-reference to an object never read
    (b"\x01" + LIST + b"\x09", "unknown object"),
    # a reference to the object still being read (a cycle)
    (b"\x01" + LIST + b"\x02", "cyclic"),
    # an unknown class, with a long name full of control characters: the message stays short and printable
    (b"\x01" + _new_class(0, "x\x07" * 200) + b"\x01", "no reader"),
    # an unknown registered class id
    (b"\x01" + _varint(99), "registered class"),
    # a class name that is a back-reference to a name id never defined, followed by nothing
    (b"\x01\x01\x05", "end of input"),
])
def test_hostile_shapes(data: bytes, message: str) -> None:
    with pytest.raises(HiveExprError, match=message) as err:
        decode(data)
    text = str(err.value)
    assert len(text) < 300 and text.isprintable()


def test_a_list_of_many_back_references_is_linear() -> None:
    """A list whose 100,000 elements each cost one byte (a back-reference) is read, not multiplied."""
    first = b"\x03\x01" + _ascii("ab")  # a new string (reference id 2: the root is 0, the list 1)
    data = b"\x01" + LIST + b"\x01" + _varint(100_000) + first + b"\x03\x04" * 99_999
    with pytest.raises(HiveExprError):
        decode(data)


# What Hive 2.3.10's own CLI sent (tests/hive_expr_captured.txt): statement -> the filter, None when refused.
CAPTURED: dict[str, Node | None] = {
    "SELECT * FROM p WHERE ds = '2024-01-01'": Compare("ds", "=", "2024-01-01"),
    "SELECT * FROM p WHERE hr = 3": Compare("hr", "=", 3),
    "SELECT * FROM p WHERE hr = '3'": Compare("hr", "=", 3),  # Hive's type checker made the constant an int
    "SELECT * FROM p WHERE ds = 5": None,  # Hive compares a string with an int as doubles
    "SELECT * FROM p WHERE hr IN (1,2)": In("hr", (1, 2)),
    "SELECT * FROM p WHERE ds IN ('a','b')": In("ds", ("a", "b")),
    "SELECT * FROM p WHERE hr BETWEEN 1 AND 5": Between("hr", 1, 5),
    "SELECT * FROM p WHERE ds NOT BETWEEN 'a' AND 'b'": Not(Between("ds", "a", "b")),
    "SELECT * FROM p WHERE ds LIKE '2024%'": Like("ds", "2024.*"),
    "SELECT * FROM p WHERE d = '2024-01-01'": _dated(Compare("d", "=", "2024-01-01")),
    "SELECT * FROM p WHERE d = DATE '2024-01-01'": _dated(Compare("d", "=", "2024-01-01")),
    "SELECT * FROM p WHERE big > 3": Compare("big", ">", 3),
    "SELECT * FROM p WHERE ds = '2024-01-01' AND x = 1": Compare("ds", "=", "2024-01-01"),
    "SELECT * FROM p WHERE ds IS NULL": Compare("ds", "=", D),
    "SELECT * FROM p WHERE NOT (hr < 5) OR ds <> 'x'": Or((Compare("hr", ">=", 5), Compare("ds", "!=", "x"))),
    "SELECT * FROM p WHERE upper(ds) = 'A'": None,
    "SELECT * FROM p WHERE cast(hr as string) = '1'": None,
    "SELECT * FROM p WHERE ds NOT IN ('a', 'b') AND hr >= 2": And((Not(In("ds", ("a", "b"))),
                                                                    Compare("hr", ">=", 2))),
    "ALTER TABLE p DROP PARTITION (ds='2024-01-01', hr=1, d='2024-01-01', big=5)": And((
        Compare("ds", "=", "2024-01-01"), Compare("hr", "=", 1), _dated(Compare("d", "=", "2024-01-01")),
        Compare("big", "=", 5))),
    "ALTER TABLE p DROP PARTITION (hr < 3)": Compare("hr", "<", 3),
    "ALTER TABLE p DROP PARTITION (ds='__HIVE_DEFAULT_PARTITION__')": Compare("ds", "=", D),
    "ALTER TABLE p DROP PARTITION (d > '2023-01-01')": _dated(Compare("d", ">", "2023-01-01")),
    "SELECT * FROM p WHERE ds LIKE 'a\\_b%'": Like("ds", "a\\_b.*"),
    "SELECT * FROM p WHERE hr BETWEEN '1' AND '5'": None,  # an int between strings: doubles in Hive
    "SELECT * FROM p WHERE d BETWEEN '2024-01-01' AND '2024-02-01'": _dated(Between("d", "2024-01-01",
                                                                                    "2024-02-01")),
    "SELECT * FROM p WHERE d IN ('2024-01-01', '2024-01-02')": None,  # IN's common type is not read here
    "SELECT * FROM p WHERE ds = 'a' OR hr = 2": Or((Compare("ds", "=", "a"), Compare("hr", "=", 2))),
    "SELECT * FROM p WHERE ds >= '2024' AND ds < '2025'": And((Compare("ds", ">=", "2024"),
                                                               Compare("ds", "<", "2025"))),
    "SELECT * FROM p WHERE big IN (1, 2)": In("big", (1, 2)),
    "SELECT * FROM p WHERE hr <> 1": Compare("hr", "!=", 1),
    "SELECT * FROM p WHERE ds IS NOT NULL": Compare("ds", "!=", D),
    "SELECT * FROM p WHERE ds = 'd\u00e9j\u00e0 vu'": Compare("ds", "=", "d\u00e9j\u00e0 vu"),
    "SELECT * FROM p WHERE ds IN ('a') AND NOT (ds LIKE '%x%')": And((In("ds", ("a",)),
                                                                     Not(Like("ds", ".*x.*")))),
    "SELECT * FROM p WHERE 2 < hr": Compare("hr", ">", 2),
    "SELECT * FROM p WHERE big = 9000000000": Compare("big", "=", 9_000_000_000),
    "ALTER TABLE p DROP PARTITION (hr='__HIVE_DEFAULT_PARTITION__')": Compare("hr", "=", D),
    "ALTER TABLE p DROP PARTITION (ds='a', ds='b')": And((Compare("ds", "=", "a"), Compare("ds", "=", "b"))),
}


def captured_requests() -> list[tuple[str, bytes]]:
    """(statement, expression bytes) of tests/hive_expr_captured.txt (also read by test_partitions_by_expr)."""
    rows = []
    for line in (ROOT / "tests" / "hive_expr_captured.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            statement, hexed = line.split("\t")
            rows.append((statement, bytes.fromhex(hexed)))
    return rows


def test_captured_from_hives_cli() -> None:
    rows = captured_requests()
    assert [s for s, _ in rows] == list(CAPTURED)
    for statement, data in rows:
        expected = CAPTURED[statement]
        if expected is None:
            with pytest.raises(HiveExprError):
                decode(data)
        else:
            assert decode(data) == expected, statement


class _TextRecorder(hive_expr._Reader):
    """Records where each Text's textLength field (Hadoop 3.3's) lies, to make the older layout's bytes."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data, ExprLimits())
        self.ints: list[tuple[int, int]] = []
        self.spans: list[tuple[int, int]] = []

    def zigzag_int(self) -> int:
        start = self.pos
        value = super().zigzag_int()
        self.ints.append((start, self.pos))
        return value

    def body(self, cls: str) -> object:
        value = super().body(cls)
        if cls == "org.apache.hadoop.io.Text":
            self.spans.append(self.ints[-1])
        return value


@pytest.mark.parametrize("name", ["not_between_string", "between_int"])
def test_text_of_older_hadoop(cases: dict[str, bytes], name: str) -> None:
    """A client on Hadoop before 3.3 writes Text without textLength: the same expression is read either way."""
    data = cases[name]
    recorder = _TextRecorder(data)
    recorder.object_of(hive_expr._EXPR_FUNC)
    old = bytearray(data)
    for start, end in reversed(recorder.spans):
        del old[start:end]
    if name == "not_between_string":
        assert recorder.spans  # the string constants' inspectors hold Text
    assert decode(bytes(old)) == EXPECTED[name]


# The decoded filters through the store's SQL translation (SQLite), on partition values, select what Hive selects.
ROWS = [("2024-01-01", "1", "2024-01-01"), ("2024-05-01", "5", "2024-03-05"), ("a.b*c", "12", "1999-12-31"),
        ("100%", "3", "2024-03-06"), ("a_b", "-5", "2023-12-31"), (D, D, D)]
SELECTED = {  # case -> the ds values of the rows Hive's evaluation keeps
    "eq_string": {"2024-01-01"},
    "lt_int": {"2024-01-01", "2024-05-01", "100%", "a_b"},  # hr < 10; the default partition is NULL
    "ge_int": {"2024-01-01", "2024-05-01", "a.b*c", "100%", "a_b"},
    "in_int": {"2024-01-01", "100%"},
    "between_int": {"2024-01-01", "2024-05-01", "100%"},
    "not_between_string": {"a.b*c", "100%", "a_b", D},  # the store does not read the default name as NULL
    "like_prefix": {"2024-01-01", "2024-05-01"},
    "like_meta": {"a.b*c"},
    "like_escape": {"100%"},
    "eq_date": {"2024-05-01"},
    "ge_date": {"2024-01-01", "2024-05-01", "a.b*c", "100%", "a_b"},  # not the default partition
    "not_le_date": {"2024-05-01", "100%"},
    "date_col_string_const": {"2024-05-01"},
    "is_null": {D},
    "drop_default_int": {"2024-01-01", "2024-05-01", "a.b*c", "100%", "a_b"},
}


@pytest.mark.parametrize("name", sorted(SELECTED))
def test_selects_through_the_store_sql(cases: dict[str, bytes], name: str) -> None:
    import sqlalchemy as sa

    from metastore.store.filter_sql import KeyColumn, to_sql

    meta = sa.MetaData()
    t = sa.Table("parts", meta, sa.Column("ds", sa.String), sa.Column("hr", sa.String), sa.Column("d", sa.String))
    engine = sa.create_engine("sqlite://")
    meta.create_all(engine)
    columns = {"ds": KeyColumn(t.c.ds), "hr": KeyColumn(t.c.hr, integral=True), "d": KeyColumn(t.c.d)}
    with engine.begin() as conn:
        conn.execute(t.insert(), [{"ds": ds, "hr": hr, "d": d} for ds, hr, d in ROWS])
        where = to_sql(decode(cases[name]), columns)
        got = {row.ds for row in conn.execute(sa.select(t.c.ds).where(where))}
    assert got == SELECTED[name]


def test_shared_subtrees_are_walked_within_a_budget(cases: dict[str, bytes]) -> None:
    """Back-references let a few bytes name one subtree many times (X1 = X0 AND X0, X2 = X1 AND X1, ...): 40
    levels would be 2^40 nodes to walk; the walk stops at its budget instead."""
    root = hive_expr._read(cases["and3"], hive_expr._LIMITS, old_text=False)
    node = root
    for _ in range(40):
        node = hive_expr._Obj(root.cls, dict(root.fields, chidren=[node, node]))
    meaning = hive_expr._Meaning(hive_expr.DEFAULT_PARTITION_NAME, 1000)
    with pytest.raises(HiveExprError, match=f"more than {hive_expr.MAX_VISITS} nodes"):
        meaning.node(node)
    assert meaning.visits == hive_expr.MAX_VISITS + 1
    shallow = root
    for _ in range(3):  # 8 copies of and3's operands: within the budget, read as one flat AND
        shallow = hive_expr._Obj(root.cls, dict(root.fields, chidren=[shallow, shallow]))
    assert hive_expr._Meaning(hive_expr.DEFAULT_PARTITION_NAME, 1000).node(shallow) == And(
        EXPECTED["and3"].operands * 8)  # type: ignore[attr-defined]
