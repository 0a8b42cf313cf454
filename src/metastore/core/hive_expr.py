"""Hive's serialized partition expressions (the ``expr`` of ``get_partitions_by_expr`` and of
``drop_partitions_req``'s ``DropPartitionsExpr``), read into the partition-filter AST of ``core.filters``.

What a client sends
    Hive's client (``Hive.getPartitionsByExpr``, ``DDLSemanticAnalyzer`` for ``ALTER TABLE ... DROP PARTITION``)
    serializes an ``ExprNodeGenericFuncDesc`` tree with ``SerializationUtilities.serializeExpressionToKryo``:
    ``kryo.writeObject(output, expr)`` on a Kryo instance with Kryo's defaults plus a few registrations. The facts
    this reader relies on, checked on the bytes of Hive 2.3.10 as shipped in the pyspark wheel (running
    kryo-shaded 4.0.3) and on requests of Hive's own CLI (tests/hive_expr_captured.txt). A Hive 2.3 install
    runs Kryo 3.0.3, whose encoding of these serializers Kryo 4 kept; that was not checked here (no Kryo 3 jar):

    * references are on (Kryo's default before 5): every object of a class other than the eight primitive
      wrappers is preceded by a varint, 1 for a new object (which takes the next reference id, in the order the
      markers are read) or ``id + 2`` for one seen before (Hive shares TypeInfo singletons, enum constants and
      equal strings between nodes, so back-references are common); 0 is null where a null may stand;
    * classes are not registration-required: a class is written as a varint, 0 for null, ``id + 2`` for a
      registered class (Kryo's own: int/Integer 0, String 1, float 2, boolean 3, byte 4, char 5, short 6, long 7,
      double 8, void 9; then Hive's registrations, of which only ``java.sql.Date`` (10) matters here), or 1
      followed by a name id and, the first time that id appears, the class name as a Kryo string;
    * strings: a run of ASCII bytes with the high bit set on the last one (2 to 63 ASCII characters), or a
      length (characters + 1, 0 meaning null) in Kryo's "UTF-8 length" varint (6 bits in the first byte, flag
      0x80, continuation 0x40) followed by the UTF-16 code units, each as 1 to 3 bytes;
    * an object of any other class is written by Kryo's ``FieldSerializer``: its non-static, non-transient
      fields of the class and its superclasses, sorted by name, with no tags or lengths. A field whose declared
      type is final (``String``, an enum, ``boolean``...) is written without a class; an ``int`` or ``long`` as a
      zig-zag varint; a field of a non-final type as a class and then the object. A reader must therefore know
      the field list of every class it meets (``_FIELDS`` below, Hive 2.3.10's) and cannot skip one it does not
      know: such input is refused.
    * ``java.sql.Date`` has Hive's serializer: the milliseconds since the epoch as an 8-byte big-endian long, the
      client's local midnight of that day (read back as a date under the assumption that the client's UTC offset
      is between -09:59 and +14:00 or its local time makes the day unambiguous; an instant in the ambiguous
      10:00-12:00 UTC window is refused).

    Hive 3.1 (kryo 3.0.3 in its pom) configures Kryo the same way, but its ``SerializationUtilities`` registers
    ``TimestampTZ`` after ``Timestamp`` (later ids shift; ``java.sql.Date`` stays 10), and Hive 3 represents
    date and timestamp constants with its own ``org.apache.hadoop.hive.common.type.Date``/``Timestamp`` (a
    field-serialized ``LocalDate``/``LocalDateTime``) instead of ``java.sql``'s, so its date comparisons are
    refused here (they would be read as a class without a reader); field lists of some classes may differ too.
    Hive 4 moved to Kryo 5 (HIVE-22944, kryo5 artifact since HIVE-28915), whose defaults differ (references
    off, registration required, a new ``FieldSerializer``): unless Hive sets them back, its bytes do not parse
    here. Neither was checked on real bytes (no Hive 3/4 jars on this machine). Whatever does not match Hive
    2.3's layout is refused, and refusal is safe (see below); the client's version is not on the wire.

What is understood
    ``ExprNodeGenericFuncDesc`` with ``GenericUDFOPEqual``, ``OPNotEqual``, ``OPLessThan``,
    ``OPEqualOrLessThan``, ``OPGreaterThan``, ``OPEqualOrGreaterThan`` (a partition column against a constant,
    either side), ``OPAnd``/``OPOr`` (n-ary), ``OPNot``, ``GenericUDFIn`` (a column and constants),
    ``GenericUDFBetween`` (the invert flag, a column, two constants), ``UDFLike`` through ``GenericUDFBridge``
    (SQL ``%``/``_`` pattern, turned into the filter language's regex subset), ``OPNull``/``OPNotNull`` (an
    equality with the default partition's name, which Hive reads as NULL; ``DDLSemanticAnalyzer`` writes them
    for ``DROP PARTITION (k='__HIVE_DEFAULT_PARTITION__')``; a value of an integral or date column that does not
    convert, which Hive would also read as NULL, is not matched), and casts that do not change a
    value (a string or varchar column to string; an integral column to a wider integral type). Constants:
    string, varchar, tinyint, smallint, int, bigint, date (years 1583 to 9999: before, java.sql.Date counts in the
    Julian calendar).

    Comparisons keep the meaning the store gives the same string filter (``store.filter_sql``), which follows
    Hive's own server: a string column against a string compares strings; an integral column against an integer
    compares numbers; a date column against a date (or, in a comparison or BETWEEN, against a string that is a
    ``yyyy-mm-dd`` date, which Hive converts to a date there) compares the ISO form as a string, which is date
    order for the canonical values Hive writes, and excludes the default partition, a NULL date to Hive (so an
    expression on a date column has its NOTs pushed down to the comparisons first: see ``_guard_dates``).
    Everything else -- another function (``upper``, ``concat``...), a cast that changes values, char, decimal,
    double, timestamp or boolean types, a column compared with a column or with a constant of another type family
    (Hive would convert both to double), an IN list of a date column and strings, a constant-only expression, a
    null constant -- raises ``HiveExprError``.

Limits
    The input's size, the nesting depth of objects, each string's length, each collection's element count and
    IN-list length are bounded (``ExprLimits``); each collection or string must also fit in the bytes left, so
    the work is linear in the input. Any malformed, truncated, oversized or unknown input raises
    ``HiveExprError`` (a ``ValueError``), never another exception; its message names at most a short, printable
    excerpt of the client's data.

What the server answers when it cannot read an expression
    Hive 2.3's server (``HiveMetaStore.get_partitions_by_expr`` -> ``ObjectStore.getPartitionsByExpr``) first
    turns the expression into a filter string (``expr.getExprString()``) for its SQL pushdown; when that fails
    it evaluates the expression in Java on every partition name (``PartitionExpressionForMetastore``), keeping a
    partition whose result is NULL and answering ``hasUnknownPartitions = true``; bytes it cannot deserialize
    raise ``MetaException`` (from ``deserializeExpr``), which fails the client's query. Its client
    (``HiveMetaStoreClient.listPartitionsByExpr``) turns a ``TApplicationException`` of type ``UNKNOWN_METHOD``
    (or ``WRONG_METHOD_NAME``) into ``IncompatibleMetastoreException``, on which ``PartitionPruner`` prunes on
    the client instead (``pruneBySequentialScan``: all partition names, the expression evaluated locally). Hive
    3.1's and 4's clients keep that fallback (Hive 4's ``get_partitions_spec_by_expr`` too). So:

    * ``get_partitions_by_expr`` with an expression this reader refuses answers
      ``TApplicationException(UNKNOWN_METHOD, "...")``: the client prunes by itself, correctly, never a wrong
      result. (All partitions with ``hasUnknownPartitions = true`` would also be correct for a query, whose
      filter still runs, but it reads every partition and fails a DROP's ``addTableDropPartsOutputs``.)
    * ``drop_partitions_req`` with such an expression answers ``MetaException``, as Hive's server does for an
      expression it cannot use (its client has no fallback there; Hive's analyzer has already failed on the
      preceding ``get_partitions_by_expr`` anyway).
"""

