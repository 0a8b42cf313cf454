#!/usr/bin/env python
"""The catalogd benchmark (issue 7, acceptance 5).

    python bench/catalogd.py                         # writes bench/results/catalogd.{md,json}
    python bench/catalogd.py --events 2000 --lag-seconds 5 --out bench/out/quick  # a quick run

On a fresh `metastore serve` (SQLite, started here):

  catch-up   N events (10,000) over 100 tables in 10 databases are put in the notification log first
             (CREATE_TABLE, INSERT, ADD_PARTITION, ALTER_TABLE, ALTER_PARTITION); then a catalogd cache,
             bootstrapped before them, applies them all, once with the sequential processor and once with the
             hierarchical one. Listing the file metadata of a table or partition location costs 5 ms of
             simulated I/O (a sleep, as a remote file system's listing would); every INSERT, ADD_PARTITION,
             ALTER_PARTITION and CREATE_TABLE of an unpartitioned table lists one location. Time: from the
             processor's start until its synced event id reaches the last event. Both runs must end in the
             same catalog (checked).
  lag        `metastore catalogd` (hierarchical, its defaults: event poll 50 ms, topic updates every 50 ms,
             full topic mode) and a subscriber process (the subscriber library's HTTP long-poll), each its own
             process; 4 Thrift clients
             alter tables directly on the metastore at 100 changes per second in all for S seconds; per change,
             the time it appeared in the subscriber's replica minus the time alter_table returned (the commit
             happened just before the reply): p50, p99, max.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from common import ROOT, Serve, free_port, stop_process, write_results

sys.path.insert(0, str(ROOT / "src"))

from metastore.catalogd.bootstrap import bootstrap  # noqa: E402
from metastore.catalogd.catalog import CatalogCache, list_files  # noqa: E402
from metastore.catalogd.loader import TableLoader  # noqa: E402
from metastore.catalogd.processor import make_processor  # noqa: E402
from metastore.catalogd.verify import cache_view  # noqa: E402
from metastore.thrift import hms  # noqa: E402
from metastore.thrift.client import MetastoreClient  # noqa: E402

DBS, TABLES = 10, 100
WRITERS = 4


def table_obj(db: str, name: str, partitioned: bool) -> Any:
    serde = hms.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={})
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="a", type="int")], serdeInfo=serde, bucketCols=[],
                               sortCols=[], parameters={}, numBuckets=-1, compressed=False,
                               inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat")
    return hms.Table(tableName=name, dbName=db, owner="bench", sd=sd, parameters={}, tableType="MANAGED_TABLE",
                     partitionKeys=[hms.FieldSchema(name="p", type="string")] if partitioned else [])


def names() -> list[tuple[str, str, bool]]:
    return [(f"bench_d{i % DBS}", f"t{i}", i % 2 == 0) for i in range(TABLES)]


def generate(ms: MetastoreClient, total: int) -> int:
    """Puts about `total` events in the log; returns how many."""
    first = ms.current_event_id()
    for d in range(DBS):
        ms.create_database(hms.Database(name=f"bench_d{d}", parameters={}))
    tables = names()
    for db, t, part in tables:
        ms.create_table(table_obj(db, t, part))
    parts: dict[tuple[str, str], int] = {}
    i = 0
    while ms.current_event_id() - first < total:
        db, t, part = tables[i % TABLES]
        kind = i // TABLES % 5
        if part and kind in (0, 1):
            n = parts.get((db, t), 0)
            parts[(db, t)] = n + 1
            sd = table_obj(db, t, part).sd
            ms.add_partition(hms.Partition(values=[str(n)], dbName=db, tableName=t, sd=sd, parameters={}))
        elif part and kind == 2 and parts.get((db, t)):
            p = ms.get_partition(db, t, ["0"])
            p.parameters = dict(p.parameters or {}, i=str(i))
            ms.alter_partition(db, t, p)
        elif kind == 3:
            obj = ms.get_table_objects_by_name(db, [t])[0]
            obj.parameters = dict(obj.parameters or {}, i=str(i))
            ms.alter_table(db, t, obj)
        else:
            vals = [str(parts[(db, t)] - 1)] if part and parts.get((db, t)) else None
            if part and not vals:
                i += 1
                continue
            ms.fire_listener_event(hms.FireEventRequest(
                successful=True, data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(
                    filesAdded=[])), dbName=db, tableName=t, partitionVals=vals))
        i += 1
    return ms.current_event_id() - first


def catch_up(ms: MetastoreClient, start_cache: CatalogCache, start: int, hierarchical: bool,
             delay: float) -> tuple[float, CatalogCache, dict[str, Any]]:
    cache = start_cache
    cache.list_files = lambda loc: list_files(loc, delay)
    loader = TableLoader(cache, ms, threads=4)
    kw: dict[str, Any] = {"db_executors": 4, "table_executors_per_db": 8} if hierarchical else {}
    proc = make_processor(hierarchical, cache, ms, loader, start, **kw)
    target = ms.current_event_id()
    t0 = time.perf_counter()
    proc.start()
    while proc.synced_event_id < target:
        time.sleep(0.005)
    took = time.perf_counter() - t0
    st = proc.status()
    proc.stop()
    loader.close()
    return took, cache, st


SUBSCRIBER = r"""
import sys, time
sys.path.insert(0, sys.argv[3])
from metastore.catalogd.subscriber import Subscriber
sub = Subscriber("bench", sys.argv[1], poll_wait=1.0)
orig = sub.replica.apply
out = open(sys.argv[2], "w", buffering=1)
def apply(up):
    ok = orig(up)
    now = time.time()
    for e in up.entries:
        if e.kind == "table" and e.obj is not None and e.obj.obj is not None:
            s = (e.obj.obj.parameters or {}).get("seq")
            if s is not None:
                out.write(f"{s} {now} {up.to_version}\n")
    out.write(f"version {up.to_version}\n")
    return ok
