"""Conversion between the catalog's model objects and the Thrift structs of the same names.

Field names are shared, so conversion is by name; the per-class field lists are computed once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TypeVar, cast, overload

from ..core import model as m
from ..thrift import hms

_NESTED: dict[type, dict[str, Any]] = {
    m.StorageDescriptor: {"cols": [m.FieldSchema], "serdeInfo": m.SerDeInfo, "sortCols": [m.Order],
                          "skewedInfo": m.SkewedInfo},
    m.Table: {"sd": m.StorageDescriptor, "partitionKeys": [m.FieldSchema]},
    m.Partition: {"sd": m.StorageDescriptor},
    m.Function: {"resourceUris": [m.ResourceUri]},
}
# Nested structs that differ in every object of a batch (a partition's descriptor holds its own location):
# comparing them with the previous object's only costs time; their own nested parts are still shared.
_NEVER_EQUAL = {(m.Partition, "sd"), (m.Table, "sd")}
_BOOKKEEPING = {"id", "version"}
# optional fields Hive's server leaves unset unless true (a Hive client's DESCRIBE EXTENDED prints the set ones)
_UNSET_UNLESS_TRUE: dict[type, tuple[str, ...]] = {m.Table: ("temporary",)}
_M = TypeVar("_M")  # a model class
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    f = _FIELDS.get(cls)
    if f is None:
        f = _FIELDS[cls] = tuple(x.name for x in dataclasses.fields(cls) if x.name not in _BOOKKEEPING)
    return f


# the types the fronts convert, checked; anything else (a nested part) as it comes
@overload
def to_thrift(obj: m.Database) -> hms.Database: ...


@overload
def to_thrift(obj: list[m.Database]) -> list[hms.Database]: ...


@overload
def to_thrift(obj: m.Table) -> hms.Table: ...


@overload
def to_thrift(obj: list[m.Table]) -> list[hms.Table]: ...


@overload
def to_thrift(obj: m.Partition) -> hms.Partition: ...


@overload
def to_thrift(obj: list[m.Partition]) -> list[hms.Partition]: ...


@overload
def to_thrift(obj: m.FieldSchema) -> hms.FieldSchema: ...


@overload
def to_thrift(obj: list[m.FieldSchema]) -> list[hms.FieldSchema]: ...


@overload
def to_thrift(obj: m.TableMeta) -> hms.TableMeta: ...


@overload
def to_thrift(obj: list[m.TableMeta]) -> list[hms.TableMeta]: ...


@overload
def to_thrift(obj: m.Function) -> hms.Function: ...


@overload
def to_thrift(obj: list[m.Function]) -> list[hms.Function]: ...


@overload
def to_thrift(obj: m.ColumnStatistics) -> hms.ColumnStatistics: ...


@overload
def to_thrift(obj: list[m.ColumnStatistics]) -> list[hms.ColumnStatistics]: ...


@overload
def to_thrift(obj: object) -> Any: ...


def to_thrift(obj: object) -> Any:
    """A model object (or list of them) as the Thrift struct of the same name."""
    if obj is None:
        return None
    if isinstance(obj, list):
        return [to_thrift(x) for x in obj]
    cls = type(obj)
    if isinstance(obj, m.ColumnStatistics):
        return _stats_to_thrift(obj)
    if isinstance(obj, m.SkewedInfo):
        return hms.SkewedInfo(skewedColNames=list(obj.skewedColNames), skewedColValues=list(obj.skewedColValues),
                              skewedColValueLocationMaps={tuple(k): v
                                                          for k, v in obj.skewedColValueLocationMaps.items()})
    nested = _NESTED.get(cls, {})
    kwargs = {}
    for name in _fields(cls):
        v = getattr(obj, name)
        if name in nested and v is not None:
            v = to_thrift(v)
        kwargs[name] = v
    for name in _UNSET_UNLESS_TRUE.get(cls, ()):
        if not kwargs[name]:
            kwargs[name] = None
    return getattr(hms, cls.__name__)(**kwargs)


def from_thrift(tobj: object, cls: type[_M]) -> _M:
    """A Thrift struct as the model class `cls`; missing optional fields take the model's defaults."""
    return cast(_M, _convert(tobj, cls, None))


