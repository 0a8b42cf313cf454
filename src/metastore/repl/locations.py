"""Where the source's managed objects live on the target: the source database's directory is replaced by
the target database's; locations outside it (external tables) are kept as they are.

A dump is input from another system: its locations are compared and mapped as resolved paths, never as
strings, and a location with a `..` segment is refused (neither Hive nor this server stores one), so no
dumped location can lead the load, or its data copy, out of the target database's directory.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from ..catalog.locations import is_under, lexical_path, local_path
from .errors import ReplError


class LocationRefused(ReplError):
    """A dumped location the load refuses (nothing is applied)."""


def _path(location: str | None) -> str | None:
    """The resolved local path of a location (None: not local); ReplError for one that climbs with `..`."""
    p = local_path(location)
    if p is None:
        return None
    if ".." in p.split("/"):
        raise LocationRefused(f"the dump holds the location {location!r}, which climbs with '..': refused")
    return lexical_path(p)


def check_dumped(location: str | None, managed: bool, source_db: str | None, what: str) -> None:
    """Refuse a dumped location that would make the load act outside the target database's directory: one with
    a `..` segment, or a managed object's local location outside the source database's directory (the map
    keeps those as they are, so the target would hold a managed object at the source's own path)."""
    if not location:
        return
    path = _path(location)
    if not managed or path is None:
        return
    src = _path(source_db)
    if src is None or not is_under(path, src):
        raise LocationRefused(f"the dump's managed {what} is at {location}, outside the source database's directory "
                        f"{source_db}: it would be outside the target database's directory. Refused")


class LocationMap:
    def __init__(self, source_db_location: str | None, target_db_location: str | None) -> None:
        self.src = _path(source_db_location)
        self.tgt = _path(target_db_location)
        self.tgt_uri = (target_db_location or "").rstrip("/")

    def to_target(self, location: str | None) -> str | None:
        p = _path(location)
        if p is None or self.src is None or not self.tgt_uri:
            return location
        if p == self.src:
            return self.tgt_uri
        if is_under(p, self.src):
            return self.tgt_uri + p[len(self.src.rstrip("/")):]
        return location

    def to_source(self, location: str | None) -> str | None:
        """The source's local path of a target location under the target database, else None."""
        p = _path(location)
        if p is None or self.src is None or self.tgt is None:
            return None
        if p == self.tgt:
            return self.src
        if is_under(p, self.tgt):
            return self.src.rstrip("/") + p[len(self.tgt.rstrip("/")):]
        return None

    def managed_here(self, location: str | None) -> bool:
        return self.to_source(location) is not None

    def copy_pair(self, target_location: str) -> tuple[str, str]:
        """(source path, target path) of a directory to copy, both checked on the file system (links resolved)
        to be inside their databases' directories: the copy writes and deletes under the target's only."""
        src, dst = self.to_source(target_location), local_path(target_location)
        if src is None or dst is None or self.src is None or self.tgt is None:
            raise ReplError(f"{target_location} is not in the target database's directory {self.tgt_uri}: "
                            "nothing of it is copied")
        for path, root, side in ((src, self.src, "source"), (dst, self.tgt, "target")):
            if not is_under(os.path.realpath(path), os.path.realpath(root)):
                raise ReplError(f"{path} leads out of the {side} database's directory {root} (a link?): "
                                "the data copy is refused")
        return src, dst

    def _sd(self, sd: Any) -> None:
        if sd is None:
            return
        sd.location = self.to_target(sd.location)
        serde = sd.serdeInfo
        if serde is not None and serde.parameters and "path" in serde.parameters:  # Spark's data source tables
            serde.parameters = dict(serde.parameters)
            serde.parameters["path"] = self.to_target(serde.parameters["path"]) or ""

    def table(self, t: Any, db: str) -> Any:
        """A copy of the source's table or partition for the target (the parts this changes are copied)."""
        t = copy.copy(t)
        t.dbName = db
        if t.sd is not None:
            t.sd = copy.copy(t.sd)
            if t.sd.serdeInfo is not None:
                t.sd.serdeInfo = copy.copy(t.sd.serdeInfo)
        self._sd(t.sd)
        return t

    partition = table
