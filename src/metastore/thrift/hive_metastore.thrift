// The Hive Metastore Thrift service, as far as this project serves it.
// Written for this project from the wire facts only (method names, field ids, types); fields of newer Hive
// versions are included where clients send or expect them, so Hive 2.3 and Hive 4 clients both work.
// A method missing here is answered with TApplicationException UNKNOWN_METHOD.

include "fb303.thrift"

exception MetaException {
  1: string message
}

struct PrivilegeGrantInfo {
  1: string privilege,
  2: i32 createTime,
  3: string grantor,
  4: i32 grantorType,
  5: bool grantOption
}

struct PrincipalPrivilegeSet {
  1: map<string,list<PrivilegeGrantInfo>> userPrivileges,
  2: map<string,list<PrivilegeGrantInfo>> groupPrivileges,
  3: map<string,list<PrivilegeGrantInfo>> rolePrivileges
}

struct Database {
  1: string name,
  2: string description,
  3: string locationUri,
  4: map<string,string> parameters,
  5: PrincipalPrivilegeSet privileges,
  6: string ownerName,
  7: i32 ownerType,
  8: string catalogName,
  9: i32 createTime,
  10: string managedLocationUri,
  11: i32 type,
  12: string connector_name,
  13: string remote_dbname
}

exception AlreadyExistsException {
  1: string message
}

exception InvalidObjectException {
  1: string message
}

exception NoSuchObjectException {
  1: string message
}

exception InvalidOperationException {
  1: string message
}

struct FieldSchema {
  1: string name,
  2: string type,
  3: string comment
}

exception UnknownTableException {
  1: string message
}

exception UnknownDBException {
  1: string message
}

struct EnvironmentContext {
  1: map<string,string> properties
}

struct SerDeInfo {
  1: string name,
  2: string serializationLib,
  3: map<string,string> parameters,
  4: string description,
  5: string serializerClass,
  6: string deserializerClass,
  7: i32 serdeType
}

struct Order {
  1: string col,
  2: i32 order
}

struct SkewedInfo {
  1: list<string> skewedColNames,
  2: list<list<string>> skewedColValues,
  3: map<list<string>,string> skewedColValueLocationMaps
}

struct StorageDescriptor {
  1: list<FieldSchema> cols,
  2: string location,
  3: string inputFormat,
  4: string outputFormat,
  5: bool compressed,
  6: i32 numBuckets,
  7: SerDeInfo serdeInfo,
  8: list<string> bucketCols,
  9: list<Order> sortCols,
  10: map<string,string> parameters,
  11: SkewedInfo skewedInfo,
  12: bool storedAsSubDirectories
}

struct Table {
  1: string tableName,
  2: string dbName,
  3: string owner,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: i32 retention,
  7: StorageDescriptor sd,
  8: list<FieldSchema> partitionKeys,
  9: map<string,string> parameters,
  10: string viewOriginalText,
  11: string viewExpandedText,
  12: string tableType,
  13: PrincipalPrivilegeSet privileges,
  14: bool temporary,
  15: bool rewriteEnabled,
  17: string catName,
  18: i32 ownerType,
  19: i64 writeId,
  20: bool isStatsCompliant,
  22: byte accessType,
  23: list<string> requiredReadCapabilities,
  24: list<string> requiredWriteCapabilities,
  25: i64 id,
  28: i64 txnId
}

struct TableMeta {
  1: required string dbName,
  2: required string tableName,
  3: required string tableType,
  4: string comments,
  5: string catName
}

struct GetTableRequest {
  1: required string dbName,
  2: required string tblName,
  4: string catName,
  6: string validWriteIdList,
  7: bool getColumnStats,
  9: string processorIdentifier,
  10: string engine,
  11: i64 id
}

struct GetTableResult {
  1: required Table table,
  2: bool isStatsCompliant
}

struct GetProjectionsSpec {
  1: list<string> fieldList,
  2: string includeParamKeyPattern,
  3: string excludeParamKeyPattern
}

struct GetTablesRequest {
  1: required string dbName,
  2: list<string> tblNames,
  4: string catName,
  5: list<string> processorCapabilities,
  6: string processorIdentifier,
  7: GetProjectionsSpec projectionSpec,
  8: string tablesPattern
}

struct GetTablesResult {
  1: required list<Table> tables
}

struct Partition {
  1: list<string> values,
  2: string dbName,
  3: string tableName,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: StorageDescriptor sd,
  7: map<string,string> parameters,
  8: PrincipalPrivilegeSet privileges,
  9: string catName,
  10: i64 writeId,
  11: bool isStatsCompliant
}

struct AddPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<Partition> parts,
  4: required bool ifNotExists,
  5: bool needResult,
  6: string catName,
  7: string validWriteIdList
}

struct AddPartitionsResult {
  1: list<Partition> partitions,
  2: bool isStatsCompliant
}

struct DropPartitionsExpr {
  1: required binary expr,
  2: i32 partArchiveLevel
}

struct RequestPartsSpec {
  1: list<string> names,
  2: list<DropPartitionsExpr> exprs
}

struct DropPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required RequestPartsSpec parts,
  4: bool deleteData,
  5: bool ifExists,
  6: bool ignoreProtection,
  7: EnvironmentContext environmentContext,
  8: bool needResult,
  9: string catName
}

struct DropPartitionsResult {
  1: list<Partition> partitions
}

struct PartitionsByExprRequest {
  1: required string dbName,
  2: required string tblName,
  3: required binary expr,
  4: string defaultPartitionName,
  5: i16 maxParts,
  6: string catName,
  7: string order,
  8: string validWriteIdList,
  9: i64 id
}

