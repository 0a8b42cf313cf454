"""The Iceberg REST catalog's operations over the catalog service.

Namespaces are Hive databases (one level). An Iceberg table is a Hive EXTERNAL_TABLE whose parameters carry
table_type=ICEBERG, metadata_location and previous_metadata_location: what PyIceberg's HiveCatalog (and
Iceberg's Java HiveCatalog) write, so a table crosses freely between the Thrift and REST protocols.

Table metadata is PyIceberg's: its models parse and serialize the metadata files and requests, its
requirement classes validate, `update_table_metadata` applies updates (with the spec's no-ops where PyIceberg
fails: `spec_updates`), its FileIO writes the files. What a commit would write is checked first
(`metadata_problem`): it must read back, and be metadata Iceberg's Java readers take. A commit
writes the next metadata file beside the current one, then swaps metadata_location in the store with a
compare-and-swap against the location it started from, so a concurrent commit (through either protocol)
makes it fail with 409 instead of being lost. A multi-table commit swaps every table in one store transaction.
The swap holds Hive's table lock, so commits through the lock path (HiveCatalog) and through REST interleave
safely on one table.

Nothing a client sends chooses code or a place to connect: the server reads and writes metadata with one FileIO
built from no properties, names metadata files itself (never through a table's location provider), and refuses
table properties that would make other readers of the table import a class or reach an endpoint. It reads
metadata only where the catalog's location policy allows, writes only under a table location the server owns,
and a purge deletes only files under the dropped table's own location and under no other table's.
"""

from __future__ import annotations

import base64
import binascii
import collections
import functools
import gzip
import hashlib
import io
import json
import logging
import os
import re
import socket
import stat
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeGuard

from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticError
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.exceptions import ValidationError as IcebergValidationError
from pyiceberg.io import FileIO, InputFile, OutputFile
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema, visit
from pyiceberg.serializers import ToOutputFile
from pyiceberg.table import TableProperties
from pyiceberg.table.metadata import (
    SUPPORTED_TABLE_FORMAT_VERSION,
    TableMetadata,
    TableMetadataUtil,
    TableMetadataV1,
    new_table_metadata,
)
from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRefType
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import (
    AddSnapshotUpdate,
    AssertCreate,
    RemovePartitionStatisticsUpdate,
    RemovePropertiesUpdate,
    RemoveSnapshotsUpdate,
    RemoveStatisticsUpdate,
    SetPartitionStatisticsUpdate,
    SetPropertiesUpdate,
    SetStatisticsUpdate,
    TableRequirement,
    TableUpdate,
    update_table_metadata,
)
from pyiceberg.transforms import BucketTransform, TruncateTransform

from ..catalog.locations import is_under, local_path, normalize
from ..catalog.locks import ACQUIRED, EXCLUSIVE, TABLE, Component
from ..catalog.service import Catalog
from ..catalog.warehouse import remove_quietly
from ..core import model as m
from ..core.errors import (
    AlreadyExists,
    CatalogError,
    InvalidObject,
    InvalidOperation,
    MetaError,
    NoSuchObject,
    TableModified,
)
from ..core.names import valid_name
from .errors import (
    RestError,
    access_error,
    already_exists,
    bad_request,
    commit_failed,
    forbidden,
    no_such_namespace,
    no_such_table,
)
from .types import JsonObject, JsonValue

log = logging.getLogger(__name__)

NAMESPACE_SEPARATOR = "\x1f"  # the spec's default separator of namespace levels in a path (%1F)
TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
LAZY_SIMPLE_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
# namespace properties that are fields of the Hive database, not parameters
LOCATION, COMMENT = "location", "comment"
# PyIceberg's HiveCatalog gives new tables this default; so do we, so both protocols create alike tables
DEFAULT_TABLE_PROPERTIES = {TableProperties.PARQUET_COMPRESSION: TableProperties.PARQUET_COMPRESSION_DEFAULT}
LOCK_WAIT = 60.0  # seconds a commit waits for Hive's table lock held by a lock-path writer
_HOST = socket.gethostname()

# paging of the list operations (the spec's pageToken / pageSize / next-page-token)
DEFAULT_PAGE_SIZE = 1000  # a page when the client asks for paging (pageToken) without a pageSize
MAX_PAGE_TOKEN = 1024  # characters of a pageToken: ours encode one name of at most 128 characters
MAX_PAGE_SIZE_DIGITS = 10
# metrics reports: what is kept of the last ones (a summary each, never the client's whole body)
METRICS_RING = 256
MAX_REPORTED_NAME = 256

_REQUIREMENTS: TypeAdapter[list[TableRequirement]] = TypeAdapter(list[TableRequirement])
_UPDATES: TypeAdapter[list[TableUpdate]] = TypeAdapter(list[TableUpdate])


def _pydantic_message(e: PydanticError) -> str:
    parts = []
    for err in e.errors()[:5]:
        where = ".".join(str(x) for x in err.get("loc", ()))
        parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
    return "; ".join(parts)


