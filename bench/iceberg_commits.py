#!/usr/bin/env python
"""Iceberg commits per second on one table, with 1, 4 and 8 concurrent writer processes, through:

  lock path (ours)        PyIceberg HiveCatalog against `metastore serve` (Thrift: lock, check_lock, get_table,
                          alter_table, unlock for every commit)
  REST path (ours)        PyIceberg RestCatalog against the Iceberg REST catalog of the same `metastore serve`
                          (one POST per commit: requirements checked, metadata written, compare-and-swap)
  lock path (reference)   PyIceberg HiveCatalog against the reference Apache Hive 2.3.10 metastore (Derby)

    python bench/iceberg_commits.py                    # ~4 minutes: 10 s per point, the reference included
    python bench/iceberg_commits.py --seconds 3 --no-reference

Each writer appends one row per commit, in a loop, for the measured window; a commit that loses the race
(CommitFailedException) reloads the table and tries again (PyIceberg's REST client also retries by itself).
Every point uses a fresh table, and afterwards checks that the table has exactly as many snapshots as commits
were counted (no lost commit). Writers are separate processes, started and ready before the window opens.
Results: bench/results/iceberg-commits.{md,json} (--out to change).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from common import Reference, Serve, command_line, free_port, fresh_dir, host_facts, log, publish, utc_now, wait_port  # noqa: E402

LOCK_PROPS = {"lock-check-min-wait-time": "0.01", "lock-check-max-wait-time": "0.1", "lock-check-retries": "100000"}
PATHS = ("lock", "rest", "reference")
LABELS = {"lock": "lock path (ours)", "rest": "REST path (ours)", "reference": "lock path (reference)"}


def catalog(kind: str, uri: str, warehouse: str) -> Any:
    if kind == "rest":
        from pyiceberg.catalog.rest import RestCatalog
        return RestCatalog("rest", uri=uri)
    from pyiceberg.catalog.hive import HiveCatalog
    return HiveCatalog("hive", uri=uri, warehouse=warehouse, **LOCK_PROPS)


def writer(kind: str, uri: str, warehouse: str, ident: str, n: int, seconds: float, ready: Any, go: Any,
           results: Any) -> None:
    """One writer process: appends one-row commits until the window closes; reports (commits, retries)."""
    import logging

    import pyarrow as pa
    from pyiceberg.exceptions import CommitFailedException

    logging.basicConfig(level=logging.ERROR)  # PyIceberg logs every lock wait and refused commit: counted instead
    cat = catalog(kind, uri, warehouse)
    table = cat.load_table(ident)
    schema = pa.schema([pa.field("writer", pa.int64()), pa.field("seq", pa.int64())])
    commits = retries = errors = 0
    ready.put(n)
    go.wait()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = pa.table({"writer": [n], "seq": [commits]}, schema=schema)
        try:
            table.append(data)
            commits += 1
        except CommitFailedException:
            retries += 1
            table = cat.load_table(ident)
        except Exception as e:  # noqa: BLE001 - counted and reported, the window goes on
            errors += 1
            if errors <= 3:
                print(f"writer {n}: {type(e).__name__}: {e}", file=sys.stderr)
            table = cat.load_table(ident)
    results.put((n, commits, retries, errors))


def measure(kind: str, uri: str, warehouse: str, ns: str, writers: int, seconds: float) -> dict[str, Any]:
    import pyarrow as pa

    cat = catalog(kind, uri, warehouse)
    ident = f"{ns}.t_{writers}_{uuid.uuid4().hex[:6]}"
    # no retry inside PyIceberg (its backoff starts at 100 ms): a refused commit comes back to the writer's loop,
    # which reloads and retries at once, the same on every path
    cat.create_table(ident, schema=pa.schema([pa.field("writer", pa.int64()), pa.field("seq", pa.int64())]),
                     properties={"commit.retry.num-retries": "0"})
    ctx = mp.get_context("spawn")
    ready, results, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=writer, args=(kind, uri, warehouse, ident, i, seconds, ready, go, results))
             for i in range(writers)]
    for p in procs:
        p.start()
    try:
        for _ in procs:
            ready.get(timeout=120)
        t0 = time.perf_counter()
        go.set()
        got = [results.get(timeout=seconds + 300) for _ in procs]
        elapsed = time.perf_counter() - t0
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
                p.join()
    commits = sum(g[1] for g in got)
    snapshots = len(cat.load_table(ident).snapshots())
    return {"writers": writers, "commits": commits, "retries": sum(g[2] for g in got),
            "errors": sum(g[3] for g in got), "seconds": round(elapsed, 2),
            "commits_per_s": round(commits / elapsed, 2), "snapshots": snapshots,
            "no_lost_commit": snapshots == commits}


class Ours(Serve):
    """`metastore serve` on a fresh SQLite store, with its Thrift port and its REST port."""

    def __init__(self, workdir: Path, workers: int) -> None:
        super().__init__(workdir, workers)
        self.rest_port = free_port()

    def start(self) -> None:
        fresh_dir(self.workdir)
        self.launch(f"sqlite:///{self.workdir / 'metastore.db'}", "--rest-port", str(self.rest_port))
        wait_port(self.rest_port, self.proc, 30, "metastore serve (REST)", self.logfile)


def fmt_ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "n/a"


def markdown(points: dict[str, list[dict[str, Any]]], meta: dict[str, Any]) -> str:
    lines = [
        "# Iceberg commits per second on one table",
        "",
        f"`{meta['command']}` — {meta['started']}, {meta['host']['cpus']} CPUs, {meta['seconds']} s per point, "
        f"ours: `metastore serve --workers {meta['workers']}` on SQLite; "
        f"reference: {meta.get('reference', 'not run')}.",
        "Writers: PyIceberg processes appending one row per commit; retries = commits refused (lost race) and redone.",
        f"Load average (1 min) before / after: {meta['load_before']:.1f} / {meta['load_after']:.1f}: the writers' "
        "own work (Parquet and Avro files) dominates each commit, so figures move with the machine's load; compare "
        "the ratios, taken in one run.",
        "",
        "| writers | lock path, ours (commits/s) | REST path, ours (commits/s) | lock path, reference (commits/s) "
        "| lock ours/ref | REST ours/ref | REST/lock (ours) | retries lock / REST / ref |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    by = {k: {p["writers"]: p for p in v} for k, v in points.items()}
    for w in meta["writer_counts"]:
        v = {k: by.get(k, {}).get(w) for k in PATHS}
        cps = {k: (v[k]["commits_per_s"] if v[k] else None) for k in PATHS}
        lines.append(
            f"| {w} | {cps['lock'] if cps['lock'] is not None else 'n/a'} | "
            f"{cps['rest'] if cps['rest'] is not None else 'n/a'} | "
            f"{cps['reference'] if cps['reference'] is not None else 'n/a'} | "
            f"{fmt_ratio(cps['lock'], cps['reference'])} | {fmt_ratio(cps['rest'], cps['reference'])} | "
            f"{fmt_ratio(cps['rest'], cps['lock'])} | "
            + " / ".join(str(v[k]["retries"]) if v[k] else "-" for k in PATHS) + " |")
    lost = [f"{k} x{p['writers']}" for k, v in points.items() for p in v if not p["no_lost_commit"]]
    lines += ["", "Every point's table ended with exactly one snapshot per counted commit." if not lost else
              f"LOST COMMITS (snapshots != commits): {', '.join(lost)}"]
    if meta.get("failures"):
        lines += ["", "Failures: " + "; ".join(meta["failures"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="measured window per point [10]")
    ap.add_argument("--writers", default="1,4,8", help="writer process counts [1,4,8]")
    ap.add_argument("--workers", type=int, default=2, help="our server processes (serve --workers) [2]")
    ap.add_argument("--no-reference", action="store_true", help="skip the reference Hive metastore")
    ap.add_argument("--reference-port", type=int, default=9484)
    ap.add_argument("--out", default=str(BENCH / "results"), help="output directory [bench/results]")
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.writers.split(",") if x.strip()]
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = ROOT / "bench" / "out" / "iceberg-commits"
    meta: dict[str, Any] = {
        "command": command_line("bench/iceberg_commits.py", argv),
        "started": utc_now(), "seconds": args.seconds,
        "writer_counts": counts, "workers": args.workers,
        "host": host_facts(),
        "failures": [], "load_before": os.getloadavg()[0],
    }
    points: dict[str, list[dict[str, Any]]] = {}

    def run_path(kind: str, uri: str, warehouse: str) -> None:
        ns = f"bench_{uuid.uuid4().hex[:6]}"
        catalog(kind, uri, warehouse).create_namespace(ns)
        for w in counts:
            try:
                r = measure(kind, uri, warehouse, ns, w, args.seconds)
            except Exception as e:  # noqa: BLE001 - reported in the results, the other points still run
                meta["failures"].append(f"{kind} x{w}: {type(e).__name__}: {e}")
                log(f"{LABELS[kind]}, {w} writers FAILED: {type(e).__name__}: {e}")
                continue
            points.setdefault(kind, []).append(r)
            log(f"{LABELS[kind]}, {w} writers: {r['commits_per_s']} commits/s ({r['commits']} commits, "
                f"{r['retries']} retries, snapshots match: {r['no_lost_commit']})")

    ours = Ours(work / "ours", args.workers)
    try:
        log("starting metastore serve")
        ours.start()
        warehouse = "file://" + str(work / "ours" / "warehouse")
        run_path("lock", f"thrift://127.0.0.1:{ours.port}", warehouse)
        run_path("rest", f"http://127.0.0.1:{ours.rest_port}", warehouse)
    finally:
        ours.stop()
    if not args.no_reference:
        ref = Reference(work / "reference-hms", args.reference_port, sys.executable)
        try:
            log("starting the reference metastore")
            ref.start()
            meta["reference"] = ref.describe()
            run_path("reference", f"thrift://127.0.0.1:{ref.port}", "file://" + str(work / "reference-hms" / "wh"))
        except Exception as e:  # noqa: BLE001
            meta["failures"].append(f"reference: {type(e).__name__}: {e}")
            log(f"reference FAILED: {e}")
        finally:
            ref.stop()
    meta["finished"] = utc_now()
    meta["load_after"] = os.getloadavg()[0]
    md = markdown(points, meta)
    publish(out, "iceberg-commits", {"meta": meta, "points": points}, md)
    return 1 if meta["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
