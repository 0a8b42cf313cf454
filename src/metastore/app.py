"""Assembly: settings -> store -> catalog -> fronts. The one place that wires the layers together."""

from __future__ import annotations

import logging

from .catalog.service import Catalog
from .catalog.locations import LocationPolicy, split_roots
from .catalog.warehouse import Warehouse
from .config import Settings
from .store import migrate
from .store.engine import create_engine, seed_sqlite_stats, store_files
from .store.store import Store

log = logging.getLogger(__name__)


def open_store(settings: Settings, create_if_empty: bool = True) -> Store:
    """The store at settings.db_url, at this code's schema version.

    An empty database gets the schema (so the embedded default needs no set-up step); a database at any
    other version is refused with SchemaVersionError.
    """
    import os
    if settings.db is None:
        os.makedirs(settings.data_dir, exist_ok=True)
    engine = create_engine(settings.db_url, pool_size=settings.pool_size)
    if create_if_empty and migrate.upgrade(engine, only_if_empty=True):
        log.info("empty store at %s: created the schema", engine.url.render_as_string(hide_password=True))
    migrate.check(engine)
    seed_sqlite_stats(engine)
    return Store(engine)


def location_policy(settings: Settings) -> LocationPolicy:
    """Where the server may act: the warehouse and the other allowed roots, the read roots, and the store's
    own files and data directory, which no managed location may contain."""
    import os
    roots = [settings.warehouse_dir] + split_roots(settings.allowed_roots)
    protected = [os.path.abspath(settings.data_dir)] + store_files(settings.db_url)
    return LocationPolicy(roots, split_roots(settings.read_roots), protected)


def build_catalog(settings: Settings) -> Catalog:
    store = open_store(settings)
    from .catalog import partition_filter
    from .notify.retention import parse_duration

    catalog = Catalog(store, Warehouse(settings.warehouse_dir), stats_autogather=settings.stats_autogather,
                      txn_timeout=parse_duration(settings.txn_timeout, 300.0) or 300.0,
                      locations=location_policy(settings))
    catalog.locks.max_open_batch = max(1, settings.txn_max_open_batch)
    partition_filter.set_limits(settings.filter_max_length, settings.filter_max_in_list)
    catalog.locks.release_gone_holders()  # a crashed server's REST commit locks on this machine, now
    catalog.ensure_default_database()
    return catalog


def register_relay(catalog: Catalog, settings: Settings) -> None:
    from .notify.background import register_relay as register

    register(catalog, settings)


def start_notifications(catalog: Catalog, settings: Settings, server_url: str):  # type: ignore[no-untyped-def]
    """Beside the Thrift front: the notification log's cleaner, and the relay to the bus when one is set."""
    from .notify.background import start_notifications as start

    n = start(catalog, settings, server_url)
    if n.relay is not None:
        log.info("notifications: relaying the log to %s", n.relay.broker.describe())
    return n
