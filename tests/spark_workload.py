"""A PySpark workload over a Hive metastore; writes what every statement returned as JSON.

    python tests/spark_workload.py --phase write|read --warehouse DIR --out FILE [--uri thrift://...]

Without --uri Spark uses its own embedded metastore (Hive 2.3 on Derby, in the working directory): the
reference. `write` builds a database of Hive and data source tables and exercises DDL, DML, statistics,
views and functions; `read` is a second session (a second process) that reads what the first left and
then drops it all. Each step records its rows (sorted unless ordered), or the error class and message,
and, for queries, how many partitions Spark fetched from the metastore and the scan's partition filters.
Values are normalized only where the two metastores legitimately differ: absolute paths and times.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import os
import re
import sys
import traceback
from typing import Any

DB = "ws"


class Recorder:
    def __init__(self, spark: Any, warehouse: str) -> None:
        self.spark = spark
        self.warehouse = os.path.realpath(warehouse).rstrip("/")
        self.steps: list[dict[str, Any]] = []
        self.jvm = spark.sparkContext._jvm
        self.metrics = self.jvm.org.apache.spark.metrics.source.HiveCatalogMetrics

    # ---- normalization --------------------------------------------------------------------------------

    def norm(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, int)):
            return v
        if isinstance(v, float):
            return round(v, 9)
        if isinstance(v, (decimal.Decimal, datetime.date, datetime.datetime)):
            return str(v)
        if isinstance(v, (list, tuple)):
            return [self.norm(x) for x in v]
        if isinstance(v, dict):
            return {str(k): self.norm(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
        if hasattr(v, "asDict"):
            return self.norm(v.asDict(recursive=True))
        s = str(v)
        for prefix in ("file://", "file:", ""):
            s = s.replace(prefix + self.warehouse, "<WH>")
        s = re.sub(r"(transient_lastDdlTime|last_modified_time)=\d+", r"\1=<T>", s)
        s = re.sub(r"'(transient_lastDdlTime|last_modified_time)' = '\d+'", r"'\1' = '<T>'", s)
        s = re.sub(r"^(Created Time|Last Access): .*$", r"\1: <T>", s, flags=re.M)
        s = re.sub(r"#\d+L?", "#<ID>", s)
        s = re.sub(r"\bo\d+\.(\w+)", r"o<N>.\1", s)  # py4j object ids
        return s

    def norm_row(self, row: Any) -> list[Any]:
        vals = [self.norm(x) for x in row]
        # DESCRIBE ... FORMATTED / EXTENDED and DESCRIBE DATABASE: times of creation and access
        if vals and isinstance(vals[0], str) and vals[0].strip() in ("Created Time", "Last Access", "Create Time"):
            vals[1:2] = ["<T>"]
        if vals and isinstance(vals[0], str) and vals[0].strip() == "transient_lastDdlTime":
            vals[1:2] = ["<T>"]
        # printed maps (parameters, properties): their order is a hash map's, not part of the result
        if (len(vals) > 1 and isinstance(vals[0], str) and vals[0].strip().endswith(("Properties", "Parameters"))
                and isinstance(vals[1], str) and vals[1].startswith("[") and vals[1].endswith("]")):
            vals[1] = "[" + ", ".join(sorted(vals[1][1:-1].split(", "))) + "]"
        return vals

    # ---- steps ---------------------------------------------------------------------------------------

    def _error(self, name: str, sql: str | None, e: Exception) -> None:
        cls = type(e).__name__
        cond = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
        condition = None
        try:
            condition = cond() if cond else None
        except Exception:  # noqa: BLE001
            condition = None
        msg = str(e).split("\n")[0]
        self.steps.append({"step": name, "sql": self.norm(sql), "error": {"type": cls, "condition": condition,
                                                               "message": self.norm(msg)}})

    def sql(self, name: str, sql: str, ordered: bool = False, scan: bool = False) -> list[list[Any]] | None:
        before = self._counters() if scan else None
        try:
            df = self.spark.sql(sql)
            rows = [self.norm_row(r) for r in df.collect()]
        except Exception as e:  # noqa: BLE001 - every failure is part of the result
            self._error(name, sql, e)
            return None
        if not ordered:
            rows.sort(key=lambda r: json.dumps(r, default=str))
        step: dict[str, Any] = {"step": name, "sql": self.norm(sql), "columns": list(df.columns), "rows": rows}
        if scan:
            step["scan"] = self._scan(df, before)
        self.steps.append(step)
        return rows

    def call(self, name: str, fn: Any, ordered: bool = False) -> Any:
        """A DataFrame API action: rows of the returned DataFrame, or None for a write."""
        try:
            out = fn()
            rows = None
            if out is not None:
                rows = [self.norm_row(r) for r in out.collect()]
                if not ordered:
                    rows.sort(key=lambda r: json.dumps(r, default=str))
        except Exception as e:  # noqa: BLE001
            self._error(name, None, e)
            return None
        self.steps.append({"step": name, "rows": rows})
        return rows

    def note(self, name: str, value: Any) -> None:
        self.steps.append({"step": name, "value": self.norm(value)})

    def _counters(self) -> dict[str, int]:
        return {"partitions_fetched": self.metrics.METRIC_PARTITIONS_FETCHED().getCount(),
                "files_discovered": self.metrics.METRIC_FILES_DISCOVERED().getCount()}

    def _scan(self, df: Any, before: dict[str, int]) -> dict[str, Any]:
        after = self._counters()
        plan = df._jdf.queryExecution().executedPlan().toString()
        filters = re.findall(r"PartitionFilters: \[([^\]]*)\]", plan)
        dirs = sorted({os.path.relpath(os.path.dirname(f.replace("file:", "", 1)), self.warehouse)
                       for f in df.inputFiles()})
        return {"partitions_fetched": after["partitions_fetched"] - before["partitions_fetched"],
                "partition_filters": [self.norm(f) for f in filters],
                "partition_dirs_read": dirs}

    # ---- the metastore's own objects, as the Hive client receives them ------------------------------------

    def _msc(self) -> Any:
        if getattr(self, "_client", None) is None:
            hive = self.spark._jsparkSession.sharedState().externalCatalog().unwrapped().client()
            self._client = self.jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(hive.conf())
        return self._client

    def close(self) -> None:
        if getattr(self, "_client", None) is not None:
            self._client.close()

    def _params(self, m: Any) -> dict[str, Any] | None:
        if m is None:
            return None
        out = {}
        for k, v in dict(m).items():
            out[k] = "<T>" if k in ("transient_lastDdlTime", "last_modified_time") else self.norm(v)
        return dict(sorted(out.items()))

    def _cols(self, cols: Any) -> list[Any]:
        return [[c.getName(), c.getType(), c.getComment()] for c in (cols or [])]

    def _sd(self, sd: Any) -> dict[str, Any] | None:
        if sd is None:
            return None
        se = sd.getSerdeInfo()
        sk = sd.getSkewedInfo()
        return {"cols": self._cols(sd.getCols()), "location": self.norm(sd.getLocation()),
                "inputFormat": sd.getInputFormat(), "outputFormat": sd.getOutputFormat(),
                "compressed": sd.isCompressed(), "numBuckets": sd.getNumBuckets(),
                "serde": (None if se is None
                          else [se.getName(), se.getSerializationLib(), self._params(se.getParameters())]),
                "bucketCols": list(sd.getBucketCols() or []),
                "sortCols": [[o.getCol(), o.getOrder()] for o in (sd.getSortCols() or [])],
                "parameters": self._params(sd.getParameters()),
                "skewed": None if sk is None else [list(sk.getSkewedColNames() or []),
                                                   [list(v) for v in (sk.getSkewedColValues() or [])]],
                "storedAsSubDirectories": sd.isStoredAsSubDirectories()}

    @staticmethod
    def _time(t: int) -> Any:
        return "<T>" if t else t

    def dump(self, name: str, db: str = DB) -> None:
        """The database, its tables with their partitions, and its functions, field by field."""
        try:
            c = self._msc()
            d = c.getDatabase(db)
            out: dict[str, Any] = {"database": {
                "name": d.getName(), "description": d.getDescription(), "location": self.norm(d.getLocationUri()),
                "parameters": self._params(d.getParameters()), "owner": [d.getOwnerName(), str(d.getOwnerType())]}}
            tables = {}
            for tn in sorted(c.getAllTables(db)):
                t = c.getTable(db, tn)
                entry = {"owner": t.getOwner(), "createTime": self._time(t.getCreateTime()),
                         "lastAccessTime": t.getLastAccessTime(), "retention": t.getRetention(),
                         "tableType": t.getTableType(), "viewOriginalText": t.getViewOriginalText(),
                         "viewExpandedText": t.getViewExpandedText(), "partitionKeys": self._cols(t.getPartitionKeys()),
                         "parameters": self._params(t.getParameters()), "sd": self._sd(t.getSd())}
                if t.getPartitionKeys():
                    names = list(c.listPartitionNames(db, tn, self.jvm.java.lang.Short.valueOf("-1")))
                    parts = c.getPartitionsByNames(db, tn, names) if names else []
                    entry["partitionNames"] = names
                    entry["partitions"] = sorted(
                        ([list(p.getValues()), self._time(p.getCreateTime()), p.getLastAccessTime(),
                          self._params(p.getParameters()), self._sd(p.getSd())] for p in parts),
                        key=lambda x: json.dumps(x, default=str))
                tables[tn] = entry
            out["tables"] = tables
            out["functions"] = []
            for fn in sorted(c.getFunctions(db, "*")):
                f = c.getFunction(db, fn)
                out["functions"].append([f.getFunctionName(), f.getDbName(), f.getClassName(), f.getOwnerName(),
                                         str(f.getOwnerType()), str(f.getFunctionType()),
                                         [[str(r.getResourceType()), r.getUri()] for r in (f.getResourceUris() or [])]])
        except Exception as e:  # noqa: BLE001
            self._error(name, None, e)
            return
        self.steps.append({"step": name, "metastore": out})

    def tree(self, name: str, rel: str) -> None:
        """The directories (not the data files, whose names are random) under a warehouse path."""
        root = os.path.join(self.warehouse, rel)
        found = []
        if os.path.isdir(root):
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
                rel_dir = os.path.relpath(dirpath, self.warehouse)
                data = [f for f in filenames if not f.startswith((".", "_"))]
                found.append([rel_dir, len(data)])
        self.steps.append({"step": name, "dirs": sorted(found) if found else None})


# ---- the workload -------------------------------------------------------------------------------------

ROWS = [(i, f"n{i}", i * 1.5, f"2024-01-0{1 + i % 3}", i % 4) for i in range(1, 25)]


def write_phase(r: Recorder) -> None:
    s = r.spark
    r.sql("show databases before", "SHOW DATABASES")
    r.sql("describe default database", "DESCRIBE DATABASE EXTENDED default", ordered=True)
    r.sql("create database", f"CREATE DATABASE {DB} COMMENT 'the workload' WITH DBPROPERTIES ('team'='core')")
    r.sql("create database again", f"CREATE DATABASE {DB}")
    r.sql("create database if not exists", f"CREATE DATABASE IF NOT EXISTS {DB}")
    r.sql("describe database", f"DESCRIBE DATABASE EXTENDED {DB}", ordered=True)
    r.sql("alter database properties", f"ALTER DATABASE {DB} SET DBPROPERTIES ('team'='data', 'x'='1')")
    r.sql("describe database after alter", f"DESCRIBE DATABASE EXTENDED {DB}", ordered=True)
    r.sql("show databases", "SHOW DATABASES")
    r.sql("show databases like", "SHOW DATABASES LIKE 'w*'")
    r.sql("use", f"USE {DB}")

    # a partitioned Hive (serde) table stored as Parquet
    r.sql("create hive table", "CREATE TABLE events (id INT, name STRING, amount DOUBLE) COMMENT 'events' "
          "PARTITIONED BY (ds STRING, h INT) STORED AS PARQUET TBLPROPERTIES ('purpose'='test')")
    r.sql("create hive table again", "CREATE TABLE events (id INT) STORED AS PARQUET")
    r.sql("describe", "DESCRIBE events", ordered=True)
    r.sql("describe formatted", "DESCRIBE FORMATTED events", ordered=True)
    r.sql("show create table", "SHOW CREATE TABLE events AS SERDE")
    r.tree("tree after create", DB + ".db")
    r.dump("metastore after create")

    r.sql("insert static partition", "INSERT INTO events PARTITION (ds='2024-01-01', h=0) "
          "VALUES (100, 'static', 0.5), (101, 'static2', 1.0)")
    s.createDataFrame(ROWS, "id INT, name STRING, amount DOUBLE, ds STRING, h INT").createOrReplaceTempView("src")
    r.sql("dynamic partition mode", "SET hive.exec.dynamic.partition.mode=nonstrict")
    r.sql("insert dynamic partitions", "INSERT INTO events PARTITION (ds, h) SELECT id, name, amount, ds, h FROM src")
    r.sql("insert mixed partitions", "INSERT INTO events PARTITION (ds='2024-01-04', h) "
          "SELECT id, name, amount, h FROM src WHERE id < 6")
    r.sql("select after inserts", "SELECT * FROM events")
    r.sql("insert overwrite partition", "INSERT OVERWRITE TABLE events PARTITION (ds='2024-01-01', h=0) "
          "VALUES (200, 'over', 9.0)")
    r.sql("select overwritten partition", "SELECT * FROM events WHERE ds='2024-01-01' AND h=0")
    r.sql("insert overwrite dynamic", "INSERT OVERWRITE TABLE events PARTITION (ds='2024-01-04', h) "
          "SELECT id, upper(name), amount, h FROM src WHERE id < 3")
    r.sql("show partitions", "SHOW PARTITIONS events", ordered=True)
    r.sql("show partitions partial", "SHOW PARTITIONS events PARTITION (ds='2024-01-02')", ordered=True)
    r.sql("show partitions full spec", "SHOW PARTITIONS events PARTITION (ds='2024-01-02', h=1)", ordered=True)
    r.sql("show partitions missing", "SHOW PARTITIONS events PARTITION (ds='1999-01-01')", ordered=True)
    r.tree("tree after inserts", DB + ".db/events")

    # partition pruning: the metastore must return only the matching partitions
    r.sql("prune string equality", "SELECT * FROM events WHERE ds = '2024-01-02'", scan=True)
    r.sql("prune int equality", "SELECT id, ds, h FROM events WHERE h = 2", scan=True)
    r.sql("prune int range", "SELECT id, ds, h FROM events WHERE h >= 1 AND h < 3", scan=True)
    r.sql("prune string range", "SELECT id, ds, h FROM events WHERE ds > '2024-01-02'", scan=True)
    r.sql("prune in", "SELECT id, ds, h FROM events WHERE h IN (0, 3)", scan=True)
    r.sql("prune string in", "SELECT id, ds, h FROM events WHERE ds IN ('2024-01-01', '2024-01-03')", scan=True)
    r.sql("prune and or", "SELECT id, ds, h FROM events WHERE (ds = '2024-01-01' AND h = 1) OR "
          "(ds = '2024-01-03' AND h <> 0)", scan=True)
    r.sql("prune not equal", "SELECT id, ds, h FROM events WHERE ds != '2024-01-01'", scan=True)
    r.sql("prune nothing", "SELECT id FROM events WHERE ds = '2030-01-01'", scan=True)
    r.sql("prune with data filter", "SELECT id FROM events WHERE h = 1 AND amount > 10", scan=True)
    r.sql("full scan", "SELECT * FROM events", scan=True)
    r.sql("aggregate", "SELECT ds, h, count(*), sum(amount), min(id), max(id) FROM events GROUP BY ds, h", scan=True)
    r.sql("count", "SELECT count(*) FROM events")

    # schema and properties
    r.sql("add columns", "ALTER TABLE events ADD COLUMNS (note STRING COMMENT 'a note')")
    r.sql("describe after add columns", "DESCRIBE events", ordered=True)
    r.sql("insert with new column", "INSERT INTO events PARTITION (ds='2024-01-05', h=0) VALUES (300, 'n', 1.0, 'hi')")
    r.sql("select new column", "SELECT id, note, ds, h FROM events WHERE ds >= '2024-01-04'", scan=True)
    r.sql("set tblproperties", "ALTER TABLE events SET TBLPROPERTIES ('purpose'='workload', 'k2'='v2')")
    r.sql("unset tblproperties", "ALTER TABLE events UNSET TBLPROPERTIES ('k2')")
    r.sql("show tblproperties", "SHOW TBLPROPERTIES events")
    r.sql("show tblproperty", "SHOW TBLPROPERTIES events ('purpose')")

    # statistics
    r.sql("analyze table", "ANALYZE TABLE events COMPUTE STATISTICS")
    r.sql("analyze partition", "ANALYZE TABLE events PARTITION (ds='2024-01-02', h) COMPUTE STATISTICS")
    r.sql("analyze partition noscan", "ANALYZE TABLE events PARTITION (ds='2024-01-01', h=0) COMPUTE STATISTICS "
          "NOSCAN")
    r.sql("analyze columns", "ANALYZE TABLE events COMPUTE STATISTICS FOR COLUMNS id, name, amount")
    r.sql("describe extended after analyze", "DESCRIBE TABLE EXTENDED events", ordered=True)
    r.sql("describe partition", "DESCRIBE FORMATTED events PARTITION (ds='2024-01-02', h=1)", ordered=True)
    r.sql("describe partition noscan", "DESCRIBE FORMATTED events PARTITION (ds='2024-01-01', h=0)", ordered=True)
    r.sql("describe column stats", "DESCRIBE EXTENDED events amount", ordered=True)
    r.sql("describe column stats string", "DESCRIBE EXTENDED events name", ordered=True)
    r.dump("metastore after analyze")

    # partitions by DDL
    r.sql("add partition", "ALTER TABLE events ADD PARTITION (ds='2024-02-01', h=0) PARTITION (ds='2024-02-01', h=1)")
    r.sql("add existing partition", "ALTER TABLE events ADD PARTITION (ds='2024-02-01', h=0)")
    r.sql("add partition if not exists", "ALTER TABLE events ADD IF NOT EXISTS PARTITION (ds='2024-02-01', h=0) "
          "PARTITION (ds='2024-02-02', h=0)")
    r.sql("drop partition", "ALTER TABLE events DROP PARTITION (ds='2024-01-03', h=3)")
    r.sql("drop partitions by partial spec", "ALTER TABLE events DROP PARTITION (ds='2024-01-04')")
    r.sql("drop missing partition", "ALTER TABLE events DROP PARTITION (ds='1999-01-01', h=0)")
    r.sql("drop missing partition if exists", "ALTER TABLE events DROP IF EXISTS PARTITION (ds='1999-01-01', h=0)")
    r.sql("rename partition", "ALTER TABLE events PARTITION (ds='2024-02-02', h=0) RENAME TO PARTITION "
          "(ds='2024-02-03', h=0)")
    r.sql("show partitions after ddl", "SHOW PARTITIONS events", ordered=True)
    r.sql("select after partition ddl", "SELECT ds, h, count(*) FROM events GROUP BY ds, h", scan=True)
    r.tree("tree after partition ddl", DB + ".db/events")

    # MSCK REPAIR TABLE: a partition directory written behind the metastore's back, and one removed
    loc = os.path.join(r.warehouse, DB + ".db", "events")
    s.createDataFrame([(400, "msck", 4.0, None)], "id INT, name STRING, amount DOUBLE, note STRING") \
        .coalesce(1).write.mode("overwrite").parquet(os.path.join(loc, "ds=2024-03-01", "h=7"))
    r.sql("show partitions before msck", "SHOW PARTITIONS events", ordered=True)
    r.sql("msck repair", "MSCK REPAIR TABLE events")
    r.sql("show partitions after msck", "SHOW PARTITIONS events", ordered=True)
    r.sql("select repaired partition", "SELECT * FROM events WHERE ds = '2024-03-01'", scan=True)
    import shutil
    shutil.rmtree(os.path.join(loc, "ds=2024-02-01"))
    r.sql("msck repair sync", "MSCK REPAIR TABLE events SYNC PARTITIONS")
    r.sql("show partitions after msck sync", "SHOW PARTITIONS events", ordered=True)
    r.dump("metastore after msck")

    # rename
    r.sql("rename table", "ALTER TABLE events RENAME TO events2")
    r.sql("select renamed old name", "SELECT count(*) FROM events")
    r.sql("select renamed", "SELECT * FROM events2 WHERE h = 0", scan=True)
    r.sql("describe formatted renamed", "DESCRIBE FORMATTED events2", ordered=True)
    r.sql("describe renamed partition", "DESCRIBE FORMATTED events2 PARTITION (ds='2024-01-02', h=1)", ordered=True)
    r.tree("tree after rename", DB + ".db")
    r.dump("metastore after rename")

    # views
    r.sql("create view", "CREATE VIEW v_events COMMENT 'a view' AS SELECT id, name, ds FROM events2 WHERE h = 1")
    r.sql("select view", "SELECT * FROM v_events")
    r.sql("select view filtered", "SELECT id FROM v_events WHERE ds = '2024-01-02'")
    r.sql("describe view", "DESCRIBE FORMATTED v_events", ordered=True)
    r.sql("alter view", "ALTER VIEW v_events AS SELECT id, ds FROM events2 WHERE h = 2")
    r.sql("select altered view", "SELECT * FROM v_events")
    r.sql("show views", f"SHOW VIEWS IN {DB}")
    r.sql("create view again", "CREATE VIEW v_events AS SELECT 1 AS one")
    r.sql("create or replace view", "CREATE OR REPLACE VIEW v_tmp AS SELECT 1 AS one")
    r.sql("drop view", "DROP VIEW v_tmp")
    r.sql("select dropped view", "SELECT * FROM v_tmp")

    # data source tables by the DataFrame API
    df = s.createDataFrame([(i, f"p{i}", i % 3) for i in range(12)], "id INT, label STRING, p INT")
    r.call("saveAsTable plain", lambda: df.write.saveAsTable(f"{DB}.df_plain"))
    r.call("saveAsTable partitioned", lambda: df.write.partitionBy("p").saveAsTable(f"{DB}.df_part"))
    r.call("insertInto", lambda: df.where("id < 4").write.insertInto(f"{DB}.df_part"))
    r.call("saveAsTable append", lambda: df.where("id > 9").write.mode("append").saveAsTable(f"{DB}.df_plain"))
    r.call("saveAsTable exists", lambda: df.write.saveAsTable(f"{DB}.df_plain"))
    r.call("read df_plain", lambda: s.table(f"{DB}.df_plain"))
    r.sql("read df_part pruned", "SELECT * FROM df_part WHERE p = 1", scan=True)
    r.sql("show partitions df_part", "SHOW PARTITIONS df_part", ordered=True)
    r.sql("describe df_part", "DESCRIBE FORMATTED df_part", ordered=True)
    r.call("insertInto overwrite", lambda: df.where("p = 2 AND id > 6").write.insertInto(f"{DB}.df_part",
                                                                                       overwrite=True))
    r.sql("read df_part after overwrite", "SELECT p, count(*) FROM df_part GROUP BY p")
    r.sql("datasource insert partition", "INSERT INTO df_part PARTITION (p=5) VALUES (50, 'five')")
    r.sql("datasource alter add partition", "ALTER TABLE df_part ADD PARTITION (p=6)")
    r.sql("datasource show partitions", "SHOW PARTITIONS df_part", ordered=True)
    r.sql("datasource analyze", "ANALYZE TABLE df_part COMPUTE STATISTICS FOR ALL COLUMNS")
    r.sql("datasource describe column", "DESCRIBE EXTENDED df_part id", ordered=True)
    r.tree("tree of data source tables", DB + ".db")
    r.dump("metastore with data source tables")

    # partition values that need escaping, NULL (the default partition), and date and bigint keys
    r.sql("create odd partitions table", "CREATE TABLE odd (v INT) PARTITIONED BY (s STRING) STORED AS PARQUET")
    r.sql("insert odd partitions", "INSERT INTO odd PARTITION (s) VALUES (1, 'a/b'), (2, 'x:y=z'), (3, 'sp ace'), "
          "(4, 'per%cent'), (5, 'café'), (6, NULL), (7, 'q\"uo''te'), (8, 'a#b?c*[d]')")
    r.sql("show odd partitions", "SHOW PARTITIONS odd", ordered=True)
    r.sql("select odd partition", "SELECT * FROM odd WHERE s = 'a/b'", scan=True)
    r.sql("select odd partitions in", "SELECT * FROM odd WHERE s IN ('x:y=z', 'café', 'per%cent')", scan=True)
    r.sql("select default partition", "SELECT * FROM odd WHERE s IS NULL", scan=True)
    r.sql("select odd range", "SELECT * FROM odd WHERE s >= 'q'", scan=True)
    r.sql("drop odd partition", "ALTER TABLE odd DROP PARTITION (s='x:y=z')")
    r.sql("show odd partitions after drop", "SHOW PARTITIONS odd", ordered=True)
    r.tree("tree of odd partitions", DB + ".db/odd")
    r.sql("create dated table", "CREATE TABLE dated (v INT) PARTITIONED BY (d DATE, n BIGINT) STORED AS PARQUET")
    r.sql("insert dated", "INSERT INTO dated PARTITION (d, n) VALUES (1, DATE'2024-01-01', 1), "
          "(2, DATE'2024-01-02', 20), (3, DATE'2024-02-01', 300), (4, DATE'2024-02-01', -4)")
    r.sql("select date equality", "SELECT * FROM dated WHERE d = DATE'2024-02-01'", scan=True)
    r.sql("select date range", "SELECT * FROM dated WHERE d > DATE'2024-01-01' AND d <= DATE'2024-02-01'", scan=True)
    r.sql("select date in", "SELECT * FROM dated WHERE d IN (DATE'2024-01-01', DATE'2024-01-02')", scan=True)
    r.sql("select bigint range", "SELECT * FROM dated WHERE n > 5", scan=True)
    r.sql("select bigint negative", "SELECT * FROM dated WHERE n < 0", scan=True)
    r.sql("select bigint in", "SELECT * FROM dated WHERE n IN (1, 300)", scan=True)

    # column types, storage layouts and alterations of Hive tables
    r.sql("create typed table", "CREATE TABLE typed (a TINYINT, b SMALLINT, c BIGINT, d DECIMAL(10,2), e FLOAT, "
          "f BOOLEAN, g DATE, h TIMESTAMP, i BINARY, j ARRAY<STRUCT<x: INT, y: STRING>>, k MAP<STRING, INT>, "
          "l VARCHAR(10), m CHAR(3) COMMENT 'a char') STORED AS PARQUET")
    r.sql("insert typed", "INSERT INTO typed VALUES (1, 2, 3, 4.5, 6.5, true, DATE'2024-01-01', "
          "TIMESTAMP'2024-01-01 01:02:03', X'CAFE', array(named_struct('x', 1, 'y', 'z')), map('k', 1), 'var', 'ch')")
    r.sql("select typed", "SELECT * FROM typed")
    r.sql("describe typed", "DESCRIBE typed", ordered=True)
    r.sql("create text table", "CREATE TABLE texty (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
          "STORED AS TEXTFILE")
    r.sql("insert text table", "INSERT INTO texty VALUES (1, 'one'), (2, 'two')")
    r.sql("select text table", "SELECT * FROM texty")
    r.sql("set serde properties", "ALTER TABLE texty SET SERDEPROPERTIES ('field.delim'=',', 'extra'='1')")
    r.sql("describe text table", "DESCRIBE FORMATTED texty", ordered=True)
    r.sql("change column comment", "ALTER TABLE texty CHANGE COLUMN b b STRING COMMENT 'the name'")
    r.sql("describe changed column", "DESCRIBE texty", ordered=True)
    os.makedirs(os.path.join(r.warehouse, "elsewhere", "texty"), exist_ok=True)
    r.sql("set table location", f"ALTER TABLE texty SET LOCATION '{os.path.join(r.warehouse, 'elsewhere', 'texty')}'")
    r.sql("select after set location", "SELECT * FROM texty")
    r.sql("insert after set location", "INSERT INTO texty VALUES (3, 'three')")
    r.sql("select after insert at new location", "SELECT * FROM texty")
    r.sql("create bucketed hive table", "CREATE TABLE bucketed (a INT, b STRING) CLUSTERED BY (a) SORTED BY (a) "
          "INTO 4 BUCKETS STORED AS PARQUET")
    r.sql("create bucketed datasource table", "CREATE TABLE bucketed_ds (a INT, b STRING) USING parquet "
          "CLUSTERED BY (a) SORTED BY (b) INTO 3 BUCKETS")
    r.sql("describe bucketed", "DESCRIBE FORMATTED bucketed", ordered=True)
    r.sql("set partition location", "ALTER TABLE events2 PARTITION (ds='2024-03-01', h=7) SET LOCATION "
          f"'{os.path.join(r.warehouse, 'elsewhere', 'p7')}'")
    r.sql("select moved partition", "SELECT * FROM events2 WHERE ds = '2024-03-01'", scan=True)
    r.sql("truncate partition", "TRUNCATE TABLE events2 PARTITION (ds='2024-01-01', h=1)")
    r.sql("select truncated partition", "SELECT count(*) FROM events2 WHERE ds = '2024-01-01'")
    r.sql("recover partitions", "ALTER TABLE events2 RECOVER PARTITIONS")
    r.sql("alter database location", f"ALTER DATABASE {DB} SET LOCATION '{os.path.join(r.warehouse, 'moved.db')}'")
    r.sql("show columns", "SHOW COLUMNS IN events2")
    r.sql("show create datasource table", "SHOW CREATE TABLE df_part")
    r.dump("metastore with types and layouts")

    # CTAS
    r.sql("ctas hive", "CREATE TABLE ctas_hive STORED AS PARQUET AS SELECT id, name, ds FROM events2 WHERE h = 1")
    r.sql("ctas datasource partitioned", "CREATE TABLE ctas_ds USING parquet PARTITIONED BY (ds) AS "
          "SELECT id, amount, ds FROM events2 WHERE h < 2")
    r.sql("ctas exists", "CREATE TABLE ctas_hive AS SELECT 1 AS x")
    r.sql("select ctas hive", "SELECT * FROM ctas_hive")
    r.sql("select ctas datasource", "SELECT * FROM ctas_ds WHERE ds = '2024-01-02'", scan=True)
    r.sql("describe ctas", "DESCRIBE FORMATTED ctas_hive", ordered=True)
    r.sql("create table like", "CREATE TABLE events_like LIKE events2")
    r.sql("describe table like", "DESCRIBE FORMATTED events_like", ordered=True)
    r.sql("create external table", f"CREATE EXTERNAL TABLE ext (a INT) STORED AS PARQUET LOCATION "
          f"'{os.path.join(r.warehouse, 'external', 'ext')}'")
    r.sql("insert external", "INSERT INTO ext VALUES (1), (2)")
    r.sql("select external", "SELECT * FROM ext")
    r.sql("truncate", "TRUNCATE TABLE ctas_hive")
    r.sql("select truncated", "SELECT count(*) FROM ctas_hive")

    r.sql("show tables", f"SHOW TABLES IN {DB}")
    r.sql("show tables like", f"SHOW TABLES IN {DB} LIKE 'ctas*|df_*'")
    r.sql("show table extended", f"SHOW TABLE EXTENDED IN {DB} LIKE 'df_plain'")
    r.call("catalog list tables", lambda: s.createDataFrame(
        [(t.name, t.tableType, t.isTemporary) for t in s.catalog.listTables(DB)],
        "name STRING, type STRING, tmp BOOLEAN"))
    r.call("catalog list columns", lambda: s.createDataFrame(
        [(c.name, c.dataType, c.isPartition) for c in s.catalog.listColumns(f"{DB}.events2")],
        "name STRING, type STRING, part BOOLEAN"), ordered=True)

    # permanent functions
    upper = "org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper"
    r.sql("create function", f"CREATE FUNCTION {DB}.my_upper AS '{upper}'")
    r.sql("create function again", f"CREATE FUNCTION {DB}.my_upper AS '{upper}'")
    r.sql("create function reverse", "CREATE FUNCTION my_reverse AS 'org.apache.hadoop.hive.ql.udf.UDFReverse'")
    r.sql("use function",
          f"SELECT id, {DB}.my_upper(name), my_reverse(name) FROM events2 WHERE ds = '2024-01-02' AND h = 1")
    r.sql("show user functions", f"SHOW USER FUNCTIONS IN {DB}")
    r.dump("metastore with functions")
    r.sql("describe function", f"DESCRIBE FUNCTION EXTENDED {DB}.my_upper", ordered=True)
    r.sql("drop function", f"DROP FUNCTION {DB}.my_upper")
    r.sql("drop function again", f"DROP FUNCTION {DB}.my_upper")
    r.sql("drop function if exists", f"DROP FUNCTION IF EXISTS {DB}.my_upper")
    r.sql("use dropped function", f"SELECT {DB}.my_upper('x')")
    r.sql("show user functions after drop", f"SHOW USER FUNCTIONS IN {DB}")

    # drops
    r.sql("drop table", "DROP TABLE events_like")
    r.sql("drop missing table", "DROP TABLE events_like")
    r.sql("drop table if exists", "DROP TABLE IF EXISTS events_like")
    r.sql("drop external table", "DROP TABLE ext")
    r.note("external data kept", sorted(os.listdir(os.path.join(r.warehouse, "external", "ext"))) != [])
    r.sql("drop non-empty database", f"DROP DATABASE {DB}")
    r.sql("create second database", "CREATE DATABASE ws_tmp")
    r.sql("table in second database", "CREATE TABLE ws_tmp.t USING parquet AS SELECT 1 AS x")
    r.sql("drop second database cascade", "DROP DATABASE ws_tmp CASCADE")
    r.note("second database directory removed", not os.path.exists(os.path.join(r.warehouse, "ws_tmp.db")))
    r.sql("show databases at end", "SHOW DATABASES")
    r.sql("show tables at end", f"SHOW TABLES IN {DB}")
    r.tree("tree at end", DB + ".db")
    r.dump("metastore at end")


def read_phase(r: Recorder) -> None:
    """A second session: it must see the first one's objects and read the same data."""
    r.sql("show databases", "SHOW DATABASES")
    r.sql("show tables", f"SHOW TABLES IN {DB}")
    r.sql("describe", f"DESCRIBE {DB}.events2", ordered=True)
    r.sql("select all", f"SELECT * FROM {DB}.events2", scan=True)
    r.sql("select pruned", f"SELECT id, ds, h FROM {DB}.events2 WHERE ds = '2024-01-02' AND h IN (1, 2)", scan=True)
    r.sql("select data source", f"SELECT * FROM {DB}.df_part WHERE p >= 1", scan=True)
    r.sql("select data source plain", f"SELECT * FROM {DB}.df_plain")
    r.sql("select view", f"SELECT * FROM {DB}.v_events")
    r.sql("select ctas", f"SELECT * FROM {DB}.ctas_ds")
    r.sql("function from first session", f"SELECT {DB}.my_reverse('abc')")
    r.sql("function in default", "SELECT my_reverse('abc')")
    r.sql("show partitions", f"SHOW PARTITIONS {DB}.events2", ordered=True)
    r.sql("table stats", f"DESCRIBE EXTENDED {DB}.events2 amount", ordered=True)
    r.sql("insert from second session", f"INSERT INTO {DB}.events2 PARTITION (ds='2024-09-09', h=9) "
          "VALUES (900, 'second', 9.9, NULL)")
    r.sql("select second insert", f"SELECT * FROM {DB}.events2 WHERE ds = '2024-09-09'", scan=True)
    r.sql("drop view", f"DROP VIEW {DB}.v_events")
    r.sql("drop table", f"DROP TABLE {DB}.ctas_hive")
    r.sql("show tables after drop", f"SHOW TABLES IN {DB}")
    r.dump("metastore before dropping the database")
    r.note("dropped table directory removed", not os.path.exists(os.path.join(r.warehouse, DB + ".db", "ctas_hive")))
    r.sql("drop database cascade", f"DROP DATABASE {DB} CASCADE")
    r.sql("show databases after drop", "SHOW DATABASES")
    r.sql("select from dropped database", f"SELECT * FROM {DB}.events2")
    r.note("database directory removed", not os.path.exists(os.path.join(r.warehouse, DB + ".db")))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", choices=("write", "read"), required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--uri", help="thrift:// URI of the metastore; without it, Spark's embedded metastore")
    args = ap.parse_args()

    from pyspark.sql import SparkSession

    b = (SparkSession.builder.master("local[2]").appName(f"workload-{args.phase}")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.default.parallelism", "2")
         .config("spark.sql.warehouse.dir", args.warehouse)
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.memory", "768m")
         .config("spark.sql.sources.partitionOverwriteMode", "static")
         .config("spark.sql.hive.metastorePartitionPruning", "true")
         .config("spark.sql.statistics.histogram.enabled", "false"))
    if args.uri:
        b = b.config("spark.hadoop.hive.metastore.uris", args.uri)
    else:
        derby = os.path.join(os.getcwd(), "metastore_db")
        b = b.config("spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={derby};create=true")
    spark = b.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("FATAL")
    import logging
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    r = Recorder(spark, args.warehouse)
    status = 0
    try:
        (write_phase if args.phase == "write" else read_phase)(r)
    except Exception:  # noqa: BLE001 - a crash of the workload itself, not of a step
        r.steps.append({"step": "workload crashed", "error": traceback.format_exc()})
        status = 1
    finally:
        with open(args.out, "w") as f:
            json.dump(r.steps, f, indent=1, default=str)
        r.close()
        spark.stop()
    return status


if __name__ == "__main__":
    sys.exit(main())
