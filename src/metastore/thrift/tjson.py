"""Thrift's JSON protocol (TJSONProtocol) for bare structs, as Hive embeds objects in event messages.

A struct is {"<field id>": {"<type>": value}, ...}; a list is ["<element type>", count, items...]; a map is
["<key type>", "<value type>", count, {key: value}]; booleans are 1/0 and binary is base64.

Each struct class gets a plan once (its fields' ids, names and value writers), since event messages
embed thousands of structs (one per partition added) and the generic walk dominated their cost.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from typing import Any

from thriftpy2.thrift import TType

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
        for fid in sorted(cls.thrift_spec):
            spec = cls.thrift_spec[fid]
            ttype, name = spec[0], spec[1]
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
