"""Several server processes on one port, so calls are not serialized by one interpreter; and the resource
bounds each process's fronts keep (FrontLimits, AcceptErrors).

The parent binds each front's listening socket (`listen`) before it forks; every worker adopts the same socket
(ThriftServer.adopt, RestServer.adopt) and accepts on it, so the kernel spreads connections over them.

Every worker has its own store connections and its own cache of serialized forms; the caches stay exact
because each read checks the table's version in the shared database. The parent only supervises: it
restarts a worker that dies, stops them all on SIGTERM/SIGINT, and each worker dies with the parent
(PR_SET_PDEATHSIG), so a `kill -9` of the server leaves no orphan holding the port.
"""

from __future__ import annotations

import ctypes
import errno
import gc
import logging
import os
import resource
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Settings

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:  # not Linux: the parent still stops its workers on a clean exit
        pass


def listen(host: str, port: int, backlog: int = 1024) -> socket.socket:
    """A listening TCP socket on host:port (port 0: any free port), for a front to adopt."""
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        s.listen(backlog)  # a burst of connections waits here rather than in the clients' SYN retries
    except BaseException:
        s.close()
        raise
    return s


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
        if pid not in children:
            continue
        i = children.pop(pid)
        if stopping:
            continue
        log.warning("worker %d (pid %d) exited with status %d; restarting it", i, pid, status)
        restarts = [t for t in restarts if t > time.time() - 60] + [time.time()]
        if len(restarts) > 10 * workers:  # crashing in a loop: give up rather than spin
            stop()
            sys.exit("metastore workers keep failing; see the log")
        spawn(i)


# ---- the bounds every network front (Thrift, REST) keeps in each server process (README "Security")

# One connection costs a thread. Its idle stack is a few touched pages whatever its size, but the address
# space reserved is the size (8 MiB by default: 64 GiB for 8,192 connections, refused under strict overcommit
# or a tight RLIMIT_AS). 1 MiB: the deepest C recursion the request paths allow (JSON, deepcopy, __getattr__
# chains at Python's recursion limit) crashed here below 384 KiB and passes at 384 KiB, so 1 MiB keeps a
# margin of more than two.
THREAD_STACK_BYTES = 1024 * 1024
# descriptors kept for everything but client sockets: the store's pool and files, logs, the relay, replication
FD_RESERVE = 256
# descriptors one connection may hold: its socket, and on a SQLite file its thread's read connection
FD_PER_CONNECTION = 2


@dataclass(frozen=True)
class FrontLimits:
    """A front's bounds: connections open at once (beyond them a new one is refused at once), how long a
    connection may sit between requests, how long one request may take to arrive whole. Timeouts apply to
    reading a request and to a client taking its answer, never to the server's work on the request."""

    max_connections: int = 4096
    idle_timeout: float = 600.0
    read_timeout: float = 60.0

    def __post_init__(self) -> None:
        if self.max_connections < 1 or self.idle_timeout <= 0 or self.read_timeout <= 0:
            raise ValueError(f"limits must be positive: {self}")


def front_limits(settings: Settings, fronts: int) -> FrontLimits:
    """The settings' bounds, the connection cap lowered to what this process's descriptors allow (after
    raising the soft limit to the hard one, as the JVM does), so that a full front never starves the store.
    The settings are already checked (positive durations, a cap of at least 1)."""
    wanted = settings.max_connections
    cap = min(wanted, max(16, (raise_fd_limit(fronts * wanted * FD_PER_CONNECTION + FD_RESERVE) - FD_RESERVE)
                          // (fronts * FD_PER_CONNECTION)))
    if cap < wanted:
        log.warning("max_connections %d lowered to %d per front: this process may open %d descriptors "
                    "(ulimit -n)", wanted, cap, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    return FrontLimits(cap, settings.idle_timeout, settings.read_timeout)


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's soft descriptor limit towards `wanted` (at most the hard limit); the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft if soft != resource.RLIM_INFINITY else wanted


def small_thread_stacks() -> None:
    """Threads started from now on (the connections') reserve THREAD_STACK_BYTES of stack."""
    threading.stack_size(THREAD_STACK_BYTES)


class Burst:
    """Logs a repeated condition once per burst (the first after `quiet` seconds without one), with how many
    the previous burst had: a flood of refusals or accept errors must not flood the log too."""

    def __init__(self, what: str, quiet: float = 5.0) -> None:
        self.what, self.quiet = what, quiet
        self._last = -quiet
        self._count = 0

    def note(self, detail: object) -> None:
        now = time.monotonic()
        if now - self._last >= self.quiet:
            more = f" ({self._count} in the previous burst)" if self._count > 1 else ""
            log.warning("%s: %s%s", self.what, detail, more)
            self._count = 0
        self._count += 1
        self._last = now


def hung_up(sock: Any) -> bool:
    """Whether a just-accepted connection was already closed by its client (without waiting): after a flood,
    the listen backlog holds many such; they are closed at once instead of each costing a thread."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


# accept() failures that say the process (or the system) is out of descriptors or buffers: retrying at once
# would spin, so the loop pauses; connections wait in the listen backlog meanwhile
_EXHAUSTED = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# failures of one incoming connection (it was reset or aborted before it was accepted): the next one is fine
_TRANSIENT = frozenset({errno.ECONNABORTED, errno.EPROTO, errno.EINTR, errno.EAGAIN, errno.EPERM,
                        errno.ENETDOWN, errno.ENOPROTOOPT, errno.EHOSTDOWN, errno.ENONET, errno.EHOSTUNREACH,
                        errno.EOPNOTSUPP, errno.ENETUNREACH, errno.ECONNRESET})
ACCEPT_BACKOFF_S = 0.02


class AcceptErrors:
    """What an accept loop does after a failed accept(): never stop serving. Out of descriptors: pause
    ACCEPT_BACKOFF_S and log once per burst; one connection's failure: go on; anything else: pause too."""

    def __init__(self, front: str) -> None:
        self._burst = Burst(f"{front}: accept failed; pausing accepts while it lasts")

    def failed(self, e: OSError) -> None:
        if e.errno in _TRANSIENT:
            log.debug("accept: %s", e)
            return
        self._burst.note(e)
        time.sleep(ACCEPT_BACKOFF_S)
