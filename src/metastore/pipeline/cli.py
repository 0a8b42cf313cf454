"""`metastore pipeline status`: jobs, processed, pending and failed partitions, from a pipeline's state file."""

from __future__ import annotations

import os

import click


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

    from .core import status

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
        t.add_row(r.job, r.table, done or "-", "\n".join(r.pending) or "-",
                  "\n".join(f"{p}: {e[:80]}" for p, e in r.failed) or "-", str(r.runs))
    Console().print(t)
