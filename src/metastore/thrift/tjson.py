"""Thrift's JSON protocol (TJSONProtocol) for bare structs, as Hive embeds objects in event messages.

A struct is {"<field id>": {"<type>": value}, ...}; a list is ["<element type>", count, items...]; a map is
["<key type>", "<value type>", count, {key: value}]; booleans are 1/0 and binary is base64.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from thriftpy2.thrift import TType

_NAMES = {TType.BOOL: "tf", TType.BYTE: "i8", TType.I16: "i16", TType.I32: "i32", TType.I64: "i64",
          TType.DOUBLE: "dbl", TType.STRING: "str", TType.STRUCT: "rec", TType.MAP: "map", TType.LIST: "lst",
          TType.SET: "set", TType.BINARY: "str"}


def _split(spec: Any) -> tuple[int, Any]:
    """(ttype, type argument) from a thriftpy2 type spec: an int, or (ttype, argument)."""
    if isinstance(spec, tuple):
        return spec[0], spec[1]
    return spec, None


def _value(ttype: int, arg: Any, v: Any) -> Any:
    if ttype == TType.STRUCT:
        return struct_doc(v)
    if ttype == TType.BOOL:
        return 1 if v else 0
    if ttype == TType.DOUBLE:
        return v if math.isfinite(v) else str(v)
    if ttype == TType.BINARY or (ttype == TType.STRING and isinstance(v, bytes)):
        return base64.b64encode(v).decode("ascii").rstrip("=")
    if ttype in (TType.LIST, TType.SET):
        et, ea = _split(arg)
        return [_NAMES[et], len(v), *(_value(et, ea, x) for x in v)]
    if ttype == TType.MAP:
        (kt, ka), (vt, va) = _split(arg[0]), _split(arg[1])
        return [_NAMES[kt], _NAMES[vt], len(v), {_key(kt, ka, k): _value(vt, va, x) for k, x in v.items()}]
    return v


def _key(ttype: int, arg: Any, k: Any) -> str:
    if ttype in (TType.STRUCT, TType.LIST, TType.SET, TType.MAP):
        return json.dumps(_value(ttype, arg, list(k) if isinstance(k, tuple) else k), separators=(",", ":"))
    if ttype == TType.BOOL:
        return "1" if k else "0"
    return str(k)


def struct_doc(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fid in sorted(obj.thrift_spec):
        spec = obj.thrift_spec[fid]
        ttype, name = spec[0], spec[1]
        v = getattr(obj, name, None)
        if v is None:
            continue
        arg = spec[2] if len(spec) > 3 else None
        out[str(fid)] = {_NAMES[ttype]: _value(ttype, arg, v)}
    return out


def dumps(obj: Any) -> str:
    return json.dumps(struct_doc(obj), separators=(",", ":"), ensure_ascii=False)
