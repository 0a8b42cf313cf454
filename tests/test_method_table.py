"""docs/thrift-methods.md is what scripts/gen_method_table.py writes from Hive's method lists and the callers
data (docs/thrift-callers.toml), our IDL and our handler: a method added to the IDL or the handler, or a caller
added to the data, without a regenerated table fails here."""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from scripts_support import load_script

from metastore.thrift import fb303

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> ModuleType:
    return load_script("gen_method_table")


def test_the_method_table_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    assert _generator().main(["--check"]) == 0, capsys.readouterr().err


def test_check_fails_on_a_stale_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gen = _generator()
    stale = tmp_path / "thrift-methods.md"
    stale.write_text((ROOT / "docs" / "thrift-methods.md").read_text().replace("| served |", "| refused |", 1))
    assert gen.main(["--check", "--output", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err
    assert gen.main(["--output", str(stale)]) == 0  # regenerating it makes it current again
    assert gen.main(["--check", "--output", str(stale)]) == 0


def test_a_method_that_only_raises_is_refused() -> None:
    gen = _generator()

    def refuses(self: object) -> None:
        """Docstrings do not count."""
        raise ValueError("x is not supported: " f"{self!r}")

    def partly(self: object, ok: bool) -> int:
        if not ok:
            raise ValueError("this kind is not supported")
        return 1

    def marked(self: object) -> None:
        return None

    marked.thrift_status = ("no effect", "nothing to keep")  # type: ignore[attr-defined]
    assert gen.status(refuses) == gen.Status(gen.REFUSED, "x is not supported: {...}")
    assert gen.status(partly) == gen.Status(gen.PARTLY, "this kind is not supported")
    assert gen.status(marked) == gen.Status(gen.NO_EFFECT, "nothing to keep")
    assert gen.status(test_the_method_table_is_current) == gen.Status(gen.SERVED)


def test_every_caller_names_its_sources_and_calls_only_hive_methods() -> None:
    data = tomllib.loads((ROOT / "docs" / "thrift-callers.toml").read_text())
    known = set().union(*(set(v["methods"]) for v in data["idl"].values()))
    fb = set(fb303.FacebookService.thrift_services)  # HiveMetaStoreClient.close() sends fb303's shutdown
    for key, caller in data["callers"].items():
        assert caller["read"] and caller["methods"], key
        assert set(caller["methods"]) <= known | fb, (key, set(caller["methods"]) - known - fb)
    # each release's list holds its well-known methods, and only 2.3 the index calls Hive 3 removed
    assert {"get_table", "get_partitions_by_expr", "add_index"} <= set(data["idl"]["2.3"]["methods"])
    assert "add_index" not in data["idl"]["3.1"]["methods"]
    assert {"get_valid_write_ids", "get_catalogs", "get_partition_values"} <= set(data["idl"]["3.1"]["methods"])
    assert {"get_partitions_with_specs", "get_database_req"} <= set(data["idl"]["4.0"]["methods"])
    # Hive's own clients: 2.3 and 4 read from their code, each sends set_ugi on connecting
    assert {"hive-2.3", "hive-4", "spark", "trino", "impala", "flink", "starrocks", "doris", "pyiceberg",
            "hive-metastore-client"} <= set(data["callers"])
    assert "set_ugi" in data["callers"]["hive-2.3"]["methods"] and "set_ugi" in data["callers"]["hive-4"]["methods"]
