#!/usr/bin/env python
"""The metastore benchmark: the same Thrift calls, with the same client, against `metastore serve` and against the
reference Apache Hive 2.3.10 metastore, in one run; prints both figures and their ratio.

    python bench/run.py                          # ours on SQLite vs the reference, full run (a few minutes)
    python bench/run.py --quick --no-reference   # ~1 minute smoke run, ours only
    python bench/run.py --backends sqlite,postgres,mariadb
    python bench/run.py --db postgresql+psycopg2://user@host/dbname

The client is the Apache Thrift client of the Hive Metastore (`hive_metastore`, the one PyIceberg ships) over
TBufferedTransport, with Thrift's C-accelerated binary protocol by default: PyIceberg's pure-Python
TBinaryProtocol (--client-protocol plain) spends about 160 us of client CPU decoding one get_table reply, so
eight such clients on a 2-core host saturate it near 12,000 calls/s whatever the server does, and the
benchmark would measure the clients. Both servers get the same client in the same run. Benchmarks, in order,
on each server:

  get_table, 1 client            calls/s over fixed windows (median of the repetitions) and p50 latency
  get_table, 8 clients           8 separate client processes, started together; sum of their calls/s
  create_table + drop_table      pairs per second over fixed windows (median)
  add_partitions                 N partitions (10,000) in batches of N/10 through add_partitions_req; total time
  get_partitions                 all N partitions; time on the wire (request sent -> last byte of the reply),
                                 median of several; the reply is decoded and checked afterwards, untimed
  get_partitions_by_filter       `ds = "..."`, 1% of the partitions; time on the wire, median
  get_partition_values           the (ds, hr) values of all N partitions (PartitionValuesRequest); wire, median
  get_partitions_by_expr         Kryo expressions as Hive 2.3's client sends them (bytes its CLI sent, in
                                 bench/hive_expr.txt): `ds = '...'`, 1%; `ds = 'a' OR hr = 2`, one a day
  statistics calls               set_aggr_stats_for, update_partition_column_statistics, get_aggr_stats_for,
                                 get_partitions_statistics_req, get_table_statistics_req; median
  server RSS                     VmRSS of the server's processes (/proc, summed) after the N-partition run

Every benchmark is warmed up first and bounded in time. Results go to <out>/results.json and <out>/results.md,
with a chart of the ratios against the targets in <out>/results.png when the reference ran
(default out: bench/out, git-ignored). The reference on Derby is started with ../shared/reference-hms/start.sh
--fresh and stopped with stop.sh; with postgres or mariadb among --backends the same reference also runs on a
fresh database of that server (common.JdbcReference; JDBC drivers from scripts/jdbc-drivers.sh), and ours on
that store is compared with it. Our server is started as `python -m metastore.cli serve` on a fresh store.
"""

from __future__ import annotations

import argparse
import copy
import multiprocessing as mp
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from common import (
    ROOT,
    JdbcReference,
    JdbcStore,
    Reference,
    Serve,
    command_line,
    free_port,
    fresh_dir,
    host_facts,
    log,
    parquet_storage,
    publish,
    utc_now,
)

PG_ADMIN = "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres"
MARIA_ADMIN = "mysql+pymysql://root@127.0.0.1:3306/"
BACKEND_URLS = {"postgres": "postgresql+psycopg2://postgres@127.0.0.1:5432/{name}",
                "mariadb": "mysql+pymysql://root@127.0.0.1:3306/{name}"}
CALL_TIMEOUT_MS = 600_000
CLIENT_PROTOCOL = os.environ.get("BENCH_CLIENT_PROTOCOL", "accelerated")  # or "plain"; set by --client-protocol


# ------------------------------------------------------------------------------------------- parameters

@dataclass(frozen=True)
class Params:
    server_warmup_s: float  # mixed calls on each server before any benchmark (lets the JVM's JIT settle)
    warmup_s: float        # time-based warm-up before the get_table windows
    window_s: float        # one measuring window of get_table (1 and 8 clients)
    windows: int           # repetitions of that window
    clients: int           # concurrent client processes
    pair_window_s: float   # one window of create_table + drop_table pairs
    pair_windows: int
    partitions: int        # size of the partitioned table (a multiple of 100: 100 days x partitions/100 hours)
    batch: int             # add_partitions batch size
    wire_reps: int         # repetitions of get_partitions (median)
    filter_reps: int       # repetitions of get_partitions_by_filter (median)
    budget_s: float        # time budget of each repeated wire benchmark (at least 3 repetitions)


FULL = Params(server_warmup_s=15.0, warmup_s=2.0, window_s=3.0, windows=5, clients=8, pair_window_s=4.0,
              pair_windows=3, partitions=10_000, batch=1_000, wire_reps=7, filter_reps=11, budget_s=90.0)
QUICK = Params(server_warmup_s=1.0, warmup_s=0.3, window_s=1.0, windows=3, clients=8, pair_window_s=1.0,
               pair_windows=3, partitions=2_000, batch=200, wire_reps=3, filter_reps=5, budget_s=15.0)


# the statistics calls: the first STATS_PARTS partitions of the partitioned table, these columns of COLS
STATS_PARTS = 100
STATS_COLS = [("id", "bigint"), ("name", "string"), ("amount", "decimal(12,2)")]

# get_partitions_by_expr: the statement, and the expression's bytes as Hive 2.3.10's own CLI sent them for it (lines
# of tests/hive_expr_captured.txt, captured on a table with the partition keys ds string and hr int, among others)
EXPR_DAY = "SELECT * FROM p WHERE ds = '2024-01-01'"  # the first of days(): 1% of the partitions
EXPR_OR = "SELECT * FROM p WHERE ds = 'a' OR hr = 2"  # no day is 'a': one partition a day, two keys
EXPR_SELECTS: dict[str, Callable[[list[str]], bool]] = {EXPR_DAY: lambda v: v[0] == "2024-01-01",
                                                        EXPR_OR: lambda v: v[0] == "a" or v[1] == "2"}
# the time budget of each of these wire benchmarks (at least 3 repetitions): they add seconds, not minutes
EXTRA_BUDGET_S = 8.0


