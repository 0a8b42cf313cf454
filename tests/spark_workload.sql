-- The statements of the Spark workload, tests/spark_workload.py, in the order it runs them.
--
-- Each phase (one Spark process: `write`, then `read`) is a list of steps:
--   -- phase: NAME                   the steps that follow belong to this phase
--   -- step: NAME [ordered, scan]    a SQL statement recorded under NAME: the lines after this one, up to the
--                                    next `--` line or blank line, stripped and joined by single spaces; options:
--                                    ordered (rows keep Spark's order), scan (record the scan's partitions)
--   -- action: NAME                  a Python function of the workload (its ACTIONS): DataFrame writes and
--                                    reads, file operations, notes
--   -- tree: NAME @ PATH             the directories under PATH, relative to the warehouse
--   -- dump: NAME                    the metastore's objects of the workload's database, field by field
-- Any other `--` line is a comment; a `-- word: ...` line with an unknown word is an error. In SQL and paths,
-- {DB} is the workload's database and {warehouse} the warehouse directory (an absolute path, no trailing /);
-- no other {name} may appear.

-- phase: write
-- step: show databases before
SHOW DATABASES
-- step: describe default database [ordered]
DESCRIBE DATABASE EXTENDED default
-- step: create database
CREATE DATABASE {DB} COMMENT 'the workload' WITH DBPROPERTIES ('team'='core')
-- step: create database again
CREATE DATABASE {DB}
-- step: create database if not exists
CREATE DATABASE IF NOT EXISTS {DB}
-- step: describe database [ordered]
DESCRIBE DATABASE EXTENDED {DB}
-- step: alter database properties
ALTER DATABASE {DB} SET DBPROPERTIES ('team'='data', 'x'='1')
-- step: describe database after alter [ordered]
DESCRIBE DATABASE EXTENDED {DB}
-- step: show databases
SHOW DATABASES
-- step: show databases like
SHOW DATABASES LIKE 'w*'
-- step: use
USE {DB}

-- a partitioned Hive (serde) table stored as Parquet
-- step: create hive table
CREATE TABLE events (id INT, name STRING, amount DOUBLE) COMMENT 'events'
    PARTITIONED BY (ds STRING, h INT) STORED AS PARQUET TBLPROPERTIES ('purpose'='test')
-- step: create hive table again
CREATE TABLE events (id INT) STORED AS PARQUET
-- step: describe [ordered]
DESCRIBE events
-- step: describe formatted [ordered]
DESCRIBE FORMATTED events
-- step: show create table
SHOW CREATE TABLE events AS SERDE
-- tree: tree after create @ {DB}.db
-- dump: metastore after create
-- step: insert static partition
INSERT INTO events PARTITION (ds='2024-01-01', h=0)
    VALUES (100, 'static', 0.5), (101, 'static2', 1.0)
-- action: src_view
-- step: dynamic partition mode
SET hive.exec.dynamic.partition.mode=nonstrict
-- step: insert dynamic partitions
INSERT INTO events PARTITION (ds, h) SELECT id, name, amount, ds, h FROM src
-- step: insert mixed partitions
INSERT INTO events PARTITION (ds='2024-01-04', h)
    SELECT id, name, amount, h FROM src WHERE id < 6
-- step: select after inserts
SELECT * FROM events
-- step: insert overwrite partition
INSERT OVERWRITE TABLE events PARTITION (ds='2024-01-01', h=0)
    VALUES (200, 'over', 9.0)
-- step: select overwritten partition
SELECT * FROM events WHERE ds='2024-01-01' AND h=0
-- step: insert overwrite dynamic
INSERT OVERWRITE TABLE events PARTITION (ds='2024-01-04', h)
    SELECT id, upper(name), amount, h FROM src WHERE id < 3
-- step: show partitions [ordered]
SHOW PARTITIONS events
-- step: show partitions partial [ordered]
SHOW PARTITIONS events PARTITION (ds='2024-01-02')
-- step: show partitions full spec [ordered]
SHOW PARTITIONS events PARTITION (ds='2024-01-02', h=1)
-- step: show partitions missing [ordered]
SHOW PARTITIONS events PARTITION (ds='1999-01-01')
-- tree: tree after inserts @ {DB}.db/events

