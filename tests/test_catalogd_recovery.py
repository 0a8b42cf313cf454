"""catalogd's recovery (issue 23, acceptance 1): the catalog service id. A catalogd numbers its catalog versions
anew at every start; its topic updates and SYNC_DDL answers carry a service id, new at every start, and a
subscriber that sees another id drops its replica and takes a full update. Test: a catalogd restarted on the same
ports with a remote subscriber attached, a table dropped and another created: within the lag bound the
subscriber holds neither the dropped table nor versions of the old catalogd."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable

import pytest
from hive_metastore.ttypes import Database
from test_catalogd_front import table
from test_catalogd_topics import StuckableSubscriber

from metastore.catalogd.catalog import CatalogCache
from metastore.catalogd.service import CatalogdService
from metastore.catalogd.subscriber import NotInReplica, Replica
from metastore.catalogd.topics import Publisher, TopicBuilder, TopicEntry, TopicUpdate

from conftest import Client, Server, unique

LAG_BOUND = 5.0  # seconds from the last change until every subscriber has it (a remote one polls)


def wait_for(pred: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, f"not within {timeout:g}s: {what}"
        time.sleep(0.02)


def set_param(c: Client, db: str, name: str, value: str) -> None:
    t = c.get_table_objects_by_name(db, [name])[0]
    t.parameters = dict(t.parameters or {}, n=value)
    c.alter_table(db, name, t)


def replica_matches(sub: StuckableSubscriber, svc: CatalogdService, db: str) -> bool:
    """The replica holds the tables of `db` catalogd holds, each loaded and at catalogd's version, and comes
    from this catalogd."""
    r = sub.replica
    if r.service_id != svc.service_id:
        return False
    names = svc.cache.table_names(db)
    if r.table_names(db) != names:
        return False
    for n in names:
        t = svc.cache.table(db, n)
        try:
            mine = r.table(db, n)
        except NotInReplica:
            return False
        if t is None or not t.complete or mine.obj is None or mine.version != t.version:
            return False
    return True


def test_restarted_catalogd_subscriber_drops_what_the_old_one_said(server: Server, client: Client) -> None:
    db = unique("rc")
    client.create_database(Database(db, "", None, {}))
    for n in ("keep", "gone"):
        client.create_table(table(db, n))
    a = CatalogdService(server.uri, port=0, http_port=0, topic_interval=0.02).start()
    b: CatalogdService | None = None
    ports = (a.port, a.http_port)
    sub = StuckableSubscriber(unique("sub"), f"http://127.0.0.1:{a.http_port}", poll_wait=0.3)
    try:
        # many versions under the first catalogd, so the second one's numbering passes through the same ones
        for i in range(30):
            set_param(client, db, "keep", str(i))
        a.sync_to_latest()
        wait_for(lambda: replica_matches(sub, a, db) and sub.replica.version == a.publisher.sent_version,
                 LAG_BOUND, "the subscriber follows the first catalogd")
        assert sub.replica.table_names(db) == ["gone", "keep"]
        old_id, old_version = sub.replica.service_id, sub.replica.version
        assert old_id == a.service_id

        sub.stuck.set()  # the subscriber asks nothing while catalogd restarts, and until it has passed old_version
        a.close()
        client.drop_table(db, "gone", True)  # while catalogd is down: the new one never hears of "gone"
        b = CatalogdService(server.uri, port=ports[0], http_port=ports[1], topic_interval=0.02).start()
        assert (b.port, b.http_port) == ports and b.service_id != old_id
        client.create_table(table(db, "new"))
        i = 0
        while b.publisher.sent_version <= old_version + 2:
            # the new catalogd's versions reach the subscriber's: its `from` now names a version the new one
            # published too, but with other contents
            i += 1
            set_param(client, db, "keep", f"b{i}")
            b.sync_to_latest()
            b.publisher.publish_once()
        assert b.publisher.sent_version > old_version
        b.sync_to_latest()
        sub.stuck.clear()
        wait_for(lambda: replica_matches(sub, b, db), LAG_BOUND,
                 "the subscriber holds what the restarted catalogd holds, at its versions")
        r = sub.replica
        assert r.table_names(db) == ["keep", "new"]
        assert r.get_table(db, "keep").parameters["n"] == f"b{i}"
        with pytest.raises(NotInReplica):
            r.table(db, "gone")
        assert r.service_id == b.service_id

        # a SYNC_DDL answer names the service too, and the subscriber counts for it again
        eid = client.get_current_notificationEventId().eventId
        with urllib.request.urlopen(f"http://127.0.0.1:{b.http_port}/sync?event={eid}&timeout=10") as resp:
            doc = json.loads(resp.read())
        assert doc["service_id"] == b.service_id and r.version >= doc["version"]
        with urllib.request.urlopen(f"http://127.0.0.1:{b.http_port}/status") as resp:
            assert json.loads(resp.read())["service_id"] == b.service_id
    finally:
        sub.close()
        if b is not None:
            b.close()
        else:
            a.close()


def test_topic_answers_another_service_with_a_full_update(server: Server, client: Client) -> None:
    """A poll naming another catalog service id (or none of this one's versions) gets a full update, whatever
    version it names; every update names the service."""
    db = unique("rs")
    client.create_database(Database(db, "", None, {}))
    client.create_table(table(db, "t"))
    svc = CatalogdService(server.uri, port=0, http_port=0, topic_interval=0.02).start()
    try:
        svc.sync_to_latest()
        svc.publisher.publish_once()
        v = svc.publisher.sent_version
        set_param(client, db, "t", "1")
        svc.sync_to_latest()
        svc.publisher.publish_once()
        assert svc.publisher.sent_version > v
        base = f"http://127.0.0.1:{svc.http_port}/topic?name={unique('p')}"
        with urllib.request.urlopen(f"{base}&from={v}&service={svc.service_id}") as resp:
            mine = json.loads(resp.read())
        assert mine["service_id"] == svc.service_id
        assert mine["updates"] and all(u["from"] > 0 and u["service_id"] == svc.service_id for u in mine["updates"])
        with urllib.request.urlopen(f"{base}&from={v}&service=another") as resp:
            other = json.loads(resp.read())
        assert [u["from"] for u in other["updates"]] == [0]
        assert other["updates"][0]["service_id"] == svc.service_id
        assert f"{db}.t" in {e[1] for e in other["updates"][0]["entries"]}
    finally:
        svc.close()


def test_replica_drops_its_state_on_a_new_service_id() -> None:
    """In-process: an incremental update of another service empties the replica and is refused (the subscriber
    takes a full update next); a full update of another service replaces the replica."""
    r = Replica()
    assert r.apply(TopicUpdate(0, 5, "full", [TopicEntry("database", "d", 1, ("db", {})),
                                              TopicEntry("table", "d.old", 5, None)], service_id="one"))
    assert r.service_id == "one" and r.table_names("d") == ["old"]
    assert r.apply(TopicUpdate(5, 6, "full", [TopicEntry("table", "d.x", 6, None)], service_id="one"))
    assert not r.apply(TopicUpdate(3, 8, "full", [TopicEntry("table", "d.y", 8, None)], service_id="two"))
    assert (r.version, r.service_id, r.table_names("d"), r.resets) == (0, "", [], 1)
    assert r.apply(TopicUpdate(0, 4, "full", [TopicEntry("table", "d.y", 4, None)], service_id="two"))
    assert (r.version, r.service_id, r.table_names("d")) == (4, "two", ["y"])
    # a full update of yet another service, of a lower version: replaces everything at once
    assert r.apply(TopicUpdate(0, 2, "full", [TopicEntry("table", "d.z", 2, None)], service_id="three"))
    assert (r.version, r.service_id, r.table_names("d"), r.resets) == (2, "three", ["z"], 2)


def test_publisher_updates_carry_the_service_id() -> None:
    cache = CatalogCache()
    pub = Publisher(TopicBuilder(cache, "full", service_id="sid"))
    assert pub.service_id == "sid" and pub.full_update().service_id == "sid"