def from_thrift_batch(tobjs: Sequence[object], cls: type[_M]) -> list[_M]:
    """Several Thrift structs as model objects (as from_thrift). A nested struct or list of structs equal to
    the one at the same place in the previous object is converted once and shared: the partitions of one
    request usually carry the same columns and serde, and building those objects was most of the cost."""
    last: dict[tuple[type, str], tuple[Any, Any]] = {}
    return [_convert(t, cls, last) for t in tobjs]


def _convert(tobj: Any, cls: type, last: dict[tuple[type, str], tuple[Any, Any]] | None) -> Any:
    """from_thrift; with `last`, nested structs equal to the previous object's are shared (from_thrift_batch)."""
    if tobj is None:
        return None
    if cls is m.SkewedInfo:
        return m.SkewedInfo(list(tobj.skewedColNames or []), [list(x) for x in tobj.skewedColValues or []],
                            {tuple(k): v for k, v in (tobj.skewedColValueLocationMaps or {}).items()})
    nested = _NESTED.get(cls, {})
    kwargs = {}
    for name in _fields(cls):
        v = getattr(tobj, name, None)
        if v is None:
            continue
        sub = nested.get(name)
        if sub is not None:
            if last is not None and (cls, name) in _NEVER_EQUAL:
                v = _convert(v, sub, last)
                kwargs[name] = v
                continue
            seen = last.get((cls, name)) if last is not None else None
            if seen is not None and seen[0] == v:
                v = seen[1]
            else:
                converted = ([_convert(x, sub[0], None) for x in v] if isinstance(sub, list)
                             else _convert(v, sub, last))
                if last is not None:
                    last[(cls, name)] = (v, converted)
                v = converted
        kwargs[name] = v
    if cls is m.StorageDescriptor and "numBuckets" not in kwargs:
        kwargs["numBuckets"] = 0  # an unset i32: Hive reads (and stores, and answers) 0
    return cls(**kwargs)


_STATS_KINDS = ("booleanStats", "longStats", "doubleStats", "stringStats", "binaryStats", "decimalStats",
                "dateStats", "timestampStats")


def _stats_to_thrift(cs: m.ColumnStatistics) -> hms.ColumnStatistics:
    d = cs.statsDesc
    desc = hms.ColumnStatisticsDesc(isTblLevel=d.isTblLevel, dbName=d.dbName, tableName=d.tableName,
                                    partName=d.partName, lastAnalyzed=d.lastAnalyzed, catName=d.catName)
    return hms.ColumnStatistics(statsDesc=desc, statsObj=[stats_obj_to_thrift(o) for o in cs.statsObj],
                                engine=cs.engine)


def stats_obj_to_thrift(o: m.ColumnStatisticsObj) -> hms.ColumnStatisticsObj:
    values = dict(o.values)
    if o.kind == "decimalStats":
        for k in ("lowValue", "highValue"):
            if k in values:
                unscaled, scale = cast(tuple[bytes, int], values[k])  # as stats_obj_from_thrift stores it
                values[k] = hms.Decimal(unscaled=unscaled, scale=scale)
    elif o.kind == "dateStats":
        for k in ("lowValue", "highValue"):
            if k in values:
                values[k] = hms.Date(daysSinceEpoch=cast(int, values[k]))
    elif o.kind == "timestampStats":
        for k in ("lowValue", "highValue"):
            if k in values:
                values[k] = hms.Timestamp(secondsSinceEpoch=cast(int, values[k]))
    struct_name = o.kind[0].upper() + o.kind[1:].replace("Stats", "ColumnStatsData")
    data = hms.ColumnStatisticsData(**{o.kind: getattr(hms, struct_name)(**values)})
    return hms.ColumnStatisticsObj(colName=o.colName, colType=o.colType, statsData=data)


