"""Event types of the notification log, with Hive's names (what `NotificationEvent.eventType` holds)."""

from __future__ import annotations

from enum import StrEnum


class EventType(StrEnum):
    """A notification event's type. A StrEnum: members compare equal to Hive's strings on the wire."""

    CREATE_DATABASE = "CREATE_DATABASE"
    ALTER_DATABASE = "ALTER_DATABASE"
    DROP_DATABASE = "DROP_DATABASE"
    CREATE_TABLE = "CREATE_TABLE"
    ALTER_TABLE = "ALTER_TABLE"
    DROP_TABLE = "DROP_TABLE"
    ADD_PARTITION = "ADD_PARTITION"
    ALTER_PARTITION = "ALTER_PARTITION"
    DROP_PARTITION = "DROP_PARTITION"
    INSERT = "INSERT"
    CREATE_FUNCTION = "CREATE_FUNCTION"
    DROP_FUNCTION = "DROP_FUNCTION"
    # constraints: Hive 2.3's three, Hive 3's unique and not-null, Hive 4's default and check
    ADD_PRIMARYKEY = "ADD_PRIMARYKEY"
    ADD_FOREIGNKEY = "ADD_FOREIGNKEY"
    ADD_UNIQUECONSTRAINT = "ADD_UNIQUECONSTRAINT"
    ADD_NOTNULLCONSTRAINT = "ADD_NOTNULLCONSTRAINT"
    ADD_DEFAULTCONSTRAINT = "ADD_DEFAULTCONSTRAINT"
    ADD_CHECKCONSTRAINT = "ADD_CHECKCONSTRAINT"
    DROP_CONSTRAINT = "DROP_CONSTRAINT"
    # written by Hive 3/4 (not by this metastore, whose transactions show only through the changes made in them)
    OPEN_TXN = "OPEN_TXN"
    COMMIT_TXN = "COMMIT_TXN"
    ABORT_TXN = "ABORT_TXN"
    # written by Hive 3/4 and by this metastore (allocate_table_write_ids)
    ALLOC_WRITE_ID = "ALLOC_WRITE_ID"

    @classmethod
    def of(cls, name: str | None) -> EventType | None:
        """The member named `name`, or None for a type this project does not know (newer Hive's, say)."""
        if name is None:
            return None
        try:
            return cls(name)
        except ValueError:
            return None


DATABASE_EVENTS = frozenset({EventType.CREATE_DATABASE, EventType.ALTER_DATABASE, EventType.DROP_DATABASE})
FUNCTION_EVENTS = frozenset({EventType.CREATE_FUNCTION, EventType.DROP_FUNCTION})
TABLE_EVENTS = frozenset({EventType.CREATE_TABLE, EventType.ALTER_TABLE, EventType.DROP_TABLE,
                          EventType.ADD_PARTITION, EventType.ALTER_PARTITION, EventType.DROP_PARTITION,
                          EventType.INSERT})
TXN_END_EVENTS = frozenset({EventType.COMMIT_TXN, EventType.ABORT_TXN})
