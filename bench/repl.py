#!/usr/bin/env python
"""The replication benchmark (issue 8, acceptance 5): REPL DUMP / REPL LOAD between two `metastore serve`.

    python bench/repl.py                          # 100 tables x 100 partitions, then 10,000 events
    python bench/repl.py --tables 10 --partitions 10 --events 500     # a quick run

Two servers on fresh SQLite stores (one process each). The source gets a database of --tables tables with
--partitions partitions each (metadata only: no data files, so the data copy has nothing to do), then:

  bootstrap     REPL DUMP (bootstrap) and REPL LOAD into an empty target: seconds for each, and partitions/s.
  incremental   --events events on the source (a mix: CREATE_TABLE, ADD_PARTITION one partition each,
                ALTER_PARTITION of bootstrap partitions, DROP_PARTITION), then REPL DUMP (incremental) and REPL
                LOAD: seconds for each, and the events per second applied on the target.

Both run in this process through the Python API (the same code as `metastore repl dump|load`), against the
servers over Thrift. After each load the benchmark checks the target's tables and partition counts equal
the source's. Results go to bench/results/repl.json and bench/results/repl.md.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from common import ROOT, Serve, write_results

sys.path.insert(0, str(ROOT / "src"))

from metastore.repl import dump, load  # noqa: E402
from metastore.thrift import hms  # noqa: E402
from metastore.thrift.client import MetastoreClient  # noqa: E402

DB = "bench_src"
TDB = "bench_replica"
T = TypeVar("T")


def serve(work: Path, name: str) -> Serve:
    d = work / name
    d.mkdir()
    server = Serve(d)
    try:
        server.launch(f"sqlite:///{d / 'store.db'}", timeout=60)
    except Exception:
        server.stop()
        raise
    return server


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """fn's result and the seconds it took (rounded as the results show them)."""
    t0 = time.monotonic()
    result = fn()
    return result, round(time.monotonic() - t0, 2)


def table(name: str) -> Any:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name=c, type="string", comment="") for c in ("a", "b", "c")],
                               inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                               compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
                               serdeInfo=hms.SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet."
                                                       "serde.ParquetHiveSerDe", parameters={}))
    return hms.Table(tableName=name, dbName=DB, owner="bench", sd=sd, parameters={},
                     partitionKeys=[hms.FieldSchema(name="day", type="string", comment="")],
                     tableType="MANAGED_TABLE")


def parts(t: Any, values: list[str]) -> list[Any]:
    out = []
    for v in values:
        sd = copy.deepcopy(t.sd)
        sd.location = None
        out.append(hms.Partition(values=[v], dbName=DB, tableName=t.tableName, sd=sd, parameters={}))
    return out