struct PartitionsByExprResult {
  1: required list<Partition> partitions,
  2: required bool hasUnknownPartitions
}

struct GetPartitionsByNamesRequest {
  1: required string db_name,
  2: required string tbl_name,
  3: list<string> names,
  4: bool get_col_stats,
  5: list<string> processorCapabilities,
  6: string processorIdentifier,
  7: string engine,
  8: string validWriteIdList,
  9: bool getFileMetadata,
  10: i64 id
}

struct ObjectDictionary {
  1: required map<string,list<binary>> values
}

struct GetPartitionsByNamesResult {
  1: required list<Partition> partitions,
  2: ObjectDictionary dictionary
}

exception ConfigValSecurityException {
  1: string message
}

struct ColumnStatisticsDesc {
  1: required bool isTblLevel,
  2: required string dbName,
  3: required string tableName,
  4: string partName,
  5: i64 lastAnalyzed,
  6: string catName
}

struct BooleanColumnStatsData {
  1: required i64 numTrues,
  2: required i64 numFalses,
  3: required i64 numNulls,
  4: binary bitVectors
}

struct LongColumnStatsData {
  1: i64 lowValue,
  2: i64 highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: binary bitVectors
}

struct DoubleColumnStatsData {
  1: double lowValue,
  2: double highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: binary bitVectors
}

struct StringColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: binary bitVectors
}

struct BinaryColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: binary bitVectors
}

struct Decimal {
  1: required binary unscaled,
  3: required i16 scale
}

struct DecimalColumnStatsData {
  1: Decimal lowValue,
  2: Decimal highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: binary bitVectors
}

struct Date {
  1: required i64 daysSinceEpoch
}

struct DateColumnStatsData {
  1: Date lowValue,
  2: Date highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: binary bitVectors
}

struct Timestamp {
  1: required i64 secondsSinceEpoch
}

struct TimestampColumnStatsData {
  1: Timestamp lowValue,
  2: Timestamp highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: binary bitVectors
}

struct ColumnStatisticsData {
  1: BooleanColumnStatsData booleanStats,
  2: LongColumnStatsData longStats,
  3: DoubleColumnStatsData doubleStats,
  4: StringColumnStatsData stringStats,
  5: BinaryColumnStatsData binaryStats,
  6: DecimalColumnStatsData decimalStats,
  7: DateColumnStatsData dateStats,
  8: TimestampColumnStatsData timestampStats
}

struct ColumnStatisticsObj {
  1: required string colName,
  2: required string colType,
  3: required ColumnStatisticsData statsData
}

struct ColumnStatistics {
  1: required ColumnStatisticsDesc statsDesc,
  2: required list<ColumnStatisticsObj> statsObj,
  3: bool isStatsCompliant,
  4: string engine
}

exception InvalidInputException {
  1: string message
}

struct TableStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
  4: string catName,
  5: string validWriteIdList,
  6: required string engine,
  7: i64 id
}

struct TableStatsResult {
  1: required list<ColumnStatisticsObj> tableStats,
  2: bool isStatsCompliant
}

struct PartitionsStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
  4: required list<string> partNames,
  5: string catName,
  6: string validWriteIdList,
  7: required string engine
}

struct PartitionsStatsResult {
  1: required map<string,list<ColumnStatisticsObj>> partStats,
  2: bool isStatsCompliant
}

struct AggrStats {
  1: required list<ColumnStatisticsObj> colStats,
  2: required i64 partsFound,
  3: bool isStatsCompliant
}

struct SetPartitionsStatsRequest {
  1: required list<ColumnStatistics> colStats,
  2: bool needMerge,
  3: i64 writeId = -1,
  4: string validWriteIdList,
  5: string engine
}

struct ResourceUri {
  1: i32 resourceType,
  2: string uri
}

struct Function {
  1: string functionName,
  2: string dbName,
  3: string className,
  4: string ownerName,
  5: i32 ownerType,
  6: i32 createTime,
  7: i32 functionType,
  8: list<ResourceUri> resourceUris,
  9: string catName
}

struct GetAllFunctionsResponse {
  1: list<Function> functions
}

struct CurrentNotificationEventId {
  1: required i64 eventId
}

struct NotificationEventRequest {
  1: required i64 lastEvent,
  2: i32 maxEvents,
  3: list<string> eventTypeSkipList
}

struct NotificationEvent {
  1: required i64 eventId,
  2: required i32 eventTime,
  3: required string eventType,
  4: string dbName,
  5: string tableName,
  6: required string message,
  7: string messageFormat,
  8: string catName
}

struct NotificationEventResponse {
  1: required list<NotificationEvent> events
}

struct NotificationEventsCountRequest {
  1: required i64 fromEventId,
  2: required string dbName,
  3: string catName,
  4: i64 toEventId,
  5: i64 limit
}

struct NotificationEventsCountResponse {
  1: required i64 eventsCount
}

struct LockComponent {
  1: required i32 type,
  2: required i32 level,
  3: required string dbname,
  4: string tablename,
  5: string partitionname,
  6: i32 operationType,
  7: bool isTransactional,
  8: bool isDynamicPartitionWrite
}

struct LockRequest {
  1: required list<LockComponent> component,
  2: i64 txnid,
  3: required string user,
  4: required string hostname,
  5: string agentInfo,
  6: bool zeroWaitReadEnabled,
  7: bool exclusiveCTAS
}

struct LockResponse {
  1: required i64 lockid,
  2: required i32 state,
  3: string errorMessage
}

exception NoSuchTxnException {
  1: string message
}

exception TxnAbortedException {
  1: string message
}