-- partition pruning: the metastore must return only the matching partitions
-- step: prune string equality [scan]
SELECT * FROM events WHERE ds = '2024-01-02'
-- step: prune int equality [scan]
SELECT id, ds, h FROM events WHERE h = 2
-- step: prune int range [scan]
SELECT id, ds, h FROM events WHERE h >= 1 AND h < 3
-- step: prune string range [scan]
SELECT id, ds, h FROM events WHERE ds > '2024-01-02'
-- step: prune in [scan]
SELECT id, ds, h FROM events WHERE h IN (0, 3)
-- step: prune string in [scan]
SELECT id, ds, h FROM events WHERE ds IN ('2024-01-01', '2024-01-03')
-- step: prune and or [scan]
SELECT id, ds, h FROM events WHERE (ds = '2024-01-01' AND h = 1) OR
    (ds = '2024-01-03' AND h <> 0)
-- step: prune not equal [scan]
SELECT id, ds, h FROM events WHERE ds != '2024-01-01'
-- step: prune nothing [scan]
SELECT id FROM events WHERE ds = '2030-01-01'
-- step: prune with data filter [scan]
SELECT id FROM events WHERE h = 1 AND amount > 10
-- step: full scan [scan]
SELECT * FROM events
-- step: aggregate [scan]
SELECT ds, h, count(*), sum(amount), min(id), max(id) FROM events GROUP BY ds, h
-- step: count
SELECT count(*) FROM events

-- schema and properties
-- step: add columns
ALTER TABLE events ADD COLUMNS (note STRING COMMENT 'a note')
-- step: describe after add columns [ordered]
DESCRIBE events
-- step: insert with new column
INSERT INTO events PARTITION (ds='2024-01-05', h=0) VALUES (300, 'n', 1.0, 'hi')
-- step: select new column [scan]
SELECT id, note, ds, h FROM events WHERE ds >= '2024-01-04'
-- step: set tblproperties
ALTER TABLE events SET TBLPROPERTIES ('purpose'='workload', 'k2'='v2')
-- step: unset tblproperties
ALTER TABLE events UNSET TBLPROPERTIES ('k2')
-- step: show tblproperties
SHOW TBLPROPERTIES events
-- step: show tblproperty
SHOW TBLPROPERTIES events ('purpose')

-- statistics
-- step: analyze table
ANALYZE TABLE events COMPUTE STATISTICS
-- step: analyze partition
ANALYZE TABLE events PARTITION (ds='2024-01-02', h) COMPUTE STATISTICS
-- step: analyze partition noscan
ANALYZE TABLE events PARTITION (ds='2024-01-01', h=0) COMPUTE STATISTICS
    NOSCAN
-- step: analyze columns
ANALYZE TABLE events COMPUTE STATISTICS FOR COLUMNS id, name, amount
-- step: describe extended after analyze [ordered]
DESCRIBE TABLE EXTENDED events
-- step: describe partition [ordered]
DESCRIBE FORMATTED events PARTITION (ds='2024-01-02', h=1)
-- step: describe partition noscan [ordered]
DESCRIBE FORMATTED events PARTITION (ds='2024-01-01', h=0)
-- step: describe column stats [ordered]
DESCRIBE EXTENDED events amount
-- step: describe column stats string [ordered]
DESCRIBE EXTENDED events name
-- dump: metastore after analyze

-- partitions by DDL
-- step: add partition
ALTER TABLE events ADD PARTITION (ds='2024-02-01', h=0) PARTITION (ds='2024-02-01', h=1)
-- step: add existing partition
ALTER TABLE events ADD PARTITION (ds='2024-02-01', h=0)
-- step: add partition if not exists
ALTER TABLE events ADD IF NOT EXISTS PARTITION (ds='2024-02-01', h=0)
    PARTITION (ds='2024-02-02', h=0)
-- step: drop partition
ALTER TABLE events DROP PARTITION (ds='2024-01-03', h=3)
-- step: drop partitions by partial spec
ALTER TABLE events DROP PARTITION (ds='2024-01-04')
-- step: drop missing partition
ALTER TABLE events DROP PARTITION (ds='1999-01-01', h=0)
-- step: drop missing partition if exists
ALTER TABLE events DROP IF EXISTS PARTITION (ds='1999-01-01', h=0)
-- step: rename partition
ALTER TABLE events PARTITION (ds='2024-02-02', h=0) RENAME TO PARTITION
    (ds='2024-02-03', h=0)
-- step: show partitions after ddl [ordered]
SHOW PARTITIONS events
-- step: select after partition ddl [scan]
SELECT ds, h, count(*) FROM events GROUP BY ds, h
-- tree: tree after partition ddl @ {DB}.db/events

