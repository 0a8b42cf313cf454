"""Bad input, on every backend: each gets the right Hive exception with a clear message, the server stays up,
and the store is unchanged (the current notification event id, the listings and the warehouse are the same
before and after). Then the socket level: garbage, huge announced lengths, clients that go away mid-call.

The messages are Hive's (checked against the real Hive 2.3 metastore in test_reference_parity.py).
"""

from __future__ import annotations

import os
import random
import socket
import struct
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hive_metastore import ThriftHiveMetastore
from hive_metastore.ttypes import (
    AddPartitionsRequest,
    AlreadyExistsException,
    Database,
    FieldSchema,
    Function,
    InvalidObjectException,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
    Partition,
    Table,
)
from test_thrift_api import sd
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

from conftest import Client, unique

LONG = "a" * 129


def table(db: str, name: str, cols=(("a", "int"), ("b", "string")), keys=(("ds", "string"), ("h", "int"))) -> Table:
    return Table(tableName=name, dbName=db, owner="tester", sd=sd(cols), parameters={}, tableType="MANAGED_TABLE",
                 partitionKeys=[FieldSchema(k, t, None) for k, t in keys])


def part(db: str, values: list[str], tbl: str = "t") -> Partition:
    return Partition(values=values, dbName=db, tableName=tbl, sd=sd(), parameters={})


def function(db: str, name: str) -> Function:
    return Function(functionName=name, dbName=db, className="org.example.Upper", ownerName="tester", ownerType=1,
                    createTime=0, functionType=1, resourceUris=[])


@pytest.fixture(scope="module")
def db(server: Any) -> Iterator[str]:
    """A database with a partitioned table t (ds string, h int) holding partition ds=x/h=1, and function f."""
    name = unique("bad")
    c = Client(server.port)
    c.create_database(Database(name=name, description="bad input"))
    c.create_table(table(name, "t"))
    c.add_partitions([part(name, ["x", "1"])])
    c.create_function(function(name, "f"))
    yield name
    c.drop_database(name, True, True)
    c.close()


def state(server: Any, d: str) -> dict[str, Any]:
    """What a change would show: the event id, the listings, table t, and the warehouse's directories."""
    c = Client(server.port)
    try:
        t = c.get_table(d, "t")
        return {
            "event": c.get_current_notificationEventId().eventId,
            "databases": sorted(c.get_all_databases()),
            "tables": sorted(c.get_all_tables(d)),
            "partitions": c.get_partition_names(d, "t", -1),
            "partition": c.get_partition(d, "t", ["x", "1"]).parameters,
            "functions": sorted(c.get_functions(d, "*")),
            "function": c.get_function(d, "f").className,
            "table": (t.sd.cols, t.partitionKeys, t.parameters, t.tableType),
            "warehouse": sorted(os.path.relpath(root, server.warehouse) for root, _, _ in os.walk(server.warehouse)),
        }
    finally:
        c.close()


Call = Callable[[Client, str], Any]

