"""Helpers for the tests that watch what a server does to a raw connection."""

from __future__ import annotations

import socket
import time


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed the (raw) connection, reading and dropping what it sends; None if it stayed
    open that long."""
    t0 = time.monotonic()
    sock.settimeout(0.1)
    while time.monotonic() - t0 < seconds:
        try:
            if not sock.recv(65536):
                return time.monotonic() - t0
        except TimeoutError:
            continue
        except ConnectionError:
            return time.monotonic() - t0
    return None
