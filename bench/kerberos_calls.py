"""get_table calls per second through a Kerberos (SASL GSSAPI) connection against a plain one (issue 20).

    .venv/bin/python bench/kerberos_calls.py [--clients 1,4] [--window 2] [--windows 3] [--workers 1] [--out DIR]

Starts a real MIT KDC on loopback (tests/kdc.py, a temporary realm), then `metastore serve` on one SQLite store
three times: plain, Kerberos with hadoop.rpc.protection=authentication (Hadoop's default: no security layer
after the handshake) and Kerberos with privacy (every frame encrypted). Each client process opens ONE
connection (the Kerberos handshake once, timed), then calls get_table in a loop; the figure is the sum over the
client processes of calls/s (median of the windows). The client is Apache Thrift's, with the C-accelerated
binary protocol, over TBufferedTransport (what Hive's plain clients use), TFramedTransport (the framing SASL
uses, so the fair baseline) and TSaslClientTransport (pure-sasl and pykerberos, as PyIceberg's HiveCatalog).
Writes bench/results/kerberos.md and .json (or under --out).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, free_port, host_facts, load_average, log, stop_process, utc_now, write_results  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))

REALM = "EXAMPLE.TEST"


def _client(port: int, mode: str) -> tuple[Any, Any, float]:
    from hive_metastore import ThriftHiveMetastore
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    t0 = time.perf_counter()
    sock = TSocket.TSocket("localhost", port)
    sock.setTimeout(60_000)
    if mode == "plain":
        trans: Any = TTransport.TBufferedTransport(sock)
    elif mode == "framed":
        trans = TTransport.TFramedTransport(sock)
    else:
        trans = TTransport.TSaslClientTransport(sock, host="localhost", service="hive", mechanism="GSSAPI")
    trans.open()
    client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(trans))
    client.get_table("kbench", "t")  # the first call completes the connection
    return client, trans, time.perf_counter() - t0


def _worker(port: int, mode: str, warmup_s: float, windows: int, window_s: float, barrier: Any, results: Any,
            idx: int) -> None:
    try:
        c, trans, setup = _client(port, mode)
        total = 1
        end = time.perf_counter() + warmup_s
        while time.perf_counter() < end:
            c.get_table("kbench", "t")
            total += 1
        for w in range(windows):
            barrier.wait(timeout=300)
            n, t0 = 0, time.perf_counter()
            end = t0 + window_s
            while True:
                c.get_table("kbench", "t")
                n += 1
                e = time.perf_counter()
                if e >= end:
                    break
            total += n
            results.put(("ok", idx, w, n / (e - t0), setup))
        trans.close()
        results.put(("done", idx, -1, float(total), 0.0))
    except BaseException as e:  # noqa: BLE001
        results.put(("error", idx, -1, 0.0, f"{type(e).__name__}: {e}"))
        try:
            barrier.abort()
        except Exception:  # noqa: BLE001
            pass


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children still running (a server's workers)."""
    pids, total = [pid], 0.0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                pids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