from __future__ import annotations

import datetime
import struct
from dataclasses import dataclass
from typing import Any

from .filters import And, Between, Compare, In, Like, LiteralValue, Node, Not, Or, current_limits

__all__ = ["DEFAULT_PARTITION_NAME", "ExprLimits", "HiveExpr", "HiveExprError", "decode", "read",
           "type_family"]

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
MAX_VISITS = 100_000  # expression and column nodes one expression may make the server walk (shared ones each time)


class HiveExprError(ValueError):
    """An expression this reader cannot read or cannot give Hive's meaning: the caller answers as Hive's server
    does for one it cannot evaluate (see the module's docstring)."""


@dataclass(frozen=True)
class ExprLimits:
    """How much one serialized expression may make the server do."""

    max_bytes: int = 1024 * 1024  # the serialized expression (Hive 2.3: ~400 bytes a comparison, ~20 an IN value)
    max_depth: int = 200  # nested Kryo objects (an expression level is two: the node and its children's list)
    max_string: int = 100_000  # characters of one string
    max_elements: int = 100_000  # elements of one collection or array


_LIMITS = ExprLimits()

# ----------------------------------------------------------------------------------------------- Kryo layout

_P = "org.apache.hadoop.hive."
_UDF = _P + "ql.udf.generic."
_EXPR_FUNC = _P + "ql.plan.ExprNodeGenericFuncDesc"
_EXPR_COLUMN = _P + "ql.plan.ExprNodeColumnDesc"
_EXPR_CONSTANT = _P + "ql.plan.ExprNodeConstantDesc"

# Field kinds: "bool" (1 byte), "int" (zig-zag varint), "long" (zig-zag varlong), "str" (a final String field:
# reference marker and string), "enum" (a final enum field: reference marker and ordinal + 1), "obj" (a field of a
# non-final type: class, then the object).
_COMPARE_FIELDS = (("compareOI", "obj"), ("compareType", "enum"), ("opDisplayName", "str"), ("opName", "str"),
                   ("result", "obj"))
