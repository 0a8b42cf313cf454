"""The benchmark's reference on PostgreSQL and MariaDB (bench/common.JdbcReference, bench/run.ReferenceOnDb):
its settings, which reference each of our stores is compared with, and the real Hive metastore on both databases."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import run as bench  # noqa: E402

from common import JdbcReference  # noqa: E402


def _settings(site: str) -> dict[str, str]:
    root = ET.fromstring(site)
    names = [p.findtext("name") for p in root.iter("property")]
    assert len(names) == len(set(names)), "a setting given twice"
    return {p.findtext("name") or "": p.findtext("value") or "" for p in root.iter("property")}


def test_hive_site_names_the_database_and_keeps_the_rest(tmp_path: Path) -> None:
    jdbc = bench.reference_jdbc("mariadb", "hmsref_x")
    jdbc = type(jdbc)(jdbc.store, jdbc.url + "&useSSL=false", jdbc.user, jdbc.password, jdbc.properties)
    site = _settings(JdbcReference(tmp_path, 9999, jdbc).hive_site())
    assert site["javax.jdo.option.ConnectionURL"] == jdbc.url  # the & survives as XML
    assert site["javax.jdo.option.ConnectionDriverName"] == "org.mariadb.jdbc.Driver"
    assert site["javax.jdo.option.ConnectionUserName"] == "hive_ref"
    assert site["javax.jdo.option.ConnectionPassword"] == "hive_ref"
    assert site["datanucleus.rdbms.datastoreAdapterClassName"].endswith("MySQLAdapter")
    # the template's other settings are the Derby reference's: same listener, pool, warehouse, port
    assert site["hive.metastore.transactional.event.listeners"].endswith("DbNotificationListener")
    assert site["hive.metastore.warehouse.dir"] == str(tmp_path / "warehouse")
    assert site["hive.metastore.port"] == "9999"
    assert "derby" not in " ".join(site.values()).lower()


def test_each_store_is_compared_with_the_reference_on_its_kind_of_database() -> None:
    ours = {"sqlite": {"get_table_1": 1000.0}, "postgres": {"get_table_1": 400.0},
            "mariadb": {"get_table_1": 300.0}}
    refs = {"derby": {"get_table_1": 100.0}, "postgres": {"get_table_1": 50.0}}
    row = next(r for r in bench.build_rows(bench.QUICK, ours, refs) if r["id"] == "get_table_1")
    assert row["reference"] == 100.0  # the targets' reference: Derby
    assert row["reference_store"] == {"sqlite": "derby", "postgres": "postgres", "mariadb": "derby"}
    assert row["ratio"] == {"sqlite": 10.0, "postgres": 8.0, "mariadb": 3.0}
    md = bench.markdown(bench.build_rows(bench.QUICK, ours, refs),
                        {"quick": True, "finished": "now", "command": "c", "host": {"cpus": 2, "python": "3"},
                         "references": {"reference": "on Derby", "reference:postgres": "on PostgreSQL"}})
    assert "## ours on postgres vs reference on postgres" in md and "## ours on mariadb vs reference on derby" in md
    no_ref = bench.build_rows(bench.QUICK, ours, None)
    assert all(r["reference"] is None and set(r["ratio"].values()) == {None} for r in no_ref)


def _exists(store: str, name: str) -> bool:
    admin = bench._admin(store)
    try:
        with admin.connect() as c:
            q = ("SELECT 1 FROM pg_database WHERE datname = :n" if store == "postgres"
                 else "SELECT 1 FROM information_schema.schemata WHERE schema_name = :n")
            return c.execute(sa.text(q), {"n": name}).first() is not None
    finally:
        admin.dispose()


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("store", ["postgres", "mariadb"])
def test_the_reference_runs_on_the_database(store: str, tmp_path: Path) -> None:
    from hive_metastore.ttypes import AddPartitionsRequest, Database, NotificationEventRequest

    ref = bench.ReferenceOnDb(store, tmp_path / "ref")
    try:
        ref.start()
        assert _exists(store, ref.db_name)
        c = bench.Client(ref.port)
        try:
            c.create_database(Database(name="b", description="", parameters={}))
            c.create_table(bench.table("b", "t"))
            parts = bench.partitions("b", "t", 200)
            c.add_partitions_req(AddPartitionsRequest(dbName="b", tblName="t", parts=parts, ifNotExists=False,
                                                      needResult=False))
            day = bench.days()[3]
            got = c.get_partitions_by_filter("b", "t", f'ds = "{day}"', -1)
            assert sorted(p.values[1] for p in got) == ["0", "1"] and {p.values[0] for p in got} == {day}
            events = c.get_next_notification(NotificationEventRequest(lastEvent=0, maxEvents=100)).events
            assert [e.eventType for e in events] == ["CREATE_DATABASE", "CREATE_TABLE", "ADD_PARTITION"]
        finally:
            c.close()
        log = (ref.workdir / "logs" / "hms.log").read_text()
        assert "Using direct SQL" in log  # Hive's fast path, not its ORM fallback
        assert "falling back to ORM" not in log.lower()
    finally:
        ref.stop()
    assert not _exists(store, ref.db_name)
