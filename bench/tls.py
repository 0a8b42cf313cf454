"""get_table calls per second over TLS against the same server in the clear (issue 20, acceptance 6).

Two `metastore serve` processes on fresh SQLite stores, with bench/run.py's settings (--workers as run.py's), one
plain and one with hive.metastore.use.SSL (a PKCS12 keystore of a P-256 certificate made here); the client is
bench/run.py's (Apache Thrift, accelerated binary protocol), on TSSLSocket for TLS. Each connection makes its
handshake once, before measuring, as Spark's and PyIceberg's clients keep theirs. Measured: 1 client (calls/s,
median of the windows, and p50 latency) and N client processes (sum of their calls/s), each window alternating
between the two servers so that a noisy neighbour hits both; the ratio TLS/plain is the figure.

    .venv/bin/python bench/tls.py [--quick] [--out bench/out/tls]      # results: tls.json, tls.md
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # noqa: E402 - bench/run.py: its parameters, client settings and table

from common import ROOT, Serve, command_line, fresh_dir, host_facts, log, publish, utc_now  # noqa: E402

PASSWORD = "bench-keystore"


def make_keystore(d: Path) -> tuple[Path, Path]:
    """(PKCS12 keystore, CA file) of a self-signed certificate for 127.0.0.1."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    keystore, ca = d / "server.p12", d / "server.pem"
    keystore.write_bytes(pkcs12.serialize_key_and_certificates(
        b"server", key, cert, None, serialization.BestAvailableEncryption(PASSWORD.encode())))
    ca.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return keystore, ca


class Client(run.Client):
    """bench/run.py's client; over TLS (trusting `cafile`) when one is given."""

    def __init__(self, port: int, cafile: str | None = None) -> None:
        if cafile is None:
            super().__init__(port)
            return
        import ssl

        from hive_metastore import ThriftHiveMetastore
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSSLSocket, TTransport

        sock = TSSLSocket.TSSLSocket("127.0.0.1", port, ssl_context=ssl.create_default_context(cafile=cafile))
        sock.setTimeout(run.CALL_TIMEOUT_MS)
        self.transport = TTransport.TBufferedTransport(sock)
        self.transport.open()
        protocol = (TBinaryProtocol.TBinaryProtocolAccelerated if run.CLIENT_PROTOCOL == "accelerated"
                    else TBinaryProtocol.TBinaryProtocol)
        self.api = ThriftHiveMetastore.Client(protocol(self.transport))


def _window(c: Client, seconds: float, lat: list[float] | None = None) -> float:
    """calls/s of get_table for `seconds`."""
    n, t0 = 0, time.perf_counter()
    end = t0 + seconds
    while True:
        s = time.perf_counter()
        c.get_table("bench", "t_get")
        e = time.perf_counter()
        if lat is not None:
            lat.append(e - s)
        n += 1
        if e >= end:
            return n / (e - t0)


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a server's processes, workers included."""
    total = 0.0
    for p in run._tree(pid):
        try:
            fields = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def single(targets: dict[str, tuple[int, str | None, int]], p: run.Params) -> dict[str, dict[str, Any]]:
    """One client per server; windows alternate between the servers. The server's CPU per call is measured
    too: unlike calls/s it does not depend on the client's own TLS work or on other load of the machine."""
    clients = {k: Client(port, ca) for k, (port, ca, _) in targets.items()}
    rates: dict[str, list[float]] = {k: [] for k in targets}
    lats: dict[str, list[float]] = {k: [] for k in targets}
    cpu: dict[str, list[float]] = {k: [] for k in targets}
    try:
        for c in clients.values():
            _window(c, p.warmup_s)
        for _ in range(p.windows):
            for k, c in clients.items():
                before, calls = cpu_s(targets[k][2]), len(lats[k])
                rates[k].append(_window(c, p.window_s, lats[k]))
                cpu[k].append((cpu_s(targets[k][2]) - before) / (len(lats[k]) - calls) * 1e6)
    finally:
        for c in clients.values():
            c.close()
    return {k: {"calls_per_s": statistics.median(rates[k]), "p50_ms": statistics.median(lats[k]) * 1000,
                "server_cpu_us_per_call": statistics.median(cpu[k]), "windows_calls_per_s": rates[k]}
            for k in targets}


def _worker(port: int, ca: str | None, warmup_s: float, windows: int, window_s: float, barrier: Any,
            results: Any, idx: int) -> None:
    try:
        c = Client(port, ca)
        results.put(("warm", idx, -1, _window(c, warmup_s) * warmup_s))
        for w in range(windows):
            barrier.wait(timeout=300)
            results.put(("ok", idx, w, _window(c, window_s)))
        c.close()
    except BaseException as e:
        results.put(("error", idx, -1, f"{type(e).__name__}: {e}"))
        try:
            barrier.abort()
        except Exception:
            pass


