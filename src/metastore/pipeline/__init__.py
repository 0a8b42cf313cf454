"""Partition-triggered PySpark jobs on the metastore's notifications; see core.py.

    python -m metastore.pipeline.demo      # the main job: a retail pipeline, end to end
    metastore pipeline status --state FILE # jobs, processed and pending partitions
"""

from __future__ import annotations

from .core import JobContext, Pipeline, Runner, notify_insert, rejected, status

__all__ = ["JobContext", "Pipeline", "Runner", "notify_insert", "rejected", "status"]