def hive_exprs() -> dict[str, bytes]:
    """bench/hive_expr.txt: statement -> expression bytes."""
    out = {}
    for line in (Path(__file__).resolve().parent / "hive_expr.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            statement, hexed = line.split("\t")
            out[statement] = bytes.fromhex(hexed)
    return out


def days() -> list[str]:
    start = date(2024, 1, 1)
    return [(start + timedelta(days=i)).isoformat() for i in range(100)]


def partition_values(n: int) -> list[list[str]]:
    """The (ds, hr) values of n partitions: 100 days x n/100 hours, so that one day is 1%."""
    per_day = max(1, n // 100)
    return [[d, str(h)] for d in days() for h in range(per_day)][:n]


def expr_count(statement: str, n: int) -> int:
    """How many of the n partitions the expression of `statement` selects."""
    return sum(1 for v in partition_values(n) if EXPR_SELECTS[statement](v))


@dataclass(frozen=True)
class Row:
    id: str
    label: str
    unit: str
    better: str  # "higher" or "lower"


def rows_for(p: Params) -> list[Row]:
    n, one = f"{p.partitions:,}", f"{p.partitions // 100:,}"
    return [
        Row("get_table_1", "get_table, 1 client", "calls/s", "higher"),
        Row("get_table_1_p50", "get_table, 1 client, p50 latency", "ms", "lower"),
        Row("get_table_8", f"get_table, {p.clients} clients (processes)", "calls/s", "higher"),
        Row("create_drop", "create_table + drop_table", "pairs/s", "higher"),
        Row("add_partitions", f"add_partitions, {n} in batches of {p.batch:,} (total)", "s", "lower"),
        Row("get_partitions", f"get_partitions, {n} partitions (wire, median)", "ms", "lower"),
        Row("get_partitions_by_filter", f"get_partitions_by_filter, 1% ({one} of {n}) (wire, median)", "ms",
            "lower"),
        Row("get_partition_values", f"get_partition_values, (ds, hr) of all {n} partitions (wire, median)", "ms",
            "lower"),
        Row("get_partitions_by_expr", f"get_partitions_by_expr, ds = '...', 1% ({one} of {n}) (wire, median)", "ms",
            "lower"),
        Row("get_partitions_by_expr_or", f"get_partitions_by_expr, ds = 'a' OR hr = 2, "
            f"{expr_count(EXPR_OR, p.partitions):,} of {n} (wire, median)", "ms", "lower"),
        Row("set_aggr_stats_for", f"set_aggr_stats_for, {STATS_PARTS} partitions x {len(STATS_COLS)} columns "
            "(one call, median)", "ms", "lower"),
        Row("update_partition_column_statistics", f"update_partition_column_statistics, {len(STATS_COLS)} columns "
            "(median)", "ms", "lower"),
        Row("get_aggr_stats_for", f"get_aggr_stats_for, {STATS_PARTS} partitions x {len(STATS_COLS)} columns "
            "(median)", "ms", "lower"),
        Row("get_partitions_statistics_req", f"get_partitions_statistics_req, {STATS_PARTS} partitions x "
            f"{len(STATS_COLS)} columns (median)", "ms", "lower"),
        Row("get_table_statistics_req", f"get_table_statistics_req, {len(STATS_COLS)} columns (median)", "ms",
            "lower"),
        Row("rss", f"server memory (RSS; PSS summed over worker processes) after the {n}-partition run", "MiB",
            "lower"),
    ]


ROW_IDS = [r.id for r in rows_for(FULL)]


# --------------------------------------------------------------------------------------------- the client

class Client:
    """The Apache Thrift client of the Hive Metastore (hive_metastore, as PyIceberg uses it), on its own socket."""

    def __init__(self, port: int) -> None:
        from hive_metastore import ThriftHiveMetastore
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport

        sock = TSocket.TSocket("127.0.0.1", port)
        sock.setTimeout(CALL_TIMEOUT_MS)
        self.transport = TTransport.TBufferedTransport(sock)
        self.transport.open()
        protocol = (TBinaryProtocol.TBinaryProtocolAccelerated if CLIENT_PROTOCOL == "accelerated"
                    else TBinaryProtocol.TBinaryProtocol)
        self.api = ThriftHiveMetastore.Client(protocol(self.transport))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    def close(self) -> None:
        self.transport.close()


def encode_call(method: str, *args: Any) -> bytes:
    """The bytes the client sends for one call (unframed binary protocol, as Client above)."""
    from hive_metastore import ThriftHiveMetastore
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TTransport

    buf = TTransport.TMemoryBuffer()
    getattr(ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(buf)), "send_" + method)(*args)
    return buf.getvalue()


def decode_reply(method: str, data: bytes) -> Any:
    """Decode a whole reply (raises on a Thrift exception or a truncated message)."""
    from hive_metastore import ThriftHiveMetastore
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TTransport

    prot = TBinaryProtocol.TBinaryProtocolAccelerated(TTransport.TMemoryBuffer(data))
    return getattr(ThriftHiveMetastore.Client(prot), "recv_" + method)()


def incomplete(e: Exception) -> bool:
    """Whether a decoding error means the reply is not all here yet (rather than a Thrift exception reply)."""
    from thrift.Thrift import TException
    from thrift.transport.TTransport import TTransportException
    return isinstance(e, TTransportException) or not isinstance(e, TException)


class WireCall:
    """One call repeated on a persistent raw socket, timed from the request's first byte to the reply's last.

    The first (untimed) call reads until the server falls silent and decodes the reply, which gives the reply's
    exact length; the timed calls then read exactly that many bytes, so client-side decoding is not timed. Every
    timed reply is decoded and checked afterwards.
    """

    def __init__(self, port: int, method: str, *args: Any) -> None:
        self.method = method
        self.request = encode_call(method, *args)
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.length = 0

    def first(self, silence: float = 0.5) -> Any:
        self.sock.sendall(self.request)
        buf = bytearray()
        deadline = time.monotonic() + CALL_TIMEOUT_MS / 1000
        self.sock.settimeout(silence)
        try:
            while time.monotonic() < deadline:
                try:
                    chunk = self.sock.recv(1 << 20)
                except TimeoutError:
                    if buf:
                        try:
                            result = decode_reply(self.method, bytes(buf))
                        except Exception as e:
                            if incomplete(e):
                                continue
                            raise
                        self.length = len(buf)
                        return result
                    continue
                if not chunk:
                    raise ConnectionError("server closed the connection")
                buf += chunk
        finally:
            self.sock.settimeout(CALL_TIMEOUT_MS / 1000)
        raise TimeoutError(f"{self.method}: no complete reply")

    def timed(self) -> tuple[float, bytes]:
        assert self.length, "call first() before timed()"
        buf = bytearray(self.length)
        view = memoryview(buf)
        got = 0
        t0 = time.perf_counter()
        self.sock.sendall(self.request)
        while got < self.length:
            n = self.sock.recv_into(view[got:])
            if not n:
                raise ConnectionError("server closed the connection")
            got += n
        t1 = time.perf_counter()
        return t1 - t0, bytes(buf)

    def close(self) -> None:
        self.sock.close()


# -------------------------------------------------------------------------------------- Hive structures

COLS = [("id", "bigint"), ("name", "string"), ("amount", "decimal(12,2)"), ("ts", "timestamp"),
        ("tags", "array<string>"), ("attrs", "map<string,string>")]


def table(db: str, name: str, partitioned: bool = True) -> Any:
    from hive_metastore.ttypes import FieldSchema, Table
    keys = [FieldSchema("ds", "string", None), FieldSchema("hr", "int", None)] if partitioned else []
    return Table(tableName=name, dbName=db, owner="bench", sd=parquet_storage(COLS),
                 parameters={"comment": "bench"}, tableType="MANAGED_TABLE", partitionKeys=keys)


def column_stats(db: str, tbl: str, part: str | None, k: int) -> Any:
    """Statistics of STATS_COLS as ANALYZE ... FOR COLUMNS writes them, varied by k."""
    from hive_metastore.ttypes import (
        ColumnStatistics,
        ColumnStatisticsData,
        ColumnStatisticsDesc,
        ColumnStatisticsObj,
        Decimal,
        DecimalColumnStatsData,
        LongColumnStatsData,
        StringColumnStatsData,
    )

    def dec(n: int) -> Any:
        return Decimal(unscaled=n.to_bytes(8, "big", signed=True), scale=2)

    objs = [ColumnStatisticsObj("id", "bigint", ColumnStatisticsData(longStats=LongColumnStatsData(
                lowValue=k, highValue=1000 * k + 7, numNulls=k % 3, numDVs=100 + k))),
            ColumnStatisticsObj("name", "string", ColumnStatisticsData(stringStats=StringColumnStatsData(
                maxColLen=20 + k % 7, avgColLen=8.5 + k % 3, numNulls=k % 5, numDVs=50 + k))),
            ColumnStatisticsObj("amount", "decimal(12,2)", ColumnStatisticsData(decimalStats=DecimalColumnStatsData(
                lowValue=dec(-k), highValue=dec(100 * k + 99), numNulls=0, numDVs=10 + k)))]
    desc = ColumnStatisticsDesc(isTblLevel=part is None, dbName=db, tableName=tbl, partName=part,
                                lastAnalyzed=1_700_000_000)
    return ColumnStatistics(statsDesc=desc, statsObj=objs, engine="hive")


def stats_calls(port: int, db: str, tbl: str, p: Params) -> dict[str, Any]:
    """The column-statistics calls on STATS_PARTS partitions of `tbl` and on the table t_get, each repeated (the
    median): set_aggr_stats_for of every partition in one call, update_partition_column_statistics of one,
    get_aggr_stats_for, get_partitions_statistics_req and get_table_statistics_req. Hive's own aggregate-stats
    cache answers the repeated get_aggr_stats_for, as it does for a repeated query."""
    from hive_metastore.ttypes import PartitionsStatsRequest, SetPartitionsStatsRequest, TableStatsRequest

    names = [f"ds={x.values[0]}/hr={x.values[1]}" for x in partitions(db, tbl, p.partitions)[:STATS_PARTS]]
    cols = [n for n, _ in STATS_COLS]
    reps = max(3, p.wire_reps)
    out: dict[str, Any] = {"partitions": len(names), "columns": len(cols)}
    c = Client(port)

    def timed(key: str, fn: Callable[[int], Any], n: int) -> None:
        fn(0)  # warm-up
        times = []
        for i in range(1, n + 1):
            t0 = time.perf_counter()
            fn(i)
            times.append((time.perf_counter() - t0) * 1000)
        out[key] = {"median_ms": statistics.median(times), "times_ms": times}

    try:
        c.update_table_column_statistics(column_stats(db, "t_get", None, 1))
        timed("set_aggr_stats_for", lambda i: c.set_aggr_stats_for(SetPartitionsStatsRequest(
            colStats=[column_stats(db, tbl, n, i + k) for k, n in enumerate(names)], needMerge=False,
            engine="hive")), reps)
        timed("update_partition_column_statistics",
              lambda i: c.update_partition_column_statistics(column_stats(db, tbl, names[i % len(names)], i)),
              max(reps, 20))
        req = PartitionsStatsRequest(dbName=db, tblName=tbl, colNames=cols, partNames=names, engine="hive")
        timed("get_aggr_stats_for", lambda i: c.get_aggr_stats_for(req), max(reps, 20))
        got = c.get_aggr_stats_for(req)
        if got.partsFound != len(names) or len(got.colStats) != len(cols):
            raise RuntimeError(f"get_aggr_stats_for: {got.partsFound} partitions, {len(got.colStats)} columns")
        timed("get_partitions_statistics_req", lambda i: c.get_partitions_statistics_req(req), max(reps, 20))
        if len(c.get_partitions_statistics_req(req).partStats) != len(names):
            raise RuntimeError("get_partitions_statistics_req: not every partition's statistics")
        treq = TableStatsRequest(dbName=db, tblName="t_get", colNames=cols, engine="hive")
        timed("get_table_statistics_req", lambda i: c.get_table_statistics_req(treq), max(reps, 50))
    finally:
        c.close()
    return out


def partitions(db: str, tbl: str, n: int) -> list[Any]:
    """n partitions, of partition_values(n)."""
    from hive_metastore.ttypes import Partition
    sd = parquet_storage(COLS)
    return [Partition(values=v, dbName=db, tableName=tbl, sd=copy.deepcopy(sd), parameters={})
            for v in partition_values(n)]


def partition_values_call(port: int, db: str, tbl: str, p: Params) -> dict[str, Any]:
    """get_partition_values of both keys of all partitions, distinct (as Hive's client asks); the reply's rows
    are checked against the partitions added."""
    from hive_metastore.ttypes import FieldSchema, PartitionValuesRequest
    req = PartitionValuesRequest(dbName=db, tblName=tbl, partitionKeys=[FieldSchema("ds", "string", None),
                                                                       FieldSchema("hr", "int", None)],
                                 applyDistinct=True, maxParts=-1)
    want = sorted(tuple(v) for v in partition_values(p.partitions))

    def check(r: Any) -> None:
        if sorted(tuple(x.row) for x in r.partitionValues) != want:
            raise RuntimeError("get_partition_values: not the values of the partitions added")

    return wire_benchmark(port, "get_partition_values", (req,), len(want), p.filter_reps,
                          min(p.budget_s, EXTRA_BUDGET_S), size=lambda r: len(r.partitionValues), check=check)


def partitions_by_expr_call(port: int, db: str, tbl: str, statement: str, p: Params) -> dict[str, Any]:
    """get_partitions_by_expr with the bytes Hive's client sent for `statement`; the partitions are checked."""
    from hive_metastore.ttypes import PartitionsByExprRequest
    req = PartitionsByExprRequest(dbName=db, tblName=tbl, expr=hive_exprs()[statement], maxParts=-1)
    want = sorted(tuple(v) for v in partition_values(p.partitions) if EXPR_SELECTS[statement](v))

    def check(r: Any) -> None:
        if r.hasUnknownPartitions or sorted(tuple(x.values) for x in r.partitions) != want:
            raise RuntimeError(f"get_partitions_by_expr: not the partitions of {statement!r}")

    out = wire_benchmark(port, "get_partitions_by_expr", (req,), len(want), p.filter_reps,
                         min(p.budget_s, EXTRA_BUDGET_S), size=lambda r: len(r.partitions), check=check)
    out["statement"] = statement
    return out


# ----------------------------------------------------------------------------------------- the targets

WORKERS = os.cpu_count() or 1  # server processes of ours (`metastore serve --workers`); set by --workers


class Ours(Serve):
    """`metastore serve` on a fresh store of one backend."""

    def __init__(self, backend: str, url: str | None, workdir: Path) -> None:
        super().__init__(workdir, WORKERS)
        self.backend = backend
        self.name = f"ours:{backend}"
        self.given_url = url  # --db: use as is, never create or drop the database
        self.url = ""
        self.created_db: str | None = None

    def describe(self) -> str:
        import sqlalchemy as sa
        return f"metastore serve, {sa.engine.make_url(self.url).render_as_string(hide_password=True)}"

    def start(self) -> None:
        fresh_dir(self.workdir)
        if self.given_url:
            self.url = self.given_url
        elif self.backend == "sqlite":
            self.url = f"sqlite:///{self.workdir / 'metastore.db'}"
        else:
            self.url = self._create_database()
        self.launch(self.url)

    def _create_database(self) -> str:
        name = "msbench_" + uuid.uuid4().hex[:10]
        create_database(self.backend, name)
        self.created_db = name
        return BACKEND_URLS[self.backend].format(name=name)

    def stop(self) -> None:
        super().stop()
        if self.created_db:
            drop_database(self.backend, self.created_db)
            self.created_db = None

    def fresh_store(self) -> bool:
        return not self.given_url


def _admin(backend: str) -> Any:
    import sqlalchemy as sa
    return sa.create_engine(PG_ADMIN if backend == "postgres" else MARIA_ADMIN, isolation_level="AUTOCOMMIT")


def create_database(backend: str, name: str, for_reference: bool = False) -> None:
    """A fresh database on the machine's PostgreSQL or MariaDB, for our server or for the reference."""
    admin = _admin(backend)
    try:
        with admin.connect() as c:
            if backend == "postgres":
                c.exec_driver_sql(f"CREATE DATABASE {name}")
            elif for_reference:
                # Hive's MySQL schema is latin1: in utf8mb4 its VARCHAR(32672) columns (a column's type name)
                # are longer than a VARCHAR may be. Hive refuses an empty password (it sends its default, "mine").
                c.exec_driver_sql(f"CREATE DATABASE {name} CHARACTER SET latin1")
                c.exec_driver_sql(f"CREATE USER IF NOT EXISTS '{REF_MARIA_USER}'@'127.0.0.1' "
                                  f"IDENTIFIED BY '{REF_MARIA_USER}'")
                c.exec_driver_sql(f"GRANT ALL ON {name}.* TO '{REF_MARIA_USER}'@'127.0.0.1'")
            else:
                c.exec_driver_sql(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
    finally:
        admin.dispose()


def drop_database(backend: str, name: str) -> None:
    admin = _admin(backend)
    try:
        with admin.connect() as c:
            force = " WITH (FORCE)" if backend == "postgres" else ""
            c.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}{force}")
    except Exception as e:
        log(f"could not drop {name}: {e}")
    finally:
        admin.dispose()


REF_MARIA_USER = "hive_ref"
# which reference each of our stores is compared with: the same kind of database where the reference runs on it
REFERENCE_STORE_OF = {"sqlite": "derby", "postgres": "postgres", "mariadb": "mariadb"}


def reference_jdbc(store: str, name: str) -> JdbcStore:
    if store == "postgres":
        return JdbcStore("postgres", f"jdbc:postgresql://127.0.0.1:5432/{name}", "postgres", "postgres")
    # Hive's direct SQL quotes names with double quotes and sets ANSI_QUOTES itself only when the driver calls
    # the database MySQL, which MariaDB's does not; DataNucleus 4 has no adapter of its own for MariaDB and its
    # generic one writes DDL MariaDB refuses, so it is told to use the MySQL one.
    return JdbcStore("mariadb", f"jdbc:mysql://127.0.0.1:3306/{name}?sessionVariables=sql_mode=ANSI_QUOTES",
                     REF_MARIA_USER, REF_MARIA_USER,
                     (("datanucleus.rdbms.datastoreAdapterClassName",
                       "org.datanucleus.store.rdbms.adapter.MySQLAdapter"),))


class ReferenceOnDb(JdbcReference):
    """The reference on a database of the machine's PostgreSQL or MariaDB, made for the run and dropped after it."""

    def __init__(self, store: str, workdir: Path) -> None:
        self.db_name = "hmsref_" + uuid.uuid4().hex[:10]
        super().__init__(workdir, free_port(), reference_jdbc(store, self.db_name))
        self.created = False

    def start(self) -> None:
        create_database(self.jdbc.store, self.db_name, for_reference=True)
        self.created = True
        super().start()

    def stop(self) -> None:
        super().stop()
        if self.created:
            drop_database(self.jdbc.store, self.db_name)
            self.created = False


# -------------------------------------------------------------------------------------- the benchmarks

def server_warmup(port: int, db: str, p: Params) -> dict[str, Any]:
    """Every kind of call the benchmarks make, in a loop, before measuring anything."""
    from hive_metastore.ttypes import AddPartitionsRequest, FieldSchema, PartitionsByExprRequest, PartitionValuesRequest

    exprs = [PartitionsByExprRequest(dbName=db, tblName="warm", expr=e, maxParts=-1) for e in hive_exprs().values()]
    values_req = PartitionValuesRequest(dbName=db, tblName="warm", partitionKeys=[FieldSchema("ds", "string", None),
                                                                                 FieldSchema("hr", "int", None)],
                                        applyDistinct=True, maxParts=-1)
    c = Client(port)
    try:
        c.create_table(table(db, "warm"))
        parts = partitions(db, "warm", 200)
        for i in range(0, 200, 50):
            c.add_partitions_req(AddPartitionsRequest(dbName=db, tblName="warm", parts=parts[i:i + 50],
                                                      ifNotExists=False, needResult=False))
        rounds, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < p.server_warmup_s:
            for _ in range(20):
                c.get_table(db, "t_get")
            c.get_database(db)
            c.create_table(table(db, f"warm_cd_{rounds}"))
            c.drop_table(db, f"warm_cd_{rounds}", True)
            c.get_partitions(db, "warm", -1)
            c.get_partitions_by_filter(db, "warm", f'ds = "{days()[rounds % 100]}"', -1)
            c.get_partition_values(values_req)
            c.get_partitions_by_expr(exprs[rounds % len(exprs)])
            rounds += 1
    finally:
        c.close()
    return {"rounds": rounds}


def get_table_single(port: int, db: str, tbl: str, p: Params) -> dict[str, Any]:
    c = Client(port)
    try:
        end = time.perf_counter() + p.warmup_s
        while time.perf_counter() < end:
            c.get_table(db, tbl)
        rates, lat = [], []
        for _ in range(p.windows):
            n, t0 = 0, time.perf_counter()
            end = t0 + p.window_s
            while True:
                s = time.perf_counter()
                c.get_table(db, tbl)
                e = time.perf_counter()
                lat.append(e - s)
                n += 1
                if e >= end:
                    break
            rates.append(n / (e - t0))
    finally:
        c.close()
    lat.sort()
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1000  # noqa: E731
    return {"calls_per_s": statistics.median(rates), "p50_ms": statistics.median(lat) * 1000,
            "p90_ms": q(0.90), "p99_ms": q(0.99), "windows_calls_per_s": rates, "calls": len(lat)}


def _get_table_worker(port: int, db: str, tbl: str, warmup_s: float, windows: int, window_s: float,
                      barrier: Any, results: Any, idx: int) -> None:
    try:
        c = Client(port)
        end = time.perf_counter() + warmup_s
        while time.perf_counter() < end:
            c.get_table(db, tbl)
        for w in range(windows):
            barrier.wait(timeout=300)
            n, t0 = 0, time.perf_counter()
            end = t0 + window_s
            while True:
                c.get_table(db, tbl)
                n += 1
                e = time.perf_counter()
                if e >= end:
                    break
            results.put(("ok", idx, w, n, e - t0))
        c.close()
    except BaseException as e:  # report, and break the barrier so that the others do not wait forever
        results.put(("error", idx, -1, 0, f"{type(e).__name__}: {e}"))
        try:
            barrier.abort()
        except Exception:
            pass


def get_table_concurrent(port: int, db: str, tbl: str, p: Params) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(p.clients)
    results = ctx.Queue()
    procs = [ctx.Process(target=_get_table_worker, daemon=True,
                         args=(port, db, tbl, p.warmup_s, p.windows, p.window_s, barrier, results, i))
             for i in range(p.clients)]
    for proc in procs:
        proc.start()
    per_window: dict[int, list[float]] = {w: [] for w in range(p.windows)}
    calls = 0
    try:
        deadline = time.monotonic() + 120 + p.windows * (p.window_s + 60)
        for _ in range(p.clients * p.windows):
            status, idx, w, n, x = results.get(timeout=max(1.0, deadline - time.monotonic()))
            if status != "ok":
                raise RuntimeError(f"client process {idx} failed: {x}")
            per_window[w].append(n / x)
            calls += n
    finally:
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.terminate()
                proc.join(5)
    rates = [sum(v) for _, v in sorted(per_window.items())]
    return {"calls_per_s": statistics.median(rates), "windows_calls_per_s": rates, "clients": p.clients,
            "calls": calls}


def create_drop_pairs(port: int, db: str, p: Params) -> dict[str, Any]:
    c = Client(port)
    try:
        for i in range(5):  # warm-up
            c.create_table(table(db, f"cd_warm_{i}"))
            c.drop_table(db, f"cd_warm_{i}", True)
        rates = []
        for w in range(p.pair_windows):
            n, t0 = 0, time.perf_counter()
            while True:
                name = f"cd_{w}_{n}"
                c.create_table(table(db, name))
                c.drop_table(db, name, True)
                n += 1
                e = time.perf_counter()
                if e - t0 >= p.pair_window_s:
                    break
            rates.append(n / (e - t0))
        left = [t for t in c.get_all_tables(db) if t.startswith("cd_")]
        if left:
            raise RuntimeError(f"tables left after drop_table: {left[:5]}")
    finally:
        c.close()
    return {"pairs_per_s": statistics.median(rates), "windows_pairs_per_s": rates}


def add_partitions_run(port: int, db: str, tbl: str, p: Params) -> dict[str, Any]:
    from hive_metastore.ttypes import AddPartitionsRequest

    def add(c: Client, name: str, parts: list[Any]) -> None:
        c.add_partitions_req(AddPartitionsRequest(dbName=db, tblName=name, parts=parts, ifNotExists=False,
                                                  needResult=False))

    c = Client(port)
    try:
        # warm-up: two batches of the same size into a table of their own
        c.create_table(table(db, "warm_parts"))
        warm = partitions(db, "warm_parts", 2 * min(p.batch, 100))
        add(c, "warm_parts", warm[:len(warm) // 2])
        add(c, "warm_parts", warm[len(warm) // 2:])
        c.create_table(table(db, tbl))
        parts = partitions(db, tbl, p.partitions)
        batches = [parts[i:i + p.batch] for i in range(0, len(parts), p.batch)]
        times = []
        t0 = time.perf_counter()
        for b in batches:
            s = time.perf_counter()
            add(c, tbl, b)
            times.append(time.perf_counter() - s)
        total = time.perf_counter() - t0
        got = len(c.get_partition_names(db, tbl, -1))
        if got != p.partitions:
            raise RuntimeError(f"{got} partitions after adding {p.partitions}")
    finally:
        c.close()
    return {"total_s": total, "batches": len(batches), "batch_s": times,
            "partitions_per_s": p.partitions / total}


def wire_benchmark(port: int, method: str, args: tuple[Any, ...], expect: int, reps: int, budget_s: float,
                   client_call: bool = False, size: Callable[[Any], int] = len,
                   check: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """`size` counts the partitions (or rows) of a reply, which must be `expect` in every reply; `check`, when
    given, looks at the first reply's content."""
    call = WireCall(port, method, *args)
    try:
        first = call.first()  # warm-up, and the reply's length
        if size(first) != expect:
            raise RuntimeError(f"{method}: {size(first)} partitions, expected {expect}")
        if check is not None:
            check(first)
        call.timed()  # one more untimed call
        times = []
        start = time.monotonic()
        while len(times) < reps and (len(times) < 3 or time.monotonic() - start < budget_s):
            t, data = call.timed()
            got = decode_reply(method, data)
            if size(got) != expect:
                raise RuntimeError(f"{method}: {size(got)} partitions, expected {expect}")
            times.append(t)
    finally:
        call.close()
    out = {"median_ms": statistics.median(times) * 1000, "times_ms": [t * 1000 for t in times],
           "reply_bytes": call.length, "partitions": expect}
    if client_call:
        # the same call as a client application sees it, decoding included (pure-Python TBinaryProtocol)
        c = Client(port)
        try:
            t0 = time.perf_counter()
            n = size(getattr(c, method)(*args))
            out["client_call_ms"] = (time.perf_counter() - t0) * 1000
            assert n == expect
        finally:
            c.close()
    return out


def _tree(pid: int) -> list[int]:
    """The process and all its descendants (a server with worker processes counts as a whole)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def _pss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    return 0.0


def rss_mib(pid: int) -> dict[str, Any]:
    """The server's resident memory. With several processes (forked workers) the reported figure is PSS
    summed over them: RSS summed would count the pages they share after fork once per process. For one
    process PSS and RSS nearly agree; both sums are in the JSON."""
    total = {"VmRSS": 0.0, "VmHWM": 0.0}
    pids = _tree(pid)
    pss = 0.0
    for p in pids:
        with open(f"/proc/{p}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in total:
                    total[k] += int(v.split()[0]) / 1024
        pss += _pss_mib(p)
    return {"rss_mib": pss if len(pids) > 1 else total["VmRSS"], "pss_mib": pss, "rss_sum_mib": total["VmRSS"],
            "peak_rss_mib": total["VmHWM"], "pid": pid, "processes": len(pids)}


def run_target(target: Any, p: Params) -> dict[str, Any]:
    from hive_metastore.ttypes import Database

    res: dict[str, Any] = {"describe": target.describe(), "port": target.port, "load_before": os.getloadavg()}
    db = "bench_" + uuid.uuid4().hex[:8]
    c = Client(target.port)
    c.create_database(Database(name=db, description="metastore benchmark", parameters={}))
    c.create_table(table(db, "t_get"))
    c.close()

    def step(key: str, what: str, fn: Callable[[], dict[str, Any]]) -> None:
        log(f"  {target.name}: {what}")
        t0 = time.perf_counter()
        res[key] = fn()
        res[key]["duration_s"] = time.perf_counter() - t0

    step("warmup", f"warm-up, {p.server_warmup_s:.0f} s of mixed calls", lambda: server_warmup(target.port, db, p))
    step("get_table_1", "get_table, 1 client", lambda: get_table_single(target.port, db, "t_get", p))
    step("get_table_8", f"get_table, {p.clients} clients",
         lambda: get_table_concurrent(target.port, db, "t_get", p))
    step("create_drop", "create_table + drop_table", lambda: create_drop_pairs(target.port, db, p))
    step("add_partitions", f"add_partitions {p.partitions:,} in batches of {p.batch:,}",
         lambda: add_partitions_run(target.port, db, "t_parts", p))
    step("get_partitions", f"get_partitions of {p.partitions:,}",
         lambda: wire_benchmark(target.port, "get_partitions", (db, "t_parts", -1), p.partitions,
                                p.wire_reps, p.budget_s, client_call=True))
    day = days()[37]
    step("get_partitions_by_filter", f'get_partitions_by_filter ds = "{day}"',
         lambda: wire_benchmark(target.port, "get_partitions_by_filter", (db, "t_parts", f'ds = "{day}"', -1),
                                max(1, p.partitions // 100), p.filter_reps, p.budget_s))
    step("get_partition_values", f"get_partition_values (ds, hr) of {p.partitions:,}",
         lambda: partition_values_call(target.port, db, "t_parts", p))
    for key, statement in (("get_partitions_by_expr", EXPR_DAY), ("get_partitions_by_expr_or", EXPR_OR)):
        step(key, f"get_partitions_by_expr {statement.split(' WHERE ')[1]}",
             lambda statement=statement: partitions_by_expr_call(target.port, db, "t_parts", statement, p))
    step("stats", f"column statistics calls on {STATS_PARTS} partitions",
         lambda: stats_calls(target.port, db, "t_parts", p))
    res["rss"] = rss_mib(target.pid)
    res["load_after"] = os.getloadavg()
    res["database"] = db
    if not target.fresh_store():  # a store we were given: leave it as we found it
        c = Client(target.port)
        c.drop_database(db, True, True)
        c.close()
    return res


def set_aside(out: Path, workdirs: list[Path]) -> Path:
    """Move an earlier run's server directories out of the way; they are deleted after this run's measurements.

    Deleting them first (tens of thousands of partition directories) would slow every mkdir of this run for
    minutes: ext4's inode allocator passes over recently deleted inodes one by one (`recently_deleted` in the
    kernel), and add_partitions makes a directory per partition, the reference's as ours.
    """
    trash = out / ".trash"
    trash.mkdir(exist_ok=True)
    for d in workdirs:
        if d.exists():
            d.rename(trash / f"{d.name}-{uuid.uuid4().hex[:8]}")
    return trash


def values(res: dict[str, Any]) -> dict[str, float]:
    return {"get_table_1": res["get_table_1"]["calls_per_s"], "get_table_1_p50": res["get_table_1"]["p50_ms"],
            "get_table_8": res["get_table_8"]["calls_per_s"], "create_drop": res["create_drop"]["pairs_per_s"],
            "add_partitions": res["add_partitions"]["total_s"],
            "get_partitions": res["get_partitions"]["median_ms"],
            "get_partitions_by_filter": res["get_partitions_by_filter"]["median_ms"],
            **{k: res[k]["median_ms"] for k in WIRE_ROWS if k in res},
            **{k: res["stats"][k]["median_ms"] for k in STATS_ROWS if k in res.get("stats", {})},
            "rss": res["rss"]["rss_mib"]}


WIRE_ROWS = ("get_partition_values", "get_partitions_by_expr", "get_partitions_by_expr_or")
STATS_ROWS = ("set_aggr_stats_for", "update_partition_column_statistics", "get_aggr_stats_for",
              "get_partitions_statistics_req", "get_table_statistics_req")


# -------------------------------------------------------------------------------------------- reporting

def fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "—"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def compare(ours: float | None, ref: float | None, better: str) -> tuple[float | None, str]:
    """(ours / reference, which is better and by how much)."""
    if ours is None or ref is None or ours <= 0 or ref <= 0:
        return None, "—"
    ratio = ours / ref
    ours_wins = ratio > 1 if better == "higher" else ratio < 1
    factor = max(ratio, 1 / ratio)
    if abs(factor - 1) < 0.005:
        return ratio, "even"
    return ratio, f"{'ours' if ours_wins else 'reference'}, {factor:,.2f}×"


def build_rows(p: Params, ours: dict[str, dict[str, float]],
               refs: dict[str, dict[str, float]] | None) -> list[dict[str, Any]]:
    """Each of our stores against the reference on the same kind of store when it ran there, else on Derby.
    `reference` is the reference on Derby, the one the targets are set against."""
    refs = refs or {}
    out = []
    for row in rows_for(p):
        entry: dict[str, Any] = {**asdict(row), "ours": {}, "reference": refs.get("derby", {}).get(row.id),
                                 "references": {store: vals.get(row.id) for store, vals in refs.items()},
                                 "reference_store": {}, "reference_by_backend": {}, "ratio": {}, "winner": {}}
        for backend, vals in ours.items():
            store = REFERENCE_STORE_OF.get(backend, "derby")
            store = store if store in refs else "derby" if "derby" in refs else None
            ref_v = refs[store].get(row.id) if store else None
            ratio, winner = compare(vals.get(row.id), ref_v, row.better)
            entry["ours"][backend] = vals.get(row.id)
            entry["reference_store"][backend] = store
            entry["reference_by_backend"][backend] = ref_v
            entry["ratio"][backend] = ratio
            entry["winner"][backend] = winner
        out.append(entry)
    return out


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    backends = list(rows[0]["ours"]) if rows else []
    protocol = ("TBinaryProtocolAccelerated, C" if meta.get("client_protocol", "plain") == "accelerated"
                else "TBinaryProtocol, pure Python, as PyIceberg")
    lines = [f"# Metastore benchmark ({'quick' if meta['quick'] else 'full'} run, {meta['finished']})", "",
             f"`{meta['command']}`", "",
             f"Host: {meta['host']['cpus']} CPUs (shared), Python {meta['host']['python']}; "
             f"client: Apache Thrift `hive_metastore` (TBufferedTransport + "
             f"{protocol}), "
             "the same for both servers. "
             "Reference: " + ("; ".join(f"{name}: {d}" for name, d in meta["references"].items())
                              if meta.get("references") else "not run (--no-reference)") + ".",
             "Load average (1 min) before → after each server's run: " + ", ".join(
                 f"{name} {before:.1f} → {after:.1f}" for name, (before, after) in meta.get("load", {}).items())
             + ".", ""]
    for b in backends:
        store = rows[0].get("reference_store", {}).get(b)
        lines += [f"## ours on {b} vs reference" + (f" on {store}" if store else ""), "",
                  "| benchmark | ours | reference | ratio (ours/ref) | better |", "|---|---:|---:|---:|---|"]
        for r in rows:
            ratio = r["ratio"][b]
            lines.append(f"| {r['label']} ({r['unit']}, {r['better']} is better) | {fmt(r['ours'][b], r['unit'])} "
                         f"| {fmt(r['reference_by_backend'][b], r['unit'])} "
                         f"| {'—' if ratio is None else f'{ratio:.2f}'} "
                         f"| {r['winner'][b]} |")
        lines.append("")
    lines += ["Times on the wire are measured from the request's first byte to the reply's last on a persistent "
              "connection (decoding not included; `client_call_ms` in results.json includes it). Calls/s are "
              "medians over fixed windows; add_partitions is one run; memory is VmRSS from /proc for one process, "
              "PSS summed over the processes of a server with workers.", ""]
    return "\n".join(lines)


def chart(rows: list[dict[str, Any]], meta: dict[str, Any], path: Path) -> None:
    try:
        from chart import write_chart
        if write_chart(rows, meta, path):
            print(f"chart: {path}")
    except ImportError as e:  # matplotlib comes with the test extra; the figures stand without it
        print(f"no chart ({e})")


# ------------------------------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    global WORKERS, CLIENT_PROTOCOL
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run (~1 minute without the reference)")
    ap.add_argument("--no-reference", action="store_true", help="do not run the reference Hive metastore")
    ap.add_argument("--db", help="SQLAlchemy URL of an existing store for our server (instead of --backends)")
    ap.add_argument("--backends", default="sqlite",
                    help="our server on these fresh stores, comma-separated: sqlite,postgres,mariadb [sqlite]")
    ap.add_argument("--reference-stores",
                    help="the reference on these stores, comma-separated: derby,postgres,mariadb [derby, and "
                         "postgres and mariadb when they are among --backends]")
    ap.add_argument("--reference-port", type=int, default=9483, help="port of the reference on Derby [9483]")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out"), help="output directory [bench/out]")
    ap.add_argument("--workers", type=int, default=WORKERS,
                    help=f"server processes of ours (metastore serve --workers) [{WORKERS}: one per CPU]")
    ap.add_argument("--client-protocol", choices=("accelerated", "plain"), default=CLIENT_PROTOCOL,
                    help="the clients' Thrift binary protocol: C-accelerated, or pure Python as PyIceberg "
                         f"[{CLIENT_PROTOCOL}]")
    args = ap.parse_args(argv)
    WORKERS = max(1, args.workers)
    # the environment carries it to the client processes (spawned: they import this module afresh)
    os.environ["BENCH_CLIENT_PROTOCOL"] = args.client_protocol
    CLIENT_PROTOCOL = args.client_protocol

    p = QUICK if args.quick else FULL
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.db:
        import sqlalchemy as sa
        backend = {"postgresql": "postgres", "mysql": "mariadb", "mariadb": "mariadb"}.get(
            sa.engine.make_url(args.db).get_backend_name(), sa.engine.make_url(args.db).get_backend_name())
        ours = [Ours(backend, args.db, out / "work" / f"ours-{backend}")]
    else:
        names = [b.strip() for b in args.backends.split(",") if b.strip()]
        unknown = set(names) - {"sqlite", "postgres", "mariadb"}
        if unknown or not names:
            ap.error(f"unknown backend(s): {', '.join(sorted(unknown)) or '(none)'}")
        ours = [Ours(b, None, out / "work" / f"ours-{b}") for b in names]
    targets: list[Any] = list(ours)
    references: dict[str, Any] = {}
    if not args.no_reference:
        stores = ([s.strip() for s in args.reference_stores.split(",") if s.strip()] if args.reference_stores
                  else ["derby"] + [t.backend for t in ours if t.backend in ("postgres", "mariadb")])
        unknown = set(stores) - {"derby", "postgres", "mariadb"}
        if unknown or not stores:
            ap.error(f"unknown reference store(s): {', '.join(sorted(unknown)) or '(none)'}")
        for store in dict.fromkeys(stores):
            references[store] = (Reference(out / "reference-hms", args.reference_port, sys.executable)
                                 if store == "derby" else ReferenceOnDb(store, out / "work" / f"reference-{store}"))
        targets.extend(references.values())

    command = command_line("bench/run.py", argv)
    meta: dict[str, Any] = {
        "command": command, "quick": args.quick, "params": asdict(p),
        "started": utc_now(),
        "host": host_facts(),
        "client": "hive_metastore (Apache Thrift), TBufferedTransport + " + (
            "TBinaryProtocolAccelerated" if CLIENT_PROTOCOL == "accelerated" else "TBinaryProtocol"),
        "client_protocol": CLIENT_PROTOCOL,
    }
    try:
        meta["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                            text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        meta["git_commit"] = None
    log(f"benchmark ({'quick' if args.quick else 'full'}): {', '.join(t.name for t in targets)}; "
        f"{p.partitions:,} partitions; output in {out}")

    trash = set_aside(out, [t.workdir for t in targets])
    results: dict[str, Any] = {}
    failures: list[str] = []
    for t in targets:
        t0 = time.perf_counter()
        try:
            log(f"starting {t.name}")
            t.start()
            log(f"{t.name} on port {t.port} (pid {t.pid})")
            results[t.name] = run_target(t, p)
            results[t.name]["total_s"] = time.perf_counter() - t0
        except KeyboardInterrupt:
            t.stop()
            raise
        except Exception as e:
            failures.append(f"{t.name}: {type(e).__name__}: {e}")
            log(f"{t.name} FAILED: {type(e).__name__}: {e}")
            traceback.print_exc()
        finally:
            t.stop()
            log(f"stopped {t.name} ({time.perf_counter() - t0:.0f} s)")
    if "derby" in references:
        meta["reference"] = references["derby"].describe()
    meta["references"] = {r.name: r.describe() for r in references.values()}
    meta["finished"] = utc_now()
    meta["failures"] = failures
    meta["load"] = {name: (r["load_before"][0], r["load_after"][0]) for name, r in results.items()}

    ours_vals = {t.backend: values(results[t.name]) for t in ours if t.name in results}
    ref_vals = {store: values(results[r.name]) for store, r in references.items() if r.name in results}
    rows = build_rows(p, ours_vals, ref_vals)
    md = markdown(rows, meta)
    publish(out, "results", {"meta": meta, "rows": rows, "targets": results}, md, json_first=True)
    chart(rows, meta, out / "results.png")
    shutil.rmtree(trash, ignore_errors=True)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
