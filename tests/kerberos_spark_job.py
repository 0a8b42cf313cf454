"""A small Spark workload through a Kerberos-only metastore (tests/test_kerberos.py): create a database and a
table, insert, select, read the table's owner, drop. The ticket comes from KRB5CCNAME (a kinit'ed user).

    python tests/kerberos_spark_job.py --uri thrift://localhost:PORT --principal hive/_HOST@REALM \\
        --krb5-conf FILE --warehouse DIR --db NAME [--expect-failure]
"""

from __future__ import annotations

import argparse
import os
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    for a in ("--uri", "--principal", "--krb5-conf", "--warehouse", "--db"):
        ap.add_argument(a, required=True)
    ap.add_argument("--expect-failure", action="store_true")
    args = ap.parse_args()
    from pyspark.sql import SparkSession

    # the JVM's Kerberos: this realm's krb5.conf; JGSS takes the ticket cache (KRB5CCNAME) itself, through a JAAS
    # entry that never prompts on the console (no ticket: the connection fails)
    jaas = os.path.abspath("kerberos-jaas.conf")
    with open(jaas, "w") as f:
        f.write("com.sun.security.jgss.krb5.initiate {\n  com.sun.security.auth.module.Krb5LoginModule required "
                "useTicketCache=true doNotPrompt=true;\n};\n")
    jvm_opts = (f"-Djava.security.krb5.conf={args.krb5_conf} -Dsun.security.krb5.disableReferrals=true "
                f"-Djavax.security.auth.useSubjectCredsOnly=false -Djava.security.auth.login.config={jaas}")
    spark = (SparkSession.builder.master("local[1]").appName("kerberos")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "1")
             .config("spark.driver.memory", "512m")
             .config("spark.driver.extraJavaOptions", jvm_opts)
             .config("spark.sql.warehouse.dir", args.warehouse)
             .config("spark.hadoop.hive.metastore.uris", args.uri)
             .config("spark.hadoop.hive.metastore.sasl.enabled", "true")
             .config("spark.hadoop.hive.metastore.kerberos.principal", args.principal)
             .config("spark.hadoop.hadoop.security.authentication", "kerberos")
             .config("spark.hadoop.hive.metastore.failure.retries", "0")
             .config("spark.hadoop.hive.metastore.connect.retries", "1")
             .config("spark.security.credentials.hive.enabled", "false")
             .enableHiveSupport().getOrCreate())
    db = args.db
    try:
        spark.sql(f"CREATE DATABASE {db}")
    except Exception as e:  # noqa: BLE001
        if args.expect_failure:
            print(f"REFUSED as expected: {type(e).__name__}: {str(e)[:500]}")
            return 0
        raise
    if args.expect_failure:
        print("the metastore was reached without a ticket")
        return 1
    spark.sql(f"CREATE TABLE {db}.t (id INT, name STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"INSERT INTO {db}.t VALUES (3, 'c')")
    rows = [(r.id, r.name) for r in spark.sql(f"SELECT id, name FROM {db}.t ORDER BY id").collect()]
    print(f"ROWS {rows}")
    owner = [r for r in spark.sql(f"DESCRIBE TABLE EXTENDED {db}.t").collect() if r[0].strip() == "Owner"]
    print(f"OWNER {owner[0][1] if owner else None}")
    spark.sql(f"DROP TABLE {db}.t")
    spark.sql(f"DROP DATABASE {db}")
    print("DONE")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
