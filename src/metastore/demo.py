"""The main job (`make run`): a real PySpark job with Hive support against `metastore serve`.

    python -m metastore.demo [--spark-master local[*]] [--port 9083] [--data-dir metastore-data]

1. starts `metastore serve` on its embedded defaults (SQLite in the data directory, the warehouse under it),
   on 9083 if that port is free, else on a free port;
2. runs a short PySpark job through it: a database (dropped and recreated, so the job can run again and
   again), a partitioned Parquet table, a few thousand generated rows written into several partitions, a
   query with a partition filter and an aggregate;
3. checks every answer against the same computation in plain Python, and checks through the metastore's
   Thrift API that the table and its partitions are really there;
4. prints a summary, stops Spark and the server, and exits non-zero if any check failed.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from .procs import wait_listening
from .thrift.client import MetastoreClient

DB = "metastore_demo"
TABLE = "sales"
DAYS = [f"2024-03-{d:02d}" for d in range(1, 8)]  # seven partitions
ITEMS = ["apple", "banana", "cherry", "date", "elderberry", "fig"]
ROWS = 5000
FILTER_FROM, FILTER_TO = "2024-03-03", "2024-03-05"  # three of the seven partitions

console = Console(highlight=False)

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
# a level of its own for the shell's logger keeps Spark from announcing its default level in PySpark
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""


# --------------------------------------------------------------------------------------------- the data

def generate_rows(n: int = ROWS, seed: int = 20240301) -> list[tuple[int, str, int, int, str]]:
    """Deterministic rows (id, item, qty, price_cents, day); prices in cents so the sums are exact."""
    rnd = random.Random(seed)
    return [(i, rnd.choice(ITEMS), rnd.randint(1, 20), rnd.randint(50, 5000), DAYS[i % len(DAYS)])
            for i in range(n)]


def expected_aggregate(rows: list[tuple[int, str, int, int, str]]) -> list[tuple[str, int, int, int]]:
    """(item, orders, total qty, revenue in cents) over the filtered days, by item: the query in plain Python."""
    acc: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for _, item, qty, price, day in rows:
        if FILTER_FROM <= day <= FILTER_TO:
            a = acc[item]
            a[0] += 1
            a[1] += qty
            a[2] += qty * price
    return [(item, a[0], a[1], a[2]) for item, a in sorted(acc.items())]


# ------------------------------------------------------------------------------------------ the server

def port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MetastoreProcess:
    """`metastore serve` on the embedded defaults (SQLite in the data directory), as a subprocess."""

    def __init__(self, port: int, data_dir: str, *extra: str) -> None:
        self.port = port
        self.extra = list(extra)  # more `metastore serve` options
        self.data_dir = os.path.abspath(data_dir)
        self.warehouse = os.path.join(self.data_dir, "warehouse")
        self.log_path = os.path.join(self.data_dir, "serve.log")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> None:
        os.makedirs(self.data_dir, exist_ok=True)
        cmd = [sys.executable, "-m", "metastore.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--data-dir", self.data_dir, *self.extra]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_listening(self.port, self.proc, timeout, "metastore", self.log_tail)

    def log_tail(self, n: int = 3000) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextmanager
def thrift_client(port: int) -> Iterator[MetastoreClient]:
    """The project's Thrift client of the metastore on `port`, to look behind Spark's back."""
    with MetastoreClient(f"thrift://127.0.0.1:{port}", timeout=30) as client:
        yield client


# ---------------------------------------------------------------------------------------------- checks

@dataclass
class Check:
    name: str
    ok: bool
    detail: str


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, bool(ok), detail))
        mark = "[green]✓[/]" if ok else "[bold red]✗[/]"
        console.print(f"  {mark} {name}" + (f" [dim]({detail})[/]" if detail else ""))
        return bool(ok)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)


@contextmanager
def step(report: Report, what: str) -> Iterator[None]:
    t0 = time.perf_counter()
    with console.status(f"[bold cyan]{what}…"):
        yield
    took = time.perf_counter() - t0
    report.timings.append((what, took))
    console.print(f"[cyan]●[/] {what} [dim]{took:.1f} s[/]")


# ------------------------------------------------------------------------------------ a demo's main

def demo_arguments(prog: str, doc: str, data_dir: str, data_dir_note: str = "") -> argparse.ArgumentParser:
    """The options every demo takes; a demo adds its own."""
    ap = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    ap.add_argument("--spark-master", default="local[*]", help="Spark master URL [local[*]]")
    ap.add_argument("--port", type=int, help="Thrift port of the metastore [9083 if free, else a free port]")
    ap.add_argument("--data-dir", default=data_dir,
                    help=f"the metastore's data directory{data_dir_note} [./{data_dir}]")
    return ap


def demo_port(requested: int | None) -> int | None:
    """The metastore's port: `requested`, else 9083 if free, else a free one; None (said) when `requested` is
    in use."""
    port = requested or (9083 if port_free(9083) else free_port())
    if requested and not port_free(port):
        console.print(f"[red]port {port} is in use[/]")
        return None
    return port


class DemoRun:
    """A demo's run: the metastore and Spark on it started, the job run, then Spark and every metastore
    stopped whatever happened. A failure is shown (with the metastore log's tail) and becomes a failed check,
    so that the summary still prints."""

    def __init__(self, master: str, server: MetastoreProcess, *others: MetastoreProcess) -> None:
        self.master = master
        self.server = server
        self.others = others  # started by the job when it needs them; stopped here before `server`
        self.report = Report()
        self.info: dict[str, Any] = {}  # what the job found, for the summary
        self.spark: Any = None  # the job may move it to another metastore

    def run(self, title: str, job: Callable[[], None], ran_to_end: str) -> None:
        failed: BaseException | None = None
        console.rule(f"[bold]{title}")
        try:
            with step(self.report, f"Starting metastore serve on {self.server.uri}"):
                self.server.start()
            with step(self.report, f"Starting Spark ({self.master}, Hive support)"):
                self.spark = spark_session(self.master, self.server.uri, self.server.warehouse, self.server.data_dir)
            job()
        except KeyboardInterrupt:
            failed = KeyboardInterrupt()
            console.print("[red]interrupted[/]")
        except Exception as e:  # noqa: BLE001 - the job failed: show why, still stop everything
            failed = e
            console.print(f"[bold red]job failed:[/] {type(e).__name__}: {str(e)[:2000]}")
            tail = self.server.log_tail(1500)
            if tail:
                console.print(Panel(tail, title="metastore log (tail)", border_style="red"))
        finally:
            with console.status("Stopping Spark and the metastore…"):
                if self.spark is not None:
                    try:
                        self.spark.stop()
                    except Exception:  # noqa: BLE001
                        pass
                for server in (*self.others, self.server):
                    server.stop()
        if failed is not None:
            self.report.check(ran_to_end, False, type(failed).__name__)


# ------------------------------------------------------------------------------------------- the job

def spark_session(master: str, uri: str, warehouse: str, conf_dir: str) -> Any:
    from pyspark.sql import SparkSession

    log4j = os.path.join(conf_dir, "log4j2-demo.properties")
    with open(log4j, "w") as f:
        f.write(_LOG4J)
    java_opts = f"-Dlog4j.configurationFile=file:{log4j} -Dderby.stream.error.file=/dev/null"
    return (SparkSession.builder.master(master).appName("metastore-demo")
            .config("spark.hadoop.hive.metastore.uris", uri)
            .config("spark.sql.warehouse.dir", warehouse)
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.extraJavaOptions", java_opts)
            .config("spark.executor.extraJavaOptions", java_opts)
            .enableHiveSupport()
            .getOrCreate())


def run_job(spark: Any, server: MetastoreProcess, report: Report) -> dict[str, Any]:
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    spark.sparkContext.setLogLevel("ERROR")
    info: dict[str, Any] = {}
    rows = generate_rows()
    fq = f"{DB}.{TABLE}"

    with step(report, f"Recreating database {DB}"):
        spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
        # a directory left behind by an interrupted run would make CREATE TABLE refuse the location
        shutil.rmtree(os.path.join(server.warehouse, f"{DB}.db"), ignore_errors=True)
        spark.sql(f"CREATE DATABASE {DB} COMMENT 'created by python -m metastore.demo'")
    report.check("database visible to Spark", DB in [r[0] for r in spark.sql("SHOW DATABASES").collect()])

    with step(report, f"Creating partitioned Parquet table {fq}"):
        spark.sql(f"""CREATE TABLE {fq} (id INT, item STRING, qty INT, price_cents INT, day STRING)
                      USING parquet PARTITIONED BY (day)""")
    cols = [r[0] for r in spark.sql(f"DESCRIBE TABLE {fq}").collect()]
    report.check("table schema read back from the metastore",
                 cols[:5] == ["id", "item", "qty", "price_cents", "day"], ", ".join(cols[:5]))

    with step(report, f"Writing {len(rows):,} rows into {len(DAYS)} partitions"):
        schema = StructType([StructField("id", IntegerType(), False), StructField("item", StringType(), False),
                             StructField("qty", IntegerType(), False),
                             StructField("price_cents", IntegerType(), False),
                             StructField("day", StringType(), False)])
        spark.createDataFrame(rows, schema).repartition("day").write.insertInto(fq)

    parts = [r[0] for r in spark.sql(f"SHOW PARTITIONS {fq}").collect()]
    report.check("partitions listed by Spark", parts == [f"day={d}" for d in DAYS], f"{len(parts)} partitions")
    with thrift_client(server.port) as ms:
        names = ms.get_partition_names(DB, TABLE, -1)
        t = ms.get_table(DB, TABLE)
        in_range = ms.get_partitions_by_filter(DB, TABLE, f'day >= "{FILTER_FROM}" and day <= "{FILTER_TO}"', -1)
    report.check("partitions stored in the metastore", sorted(names) == [f"day={d}" for d in DAYS],
                 f"get_partition_names → {len(names)}")
    report.check("partition filter answered by the metastore",
                 sorted(p.values[0] for p in in_range) == [d for d in DAYS if FILTER_FROM <= d <= FILTER_TO],
                 f"get_partitions_by_filter → {len(in_range)}")
    files = sum(1 for d in DAYS for f in os.listdir(os.path.join(server.warehouse, f"{DB}.db", TABLE, f"day={d}"))
                if f.endswith(".parquet"))
    report.check("Parquet files under the metastore's warehouse",
                 t.sd.location.rstrip("/").endswith(f"/{DB}.db/{TABLE}") and files > 0,
                 f"{files} files in {TABLE}/day=*/")
    info["partitions"], info["files"] = len(names), files

    count = spark.table(fq).count()
    report.check("row count", count == len(rows), f"{count:,} rows")

    query = f"""SELECT item, count(*) AS orders, sum(qty) AS qty, sum(CAST(qty AS BIGINT) * price_cents) AS revenue
                FROM {fq} WHERE day BETWEEN '{FILTER_FROM}' AND '{FILTER_TO}'
                GROUP BY item ORDER BY item"""
    with step(report, "Querying with a partition filter and an aggregate"):
        df = spark.sql(query)
        got = [(r["item"], r["orders"], r["qty"], r["revenue"]) for r in df.collect()]
    plan = df._jdf.queryExecution().executedPlan().toString()
    report.check("partition filter pushed to the scan", "PartitionFilters: [" in plan and "day" in plan)
    want = expected_aggregate(rows)
    report.check("aggregate equals plain Python", got == want, f"{len(got)} groups")
    info["result"] = got
    info["expected"] = want
    info["rows"] = len(rows)
    return info


def summary(report: Report, info: dict[str, Any], server: MetastoreProcess, master: str) -> None:
    if info.get("result"):
        t = Table(title=f"Revenue by item, {FILTER_FROM} … {FILTER_TO[-2:]}", title_justify="left")
        for col in ("item", "orders", "qty", "revenue", "python"):
            t.add_column(col, justify="left" if col == "item" else "right")
        want = {w[0]: w for w in info["expected"]}
        for item, orders, qty, revenue in info["result"]:
            same = want.get(item) == (item, orders, qty, revenue)
            t.add_row(item, f"{orders:,}", f"{qty:,}", f"{revenue / 100:,.2f}",
                      "[green]same[/]" if same else f"[red]{want.get(item)}[/]")
        console.print(t)
    passed = sum(c.ok for c in report.checks)
    lines = [f"metastore  {server.uri}  (SQLite in {server.data_dir})",
             f"spark      {master}, warehouse {server.warehouse}",
             f"table      {DB}.{TABLE}: {info.get('rows', 0):,} rows, {info.get('partitions', 0)} partitions, "
             f"{info.get('files', 0)} Parquet files",
             f"checks     {passed}/{len(report.checks)} passed"]
    style = "green" if report.ok else "red"
    console.print(Panel("\n".join(lines), title="[bold]metastore demo: " + ("OK" if report.ok else "FAILED"),
                        border_style=style, expand=False))


def main(argv: list[str] | None = None) -> int:
    args = demo_arguments("python -m metastore.demo", __doc__, "metastore-data").parse_args(argv)

    t0 = time.perf_counter()
    port = demo_port(args.port)
    if port is None:
        return 2
    server = MetastoreProcess(port, args.data_dir)
    demo = DemoRun(args.spark_master, server)

    def job() -> None:
        demo.info = run_job(demo.spark, server, demo.report)

    demo.run("metastore demo", job, "job ran to the end")
    summary(demo.report, demo.info, server, args.spark_master)
    console.print(f"[dim]done in {time.perf_counter() - t0:.1f} s; metastore log: {server.log_path}[/]")
    return 0 if demo.report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
