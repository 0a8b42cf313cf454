"""Typed settings parsed once (metastore.config) and the optional extras' message (metastore.extras)."""

from __future__ import annotations

import sys

import pytest

from metastore import config
from metastore.config import Settings, SettingsError
from metastore.extras import MissingExtra, require


def test_durations_are_seconds_from_every_source(tmp_path) -> None:
    s = config.load(env={})
    assert (s.event_ttl, s.event_ttl_max, s.event_clean_interval) == (86400.0, 7 * 86400.0, 7200.0)
    assert (s.txn_timeout, s.idle_timeout, s.read_timeout) == (300.0, 600.0, 60.0)
    site = tmp_path / "hive-site.xml"
    site.write_text("<configuration><property><name>hive.metastore.event.db.listener.timetolive</name>"
                    "<value>2h</value></property><property><name>hive.txn.timeout</name><value>45s</value>"
                    "</property></configuration>")
    s = config.load(str(site), env={"METASTORE_IDLE_TIMEOUT": "1.5s", "METASTORE_EVENT_TTL_MAX": ""},
                    read_timeout="500ms")
    assert (s.event_ttl, s.txn_timeout, s.idle_timeout, s.read_timeout) == (7200.0, 45.0, 1.5, 0.5)
    assert s.event_ttl_max is None  # empty: no hard cap
    assert s.sources["event_ttl"] == str(site) and s.sources["read_timeout"] == "--read-timeout"
    assert Settings(event_ttl="1d").event_ttl == 86400.0  # text given to the constructor is parsed too


def test_the_one_duration_parser_takes_units_short_and_long() -> None:
    # the parser of every duration: settings, the relay's retention, setMetaConf
    cases = {"86400": 86400.0, "86400s": 86400.0, "1d": 86400.0, "2 days": 172800.0, "90m": 5400.0,
             "90 minutes": 5400.0, "1 hour": 3600.0, "3hours": 10800.0, "500ms": 0.5, "10 secs": 10.0, " 7 ": 7.0}
    assert {text: config.parse_duration(text) for text in cases} == cases
    assert config.parse_duration("", 5) == 5 and config.parse_duration(None) is None
    for bad in ("soon", "1 fortnight", "-1s", "1e3", "nan", True):
        with pytest.raises(ValueError):
            config.parse_duration(bad)


def test_booleans_ints_and_urls_are_typed(tmp_path) -> None:
    toml = tmp_path / "m.toml"
    toml.write_text('[metastore]\nrest = "off"\nport = 9999\nbus = "amqp://guest:guest@127.0.0.1:5672/"\n'
                    'db = "postgresql+psycopg2://u@h/m"\nmetastore = "thrift://h:9083"\n')
    s = config.load(str(toml), env={"METASTORE_STATS_AUTOGATHER": "no", "METASTORE_RELAY": "1"})
    assert s.rest is False and s.stats_autogather is False and s.relay is True and s.port == 9999
    assert s.metastore_uri == "thrift://h:9083"
    assert config.load(env={}, host="0.0.0.0", port=1).metastore_uri == "thrift://127.0.0.1:1"
    assert config.load(env={"METASTORE_BUS": "none"}).bus == "none"
    assert config.load(env={}).explicit("rest_port") is False
    assert config.load(env={"METASTORE_REST_PORT": "8181"}).explicit("rest_port") is True


@pytest.mark.parametrize("source, value, message", [
    ("env", ("event_ttl", "7x"), 'settings: event_ttl = "7x" (from METASTORE_EVENT_TTL): not a duration'),
    ("env", ("txn_timeout", "0"), 'settings: txn_timeout = "0" (from METASTORE_TXN_TIMEOUT): must be positive'),
    ("env", ("rest", "maybe"), 'settings: rest = "maybe" (from METASTORE_REST): not a boolean'),
    ("env", ("port", "90000"), 'settings: port = "90000" (from METASTORE_PORT): not a port'),
    ("env", ("workers", "two"), 'settings: workers = "two" (from METASTORE_WORKERS): not a whole number'),
    ("flag", ("db", "oracle://x/y"), 'settings: db = "oracle://x/y" (from --db): unsupported database'),
    ("flag", ("db", "mysql://root@h/m"), "(from --db): unknown driver for mysql (use mysql+pymysql://)"),
    ("flag", ("db", "/var/lib/m.db"), "(from --db): not a database URL"),
    ("flag", ("bus", "kafka://h:9092"), 'settings: bus = "kafka://h:9092" (from --bus): not a message bus URL'),
    ("flag", ("metastore", "http://h:9083"), "(from --metastore): not a metastore URI (thrift://HOST:PORT)"),
    ("flag", ("max_message_bytes", "0"), "(from --max-message-bytes): must be at least 1"),
])
def test_invalid_values_name_key_and_source(source: str, value: tuple[str, str], message: str) -> None:
    key, text = value
    with pytest.raises(SettingsError) as e:
        if source == "env":
            config.load(env={config.env_var(key): text})
        else:
            config.load(env={}, **{key: text})
    assert message in str(e.value)


