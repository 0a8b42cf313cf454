"""Writes docs/thrift-methods.md: every ThriftHiveMetastore method of Hive 2.3, 3.1 and 4.0 and of our IDL, with
what this server answers and which clients call it.

Inputs, so the table cannot drift from any of them:
- docs/thrift-callers.toml: the method lists of Hive 2.3's, 3.1's and 4.0's IDL and, per client (Hive's own
  HiveMetaStoreClient, Spark, Trino, Impala, Flink, StarRocks, Doris, PyIceberg, hive-metastore-client), the
  methods it calls, each with the source that was read;
- our IDL (src/metastore/thrift/hive_metastore.thrift, loaded as metastore.thrift loads it): a method not in it
  is answered UNKNOWN_METHOD by the Thrift processor;
- our handler (src/metastore/server/handler.py, class Handler and its mixins): which methods it defines, and
  which of them only refuse (see `status`).

    .venv/bin/python scripts/gen_method_table.py            # rewrite docs/thrift-methods.md
    .venv/bin/python scripts/gen_method_table.py --check    # exit 1 when the file is not what this writes
    .venv/bin/python scripts/gen_method_table.py --gaps     # the methods clients call that we answer UNKNOWN_METHOD

tests/test_method_table.py runs --check: a change to the IDL, the handler or the callers data without a
regenerated table fails there.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
import textwrap
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CALLERS = ROOT / "docs" / "thrift-callers.toml"
OUTPUT = ROOT / "docs" / "thrift-methods.md"
VERSIONS = ("2.3", "3.1", "4.0")

# short column names of the callers, in docs/thrift-callers.toml's keys
SHORT = {
    "hive-2.3": "hive2.3",
    "hive-4": "hive4",
    "spark": "spark",
    "trino": "trino",
    "impala": "impala",
    "flink": "flink",
    "starrocks": "starrocks",
    "doris": "doris",
    "pyiceberg": "pyiceberg",
    "hive-metastore-client": "hmsc",
}

# Hive's own HiveMetaStoreClient lists: they wrap nearly every method of their IDL, so the gap list ranks by the
# other clients (the engines) first
HIVE_CLIENTS = ("hive-2.3", "hive-4")

SERVED, NO_EFFECT, PARTLY, REFUSED, UNKNOWN, MISSING = (
    "served", "served, no effect", "served, refuses some requests", "refused", "UNKNOWN_METHOD", "MISSING")


@dataclass(frozen=True)
class Status:
    kind: str
    reason: str = ""

    def cell(self) -> str:
        return f"{self.kind}: {self.reason}" if self.reason else self.kind


def _message(node: ast.expr | None) -> str:
    """The literal text of a raised exception's message (f-string holes as `{...}`), or ''."""
    if node is None:
        return ""
    parts: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            parts.append(sub.value)
        elif isinstance(sub, ast.FormattedValue):
            parts.append("{...}")
    return " ".join(" ".join(parts).split())


def _raise_text(node: ast.Raise) -> str:
    exc = node.exc
    if isinstance(exc, ast.Call):
        return " ".join(_message(a) for a in [*exc.args, *(k.value for k in exc.keywords)] if _message(a))
    return ""


def status(fn: Callable[..., Any] | None) -> Status:
    """What the handler's method does with a call.

    - An explicit marker wins: a method may carry `thrift_status = (kind, reason)` (kind "no effect" or
      "refused"), set by the handler where a reader of the code could not tell.
    - A method whose body (after its docstring) is a single `raise` refuses every call: "refused" with the
      message it raises.
    - A method that raises a message containing "not supported" somewhere else refuses some requests.
    - Anything else is served.
    """
    if fn is None:
        return Status(MISSING)
    marker = getattr(fn, "thrift_status", None)
    if marker is not None:
        kind, reason = marker
        return Status({"no effect": NO_EFFECT, "refused": REFUSED}.get(kind, kind), reason)
    fn = inspect.unwrap(fn)
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) == 1 and isinstance(body[0], ast.Raise):
        return Status(REFUSED, _raise_text(body[0]))
    for node in ast.walk(func):
        if isinstance(node, ast.Raise) and "not supported" in _raise_text(node).lower():
            return Status(PARTLY, _raise_text(node))
    return Status(SERVED)


@dataclass(frozen=True)
class Row:
    method: str
    versions: tuple[bool, ...]
    in_idl: bool
    fb303: bool
    status: Status
    callers: tuple[str, ...]


