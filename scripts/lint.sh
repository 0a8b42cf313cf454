#!/usr/bin/env bash
# The linters, as CI runs them (make test), from the repository root: ruff on the sources, the tests and the
# benchmarks (ruff.toml); mypy (mypy.ini: strict on metastore.core, metastore.store and the fronts); and a check
# that the Thrift stub mypy reads (src/metastore/thrift/hms_types.pyi) is the one the IDL gives. All three run
# even when one fails, so one run shows everything; the exit status is non-zero if any failed.
#     bash scripts/lint.sh
#     .venv/bin/ruff check --fix FILES    # what ruff can fix, in your own files
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
status=0
"$BIN/ruff" check src tests bench || status=1
"$BIN/mypy" --config-file mypy.ini || status=1
if ! "$BIN/python" scripts/gen_hms_stub.py --check; then
    echo "src/metastore/thrift/hms_types.pyi is stale: run $BIN/python scripts/gen_hms_stub.py" >&2
    status=1
fi
exit $status