def test_file_errors_name_the_file_and_hive_key(tmp_path) -> None:
    site = tmp_path / "hive-site.xml"
    site.write_text("<configuration><property><name>hive.metastore.event.db.listener.timetolive</name>"
                    "<value>soon</value></property></configuration>")
    with pytest.raises(SettingsError, match=rf'hive.metastore.event.db.listener.timetolive = "soon" '
                                            rf'\(from {str(site)!s}\): not a duration'):
        config.load(str(site), env={})
    bad = tmp_path / "m.toml"
    bad.write_text("port = [")
    with pytest.raises(SettingsError, match="not a TOML file"):
        config.load(str(bad), env={})


def test_a_password_in_a_refused_value_is_masked() -> None:
    with pytest.raises(SettingsError) as e:
        config.load(env={}, db="oracle://scott:tiger@h/db")
    assert "tiger" not in str(e.value) and "scott:***@" in str(e.value)


def test_unknown_keys_are_kept_as_text() -> None:
    s = config.load(env={})
    s.set("hive.exec.dynamic.partition", True, "test")
    assert s.extra["hive.exec.dynamic.partition"] == "True"
    assert s.hive_config()["hive.exec.dynamic.partition"] == "True"


def test_require_names_the_missing_extra() -> None:
    with pytest.raises(MissingExtra) as e:
        require("metastore_no_such_module_xyz", "postgres")
    assert str(e.value).startswith("PostgreSQL needs the postgres extra: pip install 'metastore[postgres]'")
    assert isinstance(e.value, ImportError) and e.value.extra == "postgres"
    assert require("json", "bench").dumps([]) == "[]"


def test_each_store_url_names_its_driver_and_extra() -> None:
    from metastore.store.engine import driver_module

    assert driver_module("sqlite:///x.db") is None  # the core install
    assert driver_module("postgresql://u@h/m") == ("psycopg2", "postgres")
    assert driver_module("postgresql+psycopg2://u@h/m") == ("psycopg2", "postgres")
    assert driver_module("postgresql+psycopg://u@h/m") == ("psycopg", "postgres")
    assert driver_module("mysql+pymysql://root@h/m") == ("pymysql", "mysql")
    for url in ("postgresql+psycopg2://u@h/m", "mysql+pymysql://root@h/m"):  # installed here: .[test]
        module, extra = driver_module(url)  # type: ignore[misc]
        assert require(module, extra).__name__ == module


def test_absent_drivers_are_named_with_their_extra(monkeypatch, tmp_path) -> None:
    """An extra's module made absent for this test (None in sys.modules: its import fails as if not installed)."""
    from click.testing import CliRunner

    from metastore.cli import main
    from metastore.notify.background import require_bus_client
    from metastore.store.engine import create_engine

    monkeypatch.setitem(sys.modules, "psycopg2", None)
    monkeypatch.setitem(sys.modules, "pika", None)
    needs_postgres = r"^PostgreSQL needs the postgres extra: pip install 'metastore\[postgres\]'"
    with pytest.raises(MissingExtra, match=needs_postgres):
        create_engine("postgresql+psycopg2://postgres@127.0.0.1:5432/postgres")
    with pytest.raises(MissingExtra, match=r"needs the amqp extra: pip install 'metastore\[amqp\]'"):
        require_bus_client("amqp://guest:guest@127.0.0.1:5672/")
    require_bus_client("activemq://127.0.0.1:61613")  # STOMP needs no extra
    require_bus_client(None)
    res = CliRunner().invoke(main, ["schema", "status", "--db", "postgresql+psycopg2://postgres@127.0.0.1:5432/x"])
    assert res.exit_code == 1 and "needs the postgres extra" in res.output, res.output
    res = CliRunner().invoke(main, ["serve", "--bus", "amqp://guest:guest@127.0.0.1:5672/", "--port", "0"],
                             env={"METASTORE_DATA_DIR": str(tmp_path)})
    assert res.exit_code == 1 and "needs the amqp extra" in res.output, res.output


def test_an_invalid_setting_ends_a_command_with_its_message() -> None:
    from click.testing import CliRunner

    from metastore.cli import main

    res = CliRunner().invoke(main, ["serve"], env={"METASTORE_IDLE_TIMEOUT": "soon"})
    assert res.exit_code == 1
    assert 'settings: idle_timeout = "soon" (from METASTORE_IDLE_TIMEOUT): not a duration' in res.output
    res = CliRunner().invoke(main, ["repl", "status", "db", "--metastore", "http://h:1"])
    assert res.exit_code == 1 and "(from --metastore): not a metastore URI" in res.output
