"""A PySpark workload over a Hive metastore; writes what every statement returned as JSON.

    python tests/spark_workload.py --phase write|read --warehouse DIR --out FILE [--uri thrift://...]

Without --uri Spark uses its own embedded metastore (Hive 2.3 on Derby, in the working directory): the
reference. `write` builds a database of Hive and data source tables and exercises DDL, DML, statistics,
views and functions; `read` is a second session (a second process) that reads what the first left and
then drops it all. The statements, in order, are tests/spark_workload.sql (its header gives its format);
what is not SQL (DataFrame writes, file operations, notes) is the ACTIONS below, named there. Each step
records its rows (sorted unless ordered), or the error class and message, and, for queries, how many
partitions Spark fetched from the metastore and the scan's partition filters.
Values are normalized only where the two metastores legitimately differ: absolute paths and times.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import os
import re
import shutil
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
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


# ---- the workload: its statements in spark_workload.sql, the rest in actions here ------------------------

WORKLOAD_SQL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spark_workload.sql")
ROWS = [(i, f"n{i}", i * 1.5, f"2024-01-0{1 + i % 3}", i % 4) for i in range(1, 25)]


@dataclass(frozen=True)
class Step:
    """One line of the workload file: a SQL statement, an action, a tree or a dump (see spark_workload.sql)."""
    kind: str  # "step", "action", "tree" or "dump"
    name: str
    text: str = ""  # the SQL of a step, the path of a tree (before substitution)
    ordered: bool = False
    scan: bool = False


_DIRECTIVE = re.compile(r"--\s([a-z]+):\s(.*)$")
_STEP_OPTIONS = re.compile(r"^(.*?)\s\[([a-z, ]+)\]$")
_PLACEHOLDER = re.compile(r"\{(\w*)\}")


def load_workload(path: str = WORKLOAD_SQL) -> dict[str, list[Step]]:
    """The phases of the workload file and their steps, in order; a malformed file raises ValueError."""
    phases: dict[str, list[Step]] = {}
    steps: list[Step] | None = None
    sql: list[str] | None = None  # the lines of the statement being read

    def fail(lineno: int, why: str) -> ValueError:
        return ValueError(f"{path}:{lineno}: {why}")

    def end_statement(lineno: int) -> None:
        nonlocal sql
        if sql is not None:
            if not sql:
                raise fail(lineno, "a step without SQL")
            assert steps is not None
            steps[-1] = replace(steps[-1], text=" ".join(sql))
        sql = None

    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("--"):
            end_statement(lineno)
            m = _DIRECTIVE.match(line)
            if not m:
                continue
            kind, arg = m.group(1), m.group(2).strip()
            if kind == "phase":
                if arg in phases:
                    raise fail(lineno, f"phase {arg} again")
                steps = phases[arg] = []
                continue
            if steps is None:
                raise fail(lineno, "a step before the first phase")
            if kind == "step":
                opts = _STEP_OPTIONS.match(arg)
                names = {o.strip() for o in opts.group(2).split(",")} if opts else set()
                if names - {"ordered", "scan"}:
                    raise fail(lineno, f"unknown options {sorted(names - {'ordered', 'scan'})}")
                steps.append(Step("step", opts.group(1) if opts else arg, ordered="ordered" in names,
                                  scan="scan" in names))
                sql = []
            elif kind == "action":
                if arg not in ACTIONS:
                    raise fail(lineno, f"no action {arg}")
                steps.append(Step("action", arg))
            elif kind == "tree":
                name, sep, rel = arg.rpartition(" @ ")
                if not sep:
                    raise fail(lineno, "a tree is NAME @ PATH")
                steps.append(Step("tree", name, rel))
            elif kind == "dump":
                steps.append(Step("dump", arg))
            else:
                raise fail(lineno, f"unknown directive {kind}")
        elif sql is None:
            raise fail(lineno, "SQL outside a step")
        else:
            sql.append(line)
    end_statement(len(lines) + 1)
    return phases


def substitute(text: str, values: dict[str, str]) -> str:
    """{name} placeholders replaced by their values; an unknown name is an error."""
    def one(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise ValueError(f"unknown placeholder {m.group(0)} in {text!r}")
        return values[m.group(1)]
    return _PLACEHOLDER.sub(one, text)


Action = Callable[[Recorder, dict[str, Any]], None]
ACTIONS: dict[str, Action] = {}


def action(fn: Action) -> Action:
    """Registers fn as an action of the workload file, under its name; its state is shared within a phase."""
    ACTIONS[fn.__name__] = fn
    return fn


@action
def src_view(r: Recorder, state: dict[str, Any]) -> None:
    r.spark.createDataFrame(ROWS, "id INT, name STRING, amount DOUBLE, ds STRING, h INT") \
        .createOrReplaceTempView("src")


@action
def msck_write_partition(r: Recorder, state: dict[str, Any]) -> None:
    """A partition directory written behind the metastore's back."""
    loc = os.path.join(r.warehouse, DB + ".db", "events")
    r.spark.createDataFrame([(400, "msck", 4.0, None)], "id INT, name STRING, amount DOUBLE, note STRING") \
        .coalesce(1).write.mode("overwrite").parquet(os.path.join(loc, "ds=2024-03-01", "h=7"))


