"""Topic updates and cached objects as JSON, for catalogd's HTTP endpoint (Thrift objects as Thrift-JSON)."""

from __future__ import annotations

from typing import Any

from ..thrift import hms, tjson
from .catalog import Deletion, FileMeta
from .topics import TableSnapshot, TopicEntry, TopicUpdate

# Thrift-JSON documents of partitions, by the partition object: a table's unchanged partitions are the same
# objects from one version of the table to the next, and a full topic update resends the whole table.
_DOCS: dict[int, tuple[Any, Any]] = {}
_DOCS_MAX = 500_000


def _doc(obj: Any) -> Any:
    hit = _DOCS.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    if len(_DOCS) >= _DOCS_MAX:
        _DOCS.clear()
    d = tjson.struct_doc(obj)
    _DOCS[id(obj)] = (obj, d)  # the reference keeps the id from being reused while the entry lives
    return d


class Decoder:
    """Decodes topic updates, reusing the partitions of a table that arrive unchanged in its next version."""

    def __init__(self) -> None:
        self.parts: dict[str, dict[str, tuple[Any, Any]]] = {}  # table key -> partition name -> (doc, obj)

    def table(self, doc: dict[str, Any]) -> TableSnapshot:
        key = f"{doc['db']}.{doc['name']}"
        before = self.parts.get(key, {})
        now: dict[str, tuple[Any, Any]] = {}
        for n, pd in doc["partitions"].items():
            hit = before.get(n)
            now[n] = hit if hit is not None and hit[0] == pd else (pd, tjson.from_doc(pd, hms.Partition))
        self.parts[key] = now
        return TableSnapshot(doc["db"], doc["name"], doc["version"],
                             tjson.from_doc(doc["obj"], hms.Table) if doc["obj"] is not None else None,
                             {n: o for n, (_, o) in now.items()},
                             {loc: [FileMeta(*f) for f in fs] for loc, fs in doc["files"].items()})

    def update(self, doc: dict[str, Any]) -> TopicUpdate:
        entries = []
        for k, key, v, o in doc["entries"]:
            obj = (self.table(o) if k == "table" and o is not None else object_from_json(k, o))
            entries.append(TopicEntry(k, key, v, obj))
        for _, kind, key in doc["deletions"]:
            if kind == "table":
                self.parts.pop(key, None)
        return TopicUpdate(doc["from"], doc["to"], doc["mode"], entries,
                           [Deletion(v, k, key) for v, k, key in doc["deletions"]], doc.get("created", 0.0),
                           str(doc.get("service_id") or ""))


def object_to_json(kind: str, obj: Any) -> Any:
    if obj is None:
        return None
    if kind == "database":
        db, fns = obj
        return {"db": tjson.struct_doc(db), "functions": {n: tjson.struct_doc(f) for n, f in fns.items()}}
    t: TableSnapshot = obj
    return {"db": t.db, "name": t.name, "version": t.version,
            "obj": tjson.struct_doc(t.obj) if t.obj is not None else None,
            "partitions": {n: _doc(p) for n, p in t.partitions.items()},
            "files": {loc: [[f.name, f.size, f.mtime] for f in fs] for loc, fs in t.files.items()}}


def object_from_json(kind: str, doc: Any) -> Any:
    if doc is None:
        return None
    if kind == "database":
        return (tjson.from_doc(doc["db"], hms.Database),
                {n: tjson.from_doc(f, hms.Function) for n, f in doc["functions"].items()})
    return TableSnapshot(doc["db"], doc["name"], doc["version"],
                         tjson.from_doc(doc["obj"], hms.Table) if doc["obj"] is not None else None,
                         {n: tjson.from_doc(p, hms.Partition) for n, p in doc["partitions"].items()},
                         {loc: [FileMeta(*f) for f in fs] for loc, fs in doc["files"].items()})


def update_to_json(up: TopicUpdate) -> dict[str, Any]:
    return {"from": up.from_version, "to": up.to_version, "mode": up.mode, "created": up.created,
            "service_id": up.service_id,
            "entries": [[e.kind, e.key, e.version, object_to_json(e.kind, e.obj)] for e in up.entries],
            "deletions": [[d.version, d.kind, d.key] for d in up.deletions]}


def update_from_json(doc: dict[str, Any]) -> TopicUpdate:
    return TopicUpdate(doc["from"], doc["to"], doc["mode"],
                       [TopicEntry(k, key, v, object_from_json(k, o)) for k, key, v, o in doc["entries"]],
                       [Deletion(v, k, key) for v, k, key in doc["deletions"]], doc.get("created", 0.0),
                       str(doc.get("service_id") or ""))