def _obj(body: JsonValue, what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad_request(f"{what}: the request body must be a JSON object")
    return body


def _str_dict(v: object) -> TypeGuard[dict[str, str]]:
    """A JSON object of strings (json.loads makes every key a string)."""
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


def _str_list(v: object) -> TypeGuard[list[str]]:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def database_of(namespace: object) -> str:
    """The Hive database of a namespace given as a list of levels."""
    if isinstance(namespace, str):
        namespace = namespace.split(NAMESPACE_SEPARATOR)
    if not isinstance(namespace, (list, tuple)) or not all(isinstance(x, str) for x in namespace) or not namespace:
        raise bad_request(f"Invalid namespace {namespace!r}: a list of strings")
    if len(namespace) != 1:
        raise bad_request(f"Invalid namespace {'.'.join(namespace)}: namespaces are Hive databases, one level "
                          f"only")
    if not namespace[0]:
        raise bad_request("Invalid namespace: empty name")
    level: str = namespace[0]  # checked above: a list of strings
    return level.lower()


@dataclass
class Loaded:
    table: m.Table
    metadata: TableMetadata
    location: str


@dataclass
class Staged:
    """A commit prepared for one table: its new metadata file is written, the store not yet changed."""
    db: str
    name: str
    old: m.Table | None  # None: the commit creates the table
    old_location: str | None
    old_metadata: TableMetadata | None
    metadata: TableMetadata
    location: str
    changed: bool
    made: list[str] = field(default_factory=list)  # directories created for the new metadata file


# ---- what a client may not choose -------------------------------------------------------------------------
# Table properties that PyIceberg, Iceberg's Java catalogs and FileIOs, or fsspec read to import a class
# (py-io-impl, io-impl, write.py-location-provider.impl, s3.retry-strategy-impl, catalog-impl, lock-impl,
# client.factory, client.credentials-provider, ...) or to choose where and as whom to connect (endpoints,
# proxies, signers, regions, credentials of s3/gcs/adls/hdfs/hf/oss, the warehouse a FileIO is inferred from).
# This server never uses table properties for either, but every other reader of the table would: a client may
# not set them. Matched on the lower-cased key.
_CODE_KEY = re.compile(r"(^|[.\-_])(impl|factory|class|provider)$")
_CONNECTION_PREFIXES = (
    "s3.", "s3a.", "s3n.", "client.", "aws.", "sts.", "glue.", "dynamodb.", "gcs.", "gs.", "adls.", "azure.",
    "abfs.", "wasb.", "hdfs.", "dfs.", "fs.", "hadoop.", "hf.", "oss.", "http-client.", "rest.", "header.",
    "oauth2.", "credential.", "kms.")
_CONNECTION_KEYS = frozenset({"warehouse", "uri", "token", "credential", "scope", "default_scheme",
                              "default_netloc", "buffer-size", "py-io-impl", "io-impl", "catalog-impl"})
_CONNECTION_WORDS = ("endpoint", "proxy", "signer", "secret", "password", "access-key")
# the largest metadata file the server reads: a bound on what one request makes it hold (a table's metadata
# grows by well under a KiB a snapshot, and old snapshots are expired)
MAX_METADATA_BYTES = 128 * 1024 * 1024


def refused_property(key: str) -> str | None:
    """Why a table property may not be set by a client, or None if it may."""
    k = key.strip().lower()
    if _CODE_KEY.search(k) or k in ("py-io-impl", "io-impl", "catalog-impl"):
        return "it names code (a class or module) for readers of the table to load"
    if k in _CONNECTION_KEYS or k.startswith(_CONNECTION_PREFIXES) or any(w in k for w in _CONNECTION_WORDS):
        return "it chooses a storage endpoint, proxy or credentials for readers of the table"
    return None


def check_properties(keys: Iterable[str], what: str) -> None:
    for key in keys:
        why = refused_property(key)
        if why:
            raise bad_request(f"{what}: table property {key!r} is not allowed: {why}; the server's own settings "
                              f"choose file systems and endpoints")


class _Missing(Exception):
    """No file at a metadata location (inside the places the server may read)."""


class _NotMetadata(Exception):
    """A file that is not a table metadata file the server will read (what it holds is never told)."""


def read_metadata_file(path: str, location: str) -> TableMetadata:
    """The table metadata in a local file the policy allows reading (`path`: its real path). Only a regular
    file of bounded size is read; a FIFO or device is never opened for reading, and no parse error's text (which
    quotes the file) reaches the caller."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise _Missing() from None
    except OSError:
        raise _NotMetadata() from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_METADATA_BYTES:
            raise _NotMetadata()
        chunks, size = [], 0
        while size <= MAX_METADATA_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_METADATA_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        raw = b"".join(chunks)
    except OSError:
        raise _NotMetadata() from None
    finally:
        os.close(fd)
    try:
        if location.endswith(".gz.metadata.json"):
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as z:
                raw = z.read(MAX_METADATA_BYTES + 1)
        if len(raw) > MAX_METADATA_BYTES:
            raise _NotMetadata()
        return TableMetadataUtil.parse_raw(raw)  # type: ignore[arg-type]  # pydantic parses bytes as JSON
    except Exception:
        raise _NotMetadata() from None


@functools.lru_cache(maxsize=1)
def _server_io() -> FileIO:
    """The one FileIO of the server: PyArrow's local file system, built from no client property."""
    from pyiceberg.io.pyarrow import PyArrowFileIO  # pyarrow only once a table is written

    return PyArrowFileIO({})


def write_metadata(metadata: TableMetadata, location: str) -> list[str]:
    """Write a new metadata file (never over an existing one); returns the directories created for it,
    deepest first, so a change that does not commit leaves nothing behind."""
    path = local_path(location)
    assert path is not None  # the caller checked the policy owns it
    made, d = [], os.path.dirname(path)
    while d and d != "/" and not os.path.isdir(d):
        made.append(d)
        d = os.path.dirname(d)
    ToOutputFile.table_metadata(metadata, _server_io().new_output(path))
    return made


class _ConfinedIO(FileIO):
    """Reads for a purge: only files `allowed` maps to a real path (the dropped table's own); never writes or
    deletes (the purge deletes what it checked itself)."""

    def __init__(self, allowed: Callable[[str], str | None]) -> None:
        super().__init__({})
        self._allowed = allowed
        self._io = _server_io()

    def new_input(self, location: str) -> InputFile:
        real = self._allowed(location)
        if real is None:
            raise PermissionError(f"not a file of the purged table: {location}")
        if not stat.S_ISREG(os.stat(real).st_mode):  # a FIFO would block the purge's thread for good
            raise PermissionError(f"not a regular file: {location}")
        return self._io.new_input(real)

    def new_output(self, location: str) -> OutputFile:
        raise PermissionError("a purge writes nothing")

    def delete(self, location: str | InputFile | OutputFile) -> None:
        raise PermissionError("a purge deletes only the files it checked")


def _hive_columns(schema: Schema) -> list[m.FieldSchema]:
    from pyiceberg.catalog.hive import SchemaToHiveConverter  # PyIceberg's Iceberg -> Hive type names

    return [m.FieldSchema(f.name, visit(f.field_type, SchemaToHiveConverter(False)), f.doc) for f in schema.fields]


def hive_table(db: str, name: str, metadata: TableMetadata, location: str, base: m.Table | None = None,
               previous: str | None = None, base_metadata: TableMetadata | None = None) -> m.Table:
    """The Hive table recording an Iceberg table, as PyIceberg's HiveCatalog writes it (so either catalog reads
    it). On a commit, parameters set outside Iceberg are kept and Iceberg properties removed are dropped."""
    cols = _hive_columns(metadata.schema())
    params: dict[str, str] = dict(base.parameters) if base is not None else {}
    if base_metadata is not None:
        for key in base_metadata.properties.keys() - metadata.properties.keys():
            params.pop(key, None)
    own = {"EXTERNAL": "TRUE", TABLE_TYPE: ICEBERG, METADATA_LOCATION: location}
    if previous:
        own[PREVIOUS_METADATA_LOCATION] = previous
    params.update(own)
    for k, v in metadata.properties.items():
        if k not in own:
            params[k] = str(v)
    if base is not None:
        return replace(base, parameters=params, sd=replace(base.sd, cols=cols, location=metadata.location))
    sd = m.StorageDescriptor(cols=cols, location=metadata.location,
                             inputFormat="org.apache.hadoop.mapred.FileInputFormat",
                             outputFormat="org.apache.hadoop.mapred.FileOutputFormat",
                             serdeInfo=m.SerDeInfo(serializationLib=LAZY_SIMPLE_SERDE))
    return m.Table(tableName=name, dbName=db, owner=metadata.properties.get("owner"), sd=sd,
                   tableType=EXTERNAL_TABLE, parameters=params)


class Tagged(str):
    """An answer's JSON text with the ETag of the table metadata it carries ('' when it has none)."""

    etag = ""


def etag(metadata_location: str, snapshots: str = "all") -> str:
    """The ETag of a table's metadata as answered: one per metadata file (a commit always writes a new one) and
    representation (the spec's `snapshots` parameter), quoted as HTTP's entity tags are."""
    digest = hashlib.sha256(f"{snapshots}\0{metadata_location}".encode()).hexdigest()[:40]
    return f'"{digest}"'


def etag_matches(if_none_match: str | None, tag: str) -> bool:
    """Whether an If-None-Match header names `tag` (RFC 9110's weak comparison; `*` matches any)."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(t.strip().removeprefix("W/") == tag for t in if_none_match.split(","))


def tagged(text: str, metadata_location: str | None, snapshots: str = "all") -> Tagged:
    out = Tagged(text)
    if metadata_location:
        out.etag = etag(metadata_location, snapshots)
    return out


def table_result(metadata: TableMetadata, location: str | None, snapshots: str = "all") -> Tagged:
    """A LoadTableResult, serialized by PyIceberg's models, with its ETag. `snapshots` refs: only the snapshots
    a branch or tag names (the spec's lazy snapshot loading; the client asks for all when it needs them)."""
    if snapshots == "refs":
        named = {r.snapshot_id for r in metadata.refs.values()}
        metadata = metadata.model_copy(update={"snapshots": [s for s in metadata.snapshots if s.snapshot_id in named]})
    out = '{"metadata":' + metadata.model_dump_json()
    if location:
        out += ',"metadata-location":' + json.dumps(location)
    return tagged(out + ',"config":{}}', location, snapshots)


def page_size(value: str | None) -> int | None:
    """The spec's pageSize: a positive integer (None: not given)."""
    if value is None:
        return None
    v = value.strip()
    if not v.isdigit() or not v.isascii() or len(v) > MAX_PAGE_SIZE_DIGITS or int(v) < 1:
        raise bad_request(f"pageSize must be a positive integer, not {value[:40]!r}")
    return int(v)


def page_token(after: str) -> str:
    """An opaque token for the page after the name `after` (a page ends at a name, so a listing stays right
    while names are added and removed between its pages)."""
    return base64.urlsafe_b64encode(b"n:" + after.encode()).decode().rstrip("=")


def _page_start(token: str) -> str | None:
    """The name a page token continues after ('' token: from the first)."""
    if token == "":
        return None
    bad = bad_request("Invalid pageToken: not a token this server gave (use next-page-token as it was answered)")
    if len(token) > MAX_PAGE_TOKEN or not token.isascii():
        raise bad
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        after = raw.decode()
    except (binascii.Error, ValueError):
        raise bad from None
    if not after.startswith("n:") or len(after) < 3:
        raise bad
    return after[2:]


def paged(names: Sequence[str], token: str | None, size: int | None) -> tuple[list[str], str | None]:
    """One page of sorted names and the token of the next (None: the last page). Without a pageToken, every
    name in one answer, as the spec says."""
    names = sorted(names)
    if token is None:
        return list(names), None
    after = _page_start(token)
    start = 0 if after is None else next((i for i, n in enumerate(names) if n > after), len(names))
    size = size or DEFAULT_PAGE_SIZE
    page = list(names[start:start + size])
    more = start + size < len(names)
    return page, (page_token(page[-1]) if more and page else None)


def spec_updates(base: TableMetadata | None, ups: Sequence[TableUpdate]) -> tuple[TableUpdate, ...]:
    """The updates with the spec's semantics (those of Iceberg's Java TableMetadata.Builder, which the
    reference REST server applies) where PyIceberg's `update_table_metadata` fails instead: removing what the
    table does not have at that point of the commit is a no-op. remove-properties of a missing key (or of one
    key twice), remove-statistics and remove-partition-statistics of a snapshot without them, and the ids of
    remove-snapshots that name no snapshot are dropped."""
    props = set(base.properties) if base is not None else set()
    snapshots = {s.snapshot_id for s in base.snapshots} if base is not None else set()
    stats = {s.snapshot_id for s in base.statistics} if base is not None else set()
    part_stats = {s.snapshot_id for s in base.partition_statistics} if base is not None else set()
    out: list[TableUpdate] = []
    for u in ups:
        if isinstance(u, SetPropertiesUpdate):
            props.update(u.updates)
        elif isinstance(u, RemovePropertiesUpdate):
            present = [k for k in dict.fromkeys(u.removals) if k in props]
            props.difference_update(present)
            if present != u.removals:
                u = RemovePropertiesUpdate(removals=present)
        elif isinstance(u, AddSnapshotUpdate):
            snapshots.add(u.snapshot.snapshot_id)
        elif isinstance(u, RemoveSnapshotsUpdate):
            ids = [i for i in dict.fromkeys(u.snapshot_ids) if i in snapshots]
            if not ids:
                continue
            snapshots.difference_update(ids)
            stats.difference_update(ids)  # PyIceberg removes their statistics (not their partition statistics)
            if ids != u.snapshot_ids:
                u = u.model_copy(update={"snapshot_ids": ids})
        elif isinstance(u, SetStatisticsUpdate):
            stats.add(u.statistics.snapshot_id)
        elif isinstance(u, RemoveStatisticsUpdate):
            if u.snapshot_id not in stats:
                continue
            stats.discard(u.snapshot_id)
        elif isinstance(u, SetPartitionStatisticsUpdate):
            part_stats.add(u.partition_statistics.snapshot_id)
        elif isinstance(u, RemovePartitionStatisticsUpdate):
            if u.snapshot_id not in part_stats:
                continue
            part_stats.discard(u.snapshot_id)
        out.append(u)
    return tuple(out)


def metadata_problem(metadata: TableMetadata) -> str | None:
    """Why metadata a commit produced may not be written (it would not read back, or would be ambiguous to every
    reader), or None. PyIceberg applies updates without validating an existing table's result."""
    for what, ids in (("schema", [s.schema_id for s in metadata.schemas]),
                      ("partition spec", [s.spec_id for s in metadata.partition_specs]),
                      ("sort order", [o.order_id for o in metadata.sort_orders]),
                      ("snapshot", [s.snapshot_id for s in metadata.snapshots])):
        seen: set[int] = set()
        for i in ids:
            if i in seen:
                return f"two {what}s with id {i}"
            seen.add(i)
    for ref, r in metadata.refs.items():
        if metadata.snapshot_by_id(r.snapshot_id) is None:
            return f"ref {ref!r} names the unknown snapshot {r.snapshot_id}"
    main = metadata.refs.get(MAIN_BRANCH)
    if main is not None and main.snapshot_ref_type != SnapshotRefType.BRANCH:
        return f"{MAIN_BRANCH} must be a branch, not a tag"  # as Iceberg's Java builder checks
    if metadata.format_version > SUPPORTED_TABLE_FORMAT_VERSION:
        return f"format version {metadata.format_version} is not supported (at most {SUPPORTED_TABLE_FORMAT_VERSION})"
    # what Iceberg's Java readers refuse, so that every engine can load what was written
    for order in metadata.sort_orders:
        if bool(order.fields) == (order.order_id == 0):
            return (f"sort order {order.order_id}: id 0 is the unsorted order's, and only an order without fields "
                    f"has it")
    transforms = [f.transform for spec in metadata.partition_specs for f in spec.fields]
    transforms += [f.transform for order in metadata.sort_orders for f in order.fields]
    for t in transforms:
        if (isinstance(t, BucketTransform) and t.num_buckets < 1) or (isinstance(t, TruncateTransform)
                                                                     and t.width < 1):
            return f"transform {t} needs a positive number"
    raw = metadata.model_dump_json()
    if len(raw) > MAX_METADATA_BYTES:
        return f"the table metadata would be larger than {MAX_METADATA_BYTES} bytes"
    try:
        TableMetadataUtil.parse_raw(raw)
    except Exception as e:  # noqa: BLE001 - any failure to read it back refuses the commit
        return f"the result is not valid table metadata ({_short(e)})"
    return None


def _short(e: BaseException) -> str:
    text = str(e) if not isinstance(e, PydanticError) else _pydantic_message(e)
    return f"{e.__class__.__name__}: {text[:500]}"


def _catalog_error(e: CatalogError) -> RestError:
    refused = access_error(e)  # 403/401 before the generic MetaException mapping below
    if refused is not None:
        return refused
    if isinstance(e, (InvalidObject, InvalidOperation)):
        return bad_request(e.message)
    return RestError(500, "ServiceFailureException", e.message)


class IcebergCatalog:
    """The REST catalog's operations; each returns a JSON-able value (or serialized JSON) and raises RestError."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        # the last metrics reports, summarized (what a client sent is not kept whole: bounded in number and size)
        self.metrics: collections.deque[dict[str, object]] = collections.deque(maxlen=METRICS_RING)

    # ---- namespaces ---------------------------------------------------------------------------------

    def _database(self, db: str) -> m.Database:
        try:
            return self.catalog.get_database(db)
        except NoSuchObject:
            raise no_such_namespace(db) from None

    def list_namespaces(self, parent: str | None, token: str | None = None, size: str | None = None) -> JsonObject:
        n = page_size(size)
        if parent:
            self._database(database_of(parent))
            names: list[str] = []  # one level: a database has no child namespaces
        else:
            names = self.catalog.get_databases()
        page, next_token = paged(names, token, n)
        return {"namespaces": [[d] for d in page], "next-page-token": next_token}

    def create_namespace(self, body: JsonValue) -> JsonObject:
        body = _obj(body, "CreateNamespaceRequest")
        db = database_of(body.get("namespace"))
        props = body.get("properties") or {}
        if not _str_dict(props):
            raise bad_request("properties: a JSON object of strings")
        params = {k: v for k, v in props.items() if k not in (LOCATION, COMMENT)}
        try:
            self.catalog.create_database(m.Database(name=db, description=props.get(COMMENT),
                                                    locationUri=props.get(LOCATION), parameters=params))
        except AlreadyExists:
            raise RestError(409, "AlreadyExistsException", f"Namespace already exists: {db}") from None
        except CatalogError as e:
            raise _catalog_error(e) from None
        return {"namespace": [db], "properties": self._namespace_properties(self._database(db))}

    @staticmethod
    def _namespace_properties(d: m.Database) -> dict[str, str]:
        props = dict(d.parameters or {})
        if d.locationUri:
            props[LOCATION] = d.locationUri
        if d.description:
            props[COMMENT] = d.description
        return props

    def load_namespace(self, ns: str) -> JsonObject:
        db = database_of(ns)
        return {"namespace": [db], "properties": self._namespace_properties(self._database(db))}

    def namespace_exists(self, ns: str) -> None:
        self._database(database_of(ns))

    def drop_namespace(self, ns: str) -> None:
        db = database_of(ns)
        try:
            self.catalog.drop_database(db, delete_data=False, cascade=False)
        except NoSuchObject:
            raise no_such_namespace(db) from None
        except InvalidOperation as e:
            raise RestError(409, "NamespaceNotEmptyException", e.message) from None
        except CatalogError as e:
            raise _catalog_error(e) from None

    def update_namespace_properties(self, ns: str, body: JsonValue) -> JsonObject:
        db = database_of(ns)
        body = _obj(body, "UpdateNamespacePropertiesRequest")
        removals, updates = body.get("removals") or [], body.get("updates") or {}
        if not _str_list(removals):
            raise bad_request("removals: a list of strings")
        if not _str_dict(updates):
            raise bad_request("updates: a JSON object of strings")
        overlap = set(removals) & set(updates)
        if overlap:
            raise RestError(422, "UnprocessableEntityException",
                            f"Updates and removals have an overlap: {sorted(overlap)}")
        fixed = ({LOCATION, COMMENT} & (set(removals) | set(updates)))
        if fixed:
            raise bad_request(f"Namespace properties {sorted(fixed)} cannot be changed: they are the Hive database's "
                              f"location and description")
        d = self._database(db)
        params = dict(d.parameters or {})
        removed = [k for k in removals if k in params]
        missing = [k for k in removals if k not in params]
        for k in removed:
            del params[k]
        params.update(updates)
        try:
            self.catalog.alter_database(db, replace(d, parameters=params))
        except NoSuchObject:
            raise no_such_namespace(db) from None
        return {"removed": removed, "updated": list(updates), "missing": missing}

    # ---- tables -------------------------------------------------------------------------------------

    def _iceberg_table(self, db: str, name: str) -> m.Table:
        try:
            t = self.catalog.get_table(db, name)
        except NoSuchObject:
            raise no_such_table(f"{db}.{name}") from None
        if t.parameters.get(TABLE_TYPE, "").upper() != ICEBERG:
            raise no_such_table(f"{db}.{name}", "not an Iceberg table")
        return t

    def _load(self, db: str, name: str) -> Loaded:
        t = self._iceberg_table(db, name)
        location = t.parameters.get(METADATA_LOCATION)
        if not location:
            raise no_such_table(f"{db}.{name}", f"the table has no {METADATA_LOCATION}")
        # metadata_location may have been set through Thrift to any path: read only where the policy allows
        real = self._readable(location)
        if real is None:
            raise forbidden(f"The metadata location of {db}.{name} is outside the locations this server may read")
        try:
            metadata = read_metadata_file(real, location)
        except (_Missing, _NotMetadata):
            raise RestError(500, "ServiceFailureException", f"Cannot read the metadata of {db}.{name} at "
                                                            f"{location}: missing or not table metadata") from None
        return Loaded(t, metadata, location)

    # ---- the location policy on this front ----------------------------------------------------------

    def _readable(self, location: str) -> str | None:
        """The real local path of a metadata location the policy lets the server read, else None."""
        if not self.catalog.locations.may_read(location):
            return None
        path = local_path(location)
        return os.path.realpath(path) if path else None

    def _writable_table_location(self, location: str, what: str, exclude: tuple[str, str] | None = None,
                                 check_free: bool = True) -> str:
        """A table location under which the server may write metadata files: normalized, owned by the server
        (under its allowed roots) and, with `check_free`, no other database's, table's or partition's directory
        (nor inside a managed table's; `exclude`: the table itself). Kept as the client spelled it when that
        is already normal."""
        try:
            norm = normalize(location, what)
        except InvalidObject as e:
            raise bad_request(e.message) from None
        if not self.catalog.locations.owns(norm):
            raise forbidden(f"{what} {location!r} is outside the locations this server may write to")
        if check_free:
            self._check_free(norm, what, exclude)
        location = location.rstrip("/")
        return location if local_path(location) == local_path(norm) else norm

    def _check_free(self, location: str, what: str, exclude: tuple[str, str] | None) -> None:
        try:
            self.catalog.check_location_free(location, exclude)
        except InvalidObject as e:
            raise forbidden(f"{what}: {e.message}") from None

    def _metadata_file(self, table_location: str, version: int, what: str) -> str:
        """The next metadata file of a table, named by the server under the table's own location (a table's
        location-provider and write.metadata.path properties are never used here)."""
        location = f"{table_location.rstrip('/')}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"
        if not self.catalog.locations.owns(location):  # metadata/ a link to elsewhere
            raise forbidden(f"{what}: the metadata directory of {table_location!r} is outside the locations this "
                            f"server may write to")
        return location

    def _metadata_dir(self, table_location: str, what: str) -> None:
        """Make the metadata directory of a table location the server owns."""
        location = f"{table_location.rstrip('/')}/metadata"
        if not self.catalog.locations.owns(location):  # metadata/ a link to elsewhere
            raise forbidden(f"{what}: the metadata directory of {table_location!r} is outside the locations this "
                            f"server may write to")
        try:
            self.catalog.wh.mkdirs(location)
        except OSError as e:
            raise bad_request(f"{what}: cannot make the directory {location!r} ({e.__class__.__name__})") from None

    def _table_dirs(self, exclude: tuple[str, str] | None = None) -> Iterator[tuple[str, str, str]]:
        """(db, table, real local path) of every table's location in the store (purges and registrations
        only: they are rare, and must see every table whose files they could reach)."""
        for db in self.catalog.get_databases():
            try:
                tables = self.catalog.get_tables_by_names(db, self.catalog.get_tables(db))
            except NoSuchObject:
                continue
            for t in tables:
                if (db, t.tableName) == exclude or t.sd is None:
                    continue
                path = local_path(t.sd.location)
                if path:
                    yield db, t.tableName, os.path.realpath(path)

    def _overlapping(self, real: str, exclude: tuple[str, str] | None = None) -> list[tuple[str, str, str]]:
        """The tables whose locations contain, equal or lie inside a real local path."""
        return [(d, t, p) for d, t, p in self._table_dirs(exclude) if is_under(p, real) or is_under(real, p)]

    def list_tables(self, ns: str, token: str | None = None, size: str | None = None) -> JsonObject:
        db = database_of(ns)
        n = page_size(size)
        if token is not None:
            _page_start(token)  # a bad token is refused before the store is read
        self._database(db)
        tables = self.catalog.get_tables_by_names(db, self.catalog.get_tables(db))
        page, next_token = paged([t.tableName for t in tables if t.parameters.get(TABLE_TYPE, "").upper() == ICEBERG],
                                 token, n)
        return {"identifiers": [{"namespace": [db], "name": t} for t in page], "next-page-token": next_token}

    def load_table(self, ns: str, name: str, snapshots: str | None = None, if_none_match: str | None = None
                   ) -> Tagged | None:
        """The table's LoadTableResult, or None when `if_none_match` names its current ETag (304: the client
        has this metadata; the file is not read)."""
        if snapshots is not None and snapshots not in ("all", "refs"):
            raise bad_request(f"snapshots must be all or refs, not {snapshots[:40]!r}")
        db, name, mode = database_of(ns), name.lower(), snapshots or "all"
        if if_none_match:
            location = self._iceberg_table(db, name).parameters.get(METADATA_LOCATION)
            if (location and self._readable(location) is not None
                    and etag_matches(if_none_match, etag(location, mode))):
                return None
        got = self._load(db, name)
        return table_result(got.metadata, got.location, mode)

    def table_exists(self, ns: str, name: str) -> None:
        self._iceberg_table(database_of(ns), name.lower())

    @staticmethod
    def _table_name(name: str) -> str:
        # checked before any file is written: a name is a path segment of the default location
        if not valid_name(name):
            raise bad_request(f"Invalid table name {name!r}: letters, digits and underscores, at most 128")
        return name.lower()

    def create_table(self, ns: str, body: JsonValue) -> str:
        from pyiceberg.catalog.rest import CreateTableRequest

        db = database_of(ns)
        try:
            # optional in the spec, required (nullable) in PyIceberg's model
            req = CreateTableRequest.model_validate({"location": None, "partition-spec": None, "write-order": None,
                                                     **_obj(body, "CreateTableRequest")})
        except PydanticError as e:
            raise bad_request(f"Invalid CreateTableRequest: {_pydantic_message(e)}") from None
        except Exception as e:  # noqa: BLE001 - PyIceberg's validators fail on some shapes by other errors
            raise bad_request(f"Invalid CreateTableRequest: {_short(e)}") from None
        name = self._table_name(req.name)
        check_properties(req.properties, f"Cannot create {db}.{name}")
        d = self._database(db)
        if self._exists(db, name):
            raise already_exists(f"Table already exists: {db}.{name}")
        location = (req.location or (d.locationUri or self.catalog.wh.database_location(db)).rstrip("/") + "/" + name)
        location = self._writable_table_location(location, f"Cannot create {db}.{name}: table location")
        props = {**DEFAULT_TABLE_PROPERTIES, **req.properties}
        try:
            metadata = new_table_metadata(schema=req.table_schema,
                                          partition_spec=req.partition_spec or UNPARTITIONED_PARTITION_SPEC,
                                          sort_order=req.write_order or UNSORTED_SORT_ORDER,
                                          location=location, properties=props)
        except (ValueError, IcebergValidationError) as e:
            raise bad_request(f"Invalid table: {e}") from None
        except Exception as e:  # noqa: BLE001 - the client's schema, spec, order or properties do not make a table
            raise bad_request(f"Invalid table: {_short(e)}") from None
        problem = metadata_problem(metadata)
        if problem:
            raise bad_request(f"Invalid table: {problem}")
        if req.stage_create:  # the client commits the table with assert-create later
            # an engine writes the first manifests under metadata/ before it commits (DuckDB's CREATE TABLE AS
            # SELECT): the directory is made now, under the location checked above; no metadata file is written
            self._metadata_dir(location, f"Cannot stage {db}.{name}")
            return table_result(metadata, None)
        metadata_location = self._metadata_file(location, 0, f"Cannot create {db}.{name}")
        made = write_metadata(metadata, metadata_location)
        try:
            self.catalog.create_table(hive_table(db, name, metadata, metadata_location))
        except AlreadyExists:
            self._discard(metadata_location, made)
            raise already_exists(f"Table already exists: {db}.{name}") from None
        except CatalogError as e:
            self._discard(metadata_location, made)
            raise _catalog_error(e) from None
        except BaseException:
            self._discard(metadata_location, made)
            raise
        return table_result(metadata, metadata_location)

    def _exists(self, db: str, name: str) -> bool:
        try:
            self.catalog.get_table(db, name)
            return True
        except NoSuchObject:
            return False

    @staticmethod
    def _discard(location: str, made: Sequence[str] = ()) -> None:
        """Remove a metadata file this server wrote for a change that did not commit (nothing points to it),
        and the directories it created for it, if still empty."""
        path = local_path(location)
        if path is None:
            return
        remove_quietly(os.unlink, path, f"the unused metadata file {location}")
        for d in made:
            try:
                os.rmdir(d)
            except OSError:
                break

    def register_table(self, ns: str, body: JsonValue) -> str:
        db = database_of(ns)
        body = _obj(body, "RegisterTableRequest")
        name, location, overwrite = body.get("name"), body.get("metadata-location"), body.get("overwrite", False)
        if not isinstance(name, str) or not name or not isinstance(location, str) or not location:
            raise bad_request("RegisterTableRequest needs a name and a metadata-location")
        if not isinstance(overwrite, bool):
            raise bad_request("overwrite: a boolean")
        name = self._table_name(name)
        self._database(db)
        # outside the places the server may read, one answer whether or not a file is there
        real = self._readable(location)
        if real is None:
            raise forbidden(f"Cannot register {db}.{name}: metadata location {location!r} is outside the locations "
                            f"this server may read")
        try:
            metadata = read_metadata_file(real, location)
        except _Missing:
            raise bad_request(f"Cannot register {db}.{name}: no metadata file at {location}") from None
        except _NotMetadata:
            raise bad_request(f"Cannot register {db}.{name}: {location} is not a table metadata file") from None
        check_properties(metadata.properties, f"Cannot register {db}.{name}")
        exists = self._exists(db, name)
        if exists and not overwrite:
            raise already_exists(f"Table already exists: {db}.{name}")
        self._check_registered_location(db, name, metadata, real, overwrite)
        if overwrite and exists:
            got = self._load(db, name)
            new = hive_table(db, name, metadata, location, got.table, got.location, got.metadata)
            self._swap([(db, name, new, got.location)])
            return table_result(metadata, location)
        try:
            self.catalog.create_table(hive_table(db, name, metadata, location))
        except AlreadyExists:
            raise already_exists(f"Table already exists: {db}.{name}") from None
        except CatalogError as e:
            raise _catalog_error(e) from None
        return table_result(metadata, location)

    def _check_registered_location(self, db: str, name: str, metadata: TableMetadata, real: str,
                                   overwrite: bool) -> None:
        """A registered table is a table of its own: its metadata file lies under its location, and that
        location is no other table's (else a purge of it would reach the other table's files)."""
        what = f"Cannot register {db}.{name}"
        try:
            table_path = local_path(normalize(metadata.location, "table location"))
        except InvalidObject as e:
            raise bad_request(f"{what}: {e.message}") from None
        if not table_path or not is_under(real, own := os.path.realpath(table_path)):
            raise forbidden(f"{what}: the metadata file is not under its table's location {metadata.location!r}")
        others = self._overlapping(own, exclude=(db, name) if overwrite else None)
        if others:
            d, t, _ = others[0]
            raise forbidden(f"{what}: its location {metadata.location!r} overlaps the location of table {d}.{t}; "
                            f"a table may not be registered on another table's files")
        # databases and partitions too (a database's directory as a table's: DROP DATABASE would keep it)
        if self.catalog.locations.owns(table_path):
            self._check_free(table_path, what, (db, name) if overwrite else None)

    def drop_table(self, ns: str, name: str, purge: bool) -> None:
        db, name = database_of(ns), name.lower()
        if not purge:  # nothing is read: a table whose metadata cannot be read can still be dropped
            self._iceberg_table(db, name)
            got, own = None, None
        else:
            got = self._load(db, name)
            own = self._purge_root(db, name, got.metadata)
        try:
            self.catalog.drop_table(db, name, delete_data=False)
        except NoSuchObject:
            raise no_such_table(f"{db}.{name}") from None
        if got is not None and own is not None:
            self._purge(got, own)

    def _purge_root(self, db: str, name: str, metadata: TableMetadata) -> str:
        """The real path of the table's location, which a purge may delete under: refused (before the drop)
        unless the server owns it."""
        try:
            path = local_path(normalize(metadata.location, "table location"))
        except InvalidObject:
            path = None
        if path is None or not self.catalog.locations.owns(path):
            raise forbidden(f"Cannot purge {db}.{name}: its location {metadata.location!r} is outside the locations "
                            f"this server may delete in; drop it without purgeRequested")
        return os.path.realpath(path)

    def _purge(self, got: Loaded, own: str) -> None:
        """Delete the dropped table's files: data, manifests, manifest lists, metadata files (as Iceberg's
        catalogs purge: what the table's metadata reaches), but only those under the table's own location,
        under no other table's location (a table registered on another's files, or a Hive table inside this
        one), and owned by the server. Manifests are read only from there too."""
        others = [p for _d, _t, p in self._overlapping(own)]
        policy = self.catalog.locations

        def mine(location: str) -> str | None:
            path = local_path(location)
            if path is None:
                return None
            real = os.path.realpath(path)
            if real == own or not is_under(real, own) or any(is_under(real, p) for p in others):
                return None
            return real if policy.owns(real) else None

        io = _ConfinedIO(mine)
        files: dict[str, None] = {}  # ordered: data, manifests, manifest lists, metadata
        manifests = []
        for snapshot in got.metadata.snapshots:
            try:
                manifests += snapshot.manifests(io)
            except Exception as e:  # noqa: BLE001 - a bad file only keeps its references alive
                log.warning("purge of %s: manifest list %s not read (%s)", got.location, snapshot.manifest_list,
                            e.__class__.__name__)
        for mf in manifests:
            try:
                files.update((e.data_file.file_path, None) for e in mf.fetch_manifest_entry(io, discard_deleted=False))
            except Exception as e:  # noqa: BLE001
                log.warning("purge of %s: manifest %s not read (%s)", got.location, mf.manifest_path,
                            e.__class__.__name__)
        files.update((mf.manifest_path, None) for mf in manifests)
        files.update((s.manifest_list, None) for s in got.metadata.snapshots)
        files.update((e.metadata_file, None) for e in got.metadata.metadata_log)
        files[got.location] = None
        kept = 0
        for location in files:
            real = mine(location)
            if real is None:
                kept += 1
                continue
            try:
                if os.path.isfile(real) and not os.path.islink(real):
                    os.unlink(real)
            except OSError as e:
                log.warning("purge of %s: cannot delete %s: %s", got.location, real, e.__class__.__name__)
        if kept:
            log.info("purge of %s: %d files outside the table's own location kept", got.location, kept)

    def rename_table(self, body: JsonValue) -> None:
        body = _obj(body, "RenameTableRequest")
        src, dst = body.get("source"), body.get("destination")
        if not isinstance(src, dict) or not isinstance(dst, dict):
            raise bad_request("RenameTableRequest needs source and destination identifiers")
        sdb, sname = database_of(src.get("namespace")), src.get("name")
        ddb, dname = database_of(dst.get("namespace")), dst.get("name")
        if not isinstance(sname, str) or not isinstance(dname, str) or not sname or not dname:
            raise bad_request("source and destination need a name")
        sname, dname = sname.lower(), self._table_name(dname)
        table = self._iceberg_table(sdb, sname)
        self._database(ddb)
        if self._exists(ddb, dname):
            raise already_exists(f"Table already exists: {ddb}.{dname}")
        try:
            self.catalog.alter_table(sdb, sname, replace(table, dbName=ddb, tableName=dname),
                                     env={"DO_NOT_UPDATE_STATS": "true"})
        except CatalogError as e:
            if self._exists(ddb, dname):
                raise already_exists(f"Table already exists: {ddb}.{dname}") from None
            if not self._exists(sdb, sname):
                raise no_such_table(f"{sdb}.{sname}") from None
            raise _catalog_error(e) from None

    # ---- metrics reports -----------------------------------------------------------------------------

    def report_metrics(self, ns: str, name: str, body: JsonValue) -> None:
        """A ScanReport or CommitReport (the spec's ReportMetricsRequest) for an Iceberg table: checked for its
        shape, then kept as a summary in a bounded ring and logged (the audit log has the call)."""
        db, name = database_of(ns), name.lower()
        report = _obj(body, "ReportMetricsRequest")
        kind = report.get("report-type")
        fields = _REPORT_FIELDS.get(kind) if isinstance(kind, str) else None
        if fields is None:
            raise bad_request("ReportMetricsRequest: report-type must be scan-report or commit-report")
        for key, check, shape in fields:
            if key not in report:
                raise bad_request(f"ReportMetricsRequest ({kind}): {key} is required")
            if not check(report[key]):
                raise bad_request(f"ReportMetricsRequest ({kind}): {key} must be {shape}")
        metrics = report["metrics"]
        if not all(isinstance(v, dict) for v in metrics.values()):
            raise bad_request(f"ReportMetricsRequest ({kind}): every metric must be an object (a counter or timer)")
        extra = report.get("metadata")
        if extra is not None and not _str_dict(extra):
            raise bad_request(f"ReportMetricsRequest ({kind}): metadata must be an object of strings")
        self._iceberg_table(db, name)
        summary: dict[str, object] = {"time": time.time(), "table": f"{db}.{name}", "report-type": kind,
                                      "table-name": report["table-name"][:MAX_REPORTED_NAME],
                                      "snapshot-id": report["snapshot-id"], "metrics": len(metrics)}
        if kind == "commit-report":
            summary["operation"] = report["operation"][:MAX_REPORTED_NAME]
            summary["sequence-number"] = report["sequence-number"]
        self.metrics.append(summary)
        log.debug("metrics report: %s", summary)

    # ---- commits ------------------------------------------------------------------------------------

    @staticmethod
    def _parse_changes(body: dict[str, Any]) -> tuple[list[TableRequirement], list[TableUpdate]]:
        reqs, ups = body.get("requirements", []), body.get("updates", [])
        if not isinstance(reqs, list) or not isinstance(ups, list):
            raise bad_request("requirements and updates: JSON lists")
        huge = _outside_long(ups) or _outside_long(reqs)
        if huge is not None:  # ids, sizes and times are 64-bit in every engine's reader
            raise bad_request(f"Invalid CommitTableRequest: the number {str(huge)[:40]} is outside 64-bit integers")
        try:
            return _REQUIREMENTS.validate_python(reqs), _UPDATES.validate_python(ups)
        except PydanticError as e:
            raise bad_request(f"Invalid CommitTableRequest: {_pydantic_message(e)}") from None
        except Exception as e:  # noqa: BLE001 - PyIceberg's validators fail on some shapes by other errors
            raise bad_request(f"Invalid CommitTableRequest: {_short(e)}") from None

    def _stage(self, db: str, name: str, reqs: Sequence[TableRequirement], ups: Sequence[TableUpdate]) -> Staged:
        """Validate the requirements against the current metadata, apply the updates and write the new
        metadata file: everything but the swap in the store."""
        for u in ups:
            if isinstance(u, SetPropertiesUpdate):
                check_properties(u.updates, f"Cannot commit to {db}.{name}")
        try:
            got: Loaded | None = self._load(db, name)
        except RestError as e:
            if e.code != 404 or not any(isinstance(r, AssertCreate) for r in reqs) or self._exists(db, name):
                raise
            self._database(db)
            self._table_name(name)
            got = None
        base = got.metadata if got else None
        try:
            for r in reqs:
                r.validate(base)
        except CommitFailedException as e:
            raise commit_failed(f"Requirement failed for {db}.{name}: {e}") from None
        except Exception as e:  # noqa: BLE001 - a requirement the client made up that cannot be checked
            raise bad_request(f"Invalid requirement for {db}.{name}: {_short(e)}") from None
        try:
            new = update_table_metadata(base if base is not None else
                                        TableMetadataV1.model_construct(last_column_id=-1, schema=Schema()),
                                        spec_updates(base, ups), enforce_validation=base is None,
                                        metadata_location=got.location if got else None)
        except CommitFailedException as e:
            raise commit_failed(f"Cannot apply the updates to {db}.{name}: {e}") from None
        except (ValueError, IcebergValidationError, PydanticError) as e:
            raise bad_request(f"Cannot apply the updates to {db}.{name}: {e}") from None
        except Exception as e:  # noqa: BLE001 - updates PyIceberg fails on other than by ValueError: the client's
            log.debug("updates to %s.%s refused", db, name, exc_info=True)
            raise bad_request(f"Cannot apply the updates to {db}.{name}: {_short(e)}") from None
        if got is not None and new == got.metadata:
            return Staged(db, name, got.table, got.location, got.metadata, got.metadata, got.location, changed=False)
        problem = metadata_problem(new)
        if problem:
            raise bad_request(f"Cannot apply the updates to {db}.{name}: {problem}")
        version = _metadata_version(got.location) + 1 if got else 0
        what = f"Cannot commit to {db}.{name}"
        # a new table, or a new location (set-location), must not be another object's directory
        table_location = self._writable_table_location(
            new.location, f"{what}: table location", (db, name),
            check_free=base is None or base.location.rstrip("/") != new.location.rstrip("/"))
        if table_location != new.location:
            new = new.model_copy(update={"location": table_location})
        location = self._metadata_file(table_location, version, what)
        made = write_metadata(new, location)
        return Staged(db, name, got.table if got else None, got.location if got else None, base, new, location,
                      changed=True, made=made)

    @contextmanager
    def _table_locks(self, tables: Sequence[tuple[str, str]]) -> Iterator[None]:
        """Hold Hive's exclusive lock on the tables for the swap.

        Writers on the lock path (PyIceberg's and Iceberg's HiveCatalog) read, check and alter the table under
        this lock without a compare-and-swap; taking it here too means such a writer never overwrites a REST
        commit made between its read and its alter_table, and a REST swap waits for a lock-path commit to end
        (then its compare-and-swap sees that commit). A lock held longer than LOCK_WAIT: 409, retry later.
        """
        comps = [Component(type=EXCLUSIVE, level=TABLE, db=db, table=name) for db, name in sorted(set(tables))]
        lockid, state = self.catalog.locks.lock(comps, None, user="iceberg-rest", host=_HOST,
                                                agent_info="metastore Iceberg REST commit", own=True)
        try:
            deadline, delay = time.monotonic() + LOCK_WAIT, 0.002
            while state != ACQUIRED:
                if time.monotonic() > deadline:
                    raise commit_failed(f"Commit conflict: {', '.join(f'{d}.{t}' for d, t in tables)} locked by "
                                        f"another writer for more than {LOCK_WAIT:.0f} s")
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
                _, state = self.catalog.locks.check_lock(lockid)
            yield
        finally:
            self.catalog.locks.unlock(lockid)

    def _swap(self, swaps: Sequence[tuple[str, str, m.Table, str]]) -> None:
        """Swap metadata_location of every table in one store transaction, each against its expected value."""
        changes = [(db, name, new, {"expected_parameter_key": METADATA_LOCATION, "expected_parameter_value": old,
                                    "DO_NOT_UPDATE_STATS": "true"}) for db, name, new, old in swaps]
        try:
            with self._table_locks([(db, name) for db, name, _n, _o in swaps]):
                if len(changes) == 1:
                    self.catalog.alter_table(*changes[0][:3], env=changes[0][3])
                else:
                    self.catalog.alter_tables_cas(changes)
        except TableModified as e:
            raise commit_failed(f"Commit conflict: {e.message}") from None
        except MetaError as e:
            raise _catalog_error(e) from None
        except InvalidOperation as e:  # the table was dropped or renamed meanwhile
            raise commit_failed(f"Commit conflict: {e.message}") from None

    def _apply(self, staged: Sequence[Staged]) -> None:
        swaps = []
        for s in staged:
            if not s.changed:
                continue
            assert s.old is not None and s.old_location is not None
            swaps.append((s.db, s.name, hive_table(s.db, s.name, s.metadata, s.location, s.old, s.old_location,
                                                   s.old_metadata), s.old_location))
        if swaps:
            self._swap(swaps)

    def commit_table(self, ns: str, name: str, body: JsonValue) -> Tagged:
        db, name = database_of(ns), name.lower()
        body = _obj(body, "CommitTableRequest")
        ident = body.get("identifier")
        if ident is not None and (not isinstance(ident, dict) or database_of(ident.get("namespace")) != db or
                                  str(ident.get("name", "")).lower() != name):
            raise bad_request("The identifier in the body does not name the table of the path")
        reqs, ups = self._parse_changes(body)
        s = self._stage(db, name, reqs, ups)
        try:
            if s.old is None:  # assert-create: the commit of a staged create
                try:
                    self.catalog.create_table(hive_table(db, name, s.metadata, s.location))
                except AlreadyExists:
                    raise commit_failed(f"Table already exists: {db}.{name}") from None
                except CatalogError as e:
                    raise _catalog_error(e) from None
            else:
                self._apply([s])
        except BaseException:
            if s.changed:
                self._discard(s.location, s.made)
            raise
        return tagged('{"metadata-location":' + json.dumps(s.location) + ',"metadata":' + s.metadata.model_dump_json()
                      + "}", s.location)

    def commit_transaction(self, body: JsonValue) -> None:
        """Several tables' commits: every requirement is checked and every table swapped in one store
        transaction, or nothing changes."""
        body = _obj(body, "CommitTransactionRequest")
        changes = body.get("table-changes")
        if not isinstance(changes, list) or not changes:
            raise bad_request("CommitTransactionRequest needs a non-empty list table-changes")
        parsed = []
        seen = set()
        for c in changes:
            c = _obj(c, "table-changes entry")
            ident = c.get("identifier")
            table = ident.get("name") if isinstance(ident, dict) else None
            if not isinstance(ident, dict) or not isinstance(table, str):
                raise bad_request("Every table change of a transaction needs an identifier")
            key = (database_of(ident.get("namespace")), table.lower())
            if key in seen:
                raise bad_request(f"Table {key[0]}.{key[1]} appears twice in the transaction")
            seen.add(key)
            reqs, ups = self._parse_changes(c)
            if any(isinstance(r, AssertCreate) for r in reqs):
                raise bad_request("assert-create is not supported in a multi-table transaction")
            parsed.append((key, reqs, ups))
        staged: list[Staged] = []
        try:
            for (db, name), reqs, ups in parsed:
                staged.append(self._stage(db, name, reqs, ups))
            self._apply(staged)
        except BaseException:
            for s in staged:
                if s.changed:
                    self._discard(s.location, s.made)
            raise


def _outside_long(value: object) -> int | None:
    """An integer anywhere in a JSON value that a 64-bit long cannot hold, or None."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, int) and not isinstance(v, bool) and not -(2 ** 63) <= v < 2 ** 63:
            return v
    return None


def _int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -(2 ** 63) <= v < 2 ** 63


def _any(v: object) -> bool:
    return v is not None


_COMMON_FIELDS: list[tuple[str, Callable[[object], bool], str]] = [
    ("table-name", lambda v: isinstance(v, str), "a string"),
    ("snapshot-id", _int, "a 64-bit integer"),
    ("metrics", lambda v: isinstance(v, dict), "an object"),
]
_REPORT_FIELDS: dict[str, list[tuple[str, Callable[[object], bool], str]]] = {
    "scan-report": _COMMON_FIELDS + [
        ("filter", _any, "an expression"),
        ("schema-id", _int, "an integer"),
        ("projected-field-ids", lambda v: isinstance(v, list) and all(_int(x) for x in v), "a list of integers"),
        ("projected-field-names", _str_list, "a list of strings"),
    ],
    "commit-report": _COMMON_FIELDS + [
        ("sequence-number", _int, "a 64-bit integer"),
        ("operation", lambda v: isinstance(v, str), "a string"),
    ],
}


def _metadata_version(location: str) -> int:
    from pyiceberg.catalog import MetastoreCatalog

    return MetastoreCatalog._parse_metadata_version(location)
