"""Replication load against crafted dumps, through `metastore repl` and two real servers, on every backend: a dump
whose locations climb with `..` or put a managed object outside its database's directory is refused before
anything is written, and plants or deletes nothing outside the target database's directory.

The crafted dumps are real dumps of a source database, edited as an attacker holding the staging directory (or
a compromised source) would; the victims are directories beside the target's warehouse.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_repl import LOCAL, add_parts, repl, table, two_servers, write_file

from metastore.repl.staging import Staging, read_json, write_json
from metastore.thrift import hms, tjson
from metastore.thrift.client import MetastoreClient

from conftest import Server, unique

pytestmark = pytest.mark.slow  # two servers and `metastore repl` processes: 4 to 9 s a test


@pytest.fixture(scope="module")
def pair(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server]]:
    yield from two_servers(backend, tmp_path_factory.mktemp("repl_sec"))


def files(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*"))
            if p.is_file()}


def state(s: Server) -> tuple[int, dict[str, list[str]]]:
    with MetastoreClient(s.uri) as ms:
        return (ms.current_event_id(),
                {d: sorted(ms.get_all_tables(d)) for d in sorted(ms.get_all_databases())})


def victims(src: Server, tgt: Server) -> tuple[Path, Path]:
    """A victim directory of one name beside each warehouse: on the source, files a climbing location would copy
    from; on the target, files it would overwrite or delete (a sync removes target files the source lacks)."""
    name = f"victim-{unique('v')}"
    out = []
    for s, text in ((src, "planted"), (tgt, "precious")):
        v = s.workdir / name
        (v / "sub").mkdir(parents=True)
        (v / "keep.txt").write_text(f"{text} data")
        (v / "sub" / "keep.bin").write_bytes(os.urandom(64))
        out.append(v)
    (out[1] / "only-on-the-target.txt").write_text("a sync would delete this")
    return out[0], out[1]


def source_db(src: Server, db: str) -> None:
    with MetastoreClient(src.uri) as ms:
        ms.create_database(hms.Database(name=db, description="x"))
        ms.create_table(table(db, "t", ("day",)))
        add_parts(ms, db, "t", "1", "2")
        write_file(ms, db, "t", ["1"], "part-0", "1,a\n")
        ms.create_table(table(db, "flat"))
        write_file(ms, db, "flat", None, "part-0", "2,b\n")


def dump(src: Server, db: str, root: Path) -> Path:
    repl("dump", db, "--with", f"hive.repl.rootdir={root}", "--metastore", src.uri)
    return Path(Staging(str(root), db).dumps()[-1].path)


def load(tgt: Server, db: str, tdb: str, root: Path) -> Any:
    return repl("load", db, "--into", tdb, "--with", f"hive.repl.rootdir={root}", *LOCAL, "--metastore", tgt.uri,
                check=False)


def edit_table(path: Path, change: Any) -> None:
    """Rewrite a bootstrap dump's table file: change(table, partitions) edits the Thrift objects in place."""
    doc = read_json(str(path))
    t = tjson.from_doc(doc["table"], hms.Table)
    parts = [tjson.from_doc(p, hms.Partition) for p in doc.get("partitions", [])]
    change(t, parts)
    doc["table"] = tjson.struct_doc(t)
    doc["partitions"] = [tjson.struct_doc(p) for p in parts]
    write_json(str(path), doc)


def climb(src: Server, db: str, victim: Path) -> str:
    """A location under the source database's directory that `..` leads out of, to `victim` beside the warehouse."""
    return f"file:{src.warehouse}/{db}.db/../../{victim.name}"