def concurrent(port: int, ca: str | None, pid: int, p: run.Params) -> dict[str, Any]:
    """p.clients client processes; the server's CPU per call over the whole run (warm-up included)."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(p.clients), ctx.Queue()
    procs = [ctx.Process(target=_worker, daemon=True,
                         args=(port, ca, p.warmup_s, p.windows, p.window_s, barrier, results, i))
             for i in range(p.clients)]
    before = cpu_s(pid)
    for proc in procs:
        proc.start()
    per_window: dict[int, list[float]] = {w: [] for w in range(p.windows)}
    calls = 0.0
    try:
        for _ in range(p.clients * (p.windows + 1)):
            status, idx, w, x = results.get(timeout=300)
            if status == "warm":
                calls += x
                continue
            if status != "ok":
                raise RuntimeError(f"client process {idx} failed: {x}")
            per_window[w].append(x)
            calls += x * p.window_s
    finally:
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.terminate()
    rates = [sum(v) for _, v in sorted(per_window.items())]
    return {"calls_per_s": statistics.median(rates), "windows_calls_per_s": rates, "clients": p.clients,
            "server_cpu_us_per_call": (cpu_s(pid) - before) / calls * 1e6}


def start(workdir: Path, env: dict[str, str]) -> Serve:
    fresh_dir(workdir)
    srv = Serve(workdir, run.WORKERS)
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        srv.launch(f"sqlite:///{workdir / 'metastore.db'}", "--no-rest")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return srv


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short windows (bench/run.py's --quick)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "tls"), help="output directory [bench/out/tls]")
    args = ap.parse_args(argv)
    p = run.QUICK if args.quick else run.FULL
    out = Path(args.out)
    fresh_dir(out)
    keystore, ca = make_keystore(out)
    tls_env = {"METASTORE_USE_SSL": "true", "METASTORE_SSL_KEYSTORE": str(keystore),
               "METASTORE_SSL_KEYSTORE_PASSWORD": PASSWORD}
    servers = {"plain": start(out / "plain", {}), "tls": start(out / "tls", tls_env)}
    targets = {"plain": (servers["plain"].port, None, servers["plain"].pid),
               "tls": (servers["tls"].port, str(ca), servers["tls"].pid)}
    try:
        for k, (port, cafile, _) in targets.items():
            c = Client(port, cafile)
            from hive_metastore.ttypes import Database
            c.create_database(Database(name="bench", locationUri=str(out / k / "warehouse" / "bench.db"),
                                       parameters={}))
            c.create_table(run.table("bench", "t_get"))
            c.close()
        log("get_table, 1 client (windows alternate between plain and TLS)")
        one = single(targets, p)
        many: dict[str, dict[str, Any]] = {}
        for k, (port, cafile, pid) in targets.items():
            log(f"get_table, {p.clients} client processes, {k}")
            many[k] = concurrent(port, cafile, pid, p)
    finally:
        for srv in servers.values():
            srv.stop()
    ratio = {"1": one["tls"]["calls_per_s"] / one["plain"]["calls_per_s"],
             str(p.clients): many["tls"]["calls_per_s"] / many["plain"]["calls_per_s"]}
    data = {"when": utc_now(), "host": host_facts(), "command": command_line("bench/tls.py", argv),
            "workers": run.WORKERS, "params": p.__dict__, "single": one, "concurrent": many,
            "ratio_tls_to_plain": ratio}
    md = "\n".join([
        "# get_table over TLS vs plain", "",
        f"{data['when']}, `{data['command']}`, {run.WORKERS} server processes each, SQLite, P-256 certificate, "
        "handshake once per connection.", "",
        "| | plain | TLS | TLS / plain |", "|---|---|---|---|",
        f"| get_table, 1 client (calls/s) | {one['plain']['calls_per_s']:,.0f} | {one['tls']['calls_per_s']:,.0f} | "
        f"{ratio['1']:.2f} |",
        f"| get_table, 1 client, p50 (ms) | {one['plain']['p50_ms']:.3f} | {one['tls']['p50_ms']:.3f} | |",
        f"| get_table, 1 client, server CPU per call (µs) | {one['plain']['server_cpu_us_per_call']:.1f} | "
        f"{one['tls']['server_cpu_us_per_call']:.1f} | |",
        f"| get_table, {p.clients} clients (calls/s) | {many['plain']['calls_per_s']:,.0f} | "
        f"{many['tls']['calls_per_s']:,.0f} | {ratio[str(p.clients)]:.2f} |",
        f"| get_table, {p.clients} clients, server CPU per call (µs) | {many['plain']['server_cpu_us_per_call']:.1f} "
        f"| {many['tls']['server_cpu_us_per_call']:.1f} | |", ""])
    publish(out, "tls", data, md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
