#!/usr/bin/env bash
# The linters, as CI runs them (make test): ruff on the sources, the tests and the benchmarks, then mypy with
# mypy.ini (strict on metastore.core, metastore.store and the HTTP server). Exits non-zero if either fails;
# both run even when the first fails, so one run shows everything. From the repository root:
#     bash scripts/lint.sh            # ruff + mypy
#     .venv/bin/ruff check --fix F    # fix what ruff can in your own files
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
status=0
"$BIN/ruff" check src tests bench || status=1
"$BIN/mypy" --config-file mypy.ini || status=1
exit $status