@action
def msck_remove_partition(r: Recorder, state: dict[str, Any]) -> None:
    """A partition directory removed behind the metastore's back."""
    shutil.rmtree(os.path.join(r.warehouse, DB + ".db", "events", "ds=2024-02-01"))


@action
def dataframe_tables(r: Recorder, state: dict[str, Any]) -> None:
    """Data source tables written and read by the DataFrame API."""
    s = r.spark
    df = state["df"] = s.createDataFrame([(i, f"p{i}", i % 3) for i in range(12)], "id INT, label STRING, p INT")
    r.call("saveAsTable plain", lambda: df.write.saveAsTable(f"{DB}.df_plain"))
    r.call("saveAsTable partitioned", lambda: df.write.partitionBy("p").saveAsTable(f"{DB}.df_part"))
    r.call("insertInto", lambda: df.where("id < 4").write.insertInto(f"{DB}.df_part"))
    r.call("saveAsTable append", lambda: df.where("id > 9").write.mode("append").saveAsTable(f"{DB}.df_plain"))
    r.call("saveAsTable exists", lambda: df.write.saveAsTable(f"{DB}.df_plain"))
    r.call("read df_plain", lambda: s.table(f"{DB}.df_plain"))


@action
def dataframe_insert_overwrite(r: Recorder, state: dict[str, Any]) -> None:
    df = state["df"]
    r.call("insertInto overwrite", lambda: df.where("p = 2 AND id > 6").write.insertInto(f"{DB}.df_part",
                                                                                       overwrite=True))


@action
def texty_location_dir(r: Recorder, state: dict[str, Any]) -> None:
    """The directory the text table is moved to."""
    os.makedirs(os.path.join(r.warehouse, "elsewhere", "texty"), exist_ok=True)


@action
def catalog_listings(r: Recorder, state: dict[str, Any]) -> None:
    s = r.spark
    r.call("catalog list tables", lambda: s.createDataFrame(
        [(t.name, t.tableType, t.isTemporary) for t in s.catalog.listTables(DB)],
        "name STRING, type STRING, tmp BOOLEAN"))
    r.call("catalog list columns", lambda: s.createDataFrame(
        [(c.name, c.dataType, c.isPartition) for c in s.catalog.listColumns(f"{DB}.events2")],
        "name STRING, type STRING, part BOOLEAN"), ordered=True)


@action
def note_external_data_kept(r: Recorder, state: dict[str, Any]) -> None:
    r.note("external data kept", sorted(os.listdir(os.path.join(r.warehouse, "external", "ext"))) != [])


@action
def note_second_database_removed(r: Recorder, state: dict[str, Any]) -> None:
    r.note("second database directory removed", not os.path.exists(os.path.join(r.warehouse, "ws_tmp.db")))


@action
def note_dropped_table_removed(r: Recorder, state: dict[str, Any]) -> None:
    r.note("dropped table directory removed", not os.path.exists(os.path.join(r.warehouse, DB + ".db", "ctas_hive")))


@action
def note_database_removed(r: Recorder, state: dict[str, Any]) -> None:
    r.note("database directory removed", not os.path.exists(os.path.join(r.warehouse, DB + ".db")))


def run_phase(r: Recorder, phase: str) -> None:
    """The phase's steps of the workload file, in order."""
    values = {"DB": DB, "warehouse": r.warehouse}
    state: dict[str, Any] = {}
    for st in load_workload()[phase]:
        if st.kind == "step":
            r.sql(st.name, substitute(st.text, values), ordered=st.ordered, scan=st.scan)
        elif st.kind == "action":
            ACTIONS[st.name](r, state)
        elif st.kind == "tree":
            r.tree(st.name, substitute(st.text, values))
        else:
            r.dump(st.name)


def write_phase(r: Recorder) -> None:
    """The first session: builds a database of Hive and data source tables and exercises DDL, DML, statistics,
    views and functions."""
    run_phase(r, "write")


def read_phase(r: Recorder) -> None:
    """A second session: it must see the first one's objects and read the same data."""
    run_phase(r, "read")


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
