"""The store's boundary: it alone speaks SQL and sees SQLAlchemy's errors; callers pass plain values and filter
ASTs, and get core errors; a write that added events runs the store's commit callbacks (the log readers' hint)."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from metastore.app import build_catalog
from metastore.config import Settings
from metastore.core import model as m
from metastore.core.errors import AlreadyExists, MetaError
from metastore.core.filters import FilterError, parse
from metastore.notify.source import commit_hint

from conftest import BACKENDS, Database

SRC = Path(__file__).resolve().parents[1] / "src" / "metastore"
# what sits above the store: it may import none of these
_ABOVE_STORE = {"catalog", "catalogd", "server", "rest", "notify", "repl", "pipeline", "app", "cli", "thrift"}


def _runtime_imports(path: Path, typing_too: bool = False) -> list[tuple[int, int, str]]:
    """(line, relative level, module) of each import of a module outside `if TYPE_CHECKING:` blocks (or of
    every import, with typing_too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if not typing_too and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(n) for child in node.body for n in ast.walk(child))
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, 0, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.level, node.module or ""))
    return found


def test_no_sqlalchemy_above_the_store() -> None:
    # not even for a type annotation: the layers above name the store's types (store.engine.StoreEngine)
    offenders = [f"{p.relative_to(SRC)}:{line}" for p in SRC.rglob("*.py") if "store" not in p.relative_to(SRC).parts
                 for line, level, mod in _runtime_imports(p, typing_too=True)
                 if level == 0 and mod.split(".")[0] == "sqlalchemy"]
    assert offenders == []


def test_the_store_imports_nothing_above_it() -> None:
    offenders = []
    for p in (SRC / "store").rglob("*.py"):
        for line, level, mod in _runtime_imports(p):
            parts = mod.split(".")
            top = parts[1] if level == 0 and parts[0] == "metastore" and len(parts) > 1 else (
                parts[0] if level == 2 else None)
            if top in _ABOVE_STORE:
                offenders.append(f"{p.relative_to(SRC)}:{line}: {mod}")
    assert offenders == []


def _partitioned(catalog, name: str = "t") -> m.Table:  # type: ignore[no-untyped-def]
    t = m.Table(tableName=name, dbName="default", tableType="MANAGED_TABLE",
                sd=m.StorageDescriptor(cols=[m.FieldSchema("c", "string")], serdeInfo=m.SerDeInfo()),
                partitionKeys=[m.FieldSchema("ds", "string"), m.FieldSchema("hr", "int")])
    catalog.create_table(t)
    catalog.add_partitions("default", name, [
        m.Partition(values=[ds, hr], dbName="default", tableName=name)
        for ds in ("2024-01-01", "2024-01-02") for hr in ("1", "2", "10", "__HIVE_DEFAULT_PARTITION__")])
    return catalog.get_table("default", name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_partitions_selected_by_filter_ast_and_spec(tmp_path: Path, fresh_database: Database, backend: str) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path), db=fresh_database.url))
    t = _partitioned(catalog)
    with catalog.store.read() as tx:
        # integer literal on an int key compares numerically (10 > 2), the default partition matches nothing
        got = [p.values for p in tx.partitions(t, filter=parse("hr > 1 AND ds = '2024-01-02'"))]
        assert got == [["2024-01-02", "10"], ["2024-01-02", "2"]]
        assert tx.count_partitions(t, filter=parse("NOT hr = 1")) == 4
        assert tx.count_partitions(t) == 8
        assert tx.partition_names(t, spec=["", "10"]) == ["ds=2024-01-01/hr=10", "ds=2024-01-02/hr=10"]
        assert tx.partition_names(t, spec=["2024-01-01"], limit=1) == ["ds=2024-01-01/hr=1"]
        assert [p.values for p in tx.partitions(t, filter=parse("ds LIKE '.*02'"), spec=[None, "1"])] == [
            ["2024-01-02", "1"]]
        with pytest.raises(FilterError, match="Invalid partition key name: zz"):  # the caller checks keys first
            tx.partitions(t, filter=parse("zz = 1"))
        with pytest.raises(FilterError, match="Unsupported LIKE pattern"):
            tx.partition_names(t, filter=parse("ds LIKE 'a|b'"))
    # through the catalog, the same refusals are MetaExceptions
    with pytest.raises(MetaError, match="Specified key <zz> is not a partitioning key"):
        catalog.count_partitions_by_filter("default", "t", "zz = 1")
    with pytest.raises(MetaError, match="Unsupported LIKE pattern"):
        catalog.get_partition_names_by_filter("default", "t", "ds LIKE 'a|b'")


def test_database_errors_come_out_as_core_errors(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    store = catalog.store
    with store.write() as tx:
        tx.insert_consumer("c", 0, 0)
    with pytest.raises(AlreadyExists, match="^the object was created concurrently: UNIQUE constraint failed"), \
            store.write() as tx:
        tx.insert_consumer("c", 0, 0)  # the primary key another writer took: an IntegrityError
    with pytest.raises(MetaError, match="^OperationalError: no such table: NOPE"), store.read() as tx:
        tx.conn.exec_driver_sql("SELECT * FROM NOPE")
    with pytest.raises(KeyError), store.read():  # not a database error: passes unchanged
        raise KeyError("x")


def test_an_unreachable_store_is_unavailable(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    (tmp_path / "metastore.db").unlink()
    (tmp_path / "metastore.db").mkdir()  # a directory where the database file was: it cannot be opened
    catalog.store.engine.dispose()
    with pytest.raises(MetaError, match="^store unavailable: OperationalError: "):
        catalog.get_databases()
    with pytest.raises(MetaError, match="^store unavailable: OperationalError: "):
        catalog.create_database(m.Database(name="x"))
    with pytest.raises(MetaError, match="^OperationalError: "):
        catalog.table_version("default", "t")


def test_commit_callbacks_run_after_a_write_that_added_events(tmp_path: Path) -> None:
    catalog = build_catalog(Settings(data_dir=str(tmp_path)))
    calls: list[int] = []
    catalog.store.on_events_committed(lambda: calls.append(threading.get_ident()))
    hint = commit_hint(catalog)
    catalog.get_databases()  # a read
    with catalog.store.write() as tx:
        tx.insert_consumer("c", 0, 0)  # a write without events
    assert calls == [] and not hint.is_set()
    with pytest.raises(RuntimeError), catalog.store.write() as tx:
        tx.add_event("CREATE_DATABASE", "x", None, "{}", "json-0.2", 0)
        raise RuntimeError("rolled back")
    assert calls == [] and not hint.is_set()
    catalog.create_database(m.Database(name="x"))
    assert calls == [threading.get_ident()] and hint.is_set()
    hint.clear()
    waiter = threading.Thread(target=lambda: catalog.create_database(m.Database(name="y")))
    waiter.start()
    assert hint.wait(30)  # another thread's commit wakes a reader
    waiter.join()
    assert len(calls) == 2
