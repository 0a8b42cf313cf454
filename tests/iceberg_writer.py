"""A writer process for tests/test_iceberg_hive.py: appends rows to an Iceberg table through PyIceberg's
HiveCatalog (lock -> check_lock -> alter_table -> unlock), retrying a commit that lost the race.

    python iceberg_writer.py URI WAREHOUSE TABLE WRITER COUNT [hang]

Prints one line per commit. With `hang`, it stops forever right after the lock is granted (to be killed).
"""

from __future__ import annotations

import sys
import time

import pyarrow as pa
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.exceptions import CommitFailedException


def main() -> None:
    uri, warehouse, ident, writer, count = sys.argv[1:6]
    hang = len(sys.argv) > 6 and sys.argv[6] == "hang"
    cat = HiveCatalog("hive", uri=uri, warehouse=warehouse, **{
        "lock-check-min-wait-time": "0.02", "lock-check-max-wait-time": "0.2", "lock-check-retries": "10000"})
    if hang:
        def stop(*_a, **_k):  # noqa: ANN002, ANN003
            print("holding", flush=True)
            time.sleep(3600)
        cat._write_metadata = stop  # type: ignore[method-assign]  # called with the lock held
    table = cat.load_table(ident)
    retries = 0
    for seq in range(int(count)):
        data = pa.table({"writer": pa.array([int(writer)], pa.int64()), "seq": pa.array([seq], pa.int64())})
        while True:
            try:
                table.append(data)
                break
            except CommitFailedException:
                retries += 1
                table = cat.load_table(ident)
        print(f"commit {writer} {seq}", flush=True)
    print(f"retries {retries}", flush=True)


if __name__ == "__main__":
    main()
