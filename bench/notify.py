#!/usr/bin/env python
"""The notification benchmark: events published per second end to end, and the latency from commit to delivery,
on ActiveMQ (STOMP) and RabbitMQ (AMQP).

    python bench/notify.py                      # both brokers (starts ActiveMQ with scripts/activemq.sh)
    python bench/notify.py --brokers activemq --events 5000 --latency-seconds 5

For each broker, on a fresh SQLite store:

  drain       N events (10,000) already in the log; `metastore relay` starts; a subscriber process receives
              them all. events/s = N / (last delivery - first delivery) (and the time from the relay's start,
              process start-up included). The relay's own work included: reading the log, building HCatalog's
              messages, publishing in confirmed batches; the subscriber's too (durable subscription,
              acknowledgements, duplicate check).
  latency     `metastore serve --bus URL` (the relay inside the server, its defaults: poll 0.1 s plus a wake-up
              on commits of this process); one Thrift client creates databases at a steady rate; per event,
              delivery time at the subscriber minus the time the create_database call returned (the commit
              happened just before the reply): p50, p99, max.
  loaded      the same with 4 client threads creating databases as fast as the server takes them: events/s
              committed and delivered, and the latency under that load.

The subscriber is a separate process (metastore.notify.subscribe, not durable) that writes
`event_id receive_time db` lines; every event must arrive (the benchmark checks it). Results go to
<out>/notify.json and <out>/notify.md (default out: bench/out).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from common import ROOT, Serve, stop_process, write_results

sys.path.insert(0, str(ROOT / "src"))

from metastore.procs import port_open  # noqa: E402

BROKERS = {"activemq": "activemq://127.0.0.1:61613", "rabbitmq": "amqp://guest:guest@127.0.0.1:5672/%2F"}


# ---- the subscriber process ------------------------------------------------------------------------------

def subscriber_main(bus: str, name: str, out: str, expect: int) -> None:
    from metastore.notify import subscribe

    f = open(out, "w", buffering=1)
    seen = 0
    done = threading.Event()

    def handler(m: Any) -> None:
        nonlocal seen
        now = time.time()
        f.write(f"{m.event_id} {now:.6f} {m.fields().get('db', '')}\n")
        seen += 1
        if seen >= expect:
            done.set()

    # not durable: it subscribes before any event is published, and leaves nothing behind on the broker
    sub = subscribe(["hcat", "hcat.#"], handler, bus=bus)
    sub.ready.wait(30)
    print("READY", flush=True)
    done.wait(600)
    sub.stop()
    sub.join(30)
    f.close()


class Subscriber:
    def __init__(self, bus: str, out: Path, expect: int) -> None:
        self.out = out
        self.proc = subprocess.Popen([sys.executable, __file__, "--subscriber", bus, f"bench-{uuid.uuid4().hex[:8]}",
                                      str(out), str(expect)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.strip() != "READY":
            raise RuntimeError(f"subscriber did not start: {line}")

    def lines(self) -> list[tuple[int, float, str]]:
        out = []
        for ln in self.out.read_text().splitlines():
            parts = ln.split(" ")
            if len(parts) == 3:
                out.append((int(parts[0]), float(parts[1]), parts[2]))
        return out

    def wait(self, n: int, timeout: float) -> list[tuple[int, float, str]]:
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = self.lines() if self.out.exists() else []
            if len(got) >= n:
                return got
            time.sleep(0.05)
        return self.lines() if self.out.exists() else []

    def close(self) -> None:
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# ---- the measurements -----------------------------------------------------------------------------------

def _catalog(tmp: Path) -> Any:
    from metastore import config
    from metastore.app import build_catalog

    return build_catalog(config.load(None, env={}, data_dir=str(tmp / "data"), db=f"sqlite:///{tmp / 'ms.db'}",
                                     warehouse=str(tmp / "wh")))


def backlog(cat: Any, n: int) -> None:
    """n CREATE_DATABASE events in the log, written 100 per store transaction with the catalog's messages."""
    from metastore.core import model as m

    for i in range(0, n, 100):
        with cat.store.write() as tx:
            for j in range(i, min(n, i + 100)):
                db = m.Database(name=f"b{j}", locationUri=cat.wh.database_location(f"b{j}"),
                                createTime=int(time.time()))
                tx.add_event("CREATE_DATABASE", db.name, None, cat.msg.create_database(db), cat.msg.format,
                             int(time.time()))


def drain(bus: str, n: int, tmp: Path) -> dict[str, Any]:
    cat = _catalog(tmp)
    backlog(cat, n)
    sub = Subscriber(bus, tmp / "drain.txt", n)
    log = open(tmp / "relay.log", "w")
    t0 = time.time()
    relay = subprocess.Popen([sys.executable, "-m", "metastore.cli", "relay", "--db", f"sqlite:///{tmp / 'ms.db'}",
                              "--bus", bus, "--from", "0"], stdout=log, stderr=subprocess.STDOUT)
    try:
        got = sub.wait(n, 600)
    finally:
        stop_process(relay, 30)
        sub.close()
    ids = {g[0] for g in got}
    assert ids == set(range(1, n + 1)), f"{len(ids)} of {n} events delivered"
    t_first, t_last = min(g[1] for g in got), max(g[1] for g in got)
    return {"events": n, "seconds": round(t_last - t_first, 3), "events_per_s": round((n - 1) / (t_last - t_first)),
            "with_relay_start_s": round(t_last - t0, 3)}