-- MSCK REPAIR TABLE: a partition directory written behind the metastore's back, and one removed
-- action: msck_write_partition
-- step: show partitions before msck [ordered]
SHOW PARTITIONS events
-- step: msck repair
MSCK REPAIR TABLE events
-- step: show partitions after msck [ordered]
SHOW PARTITIONS events
-- step: select repaired partition [scan]
SELECT * FROM events WHERE ds = '2024-03-01'
-- action: msck_remove_partition
-- step: msck repair sync
MSCK REPAIR TABLE events SYNC PARTITIONS
-- step: show partitions after msck sync [ordered]
SHOW PARTITIONS events
-- dump: metastore after msck

-- rename
-- step: rename table
ALTER TABLE events RENAME TO events2
-- step: select renamed old name
SELECT count(*) FROM events
-- step: select renamed [scan]
SELECT * FROM events2 WHERE h = 0
-- step: describe formatted renamed [ordered]
DESCRIBE FORMATTED events2
-- step: describe renamed partition [ordered]
DESCRIBE FORMATTED events2 PARTITION (ds='2024-01-02', h=1)
-- tree: tree after rename @ {DB}.db
-- dump: metastore after rename

-- views
-- step: create view
CREATE VIEW v_events COMMENT 'a view' AS SELECT id, name, ds FROM events2 WHERE h = 1
-- step: select view
SELECT * FROM v_events
-- step: select view filtered
SELECT id FROM v_events WHERE ds = '2024-01-02'
-- step: describe view [ordered]
DESCRIBE FORMATTED v_events
-- step: alter view
ALTER VIEW v_events AS SELECT id, ds FROM events2 WHERE h = 2
-- step: select altered view
SELECT * FROM v_events
-- step: show views
SHOW VIEWS IN {DB}
-- step: create view again
CREATE VIEW v_events AS SELECT 1 AS one
-- step: create or replace view
CREATE OR REPLACE VIEW v_tmp AS SELECT 1 AS one
-- step: drop view
DROP VIEW v_tmp
-- step: select dropped view
SELECT * FROM v_tmp

-- data source tables by the DataFrame API
-- action: dataframe_tables
-- step: read df_part pruned [scan]
SELECT * FROM df_part WHERE p = 1
-- step: show partitions df_part [ordered]
SHOW PARTITIONS df_part
-- step: describe df_part [ordered]
DESCRIBE FORMATTED df_part
-- action: dataframe_insert_overwrite
-- step: read df_part after overwrite
SELECT p, count(*) FROM df_part GROUP BY p
-- step: datasource insert partition
INSERT INTO df_part PARTITION (p=5) VALUES (50, 'five')
-- step: datasource alter add partition
ALTER TABLE df_part ADD PARTITION (p=6)
-- step: datasource show partitions [ordered]
SHOW PARTITIONS df_part
-- step: datasource analyze
ANALYZE TABLE df_part COMPUTE STATISTICS FOR ALL COLUMNS
-- step: datasource describe column [ordered]
DESCRIBE EXTENDED df_part id
-- tree: tree of data source tables @ {DB}.db
-- dump: metastore with data source tables

-- partition values that need escaping, NULL (the default partition), and date and bigint keys
-- step: create odd partitions table
CREATE TABLE odd (v INT) PARTITIONED BY (s STRING) STORED AS PARQUET
-- step: insert odd partitions
INSERT INTO odd PARTITION (s) VALUES (1, 'a/b'), (2, 'x:y=z'), (3, 'sp ace'),
    (4, 'per%cent'), (5, 'café'), (6, NULL), (7, 'q"uo''te'), (8, 'a#b?c*[d]')
-- step: show odd partitions [ordered]
SHOW PARTITIONS odd
-- step: select odd partition [scan]
SELECT * FROM odd WHERE s = 'a/b'
-- step: select odd partitions in [scan]
SELECT * FROM odd WHERE s IN ('x:y=z', 'café', 'per%cent')
-- step: select default partition [scan]
SELECT * FROM odd WHERE s IS NULL
-- step: select odd range [scan]
SELECT * FROM odd WHERE s >= 'q'
-- step: drop odd partition
ALTER TABLE odd DROP PARTITION (s='x:y=z')
-- step: show odd partitions after drop [ordered]
SHOW PARTITIONS odd
-- tree: tree of odd partitions @ {DB}.db/odd
-- step: create dated table
CREATE TABLE dated (v INT) PARTITIONED BY (d DATE, n BIGINT) STORED AS PARQUET
-- step: insert dated
INSERT INTO dated PARTITION (d, n) VALUES (1, DATE'2024-01-01', 1),
    (2, DATE'2024-01-02', 20), (3, DATE'2024-02-01', 300), (4, DATE'2024-02-01', -4)