_RESULT_ONLY = (("result", "obj"),)
_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    _EXPR_FUNC: (("chidren", "obj"), ("genericUDF", "obj"), ("isSortedExpr", "bool"), ("typeInfo", "obj")),
    _EXPR_COLUMN: (("column", "str"), ("isPartitionColOrVirtualCol", "bool"), ("isSkewedCol", "bool"),
                   ("tabAlias", "str"), ("typeInfo", "obj")),
    _EXPR_CONSTANT: (("typeInfo", "obj"), ("value", "obj")),
    _P + "serde2.typeinfo.PrimitiveTypeInfo": (("typeName", "str"),),
    _P + "serde2.typeinfo.VarcharTypeInfo": (("length", "int"), ("typeName", "str")),
    _P + "serde2.typeinfo.CharTypeInfo": (("length", "int"), ("typeName", "str")),
    _P + "serde2.typeinfo.DecimalTypeInfo": (("precision", "int"), ("scale", "int"), ("typeName", "str")),
    _P + "common.type.HiveVarchar": (("value", "str"),),
    _P + "common.type.HiveChar": (("value", "str"),),
    _P + "common.type.HiveDecimal": (("fast0", "long"), ("fast1", "long"), ("fast2", "long"),
                                     ("fastIntegerDigitCount", "int"), ("fastScale", "int"),
                                     ("fastSerializationScale", "int"), ("fastSignum", "int")),
    "org.apache.hadoop.io.BooleanWritable": (("value", "bool"),),
    _UDF + "GenericUDFOPEqual": _COMPARE_FIELDS,
    _UDF + "GenericUDFOPNotEqual": _COMPARE_FIELDS,
    _UDF + "GenericUDFOPLessThan": _COMPARE_FIELDS,
    _UDF + "GenericUDFOPEqualOrLessThan": _COMPARE_FIELDS,
    _UDF + "GenericUDFOPGreaterThan": _COMPARE_FIELDS,
    _UDF + "GenericUDFOPEqualOrGreaterThan": _COMPARE_FIELDS,
    _UDF + "GenericUDFOPAnd": _RESULT_ONLY,
    _UDF + "GenericUDFOPOr": _RESULT_ONLY,
    _UDF + "GenericUDFOPNot": _RESULT_ONLY,
    _UDF + "GenericUDFOPNull": _RESULT_ONLY,
    _UDF + "GenericUDFOPNotNull": _RESULT_ONLY,
    _UDF + "GenericUDFIn": (("bw", "obj"), ("isInSetConstant", "bool")),
    _UDF + "GenericUDFBetween": (("argumentOIs", "obj"), ("egt", "obj"), ("elt", "obj"), ("result", "obj")),
    _UDF + "GenericUDFBridge": (("isOperator", "bool"), ("udfClassName", "str"), ("udfName", "str")),
}
_OI = _P + "serde2.objectinspector.primitive."
# ObjectInspectors that GenericUDFs keep in fields (a comparison's compareOI, BETWEEN's argumentOIs): the writable
# primitive ones and their constant forms, with the writables those hold.
for _kind in ("Boolean", "Byte", "Short", "Int", "Long", "Float", "Double", "String", "HiveVarchar", "HiveChar",
              "Date", "Timestamp", "HiveDecimal", "Binary", "Void"):
    _FIELDS[f"{_OI}Writable{_kind}ObjectInspector"] = (("typeInfo", "obj"),)
    _FIELDS[f"{_OI}WritableConstant{_kind}ObjectInspector"] = (("typeInfo", "obj"), ("value", "obj"))
_FIELDS.update({
    "org.apache.hadoop.io.IntWritable": (("value", "int"),),
    "org.apache.hadoop.io.LongWritable": (("value", "long"),),
    "org.apache.hadoop.io.FloatWritable": (("value", "float"),),
    "org.apache.hadoop.io.DoubleWritable": (("value", "double"),),
    "org.apache.hadoop.io.ByteWritable": (("value", "byte"),),
    _P + "serde2.io.ByteWritable": (("value", "byte"),),
    _P + "serde2.io.ShortWritable": (("value", "short"),),
    _P + "serde2.io.DoubleWritable": (("value", "double"),),
    _P + "serde2.io.DateWritable": (("daysSinceEpoch", "int"),),
    _P + "serde2.io.HiveVarcharWritable": (("value", "obj"),),
    _P + "serde2.io.HiveCharWritable": (("value", "obj"),),
    # Hadoop 3.3's Text; older Hadoop has no textLength (see _TEXT_OLD, tried when this layout fails).
    "org.apache.hadoop.io.Text": (("bytes", "bytes"), ("length", "int"), ("textLength", "int")),
})
_TEXT_OLD = (("bytes", "bytes"), ("length", "int"))
# Enums whose constants may be read (only their ordinal is on the wire).
_ENUMS = frozenset({_UDF + "GenericUDFBaseCompare$CompareType"})
_COLLECTIONS = frozenset({"java.util.ArrayList", "java.util.LinkedList"})

# Registered classes (id -> name): Kryo's defaults, then Hive 2.3's first registration.
_REGISTERED = {0: "int", 1: "java.lang.String", 2: "float", 3: "boolean", 4: "byte", 5: "char", 6: "short",
               7: "long", 8: "double", 9: "void", 10: "java.sql.Date", 11: "java.sql.Timestamp"}
