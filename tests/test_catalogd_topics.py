"""Acceptance 3 of catalogd: topic updates, subscriber replicas and SYNC_DDL. A DDL through catalogd (SYNC_DDL on)
is visible on every subscriber's replica when it returns; a stuck subscriber ends the wait with the timeout
error. Also: the topic update log (skips, MAX_NUM_SKIPPED_TOPIC_UPDATES, GC), minimal mode, the delete log."""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from hive_metastore.ttypes import Database, MetaException, Partition
from stores import sqlite_only  # noqa: F401  (the `backend` fixture: SQLite only; catalogd's topics over Thrift)
from test_catalogd_front import table

from metastore.catalogd.catalog import CatalogCache
from metastore.catalogd.service import CatalogdService
from metastore.catalogd.subscriber import NotInReplica, Replica, Subscriber
from metastore.catalogd.topics import MAX_NUM_SKIPPED_TOPIC_UPDATES, Publisher, TopicBuilder, TopicEntry, TopicUpdate
from metastore.thrift import hms

from conftest import Client, Server, unique


@pytest.fixture(scope="module")
def svc(server: Server) -> Iterator[CatalogdService]:
    s = CatalogdService(server.uri, port=0, http_port=0, sync_ddl=True, sync_ddl_timeout=2.0,
                        topic_interval=0.02).start()
    yield s
    s.close()


class StuckableSubscriber(Subscriber):
    """A remote subscriber that can be made stuck: while `stuck` is set it asks for no topic update, and drops
    the answer of a poll that was under way, so it applies (and acknowledges) nothing more."""

    def __init__(self, *a: Any, **k: Any) -> None:
        self.stuck = threading.Event()
        self.closing = False
        super().__init__(*a, **k)

    def get(self, path: str, timeout: float) -> Any:
        if not path.startswith("/topic"):
            return super().get(path, timeout)
        while self.stuck.is_set() and not self.closing:
            time.sleep(0.02)
        doc = super().get(path, timeout)
        return {"updates": []} if self.stuck.is_set() else doc

    def close(self) -> None:
        self.closing = True
        super().close()


@pytest.fixture
def subs(svc: CatalogdService) -> Iterator[tuple[Subscriber, StuckableSubscriber]]:
    local = Subscriber(unique("local"), svc)
    remote = StuckableSubscriber(unique("remote"), f"http://127.0.0.1:{svc.http_port}", poll_wait=0.5)
    deadline = time.time() + 10
    while remote.replica.version == 0 or remote.name not in svc.publisher.acked:
        assert time.time() < deadline
        time.sleep(0.02)
    yield local, remote
    local.close()
    remote.close()
    svc.publisher.unregister(remote.name)


def test_ddl_through_catalogd_is_on_every_replica_when_it_returns(svc: CatalogdService, subs: tuple) -> None:
    local, remote = subs
    c = Client(svc.port)
    try:
        db = unique("sd")
        c.create_database(Database(db, "", None, {"k": "1"}))
        for r in (local.replica, remote.replica):
            assert r.get_database(db).parameters == {"k": "1"}
        for i in range(8):
            c.create_table(table(db, f"t{i}", [("p", "string")]))
            for r in (local.replica, remote.replica):
                assert r.get_table(db, f"t{i}").tableName == f"t{i}"
            p = Partition(values=[str(i)], dbName=db, tableName=f"t{i}", sd=table(db, "x").sd, parameters={})
            c.add_partition(p)
            for r in (local.replica, remote.replica):
                assert [q.values for q in r.get_partitions(db, f"t{i}")] == [[str(i)]]
            t = c.get_table(db, f"t{i}")
            t.parameters = dict(t.parameters, n=str(i))
            c.alter_table(db, f"t{i}", t)
            for r in (local.replica, remote.replica):
                assert r.get_table(db, f"t{i}").parameters["n"] == str(i)
        t = c.get_table(db, "t0")
        t.tableName = "renamed"
        c.alter_table(db, "t0", t)
        c.drop_table(db, "t1", True)
        for r in (local.replica, remote.replica):
            with pytest.raises(NotInReplica):
                r.table(db, "t0")
            with pytest.raises(NotInReplica):
                r.table(db, "t1")
            assert "renamed" in r.table_names(db)  # by name at once; its objects once loaded
        c.drop_database(db, True, True)
        for r in (local.replica, remote.replica):
            with pytest.raises(NotInReplica):
                r.get_database(db)
            assert r.table_names(db) == []
    finally:
        c.close()


