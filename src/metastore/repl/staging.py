"""The staging directory, in Hive's layout.

    <hive.repl.rootdir>/<base64(source db)>/<dump id>/
        _dumpmetadata          one tab-separated line: type, from id, to id, cm root (unused), source db,
                               dump time (epoch ms), dump id
        _db                    the source database (Thrift JSON), for its location and parameters
        BOOTSTRAP: <db>/<table>/_metadata   the table and its partitions; <db>/_functions/<name>/_metadata
        INCREMENTAL: <event id>/_metadata   one directory per event: the event's header and message
        _dump_execution_id     the scheduled execution that took the dump (policies only)
        _finished_dump         written last by DUMP
        _load_progress         the last event an unfinished load applied (where a rerun resumes)
        _finished_load         written last by LOAD
        _non_recoverable       a load failed in a way a retry cannot fix (cleared by `metastore repl reset`)

Files are written to a temporary name and renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import time
from collections.abc import Iterator
from typing import Any

from .errors import ReplError

BOOTSTRAP = "BOOTSTRAP"
INCREMENTAL = "INCREMENTAL"
DUMP_METADATA = "_dumpmetadata"
FINISHED_DUMP = "_finished_dump"
FINISHED_LOAD = "_finished_load"
NON_RECOVERABLE = "_non_recoverable"
DUMP_EXECUTION = "_dump_execution_id"
ROOTDIR_KEY = "hive.repl.rootdir"


def db_dir(root: str, db: str) -> str:
    return os.path.join(root, base64.urlsafe_b64encode(db.lower().encode()).decode("ascii"))


@dataclasses.dataclass(frozen=True)
class DumpMeta:
    dump_type: str
    from_id: int
    to_id: int
    db: str
    dumped_at_ms: int
    dump_id: str

    def line(self) -> str:
        return "\t".join([self.dump_type, str(self.from_id), str(self.to_id), "", self.db,
                          str(self.dumped_at_ms), self.dump_id]) + "\n"

    @classmethod
    def parse(cls, text: str, where: str) -> DumpMeta:
        f = text.rstrip("\n").split("\t")
        if len(f) < 7 or f[0] not in (BOOTSTRAP, INCREMENTAL):
            raise ReplError(f"{where}: not a dump metadata file (expected 7 tab-separated fields)")
        try:
            return cls(f[0], int(f[1]), int(f[2]), f[4], int(f[5]), f[6])
        except ValueError:
            raise ReplError(f"{where}: malformed dump metadata {text.strip()!r}") from None


def write_atomic(path: str, text: str, sync: bool = True) -> None:
    """Write by rename. `sync=False` for files rewritten often (a load's progress): the rename alone
    survives a killed process, and only a machine crash could lose the last write (replayed, harmlessly)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path: str, doc: Any, sync: bool = True) -> None:
    write_atomic(path, json.dumps(doc, separators=(",", ":")), sync)


def read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ReplError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise ReplError(f"{path} is not valid JSON: {e}") from None


class Dump:
    """One dump directory."""

    def __init__(self, path: str, meta: DumpMeta) -> None:
        self.path = path
        self.meta = meta

    def file(self, *parts: str) -> str:
        return os.path.join(self.path, *parts)

    def has(self, name: str) -> bool:
        return os.path.exists(self.file(name))

    @property
    def dumped(self) -> bool:
        return self.has(FINISHED_DUMP)

    @property
    def loaded(self) -> bool:
        return self.has(FINISHED_LOAD)

    def failure(self) -> str | None:
        if not self.has(NON_RECOVERABLE):
            return None
        with open(self.file(NON_RECOVERABLE), encoding="utf-8") as f:
            return f.read().strip()

    def mark(self, name: str, text: str = "") -> None:
        write_atomic(self.file(name), text or f"{int(time.time() * 1000)}\n")

    def event_dirs(self) -> Iterator[tuple[int, str]]:
        """(event id, directory) of an incremental dump, in id order."""
        ids = sorted(int(n) for n in os.listdir(self.path) if n.isdigit())
        for i in ids:
            yield i, self.file(str(i))

    def __repr__(self) -> str:
        return f"Dump({self.path}, {self.meta.dump_type} {self.meta.from_id}..{self.meta.to_id})"


class Staging:
    """The dumps of one source database under a staging root."""

    def __init__(self, root: str, db: str) -> None:
        self.root = root
        self.db = db.lower()
        self.dir = db_dir(root, db)

    def dumps(self) -> list[Dump]:
        """Every dump with readable metadata, oldest first. An unreadable staging directory is an error."""
        if not os.path.exists(self.dir):
            return []
        try:
            names = os.listdir(self.dir)
        except OSError as e:
            raise ReplError(f"cannot read the staging directory {self.dir}: {e.strerror or e}") from None
        out = []
        for n in names:
            p = os.path.join(self.dir, n)
            meta_path = os.path.join(p, DUMP_METADATA)
            if not os.path.isdir(p):
                continue
            try:
                with open(meta_path, encoding="utf-8") as f:
                    text = f.read()
            except FileNotFoundError:
                continue  # a dump that died before writing its metadata: never acknowledged, ignored
            except OSError as e:
                raise ReplError(f"cannot read {meta_path}: {e.strerror or e}") from None
            out.append(Dump(p, DumpMeta.parse(text, meta_path)))
        out.sort(key=lambda d: (d.meta.dumped_at_ms, d.meta.to_id))
        return out

    def newest_dumped(self) -> Dump | None:
        done = [d for d in self.dumps() if d.dumped]
        return done[-1] if done else None

    def to_load(self) -> list[Dump]:
        """Dumps with `_finished_dump` and no `_finished_load`, oldest first (LOAD takes them in order)."""
        return [d for d in self.dumps() if d.dumped and not d.loaded]

    def new_dump(self, meta: DumpMeta) -> Dump:
        path = os.path.join(self.dir, meta.dump_id)
        try:
            os.makedirs(path)
        except OSError as e:
            raise ReplError(f"cannot create the dump directory {path}: {e.strerror or e}") from None
        d = Dump(path, meta)
        write_atomic(d.file(DUMP_METADATA), meta.line())
        return d