struct CheckLockRequest {
  1: required i64 lockid,
  2: i64 txnid,
  3: i64 elapsed_ms
}

exception NoSuchLockException {
  1: string message
}

struct UnlockRequest {
  1: required i64 lockid
}

exception TxnOpenException {
  1: string message
}

struct ShowLocksRequest {
  1: string dbname,
  2: string tablename,
  3: string partname,
  4: bool isExtended,
  5: i64 txnid
}

struct ShowLocksResponseElement {
  1: required i64 lockid,
  2: required string dbname,
  3: string tablename,
  4: string partname,
  5: required i32 state,
  6: required i32 type,
  7: i64 txnid,
  8: required i64 lastheartbeat,
  9: i64 acquiredat,
  10: required string user,
  11: required string hostname,
  12: i32 heartbeatCount,
  13: string agentInfo,
  14: i64 blockedByExtId,
  15: i64 blockedByIntId,
  16: i64 lockIdInternal
}

struct ShowLocksResponse {
  1: list<ShowLocksResponseElement> locks
}

struct HeartbeatRequest {
  1: i64 lockid,
  2: i64 txnid
}

struct OpenTxnRequest {
  1: required i32 num_txns,
  2: required string user,
  3: required string hostname,
  4: string agentInfo,
  5: string replPolicy,
  6: list<i64> replSrcTxnIds,
  7: i32 txn_type
}

struct OpenTxnsResponse {
  1: required list<i64> txn_ids
}

struct AbortTxnRequest {
  1: required i64 txnid,
  2: string replPolicy,
  3: i32 txn_type
}

struct WriteEventInfo {
  1: required i64 writeId,
  2: required string database,
  3: required string table,
  4: required string files,
  5: string partition,
  6: string tableObj,
  7: string partitionObj
}

struct ReplLastIdInfo {
  1: required string database,
  2: required i64 lastReplId,
  3: string table,
  4: string catalog,
  5: list<string> partitionList
}

struct CommitTxnKeyValue {
  1: required i64 tableId,
  2: required string key,
  3: required string value
}

struct CommitTxnRequest {
  1: required i64 txnid,
  2: string replPolicy,
  3: list<WriteEventInfo> writeEventInfos,
  4: ReplLastIdInfo replLastIdInfo,
  5: CommitTxnKeyValue keyValue,
  6: bool exclWriteEnabled,
  7: i32 txn_type
}

// Hive 3's shape; Hive 2.3 has open_txns as a set and no abortedBits: get_open_txns answers in both (server/wire_shapes.py)
struct GetOpenTxnsResponse {
  1: required i64 txn_high_water_mark,
  2: required list<i64> open_txns,
  3: i64 min_open_txn,
  4: required binary abortedBits
}

// SHOW TRANSACTIONS (get_open_txns_info). state: Hive's TxnState (1 committed, 2 aborted, 3 open)
struct TxnInfo {
  1: required i64 id,
  2: required i32 state,
  3: required string user,
  4: required string hostname,
  5: string agentInfo = "Unknown",
  6: i32 heartbeatCount = 0,
  7: string metaInfo,
  8: i64 startedTime,
  9: i64 lastHeartbeatTime
}

struct GetOpenTxnsInfoResponse {
  1: required i64 txn_high_water_mark,
  2: required list<TxnInfo> open_txns
}

// Hive 3's transaction calls: several transactions at once, heartbeats of a range, seeds (Hive 4's
// get_open_txns_req, seed_write_id, seed_txn_id). excludeTxnTypes: Hive's TxnType values
struct AbortTxnsRequest {
  1: required list<i64> txn_ids,
  2: i64 errorCode
}

struct GetOpenTxnsRequest {
  1: list<i32> excludeTxnTypes
}

struct HeartbeatTxnRangeRequest {
  1: required i64 min,
  2: required i64 max
}

struct HeartbeatTxnRangeResponse {
  1: required set<i64> aborted,
  2: required set<i64> nosuch
}

struct SeedTxnIdRequest {
  1: required i64 seedTxnId
}

// Write ids (Hive 3): a table's ids for the transactions writing it, and a reader's valid write-id lists.
// fullTableNames: "db.table"; validTxnList: Hive's ValidReadTxnList string; writeId: Hive 4's
struct GetValidWriteIdsRequest {
  1: required list<string> fullTableNames,
  2: string validTxnList,
  3: i64 writeId
}

// abortedBits: bit i (java.util.BitSet's bytes) set when invalidWriteIds[i] was written by an aborted transaction
struct TableValidWriteIds {
  1: required string fullTableName,
  2: required i64 writeIdHighWaterMark,
  3: required list<i64> invalidWriteIds,
  4: i64 minOpenWriteId,
  5: required binary abortedBits
}

struct GetValidWriteIdsResponse {
  1: required list<TableValidWriteIds> tblValidWriteIds
}

struct TxnToWriteId {
  1: required i64 txnId,
  2: required i64 writeId
}

struct AllocateTableWriteIdsRequest {
  1: required string dbName,
  2: required string tableName,
  3: list<i64> txnIds,
  4: string replPolicy,
  5: list<TxnToWriteId> srcTxnToWriteIdList,
  6: bool reallocate = false
}

struct AllocateTableWriteIdsResponse {
  1: required list<TxnToWriteId> txnToWriteIds
}

struct MaxAllocatedTableWriteIdRequest {
  1: required string dbName,
  2: required string tableName
}

struct MaxAllocatedTableWriteIdResponse {
  1: required i64 maxWriteId
}

struct SeedTableWriteIdsRequest {
  1: required string dbName,
  2: required string tableName,
  3: required i64 seedWriteId
}