_WRAPPERS = {"int", "float", "boolean", "byte", "char", "short", "long", "double"}  # no reference marker
_NAMED_WRAPPERS = {"java.lang.Integer": "int", "java.lang.Float": "float", "java.lang.Boolean": "boolean",
                   "java.lang.Byte": "byte", "java.lang.Character": "char", "java.lang.Short": "short",
                   "java.lang.Long": "long", "java.lang.Double": "double"}

_FIXED = {"byte": ">b", "short": ">h", "float": ">f", "double": ">d"}  # big-endian, as Kryo's Output writes them
_PENDING = object()  # a reference slot whose object is still being read


@dataclass
class _Obj:
    """A field-serialized object: its class name and its fields."""

    cls: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class _SqlDate:
    millis: int


def _short(text: str, n: int = 80) -> str:
    """A client's text for an error message: bounded and printable."""
    cut = text[:n]
    return "".join(c if c.isprintable() else "?" for c in cut) + ("..." if len(text) > n else "")


class _Reader:
    def __init__(self, data: bytes, limits: ExprLimits, old_text: bool = False) -> None:
        self.data = data
        self.old_text = old_text
        self.pos = 0
        self.limits = limits
        self.depth = 0
        self.refs: list[Any] = []
        self.names: dict[int, str] = {}

    def fail(self, what: str) -> HiveExprError:
        return HiveExprError(f"Cannot read the serialized expression: {what} (at byte {self.pos})")

    # -------------------------------------------------------------------------------------------- primitives

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise self.fail("unexpected end of input")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise self.fail("unexpected end of input")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def varint(self) -> int:
        """Kryo's readVarInt(true): up to 5 bytes, as an unsigned 32-bit value."""
        result = 0
        for shift in (0, 7, 14, 21):
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
        return (result | (self.byte() << 28)) & 0xFFFFFFFF

    def zigzag_int(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def zigzag_long(self) -> int:
        result = 0
        for shift in range(0, 56, 7):
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                break
        else:
            result |= self.byte() << 56
        return (result >> 1) ^ -(result & 1)

    def count(self, n: int, what: str) -> int:
        """A length read from the input, checked against the limit and the bytes left (one byte an element at
        least), so that no loop or allocation outgrows the input."""
        if n > self.limits.max_elements:
            raise self.fail(f"{what} of {n} elements, more than {self.limits.max_elements}")
        if n > len(self.data) - self.pos:
            raise self.fail(f"{what} of {n} elements in {len(self.data) - self.pos} bytes")
        return n

    def string(self) -> str | None:
        start = self.pos
        b = self.byte()
        if not b & 0x80:  # ASCII: the last byte has the high bit set
            end = start
            n = len(self.data)
            while end < n and not self.data[end] & 0x80:
                end += 1
            if end >= n:
                raise self.fail("unexpected end of input in a string")
            if end + 1 - start > self.limits.max_string:
                raise self.fail(f"string of more than {self.limits.max_string} characters")
            raw = bytearray(self.data[start : end + 1])
            raw[-1] &= 0x7F
            self.pos = end + 1
            return raw.decode("ascii")
        length = b & 0x3F
        if b & 0x40:
            for shift in (6, 13, 20):
                b = self.byte()
                length |= (b & 0x7F) << shift
                if not b & 0x80:
                    break
            else:
                length |= (self.byte() & 0x7F) << 27
        if length == 0:
            return None
        chars = length - 1
        if chars > self.limits.max_string:
            raise self.fail(f"string of {chars} characters, more than {self.limits.max_string}")
        if chars > len(self.data) - self.pos:
            raise self.fail("unexpected end of input in a string")
        units = bytearray()
        for _ in range(chars):
            b = self.byte()
            top = b >> 4
            if top < 8:
                unit = b
            elif top in (12, 13):
                unit = (b & 0x1F) << 6 | (self.byte() & 0x3F)
            elif top == 14:
                unit = (b & 0x0F) << 12 | (self.byte() & 0x3F) << 6 | (self.byte() & 0x3F)
            else:
                raise self.fail(f"invalid byte 0x{b:02x} in a string")
            units += unit.to_bytes(2, "little")
        try:
            return units.decode("utf-16-le")
        except UnicodeDecodeError:
            raise self.fail("a string with an unpaired surrogate") from None

    # ------------------------------------------------------------------------------------------------ graph

    def read_class(self) -> str | None:
        tag = self.varint()
        if tag == 0:
            return None
        if tag == 1:
            name_id = self.varint()
            name = self.names.get(name_id)
            if name is None:
                text = self.string()
                if not text:
                    raise self.fail("an empty class name")
                name = _NAMED_WRAPPERS.get(text, text)
                self.names[name_id] = name
            return name
        try:
            return _REGISTERED[tag - 2]
        except KeyError:
            raise self.fail(f"unknown registered class id {tag - 2}") from None

    def reference(self, may_be_null: bool) -> tuple[bool, Any]:
        """The reference marker before an object: (True, object) for null or an object read before, (False,
        slot) for a new one, whose reference id is taken now (it is filled when the object is read)."""
        marker = self.varint()
        if marker == 0 and may_be_null:
            return True, None
        if marker == 1:
            self.refs.append(_PENDING)
            return False, len(self.refs) - 1
        ref = marker - 2
        if not 0 <= ref < len(self.refs):
            raise self.fail(f"a reference to unknown object {ref}")
        value = self.refs[ref]
        if value is _PENDING:
            raise self.fail("a cyclic reference")
        return True, value

    def object_of(self, cls: str) -> Any:
        """An object whose class has just been read (``kryo.writeObject``: marker, then the serializer's bytes)."""
        if cls in _WRAPPERS:
            return self.wrapper(cls)
        done, slot = self.reference(False)
        if done:
            return slot
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise self.fail(f"objects nested deeper than {self.limits.max_depth}")
        value = self.body(cls)
        self.depth -= 1
        self.refs[slot] = value
        return value

    def class_and_object(self) -> Any:
        cls = self.read_class()
        return None if cls is None else self.object_of(cls)

    def wrapper(self, cls: str) -> Any:
        if cls == "int":
            return self.zigzag_int()
        if cls == "long":
            return self.zigzag_long()
        if cls == "boolean":
            return self.byte() != 0
        if cls == "byte":
            return struct.unpack(">b", self.take(1))[0]
        if cls == "short":
            return struct.unpack(">h", self.take(2))[0]
        if cls == "char":
            return chr(struct.unpack(">H", self.take(2))[0])
        if cls == "float":
            return struct.unpack(">f", self.take(4))[0]
        return struct.unpack(">d", self.take(8))[0]

    def body(self, cls: str) -> Any:
        if cls == "java.lang.String":
            return self.string()
        if cls in _COLLECTIONS:
            return [self.class_and_object() for _ in range(self.count(self.varint(), "a list"))]
        if cls == "java.sql.Date":
            return _SqlDate(struct.unpack(">q", self.take(8))[0])
        if cls == "java.sql.Timestamp":  # Hive's serializer: milliseconds, then nanoseconds
            return _Obj(cls, {"time": struct.unpack(">q", self.take(8))[0], "nanos": self.take(4)})
        if cls in _ENUMS:
            return self.varint() - 1
        if cls.startswith("[L") and cls.endswith(";"):
            n = self.varint()  # length + 1; 0 for null (not written here: the marker stands for it)
            return [self.class_and_object() for _ in range(self.count(max(n - 1, 0), "an array"))]
        fields = _TEXT_OLD if cls == "org.apache.hadoop.io.Text" and self.old_text else _FIELDS.get(cls)
        if fields is None:
            raise self.fail(f"no reader for class {_short(cls)}")
        out: dict[str, Any] = {}
        for name, kind in fields:
            if kind == "bool":
                out[name] = self.byte() != 0
            elif kind == "int":
                out[name] = self.zigzag_int()
            elif kind == "long":
                out[name] = self.zigzag_long()
            elif kind in _FIXED:
                out[name] = struct.unpack(_FIXED[kind], self.take(struct.calcsize(_FIXED[kind])))[0]
            elif kind == "bytes":  # a byte[] field: marker, length + 1 (0 for null), the bytes
                done, slot = self.reference(True)
                if done:
                    out[name] = slot
                else:
                    size = self.varint()
                    n = self.count(max(size - 1, 0), "a byte array")
                    self.refs[slot] = out[name] = None if size == 0 else self.take(n)
            elif kind == "str":
                done, slot = self.reference(True)
                if done:
                    out[name] = slot
                else:
                    self.refs[slot] = out[name] = self.string()
            elif kind == "enum":
                done, slot = self.reference(True)
                if done:
                    out[name] = slot
                else:
                    self.refs[slot] = out[name] = self.varint() - 1
            else:
                out[name] = self.class_and_object()
        return _Obj(cls, out)


# ------------------------------------------------------------------------------------------ meaning of the tree

_COMPARE_OPS = {
    _UDF + "GenericUDFOPEqual": "=",
    _UDF + "GenericUDFOPNotEqual": "!=",
    _UDF + "GenericUDFOPLessThan": "<",
    _UDF + "GenericUDFOPEqualOrLessThan": "<=",
    _UDF + "GenericUDFOPGreaterThan": ">",
    _UDF + "GenericUDFOPEqualOrGreaterThan": ">=",
}
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_INTEGRAL = {"tinyint": 1, "smallint": 2, "int": 3, "bigint": 4}
_STRINGS = {"string", "varchar"}
_UDF_LIKE = "org.apache.hadoop.hive.ql.udf.UDFLike"
_UDF_TO_STRING = "org.apache.hadoop.hive.ql.udf.UDFToString"
_UDF_TO_INTEGRAL = {"org.apache.hadoop.hive.ql.udf.UDFToByte": "tinyint",
                    "org.apache.hadoop.hive.ql.udf.UDFToShort": "smallint",
                    "org.apache.hadoop.hive.ql.udf.UDFToInteger": "int",
                    "org.apache.hadoop.hive.ql.udf.UDFToLong": "bigint"}
_GENERIC_TO_STRING = {_UDF + "GenericUDFToVarchar"}
_DAY_MS = 86_400_000
_INT64 = (-(2**63), 2**63 - 1)


def type_family(type_name: str) -> str:
    """The comparison family of a Hive type name: string, integral, date or the name itself (unsupported)."""
    base = type_name.split("(", 1)[0].strip().lower()
    if base in _STRINGS:
        return "string"
    if base in _INTEGRAL:
        return "integral"
    return base


@dataclass(frozen=True)
class _Column:
    key: str
    family: str


@dataclass(frozen=True)
class _Const:
    value: LiteralValue | None
    family: str


@dataclass(frozen=True)
class HiveExpr:
    """An expression read: its filter, and the Hive type the client gave each partition column it names
    (lower-case name -> type name, e.g. ``int``, ``varchar(10)``), for the caller to check against the table's
    keys: the filter has the meaning above only when the families (string, integral, date) agree."""

    filter: Node
    columns: dict[str, str]


class _Meaning:
    def __init__(self, default_partition_name: str, max_in_list: int) -> None:
        self.default_partition_name = default_partition_name
        self.max_in_list = max_in_list
        self.columns: dict[str, str] = {}
        # back-references let a few bytes name one subtree many times (And(X, X), X = And(Y, Y), ...): the walk,
        # not the bytes, is what is bounded here
        self.visits = 0

    @staticmethod
    def fail(what: str) -> HiveExprError:
        return HiveExprError(f"Cannot evaluate the expression: {what}")

    def type_name(self, node: _Obj) -> str:
        info = node.fields.get("typeInfo")
        if not isinstance(info, _Obj) or not isinstance(info.fields.get("typeName"), str):
            raise self.fail("a node without a type")
        name: str = info.fields["typeName"]
        f = info.fields
        if isinstance(f.get("length"), int):  # varchar, char: the length is kept apart from the name
            return f"{name}({f['length']})"
        if isinstance(f.get("precision"), int) and isinstance(f.get("scale"), int):
            return f"{name}({f['precision']},{f['scale']})"
        return name

    def udf_name(self, udf: Any) -> str:
        if not isinstance(udf, _Obj):
            raise self.fail("a function node without a function")
        if udf.cls == _UDF + "GenericUDFBridge":
            return str(udf.fields.get("udfClassName"))
        return udf.cls

    def children(self, node: _Obj) -> list[Any]:
        kids = node.fields.get("chidren")
        if not isinstance(kids, list):
            raise self.fail("a function node without arguments")
        return kids

    def _visit(self) -> None:
        self.visits += 1
        if self.visits > MAX_VISITS:
            raise self.fail(f"more than {MAX_VISITS} nodes")

    def node(self, obj: Any) -> Node:
        self._visit()
        if not isinstance(obj, _Obj) or obj.cls != _EXPR_FUNC:
            raise self.fail("the expression is not a function of partition columns")
        name = self.udf_name(obj.fields.get("genericUDF"))
        kids = self.children(obj)
        if name in _COMPARE_OPS:
            return self.compare(_COMPARE_OPS[name], kids)
        if name in (_UDF + "GenericUDFOPAnd", _UDF + "GenericUDFOPOr"):
            if len(kids) < 2:
                raise self.fail("AND/OR with fewer than two operands")
            operands: list[Node] = []
            joined = And if name.endswith("And") else Or
            for kid in kids:
                sub = self.node(kid)
                operands.extend(sub.operands if isinstance(sub, joined) else (sub,))
            return joined(tuple(operands))
        if name == _UDF + "GenericUDFOPNot":
            self.arity(kids, 1, "NOT")
            return Not(self.node(kids[0]))
        if name in (_UDF + "GenericUDFOPNull", _UDF + "GenericUDFOPNotNull"):
            self.arity(kids, 1, "IS NULL")
            col = self.column(kids[0])  # Hive reads the default partition's name as NULL, whatever the type
            return Compare(col.key, "=" if name.endswith("OPNull") else "!=", self.default_partition_name)
        if name == _UDF + "GenericUDFIn":
            if len(kids) < 2:
                raise self.fail("IN without values")
            if len(kids) - 1 > self.max_in_list:
                raise self.fail(f"IN list of more than {self.max_in_list} values")
            col = self.column(kids[0])
            return In(col.key, tuple(self.literal(col, k) for k in kids[1:]))
        if name == _UDF + "GenericUDFBetween":
            self.arity(kids, 4, "BETWEEN")
            invert = self.constant(kids[0])
            if invert.family != "boolean" or not isinstance(invert.value, bool):
                raise self.fail("BETWEEN without its invert flag")
            col = self.column(kids[1])
            return Between(col.key, self.literal(col, kids[2], True), self.literal(col, kids[3], True),
                           invert.value)
        if name == _UDF_LIKE:
            self.arity(kids, 2, "LIKE")
            col = self.column(kids[0])
            pattern = self.constant(kids[1])
            if col.family != "string" or pattern.family != "string" or not isinstance(pattern.value, str):
                raise self.fail("LIKE other than a string column and a string pattern")
            return Like(col.key, _like_regex(pattern.value))
        raise self.fail(f"function {_short(name)} is not supported")

    @staticmethod
    def arity(kids: list[Any], n: int, what: str) -> None:
        if len(kids) != n:
            raise _Meaning.fail(f"{what} with {len(kids)} arguments")

    def compare(self, op: str, kids: list[Any]) -> Node:
        self.arity(kids, 2, "a comparison")
        left, right = kids
        if self.is_constant(left) and not self.is_constant(right):
            left, right, op = right, left, _FLIPPED[op]
        col = self.column(left)
        return Compare(col.key, op, self.literal(col, right, True))

    @staticmethod
    def is_constant(obj: Any) -> bool:
        return isinstance(obj, _Obj) and obj.cls == _EXPR_CONSTANT

    def column(self, obj: Any) -> _Column:
        """A partition column, or a cast of one that keeps its values."""
        self._visit()
        if isinstance(obj, _Obj) and obj.cls == _EXPR_COLUMN:
            key = obj.fields.get("column")
            if not isinstance(key, str) or not key:
                raise self.fail("a column without a name")
            type_name = self.type_name(obj)
            family = type_family(type_name)
            if family not in ("string", "integral", "date"):
                raise self.fail(f"a column of type {_short(type_name)}")
            if self.columns.setdefault(key.lower(), type_name) != type_name:
                raise self.fail(f"column {_short(key)} with two types")
            return _Column(key.lower(), family)
        if isinstance(obj, _Obj) and obj.cls == _EXPR_FUNC:
            name = self.udf_name(obj.fields.get("genericUDF"))
            kids = self.children(obj)
            if len(kids) == 1 and (name == _UDF_TO_STRING or name in _GENERIC_TO_STRING):
                inner = self.column(kids[0])
                target = type_family(self.type_name(obj))
                if inner.family == "string" and target == "string":
                    if name in _GENERIC_TO_STRING and not self.type_name(obj).lower().startswith("string"):
                        raise self.fail("a cast to varchar, which may cut values")
                    return inner
            if len(kids) == 1 and name in _UDF_TO_INTEGRAL:
                inner = self.column(kids[0])
                if inner.family == "integral":
                    source = _INTEGRAL.get(self.type_name(kids[0]).lower(), 99)
                    if source <= _INTEGRAL[_UDF_TO_INTEGRAL[name]]:
                        return inner
            raise self.fail(f"function {_short(name)} of a column is not supported")
        raise self.fail("a comparison of something other than a partition column")

    def constant(self, obj: Any) -> _Const:
        if not self.is_constant(obj):
            raise self.fail("a comparison with something other than a constant")
        type_name = self.type_name(obj)
        family = type_family(type_name)
        value = obj.fields.get("value")
        if value is None:
            raise self.fail("a NULL constant")
        if family == "string":
            if isinstance(value, _Obj) and value.cls.endswith(".HiveVarchar"):
                value = value.fields.get("value")
            if not isinstance(value, str):
                raise self.fail("a string constant that is not a string")
            return _Const(value, family)
        if family == "integral":
            if isinstance(value, bool) or not isinstance(value, int) or not _INT64[0] <= value <= _INT64[1]:
                raise self.fail("an integer constant that is not an integer")
            return _Const(value, family)
        if family == "date":
            if not isinstance(value, _SqlDate):
                raise self.fail("a date constant that is not a java.sql.Date")
            return _Const(_date_of(value.millis), family)
        if family == "boolean" and isinstance(value, bool):
            return _Const(value, family)
        raise self.fail(f"a constant of type {_short(type_name)}")

    def literal(self, col: _Column, obj: Any, compare: bool = False) -> LiteralValue:
        """The constant a column is compared with. ``compare``: in a comparison (or BETWEEN), where Hive 2.3
        compares a date column with a string as dates (``FunctionRegistry.getCommonClassForComparison``: the date
        group wins over the string group); a string that is a canonical ISO date means that date there."""
        const = self.constant(obj)
        if compare and col.family == "date" and const.family == "string" and isinstance(const.value, str):
            if not _is_iso_date(const.value):
                raise self.fail("a date column compared with a string that is not a yyyy-mm-dd date")
            return const.value
        if const.family != col.family:
            raise self.fail(f"a {col.family} column compared with a {const.family} constant")
        assert const.value is not None and not isinstance(const.value, bool)
        return const.value


_NEGATED = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def _positive(node: Node, negate: bool = False) -> Node:
    """``node`` (negated when ``negate``) with every NOT pushed down to the comparisons, where it flips them:
    the same result in SQL's three-valued logic, a NULL comparison staying NULL (only NOT LIKE is kept)."""
    if isinstance(node, Not):
        return _positive(node.operand, not negate)
    if isinstance(node, (And, Or)):
        operands = tuple(_positive(child, negate) for child in node.operands)
        return (Or if isinstance(node, And) else And)(operands) if negate else type(node)(operands)
    if not negate:
        return node
    if isinstance(node, Compare):
        return Compare(node.key, _NEGATED[node.op], node.value)
    if isinstance(node, In):
        return In(node.key, node.values, not node.negated)
    if isinstance(node, Between):
        return Between(node.key, node.low, node.high, not node.negated)
    return Not(node)


def _guard_dates(node: Node, dates: set[str], default_partition_name: str) -> Node:
    """Comparisons of date columns that also exclude the default partition, which Hive reads as a NULL date
    (its SQL pushdown casts a date key with ``case when value <> default then ... else null``); the store
    compares date keys as strings, where the default name would sort after every date. On a tree without NOT
    above a comparison (``_positive``), FALSE selects what NULL selects."""
    if isinstance(node, (And, Or)):
        return type(node)(tuple(_guard_dates(child, dates, default_partition_name) for child in node.operands))
    if isinstance(node, Not) or node.key not in dates:
        return node
    if isinstance(node, Compare) and node.value == default_partition_name:  # IS [NOT] NULL itself
        return node
    return And((node, Compare(node.key, "!=", default_partition_name)))


_FIRST_DAY = (datetime.date(1583, 1, 1) - datetime.date(1970, 1, 1)).days
_LAST_DAY = (datetime.date(9999, 12, 31) - datetime.date(1970, 1, 1)).days


def _is_iso_date(text: str) -> bool:
    """Whether ``text`` is a date as ``yyyy-mm-dd``, years 1583 to 9999 (then string order is date order)."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-" or not (text[:4] + text[5:7] + text[8:]).isdigit():
        return False
    if not text.isascii():
        return False
    try:
        return datetime.date.fromisoformat(text).year >= 1583
    except ValueError:
        return False


def _date_of(millis: int) -> str:
    """The day of a java.sql.Date made at the client's local midnight (see the module's docstring)."""
    day, in_day = divmod(millis, _DAY_MS)
    if 10 * 3_600_000 <= in_day < 12 * 3_600_000:
        raise _Meaning.fail("a date whose day depends on the client's time zone")
    if in_day >= 12 * 3_600_000:  # east of UTC: local midnight is in the previous UTC day
        day += 1
    # Before 1583 java.sql.Date counts days in the Julian calendar, this reader in the proleptic Gregorian one.
    if not _FIRST_DAY <= day <= _LAST_DAY:
        raise _Meaning.fail("a date outside years 1583 to 9999")
    return (datetime.date(1970, 1, 1) + datetime.timedelta(days=day)).isoformat()


def _like_regex(pattern: str) -> str:
    """A SQL LIKE pattern as Hive's UDFLike reads it (``%`` any sequence, ``_`` any one character, a backslash
    before ``%`` or ``_`` makes it literal, any other character is literal) in the filter language's pattern:
    ``.*``, ``.`` and backslash-escaped characters (``core.filters.like_pieces``)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n and pattern[i + 1] in "%_":
            out.append("\\" + pattern[i + 1])
            i += 2
            continue
        if c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        elif c.isascii() and not c.isalnum():
            out.append("\\" + c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _read(data: bytes, limits: ExprLimits, old_text: bool) -> Any:
    """The object graph of the bytes; with Hadoop 3.3's Text layout first, then, if a Text was met and the read
    failed, with the older one (the client's Hadoop version is not on the wire)."""
    reader = _Reader(data, limits, old_text)
    try:
        root = reader.object_of(_EXPR_FUNC)  # kryo.writeObject: no class, the marker and the fields
        if reader.pos != len(data):
            raise reader.fail(f"{len(data) - reader.pos} bytes after the expression")
    except RecursionError:
        raise reader.fail("nested too deeply") from None
    except HiveExprError as first:
        if old_text or "org.apache.hadoop.io.Text" not in reader.names.values():
            raise
        try:
            return _read(data, limits, old_text=True)
        except HiveExprError:
            raise first from None
    return root


def decode(data: bytes, default_partition_name: str = DEFAULT_PARTITION_NAME,
           limits: ExprLimits | None = None) -> Node:
    """The partition filter a Hive 2.3 client's serialized expression means; ``HiveExprError`` when it cannot be
    read or has no exact translation (the caller then answers as the module's docstring says)."""
    return read(data, default_partition_name, limits).filter


def read(data: bytes, default_partition_name: str = DEFAULT_PARTITION_NAME,
         limits: ExprLimits | None = None) -> HiveExpr:
    """``decode``, with the types the client gave the partition columns."""
    limits = limits or _LIMITS
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise HiveExprError("Cannot read the serialized expression: no bytes")
    if len(data) > limits.max_bytes:
        raise HiveExprError(f"Cannot read the serialized expression: {len(data)} bytes, more than "
                            f"{limits.max_bytes}")
    if not len(data):
        raise HiveExprError("Cannot read the serialized expression: it is empty")
    try:
        root = _read(bytes(data), limits, old_text=False)
        meaning = _Meaning(default_partition_name, current_limits().max_in_list)
        node = meaning.node(root)
        dates = {key for key, type_name in meaning.columns.items() if type_family(type_name) == "date"}
        if dates:
            node = _guard_dates(_positive(node), dates, default_partition_name)
        return HiveExpr(node, meaning.columns)
    except HiveExprError:
        raise
    except RecursionError:
        raise HiveExprError("Cannot read the serialized expression: nested too deeply") from None
    except Exception as e:  # a gap in the checks above must still be a refusal, never a failed call
        raise HiveExprError(f"Cannot read the serialized expression: {type(e).__name__}") from None