-- step: select date equality [scan]
SELECT * FROM dated WHERE d = DATE'2024-02-01'
-- step: select date range [scan]
SELECT * FROM dated WHERE d > DATE'2024-01-01' AND d <= DATE'2024-02-01'
-- step: select date in [scan]
SELECT * FROM dated WHERE d IN (DATE'2024-01-01', DATE'2024-01-02')
-- step: select bigint range [scan]
SELECT * FROM dated WHERE n > 5
-- step: select bigint negative [scan]
SELECT * FROM dated WHERE n < 0
-- step: select bigint in [scan]
SELECT * FROM dated WHERE n IN (1, 300)

-- column types, storage layouts and alterations of Hive tables
-- step: create typed table
CREATE TABLE typed (a TINYINT, b SMALLINT, c BIGINT, d DECIMAL(10,2), e FLOAT,
    f BOOLEAN, g DATE, h TIMESTAMP, i BINARY, j ARRAY<STRUCT<x: INT, y: STRING>>, k MAP<STRING, INT>,
    l VARCHAR(10), m CHAR(3) COMMENT 'a char') STORED AS PARQUET
-- step: insert typed
INSERT INTO typed VALUES (1, 2, 3, 4.5, 6.5, true, DATE'2024-01-01',
    TIMESTAMP'2024-01-01 01:02:03', X'CAFE', array(named_struct('x', 1, 'y', 'z')), map('k', 1), 'var', 'ch')
