"""Spark on one metastore for the replication test: write (cycle 1 or 2) on the source, or query only.

Every phase ends by querying every table of the database (rows sorted, partitions listed) and writes that
to --out as JSON; the test compares the source's answers with the replica's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def write1(spark: Any, db: str, uri: str) -> None:
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(f"CREATE TABLE {db}.sales (id INT, amount DOUBLE, day STRING) USING parquet PARTITIONED BY (day)")
    spark.sql(f"INSERT INTO {db}.sales VALUES (1, 10.5, '2024-01-01'), (2, 20.0, '2024-01-01'), "
              "(3, 7.25, '2024-01-02'), (4, 1.0, '2024-01-03')")
    spark.sql(f"CREATE TABLE {db}.customers (id INT, name STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {db}.customers VALUES (1, 'ann'), (2, 'bob')")
    spark.sql(f"CREATE TABLE {db}.visits (id INT, page STRING) PARTITIONED BY (dt STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {db}.visits PARTITION (dt='2024-01-01') VALUES (1, '/a'), (2, '/b')")
    spark.sql(f"INSERT INTO {db}.visits PARTITION (dt='2024-01-02') VALUES (3, '/c')")
    spark.sql(f"CREATE TABLE {db}.scratch (x INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {db}.scratch VALUES (42)")


def write2(spark: Any, db: str, uri: str) -> None:
    from metastore.pipeline.core import notify_insert

    spark.sql(f"CREATE TABLE {db}.returns (id INT, reason STRING) PARTITIONED BY (dt STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {db}.returns PARTITION (dt='2024-02-01') VALUES (2, 'broken')")
    spark.sql(f"INSERT INTO {db}.sales VALUES (5, 3.5, '2024-01-02'), (6, 99.0, '2024-01-04')")
    notify_insert(uri, f"{db}.sales", {"day": "2024-01-02"})  # Spark fires no event for an existing partition
    spark.sql(f"ALTER TABLE {db}.sales DROP PARTITION (day='2024-01-01')")
    spark.sql(f"INSERT INTO {db}.customers VALUES (3, 'cy')")
    spark.sql(f"ALTER TABLE {db}.customers ADD COLUMNS (email STRING)")
    spark.sql(f"INSERT INTO {db}.customers VALUES (4, 'dee', 'dee@example.com')")
    spark.sql(f"INSERT OVERWRITE TABLE {db}.visits PARTITION (dt='2024-01-01') VALUES (9, '/z')")
    spark.sql(f"ALTER TABLE {db}.visits ADD PARTITION (dt='2024-01-09')")
    spark.sql(f"ALTER TABLE {db}.visits RENAME TO {db}.visits2")
    spark.sql(f"DROP TABLE {db}.scratch")
    spark.sql(f"CREATE FUNCTION {db}.up AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper'")


def query(spark: Any, db: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    spark.catalog.clearCache()
    for row in spark.sql(f"SHOW TABLES IN {db}").collect():
        name = row.tableName
        df = spark.table(f"{db}.{name}")
        rows = sorted(json.dumps(r.asDict(), sort_keys=True, default=str) for r in df.collect())
        entry: dict[str, Any] = {"columns": df.columns, "rows": rows}
        if spark.sql(f"DESCRIBE TABLE EXTENDED {db}.{name}").filter("col_name = '# Partition Information'").count():
            entry["partitions"] = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {db}.{name}").collect())
        out[name] = entry
    out["_functions"] = sorted(r[0] for r in spark.sql(f"SHOW USER FUNCTIONS IN {db}").collect())
    if any(f.endswith(f"{db}.up") for f in out["_functions"]) and "customers" in out:
        out["_up"] = sorted(r[0] for r in spark.sql(f"SELECT {db}.up(name) FROM {db}.customers").collect())
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", choices=("write1", "write2", "query"), required=True)
    ap.add_argument("--uri", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName(f"repl-{a.phase}")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
             .config("spark.sql.warehouse.dir", a.warehouse).config("spark.driver.memory", "768m")
             .config("spark.hadoop.hive.metastore.uris", a.uri)
             .enableHiveSupport().getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        if a.phase == "write1":
            write1(spark, a.db, a.uri)
        elif a.phase == "write2":
            write2(spark, a.db, a.uri)
        with open(a.out, "w") as f:
            json.dump(query(spark, a.db), f, indent=1)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sys.exit(main())
