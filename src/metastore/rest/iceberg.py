"""The Iceberg REST catalog's operations over the catalog service.

Namespaces are Hive databases (one level). An Iceberg table is a Hive EXTERNAL_TABLE whose parameters carry
table_type=ICEBERG, metadata_location and previous_metadata_location: what PyIceberg's HiveCatalog (and
Iceberg's Java HiveCatalog) write, so a table crosses freely between the Thrift and REST protocols.

Table metadata is PyIceberg's: its models parse and serialize the metadata files and requests, its
requirement classes validate, `update_table_metadata` applies updates, its FileIO writes the files. A commit
writes the next metadata file beside the current one, then swaps metadata_location in the store with a
compare-and-swap against the location it started from, so a concurrent commit (through either protocol)
makes it fail with 409 instead of being lost. A multi-table commit swaps every table in one store transaction.
The swap holds Hive's table lock, so commits through the lock path (HiveCatalog) and through REST interleave
safely on one table.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticError

from pyiceberg.catalog import delete_data_files, delete_files
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.exceptions import ValidationError as IcebergValidationError
from pyiceberg.io import load_file_io
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema, visit
from pyiceberg.serializers import FromInputFile, ToOutputFile
from pyiceberg.table import TableProperties
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata, TableMetadataV1, new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import AssertCreate, TableRequirement, TableUpdate, update_table_metadata

from ..catalog import model as m
from ..catalog.errors import AlreadyExists, CatalogError, InvalidObject, InvalidOperation, MetaError, NoSuchObject
from ..catalog.locks import ACQUIRED, EXCLUSIVE, TABLE, Component
from ..catalog.service import Catalog
from .errors import RestError, already_exists, bad_request, commit_failed, no_such_namespace, no_such_table

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
# the message of the catalog's compare-and-swap refusal (Hive's own wording, a MetaException on Thrift)
TABLE_MODIFIED = "The table has been modified"
LOCK_WAIT = 60.0  # seconds a commit waits for Hive's table lock held by a lock-path writer
_HOST = socket.gethostname()

_REQUIREMENTS: TypeAdapter[list[TableRequirement]] = TypeAdapter(list[TableRequirement])
_UPDATES: TypeAdapter[list[TableUpdate]] = TypeAdapter(list[TableUpdate])


def _pydantic_message(e: PydanticError) -> str:
    parts = []
    for err in e.errors()[:5]:
        where = ".".join(str(x) for x in err.get("loc", ()))
        parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
    return "; ".join(parts)


def _obj(body: Any, what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad_request(f"{what}: the request body must be a JSON object")
    return body


def database_of(namespace: Any) -> str:
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
    return namespace[0].lower()


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


def read_metadata(location: str) -> TableMetadata:
    return FromInputFile.table_metadata(load_file_io({}, location).new_input(location))


def write_metadata(metadata: TableMetadata, location: str) -> None:
    ToOutputFile.table_metadata(metadata, load_file_io(metadata.properties, location).new_output(location))


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


def table_result(metadata: TableMetadata, location: str | None) -> str:
    """A LoadTableResult, serialized by PyIceberg's models."""
    out = '{"metadata":' + metadata.model_dump_json()
    if location:
        out += ',"metadata-location":' + json.dumps(location)
    return out + ',"config":{}}'


def _catalog_error(e: CatalogError) -> RestError:
    if isinstance(e, (InvalidObject, InvalidOperation)):
        return bad_request(e.message)
    return RestError(500, "ServiceFailureException", e.message)


