"""Settings of the metastore, parsed once: defaults < config file < environment < command line.

Invariants:
- A Settings holds typed values only: durations are float seconds, booleans bools, counts ints, URLs checked.
  Every value is parsed and validated where it enters (Settings.set, the constructor), never where it is used;
  a bad value is refused at load time with SettingsError naming the key, the value and its source (the file,
  the environment variable or the command-line flag).
- Hive's own keys (HIVE_KEYS) are accepted where they mean the same thing, so an existing hive-site.xml can be
  reused; any other key is kept as text in `extra` and served by get_config_value unless it is secret
  (hive_config, hidden_keys, secret_key, redact).
- Importing this module costs no database driver, no SQLAlchemy and no validation library: every command starts
  with it. (Measured with `python -X importtime`: this module ~25 ms; pydantic alone 53 ms, and a pydantic
  model of these fields built at import ~260 ms, so the settings stay a dataclass with one validating loader.)
"""

from __future__ import annotations

import math
import os
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

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
    "hive.metastore.disallow.incompatible.col.type.changes": "disallow_incompatible_col_type_changes",
    "metastore.disallow.incompatible.col.type.changes": "disallow_incompatible_col_type_changes",
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
    # identity and access (README "Security")
    "hive.metastore.sasl.enabled": "sasl",
    "metastore.sasl.enabled": "sasl",
    "hive.metastore.kerberos.principal": "kerberos_principal",
    "metastore.kerberos.principal": "kerberos_principal",
    "hive.metastore.kerberos.keytab.file": "kerberos_keytab",
    "metastore.kerberos.keytab.file": "kerberos_keytab",
    "hadoop.security.auth_to_local": "auth_to_local",
    "hadoop.rpc.protection": "rpc_protection",
    "hive.metastore.use.SSL": "use_ssl",
    "metastore.use.SSL": "use_ssl",
    "hive.metastore.keystore.path": "ssl_keystore",
    "metastore.keystore.path": "ssl_keystore",
    "hive.metastore.keystore.password": "ssl_keystore_password",
    "metastore.keystore.password": "ssl_keystore_password",
    "hive.metastore.truststore.path": "ssl_truststore",
    "metastore.truststore.path": "ssl_truststore",
    "hive.metastore.truststore.password": "ssl_truststore_password",
    "metastore.truststore.password": "ssl_truststore_password",
    "hive.users.in.admin.role": "admin_users",
    "metastore.users.in.admin.role": "admin_users",
}

# Hadoop's impersonation (proxy users), as Hadoop names the keys: hadoop.proxyuser.<short name>.users, .groups and
# .hosts, each a comma-separated list or "*": whom that user may act for (the users named, or the members of the
# groups) and from which client hosts (names, addresses, CIDR ranges). Kept in Settings.proxy_users by key.
PROXY_USER_KEY = re.compile(r"hadoop\.proxyuser\.([^.\s]+)\.(users|groups|hosts)")

# Store URLs: SQLAlchemy backend -> the drivers this project installs for it (None: the URL names none).
# A bare mysql:// would load MySQLdb, which no extra installs: name pymysql instead.
DB_DRIVERS: dict[str, frozenset[str | None]] = {
    "sqlite": frozenset({None, "pysqlite"}),
    "postgresql": frozenset({None, "psycopg2", "psycopg"}),
    "mysql": frozenset({"pymysql"}),
    "mariadb": frozenset({"pymysql"}),
}
# Message bus URLs (metastore.notify.brokers): STOMP and AMQP schemes, and the names of "no bus"
AMQP_SCHEMES = frozenset({"amqp", "amqps", "rabbitmq"})  # the client library is an extra (amqp: pika)
BUS_SCHEMES = frozenset({"activemq", "stomp", "rabbitmq+stomp", "activemq+stomp"}) | AMQP_SCHEMES
NO_BUS = frozenset({"", "embedded", "log", "none"})

_DURATION_UNITS = {"": 1.0, "ms": 0.001, "s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0, "m": 60.0,
                   "min": 60.0, "mins": 60.0, "minutes": 60.0, "h": 3600.0, "hour": 3600.0, "hours": 3600.0,
                   "d": 86400.0, "day": 86400.0, "days": 86400.0}
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class SettingsError(ValueError):
    """A setting's value is not valid; the message names the key, the value and where it came from."""