// ALTER TABLE ... COMPACT and SHOW COMPACTIONS. type: Hive's CompactionType (1 minor, 2 major)
struct CompactionRequest {
  1: required string dbname,
  2: required string tablename,
  3: string partitionname,
  4: required i32 type,
  5: string runas,
  6: map<string, string> properties
}

struct CompactionResponse {
  1: required i64 id,
  2: required string state,
  3: required bool accepted
}

struct ShowCompactRequest {
}

struct ShowCompactResponseElement {
  1: required string dbname,
  2: required string tablename,
  3: string partitionname,
  4: required i32 type,
  5: required string state,
  6: string workerid,
  7: i64 start,
  8: string runAs,
  9: i64 hightestTxnId,
  10: string metaInfo,
  11: i64 endTime,
  12: string hadoopJobId = "None",
  13: i64 id
}

struct ShowCompactResponse {
  1: required list<ShowCompactResponseElement> compacts
}

// Insert events (fire_listener_event). Hive 2.3 (Spark's client) and Hive 3+ number InsertEventRequestData
// differently: 2.3 has filesAdded = 1 and filesAddedChecksum = 2 (both lists); 3+ has replace = 1 (bool),
// filesAdded = 2, filesAddedChecksum = 3, subDirectoryList = 4, partitionVal = 5. The 2.3 layout is declared
// here; a 3+ client's field 1 is skipped for its type and its files arrive in field 2 (see the handler).
struct InsertEventRequestData {
  1: list<string> filesAdded,
  2: list<string> filesAddedChecksum,
  3: list<string> filesAddedChecksumV3,
  4: list<string> subDirectoryList,
  5: list<string> partitionVal
}

// What a transaction wrote (Hive 3). fileInfo in Hive 3's layout: its files arrive in field 2 (see above)
struct WriteNotificationLogRequest {
  1: required i64 txnId,
  2: required i64 writeId,
  3: required string db,
  4: required string table,
  5: required InsertEventRequestData fileInfo,
  6: list<string> partitionVals
}

struct WriteNotificationLogResponse {
}

struct WriteNotificationLogBatchRequest {
  1: required string catalog,
  2: required string db,
  3: required string table,
  4: required list<WriteNotificationLogRequest> requestList
}

struct WriteNotificationLogBatchResponse {
}

struct FireEventRequestData {
  1: InsertEventRequestData insertData,
  2: list<InsertEventRequestData> insertDatas
}

struct FireEventRequest {
  1: required bool successful,
  2: required FireEventRequestData data,
  3: string dbName,
  4: string tableName,
  5: list<string> partitionVals,
  6: string catName
}

struct FireEventResponse {
  1: list<i64> eventIds
}

// ---- constraints (issue 21): Hive's KEY_CONSTRAINTS as Hive's clients send and read them. Hive 2.3 has the
// primary and foreign keys (without catName); Hive 3 added catName, the unique and not-null constraints and the
// Hive 3.1/4 default and check constraints. Field ids and types as Hive's IDL has them.
struct SQLPrimaryKey {
  1: string table_db,
  2: string table_name,
  3: string column_name,
  4: i32 key_seq,
  5: string pk_name,
  6: bool enable_cstr,
  7: bool validate_cstr,
  8: bool rely_cstr,
  9: string catName
}

struct SQLForeignKey {
  1: string pktable_db,
  2: string pktable_name,
  3: string pkcolumn_name,
  4: string fktable_db,
  5: string fktable_name,
  6: string fkcolumn_name,
  7: i32 key_seq,
  8: i32 update_rule,
  9: i32 delete_rule,
  10: string fk_name,
  11: string pk_name,
  12: bool enable_cstr,
  13: bool validate_cstr,
  14: bool rely_cstr,
  15: string catName
}

struct SQLUniqueConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: i32 key_seq,
  6: string uk_name,
  7: bool enable_cstr,
  8: bool validate_cstr,
  9: bool rely_cstr
}

struct SQLNotNullConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: string nn_name,
  6: bool enable_cstr,
  7: bool validate_cstr,
  8: bool rely_cstr
}

struct SQLDefaultConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: string default_value,
  6: string dc_name,
  7: bool enable_cstr,
  8: bool validate_cstr,
  9: bool rely_cstr
}

struct SQLCheckConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: string check_expression,
  6: string dc_name,
  7: bool enable_cstr,
  8: bool validate_cstr,
  9: bool rely_cstr
}

struct SQLAllTableConstraints {
  1: list<SQLPrimaryKey> primaryKeys,
  2: list<SQLForeignKey> foreignKeys,
  3: list<SQLUniqueConstraint> uniqueConstraints,
  4: list<SQLNotNullConstraint> notNullConstraints,
  5: list<SQLDefaultConstraint> defaultConstraints,
  6: list<SQLCheckConstraint> checkConstraints
}

struct PrimaryKeysRequest {
  1: required string db_name,
  2: required string tbl_name,
  3: string catName,
  4: string validWriteIdList,
  5: i64 tableId = -1
}

struct PrimaryKeysResponse {
  1: required list<SQLPrimaryKey> primaryKeys
}

struct ForeignKeysRequest {
  1: string parent_db_name,
  2: string parent_tbl_name,
  3: string foreign_db_name,
  4: string foreign_tbl_name,
  5: string catName,
  6: string validWriteIdList,
  7: i64 tableId = -1
}

struct ForeignKeysResponse {
  1: required list<SQLForeignKey> foreignKeys
}

struct UniqueConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: string validWriteIdList,
  5: i64 tableId = -1
}