def _pcts(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=100, method="inclusive")
    return {"p50_ms": round(q[49] * 1000, 2), "p99_ms": round(q[98] * 1000, 2), "max_ms": round(xs[-1] * 1000, 2),
            "n": len(xs)}


def latency(bus: str, tmp: Path, seconds: float, rate: float, clients: int) -> dict[str, Any]:
    from hive_metastore import ThriftHiveMetastore
    from hive_metastore.ttypes import Database
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    srv = Serve(tmp, warehouse=tmp / "wh2", data_dir=tmp / "d2")
    port = srv.port
    try:
        srv.launch(f"sqlite:///{tmp / f'lat{clients}.db'}", "--bus", bus, timeout=60)
        returned: dict[str, float] = {}
        lock = threading.Lock()

        def client(k: int, stop_at: float, interval: float | None, sub_holder: list) -> None:  # type: ignore[type-arg]
            sock = TSocket.TSocket("127.0.0.1", port)
            tr = TTransport.TBufferedTransport(sock)
            tr.open()
            c = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(tr))
            i = 0
            nxt = time.time()
            while time.time() < stop_at:
                name = f"l{k}_{i}"
                c.create_database(Database(name=name, description=None, locationUri=None, parameters={}))
                with lock:
                    returned[name] = time.time()
                i += 1
                if interval:
                    nxt += interval
                    time.sleep(max(0.0, nxt - time.time()))
            tr.close()

        # warm-up: the relay has the cursor, the broker has the subscription
        expect_max = 10 ** 7
        sub = Subscriber(bus, tmp / f"lat-{clients}.txt", expect_max)
        time.sleep(1.0)
        stop_at = time.time() + seconds
        threads = [threading.Thread(target=client, args=(k, stop_at, (1.0 / rate) if clients == 1 else None, []))
                   for k in range(clients)]
        t0 = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        t_end = time.time()
        n = len(returned)
        got = sub.wait(n, 120)
        sub.proc.kill()
        by_db = {db: t for _, t, db in got}
        missing = [d for d in returned if d not in by_db]
        assert not missing, f"{len(missing)} events not delivered"
        lat = [by_db[d] - returned[d] for d in returned]
        t_last = max(by_db[d] for d in returned)
        res = {"clients": clients, "events": n, "committed_per_s": round(n / (t_end - t0)),
               "delivered_per_s": round(n / (t_last - t0)), **_pcts(lat)}
        return res
    finally:
        srv.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--brokers", default="activemq,rabbitmq")
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--latency-seconds", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=50.0, help="events/s of the steady latency run")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out"))
    ap.add_argument("--subscriber", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.subscriber:
        subscriber_main(a.subscriber[0], a.subscriber[1], a.subscriber[2], int(a.subscriber[3]))
        return

    results: dict[str, Any] = {"machine": f"{platform.node()} {os.cpu_count()} cpus, {platform.python_version()}",
                               "when": time.strftime("%Y-%m-%d %H:%M:%S"), "brokers": {}}
    started_activemq = False
    try:
        for b in a.brokers.split(","):
            url = BROKERS[b]
            if b == "activemq" and not port_open(61613):
                subprocess.run(["bash", str(ROOT / "scripts" / "activemq.sh"), "start"], check=True)
                started_activemq = True
            if b == "rabbitmq" and not port_open(5672):
                print("RabbitMQ is not running on 5672: skipped", file=sys.stderr)
                continue
            tmp = Path(tempfile.mkdtemp(prefix=f"notify-bench-{b}-"))
            try:
                r: dict[str, Any] = {"url": url}
                print(f"{b}: drain of {a.events} events ...", file=sys.stderr, flush=True)
                r["drain"] = drain(url, a.events, tmp)
                print(f"  {r['drain']}", file=sys.stderr)
                print(f"{b}: latency at {a.rate} events/s for {a.latency_seconds}s ...", file=sys.stderr, flush=True)
                r["latency"] = latency(url, tmp, a.latency_seconds, a.rate, 1)
                print(f"  {r['latency']}", file=sys.stderr)
                print(f"{b}: latency under load (4 clients) ...", file=sys.stderr, flush=True)
                r["loaded"] = latency(url, tmp, a.latency_seconds, a.rate, 4)
                print(f"  {r['loaded']}", file=sys.stderr)
                results["brokers"][b] = r
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if started_activemq:
            subprocess.run(["bash", str(ROOT / "scripts" / "activemq.sh"), "stop"])
    md = [f"# Notification benchmark ({results['when']}, {results['machine']})", "",
          "| broker | drain events/s | steady: events | p50 ms | p99 ms | max ms "
          "| 4 clients: committed/s | delivered/s | p50 ms | p99 ms |", "|---|---|---|---|---|---|---|---|---|---|"]
    for b, r in results["brokers"].items():
        d, lat, x = r["drain"], r["latency"], r["loaded"]
        md.append(f"| {b} | {d['events_per_s']} | {lat['events']} | {lat['p50_ms']} | {lat['p99_ms']} "
                  f"| {lat['max_ms']} "
                  f"| {x['committed_per_s']} | {x['delivered_per_s']} | {x['p50_ms']} | {x['p99_ms']} |")
    write_results(Path(a.out), "notify.json", results, "notify.md", "\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