def parse_duration(text: str | int | float | None, default: float | None = None) -> float | None:
    """Seconds in a duration ("86400", "86400s", "1d", "30m", "500ms"); None or "" gives `default`."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return default
    if isinstance(text, bool):
        raise ValueError(f"not a duration: {text!r}")
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*", text)
        if not m or m.group(2).lower() not in _DURATION_UNITS:
            raise ValueError(f"not a duration: {text!r} (use seconds, or ms/s/m/h/d)")
        value = float(m.group(1)) * _DURATION_UNITS[m.group(2).lower()]
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"not a duration: {text!r}")
    return value


def parse_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("not a boolean (true/false, yes/no, on/off, 1/0)")


def check_db_url(url: str) -> str:
    """`url` if it is a SQLAlchemy URL of a supported database with a driver this project installs."""
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)(?:\+([A-Za-z0-9_]+))?://.*", url, re.DOTALL)
    if not m:
        raise ValueError("not a database URL (sqlite:///PATH, postgresql+psycopg2://..., mysql+pymysql://...)")
    backend, driver = m.group(1).lower(), (m.group(2) or "").lower() or None
    if backend not in DB_DRIVERS:
        raise ValueError(f"unsupported database {backend!r} (sqlite, postgresql or mysql/mariadb)")
    if driver not in DB_DRIVERS[backend]:
        known = ", ".join(f"{backend}+{d}://" for d in sorted(d for d in DB_DRIVERS[backend] if d))
        raise ValueError(f"unknown driver for {backend} (use {known})")
    return url


def check_bus_url(url: str | None) -> str | None:
    """`url` if it names a supported broker or no bus (None, "", embedded, log, none)."""
    if url is None or url.strip().lower() in NO_BUS or url.strip().lower().startswith("embedded:"):
        return url
    p = urllib.parse.urlsplit(url.strip())
    if p.scheme.lower() not in BUS_SCHEMES:
        raise ValueError("not a message bus URL (" + ", ".join(sorted(s + "://" for s in BUS_SCHEMES)) + ")")
    if not p.hostname:
        raise ValueError("a message bus URL names its host")
    _ = p.port  # ValueError for a port that is not a number in range
    return url


def check_thrift_url(url: str | None) -> str | None:
    """`url` if it is thrift://HOST[:PORT] (the form every metastore client here takes)."""
    if url is None:
        return None
    p = urllib.parse.urlsplit(url.strip())
    if p.scheme.lower() != "thrift" or not p.hostname or p.path not in ("", "/") or p.query:
        raise ValueError("not a metastore URI (thrift://HOST:PORT)")
    _ = p.port
    return url.strip()


def _positive(value: float) -> float:
    if value <= 0:
        raise ValueError("must be positive")
    return value


def _port(value: int) -> int:
    if not 0 <= value <= 65535:
        raise ValueError("not a port (0 to 65535)")
    return value


def _at_least_one(value: int) -> int:
    if value < 1:
        raise ValueError("must be at least 1")
    return value


def _one_of(value: str, allowed: tuple[str, ...]) -> str:
    if value.strip().lower() not in allowed:
        raise ValueError("one of " + ", ".join(allowed))
    return value.strip().lower()


def _jwks_source(value: str) -> str:
    """A JWKS location: empty, a file path, or an http(s) URL with a host."""
    v = value.strip()
    if "://" in v:
        p = urllib.parse.urlsplit(v)
        if p.scheme.lower() not in ("http", "https") or not p.hostname:
            raise ValueError("not a JWKS location (a file path, or an http:// or https:// URL)")
        _ = p.port
    return v


def _claim_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_:.\-/]{1,128}", value.strip()):
        raise ValueError("not a claim name")
    return value.strip()


