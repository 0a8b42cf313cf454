"""Several server processes on one port (SO_REUSEPORT), so calls are not serialized by one interpreter.

Every worker has its own store connections and its own cache of serialized forms; the caches stay exact
because each read checks the table's version in the shared database. The parent only supervises: it
restarts a worker that dies, stops them all on SIGTERM/SIGINT, and each worker dies with the parent
(PR_SET_PDEATHSIG), so a `kill -9` of the server leaves no orphan holding the port.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:  # not Linux: the parent still stops its workers on a clean exit
        pass


def supervise(workers: int, run_worker: Callable[[int], None]) -> None:
    """Run `run_worker(i)` in `workers` child processes until SIGTERM/SIGINT; restart any that die."""
    children: dict[int, int] = {}
    stopping = False

    def spawn(i: int) -> None:
        gc.freeze()  # the parent's objects stay out of the children's collections: their pages stay shared
        pid = os.fork()
        if pid == 0:  # the worker
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _die_with_parent()
            code = 0
            try:
                run_worker(i)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
            except BaseException:
                log.exception("worker %d failed", i)
                code = 1
            finally:
                os._exit(code)
        children[pid] = i

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for i in range(workers):
        spawn(i)
    restarts: list[float] = []
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        i = children.pop(pid, None)
        if i is None or stopping:
            continue
        log.warning("worker %d (pid %d) exited with status %d; restarting it", i, pid, status)
        restarts = [t for t in restarts if t > time.time() - 60] + [time.time()]
        if len(restarts) > 10 * workers:  # crashing in a loop: give up rather than spin
            stop()
            sys.exit("metastore workers keep failing; see the log")
        spawn(i)