struct UniqueConstraintsResponse {
  1: required list<SQLUniqueConstraint> uniqueConstraints
}

struct NotNullConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: string validWriteIdList,
  5: i64 tableId = -1
}

struct NotNullConstraintsResponse {
  1: required list<SQLNotNullConstraint> notNullConstraints
}

struct DefaultConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: string validWriteIdList,
  5: i64 tableId = -1
}

struct DefaultConstraintsResponse {
  1: required list<SQLDefaultConstraint> defaultConstraints
}

struct CheckConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: string validWriteIdList,
  5: i64 tableId = -1
}

struct CheckConstraintsResponse {
  1: required list<SQLCheckConstraint> checkConstraints
}

struct AllTableConstraintsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required string catName,
  4: string validWriteIdList,
  5: i64 tableId = -1
}

struct AllTableConstraintsResponse {
  1: required SQLAllTableConstraints allTableConstraints
}

struct DropConstraintRequest {
  1: required string dbname,
  2: required string tablename,
  3: required string constraintname,
  4: string catName
}

struct AddPrimaryKeyRequest {
  1: required list<SQLPrimaryKey> primaryKeyCols
}

struct AddForeignKeyRequest {
  1: required list<SQLForeignKey> foreignKeyCols
}

struct AddUniqueConstraintRequest {
  1: required list<SQLUniqueConstraint> uniqueConstraintCols
}

struct AddNotNullConstraintRequest {
  1: required list<SQLNotNullConstraint> notNullConstraintCols
}

struct AddDefaultConstraintRequest {
  1: required list<SQLDefaultConstraint> defaultConstraintCols
}

struct AddCheckConstraintRequest {
  1: required list<SQLCheckConstraint> checkConstraintCols
}
// ---- end of the constraints' structs

// Roles and privileges (Hive's authorization calls); PrincipalType: USER=1, ROLE=2, GROUP=3; HiveObjectType:
// GLOBAL=1, DATABASE=2, TABLE=3, PARTITION=4, COLUMN=5; GrantRevokeType: GRANT=1, REVOKE=2
struct HiveObjectRef {
  1: i32 objectType,
  2: string dbName,
  3: string objectName,
  4: list<string> partValues,
  5: string columnName,
  6: string catName
}

struct HiveObjectPrivilege {
  1: HiveObjectRef hiveObject,
  2: string principalName,
  3: i32 principalType,
  4: PrivilegeGrantInfo grantInfo,
  5: string authorizer
}

struct PrivilegeBag {
  1: list<HiveObjectPrivilege> privileges
}

struct GrantRevokePrivilegeRequest {
  1: i32 requestType,
  2: PrivilegeBag privileges,
  3: bool revokeGrantOption
}

struct GrantRevokePrivilegeResponse {
  1: bool success
}

struct Role {
  1: string roleName,
  2: i32 createTime,
  3: string ownerName
}

struct RolePrincipalGrant {
  1: string roleName,
  2: string principalName,
  3: i32 principalType,
  4: bool grantOption,
  5: i32 grantTime,
  6: string grantorName,
  7: i32 grantorPrincipalType
}

struct GetRoleGrantsForPrincipalRequest {
  1: string principal_name,
  2: i32 principal_type
}

struct GetRoleGrantsForPrincipalResponse {
  1: list<RolePrincipalGrant> principalGrants
}

struct GetPrincipalsInRoleRequest {
  1: string roleName
}

struct GetPrincipalsInRoleResponse {
  1: list<RolePrincipalGrant> principalGrants
}

struct GrantRevokeRoleRequest {
  1: i32 requestType,
  2: string roleName,
  3: string principalName,
  4: i32 principalType,
  5: string grantor,
  6: i32 grantorType,
  7: bool grantOption
}

struct GrantRevokeRoleResponse {
  1: bool success
}

// ---- the small methods engines call (issue 21): truncation, partition values and specs, catalogs, file metadata,
// runtime statistics. Field ids and types as Hive's IDL has them.

// Hive 2.3's layout: txnid 1, dbname 2, tablename 3, partitionnames 4, operationType 5. Hive 3+ put writeid (i64)
// at 2 and moved the others up by one; a Hive 3+ client's request reads here with its txnid (field 1, the only
// one the server needs) and its fields of other types skipped (see the handler).
struct AddDynamicPartitions {
  1: required i64 txnid,
  2: string dbname,
  3: string tablename,
  4: list<string> partitionnames,
  5: i32 operationType
}

struct TruncateTableRequest {
  1: required string dbName,
  2: required string tableName,
  3: list<string> partNames,
  4: i64 writeId = -1,
  5: string validWriteIdList,
  6: EnvironmentContext environmentContext
}

struct TruncateTableResponse {
}

struct PartitionValuesRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<FieldSchema> partitionKeys,
  4: bool applyDistinct = true,
  5: string filter,
  6: list<FieldSchema> partitionOrder,
  7: bool ascending = true,
  8: i64 maxParts = -1,
  9: string catName,
  10: string validWriteIdList
}

struct PartitionValuesRow {
  1: required list<string> row
}

struct PartitionValuesResponse {
  1: required list<PartitionValuesRow> partitionValues
}

struct PartitionWithoutSD {
  1: list<string> values,
  2: i32 createTime,
  3: i32 lastAccessTime,
  4: string relativePath,
  5: map<string,string> parameters,
  6: PrincipalPrivilegeSet privileges
}

struct PartitionSpecWithSharedSD {
  1: list<PartitionWithoutSD> partitions,
  2: StorageDescriptor sd
}

struct PartitionListComposingSpec {
  1: list<Partition> partitions
}

