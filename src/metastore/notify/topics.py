"""Topic names, as HCatalog's NotificationListener named them.

The prefix is `hcat.msgbus.topic.prefix` (default `hcat`); database and table names in topics are lower case.

    event type                                   topic
    -------------------------------------------  ----------------------------------------------------------
    CREATE_DATABASE, DROP_DATABASE               <prefix>                       (as HCatalog)
    ALTER_DATABASE                               <prefix>                       (a database event)
    CREATE_TABLE, DROP_TABLE                     <prefix>.<db>                  (as HCatalog)
    ALTER_TABLE                                  <prefix>.<db>                  (as HCatalog: the database topic,
                                                                                 where subscribers also see a
                                                                                 rename's old and new name)
    CREATE_FUNCTION, DROP_FUNCTION               <prefix>.<db>                  (objects of the database)
    ADD_PARTITION, DROP_PARTITION                the table's topic              (as HCatalog)
    ALTER_PARTITION                              the table's topic              (as HCatalog)
    INSERT                                       the table's topic
    any other event type with a table            the table's topic
    any other event type with a database only    <prefix>.<db>
    any other event type                         <prefix>

The table's topic is the value of the table's parameter `hcat.msgbus.topic.name` when it is set (HCatalog set
it on every new table, and a user could change it), else `<prefix>.<db>.<table>` (the value HCatalog set). The
table's parameters are read from the table object inside the event, so the topic is the one in force when the
change was made, even after the table is altered or dropped.

Subscription patterns use AMQP's topic syntax on the dot-separated words of a topic: `*` is exactly one word,
`#` (or ActiveMQ's `>`) any number of words, zero included: `hcat.#` is every topic, `hcat.sales.*` every table
of database sales.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ..core.events import DATABASE_EVENTS, EventType

TOPIC_NAME_PARAM = "hcat.msgbus.topic.name"
TOPIC_PREFIX_KEY = "hcat.msgbus.topic.prefix"
DEFAULT_PREFIX = "hcat"

DATABASE_TOPIC_EVENTS = frozenset({EventType.CREATE_TABLE, EventType.ALTER_TABLE, EventType.DROP_TABLE,
                                   EventType.CREATE_FUNCTION, EventType.DROP_FUNCTION})
TABLE_TOPIC_EVENTS = frozenset({EventType.ADD_PARTITION, EventType.ALTER_PARTITION, EventType.DROP_PARTITION,
                                EventType.INSERT})

# event type -> where its messages go, for documentation and `metastore events topics`
TOPIC_RULES: dict[str, str] = {
    **{t: "<prefix>" for t in (EventType.CREATE_DATABASE, EventType.ALTER_DATABASE, EventType.DROP_DATABASE)},
    **{t: "<prefix>.<db>" for t in (EventType.CREATE_TABLE, EventType.ALTER_TABLE, EventType.DROP_TABLE,
                                    EventType.CREATE_FUNCTION, EventType.DROP_FUNCTION)},
    **{t: f"table parameter {TOPIC_NAME_PARAM}, else <prefix>.<db>.<table>"
       for t in (EventType.ADD_PARTITION, EventType.ALTER_PARTITION, EventType.DROP_PARTITION, EventType.INSERT)},
    "(other, with a table)": f"table parameter {TOPIC_NAME_PARAM}, else <prefix>.<db>.<table>",
    "(other, with a database only)": "<prefix>.<db>",
    "(other)": "<prefix>",
}


class TopicMapper:
    """The topic of each event, for one prefix."""

    def __init__(self, prefix: str | None = None) -> None:
        self.prefix = prefix or DEFAULT_PREFIX

    def database_topic(self, db: str | None) -> str:
        return f"{self.prefix}.{db.lower()}" if db else self.prefix

    def table_topic(self, db: str, table: str, params: Mapping[str, str] | None = None) -> str:
        override = (params or {}).get(TOPIC_NAME_PARAM)
        if isinstance(override, str) and override.strip():  # params come from a message: any JSON value
            return override.strip()
        return f"{self.prefix}.{db.lower()}.{table.lower()}"

    def topic(self, event_type: str, db: str | None, table: str | None,
              table_params: Mapping[str, str] | None = None) -> str:
        if event_type in DATABASE_EVENTS:
            return self.prefix
        if event_type in DATABASE_TOPIC_EVENTS:
            return self.database_topic(db)
        if table and db:
            return self.table_topic(db, table, table_params)
        return self.database_topic(db)


def compile_pattern(pattern: str) -> Callable[[str], bool]:
    """A predicate on topic names for one pattern (`*` one word, `#` or `>` any number of words)."""
    words = tuple(pattern.strip().split("."))
    if not any(w in ("*", "#", ">") for w in words):
        exact = pattern.strip()
        return lambda topic: topic == exact
    return lambda topic: _match(words, tuple(topic.split(".")))


def _match(pw: tuple[str, ...], tw: tuple[str, ...]) -> bool:
    if not pw:
        return not tw
    head = pw[0]
    if head in ("#", ">"):
        return any(_match(pw[1:], tw[i:]) for i in range(len(tw) + 1))
    return bool(tw) and head in ("*", tw[0]) and _match(pw[1:], tw[1:])


def matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    """A predicate that is true for a topic matching any of `patterns`."""
    preds = [compile_pattern(p) for p in patterns]
    return lambda topic: any(p(topic) for p in preds)
