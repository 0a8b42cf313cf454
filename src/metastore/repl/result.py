"""What a REPL DUMP or REPL LOAD reports: the counters both phases keep for one dump."""

from __future__ import annotations

import dataclasses

from .staging import BOOTSTRAP


@dataclasses.dataclass
class ReplResult:
    dump_type: str
    path: str
    from_id: int
    to_id: int
    tables: int = 0
    partitions: int = 0
    functions: int = 0
    events: int = 0
    # `seconds` is left to each subclass: LoadResult's own counters come before it, the field order it always had

    def counts(self, incremental: str) -> str:
        """What the dump held, as both phases print it: the objects of a bootstrap, else `incremental`."""
        if self.dump_type == BOOTSTRAP:
            return f"{self.tables} tables, {self.partitions} partitions, {self.functions} functions"
        return incremental
