#!/usr/bin/env bash
# JDBC drivers for the reference Hive metastore on PostgreSQL and MariaDB (bench/run.py runs it on every store
# it benchmarks ours on): Debian's libpostgresql-jdbc-java and libmariadb-java, installed if missing.
set -u
missing=()
[ -f /usr/share/java/postgresql.jar ] || missing+=(libpostgresql-jdbc-java)
[ -f /usr/share/java/mariadb-java-client.jar ] || missing+=(libmariadb-java)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing ${missing[*]} (Debian)" >&2
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
