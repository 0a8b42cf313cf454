"""Column statistics arithmetic as Hive 2.3's metastore does it, on the store's rows (no SQL here).

- `aggregate`: get_aggr_stats_for's answer over several partitions (Hive's MetaStoreDirectSql): per (column,
  column type), the stats of the partitions that have them; when every requested partition has them, or fewer
  than two do: min of lows, max of highs, sum of nulls / trues / falses, max of NDVs, of average and maximum
  lengths. When some (two or more, not all) have them, Hive extrapolates linearly to the requested partitions:
  sums are scaled (sum / found * requested, in integer arithmetic), lows, highs, NDVs and lengths are
  extrapolated from the partitions holding the smallest and the largest value by their positions in the request.
  The NDV is then Hive's estimate without bit vectors and with its defaults (ndv tuner 0, no density function):
  the largest NDV, for integers and dates at most high - low + 1. The answer's kind follows the column type
  (Hive reads a timestamp's stats as a long's).
- `merge`: set_aggr_stats_for's needMerge (Hive's ColumnStatsMerger per kind): the new object merged with the
  stored one: min / max (an unset low or high counts as 0, as Java's primitive default), summed nulls, trues and
  falses, max of NDVs and lengths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any, cast

from ..core.model import ColumnStatisticsObj
from ..core.stats import kind_of_type


def _dec(v: object) -> Decimal:
    unscaled, scale = cast(tuple[bytes, int], v)
    return Decimal(int.from_bytes(unscaled, "big", signed=True)).scaleb(-scale)


def _undec(d: Decimal) -> tuple[bytes, int]:
    sign, digits, exp = d.as_tuple()
    n = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    scale = -int(exp)
    if scale < 0:  # Java's BigDecimal of an integer has scale 0
        n, scale = n * 10 ** -scale, 0
    return n.to_bytes(max(1, (n.bit_length() + 8) // 8), "big", signed=True), scale


def _jdiv(a: int, b: int) -> int:
    """Java's long division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


# the fields read from each stored object, as Hive's PART_COL_STATS columns: (low, high) by kind
def _low_high(o: ColumnStatisticsObj) -> tuple[object, object]:
    return o.values.get("lowValue"), o.values.get("highValue")


def _num(o: ColumnStatisticsObj, name: str) -> int | float | None:
    v = o.values.get(name)
    return cast(int | float | None, v)


def _value_key(v: object) -> Any:
    return _dec(v) if isinstance(v, tuple) else v


def _extrapolate(kind: str, is_max: bool, lo: tuple[object, int], hi: tuple[object, int], right: int) -> object:
    """Hive's LinearExtrapolatePartStatus: (value, position) of the smallest and the largest value."""
    (vmin, imin), (vmax, imax) = lo, hi
    if imin == imax:
        return vmin
    if kind == "decimal":
        dmin, dmax = float(_dec(vmin)), float(_dec(vmax))
        if is_max:
            r = (dmin + (dmax - dmin) * (right - imin) / (imax - imin) if imin < imax
                 else dmin + (dmax - dmin) * imin / (imin - imax))
        else:
            r = (dmax - (dmax - dmin) * imax / (imax - imin) if imin < imax
                 else dmax - (dmax - dmin) * (right - imax) / (imin - imax))
        return _undec(Decimal(repr(r)))
    if kind == "long":
        a, b = cast(int, vmin), cast(int, vmax)
        if is_max:
            return a + _jdiv((b - a) * (right - imin), imax - imin) if imin < imax else \
                a + _jdiv((b - a) * imin, imin - imax)
        return b - _jdiv((b - a) * imax, imax - imin) if imin < imax else \
            b - _jdiv((b - a) * (right - imax), imin - imax)
    x, y = float(cast(float, vmin)), float(cast(float, vmax))
    if is_max:
        return x + (y - x) * (right - imin) / (imax - imin) if imin < imax else x + (y - x) * imin / (imin - imax)
    return y - (y - x) * imax / (imax - imin) if imin < imax else y - (y - x) * (right - imax) / (imin - imax)


def _sum(objs: Sequence[ColumnStatisticsObj], name: str) -> int | None:
    vals = [cast(int, o.values[name]) for o in objs if o.values.get(name) is not None]
    return sum(vals) if vals else None


def _max(objs: Sequence[ColumnStatisticsObj], name: str) -> int | float | None:
    vals = [cast(int | float, o.values[name]) for o in objs if o.values.get(name) is not None]
    return max(vals) if vals else None


def _borders(rows: Sequence[tuple[ColumnStatisticsObj, str]], name: str,
             index: dict[str, int]) -> tuple[tuple[object, int], tuple[object, int]] | None:
    """The (value, position) of the smallest and the largest value of `name`, or None when a partition lacks it
    (Hive orders by the column, nulls last, and gives up on a null at either end)."""
    vals = [(o.values.get(name), part) for o, part in rows]
    if any(v is None for v, _ in vals):
        return None
    vals.sort(key=lambda vp: _value_key(vp[0]))
    return (vals[0][0], index[vals[0][1]]), (vals[-1][0], index[vals[-1][1]])


def _scaled(objs: Sequence[ColumnStatisticsObj], name: str, count: int, n: int) -> int | None:
    """A sum over `count` partitions scaled to `n`, in Hive's long arithmetic."""
    s = _sum(objs, name)
    return None if s is None else _jdiv(s, count) * n