# checks beyond the type, by setting
_CHECKS: dict[str, Any] = {
    "port": _port, "rest_port": _port, "workers": _at_least_one, "pool_size": _at_least_one,
    "max_connections": _at_least_one, "max_message_bytes": _at_least_one, "max_request_bytes": _at_least_one,
    "txn_max_open_batch": _at_least_one, "filter_max_length": _at_least_one, "filter_max_in_list": _at_least_one,
    "rest_auth": lambda v: _one_of(v, ("none", "oauth2")), "authorization": lambda v: _one_of(v, ("none", "sql")),
    "txn_timeout": _positive, "idle_timeout": _positive, "read_timeout": _positive,
    "rest_token_lifetime": _positive, "rest_oidc_jwks": _jwks_source,
    "rest_oidc_user_claim": _claim_name,
    "db": lambda v: None if v is None else check_db_url(v), "bus": check_bus_url, "metastore": check_thrift_url,
}
# durations whose empty value means "none" (no hard cap) rather than an error
_OPTIONAL = frozenset({"event_ttl_max", "db", "warehouse", "bus", "metastore"})


@dataclass
class Settings:
    """Every setting, typed. Construct with typed values or their text (Settings(event_ttl="7d")); both are
    checked. `sources` says where each value not at its default came from."""

    host: str = "127.0.0.1"
    port: int = 9083
    data_dir: str = "metastore-data"
    db: str | None = None  # SQLAlchemy URL; default: SQLite file in data_dir
    warehouse: str | None = None  # default: <data_dir>/warehouse
    stats_autogather: bool = True
    # alter_table refuses a column type change Hive does not convert (Hive's default: true)
    disallow_incompatible_col_type_changes: bool = True
    pool_size: int = 8
    workers: int = 1  # server processes sharing the Thrift port
    # the Iceberg REST catalog (metastore.rest): served by `serve` on its own HTTP port unless rest is off
    rest: bool = True
    rest_port: int = 8181
    # the metastore that client commands (catalogd, repl, events tail) talk to: thrift://HOST:PORT
    # [thrift://<host>:<port> of these settings]
    metastore: str | None = None
    # notifications (see metastore.notify): bus URL (stomp://, activemq://, amqp://; none: the embedded
    # default, subscribers read the log), whether `serve` runs the relay, topic prefix, retention durations
    bus: str | None = None
    relay: bool = True
    topic_prefix: str = "hcat"
    event_ttl: float = 86400.0  # seconds
    event_ttl_max: float | None = 7 * 86400.0  # seconds; None: no hard cap
    event_clean_interval: float = 7200.0  # seconds; 0: no cleaner
    txn_timeout: float = 300.0  # seconds: locks/transactions without a heartbeat for this long are released
    # safety (README "Security"). Directories (paths or file: URIs, comma-separated) under which the server
    # also creates, moves and deletes, besides the warehouse.
    allowed_roots: str = ""
    # directories the REST catalog may also read Iceberg metadata from (besides the allowed roots)
    read_roots: str = ""
    # resource bounds, per front (Thrift, REST) and per server process
    max_connections: int = 4096  # beyond it new connections are refused; the server keeps serving
    idle_timeout: float = 600.0  # seconds: a connection with no request for this long is closed
    read_timeout: float = 60.0  # seconds: a request that has started must arrive whole within this
    max_message_bytes: int = 100 * 1024 * 1024  # one Thrift message (Hive's default, 100 MiB)
    max_request_bytes: int = 8 * 1024 * 1024  # one REST request body
    txn_max_open_batch: int = 1000  # open_txns' largest batch (Hive's hive.txn.max.open.batch)
    filter_max_length: int = 100_000  # characters of a partition filter
    filter_max_in_list: int = 10_000  # literals of one IN list in a partition filter
    # identity and access (README "Security"). Thrift: SASL GSSAPI (Kerberos) with the server's principal
    # (_HOST: this host's name) and keytab; auth_to_local: Hadoop's rules mapping principals to short names
    sasl: bool = False
    kerberos_principal: str = ""
    kerberos_keytab: str = ""
    auth_to_local: str = "DEFAULT"
    # the SASL security layers offered (Hadoop's hadoop.rpc.protection): authentication, integrity, privacy
    rpc_protection: str = "authentication"
    # TLS on the Thrift front (and on the clients this package runs: catalogd, repl, ...): a keystore (PKCS12
    # or JKS, with its password) or PEM files (ssl_cert + ssl_key); the truststore is what clients trust
    use_ssl: bool = False
    ssl_keystore: str = ""
    ssl_keystore_password: str = ""
    ssl_cert: str = ""
    ssl_key: str = ""
    ssl_truststore: str = ""
    ssl_truststore_password: str = ""
    # whether this package's clients check the server's name against its certificate (Hive's Java client
    # does not; turn off only for certificates made without the server's names)
    ssl_check_hostname: bool = True
    # the REST front: none (as today: every request acts as its claimed or anonymous user) or oauth2 (bearer
    # tokens of the server's token endpoint or of an external issuer)
    rest_auth: str = "none"
    # OAuth2 on the REST front (README "REST authentication"). The token endpoint signs its tokens (HS256) with
    # the key in rest_token_key (empty: <data_dir>/rest-token.key, created 0600 when absent; the processes of
    # one server share it, as must every server that accepts the others' tokens); they expire after
    # rest_token_lifetime. rest_clients: the TOML file of the clients allowed to get tokens (client id ->
    # hashed secret and user; empty: <data_dir>/rest-clients.toml; `metastore oauth add-client` writes it).
    # An external OIDC issuer's tokens are accepted too when rest_oidc_issuer is set: its audience, its JWKS
    # (a file path or an http(s) URL) and the claim that names the user.
    rest_token_key: str = ""
    rest_token_lifetime: float = 3600.0
    rest_clients: str = ""
    rest_oidc_issuer: str = ""
    rest_oidc_audience: str = ""
    rest_oidc_jwks: str = ""
    rest_oidc_user_claim: str = "sub"
    # authorization: none (as today) or sql (Hive's SQL-standard model: roles, grants, owners), enforced by
    # the catalog service for every front; admin_users are in the admin role from the start
    authorization: str = "none"
    admin_users: str = ""
    # the audit log: one JSON line per call; a file path, "-" for stdout, empty for none
    audit_log: str = ""
    # the hadoop.proxyuser.<short>.{users,groups,hosts} settings (PROXY_USER_KEY), by key; never served
    proxy_users: dict[str, str] = field(default_factory=dict)
    # anything else (Hive keys we do not interpret) is kept and served by get_config_value
    extra: dict[str, str] = field(default_factory=dict)
    # where each value set after construction came from (file path, environment variable, --flag)
    sources: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name not in _UNPARSED:
                setattr(self, f.name, _parse(f.name, getattr(self, f.name), "argument"))

    @property
    def db_url(self) -> str:
        return self.db or "sqlite:///" + os.path.abspath(os.path.join(self.data_dir, "metastore.db"))

    @property
    def warehouse_dir(self) -> str:
        return os.path.abspath(self.warehouse or os.path.join(self.data_dir, "warehouse"))

    @property
    def metastore_uri(self) -> str:
        """The metastore client commands talk to: `metastore`, or this server's own Thrift address."""
        if self.metastore:
            return self.metastore
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"thrift://[{host}]:{self.port}" if ":" in host else f"thrift://{host}:{self.port}"

    def explicit(self, name: str) -> bool:
        """Whether `name` was set by a file, the environment or a flag (not left at its default)."""
        return name in self.sources

    def set(self, key: str, value: object, source: str = "") -> None:
        """Set a setting (our name or Hive's key) from text or a typed value; SettingsError if it is invalid."""
        if PROXY_USER_KEY.fullmatch(key.strip()):
            if isinstance(value, (dict, list, tuple, set, bool)):
                raise SettingsError(f"settings: {key} (from {source or 'argument'}): a comma-separated list or *")
            self.proxy_users[key.strip()] = str(value).strip()
            if source:
                self.sources[key.strip()] = source
            return
        name = HIVE_KEYS.get(key, key).replace("-", "_")
        if name not in _FIELD_TYPES:
            self.extra[name] = str(value)
            return
        setattr(self, name, _parse(name, value, source, key))
        if source:
            self.sources[name] = source

    def hive_config(self) -> dict[str, str]:
        """The configuration the Thrift front may serve (get_config_value, getMetaConf): secret keys left out and
        passwords inside values masked, so that the front never holds a secret it could leak."""
        hidden = hidden_keys(self.extra.get("hive.conf.hidden.list", ""))
        out = {"hive.metastore.warehouse.dir": redact(self.warehouse_dir),
               "hive.stats.autogather": str(self.stats_autogather).lower(),
               "hive.metastore.disallow.incompatible.col.type.changes":
                   str(self.disallow_incompatible_col_type_changes).lower()}
        out.update((k, redact(v)) for k, v in self.extra.items() if not secret_key(k, hidden))
        return out


