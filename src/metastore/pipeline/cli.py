"""`metastore pipeline status`: jobs, processed, pending and failed partitions, from a pipeline's state file."""

from __future__ import annotations

import os

import click


@click.group()
def pipeline() -> None:
    """Partition-triggered PySpark jobs (metastore.pipeline)."""


@pipeline.command("status")
@click.option("--state", "state_path", default="metastore-data/pipeline/pipeline.sqlite", show_default=True,
              help="the pipeline's state file (SQLite)")
@click.option("--all", "show_all", is_flag=True, help="list every processed partition, not only a count")
def status_cmd(state_path: str, show_all: bool) -> None:
    """List jobs with their processed, pending and failed partitions."""
    from rich.console import Console
    from rich.table import Table

    from .core import status

    if not os.path.exists(state_path):
        raise click.ClickException(f"no pipeline state at {state_path}")
    rows = status(state_path)
    t = Table(title=f"pipeline state {state_path}", title_justify="left")
    for c in ("job", "table", "processed", "pending", "failed", "runs"):
        t.add_column(c, justify="right" if c == "runs" else "left")
    for r in rows:
        done = "\n".join(r.done) if show_all or len(r.done) <= 8 else f"{len(r.done)} partitions ({r.done[0]} … {r.done[-1]})"
        t.add_row(r.job, r.table, done or "-", "\n".join(r.pending) or "-",
                  "\n".join(f"{p}: {e[:80]}" for p, e in r.failed) or "-", str(r.runs))
    Console().print(t)
