"""Assembly: settings -> store -> catalog -> fronts. The one place that wires the layers together."""

from __future__ import annotations

import logging

from .catalog.service import Catalog
from .catalog.warehouse import Warehouse
from .config import Settings
from .store import migrate
from .store.engine import create_engine
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
    return Store(engine)


def build_catalog(settings: Settings) -> Catalog:
    store = open_store(settings)
    catalog = Catalog(store, Warehouse(settings.warehouse_dir), stats_autogather=settings.stats_autogather)
    catalog.ensure_default_database()
    return catalog