# setting -> its type, as the annotation reads (from __future__ annotations: text)
_UNPARSED = ("proxy_users", "extra", "sources")
_FIELD_TYPES = {f.name: str(f.type) for f in fields(Settings) if f.name not in _UNPARSED}


def _parse(name: str, value: object, source: str, key: str | None = None) -> Any:
    """The typed value of setting `name`, or SettingsError naming key, value and source."""
    kind = _FIELD_TYPES[name]
    try:
        if value is None or (name in _OPTIONAL and isinstance(value, str) and not value.strip()):
            if "None" not in kind:
                raise ValueError("may not be empty")
            typed: Any = None
        elif kind.startswith("float"):
            try:  # every float setting is a duration
                if not isinstance(value, (str, int, float)):
                    raise ValueError(value)
                typed = parse_duration(value)
            except ValueError:
                raise ValueError("not a duration (seconds, or a number with ms/s/m/h/d)") from None
        elif kind == "bool":
            typed = parse_bool(value)
        elif kind == "int":
            if isinstance(value, (bool, float)):
                raise ValueError("not a whole number")
            typed = int(str(value).strip().replace("_", "")) if not isinstance(value, int) else value
        elif isinstance(value, (dict, list, tuple, set)):
            raise ValueError("not a text value")
        else:
            typed = str(value)
        check = _CHECKS.get(name)
        if check is not None and typed is not None:
            typed = check(typed)
    except ValueError as e:
        why = str(e) if not str(e).startswith("invalid literal") else "not a whole number"
        where = f" (from {source})" if source else ""
        shown = redact(str(value)) if not isinstance(value, str) or len(value) <= 200 else redact(value[:200]) + "..."
        raise SettingsError(f'settings: {key or name} = "{shown}"{where}: {why}') from None
    return typed


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


