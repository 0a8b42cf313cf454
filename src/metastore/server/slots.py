"""The connections of one front in one process, counted against its cap (``FrontLimits.max_connections``).

A slot is taken when a connection is accepted and given back when its thread ends (or when no thread could be
started for it); a connection beyond the cap gets no slot, and the refusal is reported once a burst (``Burst``).
The Thrift and the HTTP fronts both count through this class, so they refuse at the same point and say so the
same way; what a refused client is told (nothing, or a 503) stays the front's.

Invariant: ``open`` changes only under the lock. It may be read without it where a stale value costs nothing
but a missed optimisation (the Thrift front's idle poll reads it on every call).
"""

from __future__ import annotations

import threading

from .workers import Burst, FrontLimits


class ConnectionSlots:
    def __init__(self, limits: FrontLimits, refused: Burst) -> None:
        self.limits = limits
        self.open = 0
        self._lock = threading.Lock()
        self._refused = refused

    def take(self) -> bool:
        """A slot for a connection just accepted; False (the refusal noted) when the front is full."""
        with self._lock:
            full = self.open >= self.limits.max_connections
            if not full:
                self.open += 1
        if full:
            self._refused.note(f"{self.limits.max_connections} connections open (max_connections)")
        return not full

    def give_back(self) -> None:
        with self._lock:
            self.open -= 1