def test_wait_for_an_event_id(svc: CatalogdService, subs: tuple, client: Client) -> None:
    local, remote = subs
    db = unique("ev")
    client.create_database(Database(db, "", None, {}))  # behind catalogd's back
    eid = client.get_current_notificationEventId().eventId
    with urllib.request.urlopen(f"http://127.0.0.1:{svc.http_port}/sync?event={eid}&timeout=10") as r:
        version = json.loads(r.read())["version"]
    assert local.replica.version >= version and remote.replica.version >= version
    assert local.replica.get_database(db).name == db and remote.replica.get_database(db).name == db


def test_stuck_subscriber_ends_the_wait_with_the_timeout_error(svc: CatalogdService, subs: tuple) -> None:
    local, remote = subs
    c = Client(svc.port)
    db = unique("stuck")
    try:
        c.create_database(Database(db, "", None, {}))
        remote.stuck.set()  # stops polling: it applies (and acknowledges) nothing more
        t0 = time.monotonic()
        with pytest.raises(MetaException) as e:
            c.create_table(table(db, "t"))
        took = time.monotonic() - t0
        assert "SYNC_DDL timed out after 2s" in e.value.message and remote.name in e.value.message
        assert local.name not in e.value.message
        assert 1.9 <= took < 5, took
        # the change was made, and reached the subscriber that is not stuck
        assert local.replica.get_table(db, "t").tableName == "t"
        with pytest.raises(NotInReplica):
            remote.replica.table(db, "t")
        eid = svc.metastore.current_event_id()
        with pytest.raises(urllib.error.HTTPError) as h:
            urllib.request.urlopen(f"http://127.0.0.1:{svc.http_port}/sync?event={eid}&timeout=0.5")
        assert h.value.code == 504 and "SYNC_DDL timed out" in json.loads(h.value.read())["error"]
        remote.stuck.clear()  # it catches up, and SYNC_DDL works again
        c.create_table(table(db, "u"))
        assert remote.replica.get_table(db, "u").tableName == "u"
        assert remote.replica.get_table(db, "t").tableName == "t"
    finally:
        remote.stuck.clear()
        c.drop_database(db, True, True)
        c.close()


def test_wait_for_an_event_never_applied_times_out(svc: CatalogdService) -> None:
    t0 = time.monotonic()
    with pytest.raises(TimeoutError) as e:
        svc.wait_for_event(svc.metastore.current_event_id() + 1000, 0.5)
    assert "has applied events up to" in str(e.value) and time.monotonic() - t0 < 2


def _db(cache: CatalogCache, name: str) -> None:
    cache.put_database(hms.Database(name=name, parameters={}))


def _tbl(cache: CatalogCache, db: str, name: str) -> None:
    cache.add_table(db, name, hms.Table(tableName=name, dbName=db, partitionKeys=[],
                                        sd=hms.StorageDescriptor(location=None)))


class RacingCache(CatalogCache):
    """A cache whose table `racing` changes right after an update's builder has read the catalog version (a
    writer racing the builder, made certain)."""

    racing: str | None = None

    @property
    def version(self) -> int:
        v = super().version
        if self.racing is not None:
            self.touch(self.table("d", self.racing))  # type: ignore[arg-type]
        return v


