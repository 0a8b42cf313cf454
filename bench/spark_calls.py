#!/usr/bin/env python
"""The Spark workload's metastore calls, timed on the wire, against `metastore serve` and the reference.

    python bench/spark_calls.py                  # ours (SQLite, --workers 2) then the reference: several minutes
    python bench/spark_calls.py --no-reference   # ours only
    python bench/spark_calls.py --out DIR        # results elsewhere [bench/results]

The workload is the core issue's acceptance workload, tests/spark_workload.py, unchanged: its `write` phase in
one Spark process (local[2]), then its `read` phase in a second one, as tests/test_spark.py runs it. Spark's
metastore URI points at a timing TCP proxy in this process, which forwards bytes both ways (a thread per
direction of each connection) and cuts the byte stream into calls: Spark's Hive client is synchronous, so a call
is a request followed by its reply, timed from the request's first byte to the reply's last byte as the proxy
sees them. The method is read from the binary protocol's message header (strict or old-style).

Reported per target: the number of metastore calls and their total time, per method for the top methods, and
the workload's wall time, both for whole Spark processes (session startup included) and for the workload's
statements alone (from the end of SparkSession startup to the last statement). Both metastores are up
for the whole run and the four Spark processes run one at a time in the order write-ours, write-reference,
read-reference, read-ours, so that the shared machine's changing load weighs on both alike. Results:
<out>/spark-calls.md and <out>/spark-calls.json. Work files (server stores, warehouses, Spark logs, each
statement's results) go to bench/out/spark-calls (git-ignored).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import (
    BENCH,
    ROOT,
    Reference,
    Serve,
    command_line,
    fresh_dir,
    host_facts,
    load_average,
    log,
    publish,
    utc_now,
)

WORKLOAD = ROOT / "tests" / "spark_workload.py"
PHASES = ("write", "read")
TOP_METHODS = 15
PROCESS_TIMEOUT_S = 1800


# ------------------------------------------------------------------------------------ the timing proxy

def method_name(head: bytes) -> str | None:
    """The method of a binary-protocol message, from its first bytes; None while too few bytes have arrived."""
    if len(head) < 8:
        return None
    first = struct.unpack(">i", head[:4])[0]
    if first < 0:  # strict: version | message type, then the name's length and the name
        n = struct.unpack(">i", head[4:8])[0]
        start = 8
    else:  # old style: the name's length first
        n, start = first, 4
    if not 0 < n < 512:
        return "?"
    if len(head) < start + n:
        return None
    return head[start:start + n].decode("utf-8", "replace")


@dataclass
class Call:
    method: str
    start: float  # perf_counter, request's first byte
    end: float    # perf_counter, reply's last byte
    conn: int


@dataclass
class _Conn:
    """The state of one proxied connection: whether a request or its reply is on the wire."""
    ident: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    state: str = "idle"  # idle -> request -> reply -> (next request) request ...
    head: bytes = b""
    method: str | None = None
    start: float = 0.0
    last_reply: float = 0.0


class TimingProxy:
    """Forwards 127.0.0.1:<port> to a Thrift server and records every call made over it."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.calls: list[Call] = []
        self.unanswered: list[str] = []  # methods of requests with no reply: oneway calls (fb303 shutdown)
        self.connections = 0
        self._lock = threading.Lock()
        self._closed = False
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self.connections += 1
                conn = _Conn(self.connections)
                self._socks += [client, server]
            threading.Thread(target=self._pump, args=(client, server, conn, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, conn, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, conn: _Conn, requests: bool) -> None:
        try:
            while True:
                chunk = src.recv(1 << 16)
                now = time.perf_counter()
                if not chunk:
                    break
                # the state changes before the bytes go on, so a reply can never overtake its request's record
                (self._on_request if requests else self._on_reply)(conn, chunk, now)
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            self._finish(conn)
            for s in (dst, src):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _on_request(self, conn: _Conn, chunk: bytes, now: float) -> None:
        with conn.lock:
            if conn.state == "reply":
                self._record(conn)
            if conn.state != "request":
                conn.state, conn.start, conn.head, conn.method = "request", now, b"", None
            if conn.method is None:
                conn.head = (conn.head + chunk)[:1024]
                conn.method = method_name(conn.head)

    def _on_reply(self, conn: _Conn, chunk: bytes, now: float) -> None:
        with conn.lock:
            if conn.state in ("request", "reply"):
                conn.state, conn.last_reply = "reply", now

    def _record(self, conn: _Conn) -> None:
        with self._lock:
            self.calls.append(Call(conn.method or "?", conn.start, conn.last_reply, conn.ident))
        conn.state = "idle"

    def _finish(self, conn: _Conn) -> None:
        with conn.lock:
            if conn.state == "reply":
                self._record(conn)
            elif conn.state == "request":
                with self._lock:
                    self.unanswered.append(conn.method or "?")
                conn.state = "idle"

    def close(self) -> None:
        self._closed = True
        self.listener.close()
        with self._lock:
            socks = list(self._socks)
        for s in socks:
            try:
                s.close()
            except OSError:
                pass

    def snapshot(self) -> list[Call]:
        with self._lock:
            return list(self.calls)


# -------------------------------------------------------------------------------------------- the servers

class Ours(Serve):
    """`metastore serve` on a fresh SQLite store and data directory (no REST port: only Thrift is measured)."""

    def describe(self) -> str:
        return f"metastore serve --workers {self.workers}, SQLite, fresh data directory"

    def start(self) -> None:
        fresh_dir(self.workdir)
        self.launch(f"sqlite:///{self.workdir / 'metastore.db'}", "--no-rest")


# --------------------------------------------------------------------------------------- the Spark side

def driver(phase: str, uri: str, warehouse: str, steps_out: str, timing_out: str) -> int:
    """Inside the Spark process: tests/spark_workload.py's own main(), with its phase timed."""
    sys.path.insert(0, str(WORKLOAD.parent))
    wl = importlib.import_module("spark_workload")
    marks: dict[str, float] = {"imported": time.time()}
    name = f"{phase}_phase"
    original = getattr(wl, name)

    def timed(r: Any) -> None:
        marks["statements_start"] = time.time()
        try:
            original(r)
        finally:
            marks["statements_end"] = time.time()

    setattr(wl, name, timed)  # main() looks the phase up by name when it runs it
    sys.argv = [str(WORKLOAD), "--phase", phase, "--warehouse", warehouse, "--out", steps_out, "--uri", uri]
    try:
        status = wl.main()
    finally:
        marks["stopped"] = time.time()
        Path(timing_out).write_text(json.dumps(marks))
    return status


def run_phase(phase: str, uri: str, warehouse: Path, workdir: Path) -> dict[str, Any]:
    """One Spark process running one phase of the workload; its times (epoch seconds) and its steps."""
    steps_out, timing_out, logfile = (workdir / f"{phase}.json", workdir / f"{phase}.timing.json",
                                      workdir / f"{phase}.log")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--driver", phase, "--uri", uri,
           "--warehouse", str(warehouse), "--steps", str(steps_out), "--timing", str(timing_out)]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    launched = time.time()
    with open(logfile, "wb") as f:
        proc = subprocess.run(cmd, cwd=workdir, stdout=f, stderr=subprocess.STDOUT, env=env,
                              timeout=PROCESS_TIMEOUT_S)
    ended = time.time()
    if not timing_out.exists() or not steps_out.exists():
        raise RuntimeError(f"the Spark workload ({phase}) wrote no results, exit {proc.returncode}:\n"
                           f"{logfile.read_text(errors='replace')[-3000:]}")
    marks = json.loads(timing_out.read_text())
    steps = json.loads(steps_out.read_text())
    crashed = [s for s in steps if s["step"] == "workload crashed"]
    if crashed or proc.returncode != 0 or "statements_end" not in marks:
        raise RuntimeError(f"the Spark workload ({phase}) crashed, exit {proc.returncode}:\n"
                           f"{crashed[0]['error'] if crashed else logfile.read_text(errors='replace')[-3000:]}")
    return {"launched": launched, "ended": ended, **marks, "steps": len(steps),
            "failed_steps": sorted(s["step"] for s in steps if "error" in s)}