struct PartitionSpec {
  1: string dbName,
  2: string tableName,
  3: string rootPath,
  4: PartitionSpecWithSharedSD sharedSDPartitionSpec,
  5: PartitionListComposingSpec partitionList,
  6: string catName,
  7: i64 writeId = -1,
  8: bool isStatsCompliant
}

struct GetDatabaseRequest {
  1: string name,
  2: string catalogName,
  3: list<string> processorCapabilities,
  4: string processorIdentifier
}

struct Catalog {
  1: string name,
  2: string description,
  3: string locationUri,
  4: i32 createTime
}

struct CreateCatalogRequest {
  1: Catalog catalog
}

struct AlterCatalogRequest {
  1: string name,
  2: Catalog newCat
}

struct GetCatalogRequest {
  1: string name
}

struct GetCatalogResponse {
  1: Catalog catalog
}

struct GetCatalogsResponse {
  1: list<string> names
}

struct DropCatalogRequest {
  1: string name
}

struct MetadataPpdResult {
  1: binary metadata,
  2: binary includeBitset
}

struct GetFileMetadataByExprResult {
  1: required map<i64,MetadataPpdResult> metadata,
  2: required bool isSupported
}

struct GetFileMetadataByExprRequest {
  1: required list<i64> fileIds,
  2: required binary expr,
  3: bool doGetFooters,
  4: i32 type
}

struct GetFileMetadataResult {
  1: required map<i64,binary> metadata,
  2: required bool isSupported
}

struct GetFileMetadataRequest {
  1: required list<i64> fileIds
}

struct PutFileMetadataResult {
}

struct PutFileMetadataRequest {
  1: required list<i64> fileIds,
  2: required list<binary> metadata,
  3: i32 type
}

struct ClearFileMetadataResult {
}

struct ClearFileMetadataRequest {
  1: required list<i64> fileIds
}

struct CacheFileMetadataResult {
  1: required bool isSupported
}

struct CacheFileMetadataRequest {
  1: required string dbName,
  2: required string tblName,
  3: string partName,
  4: bool isAllParts
}

struct RuntimeStat {
  1: i32 createTime,
  2: required i32 weight,
  3: required binary payload
}

struct GetRuntimeStatsRequest {
  1: required i32 maxWeight,
  2: required i32 maxCreateTime
}
// ---- end of issue 21's small methods' structs

