"""Thrift's JSON protocol (TJSONProtocol) for bare structs, as Hive embeds objects in event messages:
`dumps` writes one, `loads` reads one back into a thriftpy2 struct (replication and catalogd apply the objects
of the events they read).

A struct is {"<field id>": {"<type>": value}, ...}; a list is ["<element type>", count, items...]; a map is
["<key type>", "<value type>", count, {key: value}]; booleans are 1/0 and binary is base64.

Each struct class gets a plan once (per field: its JSON head and a writer of its value as text), since event
messages embed thousands of structs (one per partition added) and the generic walk dominated their cost. The
catalog's model classes share the Thrift structs' field names, so a model object is written directly with its
Thrift namesake's plan, without building the Thrift struct first. `dumps_many` writes the structs of one message
and writes a sub-object they share (the same column list, the same serde) once.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, TypeVar, cast

from thriftpy2.thrift import TType

from . import hms

_NAMES = {TType.BOOL: "tf", TType.BYTE: "i8", TType.I16: "i16", TType.I32: "i32", TType.I64: "i64",
          TType.DOUBLE: "dbl", TType.STRING: "str", TType.STRUCT: "rec", TType.MAP: "map", TType.LIST: "lst",
          TType.SET: "set", TType.BINARY: "str"}

Memo = dict[int, str]  # id of a struct (or list of structs) -> its text, within one dumps_many call
Writer = Callable[[Any, "Memo | None"], str]
_S = TypeVar("_S")  # a thriftpy2 struct class
_PLANS: dict[type, list[tuple[str, str, Writer]]] = {}
_text = json.encoder.encode_basestring  # a JSON string literal, non-ASCII kept (as ensure_ascii=False)


def _split(spec: Any) -> tuple[int, Any]:
    """(ttype, type argument) from a thriftpy2 type spec: an int, or (ttype, argument)."""
    if isinstance(spec, tuple):
        return spec[0], spec[1]
    return spec, None


def _binary(v: Any) -> str:
    return base64.b64encode(v if isinstance(v, bytes) else str(v).encode()).decode("ascii").rstrip("=")


def _double(v: Any, memo: Memo | None) -> str:
    return json.dumps(v if math.isfinite(v) else str(v))


def _bool(v: Any, memo: Memo | None) -> str:
    return "1" if v else "0"


def _int(v: Any, memo: Memo | None) -> str:
    return str(v) if type(v) is int else json.dumps(v)


def _bytes(v: Any, memo: Memo | None) -> str:
    return _text(_binary(v))


def _string(v: Any, memo: Memo | None) -> str:
    if isinstance(v, str):
        return _text(v)
    return _text(_binary(v)) if isinstance(v, bytes) else json.dumps(v)


def _writer(ttype: int, arg: Any) -> Writer:
    """The function writing a value of this type as JSON text."""
    if ttype == TType.STRUCT:
        return _struct
    if ttype == TType.BOOL:
        return _bool
    if ttype == TType.DOUBLE:
        return _double
    if ttype == TType.BINARY:
        return _bytes
    if ttype == TType.STRING:
        return _string
    if ttype in (TType.LIST, TType.SET):
        et, ea = _split(arg)
        head, w = f'["{_NAMES[et]}",', _writer(et, ea)

        def seq(v: Any, memo: Memo | None) -> str:
            if not v:
                return head + "0]"
            if memo is not None and et == TType.STRUCT:  # a list of structs (columns) shared by siblings
                hit = memo.get(id(v))
                if hit is not None:
                    return hit
            text = head + str(len(v)) + "," + ",".join([w(x, memo) for x in v]) + "]"
            if memo is not None and et == TType.STRUCT:
                memo[id(v)] = text
            return text
        return seq
    if ttype == TType.MAP:
        (kt, ka), (vt, va) = _split(arg[0]), _split(arg[1])
        head, kw, vw = f'["{_NAMES[kt]}","{_NAMES[vt]}",', _key_writer(kt, ka), _writer(vt, va)

        def mapping(v: Any, memo: Memo | None) -> str:
            return head + str(len(v)) + ",{" + ",".join([_text(kw(k)) + ":" + vw(x, memo) for k, x in v.items()]) + "}]"
        return mapping
    return _int


def _key_writer(ttype: int, arg: Any) -> Callable[[Any], str]:
    """A map key as the text of its JSON string (TJSON keys are strings whatever their type)."""
    if ttype in (TType.STRUCT, TType.LIST, TType.SET, TType.MAP):
        w = _writer(ttype, arg)
        return lambda k: w(list(k) if isinstance(k, tuple) else k, None)
    if ttype == TType.BOOL:
        return lambda k: "1" if k else "0"
    if ttype == TType.BINARY:
        return _binary
    return lambda k: k if isinstance(k, str) else (_binary(k) if isinstance(k, bytes) else str(k))


def _plan(cls: type) -> list[tuple[str, str, Writer]]:
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
            plan.append((f'"{fid}":{{"{_NAMES[ttype]}":', name, _writer(ttype, arg)))
        _PLANS[cls] = plan
    return plan


def _compile(cls: type) -> Writer:
    """The writer of one struct class, as straight-line code over its plan's fields: a partition's struct is
    written once per partition of an event, and a loop over the plan cost twice as much."""
    slots = set(getattr(cls, "__dataclass_fields__", ()))  # model objects have every field they declare
    env: dict[str, Any] = {"_text": _text}
    lines = ["def write(obj, memo):",
             "    if memo is not None:",
             "        hit = memo.get(id(obj))",
             "        if hit is not None:",
             "            return hit",
             "    out = []"]
    for i, (head, name, w) in enumerate(_plan(cls)):
        env[f"h{i}"], env[f"w{i}"] = head, w
        lines.append(f"    v = obj.{name}" if name in slots else f"    v = getattr(obj, {name!r}, None)")
        if w is _string:  # the usual field: a str
            value = f"(_text(v) if type(v) is str else w{i}(v, memo))"
        elif w is _int:
            value = f"(str(v) if type(v) is int else w{i}(v, memo))"
        else:
            value = f"w{i}(v, memo)"
        lines += ["    if v is not None:", f"        out.append(h{i} + {value} + '}}')"]
    lines += ["    text = '{' + ','.join(out) + '}'",
              "    if memo is not None:",
              "        memo[id(obj)] = text",
              "    return text"]
    exec("\n".join(lines), env)  # noqa: S102 - code built above from the class's own field names
    return cast(Writer, env["write"])


_WRITERS: dict[type, Writer] = {}


def _struct(obj: Any, memo: Memo | None) -> str:
    write = _WRITERS.get(type(obj))
    if write is None:
        write = _WRITERS[type(obj)] = _compile(type(obj))
    return write(obj, memo)


def dumps(obj: Any) -> str:
    """One struct (a thriftpy2 struct or the model object of the same name) as TJSON text."""
    return _struct(obj, None)


def dumps_many(objs: list[Any]) -> list[str]:
    """Several structs; sub-objects they share (a batch's partitions often share one column list and serde)
    are written once."""
    memo: Memo = {}  # ids stay unique: `objs` holds every object written until the call returns
    return [_struct(o, memo) for o in objs]


class _Open(Exception):
    """A field left open in a template is not set in the object the template is made from."""


def _template(obj: Any, tree: dict[str, Any], prefix: str, memo: Memo, out: list[Any]) -> None:
    """Appends the text of a struct to `out` as the compiled writer writes it, but with each field named in
    `tree` left open: in its place, (dotted path, writer) of its value. A subtree opens fields of a struct
    inside."""
    out.append("{")
    sep = ""
    for head, name, w in _plan(type(obj)):
        v = getattr(obj, name, None)
        if v is None:
            if name in tree:
                raise _Open(prefix + name)
            continue
        out.append(sep + head)
        sep = ","
        if name not in tree:
            out.append(w(v, memo))
        elif tree[name] is None:
            out.append((prefix + name, w))
        else:
            _template(v, tree[name], prefix + name + ".", memo, out)
        out.append("}")
    out.append("}")


def _rest(cls: type, open_fields: set[str]) -> Callable[[Any], Any]:
    """The values of the fields of a struct that are written and not open, to tell structs written alike."""
    declared = getattr(cls, "__dataclass_fields__", None)  # a model class lacks the Thrift fields it never sets
    names = [name for _, name, _ in _plan(cls)
             if name not in open_fields and (declared is None or name in declared)]
    if not names:
        return lambda obj: ()
    return attrgetter(*names)


def dumps_alike(objs: Sequence[Any], holes: Sequence[str]) -> list[str]:
    """dumps_many for a batch of structs of one class that usually differ only in a few fields (`holes`:
    dotted paths, such as a partition's "values" and "sd.location"). The first one is written once as a
    template with those fields open; every other one equal to it in everything else gets the template with its
    own values in the holes, and the rest are written whole. Equal maps in another order are written in the
    first one's order (a map's order carries nothing)."""
    if len(objs) < 2:
        return dumps_many(list(objs))
    tree: dict[str, Any] = {}
    for path in holes:
        *outer, last = path.split(".")
        node = tree
        for name in outer:
            node = node.setdefault(name, {})
        node[last] = None
    memo: Memo = {}  # ids stay unique: `objs` holds every object written until the call returns
    first = objs[0]
    pieces: list[Any] = []
    try:
        _template(first, tree, "", memo, pieces)
    except _Open:
        return [_struct(o, memo) for o in objs]
    # the template as text, open value, text, ...: adjacent texts joined
    parts: list[Any] = [""]
    for piece in pieces:
        if isinstance(piece, str):
            parts[-1] += piece
        else:
            parts += [piece, ""]
    fixed = parts[0::2]
    fill = [(attrgetter(path), w) for path, w in parts[1::2]]
    # what must equal the first struct's: its class and other fields, then the same of each struct inside
    # that has fields open (reached by their dotted path)
    levels: list[tuple[Callable[[Any], Any] | None, Callable[[Any], Any]]] = []

    def level(path: str, cls: type, node: dict[str, Any]) -> None:
        levels.append((attrgetter(path) if path else None, _rest(cls, set(node))))
        for name, sub in node.items():
            if sub is not None:
                inner = f"{path}.{name}" if path else name
                level(inner, type(attrgetter(inner)(first)), sub)

    level("", type(first), tree)

    def alike_key(obj: Any) -> tuple[Any, ...] | None:
        key: list[Any] = []
        for get, rest in levels:
            x = obj if get is None else get(obj)
            if x is None:
                return None
            key.append(type(x))
            key.append(rest(x))
        return tuple(key)

    model = alike_key(first)
    out: list[str] = []
    for obj in objs:
        if alike_key(obj) == model:
            values = [get(obj) for get, _ in fill]
            if None not in values:
                text = [fixed[0]]
                for v, (_, w), tail in zip(values, fill, fixed[1:]):
                    text.append(w(v, memo))
                    text.append(tail)
                out.append("".join(text))
                continue
        out.append(_struct(obj, memo))
    return out


def struct_doc(obj: Any) -> dict[str, Any]:
    """The parsed TJSON document of a struct."""
    doc: dict[str, Any] = json.loads(dumps(obj))  # a struct writes as a JSON object
    return doc


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


def from_doc(doc: dict[str, Any], cls: type[_S]) -> _S:
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


def loads(text: str, cls: type[_S]) -> _S:
    """The thriftpy2 struct of class `cls` from its TJSON text."""
    return from_doc(json.loads(text), cls)