def method_table(calls: list[Call]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for c in calls:
        m = out.setdefault(c.method, {"calls": 0, "total_s": 0.0})
        m["calls"] += 1
        m["total_s"] += c.end - c.start
    for m in out.values():
        m["total_s"] = round(m["total_s"], 4)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["total_s"]))


def measure_phase(name: str, phase: str, proxy: TimingProxy, warehouse: Path, workdir: Path) -> dict[str, Any]:
    """One phase (one Spark process) against one target, through its proxy."""
    log(f"{name}: Spark, {phase} phase")
    # perf_counter (the proxy's clock) to epoch (the Spark processes' clock), to place calls in the phase
    offset = time.time() - time.perf_counter()
    before = len(proxy.snapshot())
    p = run_phase(phase, f"thrift://127.0.0.1:{proxy.port}", warehouse, workdir)
    time.sleep(0.2)  # let the proxy see the connections close
    calls = proxy.snapshot()[before:]
    in_statements = [c for c in calls if p["statements_start"] <= c.start + offset <= p["statements_end"]]
    ph = {
        "process_wall_s": round(p["ended"] - p["launched"], 3),
        "session_startup_s": round(p["statements_start"] - p["launched"], 3),
        "statements_wall_s": round(p["statements_end"] - p["statements_start"], 3),
        "calls": len(calls),
        "calls_total_s": round(sum(c.end - c.start for c in calls), 4),
        "calls_outside_statements": len(calls) - len(in_statements),
        "connections": len({c.conn for c in calls}),
        "steps": p["steps"], "failed_steps": p["failed_steps"],
        "load_average_after": load_average(),
        "methods": method_table(calls),
    }
    log(f"{name}: {phase}: {ph['calls']} calls, {ph['calls_total_s']:.2f} s in calls, "
        f"process {ph['process_wall_s']:.1f} s (statements {ph['statements_wall_s']:.1f} s), "
        f"load {ph['load_average_after']}")
    return ph


