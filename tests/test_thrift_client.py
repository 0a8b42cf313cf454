"""The one typed Thrift client (metastore.thrift.client) against a real `metastore serve` process: URIs parsed
once, Hive's exceptions passed through, transport failures as MetastoreUnavailable, reads retried once on a
fresh connection when asked (a restarted server), writes never retried, one connection per thread, and
cleaned events as core EventsMissing."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from metastore.core.errors import EventsMissing
from metastore.thrift import hms
from metastore.thrift.client import MetastoreClient, MetastoreUnavailable, parse_uri

from conftest import ROOT, Server, free_port, unique


def _db(name: str) -> object:
    return hms.Database(name=name, description="d", parameters={})


@pytest.mark.parametrize("uri", ["http://h:1", "thrift://h:notaport", "thrift://h:1/path", "h:9083",
                                 "thrift://h:1?x=1", "thrift://h:70000"])
def test_bad_uris_refused_when_the_client_is_made(uri: str) -> None:
    with pytest.raises(ValueError, match="thrift://HOST:PORT"):
        MetastoreClient(uri)


def test_uri_defaults() -> None:
    assert parse_uri("thrift://example.org") == ("example.org", 9083)
    assert parse_uri("thrift://10.0.0.1:1234") == ("10.0.0.1", 1234)
    assert MetastoreClient("thrift://h").uri == "thrift://h:9083"


def test_refused_connection_is_unavailable() -> None:
    c = MetastoreClient(f"thrift://127.0.0.1:{free_port()}", timeout=2, retry_reads=True)
    with pytest.raises(MetastoreUnavailable) as e:
        c.get_all_databases()
    assert isinstance(e.value, ConnectionError)


def test_typed_calls_and_hive_errors_pass_through(server: Server) -> None:
    db = unique("c")
    with MetastoreClient(server.uri) as ms:
        assert ms.find_database(db) is None
        ms.create_database(_db(db))
        with pytest.raises(hms.AlreadyExistsException):
            ms.create_database(_db(db))
        assert ms.get_database(db).name == db
        assert db in ms.get_all_databases()
        assert ms.find_table(db, "nope") is None
        with pytest.raises(hms.NoSuchObjectException):
            ms.get_table(db, "nope")
        assert ms.find_function(db, "nope") is None
        before = ms.current_event_id()
        ms.drop_database(db, True, True)
        events = ms.next_notification(before, 10)
        assert [(e.eventType, e.dbName) for e in events] == [("DROP_DATABASE", db)]
        with pytest.raises(AttributeError):
            ms.forward("no_such_call")
        assert ms.forward("get_all_databases") == ms.get_all_databases()


def test_one_connection_per_thread(server: Server) -> None:
    ms = MetastoreClient(server.uri)
    seen: list[int] = []

    def work() -> None:
        for _ in range(20):
            seen.append(ms.current_event_id())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 80 and len(ms._open) == 4
    ms.current_event_id()  # a connection for this thread: the ended threads' connections are closed
    assert [t for t, _ in ms._open] == [threading.current_thread()]
    ms.close()
    assert ms._open == []
    assert ms.current_event_id() >= max(seen)  # usable after close: reconnects


def test_reads_retried_once_after_a_restart_writes_not(database: object, tmp_path: Path) -> None:
    srv = Server(database, tmp_path).start()  # type: ignore[arg-type]
    try:
        retrying = MetastoreClient(srv.uri, timeout=10, retry_reads=True)
        plain = MetastoreClient(srv.uri, timeout=10)
        retrying.get_all_databases()
        plain.get_all_databases()
        srv.stop()
        srv.start()
        assert isinstance(retrying.get_all_databases(), list)  # the stale connection failed; one retry got through
        with pytest.raises(MetastoreUnavailable):
            plain.get_all_databases()
        assert isinstance(plain.get_all_databases(), list)  # dropped after the failure: reconnected
        srv.stop()
        srv.start()
        with pytest.raises(MetastoreUnavailable):  # a write is not retried: it may have committed
            retrying.create_database(_db(unique("w")))
        retrying.close()
        plain.close()
    finally:
        srv.stop()


def test_cleaned_events_raise_events_missing(server: Server) -> None:
    with MetastoreClient(server.uri) as ms:
        db = unique("e")
        ms.create_database(_db(db))
        ms.drop_database(db, True, True)
        time.sleep(1.1)
        p = subprocess.run([sys.executable, "-m", "metastore.cli", "events", "clean", "--db", server.db.url,
                            "--ttl", "0", "--max-ttl", "0"],
                           check=False, capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert p.returncode == 0, p.stderr
        with pytest.raises(EventsMissing, match="^events missing"):
            ms.next_notification(0, 10)
