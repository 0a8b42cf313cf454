"""Replication of a database between metastores: REPL DUMP on the source, REPL LOAD on the target.

    from metastore.repl import replicate
    replicate("thrift://src:9083", "thrift://tgt:9083", "sales", root="/shared/repl")

Both sides are reached through their Thrift API only. See staging.py for the dump layout, dump.py and
load.py for the two phases, copy.py for the data.
"""

from __future__ import annotations

import os

from .dump import DumpResult, dump
from .errors import NeedsReset, NothingToDo, ReplError
from .load import LoadResult, load, reset, status
from .staging import ROOTDIR_KEY

__all__ = ["DumpResult", "LoadResult", "NeedsReset", "NothingToDo", "ReplError", "dump", "load", "replicate",
           "reset", "root_dir", "status"]


def root_dir(options: dict[str, str]) -> str:
    """The staging root: `hive.repl.rootdir` in the options, else $METASTORE_REPL_ROOTDIR, else ./repl."""
    return options.get(ROOTDIR_KEY) or os.environ.get("METASTORE_REPL_ROOTDIR") or os.path.abspath("repl")


def replicate(source_uri: str, target_uri: str, db: str, target_db: str | None = None,
              options: dict[str, str] | None = None) -> tuple[DumpResult | None, list[LoadResult]]:
    """One cycle: dump `db` (bootstrap the first time, incremental after) and load it into `target_db`.

    Loads any dump left unloaded first, so a cycle after a crash completes the previous one."""
    opts = dict(options or {})
    root = root_dir(opts)
    loaded: list[LoadResult] = []
    try:
        loaded += load(target_uri, db, target_db or db, root, opts)
    except NothingToDo:
        pass
    d = dump(source_uri, db, root)
    loaded += load(target_uri, db, target_db or db, root, opts)
    return d, loaded
