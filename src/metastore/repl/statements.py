"""The statements of scheduled replication policies, as users write them in Hive:

    CREATE SCHEDULED QUERY name <schedule> [EXECUTED AS user] [ENABLED | DISABLED] [DEFINED] AS <query>
    ALTER SCHEDULED QUERY name (<schedule> | EXECUTED AS user | ENABLED | DISABLED | [DEFINED] AS <query> | EXECUTE)
    DROP SCHEDULED QUERY name
    SELECT * FROM information_schema.scheduled_queries [WHERE col = 'v' [AND ...]]
    SELECT * FROM information_schema.scheduled_executions [WHERE ...]
    SELECT * FROM sys.replication_metrics [WHERE ...]

    <schedule> = EVERY [n] SECOND[S] | MINUTE[S] | HOUR[S] | DAY[S] [AT 'hh:mm:ss' | OFFSET BY 'hh:mm:ss']
               | CRON 'sec min hour day-of-month month day-of-week [year]'   (Quartz's form, as Hive's)
    <query>    = REPL DUMP db [WITH ('k'='v', ...)] | REPL LOAD db [INTO db] [WITH ('k'='v', ...)]

Parsing gives plain values; a statement that does not parse raises StatementError saying where.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from .errors import ReplError


class StatementError(ReplError):
    """A malformed statement; nothing was changed."""


_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^'\\]|\\.|'')*')|(?P<num>\d+)|(?P<word>[A-Za-z_][A-Za-z0-9_.]*)"
                    r"|(?P<sym>[(),=*;]))")


@dataclasses.dataclass
class Tok:
    kind: str
    text: str
    pos: int

    @property
    def value(self) -> str:
        if self.kind == "str":
            return self.text[1:-1].replace("''", "'").replace("\\'", "'")
        return self.text


def tokenize(text: str) -> list[Tok]:
    out, pos = [], 0
    text = text.rstrip().rstrip(";")
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise StatementError(f"unexpected {text[pos:].strip()[:20]!r} at position {pos + 1}")
        kind = m.lastgroup or ""
        out.append(Tok(kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return out


@dataclasses.dataclass
class ReplQuery:
    action: str  # DUMP or LOAD
    db: str
    into: str | None
    options: dict[str, str]

    def text(self) -> str:
        w = ", ".join(f"'{k}'='{v}'" for k, v in self.options.items())
        into = f" INTO {self.into}" if self.into else ""
        return f"REPL {self.action} {self.db}{into}" + (f" WITH ({w})" if w else "")


@dataclasses.dataclass
class Create:
    name: str
    schedule: str
    user: str | None
    enabled: bool
    query: ReplQuery


@dataclasses.dataclass
class Alter:
    name: str
    schedule: str | None = None
    user: str | None = None
    enabled: bool | None = None
    query: ReplQuery | None = None
    execute: bool = False


@dataclasses.dataclass
class Drop:
    name: str


@dataclasses.dataclass
class Select:
    view: str  # scheduled_queries | scheduled_executions | replication_metrics
    where: dict[str, str]


VIEWS = {"information_schema.scheduled_queries": "scheduled_queries",
         "information_schema.scheduled_executions": "scheduled_executions",
         "sys.replication_metrics": "replication_metrics"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokenize(text)
        self.i = 0

    def peek(self, k: int = 0) -> Tok | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def at(self, *words: str) -> bool:
        t = self.peek()
        return t is not None and t.kind in ("word", "sym") and t.text.upper() in words

    def fail(self, wanted: str) -> StatementError:
        t = self.peek()
        got = f"{t.text!r} at position {t.pos + 1}" if t else "the end of the statement"
        return StatementError(f"expected {wanted}, found {got}")

    def word(self, *words: str) -> str:
        if not self.at(*words):
            raise self.fail(" or ".join(words))
        self.i += 1
        return self.toks[self.i - 1].text.upper()

    def ident(self, what: str) -> str:
        t = self.peek()
        if t is None or t.kind != "word":
            raise self.fail(what)
        self.i += 1
        return t.text.lower()

    def string(self, what: str) -> str:
        t = self.peek()
        if t is None or t.kind != "str":
            raise self.fail(f"{what} (a quoted string)")
        self.i += 1
        return t.value

    def end(self) -> None:
        if self.peek() is not None:
            raise self.fail("the end of the statement")

    # ---- pieces -------------------------------------------------------------------------------------------

    def schedule(self) -> str:
        if self.at("CRON"):
            self.i += 1
            expr = self.string("a cron expression")
            from .schedule import parse_cron
            parse_cron(expr)  # validates
            return f"CRON '{expr}'"
        self.word("EVERY")
        n = 1
        t = self.peek()
        if t is not None and t.kind == "num":
            n = int(t.text)
            self.i += 1
            if n <= 0:
                raise StatementError("EVERY needs a positive number")
        unit = self.word("SECOND", "SECONDS", "MINUTE", "MINUTES", "HOUR", "HOURS", "DAY", "DAYS").rstrip("S")
        text = f"EVERY {n} {unit}S"
        if self.at("AT"):
            self.i += 1
            at = self.string("a time of day 'hh:mm:ss'")
            from .schedule import parse_time_of_day
            parse_time_of_day(at)
            text += f" AT '{at}'"
        elif self.at("OFFSET"):
            self.i += 1
            self.word("BY")
            off = self.string("an offset 'hh:mm:ss'")
            from .schedule import parse_time_of_day
            parse_time_of_day(off)
            text += f" OFFSET BY '{off}'"
        return text

    def options(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if not self.at("WITH"):
            return out
        self.i += 1
        self.word("(")
        while True:
            k = self.string("an option name")
            self.word("=")
            out[k] = self.string(f"the value of {k}")
            if self.at(","):
                self.i += 1
                continue
            self.word(")")
            return out

    def query(self) -> ReplQuery:
        self.word("REPL")
        action = self.word("DUMP", "LOAD")
        db = self.ident("a database name")
        if db == "*" or "." in db:
            raise StatementError(f"REPL {action} takes one database name, not {db!r}")
        into = None
        if action == "LOAD" and self.at("INTO"):
            self.i += 1
            into = self.ident("the target database name")
        opts = self.options()
        self.end()
        return ReplQuery(action, db, into, opts)

    def defined_as(self) -> ReplQuery:
        if self.at("DEFINED"):
            self.i += 1
        self.word("AS")
        return self.query()

    # ---- statements ----------------------------------------------------------------------------------------

    def statement(self) -> Any:
        if not self.toks:
            raise StatementError("empty statement")
        head = self.word("CREATE", "ALTER", "DROP", "SELECT")
        if head == "SELECT":
            return self.select()
        self.word("SCHEDULED")
        self.word("QUERY")
        name = self.ident("the scheduled query's name")
        if head == "DROP":
            self.end()
            return Drop(name)
        if head == "CREATE":
            schedule = self.schedule()
            user = None
            enabled = True
            if self.at("EXECUTED"):
                self.i += 1
                self.word("AS")
                user = self.ident("a user name")
            if self.at("ENABLE", "ENABLED", "DISABLE", "DISABLED"):
                enabled = self.word("ENABLE", "ENABLED", "DISABLE", "DISABLED").startswith("ENABLE")
            return Create(name, schedule, user, enabled, self.defined_as())
        a = Alter(name)
        if self.at("EVERY", "CRON"):
            a.schedule = self.schedule()
        elif self.at("EXECUTED"):
            self.i += 1
            self.word("AS")
            a.user = self.ident("a user name")
        elif self.at("ENABLE", "ENABLED", "DISABLE", "DISABLED"):
            a.enabled = self.word("ENABLE", "ENABLED", "DISABLE", "DISABLED").startswith("ENABLE")
        elif self.at("EXECUTE"):
            self.i += 1
            a.execute = True
        elif self.at("DEFINED", "AS"):
            a.query = self.defined_as()
            return a
        else:
            raise self.fail("EVERY, CRON, EXECUTED AS, ENABLED, DISABLED, EXECUTE or AS")
        self.end()
        return a

    def select(self) -> Select:
        self.word("*")
        self.word("FROM")
        t = self.peek()
        view = VIEWS.get(t.text.lower()) if t is not None and t.kind == "word" else None
        if view is None:
            raise self.fail("one of " + ", ".join(VIEWS))
        self.i += 1
        where: dict[str, str] = {}
        if self.at("WHERE"):
            self.i += 1
            while True:
                col = self.ident("a column name")
                self.word("=")
                t = self.peek()
                if t is not None and t.kind == "num":
                    self.i += 1
                    where[col] = t.text
                else:
                    where[col] = self.string(f"the value of {col}")
                if self.at("AND"):
                    self.i += 1
                    continue
                break
        self.end()
        return Select(view, where)


def parse(text: str) -> Any:
    """One statement: Create, Alter, Drop or Select."""
    try:
        return _Parser(text).statement()
    except StatementError:
        raise
    except ReplError as e:  # a bad schedule
        raise StatementError(str(e)) from None
