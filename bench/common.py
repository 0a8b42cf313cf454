"""What the benchmark scripts in bench/ share: ports, starting and stopping `metastore serve` and the reference
Hive metastore, host facts, and writing the results (JSON and Markdown).

Standard library only: the scripts import it in every process they start (client processes, Spark drivers).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape as xml_escape

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(ROOT / "src") not in sys.path:  # the benchmarks run the package of this checkout
    sys.path.insert(0, str(ROOT / "src"))

from metastore.procs import wait_listening  # noqa: E402

REFERENCE_SCRIPTS = Path(os.environ.get("REFERENCE_HMS_DIR", ROOT.parent / "shared" / "reference-hms"))


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ------------------------------------------------------------------------------------------------ ports

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def tail(path: Path, n: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def wait_port(port: int, proc: subprocess.Popen[bytes] | None, timeout: float, what: str, logfile: Path) -> None:
    wait_listening(port, proc, timeout, what, lambda: tail(logfile))


def stop_process(proc: subprocess.Popen[Any] | None, timeout: float = 15) -> None:
    """Terminate, and kill if it does not exit within `timeout` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------------------------------------- servers

def fresh_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)


class Serve:
    """`metastore serve` in its own process, on a free port; its output goes to <workdir>/serve.log."""

    def __init__(self, workdir: Path, workers: int | None = None, warehouse: Path | None = None,
                 data_dir: Path | None = None) -> None:
        self.workdir, self.workers = workdir, workers
        self.warehouse = warehouse or workdir / "warehouse"
        self.data_dir = data_dir or workdir / "data"
        self.port = free_port()
        self.logfile = workdir / "serve.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    def launch(self, db: str, *extra: str, timeout: float = 120) -> None:
        """Starts the server on the store `db` (the workdir must exist) and waits for its Thrift port."""
        cmd = [sys.executable, "-m", "metastore.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--db", db, "--warehouse", str(self.warehouse), "--data-dir", str(self.data_dir), *extra]
        if self.workers is not None:
            cmd += ["--workers", str(self.workers)]
        with open(self.logfile, "ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         cwd=self.workdir)
        wait_port(self.port, self.proc, timeout, "metastore serve", self.logfile)

    def stop(self) -> None:
        stop_process(self.proc)


class Reference:
    """The reference Apache Hive 2.3.10 metastore (Derby), through ../shared/reference-hms."""

    name = "reference"

    def __init__(self, workdir: Path, port: int, python: str = sys.executable) -> None:
        self.workdir = workdir
        self.port = port
        self.python = python
        self.started = False
        self.warehouse = workdir / "warehouse"  # the reference's own hive.metastore.warehouse.dir

    @property
    def pid(self) -> int:
        return int((self.workdir / "pid").read_text().strip())

    def describe(self) -> str:
        return "Apache Hive 2.3.10 metastore (from the pyspark wheel), embedded Derby"

    def _env(self) -> dict[str, str]:
        return {**os.environ, "PYTHON": self.python, "PORT": str(self.port), "DIR": str(self.workdir)}

    def start(self) -> None:
        if not (REFERENCE_SCRIPTS / "start.sh").exists():
            raise RuntimeError(f"no reference scripts at {REFERENCE_SCRIPTS} (use --no-reference)")
        self._stop_script()  # a reference left running by an interrupted run
        if not port_free(self.port):
            other = free_port()
            log(f"port {self.port} is in use; the reference gets {other}")
            self.port = other
        self.started = True
        r = subprocess.run([str(REFERENCE_SCRIPTS / "start.sh"), "--fresh"], env=self._env(), cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"reference did not start:\n{r.stdout}\n{r.stderr}")
        wait_port(self.port, None, 60, "reference metastore", self.workdir / "logs" / "stdout.log")

    def _stop_script(self) -> None:
        if (self.workdir / "pid").exists():
            subprocess.run([str(REFERENCE_SCRIPTS / "stop.sh")], env=self._env(), cwd=ROOT,
                           capture_output=True, text=True, timeout=60)

    def stop(self) -> None:
        if self.started:
            self._stop_script()
            self.started = False

    def fresh_store(self) -> bool:
        return True


# The Debian packages that carry the JDBC drivers the reference needs on PostgreSQL and MariaDB (the pyspark
# wheel carries only Derby's); `scripts/jdbc-drivers.sh` installs them.
JDBC_JARS = {"postgres": Path("/usr/share/java/postgresql.jar"),
             "mariadb": Path("/usr/share/java/mariadb-java-client.jar")}


@dataclass(frozen=True)
class JdbcStore:
    """Where the reference keeps its metadata when it is not on embedded Derby: a database made for the run."""

    store: str      # "postgres" or "mariadb"
    url: str        # the JDBC URL of a fresh, empty database
    user: str
    password: str   # never empty: Hive takes an empty password for "unset" and sends its default, "mine"
    properties: tuple[tuple[str, str], ...] = ()  # more hive-site.xml settings for this store

    @property
    def driver(self) -> str:
        return {"postgres": "org.postgresql.Driver", "mariadb": "org.mariadb.jdbc.Driver"}[self.store]


class JdbcReference(Reference):
    """The same Hive 2.3.10 metastore on PostgreSQL or MariaDB: DataNucleus makes Hive's schema in an empty
    database at start (datanucleus.schema.autoCreateAll, as on Derby), and Hive's direct SQL serves the listings.

    ../shared/reference-hms/start.sh knows only Derby, so this starts the same server with the same settings
    (its hive-site.xml template, its notification listener) and the store's JDBC URL and driver instead.
    """

    def __init__(self, workdir: Path, port: int, jdbc: JdbcStore, python: str = sys.executable) -> None:
        super().__init__(workdir, port, python)
        self.jdbc = jdbc
        self.name = f"reference:{jdbc.store}"
        self.proc: subprocess.Popen[bytes] | None = None

    def describe(self) -> str:
        store = {"postgres": "PostgreSQL", "mariadb": "MariaDB"}[self.jdbc.store]
        return (f"Apache Hive 2.3.10 metastore (from the pyspark wheel) on {store}, schema made by DataNucleus, "
                f"direct SQL on, JDBC driver {JDBC_JARS[self.jdbc.store].name} from Debian")

    def hive_site(self) -> str:
        site = (REFERENCE_SCRIPTS / "hive-site.xml.in").read_text()
        site = site.replace("@DIR@", str(self.workdir)).replace("@PORT@", str(self.port))
        settings = {"javax.jdo.option.ConnectionURL": self.jdbc.url,
                    "javax.jdo.option.ConnectionDriverName": self.jdbc.driver,
                    "javax.jdo.option.ConnectionUserName": self.jdbc.user,
                    "javax.jdo.option.ConnectionPassword": self.jdbc.password, **dict(self.jdbc.properties)}
        for key, value in settings.items():
            prop = f"<property><name>{key}</name><value>{xml_escape(value)}</value></property>"
            site, n = re.subn(rf"<property><name>{re.escape(key)}</name><value>[^<]*</value></property>",
                              lambda _m, prop=prop: prop, site)
            if n == 0:
                site = site.replace("</configuration>", f"  {prop}\n</configuration>")
        return site

    def start(self) -> None:
        jar = JDBC_JARS[self.jdbc.store]
        if not jar.exists():  # a fresh machine: install the drivers (Debian packages) as make bench would
            subprocess.run(["bash", str(ROOT / "scripts" / "jdbc-drivers.sh")], check=False, timeout=600)
        if not jar.exists():
            raise RuntimeError(f"no JDBC driver at {jar}: `bash scripts/jdbc-drivers.sh` could not install it")
        if not port_free(self.port):
            self.port = free_port()
        fresh_dir(self.workdir)
        for d in ("conf", "classes", "logs", "warehouse"):
            (self.workdir / d).mkdir()
        jars = subprocess.run([self.python, "-c", "import os, pyspark; print(os.path.join("
                               "os.path.dirname(pyspark.__file__), 'jars'))"],
                              capture_output=True, text=True, check=True).stdout.strip()
        sources = sorted(str(p) for p in (REFERENCE_SCRIPTS / "java").glob("*.java"))
        r = subprocess.run(["javac", "-nowarn", "-d", str(self.workdir / "classes"), "-cp", f"{jars}/*", *sources],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"javac failed:\n{r.stderr[-3000:]}")
        (self.workdir / "conf" / "hive-site.xml").write_text(self.hive_site())
        log4j = (REFERENCE_SCRIPTS / "hive-log4j2.properties.in").read_text().replace("@DIR@", str(self.workdir))
        (self.workdir / "conf" / "hive-log4j2.properties").write_text(log4j)
        cp = os.pathsep.join([str(self.workdir / "conf"), str(self.workdir / "classes"), f"{jars}/*", str(jar)])
        stdout = self.workdir / "logs" / "stdout.log"
        with open(stdout, "ab") as out:
            self.proc = subprocess.Popen(
                ["java", "-Xmx2g", "-Dreference.bind.host=127.0.0.1", "-cp", cp,
                 "org.apache.hadoop.hive.metastore.HiveMetaStore", "-p", str(self.port)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.workdir)
        self.started = True
        (self.workdir / "pid").write_text(str(self.proc.pid))
        wait_port(self.port, self.proc, 120, f"reference metastore on {self.jdbc.store}",
                  self.workdir / "logs" / "stdout.log")

    def stop(self) -> None:
        stop_process(self.proc, timeout=30)
        self.proc = None
        self.started = False


# ------------------------------------------------------------------------------------ facts and results

def host_facts() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def command_line(script: str, argv: list[str] | None, python: str = "python") -> str:
    """The command as the results show it (argv None: this process's own arguments)."""
    return " ".join([python, script, *(argv if argv is not None else sys.argv[1:])])


def write_results(out: Path, json_name: str, data: Any, md_name: str, md: str, indent: int = 2,
                  json_end: str = "") -> tuple[Path, Path]:
    """Writes <out>/<json_name> and <out>/<md_name>; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / json_name, out / md_name
    json_path.write_text(json.dumps(data, indent=indent) + json_end)
    md_path.write_text(md)
    return json_path, md_path


def publish(out: Path, stem: str, data: Any, md: str, json_first: bool = False) -> None:
    """Writes <out>/<stem>.json and <out>/<stem>.md, and prints the Markdown and where both went."""
    json_path, md_path = write_results(out, f"{stem}.json", data, f"{stem}.md", md)
    print()
    print(md)
    print(f"written: {json_path}, {md_path}" if json_first else f"written: {md_path}, {json_path}")


def parquet_storage(cols: list[tuple[str, str]], location: str | None = None) -> Any:
    """A Hive Parquet table's StorageDescriptor as Spark writes one, in the Apache Thrift client's types (the
    benchmarks' and the tests' tables)."""
    from hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor

    return StorageDescriptor(
        cols=[FieldSchema(n, t, None) for n, t in cols], location=location,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                            parameters={"serialization.format": "1"}),
        compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={})
