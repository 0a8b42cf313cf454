"""Replication errors: every one carries a message meant for the person running the command."""

from __future__ import annotations


class ReplError(Exception):
    """A dump or load that cannot proceed; nothing of the step that raised it was applied."""


class NothingToDo(ReplError):
    """No dump to load, or a dump not yet loaded (DUMP skips): not a failure."""


class NeedsReset(ReplError):
    """A previous load failed in a way a retry cannot fix; `metastore repl reset` clears it."""


class Unreachable(ReplError):
    """A metastore did not answer: a retry may succeed, so a load writes no failure marker."""