class IcebergCatalog:
    """The REST catalog's operations; each returns a JSON-able value (or serialized JSON) and raises RestError."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    # ---- namespaces ---------------------------------------------------------------------------------

    def _database(self, db: str) -> m.Database:
        try:
            return self.catalog.get_database(db)
        except NoSuchObject:
            raise no_such_namespace(db) from None

    def list_namespaces(self, parent: str | None) -> dict[str, Any]:
        if parent:
            self._database(database_of(parent))
            return {"namespaces": []}  # one level: a database has no child namespaces
        return {"namespaces": [[n] for n in self.catalog.get_databases()]}

    def create_namespace(self, body: Any) -> dict[str, Any]:
        body = _obj(body, "CreateNamespaceRequest")
        db = database_of(body.get("namespace"))
        props = body.get("properties") or {}
        if not isinstance(props, dict) or not all(isinstance(v, str) for v in props.values()):
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

    def load_namespace(self, ns: str) -> dict[str, Any]:
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

    def update_namespace_properties(self, ns: str, body: Any) -> dict[str, Any]:
        db = database_of(ns)
        body = _obj(body, "UpdateNamespacePropertiesRequest")
        removals, updates = body.get("removals") or [], body.get("updates") or {}
        if not isinstance(removals, list) or not all(isinstance(k, str) for k in removals):
            raise bad_request("removals: a list of strings")
        if not isinstance(updates, dict) or not all(isinstance(v, str) for v in updates.values()):
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

    def _load(self, db: str, name: str) -> Loaded:
        try:
            t = self.catalog.get_table(db, name)
        except NoSuchObject:
            raise no_such_table(f"{db}.{name}") from None
        if t.parameters.get(TABLE_TYPE, "").upper() != ICEBERG:
            raise no_such_table(f"{db}.{name}", "not an Iceberg table")
        location = t.parameters.get(METADATA_LOCATION)
        if not location:
            raise no_such_table(f"{db}.{name}", f"the table has no {METADATA_LOCATION}")
        try:
            metadata = read_metadata(location)
        except (OSError, ValueError, IcebergValidationError) as e:
            raise RestError(500, "ServiceFailureException", f"cannot read the metadata of {db}.{name} at "
                                                            f"{location}: {e}") from None
        return Loaded(t, metadata, location)

    def list_tables(self, ns: str) -> dict[str, Any]:
        db = database_of(ns)
        self._database(db)
        tables = self.catalog.get_tables_by_names(db, self.catalog.get_tables(db))
        return {"identifiers": [{"namespace": [db], "name": t.tableName} for t in tables
                                if t.parameters.get(TABLE_TYPE, "").upper() == ICEBERG]}

    def load_table(self, ns: str, name: str) -> str:
        got = self._load(database_of(ns), name.lower())
        return table_result(got.metadata, got.location)

    def table_exists(self, ns: str, name: str) -> None:
        db = database_of(ns)
        try:
            t = self.catalog.get_table(db, name.lower())
        except NoSuchObject:
            raise no_such_table(f"{db}.{name}") from None
        if t.parameters.get(TABLE_TYPE, "").upper() != ICEBERG:
            raise no_such_table(f"{db}.{name}", "not an Iceberg table")

    def create_table(self, ns: str, body: Any) -> str:
        from pyiceberg.catalog.rest import CreateTableRequest

        db = database_of(ns)
        try:
            # optional in the spec, required (nullable) in PyIceberg's model
            req = CreateTableRequest.model_validate({"location": None, "partition-spec": None, "write-order": None,
                                                     **_obj(body, "CreateTableRequest")})
        except PydanticError as e:
            raise bad_request(f"Invalid CreateTableRequest: {_pydantic_message(e)}") from None
        name = req.name.lower()
        d = self._database(db)
        if self._exists(db, name):
            raise already_exists(f"Table already exists: {db}.{name}")
        location = (req.location or (d.locationUri or self.catalog.wh.database_location(db)).rstrip("/") + "/" + name)
        location = location.rstrip("/")
        props = {**DEFAULT_TABLE_PROPERTIES, **req.properties}
        try:
            metadata = new_table_metadata(schema=req.table_schema,
                                          partition_spec=req.partition_spec or UNPARTITIONED_PARTITION_SPEC,
                                          sort_order=req.write_order or UNSORTED_SORT_ORDER,
                                          location=location, properties=props)
        except (ValueError, IcebergValidationError) as e:
            raise bad_request(f"Invalid table: {e}") from None
        if req.stage_create:  # nothing is written: the client commits the table with assert-create later
            return table_result(metadata, None)
        metadata_location = load_location_provider(location, metadata.properties).new_table_metadata_file_location(0)
        write_metadata(metadata, metadata_location)
        try:
            self.catalog.create_table(hive_table(db, name, metadata, metadata_location))
        except AlreadyExists:
            self._discard(metadata_location)
            raise already_exists(f"Table already exists: {db}.{name}") from None
        except CatalogError as e:
            self._discard(metadata_location)
            raise _catalog_error(e) from None
        return table_result(metadata, metadata_location)

    def _exists(self, db: str, name: str) -> bool:
        try:
            self.catalog.get_table(db, name)
            return True
        except NoSuchObject:
            return False

    @staticmethod
    def _discard(location: str) -> None:
        """Remove a metadata file this server wrote for a change that did not commit (nothing points to it)."""
        try:
            load_file_io({}, location).delete(location)
        except OSError as e:
            log.warning("could not delete the unused metadata file %s: %s", location, e)

    def register_table(self, ns: str, body: Any) -> str:
        db = database_of(ns)
        body = _obj(body, "RegisterTableRequest")
        name, location, overwrite = body.get("name"), body.get("metadata-location"), body.get("overwrite", False)
        if not isinstance(name, str) or not name or not isinstance(location, str) or not location:
            raise bad_request("RegisterTableRequest needs a name and a metadata-location")
        if not isinstance(overwrite, bool):
            raise bad_request("overwrite: a boolean")
        name = name.lower()
        self._database(db)
        try:
            metadata = read_metadata(location)
        except FileNotFoundError:
            raise bad_request(f"No metadata file at {location}") from None
        except (OSError, ValueError, IcebergValidationError) as e:
            raise bad_request(f"Cannot read the metadata file {location}: {e}") from None
        if overwrite and self._exists(db, name):
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

    def drop_table(self, ns: str, name: str, purge: bool) -> None:
        db, name = database_of(ns), name.lower()
        got = self._load(db, name)
        try:
            self.catalog.drop_table(db, name, delete_data=False)
        except NoSuchObject:
            raise no_such_table(f"{db}.{name}") from None
        if purge:
            self._purge(got)

    @staticmethod
    def _purge(got: Loaded) -> None:
        """Delete the dropped table's files: data, manifests, manifest lists, metadata files (as Iceberg's
        catalogs purge: what the table's metadata reaches)."""
        io = load_file_io(got.metadata.properties, got.location)
        manifests = []
        lists = set()
        for snapshot in got.metadata.snapshots:
            try:
                manifests += snapshot.manifests(io)
            except OSError as e:
                log.warning("purge of %s: cannot read %s: %s", got.location, snapshot.manifest_list, e)
            lists.add(snapshot.manifest_list)
        delete_data_files(io, manifests)
        delete_files(io, {mf.manifest_path for mf in manifests}, "manifest")
        delete_files(io, lists, "manifest list")
        delete_files(io, {e.metadata_file for e in got.metadata.metadata_log} | {got.location}, "metadata")

    def rename_table(self, body: Any) -> None:
        body = _obj(body, "RenameTableRequest")
        src, dst = body.get("source"), body.get("destination")
        if not isinstance(src, dict) or not isinstance(dst, dict):
            raise bad_request("RenameTableRequest needs source and destination identifiers")
        sdb, sname = database_of(src.get("namespace")), src.get("name")
        ddb, dname = database_of(dst.get("namespace")), dst.get("name")
        if not isinstance(sname, str) or not isinstance(dname, str) or not sname or not dname:
            raise bad_request("source and destination need a name")
        sname, dname = sname.lower(), dname.lower()
        got = self._load(sdb, sname)
        self._database(ddb)
        if self._exists(ddb, dname):
            raise already_exists(f"Table already exists: {ddb}.{dname}")
        try:
            self.catalog.alter_table(sdb, sname, replace(got.table, dbName=ddb, tableName=dname),
                                     env={"DO_NOT_UPDATE_STATS": "true"})
        except CatalogError as e:
            if self._exists(ddb, dname):
                raise already_exists(f"Table already exists: {ddb}.{dname}") from None
            if not self._exists(sdb, sname):
                raise no_such_table(f"{sdb}.{sname}") from None
            raise _catalog_error(e) from None

    # ---- commits ------------------------------------------------------------------------------------

    @staticmethod
    def _parse_changes(body: dict[str, Any]) -> tuple[list[TableRequirement], list[TableUpdate]]:
        reqs, ups = body.get("requirements", []), body.get("updates", [])
        if not isinstance(reqs, list) or not isinstance(ups, list):
            raise bad_request("requirements and updates: JSON lists")
        try:
            return _REQUIREMENTS.validate_python(reqs), _UPDATES.validate_python(ups)
        except PydanticError as e:
            raise bad_request(f"Invalid CommitTableRequest: {_pydantic_message(e)}") from None

    def _stage(self, db: str, name: str, reqs: Sequence[TableRequirement], ups: Sequence[TableUpdate]) -> Staged:
        """Validate the requirements against the current metadata, apply the updates and write the new
        metadata file: everything but the swap in the store."""
        try:
            got: Loaded | None = self._load(db, name)
        except RestError as e:
            if e.code != 404 or not any(isinstance(r, AssertCreate) for r in reqs) or self._exists(db, name):
                raise
            self._database(db)
            got = None
        base = got.metadata if got else None
        try:
            for r in reqs:
                r.validate(base)
        except CommitFailedException as e:
            raise commit_failed(f"Requirement failed for {db}.{name}: {e}") from None
        try:
            new = update_table_metadata(base if base is not None else
                                        TableMetadataV1.model_construct(last_column_id=-1, schema=Schema()),
                                        tuple(ups), enforce_validation=base is None,
                                        metadata_location=got.location if got else None)
        except CommitFailedException as e:
            raise commit_failed(f"Cannot apply the updates to {db}.{name}: {e}") from None
        except (ValueError, IcebergValidationError, PydanticError) as e:
            raise bad_request(f"Cannot apply the updates to {db}.{name}: {e}") from None
        if got is not None and new == got.metadata:
            return Staged(db, name, got.table, got.location, got.metadata, got.metadata, got.location, changed=False)
        version = _metadata_version(got.location) + 1 if got else 0
        location = load_location_provider(new.location, new.properties).new_table_metadata_file_location(version)
        write_metadata(new, location)
        return Staged(db, name, got.table if got else None, got.location if got else None, base, new, location,
                      changed=True)

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
                                                agent_info="metastore Iceberg REST commit")
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
        except MetaError as e:
            if e.message.startswith(TABLE_MODIFIED):
                raise commit_failed(f"Commit conflict: {e.message}") from None
            raise RestError(500, "ServiceFailureException", e.message) from None
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

    def commit_table(self, ns: str, name: str, body: Any) -> str:
        db, name = database_of(ns), name.lower()
        body = _obj(body, "CommitTableRequest")
        ident = body.get("identifier")
        if ident is not None:
            if not isinstance(ident, dict) or database_of(ident.get("namespace")) != db or \
                    str(ident.get("name", "")).lower() != name:
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
                self._discard(s.location)
            raise
        return '{"metadata-location":' + json.dumps(s.location) + ',"metadata":' + s.metadata.model_dump_json() + "}"

    def commit_transaction(self, body: Any) -> None:
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
            if not isinstance(ident, dict) or not isinstance(ident.get("name"), str):
                raise bad_request("Every table change of a transaction needs an identifier")
            key = (database_of(ident.get("namespace")), ident["name"].lower())
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
                    self._discard(s.location)
            raise


def _metadata_version(location: str) -> int:
    from pyiceberg.catalog import MetastoreCatalog

    return MetastoreCatalog._parse_metadata_version(location)
