"""Where the source's managed objects live on the target: the source database's directory is replaced by
the target database's; locations outside it (external tables) are kept as they are."""

from __future__ import annotations

import copy
from typing import Any

from ..catalog.warehouse import Warehouse


def _path(location: str | None) -> str | None:
    p = Warehouse.local_path(location)
    return None if p is None else "/" + p.strip("/")


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
        if p.startswith(self.src + "/"):
            return self.tgt_uri + p[len(self.src):]
        return location

    def to_source(self, location: str | None) -> str | None:
        """The source's local path of a target location under the target database, else None."""
        p = _path(location)
        if p is None or self.src is None or self.tgt is None:
            return None
        if p == self.tgt:
            return self.src
        if p.startswith(self.tgt + "/"):
            return self.src + p[len(self.tgt):]
        return None

    def managed_here(self, location: str | None) -> bool:
        return self.to_source(location) is not None

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
