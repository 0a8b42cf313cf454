"""Spark side of tests/test_pipeline.py, one JVM per run: `--phase trigger | crash | resume`; writes JSON to --out."""

from __future__ import annotations

import argparse
import json
import os
import sys

from metastore.demo import spark_session
from metastore.pipeline import Pipeline, Runner, status
from metastore.pipeline import demo as retail


def trigger(spark, args) -> dict:
    spark.sql("CREATE DATABASE IF NOT EXISTS ptest")
    spark.sql("CREATE TABLE ptest.src (v INT) PARTITIONED BY (day STRING) STORED AS PARQUET")
    spark.sql("CREATE TABLE ptest.out (n BIGINT, total BIGINT) PARTITIONED BY (day STRING) STORED AS PARQUET")
    pipe = Pipeline(args.uri, args.state, name="ptest", retry_backoff=0.1)
    calls: dict[str, int] = {}

    @pipe.on_partition("ptest.src", name="summarize", max_attempts=3)
    def summarize(ctx):
        calls[ctx.partition["day"]] = calls.get(ctx.partition["day"], 0) + 1
        if ctx.partition["day"] == "bad":
            raise ValueError("bad day")
        if ctx.partition["day"] == "flaky" and ctx.attempt == 1:
            raise RuntimeError("transient")
        ctx.spark.sql(f"INSERT OVERWRITE TABLE ptest.out PARTITION ({ctx.partition_spec}) "
                      f"SELECT count(*), sum(v) FROM ptest.src WHERE day = {ctx.sql_value('day')}")

    runner = Runner(pipe, spark, start="latest")
    try:
        spark.sql("INSERT INTO ptest.src PARTITION (day='bad') VALUES (1)")
        spark.sql("INSERT INTO ptest.src PARTITION (day='d1') VALUES (1), (2), (3)")
        spark.sql("INSERT INTO ptest.src PARTITION (day='flaky') VALUES (10)")
        runner.run(until_idle=True)
    finally:
        runner.close()
    out = {r["day"]: [r["n"], r["total"]] for r in spark.table("ptest.out").collect()}
    st = status(args.state)[0]
    return {"out": out, "calls": calls, "done": st.done, "pending": st.pending, "failed": st.failed}


def crash(spark, args) -> dict:
    data = retail.generate(args.days, args.orders)
    landing = os.path.join(os.path.dirname(args.state), "landing")
    for day, rows in data.orders.items():
        retail.write_csv(os.path.join(landing, "orders", f"day={day}", "orders.csv"), rows)
    retail.write_csv(os.path.join(landing, "customers.csv"), data.customers)
    retail.write_csv(os.path.join(landing, "products.csv"), data.products)
    retail.create_tables(spark, args.warehouse)
    retail.load_dimensions(spark, landing)
    pipe = Pipeline(args.uri, args.state, name="retail")
    retail.declare_jobs(pipe)
    done = [0]
    inner = pipe.jobs["daily_customer_summary"].fn

    def dies_after_writing(ctx):  # the third downstream job writes its output, then the process dies
        inner(ctx)
        done[0] += 1
        if done[0] == 2:
            os._exit(9)

    pipe.jobs["daily_customer_summary"].fn = dies_after_writing
    runner = Runner(pipe, spark, start="latest")
    for day in data.orders:
        retail.ingest_day(spark, landing, day)
    runner.run(until_idle=True)
    return {"crashed": False}


def resume(spark, args) -> dict:
    pipe = Pipeline(args.uri, args.state, name="retail")
    retail.declare_jobs(pipe)
    runner = Runner(pipe, spark, start="latest")
    try:
        runner.run(until_idle=True)
    finally:
        runner.close()
    exp = retail.expected(retail.generate(args.days, args.orders))
    got_cat = {(r["day"], r["category"]): [r["orders"], r["units"], r["revenue_cents"]]
               for r in spark.table("retail.daily_category_revenue").collect()}
    got_cust = {(r["day"], r["customer_id"]): [r["orders"], r["units"], r["spend_cents"]]
                for r in spark.table("retail.daily_customer_summary").collect()}
    st = status(args.state)
    runs = pipe.db.rows("SELECT job, part, runs, attempts, status FROM work ORDER BY job, part")
    return {"cat_ok": got_cat == dict(exp["by_cat"]), "cust_ok": got_cust == dict(exp["by_cust"]),
            "rows": [dict(r) for r in runs], "pending": sum(len(s.pending) for s in st),
            "failed": sum(len(s.failed) for s in st)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", required=True)
    ap.add_argument("--uri", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--days", type=int, default=4)
    ap.add_argument("--orders", type=int, default=3000)
    args = ap.parse_args()
    spark = spark_session("local[2]", args.uri, args.warehouse, os.path.dirname(args.state))
    spark.sparkContext.setLogLevel("ERROR")
    try:
        result = {"trigger": trigger, "crash": crash, "resume": resume}[args.phase](spark, args)
    finally:
        spark.stop()
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    sys.exit(main())
