"""Optional parts of the install (pyproject.toml's extras), and the one message for a missing one.

The core install serves the embedded default (SQLite, the Thrift and REST fronts, PyIceberg's clients).
Everything else is an extra: a module that needs one imports it through `require`, so that its absence says
which extra to install instead of a bare ModuleNotFoundError.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# extra -> what it adds, as the message names it
EXTRAS = {
    "postgres": "PostgreSQL",
    "mysql": "MySQL/MariaDB",
    "amqp": "The AMQP message bus (RabbitMQ)",
    "pipeline": "Partition-triggered PySpark jobs",
    "spark": "Spark",
    "bench": "The benchmarks",
}


class MissingExtra(ImportError):
    """A module of an optional extra is not installed."""

    def __init__(self, module: str, extra: str, what: str | None = None) -> None:
        self.module, self.extra = module, extra
        needs = what or EXTRAS.get(extra, module)
        super().__init__(f"{needs} needs the {extra} extra: pip install 'metastore[{extra}]' "
                         f"(module {module} is not installed)", name=module)


def require(module: str, extra: str, what: str | None = None) -> ModuleType:
    """Import `module`, or raise MissingExtra naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        # only the module itself (or its package) missing: a broken install inside it is another error
        if e.name is None or not (module == e.name or module.startswith(e.name + ".")):
            raise
        raise MissingExtra(module, extra, what) from None
