"""Thrift-JSON (the objects inside event messages) and the batch conversion of request structs."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metastore.core import model as m
from metastore.server.convert import from_thrift, from_thrift_batch, to_thrift
from metastore.thrift import hms, tjson

text = st.text(max_size=12)  # any code point: quotes, backslashes, control characters, non-ASCII
maybe = st.none() | text


def cols_strategy() -> st.SearchStrategy:
    return st.lists(st.builds(hms.FieldSchema, name=text, type=st.sampled_from(["int", "string", "map<string,int>"]),
                              comment=maybe), max_size=4)


def sd_strategy() -> st.SearchStrategy:
    return st.builds(
        hms.StorageDescriptor, cols=cols_strategy(), location=maybe, inputFormat=maybe, outputFormat=maybe,
        compressed=st.none() | st.booleans(), numBuckets=st.none() | st.integers(-1, 2**31 - 1),
        serdeInfo=st.none() | st.builds(hms.SerDeInfo, name=maybe, serializationLib=maybe,
                                        parameters=st.dictionaries(text, text, max_size=3)),
        bucketCols=st.lists(text, max_size=2),
        sortCols=st.lists(st.builds(hms.Order, col=text, order=st.integers(0, 1)), max_size=2),
        parameters=st.dictionaries(text, text, max_size=3),
        skewedInfo=st.none() | st.builds(hms.SkewedInfo, skewedColNames=st.lists(text, max_size=2),
                                         skewedColValues=st.lists(st.lists(text, max_size=2), max_size=2),
                                         skewedColValueLocationMaps=st.dictionaries(
                                             st.lists(text, max_size=2).map(tuple), text, max_size=2)),
        storedAsSubDirectories=st.none() | st.booleans())


partitions = st.builds(hms.Partition, values=st.lists(text, max_size=3), dbName=text, tableName=text,
                       createTime=st.none() | st.integers(0, 2**31 - 1), lastAccessTime=st.none() | st.integers(0, 9),
                       sd=st.none() | sd_strategy(), parameters=st.dictionaries(text, text, max_size=3))


def test_known_text():
    p = hms.Partition(values=["2024-01-01", "é\"1"], dbName="db", tableName="t", createTime=7,
                      sd=hms.StorageDescriptor(cols=[hms.FieldSchema(name="a", type="int")], location="file:/w/x",
                                               compressed=False, bucketCols=[], parameters={"k": "v"}),
                      parameters={})
    assert tjson.dumps(p) == (
        '{"1":{"lst":["str",2,"2024-01-01","é\\"1"]},"2":{"str":"db"},"3":{"str":"t"},"4":{"i32":7},'
        '"6":{"rec":{"1":{"lst":["rec",1,{"1":{"str":"a"},"2":{"str":"int"}}]},"2":{"str":"file:/w/x"},'
        '"5":{"tf":0},"8":{"lst":["str",0]},"10":{"map":["str","str",1,{"k":"v"}]}}},'
        '"7":{"map":["str","str",0,{}]}}')


@settings(max_examples=200, deadline=None)
@given(partitions)
def test_partition_round_trip(p):
    assert tjson.loads(tjson.dumps(p), hms.Partition) == p
    model = from_thrift(p, m.Partition)
    assert tjson.dumps(model) == tjson.dumps(to_thrift(model))  # a model object writes as its Thrift namesake


@settings(max_examples=100, deadline=None)
@given(st.lists(partitions, min_size=1, max_size=4), st.integers(0, 3))
def test_dumps_many_is_dumps_of_each(parts, share):
    # siblings sharing sub-objects, as a converted batch does: written once, the same text in each
    for p in parts[1:]:
        if share and parts[0].sd is not None and p.sd is not None:
            p.sd.cols = parts[0].sd.cols
            if share > 1:
                p.sd.serdeInfo = parts[0].sd.serdeInfo
            if share > 2:
                p.sd = parts[0].sd
    assert tjson.dumps_many(parts) == [tjson.dumps(p) for p in parts]


def test_doubles_and_binary():
    stats = hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName="d", tableName="t"),
        statsObj=[hms.ColumnStatisticsObj(colName="c", colType="double", statsData=hms.ColumnStatisticsData(
            doubleStats=hms.DoubleColumnStatsData(lowValue=float("-inf"), highValue=1.5, numNulls=1, numDVs=2,
                                                  bitVectors=b"\x00\xffab")))])
    doc = json.loads(tjson.dumps(stats))
    data = doc["2"]["lst"][2]["3"]["rec"]["3"]["rec"]
    assert data["1"] == {"dbl": "-inf"} and data["2"] == {"dbl": 1.5} and data["5"] == {"str": "AP9hYg"}
    back = tjson.loads(tjson.dumps(stats), hms.ColumnStatistics).statsObj[0].statsData.doubleStats
    assert math.isinf(back.lowValue) and back.bitVectors == b"\x00\xffab"


@settings(max_examples=100, deadline=None)
@given(st.lists(partitions, max_size=5), st.booleans())
def test_batch_conversion_equals_one_by_one(parts, same_sd):
    if same_sd and parts:
        for p in parts[1:]:
            p.sd = copy.deepcopy(parts[0].sd)  # equal, not the same object: as decoded from one request
    batch = from_thrift_batch(parts, m.Partition)
    assert batch == [from_thrift(p, m.Partition) for p in parts]
    if same_sd and len(parts) > 1 and parts[0].sd is not None and parts[0].sd.cols:
        assert batch[1].sd.cols is batch[0].sd.cols  # converted once, shared


def test_batch_conversion_shares_columns_when_locations_differ():
    def part(i: int) -> hms.Partition:
        return hms.Partition(values=[str(i)], dbName="d", tableName="t", sd=hms.StorageDescriptor(
            cols=[hms.FieldSchema(name="a", type="int")], location=f"file:/w/p={i}",
            serdeInfo=hms.SerDeInfo(serializationLib="lib", parameters={"x": "1"})))

    a, b, c = from_thrift_batch([part(1), part(2), part(3)], m.Partition)
    assert a.sd is not b.sd and b.sd.location == "file:/w/p=2"
    assert a.sd.cols is b.sd.cols is c.sd.cols and a.sd.serdeInfo is c.sd.serdeInfo


HOLES = ("values", "sd.location")
model_partitions = st.builds(hms.Partition, values=st.lists(text, min_size=1, max_size=3), dbName=text,
                             tableName=text, createTime=st.integers(0, 2**31 - 1), sd=sd_strategy(),
                             parameters=st.dictionaries(text, text, max_size=3)
                             ).map(lambda p: from_thrift(p, m.Partition))
# how each partition after the first is made: like the first but for its values and location (None: no location),
# or like the first with one more difference, or another partition altogether
variants = st.one_of(
    st.tuples(st.just("alike"), st.lists(text, min_size=1, max_size=3), maybe),
    st.tuples(st.just("differs"), st.sampled_from(["dbName", "createTime", "parameters", "sd.inputFormat",
                                                   "sd.parameters", "sd.cols", "sd.skewedInfo", "sd"]), text),
    st.tuples(st.just("other"), model_partitions, st.none()))


def _variant(first: m.Partition, how: tuple) -> m.Partition:
    kind, a, b = how
    if kind == "other":
        return a
    p = copy.deepcopy(first)
    if kind == "alike":
        p.values, p.sd.location = a, b
    elif a == "createTime":
        p.createTime += 1
    elif a in ("parameters", "sd.parameters"):
        (p.parameters if a == "parameters" else p.sd.parameters)[b + "!"] = b
    elif a == "sd.cols":
        p.sd.cols = p.sd.cols + [m.FieldSchema(b, "int")]
    elif a == "sd.skewedInfo":
        p.sd.skewedInfo = m.SkewedInfo([b], [[b]], {})
    elif a == "sd":
        p.sd = None  # type: ignore[assignment]
    else:
        obj, name = (p.sd, a[3:]) if a.startswith("sd.") else (p, a)
        setattr(obj, name, (getattr(obj, name) or "") + b + "!")
    return p


@settings(max_examples=300, deadline=None)
@given(model_partitions, st.lists(variants, max_size=6), st.booleans())
def test_dumps_alike_is_dumps_of_each(first, how, share_cols):
    batch = [first] + [_variant(first, h) for h in how]
    if share_cols:  # as a converted batch: the same column list object in alike partitions
        for p in batch[1:]:
            if p.sd is not None and p.sd.cols == first.sd.cols:
                p.sd.cols = first.sd.cols
    assert tjson.dumps_alike(batch, HOLES) == [tjson.dumps(p) for p in batch]


def test_dumps_alike_fills_each_partition_in():
    sd = m.StorageDescriptor(cols=[m.FieldSchema("a", "int")], location="file:/w/t/p=0", parameters={"k": "v"})
    parts = [m.Partition([str(i)], "d", "t", 7, sd=m.StorageDescriptor(
        cols=sd.cols, location=f"file:/w/t/p={i}", parameters={"k": "v"}), parameters={"x": "1"}) for i in range(3)]
    texts = tjson.dumps_alike(parts, HOLES)
    docs = [json.loads(t) for t in texts]
    assert [d["1"]["lst"] for d in docs] == [["str", 1, "0"], ["str", 1, "1"], ["str", 1, "2"]]
    assert [d["6"]["rec"]["2"]["str"] for d in docs] == ["file:/w/t/p=0", "file:/w/t/p=1", "file:/w/t/p=2"]
    # the same map in another order: the same document (its text keeps the first partition's order)
    parts[1].parameters = {"y": "2", "x": "1"}
    parts[2].parameters = {"x": "1", "y": "2"}
    reordered = tjson.dumps_alike(parts, HOLES)
    assert [json.loads(t) for t in reordered] == [json.loads(tjson.dumps(p)) for p in parts]


def test_dumps_alike_of_thrift_structs():
    parts = [hms.Partition(values=[str(i)], dbName="d", tableName="t", sd=hms.StorageDescriptor(
        cols=[hms.FieldSchema(name="a", type="int")], location=f"file:/w/p={i}"), parameters={}) for i in range(3)]
    parts[2].privileges = hms.PrincipalPrivilegeSet(userPrivileges={})  # a field the model does not have
    assert tjson.dumps_alike(parts, HOLES) == [tjson.dumps(p) for p in parts]


def test_shallow_copy_of_model_objects():
    sd = m.StorageDescriptor(cols=[m.FieldSchema("a", "int")], location="file:/w")
    p = m.Partition(["1"], "d", "t", 3, sd=sd, parameters={"k": "v"})
    q = m.shallow_copy(p)
    assert q == p and q is not p and q.sd is sd and q.parameters is p.parameters
    uri = m.ResourceUri(1, "file:/x.jar")
    assert m.shallow_copy(uri) == uri

    @dataclass(slots=True)
    class One:
        x: list[int]

    one = One([1])
    assert m.shallow_copy(one) == one and m.shallow_copy(one).x is one.x

    @dataclass(slots=True)
    class Derived:
        x: int
        y: int = field(init=False, default=0)

    with pytest.raises(TypeError):
        m.shallow_copy(Derived(1))
