"""Serialized forms are exact: a change made through another server process is seen at once."""

from __future__ import annotations

import pytest
from hive_metastore.ttypes import Database, GetTableRequest, NoSuchObjectException, Partition
from test_thrift_api import sd, table

from conftest import Client, Server, unique


@pytest.fixture(scope="module")
def second(database, server, tmp_path_factory):
    srv = Server(database, tmp_path_factory.mktemp("second")).start()
    yield srv
    srv.stop()


def test_changes_through_another_process_are_seen(client, second):
    other = Client(second.port)
    try:
        db = unique("db")
        client.create_database(Database(name=db))
        client.create_table(table(db, "c"))
        parts = [Partition(values=[f"d{i}", str(i)], dbName=db, tableName="c", sd=sd(), parameters={})
                 for i in range(20)]
        for p in parts:
            p.sd.location = None
        client.add_partitions(parts)

        def reads():
            return (client.get_table(db, "c"), client.get_table_req(GetTableRequest(dbName=db, tblName="c")).table,
                    client.get_partitions(db, "c", -1), client.get_partitions_by_filter(db, "c", "h < 5", -1),
                    client.get_partitions_ps(db, "c", ["d3", ""], -1),
                    client.get_partitions_by_names(db, "c", ["ds=d1/h=1", "ds=d7/h=7"]))

        t, t2, allp, filt, ps, named = reads()  # warms the first server's cache
        assert len(allp) == 20 and len(filt) == 5 and len(ps) == 1 and len(named) == 2
        assert reads()[0] == t  # a hit gives the same object

        t.parameters["changed"] = "yes"
        other.alter_table(db, "c", t)
        p = other.get_partition(db, "c", ["d1", "1"])
        p.parameters["p"] = "q"
        other.alter_partitions(db, "c", [p])
        other.drop_partition(db, "c", ["d2", "2"], True)
        other.append_partition(db, "c", ["d99", "0"])

        t, t2, allp, filt, ps, named = reads()
        assert t.parameters["changed"] == "yes" and t2.parameters["changed"] == "yes"
        values = [x.values for x in allp]
        assert len(allp) == 20 and ["d2", "2"] not in values and ["d99", "0"] in values
        assert sorted(x.values[1] for x in filt) == ["0", "0", "1", "3", "4"]
        assert [x.parameters.get("p") for x in named] == ["q", None]
        # the results equal what a server with no cached state answers
        fresh = Server(second.db, second.workdir).start()
        c3 = Client(fresh.port)
        try:
            assert c3.get_partitions(db, "c", -1) == allp
            assert c3.get_partitions_by_filter(db, "c", "h < 5", -1) == filt
            assert c3.get_table(db, "c") == t
        finally:
            c3.close()
            fresh.stop()
        other.drop_table(db, "c", True)
        with pytest.raises(NoSuchObjectException):
            client.get_table(db, "c")
        client.drop_database(db, True, True)
    finally:
        other.close()


def test_a_recreated_table_is_never_served_from_the_dropped_ones_cache(client):
    """Drop a table and create another under its name: no read answers with the dropped one (SQLite reuses
    freed row ids, and a new table's version starts again at 1, so ids must never be given twice)."""
    from hive_metastore.ttypes import FieldSchema

    db = unique("re")
    client.create_database(Database(name=db))
    for round_ in range(3):
        t = table(db, "again")
        t.sd.cols = [FieldSchema(f"col_{round_}", "string", None)]
        t.partitionKeys = [FieldSchema(f"key_{round_}", "string", None)]
        client.create_table(t)
        part = Partition(values=[f"v{round_}"], dbName=db, tableName="again", sd=sd(), parameters={})
        part.sd.location = None
        part.sd.cols = t.sd.cols
        client.add_partitions([part])
        got = client.get_table(db, "again")  # warms the cache with this round's table
        assert [c.name for c in got.sd.cols] == [f"col_{round_}"]
        assert [k.name for k in got.partitionKeys] == [f"key_{round_}"]
        assert [p.values for p in client.get_partitions(db, "again", -1)] == [[f"v{round_}"]]
        assert client.get_table_req(GetTableRequest(dbName=db, tblName="again")).table == got
        client.drop_table(db, "again", True)