def measure(port: int, mode: str, clients: int, args: argparse.Namespace, server_pid: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    cpu0 = _cpu_s(server_pid)
    barrier, results = ctx.Barrier(clients), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(port, mode, args.warmup, args.windows, args.window, barrier, results,
                                               i), daemon=True) for i in range(clients)]
    for p in procs:
        p.start()
    per_window: dict[int, float] = {}
    setups: list[float] = []
    calls = 0.0
    for _ in range(clients * (args.windows + 1)):
        kind, idx, w, rate, extra = results.get(timeout=600)
        if kind == "error":
            raise RuntimeError(f"client {idx} ({mode}): {extra}")
        if kind == "done":
            calls += rate
            continue
        per_window[w] = per_window.get(w, 0.0) + rate
        if w == 0:
            setups.append(float(extra))
    for p in procs:
        p.join(30)
    cpu = _cpu_s(server_pid) - cpu0
    rates = [per_window[w] for w in sorted(per_window)]
    return {"calls_per_s": statistics.median(rates), "windows": rates,
            "connect_ms_median": statistics.median(setups) * 1000, "server_cpu_us_per_call": cpu / calls * 1e6}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", default="1,4")
    ap.add_argument("--window", type=float, default=2.0)
    ap.add_argument("--windows", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args(argv)
    from kdc import KDC

    work = Path(tempfile.mkdtemp(prefix="kbench-"))
    (work / "kdc").mkdir()
    kdc = KDC(work / "kdc").start()
    ccache = kdc.kinit("alice")
    os.environ.update(kdc.env(ccache))
    db = f"sqlite:///{work / 'store.db'}"
    servers: dict[str, Any] = {}
    modes = {"plain": {}, "kerberos": {"METASTORE_RPC_PROTECTION": "authentication"},
             "kerberos-privacy": {"METASTORE_RPC_PROTECTION": "privacy"}}
    import subprocess

    try:
        for name, extra in modes.items():
            port = free_port()
            env = dict(os.environ)
            if name != "plain":
                env.update({"METASTORE_SASL": "true", "METASTORE_KERBEROS_PRINCIPAL": f"hive/_HOST@{REALM}",
                            "METASTORE_KERBEROS_KEYTAB": str(kdc.keytab), **extra})
            (work / name).mkdir()
            logf = open(work / name / "serve.log", "ab")
            proc = subprocess.Popen([sys.executable, "-m", "metastore.cli", "serve", "--db", db, "--port", str(port),
                                     "--no-rest", "--workers", str(args.workers), "--data-dir", str(work / "data"),
                                     "--warehouse", str(work / "warehouse")], env=env, stdout=logf,
                                    stderr=subprocess.STDOUT, cwd=work / name)
            from metastore.procs import wait_listening

            wait_listening(port, proc, 60, name, lambda: "")
            servers[name] = (proc, port)
        from hive_metastore.ttypes import Database, FieldSchema, SerDeInfo, StorageDescriptor, Table

        c, trans, _ = None, None, 0.0
        from hive_metastore import ThriftHiveMetastore
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport

        sock = TSocket.TSocket("localhost", servers["plain"][1])
        trans = TTransport.TBufferedTransport(sock)
        trans.open()
        c = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(trans))
        c.create_database(Database(name="kbench", description="kerberos bench"))
        cols = [FieldSchema(name=f"c{i}", type="string") for i in range(20)]
        c.create_table(Table(tableName="t", dbName="kbench", owner="alice", tableType="MANAGED_TABLE",
                             partitionKeys=[], parameters={},
                             sd=StorageDescriptor(cols=cols, inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                                                  outputFormat="org.apache.hadoop.hive.ql.io."
                                                               "HiveIgnoreKeyTextOutputFormat",
                                                  serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive."
                                                                      "serde2.lazy.LazySimpleSerDe"))))
        trans.close()
        # rounds: each configuration measured once per round, in turn, so that a change of the host's load
        # (a shared machine) falls on all of them alike; each figure is the median over the rounds
        runs: dict[str, list[dict[str, Any]]] = {}
        for r in range(args.rounds):
            for n in [int(x) for x in args.clients.split(",")]:
                for name, transport in (("plain", "plain"), ("plain", "framed"), ("kerberos", "sasl"),
                                        ("kerberos-privacy", "sasl")):
                    key = f"{name}/{transport}/{n}"
                    got = measure(servers[name][1], transport, n, args, servers[name][0].pid)
                    runs.setdefault(key, []).append(got)
                    log(f"round {r + 1} {key}: {got['calls_per_s']:,.0f} calls/s, connect "
                        f"{got['connect_ms_median']:.2f} ms, server CPU {got['server_cpu_us_per_call']:.0f} us/call")
        results: dict[str, dict[str, Any]] = {
            key: {"calls_per_s": statistics.median(g["calls_per_s"] for g in got),
                  "connect_ms_median": statistics.median(g["connect_ms_median"] for g in got),
                  "server_cpu_us_per_call": statistics.median(g["server_cpu_us_per_call"] for g in got),
                  "rounds": [g["calls_per_s"] for g in got]} for key, got in runs.items()}
        # the ratio of each round (same load), then their median
        for key, r in results.items():
            n = key.rsplit("/", 1)[1]
            r["ratio_plain_median"] = statistics.median(
                a / b for a, b in zip(r["rounds"], results[f"plain/plain/{n}"]["rounds"]))
    finally:
        for proc, _ in servers.values():
            stop_process(proc)
        kdc.stop()
    lines = ["# get_table with Kerberos (SASL GSSAPI) against plain connections", "",
             f"{utc_now()}, {host_facts()['cpus']} CPUs, Python {host_facts()['python']}; "
             f"`python bench/kerberos_calls.py {' '.join(argv or sys.argv[1:])}`; one SQLite "
             f"store, `--workers {args.workers}`, one connection per client process (the Kerberos handshake once); "
             f"{args.rounds} rounds, each configuration in turn, {args.windows} window(s) of {args.window:g} s each; "
             f"medians over the rounds; load average at the end {load_average()} (a shared host).", "",
             "| clients | server | client transport | get_table calls/s | server CPU per call (µs) | "
             "connect + first call (ms) | "
             "vs plain framed | vs plain buffered (median of the rounds' ratios) |",
             "|---:|---|---|---:|---:|---:|---:|---:|"]
    for key, r in results.items():
        name, transport, n = key.split("/")
        framed = results[f"plain/framed/{n}"]["calls_per_s"]
        lines.append(f"| {n} | {name} | {transport} | {r['calls_per_s']:,.0f} | {r['server_cpu_us_per_call']:.0f} | "
                     f"{r['connect_ms_median']:.2f} | "
                     f"{r['calls_per_s'] / framed:.2f} | {r['ratio_plain_median']:.2f} |")
    md = "\n".join(lines) + "\n"
    print(md)
    write_results(Path(args.out), "kerberos.json", {"results": results, "args": vars(args)}, "kerberos.md", md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
