"""Waiting for a server started as a child process (the demo's `metastore serve`, the tests' and the
benchmarks' servers).

The child is up once its port accepts a connection. It has failed when it exits first or when the time runs
out; both raise RuntimeError with the end of the child's log, where it says why. Nothing here starts or stops a
process: the caller owns the child.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_listening(port: int, proc: subprocess.Popen[Any] | None, timeout: float, what: str,
                   log_tail: Callable[[], str], host: str = "127.0.0.1") -> None:
    """Return once `port` accepts; raise if `proc` (None: a process not ours to watch) exits first or
    `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log_tail()}")
        if port_open(port, host):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} in {timeout:.0f} s:\n{log_tail()}")
