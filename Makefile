# The two front-door commands (see README): `make run` runs the main job, `make test` runs the tests.
# Both create .venv at the repository root and install everything they need into it.

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint setup services bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	bash scripts/kdc.sh install  # MIT Kerberos: the KDC of the Kerberos tests, the headers python-gssapi builds on
	$(BIN)/pip install --quiet -e '.[test,dev]'
	# hive-metastore-client (tests/test_hmsc.py) pins thrift==0.13.0, which its code does not need: no deps
	$(BIN)/pip install --quiet --no-deps 'hive-metastore-client==1.0.9'
	touch $(STAMP)

setup: $(STAMP)

# PostgreSQL and MariaDB are services of the machine; this makes sure they run and have the test databases,
# installs the brokers and the JDBC drivers the reference metastore needs on PostgreSQL and MariaDB.
services:
	bash scripts/services.sh
	bash scripts/brokers.sh
	bash scripts/jdbc-drivers.sh || echo 'warning: no JDBC drivers for the reference on PostgreSQL/MariaDB' >&2

run: $(STAMP)
	$(BIN)/python -m metastore.pipeline.demo

test: $(STAMP) services lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

# ruff and mypy (scripts/lint.sh; the dev extra installs them)
lint: $(STAMP)
	BIN=$(BIN) bash scripts/lint.sh

bench: $(STAMP)
	bash scripts/jdbc-drivers.sh
	$(BIN)/python bench/run.py

clean:
	rm -rf metastore-data .reference-hms spark-warehouse