sub.replica.apply = apply
while True:
    time.sleep(1)
"""


def lag(url: str, seconds: float, rate: float, work: Path) -> dict[str, Any]:
    """catalogd and the subscriber run as their own processes, as deployed (no GIL shared with the writers)."""
    port, http = free_port(), free_port()
    cat = subprocess.Popen([sys.executable, "-m", "metastore.cli", "catalogd", "--metastore", url, "--port", str(port),
                            "--http-port", str(http)], stdout=open(work / "catalogd.log", "wb"),
                           stderr=subprocess.STDOUT)
    seen_file = work / "seen.txt"
    sub = None
    ms = MetastoreClient(url, retry_reads=True)
    try:
        status: dict[str, Any] = {}
        deadline = time.time() + 60
        while time.time() < deadline:  # catalogd up, its tables loaded
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{http}/status", timeout=2) as r:
                    status = json.loads(r.read())
                if status["catalog"]["incomplete_tables"] == 0 and status["processor"]["lag_events"] == 0:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        sub = subprocess.Popen([sys.executable, "-c", SUBSCRIBER, f"http://127.0.0.1:{http}", str(seen_file),
                                str(ROOT / "src")])
        while not seen_file.exists() or "version" not in seen_file.read_text():
            time.sleep(0.1)
        committed: dict[int, float] = {}
        tables = names()
        objs = {(db, t): ms.get_table_objects_by_name(db, [t])[0] for db, t, _ in tables}
        n = int(seconds * rate)
        t0 = time.perf_counter()

        def writer(k: int) -> None:
            # WRITERS clients, each taking every WRITERS-th change on its schedule (a table always gets its
            # changes from one client, in order)
            for i in range(k, n, WRITERS):
                due = t0 + i / rate
                while time.perf_counter() < due:
                    time.sleep(max(0.0, min(0.002, due - time.perf_counter())))
                db, t, _ = tables[i % TABLES]
                obj = objs[(db, t)]
                obj.parameters = dict(obj.parameters or {}, seq=str(i))
                ms.alter_table(db, t, obj)
                committed[i] = time.time()
        threads = [threading.Thread(target=writer, args=(k,)) for k in range(WRITERS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        achieved = n / (time.perf_counter() - t0)
        seen: dict[int, float] = {}
        deadline = time.time() + 60
        while time.time() < deadline:
            seen = {}
            for line in seen_file.read_text().splitlines():
                parts = line.split()
                if parts[0] != "version" and len(parts) == 3:
                    seen.setdefault(int(parts[0]), float(parts[1]))
            # the last change of every table must arrive
            if all(j in seen for j in range(max(0, n - TABLES), n)):
                break
            time.sleep(0.2)
        with urllib.request.urlopen(f"http://127.0.0.1:{http}/status", timeout=10) as r:
            status = json.loads(r.read())
        # A change overwritten by the next change of its table before a topic update was built is visible
        # through that successor: its visibility is the first later change of the same table seen.
        lat = []
        for i, c in committed.items():
            later = [seen[j] for j in range(i, n, TABLES) if j in seen]
            if later:
                lat.append((min(later) - c) * 1000)
        lat.sort()
        return {"changes": n, "rate_target": rate, "rate_achieved": round(achieved, 1), "measured": len(lat),
                "seen_directly": len([i for i in committed if i in seen]),
                "p50_ms": round(statistics.median(lat), 1), "p99_ms": round(lat[int(len(lat) * 0.99) - 1], 1),
                "max_ms": round(lat[-1], 1), "topic_updates": status["topics"]["updates"]}
    finally:
        stop_process(sub, 10)
        stop_process(cat)
        ms.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--delay-ms", type=float, default=5.0)
    ap.add_argument("--lag-seconds", type=float, default=20.0)
    ap.add_argument("--rate", type=float, default=100.0)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="catalogd-bench-"))
    server = Serve(work)
    try:
        server.launch(f"sqlite:///{work}/ms.db", timeout=60)
        url = server.uri
        ms = MetastoreClient(url, retry_reads=True)
        caches = (CatalogCache(), CatalogCache())
        start = bootstrap(caches[0], ms)
        bootstrap(caches[1], ms)
        t0 = time.perf_counter()
        n = generate(ms, a.events)
        print(f"{n} events generated in {time.perf_counter() - t0:.1f} s", flush=True)
        runs = {}
        views = {}
        for hier, cache in ((False, caches[0]), (True, caches[1])):
            took, cache, st = catch_up(ms, cache, start, hier, a.delay_ms / 1000)
            mode = "hierarchical" if hier else "sequential"
            runs[mode] = {"seconds": round(took, 2), "events_per_second": round(n / took, 1),
                          "applied": st["events_applied"], "skipped": st["events_skipped"],
                          "failed": st["events_failed"]}
            views[mode] = cache_view(cache, {f"bench_d{d}" for d in range(DBS)})
            print(mode, runs[mode], flush=True)
        assert views["sequential"] == views["hierarchical"], "the two modes ended in different catalogs"
        speedup = runs["sequential"]["seconds"] / runs["hierarchical"]["seconds"]
        lag_res = lag(url, a.lag_seconds, a.rate, work)
        print("lag", lag_res, flush=True)
        ms.close()
    finally:
        server.stop()
    res = {"events": n, "tables": TABLES, "databases": DBS, "file_listing_ms": a.delay_ms,
           "hierarchical_config": "4 database executors x 8 table executors", "catch_up": runs,
           "speedup": round(speedup, 2), "lag": lag_res, "machine": f"{platform.platform()}, {os.cpu_count()} cores",
           "load_average_1m_at_end": round(os.getloadavg()[0], 2),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    s, h = runs["sequential"], runs["hierarchical"]
    md = f"""# catalogd benchmark

