"""The pipeline's main job: retail orders arrive day by day; each new day partition triggers downstream jobs.

    python -m metastore.pipeline.demo [--spark-master local[*]] [--port 9083] [--data-dir metastore-data/pipeline]

1. starts `metastore serve` on its embedded defaults (SQLite in a fresh data directory, the warehouse under it);
2. generates a deterministic retail data set into a local landing directory (customers, products, a few days
   of orders as CSV; nothing downloaded);
3. an ingest PySpark job loads each day of orders into `retail.orders` (partitioned by day); every new day
   partition's ADD_PARTITION event triggers two downstream jobs through the pipeline runner: revenue per
   product category and day, and a per-customer daily summary, both partitioned tables;
4. a late correction restates one day (some orders cancelled): the ingest job overwrites that partition and
   fires an INSERT event, which re-runs only that day's downstream jobs;
5. checks partitions (through the metastore's Thrift API), job runs, rows per stage and a final query against
   plain Python;
6. replicates `retail` to a second metastore through two scheduled policies (REPL DUMP / REPL LOAD every
   5 seconds, the data copied by PySpark) and runs the final queries with Spark on the replica; prints a
   summary; exits non-zero if any check failed.
"""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from rich.panel import Panel
from rich.table import Table

from ..demo import (
    DemoRun,
    MetastoreProcess,
    Report,
    console,
    demo_arguments,
    demo_port,
    free_port,
    spark_session,
    step,
    thrift_client,
)
from ..thrift.client import MetastoreClient
from .core import JobContext, Pipeline, Runner, notify_insert

DB = "retail"
CATEGORIES = ["grocery", "beverages", "household", "electronics", "toys", "apparel", "garden", "books"]
SEGMENTS = ["consumer", "small business", "corporate"]
REGIONS = ["north", "south", "east", "west"]
FIRST_DAY = date(2024, 3, 1)
CORRECTED_DAY_INDEX = 2


# --------------------------------------------------------------------------------------------- the data

@dataclass
class DataSet:
    customers: list[tuple[int, str, str, str]]  # id, name, segment, region
    products: list[tuple[int, str, str, int]]  # id, name, category, list price (cents)
    # day -> (order_id, customer, product, qty, unit price, ts)
    orders: dict[str, list[tuple[int, int, int, int, int, str]]]


def generate(days: int, orders_per_day: int, seed: int = 20240301) -> DataSet:
    rnd = random.Random(seed)
    customers = [(i, f"customer-{i:05d}", rnd.choices(SEGMENTS, (6, 3, 1))[0], rnd.choice(REGIONS))
                 for i in range(1, 2001)]
    products = [(i, f"{(c := rnd.choice(CATEGORIES))}-item-{i:03d}", c, rnd.randint(99, 25_000)) for i in range(1, 151)]
    weights = [1 / (1 + i % 40) for i in range(len(customers))]  # some customers buy much more than others
    orders: dict[str, list[tuple[int, int, int, int, int, str]]] = {}
    oid = 1
    for d in range(days):
        day = FIRST_DAY + timedelta(days=d)
        n = int(orders_per_day * (0.85 + 0.3 * rnd.random()))
        cust = rnd.choices(customers, weights, k=n)
        rows = []
        for buyer in cust:
            p = products[rnd.randrange(len(products))]
            price = p[3] if rnd.random() > 0.1 else p[3] * 8 // 10  # 10% of orders at a discount
            ts = datetime(day.year, day.month, day.day) + timedelta(seconds=rnd.randrange(86400))
            rows.append((oid, buyer[0], p[0], rnd.choices((1, 2, 3, 4, 6), (50, 25, 12, 8, 5))[0], price,
                         ts.strftime("%Y-%m-%d %H:%M:%S")))
            oid += 1
        orders[day.isoformat()] = rows
    return DataSet(customers, products, orders)


def correction(rows: list[tuple[int, int, int, int, int, str]]) -> list[tuple[int, int, int, int, int, str]]:
    """The late correction for a day: orders whose id is a multiple of 16 were cancelled."""
    return [r for r in rows if r[0] % 16 != 0]


