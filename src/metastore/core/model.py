"""The catalog's objects. Field names are Hive's (camelCase), so that every front maps them by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class FieldSchema:
    name: str
    type: str
    comment: str | None = None


@dataclass(slots=True)
class SerDeInfo:
    name: str | None = None
    serializationLib: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)
    description: str | None = None
    serializerClass: str | None = None
    deserializerClass: str | None = None
    serdeType: int | None = None


@dataclass(slots=True)
class Order:
    col: str
    order: int


@dataclass(slots=True)
class SkewedInfo:
    skewedColNames: list[str] = field(default_factory=list)
    skewedColValues: list[list[str]] = field(default_factory=list)
    # keys are tuples of values (a Thrift map keyed by list<string>)
    skewedColValueLocationMaps: dict[tuple[str, ...], str] = field(default_factory=dict)


@dataclass(slots=True)
class StorageDescriptor:
    cols: list[FieldSchema] = field(default_factory=list)
    location: str | None = None
    inputFormat: str | None = None
    outputFormat: str | None = None
    compressed: bool = False
    numBuckets: int = -1
    serdeInfo: SerDeInfo = field(default_factory=SerDeInfo)
    bucketCols: list[str] = field(default_factory=list)
    sortCols: list[Order] = field(default_factory=list)
    parameters: dict[str, str] = field(default_factory=dict)
    skewedInfo: SkewedInfo = field(default_factory=SkewedInfo)
    storedAsSubDirectories: bool = False


@dataclass(slots=True)
class Database:
    name: str
    description: str | None = None
    locationUri: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)
    ownerName: str | None = None
    ownerType: int | None = None  # PrincipalType: USER=1, ROLE=2, GROUP=3
    catalogName: str = "hive"
    createTime: int | None = None


@dataclass(slots=True)
class Table:
    tableName: str
    dbName: str
    owner: str | None = None
    createTime: int = 0
    lastAccessTime: int = 0
    retention: int = 0
    sd: StorageDescriptor = field(default_factory=StorageDescriptor)
    partitionKeys: list[FieldSchema] = field(default_factory=list)
    parameters: dict[str, str] = field(default_factory=dict)
    viewOriginalText: str | None = None
    viewExpandedText: str | None = None
    tableType: str = "MANAGED_TABLE"
    temporary: bool = False
    rewriteEnabled: bool = False
    catName: str = "hive"
    ownerType: int | None = 1
    # store bookkeeping, not part of Hive's struct
    id: int | None = None
    version: int | None = None


@dataclass(slots=True)
class Partition:
    values: list[str]
    dbName: str
    tableName: str
    createTime: int = 0
    lastAccessTime: int = 0
    sd: StorageDescriptor = field(default_factory=StorageDescriptor)
    parameters: dict[str, str] = field(default_factory=dict)
    catName: str = "hive"


@dataclass(slots=True)
class TableMeta:
    dbName: str
    tableName: str
    tableType: str
    comments: str | None = None
    catName: str = "hive"


@dataclass(slots=True)
class ResourceUri:
    resourceType: int  # JAR=1, FILE=2, ARCHIVE=3
    uri: str


@dataclass(slots=True)
class Function:
    functionName: str
    dbName: str
    className: str
    ownerName: str | None = None
    ownerType: int | None = 1
    createTime: int = 0
    functionType: int = 1  # JAVA=1
    resourceUris: list[ResourceUri] = field(default_factory=list)
    catName: str = "hive"


@dataclass(slots=True)
class ColumnStatisticsDesc:
    isTblLevel: bool
    dbName: str
    tableName: str
    partName: str | None = None
    lastAnalyzed: int | None = None
    catName: str = "hive"


@dataclass(slots=True)
class ColumnStatisticsObj:
    colName: str
    colType: str
    # one of Hive's union members: booleanStats, longStats, doubleStats, stringStats, binaryStats,
    # decimalStats, dateStats, timestampStats; `values` holds that member's fields (decimals as
    # (unscaled bytes, scale), dates as days, timestamps as seconds)
    kind: str
    values: dict[str, object]


@dataclass(slots=True)
class ColumnStatistics:
    statsDesc: ColumnStatisticsDesc
    statsObj: list[ColumnStatisticsObj]
    engine: str = "hive"


@dataclass(slots=True)
class NotificationEvent:
    eventId: int
    eventTime: int
    eventType: str
    dbName: str | None
    tableName: str | None
    message: str
    messageFormat: str = "json-0.2"
    catName: str | None = "hive"


@dataclass(slots=True)
class NotificationConsumer:
    """A registered reader of the notification log (a relay's cursor, a replication policy): events after
    `lastEventId` are kept for it. `owner` and `leaseUntil` (epoch milliseconds) are the lease of the one process
    that advances it."""
    name: str
    lastEventId: int
    updated: int
    owner: str | None = None
    leaseUntil: int | None = None


_FIELD_VALUES: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def shallow_copy(obj: T) -> T:
    """A new object of a model class holding the same field values (the values themselves are not copied).

    dataclasses.replace checks every field on each call; add_partitions copies two objects per partition, and
    replace took ~5% of a 1,000-partition batch.
    """
    cls = type(obj)
    values = _FIELD_VALUES.get(cls)
    if values is None:
        declared = fields(cls)  # type: ignore[arg-type]
        if not all(f.init for f in declared):
            raise TypeError(f"{cls.__name__}: every field must be an __init__ argument to be copied this way")
        names = [f.name for f in declared]
        getter = attrgetter(*names)
        values = _FIELD_VALUES[cls] = getter if len(names) > 1 else (lambda o: (getter(o),))
    return cls(*values(obj))


# ---- roles and privileges (Hive's authorization model; catalog/privileges.py, catalog/authz.py) -------------

USER, ROLE, GROUP = 1, 2, 3  # Hive's PrincipalType
PRINCIPAL_TYPES = {USER: "USER", ROLE: "ROLE", GROUP: "GROUP"}
GLOBAL, DATABASE, TABLE = 1, 2, 3  # Hive's HiveObjectType (PARTITION and COLUMN are not kept)
OBJECT_TYPES = {GLOBAL: "GLOBAL", DATABASE: "DATABASE", TABLE: "TABLE"}
# the privilege names a grant may carry: Hive's SQL-standard ones, and CREATE (on a database: create in it)
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "ALL", "CREATE")
PUBLIC, ADMIN = "public", "admin"  # the built-in roles: everyone, and the administrators


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """What a privilege is on: GLOBAL (the whole metastore), a DATABASE (`db`) or a TABLE (`db`.`table`)."""

    type: int
    db: str | None = None
    table: str | None = None

    def describe(self) -> str:
        """Hive's rendering in an authorization error: `Object [type=TABLE_OR_VIEW, name=db.t]`."""
        if self.type == TABLE:
            return f"Object [type=TABLE_OR_VIEW, name={self.db}.{self.table}]"
        if self.type == DATABASE:
            return f"Object [type=DATABASE, name={self.db}]"
        return "Object [type=GLOBAL, name=null]"

    def audit(self) -> str:
        """The audit log's name for it: `table:db.t`, `database:db`, `global`."""
        if self.type == TABLE:
            return f"table:{self.db}.{self.table}"
        if self.type == DATABASE:
            return f"database:{self.db}"
        return "global"


GLOBAL_OBJECT = ObjectRef(GLOBAL)


@dataclass(slots=True)
class PrivilegeGrant:
    """One privilege granted to one principal on one object (a row of GLOBAL_PRIVS, DB_PRIVS or TBL_PRIVS)."""

    object: ObjectRef
    principalName: str
    principalType: int
    privilege: str
    grantOption: bool = False
    grantor: str = ""
    grantorType: int = USER
    createTime: int = 0


@dataclass(slots=True)
class Role:
    roleName: str
    createTime: int = 0
    ownerName: str | None = None


@dataclass(slots=True)
class RoleGrant:
    """A role granted to a principal (a row of ROLE_MAP): Hive's RolePrincipalGrant."""

    roleName: str
    principalName: str
    principalType: int
    grantOption: bool = False  # WITH ADMIN OPTION: may grant the role on, and revoke it
    grantTime: int = 0
    grantorName: str = ""
    grantorPrincipalType: int = USER
