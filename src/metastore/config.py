"""Settings of the metastore: defaults < config file < environment < command line.

Hive's own keys are accepted where they mean the same thing, so an existing hive-site.xml can be reused.
"""

from __future__ import annotations

import os
import re
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, fields

# Hive (and Hadoop-style) keys that map onto our settings.
HIVE_KEYS = {
    "hive.metastore.warehouse.dir": "warehouse",
    "metastore.warehouse.dir": "warehouse",
    "hive.metastore.port": "port",
    "metastore.thrift.port": "port",
    "hive.metastore.bind.host": "host",
    "metastore.thrift.bind.host": "host",
    "hive.stats.autogather": "stats_autogather",
    "metastore.stats.autogather": "stats_autogather",
    # notifications: the message bus relay (HCatalog's keys) and the log's retention (Hive's keys)
    "hcat.msgbus.topic.prefix": "topic_prefix",
    "hive.metastore.event.db.listener.timetolive": "event_ttl",
    "metastore.event.db.listener.timetolive": "event_ttl",
    "hive.metastore.event.db.listener.clean.interval": "event_clean_interval",
    "metastore.event.db.listener.clean.interval": "event_clean_interval",
    # locks and transactions: released when their holder stops heartbeating for this long
    "metastore.txn.timeout": "txn_timeout",
    "hive.txn.timeout": "txn_timeout",
    # safety limits (README "Security")
    "hive.txn.max.open.batch": "txn_max_open_batch",
    "metastore.txn.max.open.batch": "txn_max_open_batch",
    "hive.metastore.server.max.message.size": "max_message_bytes",
    "metastore.server.max.message.size": "max_message_bytes",
    "hive.metastore.server.max.threads": "max_connections",
    "metastore.server.max.threads": "max_connections",
}


@dataclass
class Settings:
    host: str = "127.0.0.1"
    port: int = 9083
    data_dir: str = "metastore-data"
    db: str | None = None  # SQLAlchemy URL; default: SQLite file in data_dir
    warehouse: str | None = None  # default: <data_dir>/warehouse
    stats_autogather: bool = True
    pool_size: int = 8
    workers: int = 1  # server processes sharing the Thrift port
    # the Iceberg REST catalog (metastore.rest): served by `serve` on its own HTTP port unless rest is off
    rest: bool = True
    rest_port: int = 8181
    # notifications (see metastore.notify): bus URL (stomp://, activemq://, amqp://; none: the embedded
    # default, subscribers read the log), whether `serve` runs the relay, topic prefix, retention durations
    bus: str | None = None
    relay: bool = True
    topic_prefix: str = "hcat"
    event_ttl: str = "86400s"
    event_ttl_max: str = "7d"
    event_clean_interval: str = "7200s"
    txn_timeout: str = "300s"  # locks/transactions without a heartbeat for this long are released
    # safety (README "Security"). Directories (paths or file: URIs, comma-separated) under which the server
    # also creates, moves and deletes, besides the warehouse.
    allowed_roots: str = ""
    # directories the REST catalog may also read Iceberg metadata from (besides the allowed roots)
    read_roots: str = ""
    # resource bounds, per front (Thrift, REST) and per server process
    max_connections: int = 4096  # beyond it new connections are refused; the server keeps serving
    idle_timeout: str = "600s"  # a connection with no request for this long is closed
    read_timeout: str = "60s"  # a request that has started must arrive whole within this
    max_message_bytes: int = 100 * 1024 * 1024  # one Thrift message (Hive's default, 100 MiB)
    max_request_bytes: int = 8 * 1024 * 1024  # one REST request body
    txn_max_open_batch: int = 1000  # open_txns' largest batch (Hive's hive.txn.max.open.batch)
    filter_max_length: int = 100_000  # characters of a partition filter
    filter_max_in_list: int = 10_000  # literals of one IN list in a partition filter
    # anything else (Hive keys we do not interpret) is kept and served by get_config_value
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def db_url(self) -> str:
        return self.db or "sqlite:///" + os.path.abspath(os.path.join(self.data_dir, "metastore.db"))

    @property
    def warehouse_dir(self) -> str:
        return os.path.abspath(self.warehouse or os.path.join(self.data_dir, "warehouse"))

    def set(self, key: str, value: object) -> None:
        key = HIVE_KEYS.get(key, key).replace("-", "_")
        names = {f.name: f for f in fields(self)}
        if key not in names or key == "extra":
            self.extra[key] = str(value)
            return
        current = getattr(self, key)
        if isinstance(current, bool) or names[key].type == "bool":
            value = str(value).strip().lower() in ("1", "true", "yes", "on")
        elif isinstance(current, int) and not isinstance(current, bool):
            value = int(str(value))
        setattr(self, key, value)

    def hive_config(self) -> dict[str, str]:
        """The configuration the Thrift front may serve (get_config_value, getMetaConf): secret keys left out and
        passwords inside values masked, so that the front never holds a secret it could leak."""
        hidden = hidden_keys(self.extra.get("hive.conf.hidden.list", ""))
        out = {"hive.metastore.warehouse.dir": redact(self.warehouse_dir),
               "hive.stats.autogather": str(self.stats_autogather).lower()}
        out.update((k, redact(v)) for k, v in self.extra.items() if not secret_key(k, hidden))
        return out