def summarize(target: Any, proxy: TimingProxy | None, phases: dict[str, Any]) -> dict[str, Any]:
    methods: dict[str, dict[str, float]] = {}
    for ph in phases.values():
        for k, v in ph["methods"].items():
            m = methods.setdefault(k, {"calls": 0, "total_s": 0.0})
            m["calls"] += v["calls"]
            m["total_s"] = round(m["total_s"] + v["total_s"], 4)
    total = {k: round(sum(ph[k] for ph in phases.values()), 3)
             for k in ("calls", "calls_total_s", "process_wall_s", "session_startup_s", "statements_wall_s")}
    return {
        "server": target.describe(), **total,
        # the time of the statements not spent waiting for the metastore: Spark's own work (and the load)
        "statements_minus_calls_s": round(total["statements_wall_s"] - total["calls_total_s"], 2),
        "unanswered_requests": sorted(proxy.unanswered) if proxy else [],
        "methods": dict(sorted(methods.items(), key=lambda kv: -kv[1]["total_s"])),
        "phases": phases,
    }


def run_all(targets: list[tuple[str, Any]], work: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Both metastores up at once, the phases interleaved A B B A (write: ours then the reference; read: the
    reference then ours), so that a change of the machine's load during the run weighs on both alike."""
    proxies: dict[str, TimingProxy] = {}
    phases: dict[str, dict[str, Any]] = {name: {} for name, _ in targets}
    failed: set[str] = set()
    try:
        for name, target in targets:
            log(f"{name}: starting the metastore")
            try:
                target.start()
            except Exception as e:  # noqa: BLE001 - reported; the other target still runs
                meta["failures"].append(f"{name}: start: {type(e).__name__}: {str(e)[:2000]}")
                log(f"{name}: did not start: {e}")
                failed.add(name)
                continue
            proxies[name] = TimingProxy(target.port)
            spark_dir = work / f"spark-{name}"
            fresh_dir(spark_dir)
        for i, phase in enumerate(PHASES):
            order = targets if i % 2 == 0 else list(reversed(targets))
            for name, target in order:
                if name in failed:
                    continue
                try:
                    phases[name][phase] = measure_phase(name, phase, proxies[name], target.warehouse,
                                                        work / f"spark-{name}")
                except Exception as e:  # noqa: BLE001
                    meta["failures"].append(f"{name}: {phase}: {type(e).__name__}: {str(e)[:2000]}")
                    log(f"{name}: {phase} FAILED: {type(e).__name__}: {e}")
                    failed.add(name)
    finally:
        for p in proxies.values():
            p.close()
        for _, target in targets:
            target.stop()
    return {name: summarize(target, proxies.get(name), phases[name]) for name, target in targets
            if name not in failed and len(phases[name]) == len(PHASES)}


# ------------------------------------------------------------------------------------------------ report

def ratio(ours: float | None, ref: float | None) -> str:
    return f"{ref / ours:.2f}" if ours and ref else "n/a"


def markdown(res: dict[str, Any], meta: dict[str, Any]) -> str:
    o, r = res.get("ours"), res.get("reference")

    def val(d: dict[str, Any] | None, key: str, f: str) -> str:
        return format(d[key], f) if d else "n/a"

    lines = [
        "# Spark workload: its metastore calls, ours vs the reference",
        "",
        f"`{meta['command']}` — {meta['started']}; host: {meta['host']['cpus']} CPUs, load average "
        f"{meta['load_before']} before the run, {meta.get('load_after', 'n/a')} after (a shared machine).",
        f"Ours: {o['server'] if o else 'n/a'}. Reference: {r['server'] if r else 'not run (--no-reference)'}.",
        "Workload: tests/spark_workload.py, `write` then `read` phase, each its own Spark process (local[2], "
        "Spark's built-in Hive 2.3.10 client). Calls are timed by a TCP proxy between Spark and the metastore, "
        "from the request's first byte to the reply's last byte. Both metastores run side by side; the Spark "
        "processes run one at a time, interleaved: write ours, write reference, read reference, read ours. "
        "Load average after each process: " + "; ".join(
            f"{name}: " + ", ".join(f"{phase} {d['phases'][phase]['load_average_after']}" for phase in PHASES)
            for name, d in (("ours", o), ("reference", r)) if d) + ".",
        "",
        "| measure | ours | reference | reference / ours |",
        "|---|---:|---:|---:|",
        f"| metastore calls | {val(o, 'calls', ',')} | {val(r, 'calls', ',')} | "
        f"{ratio(o and o['calls'], r and r['calls'])} |",
        f"| total time of metastore calls (s) | {val(o, 'calls_total_s', '.2f')} | {val(r, 'calls_total_s', '.2f')} "
        f"| **{ratio(o and o['calls_total_s'], r and r['calls_total_s'])}** |",
        f"| mean time per call (ms) | {fmt_mean(o)} | {fmt_mean(r)} | "
        f"{ratio(o and o['calls_total_s'] / max(o['calls'], 1), r and r['calls_total_s'] / max(r['calls'], 1))} |",
        f"| wall time, Spark processes incl. session startup (s) | {val(o, 'process_wall_s', '.1f')} | "
        f"{val(r, 'process_wall_s', '.1f')} | {ratio(o and o['process_wall_s'], r and r['process_wall_s'])} |",
        f"| wall time, statements only (excl. session startup) (s) | {val(o, 'statements_wall_s', '.1f')} | "
        f"{val(r, 'statements_wall_s', '.1f')} | {ratio(o and o['statements_wall_s'], r and r['statements_wall_s'])} |",
        f"| statements wall minus time in metastore calls: Spark's own work (s) | "
        f"{val(o, 'statements_minus_calls_s', '.1f')} | {val(r, 'statements_minus_calls_s', '.1f')} | "
        f"{ratio(o and o['statements_minus_calls_s'], r and r['statements_minus_calls_s'])} |",
        f"| session startup (s) | {val(o, 'session_startup_s', '.1f')} | {val(r, 'session_startup_s', '.1f')} | "
        f"{ratio(o and o['session_startup_s'], r and r['session_startup_s'])} |",
    ]
    for phase in PHASES:
        po = o["phases"].get(phase) if o else None
        pr = r["phases"].get(phase) if r else None
        lines.append(
            f"| {phase} phase: calls / time in calls (s) / statements wall (s) | "
            + (f"{po['calls']} / {po['calls_total_s']:.2f} / {po['statements_wall_s']:.1f}" if po else "n/a") + " | "
            + (f"{pr['calls']} / {pr['calls_total_s']:.2f} / {pr['statements_wall_s']:.1f}" if pr else "n/a") + " | "
            + (f"{ratio(po['calls_total_s'], pr['calls_total_s'])} (calls)" if po and pr else "n/a") + " |")
    lines += ["", f"## Top {TOP_METHODS} methods by total time", "",
              "| method | calls ours | calls ref | total ours (s) | total ref (s) | ref / ours |",
              "|---|---:|---:|---:|---:|---:|"]
    om, rm = (o or {}).get("methods", {}), (r or {}).get("methods", {})
    names = sorted(set(om) | set(rm), key=lambda m: -max(om.get(m, {}).get("total_s", 0),
                                                         rm.get(m, {}).get("total_s", 0)))
    for m in names[:TOP_METHODS]:
        a, b = om.get(m), rm.get(m)
        lines.append(f"| {m} | {a['calls'] if a else 0} | {b['calls'] if b else 0} | "
                     f"{a['total_s'] if a else 0:.3f} | {b['total_s'] if b else 0:.3f} | "
                     f"{ratio(a and a['total_s'], b and b['total_s'])} |")
    notes = []
    if o and r:
        fo = {p: o["phases"][p]["failed_steps"] for p in PHASES}
        fr = {p: r["phases"][p]["failed_steps"] for p in PHASES}
        notes.append("Both ran the same statements with the same failing steps (the workload's deliberate "
                     "errors)." if fo == fr else f"FAILING STEPS DIFFER: ours {fo}, reference {fr}.")
    for name, d in (("ours", o), ("reference", r)):
        if d and d["unanswered_requests"]:
            notes.append(f"{name}: requests with no reply (oneway, not counted as calls): "
                         f"{', '.join(d['unanswered_requests'])}.")
    if meta.get("failures"):
        notes.append("Failures: " + "; ".join(meta["failures"]))
    if notes:
        lines += [""] + notes
    return "\n".join(lines) + "\n"


def fmt_mean(d: dict[str, Any] | None) -> str:
    return f"{1000 * d['calls_total_s'] / d['calls']:.2f}" if d and d["calls"] else "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-reference", action="store_true", help="skip the reference Hive metastore")
    ap.add_argument("--out", default=str(BENCH / "results"), help="output directory [bench/results]")
    ap.add_argument("--workers", type=int, default=2, help="our server processes (serve --workers) [2]")
    ap.add_argument("--reference-port", type=int, default=9485)
    # the Spark side of the benchmark runs this same file in its own process
    ap.add_argument("--driver", choices=PHASES, help=argparse.SUPPRESS)
    ap.add_argument("--uri", help=argparse.SUPPRESS)
    ap.add_argument("--warehouse", help=argparse.SUPPRESS)
    ap.add_argument("--steps", help=argparse.SUPPRESS)
    ap.add_argument("--timing", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.driver:
        return driver(args.driver, args.uri, args.warehouse, args.steps, args.timing)

    if shutil.which("java") is None:
        print("Spark and the reference need Java", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = ROOT / "bench" / "out" / "spark-calls"
    meta: dict[str, Any] = {
        "command": command_line("bench/spark_calls.py", argv, python=".venv/bin/python"),
        "started": utc_now(),
        "host": host_facts(),
        "load_before": load_average(), "workers": args.workers, "spark_master": "local[2]", "failures": [],
    }
    targets: list[tuple[str, Any]] = [("ours", Ours(work / "ours", args.workers))]
    if not args.no_reference:
        targets.append(("reference", Reference(work / "reference-hms", args.reference_port)))
    results = run_all(targets, work, meta)
    meta["load_after"] = load_average()
    meta["finished"] = utc_now()
    o, r = results.get("ours"), results.get("reference")
    if o and r:
        meta["ratios"] = {
            "calls_total_time_ref_over_ours": round(r["calls_total_s"] / o["calls_total_s"], 2),
            "process_wall_ref_over_ours": round(r["process_wall_s"] / o["process_wall_s"], 3),
            "statements_wall_ref_over_ours": round(r["statements_wall_s"] / o["statements_wall_s"], 3),
        }
    md = markdown(results, meta)
    publish(out, "spark-calls", {"meta": meta, "results": results}, md)
    return 1 if meta["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
