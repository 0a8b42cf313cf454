"""The audit log: one JSON line per call of any front (README "Security"), for a log shipper.

A line holds the time (UTC, ISO 8601 with milliseconds), the front (thrift, rest), the principal and how it was
authenticated, the client's address, the method, the objects the authorizer checked, whether the call was
allowed or denied (and the privilege refused), and the result (ok or the error's type). Never a secret, never a
request's payload: names are clipped (MAX_FIELD characters) and written as JSON strings, so a client's text
cannot forge a line.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import IO

from ..core import identity

MAX_FIELD = 512
MAX_OBJECTS = 32


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_FIELD:
        return text
    return text[:MAX_FIELD] + "..."


class AuditLog:
    """Appends lines to a file (opened in append mode, one write per line under a lock: lines from the
    threads of a process never interleave; each process of a server appends whole lines) or to stdout ("-")."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._out: IO[str] = sys.stdout if path == "-" else open(path, "a", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()

    def record(self, front: str, call: identity.Call, error: BaseException | None) -> None:
        p = identity.current()
        now = time.time()
        line = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z",
            "front": front,
            "principal": _clip(p.name),
            "auth": p.method,
            "address": p.address,
            "method": _clip(call.method),
            "objects": [_clip(o) for o in call.objects[:MAX_OBJECTS]],
            "allowed": call.denied is None,
            "denied": call.denied,
            "result": "ok" if error is None else type(error).__name__,
        }
        if p.real_user is not None:  # a proxy user acting for `principal`
            line["real_user"] = _clip(p.real_user)
        text = json.dumps(line, ensure_ascii=True, separators=(",", ":")) + "\n"
        with self._lock:
            self._out.write(text)

    def close(self) -> None:
        if self._out is not sys.stdout:
            self._out.close()
