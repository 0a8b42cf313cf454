"""`metastore pipeline status`: jobs, processed, pending and failed partitions, and the trigger messages the
runner could not read, from a pipeline's state file.

Everything shown comes from messages and jobs (partition values, error texts, topics): it is printed as plain
text, never as rich markup, so a value such as `[bold]` or `[link=...]` shows as written.
"""

from __future__ import annotations

import os

import click

_REJECTED_SHOWN = 20  # the newest rejected messages listed
_ERROR_SHOWN = 300  # characters of each one's error (the state file keeps more)


@click.group()
def pipeline() -> None:
    """Partition-triggered PySpark jobs (metastore.pipeline)."""


@pipeline.command("status")
@click.option("--state", "state_path", help="the pipeline's state file (SQLite) "
                                           "[<data_dir>/pipeline/pipeline.sqlite of the settings]")
@click.option("--all", "show_all", is_flag=True, help="list every processed partition, not only a count")
@click.pass_context
def status_cmd(ctx: click.Context, state_path: str | None, show_all: bool) -> None:
    """List jobs with their processed, pending and failed partitions."""
    from ..app import command_settings, pipeline_state
    from ..extras import require

    require("rich", "pipeline", "metastore pipeline status")
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from .core import rejected, status

    state_path = state_path or pipeline_state(command_settings(ctx))
    if not os.path.exists(state_path):
        raise click.ClickException(f"no pipeline state at {state_path}")
    rows = status(state_path)
    t = Table(title=f"pipeline state {state_path}", title_justify="left")
    for c in ("job", "table", "processed", "pending", "failed", "runs"):
        t.add_column(c, justify="right" if c == "runs" else "left")
    for r in rows:
        done = ("\n".join(r.done) if show_all or len(r.done) <= 8
                else f"{len(r.done)} partitions ({r.done[0]} … {r.done[-1]})")
        t.add_row(Text(r.job), Text(r.table), Text(done or "-"), Text("\n".join(r.pending) or "-"),
                  Text("\n".join(f"{p}: {e[:80]}" for p, e in r.failed) or "-"), str(r.runs))
    console = Console()
    console.print(t)
    bad = rejected(state_path, limit=_REJECTED_SHOWN)
    if bad:
        # the runner skipped these (or some of their partitions): no job ran for what they could not name
        r_t = Table(title=f"rejected trigger messages (newest {_REJECTED_SHOWN} at most)", title_justify="left")
        for c in ("event", "type", "topic", "error"):
            r_t.add_column(c, justify="right" if c == "event" else "left", overflow="fold")
        for e in bad:
            r_t.add_row(str(e.event_id), Text(e.event_type or "-"), Text(e.topic or "-"),
                        Text(e.error[:_ERROR_SHOWN]))
        console.print(r_t)