def _extra(grp: Sequence[tuple[ColumnStatisticsObj, str]], name: str, is_max: bool, how: str,
           index: dict[str, int]) -> object:
    b = _borders(grp, name, index)
    return None if b is None else _extrapolate(how, is_max, b[0], b[1], len(index) - 1)


def aggregate(rows: Sequence[tuple[ColumnStatisticsObj, str]], part_names: Sequence[str],
              col_names: Sequence[str]) -> tuple[list[ColumnStatisticsObj], int]:
    """get_aggr_stats_for over `rows` ((stats, canonical partition name) of the requested partitions and
    columns, in store order): (one object per requested column, in the request's order, the partitions that have
    every column)."""
    if not part_names or not col_names:
        return [], 0
    per_part: dict[str, int] = {}
    groups: dict[tuple[str, str], list[tuple[ColumnStatisticsObj, str]]] = {}
    for o, part in rows:
        per_part[part] = per_part.get(part, 0) + 1
        groups.setdefault((o.colName, o.colType), []).append((o, part))
    found = sum(1 for n in per_part.values() if n == len(col_names))
    n = len(part_names)
    index = {p: i for i, p in enumerate(part_names)}
    out = []
    for want in col_names:  # Hive's cached path: one object per requested column, its first column type's
        key = next((k for k in groups if k[0] == want), None)
        if key is None:
            continue
        col, col_type = key
        grp = groups[key]
        kind = kind_of_type(col_type)
        if kind is None:
            continue
        objs = [o for o, _ in grp]
        count = len(grp)
        values: dict[str, object] = {}
        if count == n or count < 2:
            lows = [v for v in (_low_high(o)[0] for o in objs) if v is not None]
            highs = [v for v in (_low_high(o)[1] for o in objs) if v is not None]
            low: object = min(lows, key=_value_key) if lows else None
            high: object = max(highs, key=_value_key) if highs else None
            nulls, trues, falses = _sum(objs, "numNulls"), _sum(objs, "numTrues"), _sum(objs, "numFalses")
            ndv, avg_len, max_len = _max(objs, "numDVs"), _max(objs, "avgColLen"), _max(objs, "maxColLen")
        else:
            how = {"decimalStats": "decimal", "doubleStats": "double"}.get(kind, "long")
            low, high = _extra(grp, "lowValue", False, how, index), _extra(grp, "highValue", True, how, index)
            nulls, trues, falses = (_scaled(objs, k, count, n) for k in ("numNulls", "numTrues", "numFalses"))
            ndv = cast(int | None, _extra(grp, "numDVs", True, "long", index))
            avg_len = cast(float | None, _extra(grp, "avgColLen", True, "double", index))
            max_len = cast(int | None, _extra(grp, "maxColLen", True, "long", index))
        values["numNulls"] = nulls or 0
        if kind == "booleanStats":
            values.update(numTrues=trues or 0, numFalses=falses or 0)
        elif kind in ("stringStats", "binaryStats"):
            values.update(maxColLen=max_len or 0, avgColLen=float(avg_len or 0.0))
            if kind == "stringStats":
                values["numDVs"] = ndv or 0
        else:
            if low is not None:
                values["lowValue"] = float(cast(float, low)) if kind == "doubleStats" else low
            if high is not None:
                values["highValue"] = float(cast(float, high)) if kind == "doubleStats" else high
            est = int(ndv or 0)
            if kind in ("longStats", "dateStats") and low is not None and high is not None:
                est = min(est, cast(int, high) - cast(int, low) + 1)
            values["numDVs"] = est
        out.append(ColumnStatisticsObj(col, col_type, kind, values))
    return out, found


class MergeError(ValueError):
    """Two statistics objects of different kinds (Hive's merger refuses them)."""


def merge(new: ColumnStatisticsObj, old: ColumnStatisticsObj) -> ColumnStatisticsObj:
    """Hive's ColumnStatsMerger: `new` merged with the stored `old` (same kind)."""
    if new.kind != old.kind:
        raise MergeError(f"The column types of {new.colName} differ: {new.kind} and {old.kind}")
    a, b = new.values, old.values
    v = dict(a)

    def num(d: dict[str, object], k: str) -> int | float:
        return cast(int | float, d.get(k) or 0)

    for k in ("numNulls", "numTrues", "numFalses"):
        if k in a or k in b:
            v[k] = num(a, k) + num(b, k)
    for k in ("numDVs", "maxColLen", "avgColLen"):
        if k in a or k in b:
            v[k] = max(num(a, k), num(b, k))
    if new.kind in ("longStats", "doubleStats", "dateStats", "timestampStats"):
        zero = 0.0 if new.kind == "doubleStats" else 0
        v["lowValue"] = min(num(a, "lowValue") or zero, num(b, "lowValue") or zero)
        v["highValue"] = max(num(a, "highValue") or zero, num(b, "highValue") or zero)
    elif new.kind == "decimalStats":
        for k, pick in (("lowValue", min), ("highValue", max)):
            present = [x for x in (a.get(k), b.get(k)) if x is not None]
            if present:
                v[k] = pick(present, key=_dec)
    return replace(new, values=v)