def counts(uri: str, db: str) -> dict[str, int]:
    with MetastoreClient(uri) as ms:
        return {n: len(ms.get_partition_names(db, n, -1)) for n in sorted(ms.get_all_tables(db))}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=100, help="per table")
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-repl-"))
    source, target = serve(work, "source"), serve(work, "target")
    src, tgt = source.uri, target.uri
    root = str(work / "staging")
    opts = {"metastore.repl.copy.engine": "local"}
    res: dict[str, Any] = {"machine": f"{platform.node()}, {os.cpu_count()} cores", "store": "SQLite, 1 process each",
                           "tables": a.tables, "partitions_per_table": a.partitions}
    try:
        with MetastoreClient(src) as ms:
            ms.create_database(hms.Database(name=DB, parameters={}))
            t0 = time.monotonic()
            for i in range(a.tables):
                t = table(f"t{i:03d}")
                ms.create_table(t)
                t = ms.get_table(DB, t.tableName)
                ms.add_partitions(parts(t, [f"2024-{d // 28 + 1:02d}-{d % 28 + 1:02d}"
                                                    for d in range(a.partitions)]))
            res["source_setup_s"] = round(time.monotonic() - t0, 2)
        print(f"source: {a.tables} tables, {a.tables * a.partitions} partitions in {res['source_setup_s']}s",
              flush=True)

        d, res["bootstrap_dump_s"] = timed(lambda: dump(src, DB, root))
        [ld], res["bootstrap_load_s"] = timed(lambda: load(tgt, DB, TDB, root, opts))
        res["bootstrap_partitions"] = ld.partitions
        res["bootstrap_partitions_per_s"] = round(ld.partitions / res["bootstrap_load_s"], 1)
        assert counts(src, DB) == counts(tgt, TDB), "bootstrap: the target differs"
        print(f"bootstrap: dump {res['bootstrap_dump_s']}s, load {res['bootstrap_load_s']}s", flush=True)

        # the incremental workload: 1% creates, 49% single-partition adds, 49% partition alters, 1% drops
        n = a.events
        creates, drops = max(1, n // 100), max(1, n // 100)
        adds = (n - creates - drops) // 2
        alters = n - creates - drops - adds
        t0 = time.monotonic()
        with MetastoreClient(src) as ms:
            start = ms.current_event_id()
            new_tables = []
            for i in range(creates):
                ms.create_table(table(f"n{i:04d}"))
                new_tables.append(ms.get_table(DB, f"n{i:04d}"))
            for i in range(adds):
                ms.add_partitions(parts(new_tables[i % creates], [f"v{i:06d}"]))
            done = 0
            for i in range(a.tables):
                if done >= alters:
                    break
                name = f"t{i:03d}"
                ps = ms.get_partitions(DB, name, -1)[: alters - done]
                for p in ps:
                    p.parameters = {**p.parameters, "bench.touched": "1"}
                ms.alter_partitions(DB, name, ps)
                done += len(ps)
            for i in range(drops):
                ms.drop_partition(DB, f"t{i % a.tables:03d}", [f"2024-{(a.partitions - 1) // 28 + 1:02d}-"
                                                                       f"{(a.partitions - 1) % 28 + 1:02d}"], True)
            made = ms.current_event_id() - start
        res["incremental_source_events"] = made
        res["source_events_s"] = round(time.monotonic() - t0, 2)
        print(f"source: {made} events in {res['source_events_s']}s", flush=True)

        d, res["incremental_dump_s"] = timed(lambda: dump(src, DB, root))
        res["incremental_dumped_events"] = d.events
        [ld], res["incremental_load_s"] = timed(lambda: load(tgt, DB, TDB, root, opts))
        res["incremental_applied_events"] = ld.events
        res["incremental_events_per_s"] = round(ld.events / res["incremental_load_s"], 1)
        assert counts(src, DB) == counts(tgt, TDB), "incremental: the target differs"
        print(f"incremental: dump {res['incremental_dump_s']}s, load {res['incremental_load_s']}s "
              f"({res['incremental_events_per_s']} events/s)", flush=True)
    finally:
        source.stop()
        target.stop()
        shutil.rmtree(work, ignore_errors=True)
    md = [f"# Replication benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
          f"{res['machine']}; source and target: `metastore serve` on {res['store']}; `python bench/repl.py "
          f"--tables {a.tables} --partitions {a.partitions} --events {a.events}`; metadata only (no data files).",
          "", "| phase | figure |", "|---|---:|",
          f"| bootstrap: {a.tables} tables, {res['bootstrap_partitions']:,} partitions — REPL DUMP | "
          f"{res['bootstrap_dump_s']} s |",
          f"| bootstrap — REPL LOAD | {res['bootstrap_load_s']} s ({res['bootstrap_partitions_per_s']:,} "
          "partitions/s) |",
          f"| incremental: {res['incremental_dumped_events']:,} events — REPL DUMP | {res['incremental_dump_s']} s |",
          f"| incremental — REPL LOAD | {res['incremental_load_s']} s |",
          f"| incremental — events applied per second on the target | {res['incremental_events_per_s']:,} |", "",
          "The incremental events: 1% CREATE_TABLE, 49% ADD_PARTITION (one partition each, round-robin over the "
          "new tables, so none can be applied together), 49% ALTER_PARTITION (from alter_partitions calls of up "
          "to 100 partitions: consecutive events of one table are applied in one call), 1% DROP_PARTITION. The "
          "source wrote them in " f"{res['source_events_s']} s through Thrift; the load is bound by the target's "
          "commits. The 2 cores are shared with other work, so figures move between runs.", ""]
    write_results(Path(a.out), "repl.json", res, "repl.md", "\n".join(md), indent=1, json_end="\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