`python bench/catalogd.py` ({res['date']}; {res['machine']}, shared: load average {res['load_average_1m_at_end']} at
the end, from other work on the machine; metastore: `metastore serve` on SQLite).

## Catching up on {n:,} events over {TABLES} tables ({DBS} databases), file listing {a.delay_ms:g} ms

| processor | seconds | events/s |
|---|---:|---:|
| sequential | {s['seconds']} | {s['events_per_second']:,} |
| hierarchical ({res['hierarchical_config']}) | {h['seconds']} | {h['events_per_second']:,} |

Speedup: **{speedup:.1f}x** (target: at least 5x). Both runs ended in the same catalog (checked).

## Lag from a metastore commit to a subscriber's replica, {lag_res['rate_target']:g} changes/s

{lag_res['changes']:,} table changes (alter_table straight on the metastore by {WRITERS} clients,
{lag_res['rate_achieved']} /s achieved),
`metastore catalogd` (hierarchical, its defaults: event poll 50 ms, topic updates every 50 ms, full topic mode)
and one subscriber process (HTTP long-poll); visibility = the subscriber applied the topic update with it:

| p50 | p99 | max |
|---:|---:|---:|
| {lag_res['p50_ms']} ms | {lag_res['p99_ms']} ms | {lag_res['max_ms']} ms |

{lag_res['topic_updates']} topic updates were published.
"""
    write_results(Path(a.out), "catalogd.json", res, "catalogd.md", md, json_end="\n")
    print(md)


if __name__ == "__main__":
    main()