def collect() -> tuple[dict[str, Any], list[Row]]:
    sys.path.insert(0, str(ROOT / "src"))
    from metastore.server.handler import Handler
    from metastore.thrift import fb303, hms

    data = tomllib.loads(CALLERS.read_text())
    idl = {v: set(data["idl"][v]["methods"]) for v in VERSIONS}
    ours = set(hms.ThriftHiveMetastore.thrift_services)
    fb = set(fb303.FacebookService.thrift_services)
    callers: dict[str, set[str]] = {}
    for key, caller in data["callers"].items():
        for m in caller["methods"]:
            callers.setdefault(m, set()).add(key)
    order = list(data["callers"])
    rows = []
    for m in sorted(set().union(*idl.values()) | ours | set(callers), key=lambda n: (n in fb, n.lower())):
        st = status(getattr(Handler, m, None)) if m in ours else Status(UNKNOWN)
        # every Hive release's service extends fb303's FacebookService
        rows.append(Row(m, tuple(m in idl[v] or m in fb for v in VERSIONS), m in ours, m in fb, st,
                        tuple(k for k in order if k in callers.get(m, ()))))
    return data, rows


def engines(r: Row) -> list[str]:
    return [c for c in r.callers if c not in HIVE_CLIENTS]


def gaps(rows: list[Row]) -> list[Row]:
    """Methods some client calls that we answer UNKNOWN_METHOD: the most engines first, then Hive's clients."""
    return sorted((r for r in rows if r.callers and r.status.kind == UNKNOWN),
                  key=lambda r: (-len(engines(r)), -len(r.callers), r.method))


def _yes(b: bool) -> str:
    return "yes" if b else ""


def render(data: dict[str, Any], rows: list[Row]) -> str:
    count: dict[str, int] = {}
    for r in rows:
        count[r.status.kind] = count.get(r.status.kind, 0) + 1
    hive = [r for r in rows if not r.fb303]
    out = [
        "# ThriftHiveMetastore methods: Hive 2.3, 3.1, 4.0 and this server",
        "",
        "Generated by `scripts/gen_method_table.py` from `docs/thrift-callers.toml` (Hive's method lists and what",
        "each client calls, with the sources read), our IDL (`src/metastore/thrift/hive_metastore.thrift`) and our",
        "handler (`src/metastore/server/handler.py`). Do not edit: run `.venv/bin/python scripts/gen_method_table.py`;",
        "`tests/test_method_table.py` fails when this file is stale.",
        "",
        "Status here: **served**; **served, no effect** (accepted, nothing kept, with the reason); **served, refuses",
        "some requests** (with the error); **refused** (every call gets the error shown); **UNKNOWN_METHOD** (not",
        "in our IDL: the Thrift processor answers TApplicationException UNKNOWN_METHOD).",
        "",
        f"Methods: {len(hive)} ThriftHiveMetastore methods ("
        + ", ".join(f"{sum(1 for r in hive if r.versions[i])} in Hive {v}" for i, v in enumerate(VERSIONS))
        + f"), {sum(1 for r in hive if r.in_idl)} of them in our IDL. Status, fb303's methods included: "
        + "; ".join(f"{k} {n}" for k, n in sorted(count.items())) + ".",
        "",
        "Callers (columns of the table; the sources read are in `docs/thrift-callers.toml`):",
        "",
    ]
    for key, caller in data["callers"].items():
        out.append(f"- `{SHORT.get(key, key)}`: {caller['name']}")
    g = gaps(rows)
    out += ["", f"## Called by clients, answered UNKNOWN_METHOD ({len(g)})", "",
            "Most engines first (Hive's own clients, which wrap nearly every method, rank after them).", "",
            "| Method | Engines | Hive's clients | Hive versions |", "| --- | --- | --- | --- |"]
    for r in g:
        vs = ", ".join(v for v, b in zip(VERSIONS, r.versions) if b)
        eng = engines(r)
        hive = [SHORT.get(c, c) for c in r.callers if c in HIVE_CLIENTS]
        out.append(f"| `{r.method}` | {len(eng)}{': ' if eng else ''}{', '.join(SHORT.get(c, c) for c in eng)} | "
                   f"{', '.join(hive)} | {vs} |")
    out += ["", "## Every method", "",
            "| Method | 2.3 | 3.1 | 4.0 | our IDL | here | callers |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        name = f"`{r.method}`" + (" (fb303)" if r.fb303 else "")
        cell = r.status.cell().replace("|", "\\|")
        out.append(f"| {name} | {' | '.join(_yes(b) for b in r.versions)} | {_yes(r.in_idl)} | {cell} | "
                   f"{', '.join(SHORT.get(c, c) for c in r.callers)} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 if the output file is stale")
    parser.add_argument("--gaps", action="store_true", help="print the methods clients call that we do not know")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the table's path (default: %(default)s)")
    args = parser.parse_args(argv)
    data, rows = collect()
    if args.gaps:
        for r in gaps(rows):
            print(f"{len(engines(r))}  {r.method:45s} {', '.join(SHORT.get(c, c) for c in r.callers)}")
        return 0
    text = render(data, rows)
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run .venv/bin/python scripts/gen_method_table.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
