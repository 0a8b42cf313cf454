"""The data copy: managed tables' and partitions' directories made equal on the target, file by file.

The driver lists both sides; every source file is one task that copies it unless the target already has
it with the same size and checksum, and verifies the copy (size and MD5 read back from the target). Target
files the source does not have are removed. The tasks run on Spark (`engine=spark`, the default;
`spark.master` picks the cluster, default local[*]) or on a thread pool (`engine=local`, for metadata-
heavy runs and tests). Both sides must be visible as local paths to wherever the tasks run (on a cluster:
a shared file system mounted at the same path).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..catalog.warehouse import Warehouse
from .errors import ReplError

ENGINE_KEY = "metastore.repl.copy.engine"
MASTER_KEY = "spark.master"
CHUNK = 1 << 20


class CopyFailed(ReplError):
    """A file could not be copied or did not verify: the next load retries the copy (it is a sync)."""


@dataclasses.dataclass
class CopyStats:
    files: int = 0
    bytes: int = 0
    verified: int = 0
    removed: int = 0


def _md5(path: str) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


Task = tuple[str, str, int, str, str]  # source file, target file, size, source directory, target directory


def _inside(path: str, root: str) -> None:
    """Refuse a path that, with symbolic links resolved, is not inside its pair's directory: a link planted in
    either warehouse must not make the copy read or write anywhere else."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    if real != top and not real.startswith(top.rstrip("/") + "/"):
        raise OSError(f"{path} leads outside {root} through a symbolic link")


def copy_file(task: Task) -> tuple[str, int, str]:
    """One file: ('same' | 'copied', bytes, md5). Runs on a Spark executor or a thread."""
    src, dst, size, src_root, dst_root = task
    _inside(src, src_root)
    if os.path.islink(dst):
        os.remove(dst)  # a link where a file goes: replaced, never written through
    if os.path.isfile(dst) and os.path.getsize(dst) == size and _md5(dst) == _md5(src):
        return "same", 0, ""
    _inside(os.path.dirname(dst), dst_root)  # before anything is made: an existing parent may be a link
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    _inside(os.path.dirname(dst), dst_root)
    tmp = os.path.join(os.path.dirname(dst), f".{os.path.basename(dst)}.repl-tmp")
    h = hashlib.md5()
    n = 0
    with open(src, "rb", opener=_no_follow) as fi, open(tmp, "wb", opener=_no_follow) as fo:
        while chunk := fi.read(CHUNK):
            h.update(chunk)
            fo.write(chunk)
            n += len(chunk)
        fo.flush()
        os.fsync(fo.fileno())
    digest = h.hexdigest()
    if n != os.path.getsize(tmp) or _md5(tmp) != digest:
        os.remove(tmp)
        raise OSError(f"copy of {src} to {dst} does not verify (size or checksum differs)")
    os.replace(tmp, dst)
    shutil.copystat(src, dst)
    return "copied", n, digest


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW, 0o666)


def _files(root: str, deep: bool) -> dict[str, int]:
    """The regular files under a directory (symbolic links are neither followed nor listed)."""
    out = {}
    for dirpath, dirs, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            out[os.path.relpath(p, root)] = os.path.getsize(p)
        if not deep:
            dirs.clear()
    return out


def plan(pairs: list[tuple[str, str, bool]]) -> tuple[list[Task], list[str]]:
    """(copy tasks, target files to remove) for directory pairs (source location, target location, deep).

    A pair that is not deep covers the files directly in the directory (a partitioned table's own files,
    such as Spark's _SUCCESS, beside its partitions' directories)."""
    tasks: list[Task] = []
    extra: list[str] = []
    for src_loc, dst_loc, deep in pairs:
        src, dst = Warehouse.local_path(src_loc), Warehouse.local_path(dst_loc)
        if src is None or dst is None:
            raise ReplError(f"cannot copy {src_loc} to {dst_loc}: only local (file:) paths are supported")
        if not os.path.isdir(src):
            continue  # gone on the source since the dump: a later dump drops it
        have = _files(dst, deep) if os.path.isdir(dst) else {}
        want = _files(src, deep)
        tasks += [(os.path.join(src, rel), os.path.join(dst, rel), size, src, dst)
                  for rel, size in sorted(want.items())]
        extra += [os.path.join(dst, rel) for rel in sorted(set(have) - set(want))]
    return tasks, extra


def sync(pairs: list[tuple[str, str, bool]], options: dict[str, str]) -> CopyStats:
    try:
        return _sync(pairs, options)
    except OSError as e:
        raise CopyFailed(f"the data copy failed: {e}") from None


def _sync(pairs: list[tuple[str, str, bool]], options: dict[str, str]) -> CopyStats:
    tasks, extra = plan(pairs)
    stats = CopyStats()
    if tasks:
        engine = options.get(ENGINE_KEY, "spark")
        if engine == "spark":
            results = _on_spark(tasks, options)
        elif engine == "local":
            with ThreadPoolExecutor(max_workers=int(options.get("metastore.repl.copy.threads", "4"))) as pool:
                results = list(pool.map(copy_file, tasks))
        else:
            raise ReplError(f"{ENGINE_KEY} is 'spark' or 'local', not {engine!r}")
        for state, n, _ in results:
            if state == "copied":
                stats.files += 1
                stats.bytes += n
            else:
                stats.verified += 1
    for path in extra:
        os.remove(path)
        stats.removed += 1
    return stats


def _on_spark(tasks: list[Task], options: dict[str, str]) -> list[Any]:
    import sys

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.getActiveSession()
    own = spark is None
    if spark is None:
        b = SparkSession.builder.appName("metastore-repl-copy").master(options.get(MASTER_KEY, "local[*]"))
        for k, v in options.items():
            if k.startswith("spark.") and k != MASTER_KEY:
                b = b.config(k, v)
        spark = b.getOrCreate()
    try:
        sc = spark.sparkContext
        slices = max(1, min(len(tasks), sc.defaultParallelism * 4))
        return sc.parallelize(tasks, slices).map(copy_file).collect()
    except Exception as e:  # noqa: BLE001 - Py4J wraps the executors' errors
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CopyFailed(f"the data copy job failed: {first}") from None
    finally:
        if own:
            spark.stop()