def toml_table(text: str, table: str, error: Callable[[str], Exception]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the document, its [table] or {} when absent) of TOML text; raises error(what is wrong) when the text is
    not TOML or [table] is not a table."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"not a TOML file: {e}") from None
    section = data.get(table, {})
    if not isinstance(section, dict):
        raise error(f"[{table}] is not a table")
    return data, section


def load_file(settings: Settings, path: str) -> None:
    """Read a TOML file (keys at top level or under [metastore]) or a Hadoop-style XML configuration."""
    if path.endswith(".xml"):
        import xml.etree.ElementTree as ET

        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:
            raise SettingsError(f"settings: {path}: not an XML configuration: {e}") from None
        for prop in root.iter("property"):
            name, value = prop.findtext("name"), prop.findtext("value")
            if name is not None and value is not None:
                settings.set(name.strip(), value.strip(), path)
        return
    with open(path, "rb") as f:
        text = f.read().decode()
    data, section = toml_table(text, "metastore", lambda msg: SettingsError(f"settings: {path}: {msg}"))
    for k, v in {**{k: v for k, v in data.items() if not isinstance(v, dict)}, **section}.items():
        settings.set(k, v, path)


def env_var(name: str) -> str:
    """The environment variable of setting `name`."""
    return "METASTORE_" + name.upper()


def flag(name: str) -> str:
    """The command-line flag of setting `name`."""
    return "--" + name.replace("_", "-")


def load(config_file: str | None = None, env: dict[str, str] | None = None, **overrides: object) -> Settings:
    """The settings: defaults, then the file (config_file or $METASTORE_CONFIG), the environment (METASTORE_<NAME>),
    then `overrides` (the command line's flags; None: not given). SettingsError for any invalid value."""
    env = dict(os.environ if env is None else env)
    s = Settings()
    path = config_file or env.get("METASTORE_CONFIG")
    if path:
        load_file(s, path)
    for name in _FIELD_TYPES:
        v = env.get(env_var(name))
        if v is not None:
            s.set(name, v, env_var(name))
    for k, value in overrides.items():
        if value is not None:
            s.set(k, value, flag(k))
    return s
