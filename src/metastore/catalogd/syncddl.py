"""SYNC_DDL: a change returns only once the topic update that covers it has reached the subscribers.

wait_for_event(event_id): first the cache must have applied every event up to event_id (the processor's
synced id), then the catalog version at that moment must be covered by a published topic update and
acknowledged by every registered subscriber. The whole wait is bounded by one timeout and ends with
SyncDdlTimeout naming what was not reached, never a hang.
"""

from __future__ import annotations

import time
from typing import Any


class SyncDdlTimeout(TimeoutError):
    pass


def wait_for_event(service: Any, event_id: int, timeout: float) -> int:
    """Returns the catalog version the subscribers have reached; raises SyncDdlTimeout."""
    deadline = time.monotonic() + timeout
    proc, pub = service.processor, service.publisher
    if not proc.wait_synced(event_id, timeout):
        raise SyncDdlTimeout(f"SYNC_DDL timed out after {timeout:g}s: catalogd has applied events up to "
                             f"{proc.synced_event_id}, not yet {event_id}")
    version = service.cache.version
    with pub.cond:
        while True:
            behind = sorted(n for n, v in pub.acked.items() if v < version)
            if pub.sent_version >= version and not behind:
                return version
            left = deadline - time.monotonic()
            if left <= 0:
                if pub.sent_version < version:
                    what = f"no topic update covering catalog version {version} was published yet"
                else:
                    what = (f"subscriber(s) {', '.join(behind)} did not apply the topic update covering catalog "
                            f"version {version}")
                raise SyncDdlTimeout(f"SYNC_DDL timed out after {timeout:g}s for event {event_id}: {what}")
            pub.cond.wait(min(left, 0.05))
