"""When a scheduled query runs next: EVERY n UNITS [AT | OFFSET BY], or a Quartz-style CRON expression.

Times are UTC epoch seconds. `EVERY n UNITs` fires on the multiples of the interval since the epoch
(shifted by AT / OFFSET BY), as Hive turns it into a cron expression aligned the same way.
"""

from __future__ import annotations

import datetime as dt
import re

from .errors import ReplError

UNITS = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": 86400}
_EVERY = re.compile(r"EVERY (\d+) (SECOND|MINUTE|HOUR|DAY)S(?: (AT|OFFSET BY) '([^']*)')?$")
_CRON = re.compile(r"CRON '([^']*)'$")
# second, minute, hour, day of month, month, day of week (Quartz: 1-7 = SUN-SAT), year
_RANGES = [(0, 59), (0, 59), (0, 23), (1, 31), (1, 12), (1, 7), (1970, 2199)]
_NAMES = {"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10,
          "NOV": 11, "DEC": 12, "SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}


def parse_time_of_day(text: str) -> int:
    m = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?", text.strip())
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59 or int(m.group(3) or 0) > 59:
        raise ReplError(f"{text!r} is not a time of day hh:mm:ss")
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3) or 0)


def _field(text: str, lo: int, hi: int, what: str) -> set[int]:
    out: set[int] = set()
    for part in text.upper().split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/", 1)
            if not s.isdigit() or int(s) == 0:
                raise ReplError(f"bad step in the cron {what} field: {text!r}")
            step = int(s)
        if part in ("*", "?"):
            a, b = lo, hi
        elif "-" in part:
            x, y = part.split("-", 1)
            a, b = _num(x, what), _num(y, what)
        else:
            a = _num(part, what)
            b = hi if step > 1 else a
        if not (lo <= a <= hi and lo <= b <= hi and a <= b):
            raise ReplError(f"the cron {what} field {text!r} is out of range {lo}-{hi}")
        out.update(range(a, b + 1, step))
    return out


def _num(x: str, what: str) -> int:
    if x in _NAMES:
        return _NAMES[x]
    if not x.isdigit():
        raise ReplError(f"bad value {x!r} in the cron {what} field")
    return int(x)


def parse_cron(expr: str) -> list[set[int]]:
    f = expr.split()
    if len(f) not in (6, 7):
        raise ReplError(f"a cron expression has 6 or 7 fields (second minute hour day-of-month month "
                        f"day-of-week [year]), not {len(f)}: {expr!r}")
    if len(f) == 6:
        f.append("*")
    names = ["second", "minute", "hour", "day-of-month", "month", "day-of-week", "year"]
    return [_field(x, lo, hi, n) for x, (lo, hi), n in zip(f, _RANGES, names)]


def next_time(schedule: str, after: float) -> int:
    """The first time strictly after `after` at which the schedule fires."""
    now = int(after)
    m = _EVERY.match(schedule)
    if m:
        n, unit, at = int(m.group(1)), m.group(2), m.group(4)
        period = n * UNITS[unit]
        shift = parse_time_of_day(at) if at else 0
        return ((now - shift) // period + 1) * period + shift
    m = _CRON.match(schedule)
    if not m:
        raise ReplError(f"unknown schedule {schedule!r}")
    sec, mins, hours, dom, months, dow, years = parse_cron(m.group(1))
    t = dt.datetime.fromtimestamp(now + 1, dt.UTC)
    minute = t.replace(second=0)
    for _ in range(60 * 24 * 366 * 2):  # minutes in two years
        qdow = minute.isoweekday() % 7 + 1  # Quartz: SUN=1
        if (minute.year in years and minute.month in months and minute.day in dom and qdow in dow
                and minute.hour in hours and minute.minute in mins):
            start = t.second if minute == t.replace(second=0) else 0
            for s in sorted(sec):
                if s >= start:
                    return int(minute.replace(second=s).timestamp())
        minute += dt.timedelta(minutes=1)
    raise ReplError(f"the schedule {schedule!r} never fires in the next two years")