@pytest.mark.parametrize("where", ["table", "partition", "outside"])
def test_bootstrap_with_locations_leading_out_is_refused(pair, tmp_path, where):
    src, tgt = pair
    db, tdb, root = unique("src"), unique("dr"), tmp_path / "staging"
    source_db(src, db)
    planted, precious = victims(src, tgt)
    (planted / "extra.txt").write_text("would be copied to the target")
    d = dump(src, db, root)

    def change(t: Any, parts: list[Any]) -> None:
        if where == "table":
            t.sd.location = climb(src, db, precious)
        elif where == "partition":
            parts[0].sd.location = climb(src, db, precious)
        else:  # an absolute managed location outside the database: the map would keep it, on the target
            t.sd.location = f"file:{precious}"
    edit_table(d / db / ("flat" if where != "partition" else "t") / "_metadata", change)
    before, want = state(tgt), files(precious)
    p = load(tgt, db, tdb, root)
    assert p.returncode != 0
    says = "outside the source database's directory" if where == "outside" else "climbs with '..'"
    assert says in p.stderr + p.stdout, p.stderr + p.stdout
    assert state(tgt) == before  # nothing written: not even the target database
    assert files(precious) == want
    assert tgt.alive()


def test_incremental_with_a_climbing_partition_is_refused(pair, tmp_path):
    src, tgt = pair
    db, tdb, root = unique("src"), unique("dr"), tmp_path / "staging"
    source_db(src, db)
    dump(src, db, root)
    assert load(tgt, db, tdb, root).returncode == 0
    _, precious = victims(src, tgt)
    with MetastoreClient(src.uri) as ms:
        add_parts(ms, db, "t", "3")
    d = dump(src, db, root)
    forged = 0
    for event_dir in sorted(p for p in d.iterdir() if p.name.isdigit()):
        ev = read_json(str(event_dir / "_metadata"))
        msg = json.loads(ev["message"])
        if ev["eventType"] == "ADD_PARTITION":
            part = tjson.loads(msg["partitionListJson"][0], hms.Partition)
            part.sd.location = climb(src, db, precious)
            msg["partitionListJson"][0] = tjson.dumps(part)
            ev["message"] = json.dumps(msg)
            write_json(str(event_dir / "_metadata"), ev)
            forged += 1
    assert forged == 1
    before, want = state(tgt), files(precious)
    with MetastoreClient(tgt.uri) as ms:
        params = dict(ms.get_database(tdb).parameters)
    p = load(tgt, db, tdb, root)
    assert p.returncode != 0 and "climbs with '..'" in p.stderr + p.stdout, p.stderr + p.stdout
    assert state(tgt) == before
    with MetastoreClient(tgt.uri) as ms:
        assert dict(ms.get_database(tdb).parameters) == params  # not even the load's own marker
        assert sorted(ms.get_partition_names(tdb, "t", -1)) == ["day=1", "day=2"]
    assert files(precious) == want
    assert tgt.alive()


def test_symbolic_links_in_either_warehouse_lead_nowhere(pair, tmp_path):
    """A link planted in the source table's directory (to a secret file beside the warehouse) is not copied, and a
    link in the target table's directory (to a victim directory) is not written through: the copy reads and
    writes only inside the two tables' directories."""
    src, tgt = pair
    db, tdb, root = unique("src"), unique("dr"), tmp_path / "staging"
    source_db(src, db)
    _, precious = victims(src, tgt)
    secret = src.workdir / f"secret-{unique('s')}.txt"
    secret.write_text("the source host's secret")
    with MetastoreClient(src.uri) as ms:
        flat = Path(ms.get_table(db, "flat").sd.location.removeprefix("file:"))
        (flat / "sub").mkdir()
        (flat / "sub" / "part-1").write_text("3,c\n")
    (flat / "leak").symlink_to(secret)
    dump(src, db, root)
    want = files(precious)
    # the target table's directory exists before the load, with its sub-directory a link to the victim
    tflat = tgt.warehouse / f"{tdb}.db" / "flat"
    tflat.mkdir(parents=True)
    (tflat / "sub").symlink_to(precious, target_is_directory=True)
    p = load(tgt, db, tdb, root)
    out = p.stdout + p.stderr
    assert "secret" not in out
    assert not (tflat / "leak").exists()  # the link was neither followed nor copied
    assert files(precious) == want and not (precious / "part-1").exists()
    assert "the source host's secret" not in "".join(f.read_text(errors="replace") for f in tgt.warehouse.rglob("*")
                                                      if f.is_file())
    assert tgt.alive()
