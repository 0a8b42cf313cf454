-- Hive 2.3.10's CLI against a metastore: every statement's output is compared with the reference's.
-- databases
CREATE DATABASE cli_db COMMENT 'the CLI test database' WITH DBPROPERTIES ('team'='data', 'tier'='1');
CREATE DATABASE IF NOT EXISTS cli_db;
-- @error AlreadyExists
CREATE DATABASE cli_db;
CREATE DATABASE cli_ext LOCATION '${hiveconf:hc.extdir}/cli_ext_db';
SHOW DATABASES;
SHOW DATABASES LIKE 'cli*';
DESCRIBE DATABASE cli_db;
DESCRIBE DATABASE EXTENDED cli_db;
ALTER DATABASE cli_db SET DBPROPERTIES ('tier'='2', 'new'='x');
DESCRIBE DATABASE EXTENDED cli_db;
ALTER DATABASE cli_db SET OWNER USER someone;
DESCRIBE DATABASE EXTENDED cli_db;
-- @error does not exist
DESCRIBE DATABASE no_such_db;
-- @error does not exist
USE no_such_db;
USE cli_db;
-- tables of every kind
CREATE TABLE plain (id INT COMMENT 'the id', name STRING, price DECIMAL(10,2), ts TIMESTAMP, d DATE, flag BOOLEAN, tags ARRAY<STRING>, attrs MAP<STRING,INT>, pt STRUCT<x:DOUBLE,y:DOUBLE>) COMMENT 'a plain table' STORED AS TEXTFILE;
CREATE TABLE IF NOT EXISTS plain (id INT);
-- @error already exists
CREATE TABLE plain (id INT);
CREATE TABLE orc_t (id BIGINT, v STRING) STORED AS ORC TBLPROPERTIES ('orc.compress'='ZLIB');
CREATE TABLE parq_t (id BIGINT, v STRING) STORED AS PARQUET;
CREATE TABLE delim_t (a STRING, b INT) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' LINES TERMINATED BY '\n' STORED AS TEXTFILE;
CREATE TABLE serde_t (a STRING, b STRING) ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.OpenCSVSerde' WITH SERDEPROPERTIES ('separatorChar'=';', 'quoteChar'='"') STORED AS TEXTFILE;
CREATE TABLE bucketed (id INT, v STRING) CLUSTERED BY (id) SORTED BY (id ASC) INTO 4 BUCKETS STORED AS ORC;
CREATE TABLE skewed (id INT, v STRING) SKEWED BY (id) ON (1, 5) STORED AS TEXTFILE;
CREATE EXTERNAL TABLE ext_t (id INT, v STRING) LOCATION '${hiveconf:hc.extdir}/ext_t';
CREATE TABLE part_t (id INT, v STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS TEXTFILE;
CREATE TABLE like_t LIKE part_t;
CREATE TEMPORARY TABLE tmp_t (id INT);
-- @error
CREATE TABLE bad_type (id NOSUCHTYPE);
-- @error
CREATE TABLE no_such_db.t (id INT);
SHOW TABLES;
SHOW TABLES 'p*';
SHOW TABLES IN cli_db LIKE '*_t';
SHOW TABLE EXTENDED LIKE 'plain';
DESCRIBE plain;
DESCRIBE EXTENDED plain;
DESCRIBE FORMATTED plain;
DESCRIBE FORMATTED plain id;
DESCRIBE FORMATTED orc_t;
DESCRIBE FORMATTED serde_t;
DESCRIBE FORMATTED bucketed;
DESCRIBE FORMATTED skewed;
DESCRIBE FORMATTED ext_t;
DESCRIBE FORMATTED like_t;
SHOW CREATE TABLE plain;
SHOW CREATE TABLE part_t;
SHOW TBLPROPERTIES orc_t;
SHOW TBLPROPERTIES orc_t('orc.compress');
SHOW COLUMNS IN plain;
-- @error
DESCRIBE no_such_table;
-- altering tables
ALTER TABLE plain ADD COLUMNS (extra STRING COMMENT 'added');
ALTER TABLE plain CHANGE COLUMN extra extra2 VARCHAR(20) COMMENT 'renamed';
ALTER TABLE plain SET TBLPROPERTIES ('k1'='v1', 'k2'='v2');
ALTER TABLE plain UNSET TBLPROPERTIES ('k2');
ALTER TABLE plain SET SERDEPROPERTIES ('field.delim'='|');
ALTER TABLE plain SET FILEFORMAT ORC;
DESCRIBE FORMATTED plain;
ALTER TABLE delim_t REPLACE COLUMNS (a STRING, b INT, c DOUBLE);
DESCRIBE delim_t;
ALTER TABLE delim_t RENAME TO delim_renamed;
SHOW TABLES 'delim*';
ALTER TABLE ext_t SET LOCATION '${hiveconf:hc.extdir}/ext_t2';
DESCRIBE FORMATTED ext_t;
ALTER TABLE plain SET TBLPROPERTIES ('comment'='a new comment');
ALTER TABLE plain CLUSTERED BY (id) INTO 8 BUCKETS;
DESCRIBE FORMATTED plain;
-- @error
ALTER TABLE no_such_table RENAME TO other;
-- partitions
ALTER TABLE part_t ADD PARTITION (ds='2024-01-01', hr=1);
ALTER TABLE part_t ADD PARTITION (ds='2024-01-01', hr=2) PARTITION (ds='2024-01-02', hr=1) PARTITION (ds='2024-01-03', hr=5);
ALTER TABLE part_t ADD IF NOT EXISTS PARTITION (ds='2024-01-01', hr=1);
-- @error already exists
ALTER TABLE part_t ADD PARTITION (ds='2024-01-01', hr=1);
ALTER TABLE part_t ADD PARTITION (ds='2024-02-01', hr=1) LOCATION '${hiveconf:hc.extdir}/part_feb';
SHOW PARTITIONS part_t;
SHOW PARTITIONS part_t PARTITION (ds='2024-01-01');
SHOW PARTITIONS part_t PARTITION (hr=1);
DESCRIBE FORMATTED part_t PARTITION (ds='2024-01-01', hr=1);
DESCRIBE EXTENDED part_t PARTITION (ds='2024-01-02', hr=1);
SHOW TABLE EXTENDED LIKE 'part_t' PARTITION (ds='2024-01-01', hr=2);
ALTER TABLE part_t PARTITION (ds='2024-01-03', hr=5) RENAME TO PARTITION (ds='2024-01-04', hr=5);
SHOW PARTITIONS part_t;
ALTER TABLE part_t PARTITION (ds='2024-01-04', hr=5) SET FILEFORMAT ORC;
ALTER TABLE part_t PARTITION (ds='2024-01-04', hr=5) SET SERDEPROPERTIES ('a'='b');
DESCRIBE FORMATTED part_t PARTITION (ds='2024-01-04', hr=5);
ALTER TABLE part_t DROP PARTITION (ds='2024-01-04', hr=5);
ALTER TABLE part_t DROP IF EXISTS PARTITION (ds='1999-01-01', hr=1);
-- @error
ALTER TABLE part_t DROP PARTITION (ds='1999-01-01', hr=1);
ALTER TABLE part_t DROP PARTITION (ds > '2024-01-31');
ALTER TABLE part_t DROP PARTITION (hr < 2, ds = '2024-01-02');
SHOW PARTITIONS part_t;
ALTER TABLE part_t ADD COLUMNS (extra INT) CASCADE;
DESCRIBE part_t PARTITION (ds='2024-01-01', hr=1);
-- @error
ALTER TABLE plain ADD PARTITION (ds='x');
-- @error
SHOW PARTITIONS plain;
-- inserts and queries
INSERT INTO TABLE part_t PARTITION (ds='2024-03-01', hr=1) VALUES (1, 'a', 10), (2, 'b', 20);
INSERT INTO TABLE part_t PARTITION (ds, hr) VALUES (3, 'c', 30, '2024-03-02', 1), (4, 'd', 40, '2024-03-02', 2), (5, 'e', 50, '2024-03-03', 1);
SHOW PARTITIONS part_t;
SELECT id, v, ds, hr FROM part_t WHERE ds = '2024-03-02' ORDER BY id;
SELECT count(*) FROM part_t WHERE hr = 1;
SELECT id FROM part_t WHERE ds IN ('2024-03-01', '2024-03-03') AND hr BETWEEN 1 AND 3 ORDER BY id;
SELECT id FROM part_t WHERE ds LIKE '2024-03%' AND NOT (hr = 2) ORDER BY id;
INSERT OVERWRITE TABLE part_t PARTITION (ds='2024-03-01', hr=1) SELECT id + 100, v, extra FROM part_t WHERE ds = '2024-03-02';
SELECT id, ds, hr FROM part_t ORDER BY id;
INSERT INTO TABLE orc_t VALUES (1, 'x'), (2, 'y');
SELECT * FROM orc_t ORDER BY id;
CREATE TABLE ctas_t AS SELECT id, v FROM orc_t WHERE id > 1;
SELECT * FROM ctas_t;
DESCRIBE FORMATTED ctas_t;
-- statistics
ANALYZE TABLE orc_t COMPUTE STATISTICS;
ANALYZE TABLE orc_t COMPUTE STATISTICS FOR COLUMNS;
DESCRIBE FORMATTED orc_t id;
DESCRIBE FORMATTED orc_t v;
ANALYZE TABLE part_t PARTITION (ds='2024-03-02', hr) COMPUTE STATISTICS;
ANALYZE TABLE part_t PARTITION (ds='2024-03-02', hr) COMPUTE STATISTICS FOR COLUMNS;
DESCRIBE FORMATTED part_t PARTITION (ds='2024-03-02', hr=1);
SET hive.compute.query.using.stats=true;
SELECT count(*) FROM orc_t;
SELECT min(id), max(id) FROM orc_t;
SET hive.compute.query.using.stats=false;
-- views
CREATE VIEW v1 AS SELECT id, v FROM orc_t WHERE id > 0;
CREATE VIEW v2 (vid COMMENT 'the id') COMMENT 'a view' AS SELECT id FROM orc_t;
SHOW TABLES 'v*';
DESCRIBE FORMATTED v1;
DESCRIBE EXTENDED v2;
SELECT * FROM v1 ORDER BY id;
ALTER VIEW v1 AS SELECT id FROM orc_t;
ALTER VIEW v1 SET TBLPROPERTIES ('vk'='vv');
SHOW CREATE TABLE v1;
-- @error
DROP TABLE v1;
DROP VIEW v1;
DROP VIEW IF EXISTS v1;
-- constraints
CREATE TABLE pk_t (id INT, name STRING, PRIMARY KEY (id) DISABLE NOVALIDATE);
CREATE TABLE fk_t (id INT, pid INT, CONSTRAINT fk1 FOREIGN KEY (pid) REFERENCES pk_t(id) DISABLE NOVALIDATE);
DESCRIBE FORMATTED pk_t;
DESCRIBE EXTENDED fk_t;
ALTER TABLE fk_t DROP CONSTRAINT fk1;
DESCRIBE FORMATTED fk_t;
-- @error
ALTER TABLE fk_t DROP CONSTRAINT no_such_constraint;
-- functions
CREATE FUNCTION cli_db.my_upper AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper';
SHOW FUNCTIONS 'cli_db.*';
DESCRIBE FUNCTION cli_db.my_upper;
SELECT cli_db.my_upper(v) FROM orc_t ORDER BY 1;
-- @error
CREATE FUNCTION cli_db.my_upper AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper';
DROP FUNCTION cli_db.my_upper;
DROP FUNCTION IF EXISTS cli_db.my_upper;
-- transactions
SET hive.support.concurrency=true;
SET hive.txn.manager=org.apache.hadoop.hive.ql.lockmgr.DbTxnManager;
-- @error
CREATE TABLE acid_text (id INT) STORED AS TEXTFILE TBLPROPERTIES ('transactional'='true');
CREATE TABLE acid_t (id INT, v STRING) CLUSTERED BY (id) INTO 2 BUCKETS STORED AS ORC TBLPROPERTIES ('transactional'='true');
DESCRIBE FORMATTED acid_t;
INSERT INTO acid_t VALUES (1, 'a'), (2, 'b'), (3, 'c');
UPDATE acid_t SET v = 'z' WHERE id = 1;
DELETE FROM acid_t WHERE id = 2;
SELECT * FROM acid_t ORDER BY id;
SHOW TRANSACTIONS;
SHOW LOCKS;
ALTER TABLE acid_t COMPACT 'major';
ALTER TABLE acid_t COMPACT 'minor';
SHOW COMPACTIONS;
-- @error
ALTER TABLE acid_t COMPACT 'sideways';
SET hive.txn.manager=org.apache.hadoop.hive.ql.lockmgr.DummyTxnManager;
SET hive.support.concurrency=false;
-- dropping
TRUNCATE TABLE orc_t;
SELECT count(*) FROM orc_t;
-- @error
TRUNCATE TABLE ext_t;
DROP TABLE plain;
DROP TABLE IF EXISTS plain;
-- @error
DROP TABLE plain;
DROP TABLE part_t PURGE;
SHOW TABLES;
USE default;
-- @error
DROP DATABASE cli_db;
DROP DATABASE cli_db CASCADE;
DROP DATABASE cli_ext;
SHOW DATABASES LIKE 'cli*';
