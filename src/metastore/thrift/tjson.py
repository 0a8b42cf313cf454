"""Thrift's JSON protocol (TJSONProtocol) for bare structs, as Hive embeds objects in event messages:
`dumps` writes one, `loads` reads one back into a thriftpy2 struct (replication and catalogd apply the objects
of the events they read).

A struct is {"<field id>": {"<type>": value}, ...}; a list is ["<element type>", count, items...]; a map is
["<key type>", "<value type>", count, {key: value}]; booleans are 1/0 and binary is base64.

Each struct class gets a plan once (its fields' ids, names and value writers), since event messages
embed thousands of structs (one per partition added) and the generic walk dominated their cost. The
catalog's model classes share the Thrift structs' field names, so a model object is written directly with its
Thrift namesake's plan, without building the Thrift struct first.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from typing import Any

from thriftpy2.thrift import TType

from . import hms

_NAMES = {TType.BOOL: "tf", TType.BYTE: "i8", TType.I16: "i16", TType.I32: "i32", TType.I64: "i64",
          TType.DOUBLE: "dbl", TType.STRING: "str", TType.STRUCT: "rec", TType.MAP: "map", TType.LIST: "lst",
          TType.SET: "set", TType.BINARY: "str"}

Writer = Callable[[Any], Any]
_PLANS: dict[type, list[tuple[str, str, str, Writer | None]]] = {}


def _split(spec: Any) -> tuple[int, Any]:
    """(ttype, type argument) from a thriftpy2 type spec: an int, or (ttype, argument)."""
    if isinstance(spec, tuple):
        return spec[0], spec[1]
    return spec, None


def _binary(v: Any) -> str:
    return base64.b64encode(v if isinstance(v, bytes) else str(v).encode()).decode("ascii").rstrip("=")


def _double(v: float) -> Any:
    return v if math.isfinite(v) else str(v)


def _bool(v: Any) -> int:
    return 1 if v else 0


def _string(v: Any) -> Any:
    return _binary(v) if isinstance(v, bytes) else v


def _writer(ttype: int, arg: Any) -> Writer | None:
    """A function writing a value of this type, or None when the value is written as it is."""
    if ttype == TType.STRUCT:
        return struct_doc
    if ttype == TType.BOOL:
        return _bool
    if ttype == TType.DOUBLE:
        return _double
    if ttype == TType.BINARY:
        return _binary
    if ttype == TType.STRING:
        return _string
    if ttype in (TType.LIST, TType.SET):
        et, ea = _split(arg)
        name, w = _NAMES[et], _writer(et, ea)
        if w is None:
            return lambda v: [name, len(v), *v]
        return lambda v: [name, len(v), *(w(x) for x in v)]
    if ttype == TType.MAP:
        (kt, ka), (vt, va) = _split(arg[0]), _split(arg[1])
        kn, vn, kw, vw = _NAMES[kt], _NAMES[vt], _key_writer(kt, ka), _writer(vt, va)
        if vw is None:
            return lambda v: [kn, vn, len(v), {kw(k): x for k, x in v.items()}]
        return lambda v: [kn, vn, len(v), {kw(k): vw(x) for k, x in v.items()}]
    return None


def _key_writer(ttype: int, arg: Any) -> Writer:
    if ttype in (TType.STRUCT, TType.LIST, TType.SET, TType.MAP):
        w = _writer(ttype, arg)
        assert w is not None
        return lambda k: json.dumps(w(list(k) if isinstance(k, tuple) else k), separators=(",", ":"))
    if ttype == TType.BOOL:
        return lambda k: "1" if k else "0"
    return str


def _plan(cls: type) -> list[tuple[str, str, str, Writer | None]]:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = []
        if hasattr(cls, "thrift_spec"):
            thrift_spec, skip = cls.thrift_spec, set()
        else:  # a model class: its store bookkeeping (id, version) is not part of the object Hive sends
            thrift_spec, skip = getattr(hms, cls.__name__).thrift_spec, {"id", "version"}
        for fid in sorted(thrift_spec):
            spec = thrift_spec[fid]
            ttype, name = spec[0], spec[1]
            if name in skip:
                continue
            arg = spec[2] if len(spec) > 3 else None
            plan.append((str(fid), name, _NAMES[ttype], _writer(ttype, arg)))
        _PLANS[cls] = plan
    return plan


def struct_doc(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fid, name, tname, w in _plan(type(obj)):
        v = getattr(obj, name, None)
        if v is not None:
            out[fid] = {tname: v if w is None else w(v)}
    return out


def dumps(obj: Any) -> str:
    return json.dumps(struct_doc(obj), separators=(",", ":"), ensure_ascii=False)


# ---- reading -----------------------------------------------------------------------------------------

def _read(ttype: int, arg: Any, v: Any) -> Any:
    if ttype == TType.STRUCT:
        return from_doc(v, arg)
    if ttype == TType.BOOL:
        return bool(v)
    if ttype == TType.DOUBLE:
        return float(v)
    if ttype == TType.BINARY:
        return base64.b64decode(v + "=" * (-len(v) % 4))
    if ttype in (TType.LIST, TType.SET):
        et, ea = _split(arg)
        items = [_read(et, ea, x) for x in v[2:]]
        return set(items) if ttype == TType.SET else items
    if ttype == TType.MAP:
        (kt, ka), (vt, va) = _split(arg[0]), _split(arg[1])
        return {_read_key(kt, ka, k): _read(vt, va, x) for k, x in (v[3] if len(v) > 3 else {}).items()}
    return v


def _read_key(ttype: int, arg: Any, k: str) -> Any:
    if ttype in (TType.STRUCT, TType.LIST, TType.SET, TType.MAP):
        v = _read(ttype, arg, json.loads(k))
        return tuple(v) if isinstance(v, list) else v  # thriftpy2 keys its list-keyed maps by tuples
    if ttype in (TType.I08, TType.I16, TType.I32, TType.I64):
        return int(k)
    if ttype == TType.BOOL:
        return k == "1"
    if ttype == TType.DOUBLE:
        return float(k)
    return k


def from_doc(doc: dict[str, Any], cls: type) -> Any:
    """The thriftpy2 struct of class `cls` from its parsed TJSON document."""
    kwargs: dict[str, Any] = {}
    for fid, spec in cls.thrift_spec.items():  # type: ignore[attr-defined]
        cell = doc.get(str(fid))
        if not cell:
            continue
        ttype, name = spec[0], spec[1]
        arg = spec[2] if len(spec) > 3 else None
        (_, raw), = cell.items()
        kwargs[name] = _read(ttype, arg, raw)
    return cls(**kwargs)


def loads(text: str, cls: type) -> Any:
    """The thriftpy2 struct of class `cls` from its TJSON text."""
    return from_doc(json.loads(text), cls)
