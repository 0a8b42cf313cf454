"""Where the partition filter language used to live: it is split into metastore.core.filters (the parser, AST and
limits) and metastore.store.filter_sql (the translation to SQL, which only the store does).

This module only re-exports the vocabulary for app.py's `partition_filter.set_limits` until that line imports
metastore.core.filters; then it goes. New code imports metastore.core.filters.
"""

from __future__ import annotations

from ..core.filters import FilterError, FilterLimits, current_limits, set_limits

__all__ = ["FilterError", "FilterLimits", "current_limits", "set_limits"]
