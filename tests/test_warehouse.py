"""The warehouse's directory operations on a real local file system."""

from __future__ import annotations

import sqlite3

import pytest

from metastore.catalog.warehouse import Warehouse
from metastore.core import model as m
from metastore.core.errors import MetaError


def test_mkdirs_and_delete(tmp_path):
    wh = Warehouse(str(tmp_path))
    loc = f"file:{tmp_path}/db.db/t"
    assert wh.mkdirs(loc) is True  # parents made too
    assert wh.mkdirs(loc) is False  # already there
    (tmp_path / "db.db" / "t" / "part-0").write_text("x")
    wh.delete(loc)  # not empty: removed with its files
    assert not (tmp_path / "db.db" / "t").exists() and (tmp_path / "db.db").is_dir()
    wh.delete(loc)  # gone already: nothing to do
    (tmp_path / "f").write_text("x")
    with pytest.raises(FileExistsError):
        wh.mkdirs(f"file:{tmp_path}/f")  # a file where the directory should be
    wh.delete(f"file:{tmp_path}/f")
    assert not (tmp_path / "f").exists()
    assert wh.mkdirs("s3a://bucket/t") is False  # not local: recorded, never touched


@pytest.mark.parametrize("child_min", [1, 10_000])  # through the child processes, and in-process
def test_start_mkdirs_discard_removes_new_parents_only(tmp_path, child_min):
    wh = Warehouse(str(tmp_path), child_mkdir_min=child_min)
    (tmp_path / "t" / "ds=1").mkdir(parents=True)
    locs = [f"file:{tmp_path}/t/ds={d}/h={h}" for d in (1, 2, 3) for h in range(4)]
    batch = wh.start_mkdirs(locs + [locs[0], None, "hdfs://nn/x"])
    batch.wait()
    assert batch.made == locs
    assert all((tmp_path / "t" / f"ds={d}" / f"h={h}").is_dir() for d in (1, 2, 3) for h in range(4))
    batch.discard()
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["ds=1"]  # it existed before
    assert list((tmp_path / "t" / "ds=1").iterdir()) == []


def test_start_mkdirs_failure_names_the_location(tmp_path):
    (tmp_path / "file").write_text("x")
    wh = Warehouse(str(tmp_path), child_mkdir_min=1)
    batch = wh.start_mkdirs([f"file:{tmp_path}/ok", f"file:{tmp_path}/file/sub"])
    with pytest.raises(MetaError, match=f"file:{tmp_path}/file/sub is not a directory or unable to create one"):
        batch.wait()
    batch.discard()
    assert not (tmp_path / "ok").exists() and (tmp_path / "file").read_text() == "x"


def test_start_rmdir_removes_only_an_empty_directory(tmp_path):
    wh = Warehouse(str(tmp_path))
    try:
        (tmp_path / "empty").mkdir()
        (tmp_path / "full").mkdir()
        (tmp_path / "full" / "part-0").write_text("x")
        early = wh.start_rmdir(f"file:{tmp_path}/empty")
        assert early is not None
        assert early.gone() and not (tmp_path / "empty").exists()
        early = wh.start_rmdir(f"file:{tmp_path}/full")
        assert early is not None and not early.gone()  # not empty: left for delete() after the commit
        assert (tmp_path / "full" / "part-0").read_text() == "x"
        early = wh.start_rmdir(f"file:{tmp_path}/never")
        assert early is not None and early.gone()  # nothing to delete
        assert wh.start_rmdir("s3a://bucket/t") is None  # not local: never touched
    finally:
        wh.close()


def test_start_rmdir_restore_and_one_request_at_a_time(tmp_path):
    wh = Warehouse(str(tmp_path))
    try:
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
        first = wh.start_rmdir(f"file:{tmp_path}/a")
        assert first is not None
        assert wh.start_rmdir(f"file:{tmp_path}/b") is None  # helper busy: the caller deletes after its commit
        first.restore()  # the drop failed: its directory is made again
        assert (tmp_path / "a").is_dir() and (tmp_path / "b").is_dir()
        again = wh.start_rmdir(f"file:{tmp_path}/b")  # free again once the answer was read
        assert again is not None and again.gone() and not (tmp_path / "b").exists()
        kept = wh.start_rmdir(f"file:{tmp_path}/c")  # did not exist: restore makes nothing
        assert kept is not None
        kept.restore()
        assert not (tmp_path / "c").exists()
    finally:
        wh.close()


def test_start_rmdir_survives_its_helper_dying(tmp_path):
    wh = Warehouse(str(tmp_path))
    try:
        (tmp_path / "a").mkdir()
        early = wh.start_rmdir(f"file:{tmp_path}/none")
        assert early is not None and early.gone()
        helper = wh._rmdir_helper
        assert helper is not None
        helper.proc.kill()
        helper.proc.wait()
        first = wh.start_rmdir(f"file:{tmp_path}/a")  # the write may still succeed into the dead pipe's buffer
        if first is not None:
            assert not first.gone()  # no answer: reported as not removed, the caller deletes it itself
        assert (tmp_path / "a").is_dir()
        early = wh.start_rmdir(f"file:{tmp_path}/a")  # a new helper
        assert early is not None and early.gone() and not (tmp_path / "a").exists()
        assert wh._rmdir_helper is not helper
    finally:
        wh.close()


def test_drop_table_directories_with_the_early_rmdir(tmp_path):
    """drop_table removes an empty table directory through the helper, a full one after its commit, and when
    the transaction fails the table and its directory both stay."""
    from notify_support import local_catalog

    cat = local_catalog(tmp_path)
    try:
        cat.create_database(m.Database(name="d", parameters={}))
        for name in ("empty", "full", "kept"):
            cat.create_table(m.Table(tableName=name, dbName="d", sd=m.StorageDescriptor(
                cols=[m.FieldSchema("id", "bigint")], serdeInfo=m.SerDeInfo())))
        wh = tmp_path / "warehouse" / "d.db"
        (wh / "full" / "part-0").write_text("x")
        cat.drop_table("d", "empty", True)
        cat.drop_table("d", "full", True)
        assert sorted(p.name for p in wh.iterdir()) == ["kept"]
        with sqlite3.connect(tmp_path / "ms.db") as db:  # a real store failure inside the drop's transaction
            db.execute("CREATE TRIGGER no_drop BEFORE DELETE ON TBLS BEGIN DELETE FROM no_such_table; END")
        with pytest.raises(MetaError):
            cat.drop_table("d", "kept", True)
        assert (wh / "kept").is_dir()  # removed early, made again when the transaction failed
        assert cat.get_table("d", "kept").tableName == "kept"
        early = cat.wh.start_rmdir(f"file:{wh}/none")  # the helper was left free for the next drop
        assert early is not None and early.gone()
    finally:
        cat.wh.close()
