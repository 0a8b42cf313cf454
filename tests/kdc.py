"""A real MIT Kerberos KDC for the tests: two temporary realms on loopback, their principals and keytabs.

`KDC.start(workdir)` writes krb5.conf and kdc.conf under `workdir`, creates the realms EXAMPLE.TEST (the
server's) and OTHER.TEST (a foreign one, trusted one way: OTHER.TEST's users get tickets for EXAMPLE.TEST's
services, so the server sees a valid ticket of another realm) with kdb5_util, starts krb5kdc on a random port
of 127.0.0.1 and adds principals with kadmin.local: hive/localhost (and hive/<this host's canonical name>, if
another), alice and bob in EXAMPLE.TEST, carol in OTHER.TEST, each with a keytab. `kinit(user)` gets a ticket
into a ccache of its own; `env(ccache)` is the environment a client process needs (KRB5_CONFIG, KRB5CCNAME).

The Debian packages come from scripts/kdc.sh (run here when the commands are missing).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REALM = "EXAMPLE.TEST"
OTHER = "OTHER.TEST"
SBIN = ("/usr/sbin", "/usr/bin", "/sbin")


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in SBIN:
        if os.access(f"{d}/{name}", os.X_OK):
            return f"{d}/{name}"
    return None


def ensure_installed() -> None:
    if all(_tool(t) for t in ("krb5kdc", "kadmin.local", "kdb5_util", "kinit")):
        return
    subprocess.run(["bash", str(ROOT / "scripts" / "kdc.sh"), "install"], check=False, timeout=900)
    if not all(_tool(t) for t in ("krb5kdc", "kadmin.local", "kdb5_util", "kinit")):
        if os.environ.get("CI"):
            pytest.fail("MIT Kerberos (scripts/kdc.sh) could not be installed")
        pytest.skip("MIT Kerberos is not installed (scripts/kdc.sh install)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def service_hosts() -> list[str]:
    """The host names the service principal gets: localhost (what the clients connect to) and the canonical
    name the server puts for _HOST, if it is another."""
    from metastore.server.sasl import canonical_host

    hosts = ["localhost"]
    if canonical_host() not in hosts:
        hosts.append(canonical_host())
    return hosts


class KDC:
    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.port = _free_port()
        self.krb5_conf = workdir / "krb5.conf"
        self.kdc_conf = workdir / "kdc.conf"
        self.keytab = workdir / "hive.keytab"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / "krb5kdc.log"

    # ---- set-up -----------------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        return dict(os.environ, KRB5_CONFIG=str(self.krb5_conf), KRB5_KDC_PROFILE=str(self.kdc_conf))

    def _write_config(self) -> None:
        d = self.dir
        self.krb5_conf.write_text(f"""[libdefaults]
    default_realm = {REALM}
    dns_lookup_kdc = false
    dns_lookup_realm = false
    dns_canonicalize_hostname = false
    rdns = false
    ignore_acceptor_hostname = false
    udp_preference_limit = 1
    ticket_lifetime = 1h
    forwardable = true

[realms]
    {REALM} = {{
        kdc = 127.0.0.1:{self.port}
    }}
    {OTHER} = {{
        kdc = 127.0.0.1:{self.port}
    }}

[domain_realm]
    localhost = {REALM}
    .localhost = {REALM}

[capaths]
    {OTHER} = {{
        {REALM} = .
    }}

[logging]
    kdc = FILE:{d}/kdc-debug.log
""")
        realms = "\n".join(f"""    {r} = {{
        database_name = {d}/{r.lower()}.db
        key_stash_file = {d}/{r.lower()}.stash
        acl_file = {d}/kadm5.acl
        max_life = 1h
        max_renewable_life = 1d
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    }}""" for r in (REALM, OTHER))
        self.kdc_conf.write_text(f"""[kdcdefaults]
    kdc_listen = 127.0.0.1:{self.port}
    kdc_tcp_listen = 127.0.0.1:{self.port}

[realms]
{realms}
""")
        (d / "kadm5.acl").write_text("")

    def _run(self, *cmd: str, stdin: str | None = None) -> str:
        p = subprocess.run(list(cmd), env=self._env(), input=stdin, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-2000:]}")
        return p.stdout

    def kadmin(self, realm: str, query: str) -> None:
        out = self._run(_tool("kadmin.local") or "kadmin.local", "-r", realm, "-q", query)
        if "error" in out.lower():
            raise RuntimeError(f"kadmin.local {query}: {out[-1000:]}")

    def start(self) -> KDC:
        ensure_installed()
        self._write_config()
        for realm in (REALM, OTHER):
            self._run(_tool("kdb5_util") or "kdb5_util", "-r", realm, "create", "-s", "-P", "masterpw-" + realm)
        # one-way trust: OTHER.TEST's users may get tickets for EXAMPLE.TEST's services
        for realm in (REALM, OTHER):
            self.kadmin(realm, f"addprinc -pw cross-realm-secret krbtgt/{REALM}@{OTHER}")
        for host in service_hosts():
            self.kadmin(REALM, f"addprinc -randkey hive/{host}")
            self.kadmin(REALM, f"ktadd -k {self.keytab} hive/{host}")
        for user in ("alice", "bob"):
            self.kadmin(REALM, f"addprinc -randkey {user}")
            self.kadmin(REALM, f"ktadd -k {self.user_keytab(user)} {user}")
        self.kadmin(OTHER, "addprinc -randkey carol")
        self.kadmin(OTHER, f"ktadd -k {self.user_keytab('carol')} carol@{OTHER}")
        self.proc = subprocess.Popen([_tool("krb5kdc") or "krb5kdc", "-n", "-r", REALM, "-r", OTHER],
                                     env=self._env(), stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"krb5kdc exited {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("krb5kdc did not listen within 30 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    # ---- clients ----------------------------------------------------------------------------------

    def user_keytab(self, user: str) -> Path:
        return self.dir / f"{user}.keytab"

    def kinit(self, user: str, ccache: Path | None = None) -> Path:
        """A ticket-granting ticket of `user` (alice, bob: EXAMPLE.TEST; carol: OTHER.TEST) in a new ccache."""
        realm = OTHER if user == "carol" else REALM
        ccache = ccache or self.dir / f"ccache-{user}-{time.monotonic_ns()}"
        self._run(_tool("kinit") or "kinit", "-c", f"FILE:{ccache}", "-kt", str(self.user_keytab(user)),
                  f"{user}@{realm}")
        return ccache

    def env(self, ccache: Path | None) -> dict[str, str]:
        """The variables a client process needs: this realm's krb5.conf and the ticket cache (none: a ccache
        that does not exist, so no ticket)."""
        return {"KRB5_CONFIG": str(self.krb5_conf),
                "KRB5CCNAME": f"FILE:{ccache if ccache is not None else self.dir / 'no-such-ccache'}"}


def kdc_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KDC]:
    kdc = KDC(tmp_path_factory.mktemp("kdc")).start()
    try:
        yield kdc
    finally:
        kdc.stop()