# (label, call, Hive exception, message: exact, or a callable that checks it)
CASES: list[tuple[str, Call, type, Any]] = [
    # a missing database, table, partition or function
    ("get_database missing", lambda c, d: c.get_database(d + "_no"), NoSuchObjectException, "{d}_no"),
    ("drop_database missing", lambda c, d: c.drop_database(d + "_no", True, True), NoSuchObjectException, "{d}_no"),
    ("alter_database missing", lambda c, d: c.alter_database(d + "_no", Database(name=d + "_no")),
     NoSuchObjectException, "{d}_no"),
    ("get_table missing", lambda c, d: c.get_table(d, "nope"), NoSuchObjectException, "{d}.nope table not found"),
    ("get_table missing database", lambda c, d: c.get_table(d + "_no", "t"), NoSuchObjectException,
     "{d}_no.t table not found"),
    ("drop_table missing", lambda c, d: c.drop_table(d, "nope", True), NoSuchObjectException,
     "{d}.nope table not found"),
    ("alter_table missing", lambda c, d: c.alter_table(d, "nope", table(d, "nope")), InvalidOperationException,
     "{d}.nope table not found"),
    ("get_partition missing", lambda c, d: c.get_partition(d, "t", ["y", "2"]), NoSuchObjectException,
     "partition values=[y, 2]"),
    ("get_partition_by_name missing", lambda c, d: c.get_partition_by_name(d, "t", "ds=y/h=2"),
     NoSuchObjectException, "partition values=[y, 2]"),
    ("drop_partition missing", lambda c, d: c.drop_partition(d, "t", ["y", "2"], True), NoSuchObjectException,
     "partition values=[y, 2]"),
    ("drop_partition_by_name missing", lambda c, d: c.drop_partition_by_name(d, "t", "ds=y/h=2", True),
     NoSuchObjectException, "partition values=[y, 2]"),
    ("alter_partition missing", lambda c, d: c.alter_partition(d, "t", part(d, ["y", "2"])),
     InvalidOperationException, "alter is not possible: partition does not exist: ds=y/h=2"),
    ("add_partition to a missing table", lambda c, d: c.add_partition(part(d, ["y", "2"], "nope")),
     InvalidObjectException, "Unable to add partition because table or database do not exist"),
    ("add_partitions to a missing table", lambda c, d: c.add_partitions([part(d, ["y", "2"], "nope")]),
     InvalidObjectException, "Unable to add partitions because database or table {d}.nope does not exist"),
    ("get_partitions of a missing table", lambda c, d: c.get_partitions(d, "nope", -1), NoSuchObjectException,
     "{d}.nope table not found"),
    ("get_function missing", lambda c, d: c.get_function(d, "nofn"), NoSuchObjectException,
     "Function {d}.nofn does not exist"),
    ("drop_function missing", lambda c, d: c.drop_function(d, "nofn"), NoSuchObjectException,
     "Function nofn does not exist"),
    ("alter_function missing", lambda c, d: c.alter_function(d, "nofn", function(d, "nofn")), MetaException,
     "function nofn doesn't exist"),
    # duplicates
    ("create_database duplicate", lambda c, d: c.create_database(Database(name=d)), AlreadyExistsException,
     "Database {d} already exists"),
    ("create_database duplicate, other case", lambda c, d: c.create_database(Database(name=d.upper())),
     AlreadyExistsException, "Database {d} already exists"),
    ("create_table duplicate", lambda c, d: c.create_table(table(d, "t")), AlreadyExistsException,
     "Table t already exists"),
    ("create_table duplicate, other case", lambda c, d: c.create_table(table(d, "T")), AlreadyExistsException,
     "Table t already exists"),
    ("add_partition duplicate", lambda c, d: c.add_partition(part(d, ["x", "1"])), AlreadyExistsException,
     "Partition already exists: ds=x/h=1"),
    ("add_partitions duplicate", lambda c, d: c.add_partitions([part(d, ["y", "9"]), part(d, ["x", "1"])]),
     AlreadyExistsException, "Partition already exists: ds=x/h=1"),
    ("add_partitions_req duplicate", lambda c, d: c.add_partitions_req(AddPartitionsRequest(
        dbName=d, tblName="t", parts=[part(d, ["x", "1"])], ifNotExists=False, needResult=True)),
     AlreadyExistsException, "Partition already exists: ds=x/h=1"),
    ("create_function duplicate", lambda c, d: c.create_function(function(d, "f")), AlreadyExistsException,
     "Function f already exists"),
    # partition specifications
    ("add_partition too few values", lambda c, d: c.add_partition(part(d, ["y"])), MetaException,
     "Invalid partition key & values; keys [ds, h, ], values [y, ]"),
    ("add_partition too many values", lambda c, d: c.add_partition(part(d, ["y", "1", "z"])), MetaException,
     "Invalid partition key & values; keys [ds, h, ], values [y, 1, z, ]"),
    ("add_partition empty value", lambda c, d: c.add_partition(part(d, ["", "1"])), MetaException,
     "Invalid partition key & values; keys [ds, h, ], values [, 1, ]"),
    ("append_partition too few values", lambda c, d: c.append_partition(d, "t", ["y"]), MetaException,
     "Invalid partition key & values; keys [ds, h, ], values [y, ]"),
    ("append_partition empty value", lambda c, d: c.append_partition(d, "t", ["y", ""]), MetaException,
     "Invalid partition key & values; keys [ds, h, ], values [y, , ]"),
    ("get_partition too few values", lambda c, d: c.get_partition(d, "t", ["x"]), MetaException,
     "Invalid partition key & values; keys [ds, h, ], values [x, ]"),
    ("drop_partition too many values", lambda c, d: c.drop_partition(d, "t", ["x", "1", "2"], True), MetaException,
     "Invalid partition key & values; keys [ds, h, ], values [x, 1, 2, ]"),
    ("alter_partition too few values", lambda c, d: c.alter_partition(d, "t", part(d, ["x"])), MetaException,
     "Invalid partition key & values; keys [ds, h, ], values [x, ]"),
    ("get_partitions_ps too many values", lambda c, d: c.get_partitions_ps(d, "t", ["x", "1", "2"], -1),
     MetaException, "Incorrect number of partition values. numPartKeys=2, part_val=3"),
    ("get_partition_by_name unknown key", lambda c, d: c.get_partition_by_name(d, "t", "ds=x/zz=1"),
     NoSuchObjectException, "incomplete partition name - missing h"),
    ("get_partition_by_name extra key", lambda c, d: c.get_partition_by_name(d, "t", "ds=x/h=1/zz=2"),
     NoSuchObjectException, "Invalid partition name ds=x/h=1/zz=2: zz is not a partition key (keys [ds, h])"),
    ("get_partition_by_name empty value", lambda c, d: c.get_partition_by_name(d, "t", "ds=/h=1"),
     NoSuchObjectException, "incomplete partition name - missing ds"),
    ("get_partition_by_name not a name", lambda c, d: c.get_partition_by_name(d, "t", "garbage"),
     NoSuchObjectException, "incomplete partition name - missing ds"),
    ("get_partition_by_name empty", lambda c, d: c.get_partition_by_name(d, "t", ""), MetaException,
     "Partition name is invalid. "),
    ("drop_partition_by_name unknown key", lambda c, d: c.drop_partition_by_name(d, "t", "ds=x/zz=1", True),
     NoSuchObjectException, "incomplete partition name - missing h"),
    ("append_partition_by_name unknown key", lambda c, d: c.append_partition_by_name(d, "t", "ds=y/zz=1"),
     InvalidObjectException, "incomplete partition name - missing h"),
    ("append_partition_by_name extra key", lambda c, d: c.append_partition_by_name(d, "t", "ds=y/h=1/zz=1"),
     InvalidObjectException, "Invalid partition name ds=y/h=1/zz=1: zz is not a partition key (keys [ds, h])"),
    # filters
    ("filter syntax error", lambda c, d: c.get_partitions_by_filter(d, "t", "ds = ", -1), MetaException,
     lambda m: m.startswith("Error parsing partition filter: ") and "position 5" in m),
    ("filter syntax error (dangling and)", lambda c, d: c.get_partitions_by_filter(d, "t", "ds = 'x' and", -1),
     MetaException, lambda m: m.startswith("Error parsing partition filter: ") and "end of filter" in m),
    ("filter unknown key", lambda c, d: c.get_partitions_by_filter(d, "t", "nokey = 'a'", -1), MetaException,
     "Specified key <nokey> is not a partitioning key for the table"),
    ("count filter unknown key", lambda c, d: c.get_num_partitions_by_filter(d, "t", "nokey = 'a'"),
     MetaException, "Specified key <nokey> is not a partitioning key for the table"),
    ("filter unterminated string", lambda c, d: c.get_partitions_by_filter(d, "t", "ds = 'abc", -1),
     MetaException, lambda m: m.startswith("Error parsing partition filter: unterminated string")),
    # column types
    ("create_table wrong column type", lambda c, d: c.create_table(table(d, "bt", cols=(("a", "notatype"),))),
     InvalidObjectException, "Invalid column type: notatype"),
    ("create_table wrong key type", lambda c, d: c.create_table(table(d, "bt", keys=(("ds", "notatype"),))),
     InvalidObjectException, "Invalid partition column type: notatype"),
    ("create_table empty column type", lambda c, d: c.create_table(table(d, "bt", cols=(("a", ""),))),
     InvalidObjectException, "Invalid column type: "),
    ("alter_table wrong column type", lambda c, d: c.alter_table(d, "t", table(d, "t", cols=(("a", "notatype"),))),
     InvalidOperationException, "Invalid column type: notatype"),
    ("create_table without storage descriptor",
     lambda c, d: c.create_table(Table(tableName="nosd", dbName=d, parameters={})), InvalidObjectException,
     "Storage descriptor is not defined for the table"),
    # databases
    ("drop a database that is not empty", lambda c, d: c.drop_database(d, True, False), InvalidOperationException,
     "Database {d} is not empty. One or more tables exist."),
    ("drop the default database", lambda c, d: c.drop_database("default", True, True), MetaException,
     "Can not drop default database"),
]