def test_topic_update_log_skips_then_sends_anyway_and_is_collected() -> None:
    cache = RacingCache()
    _db(cache, "d")
    for n in ("hot", "cold", "gone"):
        _tbl(cache, "d", n)
    b = TopicBuilder(cache, "full", gc_every=3)
    first = b.build()
    assert first is not None and {e.key for e in first.entries} == {"d", "d.hot", "d.cold", "d.gone"}
    assert b.build() is None  # nothing changed
    # "hot" changes while every update is being built: it is skipped, twice, then sent with its newer version
    cache.racing = "hot"
    seen = []
    for _ in range(MAX_NUM_SKIPPED_TOPIC_UPDATES + 1):
        cache.touch(cache.table("d", "cold"))  # type: ignore[arg-type]
        up = b.build()
        assert up is not None
        keys = {e.key: e.version for e in up.entries}
        assert keys["d.cold"] <= up.to_version
        seen.append(keys.get("d.hot"))
    assert seen[:MAX_NUM_SKIPPED_TOPIC_UPDATES] == [None] * MAX_NUM_SKIPPED_TOPIC_UPDATES
    assert seen[-1] is not None and seen[-1] > up.to_version  # sent although newer than the update
    assert b.sent_anyway == 1 and b.log["table:d.hot"].skipped == 0
    # deletions come from the delete log; the log entry of a dropped table is garbage-collected
    cache.racing = None
    cache.remove_table("d", "gone")
    assert len(cache.delete_log) == 1
    up = Publisher(b).publish_once()
    assert up is not None and [(d.kind, d.key) for d in up.deletions] == [("table", "d.gone")]
    assert cache.delete_log == []  # published: it lives on in the update history only
    b.log["table:d.ghost"] = b.log["table:d.cold"]  # an entry of an object no longer in the catalog
    while b.updates % 3:
        cache.touch(cache.table("d", "cold"))  # type: ignore[arg-type]
        b.build()
    assert b.gcs >= 1 and "table:d.ghost" not in b.log


def test_minimal_mode_sends_names_and_versions_and_fetches_on_demand(server: Server, client: Client) -> None:
    s = CatalogdService(server.uri, port=0, http_port=0, topic_mode="minimal", sync_ddl=True,
                        topic_interval=0.02).start()
    local = Subscriber("m-local", s)
    remote = Subscriber("m-remote", f"http://127.0.0.1:{s.http_port}", poll_wait=0.5)
    c = Client(s.port)
    try:
        deadline = time.time() + 10
        while "m-remote" not in s.publisher.acked:
            assert time.time() < deadline
            time.sleep(0.02)
        db = unique("min")
        c.create_database(Database(db, "", None, {"a": "b"}))
        c.create_table(table(db, "t"))
        ups = [u for u in s.publisher.history if any(e.key == f"{db}.t" for e in u.entries)]
        assert ups and all(e.obj is None for u in ups for e in u.entries)  # names and versions only
        for r in (local.replica, remote.replica):
            assert r.get_database(db).parameters == {"a": "b"}  # fetched on demand
            assert r.get_table(db, "t").tableName == "t"
        t = c.get_table(db, "t")
        t.parameters = dict(t.parameters, v="2")
        c.alter_table(db, "t", t)
        for r in (local.replica, remote.replica):
            assert r.get_table(db, "t").parameters["v"] == "2"  # the newer announced version is fetched
    finally:
        c.close()
        local.close()
        remote.close()
        s.close()


@pytest.mark.parametrize("query", ["/topic?from=999999999&wait=nan", "/topic?from=999999999&wait=inf",
                                   "/sync?event=999999999&timeout=inf", "/sync?event=999999999&timeout=nan"])
def test_a_wait_that_is_no_finite_number_is_a_bad_request(svc: CatalogdService, query: str) -> None:
    # nan or inf would hold the connection's thread without end (nan: spinning on the publisher's condition)
    t0 = time.monotonic()
    with pytest.raises(urllib.error.HTTPError) as h:
        urllib.request.urlopen(f"http://127.0.0.1:{svc.http_port}{query}", timeout=10)
    assert h.value.code == 400 and "not a finite number of seconds" in json.loads(h.value.read())["error"]
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("query", ["/topic?from=<script>" + "x" * 4000, "/sync?event=<script>" + "x" * 4000,
                                   "/sync?event=1&timeout=<script>" + "x" * 4000, "/object?kind=table",
                                   "/object?kind=table&key=<script>" + "x" * 4000, "/sync"])
