"""The store's tables, in the shape of Hive's metastore schema (names and columns follow Hive's).

Every table is created with a binary collation on MariaDB: Hive names and partition values are
compared byte for byte, and MariaDB's default collation would fold case and trailing spaces.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

metadata = sa.MetaData(
    naming_convention={
        "ix": "IX_%(table_name)s_%(column_0_N_name)s",
        "uq": "UQ_%(table_name)s_%(column_0_N_name)s",
        "fk": "FK_%(table_name)s_%(column_0_name)s",
        "pk": "PK_%(table_name)s",
    }
)

# BIGINT identity that is still SQLite's ROWID alias, so it autoincrements there too.
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
_MYSQL: dict[str, Any] = {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mariadb_charset": "utf8mb4",
          "mariadb_collate": "utf8mb4_bin"}

NAME_LEN = 128
PART_NAME_LEN = 767


def _id(name: str) -> sa.Column[Any]:
    return sa.Column(name, Id, primary_key=True, autoincrement=True)


def _fk(name: str, target: str, **kw: Any) -> sa.Column[Any]:
    return sa.Column(name, Id, sa.ForeignKey(target, ondelete="CASCADE"), nullable=False, **kw)


def _params(table: str, owner: str, target: str) -> sa.Table:
    return sa.Table(
        table, metadata,
        _fk(owner, target, primary_key=True),
        sa.Column("PARAM_KEY", sa.String(256), primary_key=True),
        sa.Column("PARAM_VALUE", sa.Text()),
        **_MYSQL,
    )


dbs = sa.Table(
    "DBS", metadata,
    _id("DB_ID"),
    sa.Column("NAME", sa.String(NAME_LEN), nullable=False),
    sa.Column("DESC", sa.String(4000)),
    sa.Column("DB_LOCATION_URI", sa.String(4000), nullable=False),
    sa.Column("OWNER_NAME", sa.String(NAME_LEN)),
    sa.Column("OWNER_TYPE", sa.String(10)),
    sa.Column("CTLG_NAME", sa.String(256), nullable=False, server_default="hive"),
    sa.Column("CREATE_TIME", sa.Integer()),
    sa.UniqueConstraint("CTLG_NAME", "NAME"),
    **_MYSQL,
)
database_params = _params("DATABASE_PARAMS", "DB_ID", "DBS.DB_ID")

serdes = sa.Table(
    "SERDES", metadata,
    _id("SERDE_ID"),
    sa.Column("NAME", sa.String(NAME_LEN)),
    sa.Column("SLIB", sa.String(4000)),
    sa.Column("DESCRIPTION", sa.String(4000)),
    sa.Column("SERIALIZER_CLASS", sa.String(4000)),
    sa.Column("DESERIALIZER_CLASS", sa.String(4000)),
    sa.Column("SERDE_TYPE", sa.Integer()),
    **_MYSQL,
)
serde_params = _params("SERDE_PARAMS", "SERDE_ID", "SERDES.SERDE_ID")

# A column descriptor is shared by a table and those of its partitions whose columns are the table's.
cds = sa.Table("CDS", metadata, _id("CD_ID"), **_MYSQL)
columns_v2 = sa.Table(
    "COLUMNS_V2", metadata,
    _fk("CD_ID", "CDS.CD_ID", primary_key=True),
    sa.Column("INTEGER_IDX", sa.Integer(), primary_key=True),
    sa.Column("COLUMN_NAME", sa.String(767), nullable=False),
    sa.Column("TYPE_NAME", sa.Text(), nullable=False),
    sa.Column("COMMENT", sa.String(4000)),
    **_MYSQL,
)

sds = sa.Table(
    "SDS", metadata,
    _id("SD_ID"),
    sa.Column("CD_ID", Id, sa.ForeignKey("CDS.CD_ID"), index=True),
    sa.Column("SERDE_ID", Id, sa.ForeignKey("SERDES.SERDE_ID"), index=True),
    sa.Column("INPUT_FORMAT", sa.String(4000)),
    sa.Column("OUTPUT_FORMAT", sa.String(4000)),
    sa.Column("LOCATION", sa.String(4000)),
    sa.Column("IS_COMPRESSED", sa.Boolean(), nullable=False, server_default=sa.false()),
    sa.Column("IS_STOREDASSUBDIRECTORIES", sa.Boolean(), nullable=False, server_default=sa.false()),
    sa.Column("NUM_BUCKETS", sa.Integer(), nullable=False, server_default="-1"),
    # Hive spreads these over BUCKETING_COLS, SORT_COLS and five SKEWED_* tables; they are small,
    # always read with the descriptor and never queried by value, so one JSON column each does.
    sa.Column("BUCKET_COLS", sa.Text()),
    sa.Column("SORT_COLS", sa.Text()),
    sa.Column("SKEWED_INFO", sa.Text()),
    **_MYSQL,
)
sd_params = _params("SD_PARAMS", "SD_ID", "SDS.SD_ID")

tbls = sa.Table(
    "TBLS", metadata,
    _id("TBL_ID"),
    _fk("DB_ID", "DBS.DB_ID"),
    sa.Column("TBL_NAME", sa.String(256), nullable=False),
    sa.Column("OWNER", sa.String(767)),
    sa.Column("OWNER_TYPE", sa.String(10)),
    sa.Column("CREATE_TIME", sa.Integer(), nullable=False),
    sa.Column("LAST_ACCESS_TIME", sa.Integer(), nullable=False, server_default="0"),
    sa.Column("RETENTION", sa.Integer(), nullable=False, server_default="0"),
    sa.Column("SD_ID", Id, sa.ForeignKey("SDS.SD_ID"), index=True),
    sa.Column("TBL_TYPE", sa.String(128)),
    sa.Column("VIEW_ORIGINAL_TEXT", LongText),
    sa.Column("VIEW_EXPANDED_TEXT", LongText),
    sa.Column("IS_REWRITE_ENABLED", sa.Boolean(), nullable=False, server_default=sa.false()),
    # bumped by every change to the table or its partitions: readers key serialized forms on it
    sa.Column("VERSION", sa.BigInteger(), nullable=False, server_default="1"),
    sa.UniqueConstraint("DB_ID", "TBL_NAME"),
    **_MYSQL,
)
table_params = _params("TABLE_PARAMS", "TBL_ID", "TBLS.TBL_ID")

partition_keys = sa.Table(
    "PARTITION_KEYS", metadata,
    _fk("TBL_ID", "TBLS.TBL_ID", primary_key=True),
    sa.Column("INTEGER_IDX", sa.Integer(), primary_key=True),
    sa.Column("PKEY_NAME", sa.String(128), nullable=False),
    sa.Column("PKEY_TYPE", sa.String(767), nullable=False),
    sa.Column("PKEY_COMMENT", sa.String(4000)),
    **_MYSQL,
)

partitions = sa.Table(
    "PARTITIONS", metadata,
    _id("PART_ID"),
    _fk("TBL_ID", "TBLS.TBL_ID"),
    sa.Column("PART_NAME", sa.String(PART_NAME_LEN), nullable=False),
    sa.Column("CREATE_TIME", sa.Integer(), nullable=False),
    sa.Column("LAST_ACCESS_TIME", sa.Integer(), nullable=False, server_default="0"),
    sa.Column("SD_ID", Id, sa.ForeignKey("SDS.SD_ID"), index=True),
    sa.Index("UQ_PARTITIONS_TBL_ID_PART_NAME", "TBL_ID", "PART_NAME", unique=True,
             mysql_length={"PART_NAME": 760}, mariadb_length={"PART_NAME": 760}),
    **_MYSQL,
)
partition_key_vals = sa.Table(
    "PARTITION_KEY_VALS", metadata,
    _fk("PART_ID", "PARTITIONS.PART_ID", primary_key=True),
    sa.Column("INTEGER_IDX", sa.Integer(), primary_key=True),
    sa.Column("PART_KEY_VAL", sa.String(256)),
    sa.Index("IX_PARTITION_KEY_VALS_IDX_VAL", "INTEGER_IDX", "PART_KEY_VAL"),
    **_MYSQL,
)
partition_params = _params("PARTITION_PARAMS", "PART_ID", "PARTITIONS.PART_ID")

funcs = sa.Table(
    "FUNCS", metadata,
    _id("FUNC_ID"),
    _fk("DB_ID", "DBS.DB_ID"),
    sa.Column("FUNC_NAME", sa.String(128), nullable=False),
    sa.Column("CLASS_NAME", sa.String(4000)),
    sa.Column("OWNER_NAME", sa.String(128)),
    sa.Column("OWNER_TYPE", sa.String(10)),
    sa.Column("CREATE_TIME", sa.Integer(), nullable=False),
    sa.Column("FUNC_TYPE", sa.Integer(), nullable=False),
    sa.UniqueConstraint("DB_ID", "FUNC_NAME"),
    **_MYSQL,
)
func_ru = sa.Table(
    "FUNC_RU", metadata,
    _fk("FUNC_ID", "FUNCS.FUNC_ID", primary_key=True),
    sa.Column("INTEGER_IDX", sa.Integer(), primary_key=True),
    sa.Column("RESOURCE_TYPE", sa.Integer(), nullable=False),
    sa.Column("RESOURCE_URI", sa.String(4000)),
    **_MYSQL,
)


def _stats_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("COLUMN_NAME", sa.String(767), nullable=False),
        sa.Column("COLUMN_TYPE", sa.String(128), nullable=False),
        sa.Column("STATS_KIND", sa.String(16), nullable=False),
        sa.Column("LONG_LOW_VALUE", sa.BigInteger()),
        sa.Column("LONG_HIGH_VALUE", sa.BigInteger()),
        sa.Column("DOUBLE_LOW_VALUE", sa.Float(53)),
        sa.Column("DOUBLE_HIGH_VALUE", sa.Float(53)),
        sa.Column("BIG_DECIMAL_LOW_VALUE", sa.String(4000)),
        sa.Column("BIG_DECIMAL_HIGH_VALUE", sa.String(4000)),
        sa.Column("NUM_NULLS", sa.BigInteger(), nullable=False),
        sa.Column("NUM_DISTINCTS", sa.BigInteger()),
        sa.Column("BIT_VECTOR", sa.LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")),
        sa.Column("AVG_COL_LEN", sa.Float(53)),
        sa.Column("MAX_COL_LEN", sa.BigInteger()),
        sa.Column("NUM_TRUES", sa.BigInteger()),
        sa.Column("NUM_FALSES", sa.BigInteger()),
        sa.Column("LAST_ANALYZED", sa.BigInteger(), nullable=False),
        sa.Column("ENGINE", sa.String(128), nullable=False, server_default="hive"),
    ]


def _stats_table(name: str, owner: str, owner_table: str) -> sa.Table:
    """A column statistics table: one row per (owner, column, engine)."""
    return sa.Table(
        name, metadata,
        _id("CS_ID"),
        _fk(owner, f"{owner_table}.{owner}"),
        *_stats_columns(),
        sa.Index(f"UQ_{name}_COL", owner, "COLUMN_NAME", "ENGINE", unique=True,
                 mysql_length={"COLUMN_NAME": 600}, mariadb_length={"COLUMN_NAME": 600}),
        **_MYSQL,
    )


tab_col_stats = _stats_table("TAB_COL_STATS", "TBL_ID", "TBLS")
part_col_stats = _stats_table("PART_COL_STATS", "PART_ID", "PARTITIONS")

notification_log = sa.Table(
    "NOTIFICATION_LOG", metadata,
    sa.Column("NL_ID", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("EVENT_ID", sa.BigInteger(), nullable=False, unique=True),
    sa.Column("EVENT_TIME", sa.Integer(), nullable=False),
    sa.Column("EVENT_TYPE", sa.String(32), nullable=False),
    sa.Column("CAT_NAME", sa.String(256)),
    sa.Column("DB_NAME", sa.String(128)),
    sa.Column("TBL_NAME", sa.String(256)),
    sa.Column("MESSAGE", LongText),
    sa.Column("MESSAGE_FORMAT", sa.String(16)),
    sa.Index("IX_NOTIFICATION_LOG_DB_TBL", "DB_NAME", "TBL_NAME"),
    **_MYSQL,
)
# One row. Every writing transaction increments it first, which both numbers events without gaps
# and serializes writers, so event ids are in commit order.
notification_sequence = sa.Table(
    "NOTIFICATION_SEQUENCE", metadata,
    sa.Column("NNI_ID", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("NEXT_EVENT_ID", sa.BigInteger(), nullable=False),
    **_MYSQL,
)
# Registered readers of the notification log (relay cursors, replication policies): retention keeps every
# event after a consumer's LAST_EVENT_ID (up to a hard age cap). OWNER/LEASE_UNTIL (epoch ms): the one process
# that may advance the cursor (several servers on one database run one relay between them).
notification_consumers = sa.Table(
    "NOTIFICATION_CONSUMERS", metadata,
    sa.Column("NAME", sa.String(256), primary_key=True),
    sa.Column("LAST_EVENT_ID", sa.BigInteger(), nullable=False),
    sa.Column("UPDATED", sa.BigInteger(), nullable=False),
    sa.Column("OWNER", sa.String(256)),
    sa.Column("LEASE_UNTIL", sa.BigInteger()),
    **_MYSQL,
)

# Hive's lock manager (DbTxnManager's tables): one row per lock component. A lock (HL_LOCK_EXT_ID) is all its
# components (HL_LOCK_INT_ID 1..n), granted together. State: 'a' acquired, 'w' waiting; type: 'r' shared read,
# 'w' shared write, 'x' exclusive write, 'e' exclusive. Times are epoch milliseconds. A lock of a transaction
# (HL_TXNID > 0) lives as long as the transaction; any other lock as long as its holder heartbeats.
hive_locks = sa.Table(
    "HIVE_LOCKS", metadata,
    sa.Column("HL_LOCK_EXT_ID", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("HL_LOCK_INT_ID", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("HL_TXNID", sa.BigInteger(), nullable=False, server_default="0"),
    sa.Column("HL_DB", sa.String(NAME_LEN), nullable=False),
    sa.Column("HL_TABLE", sa.String(256)),
    sa.Column("HL_PARTITION", sa.String(PART_NAME_LEN)),
    sa.Column("HL_LOCK_STATE", sa.String(1), nullable=False),
    sa.Column("HL_LOCK_TYPE", sa.String(1), nullable=False),
    sa.Column("HL_LAST_HEARTBEAT", sa.BigInteger(), nullable=False),
    sa.Column("HL_ACQUIRED_AT", sa.BigInteger()),
    sa.Column("HL_USER", sa.String(128), nullable=False),
    sa.Column("HL_HOST", sa.String(128), nullable=False),
    sa.Column("HL_HEARTBEAT_COUNT", sa.Integer()),
    sa.Column("HL_AGENT_INFO", sa.String(128)),
    sa.Index("IX_HIVE_LOCKS_HL_TXNID", "HL_TXNID"),
    **_MYSQL,
)
# Transactions: 'o' open, 'a' aborted, 'c' committed. Times are epoch milliseconds.
txns = sa.Table(
    "TXNS", metadata,
    sa.Column("TXN_ID", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("TXN_STATE", sa.String(1), nullable=False),
    sa.Column("TXN_STARTED", sa.BigInteger(), nullable=False),
    sa.Column("TXN_LAST_HEARTBEAT", sa.BigInteger(), nullable=False),
    sa.Column("TXN_USER", sa.String(128), nullable=False),
    sa.Column("TXN_HOST", sa.String(128), nullable=False),
    sa.Column("TXN_AGENT_INFO", sa.String(128)),
    sa.Index("IX_TXNS_TXN_STATE", "TXN_STATE"),
    **_MYSQL,
)
# The next lock and transaction ids: one row each (as Hive's NEXT_LOCK_ID and NEXT_TXN_ID).
next_lock_id = sa.Table(
    "NEXT_LOCK_ID", metadata,
    sa.Column("NL_NEXT", sa.BigInteger(), primary_key=True, autoincrement=False),
    **_MYSQL,
)
next_txn_id = sa.Table(
    "NEXT_TXN_ID", metadata,
    sa.Column("NTXN_NEXT", sa.BigInteger(), primary_key=True, autoincrement=False),
    **_MYSQL,
)
# Compaction requests (Hive's COMPACTION_QUEUE): ALTER TABLE ... COMPACT records one, SHOW COMPACTIONS lists them.
# No compactor runs here, so a request stays 'i' (initiated). CQ_TYPE: Hive's letters, 'a' major, 'i' minor.
compaction_queue = sa.Table(
    "COMPACTION_QUEUE", metadata,
    sa.Column("CQ_ID", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("CQ_DATABASE", sa.String(128), nullable=False),
    sa.Column("CQ_TABLE", sa.String(256), nullable=False),
    sa.Column("CQ_PARTITION", sa.String(767)),
    sa.Column("CQ_STATE", sa.String(1), nullable=False),
    sa.Column("CQ_TYPE", sa.String(1), nullable=False),
    sa.Column("CQ_TBLPROPERTIES", sa.String(2048)),
    sa.Column("CQ_WORKER_ID", sa.String(128)),
    sa.Column("CQ_START", sa.BigInteger()),
    sa.Column("CQ_RUN_AS", sa.String(128)),
    sa.Column("CQ_HIGHEST_TXN_ID", sa.BigInteger()),
    sa.Column("CQ_HADOOP_JOB_ID", sa.String(32)),
    sa.Index("IX_COMPACTION_QUEUE_TABLE", "CQ_DATABASE", "CQ_TABLE"),
    **_MYSQL,
)
next_compaction_queue_id = sa.Table(
    "NEXT_COMPACTION_QUEUE_ID", metadata,
    sa.Column("NCQ_NEXT", sa.BigInteger(), primary_key=True, autoincrement=False),
    **_MYSQL,
)
# Write ids (Hive 3's): each table numbers the transactions that write it, 1, 2, ... without gaps. TXN_TO_WRITE_ID
# maps a transaction to its write id on a table (one per transaction and table, one transaction per write id);
# NEXT_WRITE_ID holds each table's next write id (a table without a row has allocated none). Readers turn them into
# a table's valid write-id list against their valid transaction list (catalog/locks.py).
txn_to_write_id = sa.Table(
    "TXN_TO_WRITE_ID", metadata,
    sa.Column("T2W_TXNID", sa.BigInteger(), primary_key=True, autoincrement=False),
    sa.Column("T2W_DATABASE", sa.String(NAME_LEN), primary_key=True),
    sa.Column("T2W_TABLE", sa.String(256), primary_key=True),
    sa.Column("T2W_WRITEID", sa.BigInteger(), nullable=False),
    sa.UniqueConstraint("T2W_DATABASE", "T2W_TABLE", "T2W_WRITEID"),
    sa.Index("IX_TXN_TO_WRITE_ID_T2W_TXNID", "T2W_TXNID"),
    **_MYSQL,
)
next_write_id = sa.Table(
    "NEXT_WRITE_ID", metadata,
    sa.Column("NWI_DATABASE", sa.String(NAME_LEN), primary_key=True),
    sa.Column("NWI_TABLE", sa.String(256), primary_key=True),
    sa.Column("NWI_NEXT", sa.BigInteger(), nullable=False),
    **_MYSQL,
)
# What a transaction wrote (add_write_notification_log, Hive's TXN_WRITE_NOTIFICATION_LOG): one row per
# transaction and table or partition (WNL_PARTITION: its name, '' for an unpartitioned table), the table's and
# partition's Thrift JSON at the write and the files written (a JSON list; a repeated call adds its files).
txn_write_notification_log = sa.Table(
    "TXN_WRITE_NOTIFICATION_LOG", metadata,
    _id("WNL_ID"),
    sa.Column("WNL_TXNID", sa.BigInteger(), nullable=False),
    sa.Column("WNL_WRITEID", sa.BigInteger(), nullable=False),
    sa.Column("WNL_DATABASE", sa.String(NAME_LEN), nullable=False),
    sa.Column("WNL_TABLE", sa.String(256), nullable=False),
    sa.Column("WNL_PARTITION", sa.String(PART_NAME_LEN), nullable=False),
    sa.Column("WNL_TABLE_OBJ", LongText, nullable=False),
    sa.Column("WNL_PARTITION_OBJ", LongText),
    sa.Column("WNL_FILES", LongText),
    sa.Column("WNL_EVENT_TIME", sa.Integer(), nullable=False),
    sa.Index("IX_TXN_WRITE_NOTIFICATION_LOG_WNL_TXNID", "WNL_TXNID"),
    **_MYSQL,
)

# Scheduled queries (Hive 4's SCHEDULED_QUERIES and SCHEDULED_EXECUTIONS) and replication metrics
# (REPLICATION_METRICS): the replication policies that `metastore serve` runs, one execution at a time per
# query. SCHEDULE is the statement's schedule text (EVERY ..., CRON '...'); times are epoch seconds; STATE is
# Hive's QueryState (INITED, EXECUTING, FAILED, FINISHED, TIMED_OUT, AUTO_DISABLED). RM_METADATA and
# RM_PROGRESS are JSON (MESSAGE_FORMAT 'json').
scheduled_queries = sa.Table(
    "SCHEDULED_QUERIES", metadata,
    _id("SCHEDULED_QUERY_ID"),
    sa.Column("SCHEDULE_NAME", sa.String(256), nullable=False),
    sa.Column("CLUSTER_NAMESPACE", sa.String(256), nullable=False),
    sa.Column("ENABLED", sa.Boolean(), nullable=False),
    sa.Column("USER", sa.String(256), nullable=False),
    sa.Column("SCHEDULE", sa.String(256), nullable=False),
    sa.Column("QUERY", sa.Text(), nullable=False),
    sa.Column("NEXT_EXECUTION", sa.BigInteger()),
    sa.Column("ACTIVE_EXECUTION_ID", sa.BigInteger()),
    sa.UniqueConstraint("CLUSTER_NAMESPACE", "SCHEDULE_NAME"),
    **_MYSQL,
)
scheduled_executions = sa.Table(
    "SCHEDULED_EXECUTIONS", metadata,
    _id("SCHEDULED_EXECUTION_ID"),
    _fk("SCHEDULED_QUERY_ID", "SCHEDULED_QUERIES.SCHEDULED_QUERY_ID"),
    sa.Column("EXECUTOR_QUERY_ID", sa.String(256)),
    sa.Column("STATE", sa.String(256), nullable=False),
    sa.Column("START_TIME", sa.BigInteger(), nullable=False),
    sa.Column("END_TIME", sa.BigInteger()),
    sa.Column("ERROR_MESSAGE", sa.String(2000)),
    sa.Column("LAST_UPDATE_TIME", sa.BigInteger(), nullable=False),
    sa.Index("IX_SCHEDULED_EXECUTIONS_SCHEDULED_QUERY_ID", "SCHEDULED_QUERY_ID"),
    **_MYSQL,
)
replication_metrics = sa.Table(
    "REPLICATION_METRICS", metadata,
    sa.Column("RM_SCHEDULED_EXECUTION_ID", Id, primary_key=True, autoincrement=False),
    sa.Column("RM_POLICY", sa.String(256), nullable=False),
    sa.Column("RM_DUMP_EXECUTION_ID", sa.BigInteger(), nullable=False),
    sa.Column("RM_METADATA", sa.Text()),
    sa.Column("RM_PROGRESS", sa.Text()),
    sa.Column("RM_START_TIME", sa.BigInteger(), nullable=False),
    sa.Column("MESSAGE_FORMAT", sa.String(16), server_default="json"),
    sa.Index("IX_REPLICATION_METRICS_RM_POLICY", "RM_POLICY"),
    **_MYSQL,
)

# Identity and access (README "Security"), in the shape of Hive's: roles and their grants (ROLES, ROLE_MAP),
# privileges at the global, database and table level (GLOBAL_PRIVS, DB_PRIVS, TBL_PRIVS; a privilege name per
# row, as Hive's SQL-standard authorizer stores them: SELECT, INSERT, UPDATE, DELETE, ALL, ...), with the grant
# option and who granted them. PRINCIPAL_TYPE / GRANTOR_TYPE are Hive's PrincipalType names (USER, ROLE, GROUP).
# A database's or table's privileges go with it (ON DELETE CASCADE) and follow a rename (they key on the id).
# DELEGATION_TOKENS and MASTER_KEYS hold the delegation tokens the server issued (SASL DIGEST-MD5) and the keys
# that sign them, so that every server process on one store accepts them.
_PRINCIPAL = ("PRINCIPAL_NAME", "PRINCIPAL_TYPE")


def _grant_columns(time: str, priv: str | None = None) -> list[sa.Column[Any]]:
    """The columns of a grant (of a privilege named in column `priv`, or of a role): when, with the grant option
    or not, by whom, to whom."""
    return [
        sa.Column(time, sa.Integer(), nullable=False),
        sa.Column("GRANT_OPTION", sa.SmallInteger(), nullable=False, server_default="0"),
        sa.Column("GRANTOR", sa.String(NAME_LEN), nullable=False),
        sa.Column("GRANTOR_TYPE", sa.String(NAME_LEN), nullable=False),
        sa.Column("PRINCIPAL_NAME", sa.String(NAME_LEN), nullable=False),
        sa.Column("PRINCIPAL_TYPE", sa.String(NAME_LEN), nullable=False),
        *([sa.Column(priv, sa.String(NAME_LEN), nullable=False)] if priv else []),
    ]


roles = sa.Table(
    "ROLES", metadata,
    _id("ROLE_ID"),
    sa.Column("CREATE_TIME", sa.Integer(), nullable=False),
    sa.Column("OWNER_NAME", sa.String(NAME_LEN)),
    sa.Column("ROLE_NAME", sa.String(NAME_LEN), nullable=False),
    sa.UniqueConstraint("ROLE_NAME"),
    **_MYSQL,
)
role_map = sa.Table(
    "ROLE_MAP", metadata,
    _id("ROLE_GRANT_ID"),
    *_grant_columns("ADD_TIME"),
    _fk("ROLE_ID", "ROLES.ROLE_ID"),
    sa.UniqueConstraint("ROLE_ID", *_PRINCIPAL),
    sa.Index("IX_ROLE_MAP_PRINCIPAL_NAME_PRINCIPAL_TYPE", *_PRINCIPAL),
    **_MYSQL,
)
global_privs = sa.Table(
    "GLOBAL_PRIVS", metadata,
    _id("USER_GRANT_ID"),
    *_grant_columns("CREATE_TIME", "USER_PRIV"),
    sa.UniqueConstraint(*_PRINCIPAL, "USER_PRIV"),
    **_MYSQL,
)


def _object_privs(table: str, grant_id: str, object_id: str, target: str, priv: str) -> sa.Table:
    return sa.Table(
        table, metadata,
        _id(grant_id),
        _fk(object_id, target),
        *_grant_columns("CREATE_TIME", priv),
        sa.UniqueConstraint(object_id, *_PRINCIPAL, priv),
        sa.Index(f"IX_{table}_PRINCIPAL_NAME_PRINCIPAL_TYPE", *_PRINCIPAL),
        **_MYSQL,
    )


db_privs = _object_privs("DB_PRIVS", "DB_GRANT_ID", "DB_ID", "DBS.DB_ID", "DB_PRIV")
tbl_privs = _object_privs("TBL_PRIVS", "TBL_GRANT_ID", "TBL_ID", "TBLS.TBL_ID", "TBL_PRIV")
delegation_tokens = sa.Table(
    "DELEGATION_TOKENS", metadata,
    sa.Column("TOKEN_IDENT", sa.String(767), primary_key=True),
    sa.Column("TOKEN", sa.String(767)),
    **_MYSQL,
)
master_keys = sa.Table(
    "MASTER_KEYS", metadata,
    _id("KEY_ID"),
    sa.Column("MASTER_KEY", sa.String(767)),
    **_MYSQL,
)
# The store's own properties, as Hive's METASTORE_DB_PROPERTIES: "guid", the store's uuid (get_metastore_db_uuid),
# made once, by the first call that asks for it.
metastore_db_properties = sa.Table(
    "METASTORE_DB_PROPERTIES", metadata,
    sa.Column("PROPERTY_KEY", sa.String(255), primary_key=True),
    sa.Column("PROPERTY_VALUE", sa.String(1000), nullable=False),
    sa.Column("DESCRIPTION", sa.String(1000)),
    **_MYSQL,
)

# Constraints (Hive's KEY_CONSTRAINTS; core/constraints.py): one row per column of a constraint. The column is
# (CD_ID, INTEGER_IDX) in COLUMNS_V2, or with a NULL CD_ID the INTEGER_IDX-th partition key of the table, as
# Hive 3 keeps them. PARENT_* is the constraint's own table, or for a foreign key the referenced table and
# CHILD_* the table the key is on. CONSTRAINT_TYPE: 0 primary key, 1 foreign key, 2 unique, 3 not null,
# 4 default, 5 check; ENABLE_VALIDATE_RELY: 4 enable + 2 validate + 1 rely; DEFAULT_VALUE: a default's value or
# a check's expression. A name is unique in the database of its table (the child's for a foreign key); KC_ID is
# the row's own key (Hive's (CONSTRAINT_NAME, POSITION) is unique in the whole metastore). Constraints key on
# the table ids: they follow a rename and go with a drop of either table (ON DELETE CASCADE), as in Hive.
key_constraints = sa.Table(
    "KEY_CONSTRAINTS", metadata,
    _id("KC_ID"),
    sa.Column("CHILD_CD_ID", Id),
    sa.Column("CHILD_INTEGER_IDX", sa.Integer()),
    sa.Column("CHILD_TBL_ID", Id, sa.ForeignKey("TBLS.TBL_ID", ondelete="CASCADE")),
    sa.Column("PARENT_CD_ID", Id),
    sa.Column("PARENT_INTEGER_IDX", sa.Integer(), nullable=False),
    _fk("PARENT_TBL_ID", "TBLS.TBL_ID"),
    sa.Column("POSITION", sa.BigInteger(), nullable=False),
    sa.Column("CONSTRAINT_NAME", sa.String(400), nullable=False),
    sa.Column("CONSTRAINT_TYPE", sa.SmallInteger(), nullable=False),
    sa.Column("UPDATE_RULE", sa.SmallInteger()),
    sa.Column("DELETE_RULE", sa.SmallInteger()),
    sa.Column("ENABLE_VALIDATE_RELY", sa.SmallInteger(), nullable=False),
    sa.Column("DEFAULT_VALUE", sa.String(400)),
    sa.Index("IX_KEY_CONSTRAINTS_PARENT_TBL_ID", "PARENT_TBL_ID"),
    sa.Index("IX_KEY_CONSTRAINTS_CHILD_TBL_ID", "CHILD_TBL_ID"),
    sa.Index("IX_KEY_CONSTRAINTS_CONSTRAINT_NAME", "CONSTRAINT_NAME"),
    **_MYSQL,
)