# ---- secrets in the configuration (README "Security") ------------------------------------------------------

# Hive's default hive.conf.hidden.list (2.3.10), lower-cased: never served whatever the name says
HIDDEN_KEYS = frozenset({
    "javax.jdo.option.connectionpassword", "hive.server2.keystore.password", "fs.s3.awsaccesskeyid",
    "fs.s3.awssecretaccesskey", "fs.s3n.awsaccesskeyid", "fs.s3n.awssecretaccesskey", "fs.s3a.access.key",
    "fs.s3a.secret.key", "fs.s3a.proxy.password"})
# a part of a key's name that says its value is a secret or key material (bindpw, keystore, keytab, apikey, ...).
# Deliberately wide: refusing a harmless key costs a client its default, serving a secret cannot be undone.
_SECRET_PART = re.compile(r"passw|passphrase|pwd|pw$|secret|credential|token|key|private")
# user:password@ in a URL, and password=... in a JDBC-style parameter list
_URL_PASSWORD = re.compile(r"(://[^/@:\s]*):[^/@\s]*@")
_PARAM_PASSWORD = re.compile(r"(?i)((?:passw\w*|pwd|secret\w*|token|\w*key)\s*=)[^&;,\s]*")


def hidden_keys(configured: str = "") -> frozenset[str]:
    """Hive's hidden keys plus those of a configured hive.conf.hidden.list (it can add keys, never remove them)."""
    return HIDDEN_KEYS | {k.strip().lower() for k in configured.split(",") if k.strip()}


def secret_key(name: str, hidden: frozenset[str] = HIDDEN_KEYS) -> bool:
    """Whether a configuration key's value must never reach a client."""
    lower = name.lower()
    return lower in hidden or any(_SECRET_PART.search(part) for part in re.split(r"[._\-:/\s]+", lower))


def redact(value: str) -> str:
    """The value with any password inside it (a URL's user:password@, password=...) masked."""
    if "@" not in value and "=" not in value:
        return value
    return _PARAM_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1:***@", value))


def load_file(settings: Settings, path: str) -> None:
    """Read a TOML file (keys at top level or under [metastore]) or a Hadoop-style XML configuration."""
    if path.endswith(".xml"):
        root = ET.parse(path).getroot()
        for prop in root.iter("property"):
            name, value = prop.findtext("name"), prop.findtext("value")
            if name is not None and value is not None:
                settings.set(name.strip(), value.strip())
        return
    with open(path, "rb") as f:
        data = tomllib.load(f)
    for k, v in {**{k: v for k, v in data.items() if not isinstance(v, dict)}, **data.get("metastore", {})}.items():
        settings.set(k, v)


def load(config_file: str | None = None, env: dict[str, str] | None = None, **overrides: object) -> Settings:
    env = dict(os.environ if env is None else env)
    s = Settings()
    path = config_file or env.get("METASTORE_CONFIG")
    if path:
        load_file(s, path)
    for f in fields(Settings):
        v = env.get("METASTORE_" + f.name.upper())
        if v is not None and f.name != "extra":
            s.set(f.name, v)
    for k, v in overrides.items():
        if v is not None:
            s.set(k, v)
    return s
