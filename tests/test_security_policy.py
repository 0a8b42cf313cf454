"""The location policy's settings and spellings through a real server (SQLite: what is checked here is the
policy, not the store's SQL): `allowed_roots` adds to the warehouse, the SQLite store's side files are
protected like the store itself, an upper-case scheme is the same directory as a lower-case one, and a location
that cannot name a file is refused with InvalidObjectException."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hive_metastore.ttypes import Database, InvalidObjectException
from test_security_locations import files, state, table, victim

from conftest import Client, Server, make_database, unique


@pytest.fixture
def store_dir(tmp_path: Path) -> Iterator[tuple[Server, Path, Path]]:
    """A server whose extra allowed root holds its own SQLite store, and another extra root."""
    (tmp_path / "store").mkdir()
    gen = make_database("sqlite", tmp_path / "store")
    database = next(gen)
    extra = tmp_path / "extra"
    extra.mkdir()
    work = tmp_path / "srv"
    work.mkdir()
    srv = Server(database, work, env={"METASTORE_ALLOWED_ROOTS": f"{tmp_path / 'store'},file:{extra}"}).start()
    try:
        yield srv, tmp_path / "store", extra
    finally:
        srv.stop()


def test_allowed_roots_add_to_the_warehouse_and_keep_the_store_out(store_dir: tuple[Server, Path, Path]) -> None:
    srv, store, extra = store_dir
    c = Client(srv.port)
    try:
        db = unique("db")
        c.create_database(Database(name=db))
        # the warehouse is still the server's: a managed table there gets its directory, and loses it on drop
        c.create_table(table(db, "w"))
        wdir = srv.warehouse / f"{db}.db" / "w"
        assert wdir.is_dir()
        # an extra root is the server's too: the directory is made there, and deleted with the table
        c.create_table(table(db, "x", f"file:{extra}/x"))
        assert (extra / "x").is_dir()
        (extra / "x" / "part-0").write_text("x")
        c.drop_table(db, "x", True)
        assert not (extra / "x").exists()
        c.drop_table(db, "w", True)
        assert not wdir.exists()
        # the store's file and its side files (-wal, -shm, -journal) are never a managed object's, in any spelling
        dbfile = Path(srv.db.url[len("sqlite:///"):])
        assert dbfile.parent == store
        for loc in (f"file:{dbfile}", f"file:{dbfile}-wal", f"{dbfile}-shm", f"file://{dbfile}-journal",
                    f"FILE:{dbfile}-wal", f"file:{store}", f"file:{extra}/../store/{dbfile.name}-wal"):
            before = state(c)
            with pytest.raises(InvalidObjectException):
                c.create_table(table(db, unique("t"), loc))
            assert state(c) == before, loc
        assert dbfile.exists() and srv.alive()
    finally:
        c.close()


def test_an_upper_case_scheme_is_the_same_directory(server: Server, tmp_path: Path) -> None:
    """`FILE:/x` names the directory `file:/x` does: it is stored in lower case, so a managed table there is
    found by the overlap check, and the victim's drop-time data stays."""
    c = Client(server.port)
    try:
        db = unique("db")
        c.create_database(Database(name=db))
        c.create_table(table(db, "v"))
        v = c.get_table(db, "v").sd.location
        assert v.startswith("file:")
        vdir = server.warehouse / f"{db}.db" / "v"
        victim(vdir.parent, "v")
        want = files(vdir)
        for spelling in ("FILE" + v[4:], "File" + v[4:], "fILe" + v[4:] + "/"):
            before = state(c)
            with pytest.raises(InvalidObjectException, match=f"table {db}.v"):
                c.create_table(table(db, unique("evil"), spelling))
            assert state(c) == before
        c.create_table(table(db, "up", "FILE" + v[4:-1] + "up"))
        assert c.get_table(db, "up").sd.location == v[:-1] + "up"  # stored with the scheme in lower case
        assert files(vdir) == want
    finally:
        c.close()


def test_a_location_that_cannot_name_a_file_is_refused(server: Server) -> None:
    """A lone surrogate (JSON can carry one: "\\udc80") cannot be encoded into a path: the request is refused (REST
    400: the front refuses any string holding one before the catalog sees it), not a server failure, and nothing is
    made."""
    import json
    import urllib.error
    import urllib.request

    c = Client(server.port)
    try:
        before = state(c)
        for loc in (f"file:{server.warehouse}/x\\udc80y", f"{server.warehouse}/\\ud800"):
            # the location goes into the JSON text as written: its \u escape is read by JSON, not by Python
            body = ('{"namespace": ["' + unique("ns") + '"], "properties": {"location": "' + loc + '"}}').encode()
            assert json.loads(body)  # valid JSON, whose text holds a lone surrogate
            req = urllib.request.Request(server.rest_uri + "/v1/namespaces", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(req, timeout=30)
            answer = json.loads(e.value.read())
            assert e.value.code == 400, answer
            assert "lone UTF-16 surrogate" in answer["error"]["message"], answer
        assert state(c) == before and server.alive()
        assert not any(p.name.startswith("x") for p in server.warehouse.iterdir())
    finally:
        c.close()
