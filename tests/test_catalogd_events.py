"""Acceptance 1 of catalogd: random event streams (hypothesis) over several databases and tables, made on a
real `metastore serve`, are applied by catalogd's sequential and hierarchical processors; both end in the same
catalog, equal to the metastore's own state, and every table saw its events in order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from metastore.catalogd.catalog import CatalogCache
from metastore.catalogd.events import TableTask, plan
from metastore.catalogd.verify import cache_view, metastore_view

from catalogd_support import Driver, Metastore, ReplayLog, bootstrap, run_catalogd
from conftest import Server, unique

OPS = st.lists(st.tuples(st.sampled_from(Driver.KINDS), st.integers(0, 7), st.integers(0, 7),
                         st.integers(0, 7)), min_size=5, max_size=40)


@pytest.fixture(scope="module")
def ms(server: Server) -> Iterator[Metastore]:
    m = Metastore(server.uri)
    yield m
    m.close()


def check_stream(ms: Metastore, ops: list[tuple[str, int, int, int]], **hier: Any) -> None:
    prefix = unique("ev")
    start_a, start_b = CatalogCache(), CatalogCache()
    start = bootstrap(start_a, ms)
    assert bootstrap(start_b, ms) == start
    driver = Driver(ms, prefix)
    driver.run(ops)
    log = ReplayLog(ms, start, driver.txns)
    results = {}
    for hierarchical, cache in ((False, start_a), (True, start_b)):
        cache, proc, loader = run_catalogd(log, start, hierarchical, cache, **(hier if hierarchical else {}))
        try:
            assert proc.catch_up(60) == log.last
            assert proc.synced_event_id == log.last
            loader.wait_idle(60)
        finally:
            proc.stop()
            loader.close()
        assert proc.metrics.failed == 0
        results[hierarchical] = cache
    mine = {d for d in ms.get_all_databases() if d.startswith(prefix)} | set(driver.dbs())
    expected = metastore_view(ms, mine)
    seq, hier_view = cache_view(results[False], mine), cache_view(results[True], mine)
    assert seq == expected, diff(seq, expected)
    assert hier_view == expected, diff(hier_view, expected)
    # every table saw its events in order, and the same ones in both modes
    hs, hh = results[False].history, results[True].history
    keys = {k for k in hs if k[0].startswith(prefix)} | {k for k in hh if k[0].startswith(prefix)}
    for k in keys:
        assert hs.get(k) == hh.get(k), (k, hs.get(k), hh.get(k), [(e.eventId, e.eventType, e.dbName, e.tableName)
                                                                 for e in log.events])
        assert hs[k] == sorted(hs[k]), k
    # each table task of the log (renames: both sides; transactions: one per table) reached its table
    expected_history: dict[tuple[str, str], list[int]] = {}
    for e in log.events:
        for task in plan(e):
            if isinstance(task, TableTask) and task.db.startswith(prefix):
                expected_history.setdefault(task.key, []).append(e.eventId)
    assert {k: v for k, v in hs.items() if k[0].startswith(prefix)} == expected_history


def diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two views differ (cache first, metastore second), for a readable failure."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b), key=str):
            out += diff(a.get(k, "<missing>"), b.get(k, "<missing>"), f"{path}/{k}")
        return out
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck),
          phases=(Phase.explicit, Phase.reuse, Phase.generate))  # each example is real I/O: no shrinking
@given(ops=OPS)
def test_random_streams(ms: Metastore, ops: list[tuple[str, int, int, int]]) -> None:
    check_stream(ms, ops, db_executors=3, table_executors_per_db=2)


@pytest.mark.slow
# the event processor's logic, on SQLite only: the stores are test_random_streams's
@pytest.mark.parametrize("backend", ["sqlite"], scope="module")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck),
          phases=(Phase.explicit, Phase.reuse, Phase.generate))  # each example is real I/O: no shrinking
@given(ops=st.lists(st.tuples(st.sampled_from(Driver.KINDS), st.integers(0, 7), st.integers(0, 7),
                              st.integers(0, 7)), min_size=20, max_size=120))
def test_random_streams_long(ms: Metastore, ops: list[tuple[str, int, int, int]]) -> None:
    check_stream(ms, ops, db_executors=4, table_executors_per_db=3)
