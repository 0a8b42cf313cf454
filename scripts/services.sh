#!/usr/bin/env bash
# Makes sure the database services the tests use are running and have the test databases.
# The machine's image installs PostgreSQL and MariaDB; this starts them if they stopped.
set -u
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  echo "starting PostgreSQL" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
if ! mariadb-admin -h 127.0.0.1 -u root ping >/dev/null 2>&1; then
  echo "starting MariaDB" >&2
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
  for _ in $(seq 1 30); do mariadb-admin -h 127.0.0.1 -u root ping >/dev/null 2>&1 && break; sleep 1; done
fi
psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='metastore_test'" 2>/dev/null | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE metastore_test" >/dev/null 2>&1 || true
mariadb -h 127.0.0.1 -u root -e "CREATE DATABASE IF NOT EXISTS metastore_test CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" 2>/dev/null || true
exit 0
