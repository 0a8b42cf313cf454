"""The cache's starting point: every database with its functions, every table by name only (incomplete)."""

from __future__ import annotations

from ..thrift import hms
from ..thrift.client import MetastoreClient
from .catalog import CatalogCache


def bootstrap(cache: CatalogCache, ms: MetastoreClient) -> int:
    """Fills the cache with names; returns the event id the processor starts after. The id is read first, so
    whatever changes while names are read is also in the events that follow it (applied idempotently)."""
    eid = ms.current_event_id()
    for name in ms.get_all_databases():
        if cache.excluded(name):
            continue
        try:
            cache.put_database(ms.get_database(name))
            for fn in ms.get_functions(name, "*"):
                cache.put_function(name, ms.get_function(name, fn))
            for tn in ms.get_all_tables(name):
                t = cache.add_table(name, tn)
                if t is not None:
                    t.skipped_event = eid
        except hms.NoSuchObjectException:
            continue  # dropped meanwhile
    return eid
