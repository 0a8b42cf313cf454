"""Which stores a test module runs on. conftest's `backend` fixture gives every store (METASTORE_TEST_BACKENDS);
a module whose behaviour does not depend on the store (a front's bounds, catalogd's logic over Thrift) imports
`sqlite_only`, which overrides it with SQLite alone, so that the suite's time goes to what the stores change."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", params=["sqlite"], name="backend")
def sqlite_only(request: pytest.FixtureRequest) -> str:
    return str(request.param)