# invalid names: empty, too long, illegal characters, not ASCII
BAD_NAMES = [("empty", ""), ("too long", LONG), ("dash", "a-b"), ("space", "a b"), ("slash", "a/b"),
             ("dot", "a.b"), ("accent", "t\u00e4b"), ("cjk", "\u8868"), ("emoji", "t\U0001F600")]
for label, n in BAD_NAMES:
    CASES += [
        (f"create_database name {label}", lambda c, d, n=n: c.create_database(Database(name=n)),
         InvalidObjectException, f"{n} is not a valid database name"),
        (f"create_table name {label}", lambda c, d, n=n: c.create_table(table(d, n)), InvalidObjectException,
         f"{n} is not a valid object name"),
        (f"create_function name {label}", lambda c, d, n=n: c.create_function(function(d, n)),
         InvalidObjectException, f"{n} is not a valid object name"),
        (f"rename table to {label}", lambda c, d, n=n: c.alter_table(d, "t", table(d, n)), InvalidOperationException,
         f"{n} is not a valid object name"),
    ]

# a message quoting a huge name or value is clipped to 4,096 characters (and "...")
CASES += [
    ("create_table name of 100,000 characters", lambda c, d: c.create_table(table(d, "a" * 100_000)),
     InvalidObjectException, lambda m: len(m) == 4099 and m.startswith("aaa") and m.endswith("...")),
    ("get_partition value of 100,000 characters", lambda c, d: c.get_partition(d, "t", ["x" * 100_000, "1"]),
     NoSuchObjectException, lambda m: len(m) == 4099 and m.endswith("...")),
]


