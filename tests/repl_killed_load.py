"""Testing seam for crash tests of REPL LOAD (the production code has no kill switch).

    python tests/repl_killed_load.py N repl load DB --into TDB ...

runs the `metastore` command line (in this process, as `metastore repl load ...` would) and kills this process
with SIGKILL right after its Nth write to a metastore has been answered: the write is committed, the load's own
record of progress is not yet written, the worst moment for a crash. Reads are not counted.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from metastore.thrift import client

_after = int(sys.argv[1])
_writes = 0
_call = client.MetastoreClient._call


def _counted(self: client.MetastoreClient, fn: str, *args: Any, read: bool = False) -> Any:
    global _writes
    result = _call(self, fn, *args, read=read)
    if not read:
        _writes += 1
        if _writes >= _after:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
    return result


client.MetastoreClient._call = _counted  # type: ignore[method-assign]

if __name__ == "__main__":
    from metastore.cli import main

    main(sys.argv[2:], prog_name="metastore")