service ThriftHiveMetastore extends fb303.FacebookService {
  // the small methods engines call (issue 21)
  void flushCache(),
  bool partition_name_has_valid_characters(1: list<string> part_vals, 2: bool throw_exception) throws (1: MetaException o1),
  void add_dynamic_partitions(1: AddDynamicPartitions rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  void truncate_table(1: string dbName, 2: string tableName, 3: list<string> partNames) throws (1: MetaException o1),
  TruncateTableResponse truncate_table_req(1: TruncateTableRequest req) throws (1: MetaException o1),
  PartitionValuesResponse get_partition_values(1: PartitionValuesRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<string> get_partition_names_req(1: PartitionsByExprRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<PartitionSpec> get_partitions_pspec(1: string db_name, 2: string tbl_name, 3: i32 max_parts = -1) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  Database get_database_req(1: GetDatabaseRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_table_names_by_filter(1: string dbname, 2: string filter, 3: i16 max_tables = -1) throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3),
  string get_metastore_db_uuid() throws (1: MetaException o1),
  void create_catalog(1: CreateCatalogRequest catalog) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  void alter_catalog(1: AlterCatalogRequest rqst) throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  GetCatalogResponse get_catalog(1: GetCatalogRequest catName) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  GetCatalogsResponse get_catalogs() throws (1: MetaException o1),
  void drop_catalog(1: DropCatalogRequest catName) throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  GetFileMetadataByExprResult get_file_metadata_by_expr(1: GetFileMetadataByExprRequest req),
  GetFileMetadataResult get_file_metadata(1: GetFileMetadataRequest req),
  PutFileMetadataResult put_file_metadata(1: PutFileMetadataRequest req),
  ClearFileMetadataResult clear_file_metadata(1: ClearFileMetadataRequest req),
  CacheFileMetadataResult cache_file_metadata(1: CacheFileMetadataRequest req),
  void add_runtime_stats(1: RuntimeStat stat) throws (1: MetaException o1),
  list<RuntimeStat> get_runtime_stats(1: GetRuntimeStatsRequest rqst) throws (1: MetaException o1),
  list<string> get_materialized_views_for_rewriting(1: string db_name) throws (1: MetaException o1),
  // ---- end of issue 21's small methods
  string getMetaConf(1: string key) throws (1: MetaException o1),
  void setMetaConf(1: string key, 2: string value) throws (1: MetaException o1),
  void create_database(1: Database database) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  Database get_database(1: string name) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void drop_database(1: string name, 2: bool deleteData, 3: bool cascade) throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  list<string> get_databases(1: string pattern) throws (1: MetaException o1),
  list<string> get_all_databases() throws (1: MetaException o1),
  void alter_database(1: string dbname, 2: Database db) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<FieldSchema> get_fields(1: string db_name, 2: string table_name) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  list<FieldSchema> get_fields_with_environment_context(1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  list<FieldSchema> get_schema(1: string db_name, 2: string table_name) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  list<FieldSchema> get_schema_with_environment_context(1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  void create_table(1: Table tbl) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void create_table_with_environment_context(1: Table tbl, 2: EnvironmentContext environment_context) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  // constraints (issue 21; catalog/constraints.py)
  void create_table_with_constraints(1: Table tbl, 2: list<SQLPrimaryKey> primaryKeys, 3: list<SQLForeignKey> foreignKeys, 4: list<SQLUniqueConstraint> uniqueConstraints, 5: list<SQLNotNullConstraint> notNullConstraints, 6: list<SQLDefaultConstraint> defaultConstraints, 7: list<SQLCheckConstraint> checkConstraints) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void drop_constraint(1: DropConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  void add_primary_key(1: AddPrimaryKeyRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_foreign_key(1: AddForeignKeyRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_unique_constraint(1: AddUniqueConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_not_null_constraint(1: AddNotNullConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_default_constraint(1: AddDefaultConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_check_constraint(1: AddCheckConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  PrimaryKeysResponse get_primary_keys(1: PrimaryKeysRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  ForeignKeysResponse get_foreign_keys(1: ForeignKeysRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  UniqueConstraintsResponse get_unique_constraints(1: UniqueConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  NotNullConstraintsResponse get_not_null_constraints(1: NotNullConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  DefaultConstraintsResponse get_default_constraints(1: DefaultConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  CheckConstraintsResponse get_check_constraints(1: CheckConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  AllTableConstraintsResponse get_all_table_constraints(1: AllTableConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  // ---- end of the constraints' methods
  void drop_table(1: string dbname, 2: string name, 3: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  void drop_table_with_environment_context(1: string dbname, 2: string name, 3: bool deleteData, 4: EnvironmentContext environment_context) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  list<string> get_tables(1: string db_name, 2: string pattern) throws (1: MetaException o1),
  list<string> get_tables_by_type(1: string db_name, 2: string pattern, 3: string tableType) throws (1: MetaException o1),
  list<TableMeta> get_table_meta(1: string db_patterns, 2: string tbl_patterns, 3: list<string> tbl_types) throws (1: MetaException o1),
  list<string> get_all_tables(1: string db_name) throws (1: MetaException o1),
  Table get_table(1: string dbname, 2: string tbl_name) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Table> get_table_objects_by_name(1: string dbname, 2: list<string> tbl_names) throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3),
  GetTableResult get_table_req(1: GetTableRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetTablesResult get_table_objects_by_name_req(1: GetTablesRequest req) throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3),
  void alter_table(1: string dbname, 2: string tbl_name, 3: Table new_tbl) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_table_with_environment_context(1: string dbname, 2: string tbl_name, 3: Table new_tbl, 4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_table_with_cascade(1: string dbname, 2: string tbl_name, 3: Table new_tbl, 4: bool cascade) throws (1: InvalidOperationException o1, 2: MetaException o2),
  Partition add_partition(1: Partition new_part) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition add_partition_with_environment_context(1: Partition new_part, 2: EnvironmentContext environment_context) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  i32 add_partitions(1: list<Partition> new_parts) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  AddPartitionsResult add_partitions_req(1: AddPartitionsRequest request) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: EnvironmentContext environment_context) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_by_name_with_environment_context(1: string db_name, 2: string tbl_name, 3: string part_name, 4: EnvironmentContext environment_context) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  bool drop_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData, 5: EnvironmentContext environment_context) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_by_name_with_environment_context(1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData, 5: EnvironmentContext environment_context) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  DropPartitionsResult drop_partitions_req(1: DropPartitionsRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  Partition get_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  Partition get_partition_with_auth(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: string user_name, 5: list<string> group_names) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  Partition get_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions(1: string db_name, 2: string tbl_name, 3: i16 max_parts) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<Partition> get_partitions_with_auth(1: string db_name, 2: string tbl_name, 3: i16 max_parts, 4: string user_name, 5: list<string> group_names) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_partition_names(1: string db_name, 2: string tbl_name, 3: i16 max_parts) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<Partition> get_partitions_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_ps_with_auth(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts, 5: string user_name, 6: list<string> group_names) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_partition_names_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter, 4: i16 max_parts) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  PartitionsByExprResult get_partitions_by_expr(1: PartitionsByExprRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  i32 get_num_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_by_names(1: string db_name, 2: string tbl_name, 3: list<string> names) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetPartitionsByNamesResult get_partitions_by_names_req(1: GetPartitionsByNamesRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void alter_partition(1: string db_name, 2: string tbl_name, 3: Partition new_part) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partitions(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partitions_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts, 4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: Partition new_part, 4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void rename_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: Partition new_part) throws (1: InvalidOperationException o1, 2: MetaException o2),
  string get_config_value(1: string name, 2: string defaultValue) throws (1: ConfigValSecurityException o1),
  list<string> partition_name_to_vals(1: string part_name) throws (1: MetaException o1),
  map<string,string> partition_name_to_spec(1: string part_name) throws (1: MetaException o1),
  bool update_table_column_statistics(1: ColumnStatistics stats_obj) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  bool update_partition_column_statistics(1: ColumnStatistics stats_obj) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  ColumnStatistics get_table_column_statistics(1: string db_name, 2: string tbl_name, 3: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3, 4: InvalidObjectException o4),
  ColumnStatistics get_partition_column_statistics(1: string db_name, 2: string tbl_name, 3: string part_name, 4: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3, 4: InvalidObjectException o4),
  TableStatsResult get_table_statistics_req(1: TableStatsRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  PartitionsStatsResult get_partitions_statistics_req(1: PartitionsStatsRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool delete_partition_column_statistics(1: string db_name, 2: string tbl_name, 3: string part_name, 4: string col_name, 5: string engine) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  bool delete_table_column_statistics(1: string db_name, 2: string tbl_name, 3: string col_name, 4: string engine) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  AggrStats get_aggr_stats_for(1: PartitionsStatsRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool set_aggr_stats_for(1: SetPartitionsStatsRequest request) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  void create_function(1: Function func) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void drop_function(1: string dbName, 2: string funcName) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  void alter_function(1: string dbName, 2: string funcName, 3: Function newFunc) throws (1: InvalidOperationException o1, 2: MetaException o2),
  list<string> get_functions(1: string dbName, 2: string pattern) throws (1: MetaException o1),
  Function get_function(1: string dbName, 2: string funcName) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetAllFunctionsResponse get_all_functions() throws (1: MetaException o1),
  CurrentNotificationEventId get_current_notificationEventId(),
  NotificationEventResponse get_next_notification(1: NotificationEventRequest rqst),
  NotificationEventsCountResponse get_notification_events_count(1: NotificationEventsCountRequest rqst),
  LockResponse lock(1: LockRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  LockResponse check_lock(1: CheckLockRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: NoSuchLockException o3),
  void unlock(1: UnlockRequest rqst) throws (1: NoSuchLockException o1, 2: TxnOpenException o2),
  ShowLocksResponse show_locks(1: ShowLocksRequest rqst),
  void heartbeat(1: HeartbeatRequest ids) throws (1: NoSuchLockException o1, 2: NoSuchTxnException o2, 3: TxnAbortedException o3),
  OpenTxnsResponse open_txns(1: OpenTxnRequest rqst),
  void abort_txn(1: AbortTxnRequest rqst) throws (1: NoSuchTxnException o1),
  void commit_txn(1: CommitTxnRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  GetOpenTxnsResponse get_open_txns(),
  GetOpenTxnsInfoResponse get_open_txns_info(),
  void abort_txns(1: AbortTxnsRequest rqst) throws (1: NoSuchTxnException o1),
  GetOpenTxnsResponse get_open_txns_req(1: GetOpenTxnsRequest getOpenTxnsRequest),
  HeartbeatTxnRangeResponse heartbeat_txn_range(1: HeartbeatTxnRangeRequest txns),
  void seed_txn_id(1: SeedTxnIdRequest rqst) throws (1: MetaException o1),
  i64 get_latest_txnid_in_conflict(1: i64 txnId) throws (1: MetaException o1),
  GetValidWriteIdsResponse get_valid_write_ids(1: GetValidWriteIdsRequest rqst) throws (1: NoSuchTxnException o1, 2: MetaException o2),
  AllocateTableWriteIdsResponse allocate_table_write_ids(1: AllocateTableWriteIdsRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: MetaException o3),
  MaxAllocatedTableWriteIdResponse get_max_allocated_table_write_id(1: MaxAllocatedTableWriteIdRequest rqst) throws (1: MetaException o1),
  void seed_write_id(1: SeedTableWriteIdsRequest rqst) throws (1: MetaException o1),
  WriteNotificationLogResponse add_write_notification_log(1: WriteNotificationLogRequest rqst),
  WriteNotificationLogBatchResponse add_write_notification_log_in_batch(1: WriteNotificationLogBatchRequest rqst),
  void compact(1: CompactionRequest rqst),
  CompactionResponse compact2(1: CompactionRequest rqst),
  ShowCompactResponse show_compact(1: ShowCompactRequest rqst),
  bool create_role(1: Role role) throws (1: MetaException o1),
  bool drop_role(1: string role_name) throws (1: MetaException o1),
  list<string> get_role_names() throws (1: MetaException o1),
  bool grant_role(1: string role_name, 2: string principal_name, 3: i32 principal_type, 4: string grantor, 5: i32 grantorType, 6: bool grant_option) throws (1: MetaException o1),
  bool revoke_role(1: string role_name, 2: string principal_name, 3: i32 principal_type) throws (1: MetaException o1),
  list<Role> list_roles(1: string principal_name, 2: i32 principal_type) throws (1: MetaException o1),
  GrantRevokeRoleResponse grant_revoke_role(1: GrantRevokeRoleRequest request) throws (1: MetaException o1),
  GetPrincipalsInRoleResponse get_principals_in_role(1: GetPrincipalsInRoleRequest request) throws (1: MetaException o1),
  GetRoleGrantsForPrincipalResponse get_role_grants_for_principal(1: GetRoleGrantsForPrincipalRequest request) throws (1: MetaException o1),
  PrincipalPrivilegeSet get_privilege_set(1: HiveObjectRef hiveObject, 2: string user_name, 3: list<string> group_names) throws (1: MetaException o1),
  list<HiveObjectPrivilege> list_privileges(1: string principal_name, 2: i32 principal_type, 3: HiveObjectRef hiveObject) throws (1: MetaException o1),
  bool grant_privileges(1: PrivilegeBag privileges) throws (1: MetaException o1),
  bool revoke_privileges(1: PrivilegeBag privileges) throws (1: MetaException o1),
  GrantRevokePrivilegeResponse grant_revoke_privileges(1: GrantRevokePrivilegeRequest request) throws (1: MetaException o1),
  list<string> set_ugi(1: string user_name, 2: list<string> group_names) throws (1: MetaException o1),
  // delegation tokens (server/tokens.py): issued to Kerberos callers, used with SASL DIGEST-MD5
  string get_delegation_token(1: string token_owner, 2: string renewer_kerberos_principal_name) throws (1: MetaException o1),
  i64 renew_delegation_token(1: string token_str_form) throws (1: MetaException o1),
  void cancel_delegation_token(1: string token_str_form) throws (1: MetaException o1),
  FireEventResponse fire_listener_event(1: FireEventRequest rqst)
}