def write_csv(path: str, rows: list[tuple[Any, ...]]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)


def expected(data: DataSet) -> dict[str, Any]:
    """The downstream tables, computed in plain Python."""
    cat = {p[0]: p[2] for p in data.products}
    seg = {c[0]: c[2] for c in data.customers}
    by_cat: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    by_cust: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for day, rows in data.orders.items():
        for _, c, p, qty, price, _ in rows:
            a = by_cat[(day, cat[p])]
            a[0] += 1; a[1] += qty; a[2] += qty * price  # noqa: E702
            b = by_cust[(day, c)]
            b[0] += 1; b[1] += qty; b[2] += qty * price  # noqa: E702
    totals: dict[str, int] = defaultdict(int)
    for (_, category), v in by_cat.items():
        totals[category] += v[2]
    top = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    spenders: dict[int, int] = defaultdict(int)
    for (_, customer), v in by_cust.items():
        spenders[customer] += v[2]
    top_cust = sorted(spenders.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    return {"by_cat": by_cat, "by_cust": by_cust, "top": top, "top_customers": top_cust, "segments": seg}


# ------------------------------------------------------------------------------------------- the jobs

ORDERS_SCHEMA = "order_id BIGINT, customer_id INT, product_id INT, qty INT, unit_price_cents INT, ts STRING"


def create_tables(spark: Any, warehouse: str) -> None:
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    shutil.rmtree(os.path.join(warehouse, f"{DB}.db"), ignore_errors=True)
    spark.sql(f"CREATE DATABASE {DB} COMMENT 'retail orders pipeline (python -m metastore.pipeline.demo)'")
    spark.sql(f"CREATE TABLE {DB}.customers (customer_id INT, name STRING, segment STRING, region STRING) "
              "STORED AS PARQUET")
    spark.sql(f"CREATE TABLE {DB}.products (product_id INT, name STRING, category STRING, list_price_cents INT) "
              "STORED AS PARQUET")
    spark.sql(f"CREATE TABLE {DB}.orders ({ORDERS_SCHEMA}) PARTITIONED BY (day STRING) STORED AS PARQUET")
    spark.sql(f"CREATE TABLE {DB}.daily_category_revenue (category STRING, orders BIGINT, units BIGINT, "
              "revenue_cents BIGINT) PARTITIONED BY (day STRING) STORED AS PARQUET")
    spark.sql(f"CREATE TABLE {DB}.daily_customer_summary (customer_id INT, segment STRING, orders BIGINT, "
              "units BIGINT, spend_cents BIGINT) PARTITIONED BY (day STRING) STORED AS PARQUET")


def load_dimensions(spark: Any, landing: str) -> None:
    spark.read.schema("customer_id INT, name STRING, segment STRING, region STRING").csv(
        os.path.join(landing, "customers.csv")).createOrReplaceTempView("landing_customers")
    spark.sql(f"INSERT OVERWRITE TABLE {DB}.customers SELECT * FROM landing_customers")
    spark.read.schema("product_id INT, name STRING, category STRING, list_price_cents INT").csv(
        os.path.join(landing, "products.csv")).createOrReplaceTempView("landing_products")
    spark.sql(f"INSERT OVERWRITE TABLE {DB}.products SELECT * FROM landing_products")


def ingest_day(spark: Any, landing: str, day: str) -> None:
    """The ingest job: one day's landing file into its partition of retail.orders (overwritten)."""
    spark.read.schema(ORDERS_SCHEMA).csv(os.path.join(landing, "orders", f"day={day}")) \
        .createOrReplaceTempView("landing_orders")
    spark.sql(f"INSERT OVERWRITE TABLE {DB}.orders PARTITION (day='{day}') SELECT * FROM landing_orders")


def declare_jobs(pipe: Pipeline) -> None:
    @pipe.on_partition(f"{DB}.orders", name="daily_category_revenue")
    def daily_category_revenue(ctx: JobContext) -> None:
        ctx.spark.sql(f"""
            INSERT OVERWRITE TABLE {DB}.daily_category_revenue PARTITION ({ctx.partition_spec})
            SELECT p.category, count(*), sum(o.qty), sum(CAST(o.qty AS BIGINT) * o.unit_price_cents)
            FROM {DB}.orders o JOIN {DB}.products p ON o.product_id = p.product_id
            WHERE o.day = {ctx.sql_value('day')}
            GROUP BY p.category""")

    @pipe.on_partition(f"{DB}.orders", name="daily_customer_summary")
    def daily_customer_summary(ctx: JobContext) -> None:
        ctx.spark.sql(f"""
            INSERT OVERWRITE TABLE {DB}.daily_customer_summary PARTITION ({ctx.partition_spec})
            SELECT o.customer_id, c.segment, count(*), sum(o.qty), sum(CAST(o.qty AS BIGINT) * o.unit_price_cents)
            FROM {DB}.orders o JOIN {DB}.customers c ON o.customer_id = c.customer_id
            WHERE o.day = {ctx.sql_value('day')}
            GROUP BY o.customer_id, c.segment""")


# ------------------------------------------------------------------------------------------- the main job

def run(spark: Any, server: MetastoreProcess, report: Report, days: int, orders_per_day: int) -> dict[str, Any]:
    spark.sparkContext.setLogLevel("ERROR")
    info: dict[str, Any] = {}
    landing = os.path.join(server.data_dir, "landing")

    with step(report, f"Generating {days} days of retail orders (seeded) into {landing}"):
        data = generate(days, orders_per_day)
        write_csv(os.path.join(landing, "customers.csv"), data.customers)
        write_csv(os.path.join(landing, "products.csv"), data.products)
        for day, rows in data.orders.items():
            write_csv(os.path.join(landing, "orders", f"day={day}", "orders.csv"), rows)
    days_list = list(data.orders)
    info["raw_rows"] = sum(len(r) for r in data.orders.values())
    console.print(f"  [dim]{len(data.customers):,} customers, {len(data.products)} products, "
                  f"{info['raw_rows']:,} orders[/]")

    with step(report, f"Creating database {DB} and its tables; loading customers and products"):
        create_tables(spark, server.warehouse)
        load_dimensions(spark, landing)

    pipe = Pipeline(server.uri, state=os.path.join(server.data_dir, "pipeline.sqlite"), name="retail",
                    retry_backoff=0.2)
    declare_jobs(pipe)
    runner = Runner(pipe, spark, start="latest")
    info["runner"] = runner
    log_job = _progress_printer(runner)
    try:
        for day in days_list:
            with step(report, f"Ingest {day} → {DB}.orders, then the jobs it triggers"):
                ingest_day(spark, landing, day)
                runner.run(until_idle=True, on_progress=log_job)

        corrected = days_list[min(CORRECTED_DAY_INDEX, len(days_list) - 1)]
        before = {r["job"]: r["runs"] for r in pipe.db.rows("SELECT job, sum(runs) AS runs FROM work GROUP BY job")}
        with step(report, f"Late correction of {corrected}: restate the partition, fire INSERT, re-run"):
            fixed = correction(data.orders[corrected])
            info["cancelled"] = len(data.orders[corrected]) - len(fixed)
            data.orders[corrected] = fixed
            write_csv(os.path.join(landing, "orders", f"day={corrected}", "orders.csv"), fixed)
            ingest_day(spark, landing, corrected)
            notify_insert(server.uri, f"{DB}.orders", {"day": corrected})
            runner.run(until_idle=True, on_progress=log_job)
        info["corrected"] = corrected
    finally:
        runner.close()

    # ---- checks
    work = pipe.db.rows("SELECT * FROM work ORDER BY job, part")
    after = {r["job"]: r["runs"] for r in pipe.db.rows("SELECT job, sum(runs) AS runs FROM work GROUP BY job")}
    reran = pipe.db.rows("SELECT job, part FROM work WHERE runs > 1")
    report.check("every day processed by both downstream jobs",
                 len(work) == 2 * len(days_list) and all(r["status"] == "done" for r in work),
                 f"{sum(r['status'] == 'done' for r in work)}/{2 * len(days_list)} done")
    report.check("the correction re-ran only that day's jobs",
                 sorted((r["job"], r["part"]) for r in reran) == sorted((j, f"day={corrected}") for j in pipe.jobs)
                 and all(after[j] - before.get(j, 0) == 1 for j in pipe.jobs),
                 f"{len(reran)} (job, day) pairs ran twice")
    with thrift_client(server.port) as ms:
        parts = {t: sorted(ms.get_partition_names(DB, t, -1))
                 for t in ("orders", "daily_category_revenue", "daily_customer_summary")}
        tables = sorted(ms.get_all_tables(DB))
    want_parts = [f"day={d}" for d in days_list]
    report.check("partitions in the metastore", all(p == want_parts for p in parts.values()),
                 ", ".join(f"{t}: {len(p)}" for t, p in parts.items()))
    info["tables"], info["parts"] = tables, parts

    exp = expected(data)
    counts = {
        "orders": spark.table(f"{DB}.orders").count(),
        "daily_category_revenue": spark.table(f"{DB}.daily_category_revenue").count(),
        "daily_customer_summary": spark.table(f"{DB}.daily_customer_summary").count(),
    }
    info["counts"] = counts
    report.check("rows in retail.orders (after the correction)",
                 counts["orders"] == sum(map(len, data.orders.values())), f"{counts['orders']:,}")
    report.check("rows per stage", counts["daily_category_revenue"] == len(exp["by_cat"])
                 and counts["daily_customer_summary"] == len(exp["by_cust"]),
                 f"{counts['daily_category_revenue']} category-days, "
                 f"{counts['daily_customer_summary']:,} customer-days")

    got_cat = {(r["day"], r["category"]): [r["orders"], r["units"], r["revenue_cents"]]
               for r in spark.table(f"{DB}.daily_category_revenue").collect()}
    report.check("daily_category_revenue equals plain Python", got_cat == dict(exp["by_cat"]))
    got_cust = {(r["day"], r["customer_id"]): [r["orders"], r["units"], r["spend_cents"]]
                for r in spark.sql(f"SELECT day, customer_id, orders, units, spend_cents "
                                   f"FROM {DB}.daily_customer_summary").collect()}
    report.check("daily_customer_summary equals plain Python", got_cust == dict(exp["by_cust"]))

    with step(report, "Final query: top categories by revenue, top customers by spend"):
        top = [(r[0], r[1]) for r in spark.sql(
            f"SELECT category, sum(revenue_cents) AS rev FROM {DB}.daily_category_revenue "
            "GROUP BY category ORDER BY rev DESC, category LIMIT 5").collect()]
        top_c = [(r[0], r[1]) for r in spark.sql(
            f"SELECT customer_id, sum(spend_cents) AS s FROM {DB}.daily_customer_summary "
            "GROUP BY customer_id ORDER BY s DESC, customer_id LIMIT 3").collect()]
    report.check("top categories equal plain Python", top == exp["top"])
    report.check("top customers equal plain Python", top_c == exp["top_customers"])
    info["top"], info["top_customers"] = top, top_c
    info["events"] = pipe.db.rows("SELECT event_type, count(*) AS n FROM seen GROUP BY event_type")
    info["runs"] = pipe.db.rows("SELECT job, count(*) AS attempts, sum(ok) AS ok, sum(finished - started) AS secs "
                                "FROM runs GROUP BY job ORDER BY job")
    return info


REPLICA_POLICIES = ("retail_dump", "retail_load")


def _sql(server: MetastoreProcess, statement: str) -> list[dict[str, str]]:
    """`metastore sql` on the server's store: a scheduled-query statement, or the rows of a query."""
    p = subprocess.run([sys.executable, "-m", "metastore.cli", "sql", "--data-dir", server.data_dir, statement],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"metastore sql {statement!r}: {p.stderr.strip()[-1000:]}")
    lines = p.stdout.splitlines()
    if not statement.lstrip().upper().startswith("SELECT") or not lines:
        return []
    cols = lines[0].split("\t")
    return [dict(zip(cols, line.split("\t"))) for line in lines[1:]]


def replicate(spark: Any, source: MetastoreProcess, replica: MetastoreProcess, report: Report, master: str,
              info: dict[str, Any]) -> Any:
    """The job's last stage: `retail` replicated to a second metastore by two scheduled policies (REPL DUMP
    on the source, REPL LOAD on the replica, every 5 seconds; the load copies the data with PySpark), then
    the final queries run again with Spark on the replica. Returns the Spark session on the replica."""
    from ..repl import ReplError, status

    root = os.path.join(source.data_dir, "repl")
    with step(report, f"Starting the replica metastore on {replica.uri}"):
        shutil.rmtree(replica.data_dir, ignore_errors=True)
        replica.start()
    with step(report, "Replication policies: REPL DUMP on the source and REPL LOAD on the replica, every 5 s"):
        _sql(source, f"CREATE SCHEDULED QUERY {REPLICA_POLICIES[0]} EVERY 5 SECONDS AS REPL DUMP {DB} "
                     f"WITH ('hive.repl.rootdir'='{root}')")
        _sql(replica, f"CREATE SCHEDULED QUERY {REPLICA_POLICIES[1]} EVERY 5 SECONDS AS REPL LOAD {DB} INTO {DB} "
                      f"WITH ('hive.repl.rootdir'='{root}', 'spark.master'='{master}')")
        with MetastoreClient(source.uri, timeout=30) as ms:
            wanted = ms.current_event_id()
        deadline, last = time.monotonic() + 300, None
        while time.monotonic() < deadline:
            try:
                last = status(replica.uri, DB).get("last_id")
            except ReplError:
                last = None  # not bootstrapped yet
            if last is not None and int(last) >= wanted:
                break
            time.sleep(1)
    report.check("replica caught up with the source's notification log", last is not None and int(last) >= wanted,
                 f"repl.last.id {last}, source at event {wanted}")
    metrics = _sql(replica, f"SELECT * FROM sys.replication_metrics WHERE policy_name='{REPLICA_POLICIES[1]}'")
    loads = [json.loads(m["progress"])["status"] for m in metrics]
    executions = _sql(source, "SELECT * FROM information_schema.scheduled_executions "
                              f"WHERE schedule_name='{REPLICA_POLICIES[0]}'")
    report.check("the policies ran on their own (dump executions, load metrics)",
                 bool(executions) and "SUCCESS" in loads, f"{len(executions)} dump executions, loads {loads}")
    info["replica_loads"] = len(loads)

    with MetastoreClient(source.uri, timeout=30) as ms, MetastoreClient(replica.uri, timeout=30) as mr:
        same = all(sorted(ms.get_partition_names(DB, t)) == sorted(mr.get_partition_names(DB, t))
                   for t in ms.get_all_tables(DB))
        same = same and sorted(ms.get_all_tables(DB)) == sorted(mr.get_all_tables(DB))
    report.check("replica: same tables and partitions as the source", same)

    with step(report, f"Spark on the replica ({replica.uri}): the final queries again"):
        spark.stop()  # Spark's Hive client is bound to one metastore per session
        spark = spark_session(master, replica.uri, replica.warehouse, replica.data_dir)
        spark.sparkContext.setLogLevel("ERROR")
        location = [r for r in spark.sql(f"DESCRIBE DATABASE EXTENDED {DB}").collect() if r[0] == "Location"]
        top = [(r[0], r[1]) for r in spark.sql(
            f"SELECT category, sum(revenue_cents) AS rev FROM {DB}.daily_category_revenue "
            "GROUP BY category ORDER BY rev DESC, category LIMIT 5").collect()]
        counts = {t: spark.table(f"{DB}.{t}").count() for t in info.get("counts", {})}
    report.check("Spark reads the replica's own copy", bool(location) and replica.warehouse in str(location[0][1]),
                 str(location[0][1]) if location else "no location")
    report.check("replica: query results equal the source's", top == info.get("top") and counts == info.get("counts"),
                 f"{counts}")
    return spark


def _progress_printer(runner: Runner) -> Any:
    def on_progress(r: Runner) -> None:
        last = r.db.rows("SELECT job, part, attempt, ok, finished - started AS secs, error FROM runs "
                         "ORDER BY rowid DESC LIMIT 1")[0]
        mark = "[green]✓[/]" if last["ok"] else "[red]✗[/]"
        console.print(f"    {mark} job {last['job']} {last['part']} [dim](attempt {last['attempt']}, "
                      f"{last['secs']:.1f} s)[/]")
    return on_progress


def summary(report: Report, info: dict[str, Any], server: MetastoreProcess, master: str) -> None:
    if info.get("runs"):
        t = Table(title="Pipeline", title_justify="left")
        for c in ("stage", "rows", "partitions", "job runs", "job time"):
            t.add_column(c, justify="left" if c == "stage" else "right")
        runs = {r["job"]: r for r in info["runs"]}
        for name in ("orders", "daily_category_revenue", "daily_customer_summary"):
            r = runs.get(name)
            t.add_row(f"{DB}.{name}", f"{info['counts'][name]:,}", str(len(info["parts"][name])),
                      f"{r['ok']}/{r['attempts']}" if r else "ingest", f"{r['secs']:.1f} s" if r else "")
        console.print(t)
    if info.get("top"):
        t = Table(title="Top categories by revenue (all days, after the correction)", title_justify="left")
        t.add_column("category")
        t.add_column("revenue", justify="right")
        for cat, rev in info["top"]:
            t.add_row(cat, f"{rev / 100:,.2f}")
        console.print(t)
    passed = sum(c.ok for c in report.checks)
    events = ", ".join(f"{r['event_type']} {r['n']}" for r in info.get("events", []))
    lines = [f"metastore  {server.uri}  (SQLite in {server.data_dir})",
             f"spark      {master}, warehouse {server.warehouse}",
             f"tables     {', '.join(info.get('tables', []))}",
             f"data       {info.get('raw_rows', 0):,} orders generated; correction of {info.get('corrected', '?')} "
             f"cancelled {info.get('cancelled', 0):,}",
             f"events     {events or 'none'} (on the orders topic)",
             f"replica    {DB} on thrift://127.0.0.1:{info.get('replica_port', '?')} by the policies "
             f"{' and '.join(REPLICA_POLICIES)} ({info.get('replica_loads', 0)} loads)",
             f"checks     {passed}/{len(report.checks)} passed"]
    console.print(Panel("\n".join(lines), title="[bold]metastore pipeline demo: " + ("OK" if report.ok else "FAILED"),
                        border_style="green" if report.ok else "red", expand=False))
    if report.timings:
        timings = "; ".join(f"{w.split(' →')[0].split(': ')[0]} {s:.1f} s" for w, s in report.timings)
        console.print(f"[dim]{timings}[/]")


def main(argv: list[str] | None = None) -> int:
    ap = demo_arguments("python -m metastore.pipeline.demo", __doc__, "metastore-data/pipeline", ", emptied first")
    ap.add_argument("--days", type=int, default=5)
    ap.add_argument("--orders-per-day", type=int, default=60_000)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    port = demo_port(args.port)
    if port is None:
        return 2
    shutil.rmtree(args.data_dir, ignore_errors=True)
    server = MetastoreProcess(port, args.data_dir)
    replica = MetastoreProcess(free_port(), args.data_dir.rstrip("/") + "-replica", "--no-rest")
    demo = DemoRun(args.spark_master, server, replica)

    def job() -> None:
        demo.info = run(demo.spark, server, demo.report, args.days, args.orders_per_day)
        if demo.report.ok:
            demo.info["replica_port"] = replica.port
            demo.spark = replicate(demo.spark, server, replica, demo.report, args.spark_master, demo.info)

    demo.run("metastore pipeline demo", job, "pipeline ran to the end")
    summary(demo.report, demo.info, server, args.spark_master)
    console.print(f"[dim]done in {time.perf_counter() - t0:.1f} s; metastore log: {server.log_path}; "
                  f"pipeline state: {os.path.join(server.data_dir, 'pipeline.sqlite')}[/]")
    return 0 if demo.report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