def test_a_bad_parameter_is_named_and_the_clients_text_not_echoed(svc: CatalogdService, query: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as h:
        urllib.request.urlopen(f"http://127.0.0.1:{svc.http_port}{query}", timeout=10)
    error = json.loads(h.value.read())["error"]
    assert h.value.code == 400 and error.startswith("bad request: ") and len(error) < 100, error
    assert "<script>" not in error and "xxxx" not in error


def test_a_remote_subscriber_not_heard_from_is_forgotten(svc: CatalogdService) -> None:
    # HTTP clients never unregister: a name made up by a client, or a subscriber gone for good, would be held
    # for ever and waited for by every SYNC_DDL after it
    pub = Publisher(TopicBuilder(svc.cache, "full"), remote_ttl=0.3)
    pub.register("ghost")
    pub.register("alive")
    pub.register("in-process", subscriber=object())
    for _ in range(4):
        time.sleep(0.1)
        pub.ack("alive", 1)  # a poll
        pub._forget_silent()
    assert "ghost" not in pub.acked and "ghost" not in pub.subscribers
    assert pub.acked == {"alive": 1, "in-process": 0}


def _get(svc: CatalogdService, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{svc.http_port}{path}", timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as h:
        return h.code, json.loads(h.read())


def test_topic_from_a_version_not_published_here(svc: CatalogdService) -> None:
    """`from` is a version this catalogd published: a negative one is a 400; one beyond the last published
    (another catalogd's before a restart, or made up) gets a full update to start again from, and acknowledges
    nothing -- else a client naming a huge version would satisfy every SYNC_DDL wait without applying anything."""
    name = unique("ahead")
    code, doc = _get(svc, f"/topic?name={name}&from=-1")
    assert code == 400 and doc["error"] == "bad request: from is negative (catalog versions start at 0)", doc
    assert name not in svc.publisher.acked
    deadline = time.monotonic() + 10
    while svc.publisher.sent_version == 0:  # the first update (the bootstrap's catalog) is being published
        assert time.monotonic() < deadline
        time.sleep(0.02)
    published = svc.publisher.sent_version
    code, doc = _get(svc, f"/topic?name={name}&from={published + 10**15}&wait=0")
    assert code == 200 and [(u["from"], u["to"] >= published) for u in doc["updates"]] == [(0, True)], doc
    assert svc.publisher.acked[name] == 0
    code, doc = _get(svc, f"/topic?name={name}&from={published}&wait=0")  # its own version: acknowledged
    assert code == 200 and svc.publisher.acked[name] >= published
    svc.publisher.unregister(name)


def test_a_failure_in_a_request_is_answered_500_without_its_detail(svc: CatalogdService,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> Any:
        raise RuntimeError("secret detail /etc/catalogd.keytab")

    monkeypatch.setattr(svc, "status", broken)  # one method of the real service fails
    with caplog.at_level(logging.ERROR, logger="metastore.catalogd.service"):
        code, doc = _get(svc, "/status")
    assert code == 500 and doc == {"error": "internal error in catalogd (see its log)"}, doc
    [rec] = [r for r in caplog.records if "/status" in r.getMessage()]
    assert rec.exc_info is not None and "secret detail" in str(rec.exc_info[1])  # the log has it, the client not
    monkeypatch.undo()
    assert _get(svc, "/status")[0] == 200  # the server still answers


def test_a_full_update_of_a_restarted_catalogd_replaces_the_replica() -> None:
    """A catalogd restarted numbers its versions anew: its full update (from version 0) has a lower version than
    the replica's, and still replaces it (a table dropped meanwhile is gone); its next delta follows it."""
    r = Replica()
    db = (hms.Database(name="d"), {})
    assert r.apply(TopicUpdate(0, 50, "full", [TopicEntry("database", "d", 1, db),
                                                TopicEntry("table", "d.kept", 2, None),
                                                TopicEntry("table", "d.dropped", 3, None)]))
    assert r.table_names("d") == ["dropped", "kept"] and r.version == 50
    assert r.apply(TopicUpdate(0, 7, "full", [TopicEntry("database", "d", 1, db), TopicEntry("table", "d.kept", 2)]))
    assert r.table_names("d") == ["kept"] and r.version == 7
    assert not r.apply(TopicUpdate(9, 12, "full"))  # a gap after the new version: a full update is asked for
    assert r.apply(TopicUpdate(7, 8, "full", [TopicEntry("table", "d.new", 8)]))
    assert r.table_names("d") == ["kept", "new"] and r.version == 8