-- step: select typed
SELECT * FROM typed
-- step: describe typed [ordered]
DESCRIBE typed
-- step: create text table
CREATE TABLE texty (a INT, b STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ','
    STORED AS TEXTFILE
-- step: insert text table
INSERT INTO texty VALUES (1, 'one'), (2, 'two')
-- step: select text table
SELECT * FROM texty
-- step: set serde properties
ALTER TABLE texty SET SERDEPROPERTIES ('field.delim'=',', 'extra'='1')
-- step: describe text table [ordered]
DESCRIBE FORMATTED texty
-- step: change column comment
ALTER TABLE texty CHANGE COLUMN b b STRING COMMENT 'the name'
-- step: describe changed column [ordered]
DESCRIBE texty
-- action: texty_location_dir
-- step: set table location
ALTER TABLE texty SET LOCATION '{warehouse}/elsewhere/texty'
-- step: select after set location
SELECT * FROM texty
-- step: insert after set location
INSERT INTO texty VALUES (3, 'three')
-- step: select after insert at new location
SELECT * FROM texty
-- step: create bucketed hive table
CREATE TABLE bucketed (a INT, b STRING) CLUSTERED BY (a) SORTED BY (a)
    INTO 4 BUCKETS STORED AS PARQUET
-- step: create bucketed datasource table
CREATE TABLE bucketed_ds (a INT, b STRING) USING parquet
    CLUSTERED BY (a) SORTED BY (b) INTO 3 BUCKETS
-- step: describe bucketed [ordered]
DESCRIBE FORMATTED bucketed
-- step: set partition location
ALTER TABLE events2 PARTITION (ds='2024-03-01', h=7) SET LOCATION
    '{warehouse}/elsewhere/p7'
-- step: select moved partition [scan]
SELECT * FROM events2 WHERE ds = '2024-03-01'
-- step: truncate partition
TRUNCATE TABLE events2 PARTITION (ds='2024-01-01', h=1)
-- step: select truncated partition
SELECT count(*) FROM events2 WHERE ds = '2024-01-01'
-- step: recover partitions
ALTER TABLE events2 RECOVER PARTITIONS
-- step: alter database location
ALTER DATABASE {DB} SET LOCATION '{warehouse}/moved.db'
-- step: show columns
SHOW COLUMNS IN events2
-- step: show create datasource table
SHOW CREATE TABLE df_part
-- dump: metastore with types and layouts

-- CTAS
-- step: ctas hive
CREATE TABLE ctas_hive STORED AS PARQUET AS SELECT id, name, ds FROM events2 WHERE h = 1
-- step: ctas datasource partitioned
CREATE TABLE ctas_ds USING parquet PARTITIONED BY (ds) AS
    SELECT id, amount, ds FROM events2 WHERE h < 2
-- step: ctas exists
CREATE TABLE ctas_hive AS SELECT 1 AS x
-- step: select ctas hive
SELECT * FROM ctas_hive
-- step: select ctas datasource [scan]
SELECT * FROM ctas_ds WHERE ds = '2024-01-02'
-- step: describe ctas [ordered]
DESCRIBE FORMATTED ctas_hive
-- step: create table like
CREATE TABLE events_like LIKE events2
-- step: describe table like [ordered]
DESCRIBE FORMATTED events_like
-- step: create external table
CREATE EXTERNAL TABLE ext (a INT) STORED AS PARQUET LOCATION
    '{warehouse}/external/ext'
-- step: insert external
INSERT INTO ext VALUES (1), (2)
-- step: select external
SELECT * FROM ext
-- step: truncate
TRUNCATE TABLE ctas_hive
-- step: select truncated
SELECT count(*) FROM ctas_hive
-- step: show tables
SHOW TABLES IN {DB}
-- step: show tables like
SHOW TABLES IN {DB} LIKE 'ctas*|df_*'
-- step: show table extended
SHOW TABLE EXTENDED IN {DB} LIKE 'df_plain'
-- action: catalog_listings

-- permanent functions
-- step: create function
CREATE FUNCTION {DB}.my_upper AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper'
-- step: create function again
CREATE FUNCTION {DB}.my_upper AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper'
-- step: create function reverse
CREATE FUNCTION my_reverse AS 'org.apache.hadoop.hive.ql.udf.UDFReverse'
-- step: use function
SELECT id, {DB}.my_upper(name), my_reverse(name) FROM events2 WHERE ds = '2024-01-02' AND h = 1
-- step: show user functions
SHOW USER FUNCTIONS IN {DB}
-- dump: metastore with functions
-- step: describe function [ordered]
DESCRIBE FUNCTION EXTENDED {DB}.my_upper
-- step: drop function
DROP FUNCTION {DB}.my_upper
-- step: drop function again
DROP FUNCTION {DB}.my_upper
-- step: drop function if exists
DROP FUNCTION IF EXISTS {DB}.my_upper
-- step: use dropped function
SELECT {DB}.my_upper('x')
-- step: show user functions after drop
SHOW USER FUNCTIONS IN {DB}

-- drops
-- step: drop table
DROP TABLE events_like
-- step: drop missing table
DROP TABLE events_like
-- step: drop table if exists
DROP TABLE IF EXISTS events_like
-- step: drop external table
DROP TABLE ext
-- action: note_external_data_kept
-- step: drop non-empty database
DROP DATABASE {DB}
-- step: create second database
CREATE DATABASE ws_tmp
-- step: table in second database
CREATE TABLE ws_tmp.t USING parquet AS SELECT 1 AS x
-- step: drop second database cascade
DROP DATABASE ws_tmp CASCADE
-- action: note_second_database_removed
-- step: show databases at end
SHOW DATABASES
-- step: show tables at end
SHOW TABLES IN {DB}
-- tree: tree at end @ {DB}.db
-- dump: metastore at end

-- phase: read
-- step: show databases
SHOW DATABASES
-- step: show tables
SHOW TABLES IN {DB}
-- step: describe [ordered]
DESCRIBE {DB}.events2
-- step: select all [scan]
SELECT * FROM {DB}.events2
-- step: select pruned [scan]
SELECT id, ds, h FROM {DB}.events2 WHERE ds = '2024-01-02' AND h IN (1, 2)
-- step: select data source [scan]
SELECT * FROM {DB}.df_part WHERE p >= 1
-- step: select data source plain
SELECT * FROM {DB}.df_plain
-- step: select view
SELECT * FROM {DB}.v_events
-- step: select ctas
SELECT * FROM {DB}.ctas_ds
-- step: function from first session
SELECT {DB}.my_reverse('abc')
-- step: function in default
SELECT my_reverse('abc')
-- step: show partitions [ordered]
SHOW PARTITIONS {DB}.events2
-- step: table stats [ordered]
DESCRIBE EXTENDED {DB}.events2 amount
-- step: insert from second session
INSERT INTO {DB}.events2 PARTITION (ds='2024-09-09', h=9)
    VALUES (900, 'second', 9.9, NULL)
-- step: select second insert [scan]
SELECT * FROM {DB}.events2 WHERE ds = '2024-09-09'
-- step: drop view
DROP VIEW {DB}.v_events
-- step: drop table
DROP TABLE {DB}.ctas_hive
-- step: show tables after drop
SHOW TABLES IN {DB}
-- dump: metastore before dropping the database
-- action: note_dropped_table_removed
-- step: drop database cascade
DROP DATABASE {DB} CASCADE
-- step: show databases after drop
SHOW DATABASES
-- step: select from dropped database
SELECT * FROM {DB}.events2
-- action: note_database_removed