@pytest.mark.parametrize("label,call,exc,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input(label: str, call: Call, exc: type, message: Any, server: Any, client: Client, db: str) -> None:
    before = state(server, db)
    with pytest.raises(exc) as info:
        call(client, db)
    got = info.value.message
    if callable(message):
        assert message(got), got
    else:
        assert got == message.format(d=db)
    assert client.get_database(db).name == db  # the same connection still works
    assert server.alive()
    assert state(server, db) == before


# --------------------------------------------------------------------------- the socket level

def call_bytes(name: str, args: Any, seqid: int = 1) -> bytes:
    buf = TTransport.TMemoryBuffer()
    p = TBinaryProtocol.TBinaryProtocol(buf)
    p.writeMessageBegin(name, TMessageType.CALL, seqid)
    args.write(p)
    p.writeMessageEnd()
    return buf.getvalue()


def framed(data: bytes) -> bytes:
    return struct.pack("!i", len(data)) + data


GET_DEFAULT = call_bytes("get_database", ThriftHiveMetastore.get_database_args(name="default"))
# a strict message header for get_database, with the first field's header left to the case
HEADER = struct.pack("!I", 0x80010001) + struct.pack("!i", 12) + b"get_database" + struct.pack("!i", 1)


def answer(sock: socket.socket, is_framed: bool, timeout: float = 10) -> tuple[Any, ...]:
    """What the server answers: ("reply", name), ("exception", type, message), or ("closed",)."""
    sock.settimeout(timeout)
    f = sock.makefile("rb", buffering=0)  # no read-ahead: the next answer stays in the socket
    try:
        if is_framed:
            TTransport.TFileObjectTransport(f).readAll(4)  # the frame's length: the message says where it ends
        p = TBinaryProtocol.TBinaryProtocol(TTransport.TFileObjectTransport(f))
        name, mtype, _ = p.readMessageBegin()
        if mtype == TMessageType.EXCEPTION:
            x = TApplicationException()
            x.read(p)
            return ("exception", x.type, x.message)
        p.skip(TType.STRUCT)  # the result
        p.readMessageEnd()
        return ("reply", name)
    except (EOFError, ConnectionError, TTransport.TTransportException):
        return ("closed",)
    except TimeoutError:
        return ("timeout",)


def send(server: Any, data: bytes, is_framed: bool) -> tuple[tuple[Any, ...], socket.socket]:
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(data)
    return answer(s, is_framed), s


def connection_ended(s: socket.socket) -> bool:
    """After an error answer, the server closes the connection: reading sees the end (or a reset)."""
    s.settimeout(10)
    try:
        return s.recv(1) == b""
    except ConnectionError:
        return True
    except TimeoutError:
        return False


rng = random.Random(20240601)
GARBAGE = [
    # (label, bytes, framed answers?, expected: "closed" or a TApplicationException type)
    ("random bytes", bytes(rng.randrange(0x7F) for _ in range(256)), True, "closed"),
    ("random bytes after 0x80", b"\x80" + bytes(rng.randrange(256) for _ in range(255)), False, "closed"),
    ("random frame body", framed(bytes(rng.randrange(1, 0x7F) for _ in range(64))), True, "closed"),
    ("bad version", struct.pack("!I", 0x80020001) + HEADER[4:] + b"\x00", False, "closed"),
    ("bad message type", struct.pack("!I", 0x80010007) + HEADER[4:] + b"\x00", False,
     TApplicationException.INVALID_MESSAGE_TYPE),
    ("bad message type, framed", framed(struct.pack("!I", 0x80010007) + HEADER[4:] + b"\x00"), True,
     TApplicationException.INVALID_MESSAGE_TYPE),
    ("a reply sent to the server", struct.pack("!I", 0x80010002) + HEADER[4:] + b"\x00", False,
     TApplicationException.INVALID_MESSAGE_TYPE),
    ("bad field type", HEADER + b"\x7f\x00\x01" + b"garbage without an end", False,
     TApplicationException.PROTOCOL_ERROR),
    ("bad field type, framed", framed(HEADER + b"\x7f\x00\x01garbage\x00"), True,
     TApplicationException.PROTOCOL_ERROR),
    ("bad list element type", HEADER + b"\x0f\x00\x01\x7f\x00\x00\x00\x05", False,
     TApplicationException.PROTOCOL_ERROR),
    ("negative string length", HEADER + b"\x0b\x00\x01" + struct.pack("!i", -5), False,
     TApplicationException.PROTOCOL_ERROR),
    ("nesting too deep", HEADER + b"\x0c\x00\x01" * 200 + b"\x00" * 201, False,
     TApplicationException.PROTOCOL_ERROR),
    ("frame longer than its message", framed(GET_DEFAULT + b"\x00\x00"), True,
     TApplicationException.PROTOCOL_ERROR),
    ("frame shorter than its message", framed(GET_DEFAULT[:-3]), True, TApplicationException.PROTOCOL_ERROR),
    # huge announced lengths: answered at once, nothing of that size is waited for or allocated
    ("frame of 2 GiB", struct.pack("!i", 0x7FFFFFFF) + GET_DEFAULT, True, "closed"),
    ("negative frame length", struct.pack("!i", -2) + GET_DEFAULT, True, "closed"),
    ("string of 2 GiB", HEADER + b"\x0b\x00\x01" + struct.pack("!i", 0x7FFFFFFF) + b"abc", False,
     TApplicationException.PROTOCOL_ERROR),
    ("string of 2 GiB, framed", framed(HEADER + b"\x0b\x00\x01" + struct.pack("!i", 0x7FFFFFFF) + b"abc"), True,
     TApplicationException.PROTOCOL_ERROR),
    ("method name of 2 GiB", struct.pack("!I", 0x80010001) + struct.pack("!i", 0x7FFFFFFF) + b"get", False,
     "closed"),
    ("list of 2 G structs", HEADER + b"\x0f\x00\x01\x0c" + struct.pack("!i", 0x7FFFFFFF) + b"\x00" * 16, False,
     TApplicationException.PROTOCOL_ERROR),
    ("map of 2 G entries", HEADER + b"\x0d\x00\x01\x0b\x0b" + struct.pack("!i", 0x7FFFFFFF), False,
     TApplicationException.PROTOCOL_ERROR),
]


@pytest.mark.parametrize("label,data,is_framed,expected", GARBAGE, ids=[g[0] for g in GARBAGE])
def test_garbage_ends_the_connection_only(label: str, data: bytes, is_framed: bool, expected: Any, server: Any,
                                          db: str) -> None:
    before = state(server, db)
    other = Client(server.port)  # a connection that is open meanwhile
    started = time.monotonic()
    got, s = send(server, data, is_framed)
    try:
        if expected == "closed":
            assert got == ("closed",)
        else:
            assert got[:2] == ("exception", expected), got
            assert got[2]  # says what is wrong
            assert connection_ended(s)
    finally:
        s.close()
    assert time.monotonic() - started < 5  # answered at once, not after waiting for announced bytes
    assert other.get_database("default").name == "default"
    other.close()
    assert server.alive()
    assert state(server, db) == before


@pytest.mark.parametrize("is_framed", [False, True], ids=["unframed", "framed"])
def test_client_gone_mid_call(is_framed: bool, server: Any, db: str) -> None:
    name = unique("half")
    whole = call_bytes("create_database", ThriftHiveMetastore.create_database_args(
        database=Database(name=name, description="never")))
    before = state(server, db)
    for cut in (1, 5, len(whole) // 2, len(whole) - 1):
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall((framed(whole) if is_framed else whole)[:cut + (4 if is_framed else 0)])
        s.close()
    time.sleep(0.2)
    c = Client(server.port)
    with pytest.raises(NoSuchObjectException):
        c.get_database(name)
    c.close()
    assert server.alive()
    assert state(server, db) == before


@pytest.mark.parametrize("is_framed", [False, True], ids=["unframed", "framed"])
def test_unknown_method(is_framed: bool, server: Any, db: str) -> None:
    """An unknown method gets TApplicationException UNKNOWN_METHOD, and the connection goes on."""
    before = state(server, db)
    unknown = call_bytes("no_such_method", ThriftHiveMetastore.get_database_args(name="default"), seqid=7)
    wrap = framed if is_framed else (lambda b: b)
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        s.sendall(wrap(unknown))
        got = answer(s, is_framed)
        assert got[:2] == ("exception", TApplicationException.UNKNOWN_METHOD), got
        s.sendall(wrap(GET_DEFAULT))  # the same connection serves the next call
        assert answer(s, is_framed) == ("reply", "get_database")
    finally:
        s.close()
    assert state(server, db) == before


def test_unknown_method_through_the_client(client: Client) -> None:
    """A call of the Apache client that this server does not serve (workload management): an answer, not a
    dropped connection."""
    from hive_metastore.ttypes import WMGetResourcePlanRequest
    with pytest.raises(TApplicationException) as info:
        client.get_resource_plan(WMGetResourcePlanRequest(resourcePlanName="plan"))
    assert info.value.type == TApplicationException.UNKNOWN_METHOD
    assert client.get_database("default").name == "default"


def test_pipelined_calls_on_one_connection(server: Any) -> None:
    """Calls sent back to back before any answer is read are answered in order (the reader keeps the bytes
    that follow a message for the next one)."""
    calls = [call_bytes("get_database", ThriftHiveMetastore.get_database_args(name="default"), seqid=i)
             for i in range(5)]
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        s.sendall(b"".join(calls))
        assert [answer(s, False) for _ in calls] == [("reply", "get_database")] * 5
    finally:
        s.close()