def stats_obj_from_thrift(t: hms.ColumnStatisticsObj) -> m.ColumnStatisticsObj:
    data = t.statsData
    kind = next((k for k in _STATS_KINDS if data is not None and getattr(data, k, None) is not None), None)
    if kind is None:
        raise ValueError(f"column statistics for {t.colName} carry no statistics data")
    member = getattr(data, kind)
    values: dict[str, object] = {}
    for spec in member.thrift_spec.values():
        name = spec[1]
        v = getattr(member, name)
        if v is None:
            continue
        if kind == "decimalStats" and name in ("lowValue", "highValue"):
            v = (v.unscaled, v.scale)
        elif kind == "dateStats" and name in ("lowValue", "highValue"):
            v = v.daysSinceEpoch
        elif kind == "timestampStats" and name in ("lowValue", "highValue"):
            v = v.secondsSinceEpoch
        values[name] = v
    return m.ColumnStatisticsObj(t.colName, t.colType, kind, values)


# ---- roles and privileges ------------------------------------------------------------------------------------

def object_ref_from_thrift(ref: hms.HiveObjectRef | None) -> m.ObjectRef:
    if ref is None:
        return m.GLOBAL_OBJECT
    return m.ObjectRef(ref.objectType or m.GLOBAL, ref.dbName, ref.objectName)


def object_ref_to_thrift(ref: m.ObjectRef) -> hms.HiveObjectRef:
    return hms.HiveObjectRef(objectType=ref.type, dbName=ref.db, objectName=ref.table, partValues=[],
                             columnName=None, catName="hive")


def grant_info_to_thrift(g: m.PrivilegeGrant) -> hms.PrivilegeGrantInfo:
    return hms.PrivilegeGrantInfo(privilege=g.privilege, createTime=g.createTime, grantor=g.grantor,
                                  grantorType=g.grantorType, grantOption=g.grantOption)


def privilege_to_thrift(g: m.PrivilegeGrant) -> hms.HiveObjectPrivilege:
    return hms.HiveObjectPrivilege(hiveObject=object_ref_to_thrift(g.object), principalName=g.principalName,
                                   principalType=g.principalType, grantInfo=grant_info_to_thrift(g))


def privileges_from_thrift(bag: hms.PrivilegeBag | None) -> list[m.PrivilegeGrant]:
    """The grants of a PrivilegeBag (the grantor and time are the server's to set)."""
    out = []
    for p in (bag.privileges if bag is not None else None) or []:
        info = p.grantInfo or hms.PrivilegeGrantInfo()
        out.append(m.PrivilegeGrant(object_ref_from_thrift(p.hiveObject), p.principalName or "",
                                    p.principalType or 0, info.privilege or "", bool(info.grantOption),
                                    info.grantor or "", info.grantorType or m.USER))
    return out


def privilege_set_to_thrift(s: dict[str, dict[str, list[m.PrivilegeGrant]]]) -> hms.PrincipalPrivilegeSet:
    def side(kind: str) -> dict[str, list[hms.PrivilegeGrantInfo]]:
        return {name: [grant_info_to_thrift(g) for g in gs] for name, gs in s.get(kind, {}).items()}
    return hms.PrincipalPrivilegeSet(userPrivileges=side("user"), groupPrivileges=side("group"),
                                     rolePrivileges=side("role"))


def role_to_thrift(r: m.Role) -> hms.Role:
    return hms.Role(roleName=r.roleName, createTime=r.createTime, ownerName=r.ownerName)


def role_grant_to_thrift(g: m.RoleGrant) -> hms.RolePrincipalGrant:
    return hms.RolePrincipalGrant(roleName=g.roleName, principalName=g.principalName, principalType=g.principalType,
                                  grantOption=g.grantOption, grantTime=g.grantTime, grantorName=g.grantorName,
                                  grantorPrincipalType=g.grantorPrincipalType)
