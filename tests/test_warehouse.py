"""The warehouse's directory operations on a real local file system."""

from __future__ import annotations

import pytest

from metastore.catalog.errors import MetaError
from metastore.catalog.warehouse import Warehouse


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
