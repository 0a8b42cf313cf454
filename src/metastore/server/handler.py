"""The Thrift front: each ThriftHiveMetastore method as a call on the catalog service.

Catalog errors become the Hive exception the method declares; an error the method cannot declare
becomes a MetaException when it can, else a TApplicationException (the client sees a clear error, the
connection stays usable).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from thriftpy2.thrift import TApplicationException, TException

from .. import __version__
from ..catalog.audit import AuditLog
from ..catalog.locks import COMPACTION_STATES, Component, WriteNote, aborted_bits
from ..catalog.service import Catalog
from ..config import hidden_keys, parse_duration, redact, secret_key
from ..core import constraints as cons
from ..core import errors as E
from ..core import identity
from ..core import model as m
from ..core.names import split_part_name
from ..thrift import hms
from .convert import (
    from_thrift,
    from_thrift_batch,
    object_ref_from_thrift,
    privilege_set_to_thrift,
    privilege_to_thrift,
    privileges_from_thrift,
    role_grant_to_thrift,
    role_to_thrift,
    stats_obj_from_thrift,
    stats_obj_to_thrift,
    to_thrift,
)
from .tokens import DelegationTokenCalls
from .wire_shapes import OpenTxnsEveryShape

log = logging.getLogger(__name__)

_EXC: dict[type[E.CatalogError], type[TException]] = {
    E.NoSuchObject: hms.NoSuchObjectException,
    E.AlreadyExists: hms.AlreadyExistsException,
    E.InvalidObject: hms.InvalidObjectException,
    E.InvalidOperation: hms.InvalidOperationException,
    E.InvalidInput: hms.InvalidInputException,
    E.MetaError: hms.MetaException,
    E.UnknownDB: hms.UnknownDBException,
    E.UnknownTable: hms.UnknownTableException,
    E.NoSuchLock: hms.NoSuchLockException,
    E.NoSuchTxn: hms.NoSuchTxnException,
    E.TxnAborted: hms.TxnAbortedException,
    E.TxnOpen: hms.TxnOpenException,
    E.ConfigValSecurity: hms.ConfigValSecurityException,
}


# raised by a method as they are: the client gets them as declared
_ANSWERED: tuple[type[Exception], ...] = (TApplicationException, *_EXC.values())


# ---- configuration served to clients -----------------------------------------------------------------------

# names get_config_value may serve: Hive's Pattern.matches("(hive|hdfs|mapred).*") (Java's '.' stops at line ends)
_SERVED = re.compile(r"(?:hive|hdfs|mapred)[^\n\r\x85\u2028\u2029]*")
# the metastore-side keys a connection may set for itself with setMetaConf, and Hive's defaults: HiveConf.metaConfVars
# of Hive 2.3.10, and Hive 3's disallow.incompatible.col.type.changes. Hive 3+ clients may use MetastoreConf's
# metastore.* names (both names are one setting). None of them selects code (Hive 4's expression.proxy does: not here).
_META_CONF = {
    "hive.metastore.try.direct.sql": "true",
    "hive.metastore.try.direct.sql.ddl": "true",
    "hive.metastore.client.socket.timeout": "600s",
    "hive.metastore.partition.name.whitelist.pattern": "",
    "hive.metastore.client.capability.check": "false",
    "hive.metastore.disallow.incompatible.col.type.changes": "true",
}
_META_HIVE_TO_NEW = {k: "metastore." + k.removeprefix("hive.metastore.") for k in _META_CONF}
_META_NAMES = {**{k: k for k in _META_CONF}, **{v: k for k, v in _META_HIVE_TO_NEW.items()}}
_META_DURATIONS = {"hive.metastore.client.socket.timeout"}  # validated as Hive does (a time value)
# what one connection may make the server hold: 6 meta keys and a few fb303 options, each bounded
_MAX_VALUE_CHARS = 4096
_MAX_OPTION_KEY = 256
_MAX_OPTIONS = 64


@dataclass
class _Connection:
    """What one connection has set for itself (setMetaConf, fb303 setOption)."""

    meta: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)


def _meta_key(key: str | None) -> str:
    name = _META_NAMES.get(key) if key is not None else None
    if name is None:
        raise E.MetaError(f"Invalid configuration key {_shown(key)}")
    return name


def _shown(value: str | None, limit: int = 1000) -> str:
    """A client's name or value for an error message: Java's rendering of null, and not a megabyte of it."""
    if value is None:
        return "null"
    return value if len(value) <= limit else value[:limit] + "..."


def _declared(method: str) -> tuple[type, ...]:
    result = getattr(hms.ThriftHiveMetastore, method + "_result", None)
    if result is None:
        return ()
    return tuple(spec[2] for fid, spec in result.thrift_spec.items() if fid != 0)


_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")


def _audited(name: str, fn: Callable[_P, _R], audit: AuditLog) -> Callable[_P, _R]:
    """`fn` writing one audit line per call (with the Hive exception it ends with, if any)."""

    @functools.wraps(fn)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with identity.calling(name) as record:
            try:
                result = fn(*args, **kwargs)
            except BaseException as e:
                audit.record("thrift", record, e)
                raise
            audit.record("thrift", record, None)
            return result

    return call


def _wrap(name: str, fn: Callable[_P, _R]) -> Callable[_P, _R]:
    declared = _declared(name)

    @functools.wraps(fn)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return fn(*args, **kwargs)
        except E.CatalogError as e:
            # the nearest type with a Hive exception of its own (TableModified, EventsMissing: MetaException)
            cls = next((_EXC[c] for c in type(e).__mro__ if c in _EXC), hms.MetaException)
            exc = cls(message=e.message)  # type: ignore[call-arg]  # each has one field, message
            if isinstance(exc, declared):
                raise exc from None
            if hms.MetaException in declared:
                raise hms.MetaException(message=f"{type(exc).__name__}: {e.message}") from None
            if hms.NoSuchObjectException in declared and isinstance(e, E.InvalidObject):
                raise hms.NoSuchObjectException(message=e.message) from None
            raise TApplicationException(TApplicationException.INTERNAL_ERROR,
                                        f"{type(exc).__name__}: {e.message}") from None
        except _ANSWERED:
            raise
        except Exception as e:  # a bug or an unexpected store failure: report it, keep serving
            log.exception("%s failed", name)
            # the text stays in the log: an OSError quotes paths, a store error its SQL and parameters
            msg = f"{name} failed with an unexpected {type(e).__name__}: see the server log"
            if hms.MetaException in declared:
                raise hms.MetaException(message=msg) from None
            raise TApplicationException(TApplicationException.INTERNAL_ERROR, msg) from None

    return call


DISALLOW_INCOMPATIBLE = "hive.metastore.disallow.incompatible.col.type.changes"


def parse_db_name(name: str | None) -> tuple[str | None, str]:
    """Hive 3+ clients prefix database names with their catalog: '@cat#db', '!' for an empty name."""
    if name is None:
        return None, ""
    if name.startswith("@"):
        cat, sep, db = name[1:].partition("#")
        if not sep:
            raise E.MetaError(f"Malformed catalog-prefixed database name: {name}")
        if db == "!":
            db = ""
        return cat or None, db
    return None, name


def _db(name: str | None) -> str:
    return parse_db_name(name)[1]


def other_catalog(cat: str | None, db: str | None = None) -> str | None:
    """The catalog a request names (its catName, else its database's '@cat#db' prefix) when that is not this
    store's one catalog, `hive`; else None. Hive 3 keeps each catalog's objects apart, so a read in a catalog it
    does not have answers as for objects that do not exist (checked before the store is read)."""
    name = cat or parse_db_name(db)[0]
    return None if name is None or name.lower() == DEFAULT_CATALOG else name


def _check_catalog(req: Any) -> None:
    """Hive 3's ObjectStore answer for a request (catName, dbName, tblName) naming a table in a catalog this store
    does not have (statistics, partition values, partitions by expression)."""
    if (cat := other_catalog(req.catName, req.dbName)) is not None:
        raise E.NoSuchObject(f"Specified catalog.database.table does not exist : "
                             f"{cat.lower()}.{_db(req.dbName).lower()}.{(req.tblName or '').lower()}")


def _env(ctx: hms.EnvironmentContext | None) -> dict[str, str]:
    return dict(ctx.properties or {}) if ctx is not None else {}


def _max(n: int | None) -> int:
    return -1 if n is None or n < 0 else n


_GRANT, _REVOKE = 1, 2  # Hive's GrantRevokeType
_MINOR, _MAJOR = 1, 2  # Hive's CompactionType
_TXN_ABORTED, _TXN_OPEN = 2, 3  # Hive's TxnState (1 is committed)
_TXN_STATES = {"a": _TXN_ABORTED, "o": _TXN_OPEN}
_MAX_GRANTS = 1000  # privileges in one grant or revoke call


def _priv_object(ref: hms.HiveObjectRef | None) -> m.ObjectRef:
    obj = object_ref_from_thrift(ref)
    return m.ObjectRef(obj.type, _db(obj.db) if obj.db else obj.db, obj.table)


def _bag(bag: hms.PrivilegeBag | None) -> list[m.PrivilegeGrant]:
    grants = privileges_from_thrift(bag)
    if not grants or len(grants) > _MAX_GRANTS:
        raise E.MetaError(f"A grant or revoke names 1 to {_MAX_GRANTS} privileges")
    for g in grants:
        if g.object.db:
            g.object = m.ObjectRef(g.object.type, _db(g.object.db), g.object.table)
    return grants


def _require(v: _T | None, what: str) -> _T:
    if v is None:
        raise E.MetaError(f"{what} must be given")
    return v


# ---- issue 21's small methods: helpers -------------------------------------------------------------------------

DEFAULT_CATALOG = "hive"


@functools.lru_cache(maxsize=4)
def _whitelist(text: str) -> re.Pattern[str]:
    return re.compile(text)


_SPEC_GROUPING = "hive.hcatalog.partition.spec.grouping.enabled"


def _partition_specs(table: m.Table, parts: list[m.Partition]) -> list[hms.PartitionSpec]:
    """Hive's get_partitions_pspec: by default one spec listing every partition whole (none: an empty list);
    with the table's parameter hive.hcatalog.partition.spec.grouping.enabled true, partitions inside the table's
    directory grouped by their storage (input and output formats, serde library, columns), each group one spec
    sharing the table's location as its root with the partitions' paths relative to it, the others in one list."""
    root = (table.sd.location if table.sd is not None else None) or ""

    def listed(ps: list[m.Partition]) -> hms.PartitionSpec:
        return hms.PartitionSpec(dbName=table.dbName, tableName=table.tableName, rootPath=root,
                                 partitionList=hms.PartitionListComposingSpec(partitions=to_thrift(ps)))

    if (table.parameters or {}).get(_SPEC_GROUPING, "").lower() != "true":
        return [listed(parts)]
    groups: dict[str, tuple[hms.StorageDescriptor, list[hms.PartitionWithoutSD]]] = {}
    outside: list[m.Partition] = []
    for p in parts:
        loc = p.sd.location if p.sd is not None else None
        if not root or loc is None or not loc.startswith(root):
            outside.append(p)
            continue
        sd = to_thrift(p).sd
        key = "\t".join(str(x) for x in (sd.inputFormat, sd.outputFormat,
                                         sd.serdeInfo.serializationLib if sd.serdeInfo else None,
                                         [(c.name, c.type, c.comment) for c in sd.cols or []]))
        if key not in groups:
            sd.location = root
            groups[key] = (sd, [])
        groups[key][1].append(hms.PartitionWithoutSD(
            values=list(p.values), createTime=p.createTime, lastAccessTime=p.lastAccessTime,
            relativePath=loc[len(root):], parameters=dict(p.parameters or {})))
    specs = [hms.PartitionSpec(dbName=table.dbName, tableName=table.tableName, rootPath=root,
                               sharedSDPartitionSpec=hms.PartitionSpecWithSharedSD(partitions=ps, sd=sd))
             for sd, ps in groups.values()]
    return specs + ([listed(outside)] if outside else [])


class Handler(DelegationTokenCalls):
    """Implements every method of the IDL's ThriftHiveMetastore service (checked at start-up)."""

    def __init__(self, catalog: Catalog, config: dict[str, str] | None = None, audit: AuditLog | None = None) -> None:
        self.catalog = catalog
        # hive_config() leaves secrets out already; checked again so that no caller can hand this front one
        self._hidden = hidden_keys((config or {}).get("hive.conf.hidden.list", ""))
        self.config = {k: redact(v) for k, v in (config or {}).items()
                       if not secret_key(k, self._hidden)}
        self._connection = threading.local()  # per connection: see _state
        self.started = int(time.time())
        for name in hms.ThriftHiveMetastore.thrift_services:
            fn = getattr(self, name, None)
            if fn is None:
                raise RuntimeError(f"the IDL declares {name} but the handler does not implement it")
            wrapped = _wrap(name, fn)
            setattr(self, name, _audited(name, wrapped, audit) if audit is not None else wrapped)

    # ---- fb303 and configuration (README "Security") ------------------------------------------------
    # Nothing here serves a secret (the keys hive_config() leaves out are checked again), and nothing a connection
    # sets is seen by another: what it sets lives in its thread (one thread per connection for the connection's
    # life, see thrift_server.py; a thread's locals die with it, so a later connection starts from the defaults).

    def getName(self) -> str:
        return "metastore"

    def getVersion(self) -> str:
        return __version__

    def getStatus(self) -> int:
        return hms.fb303.fb_status.ALIVE

    def getStatusDetails(self) -> str:
        return "ALIVE"

    def getCounters(self) -> dict[str, int]:
        return {}

    def getCounter(self, key: str) -> int:
        return 0

    def _state(self) -> _Connection:
        state = getattr(self._connection, "state", None)
        if state is None:
            state = self._connection.state = _Connection()
        return state

    def setOption(self, key: str, value: str) -> None:
        # fb303 options configure nothing here: as in Hive they are only echoed back, but to this connection alone
        if key is None or value is None:
            raise E.MetaError("setOption needs a key and a value")
        if len(key) > _MAX_OPTION_KEY or len(value) > _MAX_VALUE_CHARS:
            raise E.MetaError(f"fb303 options are limited to keys of {_MAX_OPTION_KEY} and values of "
                              f"{_MAX_VALUE_CHARS} characters")
        options = self._state().options
        if key not in options and len(options) >= _MAX_OPTIONS:
            raise E.MetaError(f"a connection may set at most {_MAX_OPTIONS} fb303 options")
        options[key] = value

    def getOption(self, key: str) -> str:
        if key is None or secret_key(key, self._hidden):
            return ""
        return self._state().options.get(key, "")

    def getOptions(self) -> dict[str, str]:
        return {k: v for k, v in self._state().options.items() if not secret_key(k, self._hidden)}

    def getCpuProfile(self, seconds: int) -> str:
        return ""

    def aliveSince(self) -> int:
        return self.started

    def reinitialize(self) -> None:
        return None

    def shutdown(self) -> None:
        return None

    def getMetaConf(self, key: str) -> str:
        name = _meta_key(key)
        value = self._state().meta.get(name)
        if value is not None:
            return value
        for k in (name, _META_HIVE_TO_NEW[name]):  # the server's own setting under either name, else Hive's default
            if k in self.config:
                return self.config[k]
        return _META_CONF[name]

    def setMetaConf(self, key: str, value: str) -> None:
        name = _meta_key(key)
        if value is None or len(value) > _MAX_VALUE_CHARS:
            raise E.MetaError(f"Invalid configuration value {_shown(value)} for key {_shown(key)}: "
                              f"a value of at most {_MAX_VALUE_CHARS} characters is expected")
        if name in _META_DURATIONS:
            try:
                parse_duration(value)
            except ValueError as e:
                raise E.MetaError(f"Invalid configuration value {_shown(value)} for key {_shown(key)} by {e}") from None
        self._state().meta[name] = value

    def get_config_value(self, name: str, default: str) -> str:
        if name is None:
            return default
        # Hive's rule (HMSHandler.get_config_value): only hive*, hdfs*, mapred* names, less the secret ones
        if not _SERVED.fullmatch(name) or secret_key(name, self._hidden):
            raise E.ConfigValSecurity(f"For security reasons, the config key {_shown(name)} cannot be accessed")
        value = self.config.get(name)
        if value is None and name in _META_CONF:
            value = self.config.get(_META_HIVE_TO_NEW[name], _META_CONF[name])
        return default if value is None else value

    def set_ugi(self, user: str, groups: list[str]) -> list[str]:
        """The user a client claims: believed for the rest of the connection when the server authenticates no
        one (as Hive without SASL); an authenticated connection's principal does not change."""
        groups = list(groups or [])
        if not user or len(user) > 256 or len(groups) > 256 or any(len(g) > 256 for g in groups):
            raise hms.MetaException(message="set_ugi: a user name and at most 256 groups of at most 256 characters")
        was = identity.current_or_none()
        if was is None or not was.authenticated:
            identity.set_principal(identity.Principal(user, tuple(groups), identity.CLAIMED,
                                                      address=was.address if was is not None else None))
        return [user, *groups]

    # ---- the small methods engines call (issue 21) ---------------------------------------------------------------

    def flushCache(self) -> None:
        return None

    flushCache.thrift_status = (  # type: ignore[attr-defined]
        "no effect", "nothing to flush: every call reads the store (as Hive's ObjectStore, whose flushCache does "
        "nothing); the serialized-table cache is keyed by each table's version, so it is never stale")

    def partition_name_has_valid_characters(self, part_vals: list[str], throw_exception: bool) -> bool:
        """Hive's rule: every value fully matches hive.metastore.partition.name.whitelist.pattern, the server's
        setting (a connection's setMetaConf does not change it, as in Hive); no pattern (the default): any."""
        text = self.config.get("hive.metastore.partition.name.whitelist.pattern") or self.config.get(
            "metastore.partition.name.whitelist.pattern") or ""
        if not text:
            return True
        try:
            pattern = _whitelist(text)
        except re.error as e:
            raise E.MetaError(f"hive.metastore.partition.name.whitelist.pattern is not a valid pattern: {e}") from None
        for v in part_vals or []:
            if v is None or not pattern.fullmatch(v):
                if throw_exception:
                    raise E.MetaError(f"Partition value '{_shown(v)}' contains a character not matched by whitelist "
                                      f"pattern '{text}'.  (configure with "
                                      "hive.metastore.partition.name.whitelist.pattern)")
                return False
        return True

    def add_dynamic_partitions(self, rqst: hms.AddDynamicPartitions) -> None:
        # Only txnid (field 1 in every generation) is read: a Hive 3+ request's other fields are numbered differently
        self.catalog.locks.add_dynamic_partitions(_require(_require(rqst, "request").txnid, "txnid"))

    add_dynamic_partitions.thrift_status = (  # type: ignore[attr-defined]
        "no effect", "Hive records a dynamic-partition write's partitions for its compactor; there is none here: "
        "the transaction is checked to be open (NoSuchTxnException, TxnAbortedException as Hive)")

    def truncate_table(self, dbName: str, tableName: str, partNames: list[str]) -> None:
        self.catalog.truncate_table(_db(dbName), tableName, partNames)

    def truncate_table_req(self, req: hms.TruncateTableRequest) -> hms.TruncateTableResponse:
        req = _require(req, "request")
        self.catalog.truncate_table(_db(req.dbName), req.tableName, req.partNames)
        return hms.TruncateTableResponse()

    def get_partition_values(self, request: hms.PartitionValuesRequest) -> hms.PartitionValuesResponse:
        req = _require(request, "request")
        _check_catalog(req)
        rows = self.catalog.get_partition_values(_db(req.dbName), req.tblName,
                                                 [k.name for k in req.partitionKeys or []],
                                                 req.applyDistinct is not False, req.filter, _max(req.maxParts))
        return hms.PartitionValuesResponse(partitionValues=[hms.PartitionValuesRow(row=r) for r in rows])

    def get_partition_names_req(self, req: hms.PartitionsByExprRequest) -> list[str]:
        req = _require(req, "request")
        _check_catalog(req)
        if not req.expr:
            return self.catalog.get_partition_names(_db(req.dbName), req.tblName, _max(req.maxParts))
        try:
            names = self.catalog.partition_names_by_expr(_db(req.dbName), req.tblName, req.expr,
                                                         req.defaultPartitionName)
        except E.ExprUnreadable as e:
            raise E.MetaError(f"The partition expression cannot be evaluated here: {e.message}") from None
        return names if _max(req.maxParts) < 0 else names[:req.maxParts]

    def get_partitions_pspec(self, db_name: str, tbl_name: str, max_parts: int) -> list[hms.PartitionSpec]:
        table = self.catalog.get_table(_db(db_name), tbl_name)
        parts = self.catalog.get_partitions(table.dbName, table.tableName, _max(max_parts))
        return _partition_specs(table, parts)

    def get_database_req(self, request: hms.GetDatabaseRequest) -> hms.Database:
        req = _require(request, "request")
        cat, name = parse_db_name(req.name)
        cat = req.catalogName or cat
        if cat is not None and cat.lower() != DEFAULT_CATALOG:
            raise E.NoSuchObject(f"database {cat}.{name} does not exist")
        return to_thrift(self.catalog.get_database(name))

    def get_table_names_by_filter(self, dbname: str, filter: str, max_tables: int) -> list[str]:
        return self.catalog.get_table_names_by_filter(_db(dbname) if dbname else dbname, filter, _max(max_tables))

    def get_metastore_db_uuid(self) -> str:
        return self.catalog.metastore_db_uuid()

    # Hive 3's catalogs: this store holds one, Hive's default `hive` (databases carry no catalog of their own)

    def _default_catalog(self) -> hms.Catalog:
        return hms.Catalog(name=DEFAULT_CATALOG, description="Default catalog, for Hive",
                           locationUri=self.catalog.wh.to_uri(self.catalog.wh.root))

    def get_catalogs(self) -> hms.GetCatalogsResponse:
        return hms.GetCatalogsResponse(names=[DEFAULT_CATALOG])

    def get_catalog(self, catName: hms.GetCatalogRequest) -> hms.GetCatalogResponse:
        name = _require(catName, "request").name
        if (name or "").lower() != DEFAULT_CATALOG:
            raise E.NoSuchObject(f"No catalog {_shown(name)}")
        return hms.GetCatalogResponse(catalog=self._default_catalog())

    def create_catalog(self, catalog: hms.CreateCatalogRequest) -> None:
        cat = _require(_require(catalog, "request").catalog, "catalog")
        if (cat.name or "").lower() == DEFAULT_CATALOG:
            raise E.AlreadyExists(f"Catalog {cat.name} already exists")
        raise E.MetaError(f"Creating catalog {_shown(cat.name)} is not supported: this metastore's store holds only "
                          "the default catalog 'hive'")

    def alter_catalog(self, rqst: hms.AlterCatalogRequest) -> None:
        name = _require(rqst, "request").name
        if (name or "").lower() != DEFAULT_CATALOG:
            raise E.NoSuchObject(f"No catalog {_shown(name)}")
        raise E.InvalidOperation("Altering catalog 'hive' is not supported: its location is the server's warehouse "
                                 "setting")

    def drop_catalog(self, catName: hms.DropCatalogRequest) -> None:
        name = _require(catName, "request").name
        if (name or "").lower() == DEFAULT_CATALOG:
            raise E.MetaError(f"Can not drop {DEFAULT_CATALOG} catalog")
        raise E.NoSuchObject(f"No catalog {_shown(name)}")

    # file metadata (Hive's ORC footer cache for HBaseStore): answered as Hive's ObjectStore answers, unsupported

    def get_file_metadata_by_expr(self, req: hms.GetFileMetadataByExprRequest) -> hms.GetFileMetadataByExprResult:
        return hms.GetFileMetadataByExprResult(metadata={}, isSupported=False)

    get_file_metadata_by_expr.thrift_status = (  # type: ignore[attr-defined]
        "no effect", "no file-metadata store: isSupported=false with no metadata, as Hive's ObjectStore answers")

    def get_file_metadata(self, req: hms.GetFileMetadataRequest) -> hms.GetFileMetadataResult:
        return hms.GetFileMetadataResult(metadata={}, isSupported=False)

    get_file_metadata.thrift_status = get_file_metadata_by_expr.thrift_status  # type: ignore[attr-defined]

    def put_file_metadata(self, req: hms.PutFileMetadataRequest) -> hms.PutFileMetadataResult:
        return hms.PutFileMetadataResult()

    put_file_metadata.thrift_status = (  # type: ignore[attr-defined]
        "no effect", "no file-metadata store (as Hive's ObjectStore: isFileMetadataSupported false); "
        "get_file_metadata answers isSupported=false")

    def clear_file_metadata(self, req: hms.ClearFileMetadataRequest) -> hms.ClearFileMetadataResult:
        return hms.ClearFileMetadataResult()

    clear_file_metadata.thrift_status = put_file_metadata.thrift_status  # type: ignore[attr-defined]

    def cache_file_metadata(self, req: hms.CacheFileMetadataRequest) -> hms.CacheFileMetadataResult:
        return hms.CacheFileMetadataResult(isSupported=False)

    cache_file_metadata.thrift_status = get_file_metadata_by_expr.thrift_status  # type: ignore[attr-defined]

    # runtime statistics (Hive 3's re-execution planner feedback)

    def add_runtime_stats(self, stat: hms.RuntimeStat) -> None:
        return None

    add_runtime_stats.thrift_status = (  # type: ignore[attr-defined]
        "no effect", "runtime statistics (Hive's query re-execution hints, a cache Hive itself expires) are not "
        "kept; get_runtime_stats answers none, which Hive's planner takes as no hints")

    def get_runtime_stats(self, rqst: hms.GetRuntimeStatsRequest) -> list[hms.RuntimeStat]:
        return []

    def get_materialized_views_for_rewriting(self, db_name: str) -> list[str]:
        db = _db(db_name)
        names = self.catalog.get_tables(db, None, "MATERIALIZED_VIEW")
        if not names:
            return []
        return [t.tableName for t in self.catalog.get_tables_by_names(db, names) if t.rewriteEnabled]

    # ---- end of issue 21's small methods ----------------------------------------------------------------------

    # ---- roles and privileges (catalog/privileges.py; README "Authorization") -----------------------------

    def create_role(self, role: hms.Role) -> bool:
        role = _require(role, "role")
        self.catalog.create_role(m.Role(role.roleName or "", role.createTime or 0, role.ownerName))
        return True

    def drop_role(self, role_name: str) -> bool:
        self.catalog.drop_role(role_name)
        return True

    def get_role_names(self) -> list[str]:
        return self.catalog.role_names()

    def grant_role(self, role_name: str, principal_name: str, principal_type: int, grantor: str, grantorType: int,
                   grant_option: bool) -> bool:
        self.catalog.grant_role(role_name, principal_name, principal_type, bool(grant_option))
        return True

    def revoke_role(self, role_name: str, principal_name: str, principal_type: int) -> bool:
        self.catalog.revoke_role(role_name, principal_name, principal_type)
        return True

    def list_roles(self, principal_name: str, principal_type: int) -> list[hms.Role]:
        return [role_to_thrift(r) for r in self.catalog.list_roles(principal_name, principal_type)]

    def grant_revoke_role(self, request: hms.GrantRevokeRoleRequest) -> hms.GrantRevokeRoleResponse:
        req = _require(request, "request")
        if req.requestType == _GRANT:
            self.catalog.grant_role(req.roleName, req.principalName, req.principalType, bool(req.grantOption))
        elif req.requestType == _REVOKE:  # grantOption on a revoke: REVOKE ADMIN OPTION FOR, the grant stays
            self.catalog.revoke_role(req.roleName, req.principalName, req.principalType, bool(req.grantOption))
        else:
            raise E.MetaError(f"Unknown request type {req.requestType}: GRANT (1) or REVOKE (2)")
        return hms.GrantRevokeRoleResponse(success=True)

    def get_principals_in_role(self, request: hms.GetPrincipalsInRoleRequest) -> hms.GetPrincipalsInRoleResponse:
        grants = self.catalog.principals_in_role(_require(request, "request").roleName)
        return hms.GetPrincipalsInRoleResponse(principalGrants=[role_grant_to_thrift(g) for g in grants])

    def get_role_grants_for_principal(
            self, request: hms.GetRoleGrantsForPrincipalRequest) -> hms.GetRoleGrantsForPrincipalResponse:
        req = _require(request, "request")
        grants = self.catalog.role_grants_for_principal(req.principal_name, req.principal_type)
        return hms.GetRoleGrantsForPrincipalResponse(principalGrants=[role_grant_to_thrift(g) for g in grants])

    def get_privilege_set(self, hiveObject: hms.HiveObjectRef, user_name: str,
                          group_names: list[str]) -> hms.PrincipalPrivilegeSet:
        obj = _priv_object(hiveObject)
        return privilege_set_to_thrift(self.catalog.privilege_set(obj, user_name, group_names or []))

    def list_privileges(self, principal_name: str, principal_type: int,
                        hiveObject: hms.HiveObjectRef) -> list[hms.HiveObjectPrivilege]:
        obj = _priv_object(hiveObject) if hiveObject is not None else None
        grants = self.catalog.list_privileges(principal_name, principal_type if principal_name else None, obj)
        return [privilege_to_thrift(g) for g in grants]

    def grant_privileges(self, privileges: hms.PrivilegeBag) -> bool:
        self.catalog.grant_privileges(_bag(privileges))
        return True

    def revoke_privileges(self, privileges: hms.PrivilegeBag) -> bool:
        self.catalog.revoke_privileges(_bag(privileges))
        return True

    def grant_revoke_privileges(self, request: hms.GrantRevokePrivilegeRequest) -> hms.GrantRevokePrivilegeResponse:
        req = _require(request, "request")
        grants = _bag(req.privileges)
        if req.requestType == _GRANT:
            self.catalog.grant_privileges(grants)
        elif req.requestType == _REVOKE:
            self.catalog.revoke_privileges(grants, bool(req.revokeGrantOption))
        else:
            raise E.MetaError(f"Unknown request type {req.requestType}: GRANT (1) or REVOKE (2)")
        return hms.GrantRevokePrivilegeResponse(success=True)

    # ---- databases ----------------------------------------------------------------------------------

    def create_database(self, database: hms.Database) -> None:
        db = from_thrift(_require(database, "database"), m.Database)
        self.catalog.create_database(db)

    def get_database(self, name: str) -> hms.Database:
        return to_thrift(self.catalog.get_database(_db(name)))

    def get_databases(self, pattern: str) -> list[str]:
        return self.catalog.get_databases(_db(pattern) if pattern else pattern)

    def get_all_databases(self) -> list[str]:
        return self.catalog.get_databases(None)

    def alter_database(self, dbname: str, db: hms.Database) -> None:
        self.catalog.alter_database(_db(dbname), from_thrift(_require(db, "database"), m.Database))

    def drop_database(self, name: str, deleteData: bool, cascade: bool) -> None:
        self.catalog.drop_database(_db(name), bool(deleteData), bool(cascade))

    # ---- tables -------------------------------------------------------------------------------------

    def _fields(self, db: str, table: str, with_keys: bool) -> list[hms.FieldSchema]:
        try:
            return to_thrift(self.catalog.get_fields(_db(db), table, with_keys))
        except E.NoSuchObject as e:
            raise E.UnknownTable(e.message) from None

    def get_fields(self, db_name: str, table_name: str) -> list[hms.FieldSchema]:
        return self._fields(db_name, table_name, False)

    def get_fields_with_environment_context(self, db_name: str, table_name: str,
                                            ctx: hms.EnvironmentContext) -> list[hms.FieldSchema]:
        return self._fields(db_name, table_name, False)

    def get_schema(self, db_name: str, table_name: str) -> list[hms.FieldSchema]:
        return self._fields(db_name, table_name, True)

    def get_schema_with_environment_context(self, db_name: str, table_name: str,
                                            ctx: hms.EnvironmentContext) -> list[hms.FieldSchema]:
        return self._fields(db_name, table_name, True)

    def _table_in(self, tbl: hms.Table) -> m.Table:
        if _require(tbl, "table").sd is None:  # the model would fill in an empty one
            raise E.InvalidObject("Storage descriptor is not defined for the table")
        t = from_thrift(tbl, m.Table)
        t.dbName = _db(t.dbName)
        return t

    def create_table(self, tbl: hms.Table) -> None:
        self.catalog.create_table(self._table_in(tbl))

    def create_table_with_environment_context(self, tbl: hms.Table, ctx: hms.EnvironmentContext) -> None:
        self.catalog.create_table(self._table_in(tbl), _env(ctx))

    def drop_table(self, dbname: str, name: str, deleteData: bool) -> None:
        self.catalog.drop_table(_db(dbname), name, bool(deleteData))

    def drop_table_with_environment_context(self, dbname: str, name: str, deleteData: bool,
                                            ctx: hms.EnvironmentContext) -> None:
        self.catalog.drop_table(_db(dbname), name, bool(deleteData), _env(ctx))

    def get_tables(self, db_name: str, pattern: str) -> list[str]:
        return self.catalog.get_tables(_db(db_name), pattern)

    def get_tables_by_type(self, db_name: str, pattern: str, tableType: str) -> list[str]:
        return self.catalog.get_tables(_db(db_name), pattern, tableType)

    def get_table_meta(self, db_patterns: str, tbl_patterns: str, tbl_types: list[str]) -> list[hms.TableMeta]:
        return to_thrift(self.catalog.get_table_meta(_db(db_patterns) if db_patterns else db_patterns,
                                                     tbl_patterns, tbl_types))

    def get_all_tables(self, db_name: str) -> list[str]:
        return self.catalog.get_tables(_db(db_name))

    def get_table(self, dbname: str, tbl_name: str) -> hms.Table:
        return to_thrift(self.catalog.get_table(_db(dbname), tbl_name))

    def get_table_req(self, req: hms.GetTableRequest) -> hms.GetTableResult:
        req = _require(req, "request")
        if (cat := other_catalog(req.catName, req.dbName)) is not None:  # Hive 3's get_table_core
            raise E.NoSuchObject(f"{cat}.{_db(req.dbName)}.{req.tblName} table not found")
        return hms.GetTableResult(table=to_thrift(self.catalog.get_table(_db(req.dbName), req.tblName)))

    def _tables_by_name(self, dbname: str, names: list[str] | None) -> list[hms.Table]:
        if names is None:
            raise E.InvalidOperation("tbl_names is null")
        try:
            return to_thrift(self.catalog.get_tables_by_names(_db(dbname), names))
        except E.NoSuchObject as e:
            raise E.UnknownDB(e.message) from None

    def get_table_objects_by_name(self, dbname: str, tbl_names: list[str]) -> list[hms.Table]:
        return self._tables_by_name(dbname, tbl_names)

    def get_table_objects_by_name_req(self, req: hms.GetTablesRequest) -> hms.GetTablesResult:
        req = _require(req, "request")
        if (cat := other_catalog(req.catName, req.dbName)) is not None and _db(req.dbName) and req.tblNames is not None:
            raise E.UnknownDB(f"Could not find database {cat.lower()}.{_db(req.dbName).lower()}")  # Hive 3's
        return hms.GetTablesResult(tables=self._tables_by_name(req.dbName, req.tblNames))

    def _alter_table(self, dbname: str, tbl_name: str, new_tbl: hms.Table, cascade: bool, env: dict[str, str]) -> None:
        new = from_thrift(_require(new_tbl, "new table"), m.Table)
        new.dbName = _db(new.dbName) if new.dbName else _db(dbname)
        if env.get("CASCADE", "").lower() == "true":
            cascade = True
        # the call's environment may turn the check off as setMetaConf does for the connection (a replication load
        # replays changes its source accepted)
        check = self._col_types_checked() and env.get(DISALLOW_INCOMPATIBLE, "").strip().lower() != "false"
        self.catalog.alter_table(_db(dbname), tbl_name, new, cascade, env, check_col_types=check)

    def _col_types_checked(self) -> bool:
        """hive.metastore.disallow.incompatible.col.type.changes as Hive 3's alter handler reads it: the
        connection's setMetaConf value, else the server's setting (Hive's default true). Hive 2.3 refuses the key
        in setMetaConf, so there only the server's counts; a value other than true/false means false (Hadoop's
        getBoolean with Hive's default there)."""
        return self.getMetaConf(DISALLOW_INCOMPATIBLE).strip().lower() == "true"

    def alter_table(self, dbname: str, tbl_name: str, new_tbl: hms.Table) -> None:
        self._alter_table(dbname, tbl_name, new_tbl, False, {})

    def alter_table_with_environment_context(self, dbname: str, tbl_name: str, new_tbl: hms.Table,
                                             ctx: hms.EnvironmentContext) -> None:
        self._alter_table(dbname, tbl_name, new_tbl, False, _env(ctx))

    def alter_table_with_cascade(self, dbname: str, tbl_name: str, new_tbl: hms.Table, cascade: bool) -> None:
        self._alter_table(dbname, tbl_name, new_tbl, bool(cascade), {})

    # ---- partitions ---------------------------------------------------------------------------------

    @staticmethod
    def _part_in(p: hms.Partition) -> m.Partition:
        part = from_thrift(p, m.Partition)
        part.dbName = _db(part.dbName)
        return part

    def _add(self, parts: list[hms.Partition], if_not_exists: bool = False, env: dict[str, str] | None = None,
             single: bool = False) -> list[m.Partition]:
        if not parts:
            return []
        ps = from_thrift_batch([_require(p, "partition") for p in parts], m.Partition)
        for p in ps:
            p.dbName = _db(p.dbName)
        return self.catalog.add_partitions(ps[0].dbName, ps[0].tableName, ps, if_not_exists, env, single=single)

    def add_partition(self, new_part: hms.Partition) -> hms.Partition:
        return to_thrift(self._add([new_part], single=True)[0])

    def add_partition_with_environment_context(self, new_part: hms.Partition,
                                               ctx: hms.EnvironmentContext) -> hms.Partition:
        return to_thrift(self._add([new_part], env=_env(ctx), single=True)[0])

    def add_partitions(self, new_parts: list[hms.Partition]) -> int:
        return len(self._add(new_parts or []))

    def add_partitions_req(self, request: hms.AddPartitionsRequest) -> hms.AddPartitionsResult:
        req = _require(request, "request")
        parts = req.parts or []
        for p in parts:
            if (_db(p.dbName) or "").lower() != _db(req.dbName).lower() or (p.tableName or "").lower() != (
                    req.tblName or "").lower():
                raise E.MetaError("Partition does not belong to target table " f"{_db(req.dbName)}.{req.tblName}")
        added = self._add(parts, bool(req.ifNotExists))
        return hms.AddPartitionsResult(partitions=to_thrift(added) if req.needResult in (None, True) else None)

    def append_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> hms.Partition:
        return to_thrift(self.catalog.append_partition(_db(db_name), tbl_name, part_vals))

    def append_partition_with_environment_context(self, db_name: str, tbl_name: str, part_vals: list[str],
                                                  ctx: hms.EnvironmentContext) -> hms.Partition:
        return to_thrift(self.catalog.append_partition(_db(db_name), tbl_name, part_vals, env=_env(ctx)))

    def append_partition_by_name(self, db_name: str, tbl_name: str, part_name: str) -> hms.Partition:
        return to_thrift(self.catalog.append_partition(_db(db_name), tbl_name, name=part_name))

    def append_partition_by_name_with_environment_context(self, db_name: str, tbl_name: str, part_name: str,
                                                          ctx: hms.EnvironmentContext) -> hms.Partition:
        return to_thrift(self.catalog.append_partition(_db(db_name), tbl_name, name=part_name, env=_env(ctx)))

    def drop_partition(self, db_name: str, tbl_name: str, part_vals: list[str], deleteData: bool) -> bool:
        self.catalog.drop_partitions(_db(db_name), tbl_name, values=part_vals, delete_data=bool(deleteData))
        return True

    def drop_partition_with_environment_context(self, db_name: str, tbl_name: str, part_vals: list[str],
                                                deleteData: bool, ctx: hms.EnvironmentContext) -> bool:
        return self.drop_partition(db_name, tbl_name, part_vals, deleteData)

    def drop_partition_by_name(self, db_name: str, tbl_name: str, part_name: str, deleteData: bool) -> bool:
        self.catalog.drop_partitions(_db(db_name), tbl_name, names=[part_name], delete_data=bool(deleteData))
        return True

    def drop_partition_by_name_with_environment_context(self, db_name: str, tbl_name: str, part_name: str,
                                                        deleteData: bool, ctx: hms.EnvironmentContext) -> bool:
        return self.drop_partition_by_name(db_name, tbl_name, part_name, deleteData)

    def drop_partitions_req(self, req: hms.DropPartitionsRequest) -> hms.DropPartitionsResult:
        req = _require(req, "request")
        parts = req.parts
        if parts is None or (parts.names is None and parts.exprs is None):
            raise E.MetaError("Partition spec must have either names or exprs")
        if_exists = req.ifExists is not False
        names = parts.names
        if parts.exprs is not None:  # Hive's DROP PARTITION by comparison: each expression's partitions
            matched = [n for x in parts.exprs
                       for n in self.catalog.partition_names_by_expr(_db(req.dbName), req.tblName,
                                                                     _require(x, "expression").expr or b"")]
            if len(matched) < len(parts.exprs) and not if_exists:
                raise E.NoSuchObject("Some partitions to drop are missing")
            names = list(dict.fromkeys(matched))
        dropped = self.catalog.drop_partitions(_db(req.dbName), req.tblName, names=names,
                                               delete_data=req.deleteData is not False, if_exists=if_exists)
        return hms.DropPartitionsResult(partitions=to_thrift(dropped) if req.needResult else None)

    def get_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> hms.Partition:
        return to_thrift(self.catalog.get_partition(_db(db_name), tbl_name, part_vals or []))

    def get_partition_with_auth(self, db_name: str, tbl_name: str, part_vals: list[str], user: str,
                                groups: list[str]) -> hms.Partition:
        return self.get_partition(db_name, tbl_name, part_vals)

    def get_partition_by_name(self, db_name: str, tbl_name: str, part_name: str) -> hms.Partition:
        return to_thrift(self.catalog.get_partition_by_name(_db(db_name), tbl_name, part_name))

    def get_partitions(self, db_name: str, tbl_name: str, max_parts: int) -> list[hms.Partition]:
        return to_thrift(self.catalog.get_partitions(_db(db_name), tbl_name, _max(max_parts)))

    def get_partitions_with_auth(self, db_name: str, tbl_name: str, max_parts: int, user: str,
                                 groups: list[str]) -> list[hms.Partition]:
        return self.get_partitions(db_name, tbl_name, max_parts)

    def get_partition_names(self, db_name: str, tbl_name: str, max_parts: int) -> list[str]:
        return self.catalog.get_partition_names(_db(db_name), tbl_name, _max(max_parts))

    def get_partitions_ps(self, db_name: str, tbl_name: str, part_vals: list[str],
                          max_parts: int) -> list[hms.Partition]:
        return to_thrift(self.catalog.get_partitions_ps(_db(db_name), tbl_name, part_vals or [], _max(max_parts)))

    def get_partitions_ps_with_auth(self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int,
                                    user: str, groups: list[str]) -> list[hms.Partition]:
        return self.get_partitions_ps(db_name, tbl_name, part_vals, max_parts)

    def get_partition_names_ps(self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int) -> list[str]:
        return self.catalog.get_partition_names_ps(_db(db_name), tbl_name, part_vals or [], _max(max_parts))

    def get_partitions_by_filter(self, db_name: str, tbl_name: str, filter: str, max_parts: int) -> list[hms.Partition]:
        return to_thrift(self.catalog.get_partitions_by_filter(_db(db_name), tbl_name, filter, _max(max_parts)))

    def get_num_partitions_by_filter(self, db_name: str, tbl_name: str, filter: str) -> int:
        return self.catalog.count_partitions_by_filter(_db(db_name), tbl_name, filter)

    def get_partitions_by_expr(self, req: hms.PartitionsByExprRequest) -> hms.PartitionsByExprResult:
        req = _require(req, "request")
        _check_catalog(req)
        try:
            parts = self.catalog.get_partitions_by_expr(_db(req.dbName), req.tblName, req.expr or b"",
                                                        req.defaultPartitionName,
                                                        _max(req.maxParts))
        except E.ExprUnreadable as e:
            # what Hive's client takes for a server without the call: it prunes on its own side (correctly),
            # where all partitions with hasUnknownPartitions would fail its DROP PARTITION
            raise TApplicationException(TApplicationException.UNKNOWN_METHOD,
                                        f"get_partitions_by_expr: {e.message}") from None
        return hms.PartitionsByExprResult(partitions=to_thrift(parts), hasUnknownPartitions=False)

    def get_partitions_by_names(self, db_name: str, tbl_name: str, names: list[str]) -> list[hms.Partition]:
        return to_thrift(self.catalog.get_partitions_by_names(_db(db_name), tbl_name, names or []))

    def get_partitions_by_names_req(self, req: hms.GetPartitionsByNamesRequest) -> hms.GetPartitionsByNamesResult:
        req = _require(req, "request")
        parts = self.catalog.get_partitions_by_names(_db(req.db_name), req.tbl_name, req.names or [])
        return hms.GetPartitionsByNamesResult(partitions=to_thrift(parts))

    def _alter_parts(self, db_name: str, tbl_name: str, parts: list[hms.Partition], env: dict[str, str]) -> None:
        self.catalog.alter_partitions(_db(db_name), tbl_name, [self._part_in(p) for p in parts or []], env)

    def alter_partition(self, db_name: str, tbl_name: str, new_part: hms.Partition) -> None:
        self._alter_parts(db_name, tbl_name, [_require(new_part, "partition")], {})

    def alter_partitions(self, db_name: str, tbl_name: str, new_parts: list[hms.Partition]) -> None:
        self._alter_parts(db_name, tbl_name, new_parts, {})

    def alter_partitions_with_environment_context(self, db_name: str, tbl_name: str, new_parts: list[hms.Partition],
                                                  ctx: hms.EnvironmentContext) -> None:
        self._alter_parts(db_name, tbl_name, new_parts, _env(ctx))

    def alter_partition_with_environment_context(self, db_name: str, tbl_name: str, new_part: hms.Partition,
                                                 ctx: hms.EnvironmentContext) -> None:
        self._alter_parts(db_name, tbl_name, [_require(new_part, "partition")], _env(ctx))

    def rename_partition(self, db_name: str, tbl_name: str, part_vals: list[str], new_part: hms.Partition) -> None:
        self.catalog.rename_partition(_db(db_name), tbl_name, part_vals or [],
                                      self._part_in(_require(new_part, "partition")))

    def partition_name_to_vals(self, part_name: str) -> list[str]:
        if not part_name:
            return []
        return [v for _, v in split_part_name(part_name)]

    def partition_name_to_spec(self, part_name: str) -> dict[str, str]:
        if not part_name:
            return {}
        return dict(split_part_name(part_name))

    # ---- column statistics --------------------------------------------------------------------------

    @staticmethod
    def _stats_in(stats: hms.ColumnStatistics) -> m.ColumnStatistics:
        stats = _require(stats, "statistics")
        if stats.statsDesc is None or stats.statsObj is None:
            raise E.InvalidInput("Column statistics need a description and objects")
        d = stats.statsDesc
        try:
            objs = [stats_obj_from_thrift(o) for o in stats.statsObj]
        except ValueError as e:
            raise E.InvalidInput(str(e)) from None
        return m.ColumnStatistics(m.ColumnStatisticsDesc(bool(d.isTblLevel), _db(d.dbName), d.tableName or "",
                                                         d.partName, d.lastAnalyzed), objs, stats.engine or "hive")

    def update_table_column_statistics(self, stats_obj: hms.ColumnStatistics) -> bool:
        s = self._stats_in(stats_obj)
        if not s.statsDesc.isTblLevel:
            raise E.InvalidInput("Statistics are not table-level")
        self.catalog.update_column_statistics(s)
        return True

    def update_partition_column_statistics(self, stats_obj: hms.ColumnStatistics) -> bool:
        s = self._stats_in(stats_obj)
        s.statsDesc.isTblLevel = False
        self.catalog.update_column_statistics(s)
        return True

    def get_table_column_statistics(self, db_name: str, tbl_name: str, col_name: str) -> hms.ColumnStatistics:
        cs = self.catalog.get_table_column_statistics(_db(db_name), tbl_name, [col_name])
        if cs is None:
            raise E.NoSuchObject(f"Statistics for {db_name}.{tbl_name}.{col_name} not found")
        return to_thrift(cs)

    def get_partition_column_statistics(self, db_name: str, tbl_name: str, part_name: str,
                                        col_name: str) -> hms.ColumnStatistics:
        found = self.catalog.get_partition_column_statistics(_db(db_name), tbl_name, [part_name], [col_name])
        if not found:
            raise E.NoSuchObject(f"Statistics for {db_name}.{tbl_name} partition {part_name} column {col_name} "
                                 "not found")
        return to_thrift(next(iter(found.values())))

    def get_table_statistics_req(self, request: hms.TableStatsRequest) -> hms.TableStatsResult:
        req = _require(request, "request")
        _check_catalog(req)
        cs = self.catalog.get_table_column_statistics(_db(req.dbName), req.tblName, req.colNames or [],
                                                      req.engine or "hive")
        return hms.TableStatsResult(tableStats=[stats_obj_to_thrift(o) for o in cs.statsObj] if cs else [])

    def get_partitions_statistics_req(self, request: hms.PartitionsStatsRequest) -> hms.PartitionsStatsResult:
        req = _require(request, "request")
        _check_catalog(req)
        found = self.catalog.get_partition_column_statistics(_db(req.dbName), req.tblName, req.partNames or [],
                                                             req.colNames or [], req.engine or "hive")
        return hms.PartitionsStatsResult(partStats={n: [stats_obj_to_thrift(o) for o in cs.statsObj]
                                                    for n, cs in found.items()})

    def delete_partition_column_statistics(self, db_name: str, tbl_name: str, part_name: str, col_name: str,
                                           engine: str) -> bool:
        return self.catalog.delete_column_statistics(_db(db_name), tbl_name, part_name, col_name, engine)

    def delete_table_column_statistics(self, db_name: str, tbl_name: str, col_name: str, engine: str) -> bool:
        return self.catalog.delete_column_statistics(_db(db_name), tbl_name, None, col_name, engine)

    def get_aggr_stats_for(self, request: hms.PartitionsStatsRequest) -> hms.AggrStats:
        req = _require(request, "request")
        _check_catalog(req)
        objs, found = self.catalog.get_aggr_stats(_db(req.dbName), req.tblName or "", req.partNames or [],
                                                  req.colNames or [], req.engine or "hive")
        return hms.AggrStats(colStats=[stats_obj_to_thrift(o) for o in objs], partsFound=found)

    def set_aggr_stats_for(self, request: hms.SetPartitionsStatsRequest) -> bool:
        req = _require(request, "request")
        self.catalog.set_aggr_stats([self._stats_in(cs) for cs in req.colStats or []], bool(req.needMerge),
                                    req.engine or "hive")
        return True

    # ---- constraints (catalog/constraints.py) -------------------------------------------------------

    @staticmethod
    def _key_cols(kind: int, cols: list[Any] | None) -> list[cons.KeyColumn]:
        out = []
        for x in cols or []:
            k = cons.from_thrift(kind, _require(x, "constraint column"))
            k.db = _db(k.db)
            if k.ref_db is not None:
                k.ref_db = _db(k.ref_db)
            out.append(k)
        return out

    def create_table_with_constraints(self, tbl: hms.Table, primaryKeys: list[hms.SQLPrimaryKey],
                                      foreignKeys: list[hms.SQLForeignKey],
                                      uniqueConstraints: list[hms.SQLUniqueConstraint],
                                      notNullConstraints: list[hms.SQLNotNullConstraint],
                                      defaultConstraints: list[hms.SQLDefaultConstraint],
                                      checkConstraints: list[hms.SQLCheckConstraint]) -> None:
        given = ((cons.PRIMARY_KEY, primaryKeys), (cons.FOREIGN_KEY, foreignKeys), (cons.UNIQUE, uniqueConstraints),
                 (cons.NOT_NULL, notNullConstraints), (cons.DEFAULT, defaultConstraints),
                 (cons.CHECK, checkConstraints))
        by_kind = {kind: self._key_cols(kind, cols) for kind, cols in given if cols}
        self.catalog.create_table_with_constraints(self._table_in(tbl), by_kind)

    def drop_constraint(self, req: hms.DropConstraintRequest) -> None:
        req = _require(req, "request")
        self.catalog.drop_constraint(_db(req.dbname), req.tablename or "", req.constraintname or "")

    def add_primary_key(self, req: hms.AddPrimaryKeyRequest) -> None:
        self.catalog.add_constraints(cons.PRIMARY_KEY,
                                     self._key_cols(cons.PRIMARY_KEY, _require(req, "request").primaryKeyCols))

    def add_foreign_key(self, req: hms.AddForeignKeyRequest) -> None:
        self.catalog.add_constraints(cons.FOREIGN_KEY,
                                     self._key_cols(cons.FOREIGN_KEY, _require(req, "request").foreignKeyCols))

    def add_unique_constraint(self, req: hms.AddUniqueConstraintRequest) -> None:
        self.catalog.add_constraints(cons.UNIQUE,
                                     self._key_cols(cons.UNIQUE, _require(req, "request").uniqueConstraintCols))

    def add_not_null_constraint(self, req: hms.AddNotNullConstraintRequest) -> None:
        self.catalog.add_constraints(cons.NOT_NULL,
                                     self._key_cols(cons.NOT_NULL, _require(req, "request").notNullConstraintCols))

    def add_default_constraint(self, req: hms.AddDefaultConstraintRequest) -> None:
        self.catalog.add_constraints(cons.DEFAULT,
                                     self._key_cols(cons.DEFAULT, _require(req, "request").defaultConstraintCols))

    def add_check_constraint(self, req: hms.AddCheckConstraintRequest) -> None:
        self.catalog.add_constraints(cons.CHECK,
                                     self._key_cols(cons.CHECK, _require(req, "request").checkConstraintCols))

    def _constraints(self, kind: int, req: Any, db: str | None, table: str | None) -> list[Any]:
        if other_catalog(req.catName, db) is not None:  # Hive 3 reads them by catalog: none in another
            return []
        return [cons.to_thrift(k) for k in self.catalog.get_constraints(kind, _db(db), table or "")]

    def get_primary_keys(self, request: hms.PrimaryKeysRequest) -> hms.PrimaryKeysResponse:
        req = _require(request, "request")
        return hms.PrimaryKeysResponse(primaryKeys=self._constraints(cons.PRIMARY_KEY, req, req.db_name, req.tbl_name))

    def get_foreign_keys(self, request: hms.ForeignKeysRequest) -> hms.ForeignKeysResponse:
        req = _require(request, "request")
        if other_catalog(req.catName, req.foreign_db_name or req.parent_db_name) is not None:
            return hms.ForeignKeysResponse(foreignKeys=[])
        keys = self.catalog.get_foreign_keys(_db(req.parent_db_name) if req.parent_db_name else None,
                                             req.parent_tbl_name, _db(req.foreign_db_name) if req.foreign_db_name
                                             else None, req.foreign_tbl_name)
        return hms.ForeignKeysResponse(foreignKeys=[cons.to_thrift(k) for k in keys])

    def get_unique_constraints(self, request: hms.UniqueConstraintsRequest) -> hms.UniqueConstraintsResponse:
        req = _require(request, "request")
        return hms.UniqueConstraintsResponse(uniqueConstraints=self._constraints(cons.UNIQUE, req, req.db_name,
                                                                                 req.tbl_name))

    def get_not_null_constraints(self, request: hms.NotNullConstraintsRequest) -> hms.NotNullConstraintsResponse:
        req = _require(request, "request")
        return hms.NotNullConstraintsResponse(notNullConstraints=self._constraints(cons.NOT_NULL, req, req.db_name,
                                                                                   req.tbl_name))

    def get_default_constraints(self, request: hms.DefaultConstraintsRequest) -> hms.DefaultConstraintsResponse:
        req = _require(request, "request")
        return hms.DefaultConstraintsResponse(defaultConstraints=self._constraints(cons.DEFAULT, req, req.db_name,
                                                                                   req.tbl_name))

    def get_check_constraints(self, request: hms.CheckConstraintsRequest) -> hms.CheckConstraintsResponse:
        req = _require(request, "request")
        return hms.CheckConstraintsResponse(checkConstraints=self._constraints(cons.CHECK, req, req.db_name,
                                                                               req.tbl_name))

    def get_all_table_constraints(self, request: hms.AllTableConstraintsRequest) -> hms.AllTableConstraintsResponse:
        req = _require(request, "request")
        if other_catalog(req.catName, req.dbName) is not None:  # Hive reads them by catalog: none in another
            found: dict[int, list[Any]] = {kind: [] for kind in (cons.PRIMARY_KEY, cons.FOREIGN_KEY, cons.UNIQUE,
                                                                 cons.NOT_NULL, cons.DEFAULT, cons.CHECK)}
        else:
            found = {kind: [cons.to_thrift(k) for k in ks]
                     for kind, ks in self.catalog.get_all_constraints(_db(req.dbName), req.tblName or "").items()}
        return hms.AllTableConstraintsResponse(allTableConstraints=hms.SQLAllTableConstraints(
            primaryKeys=found[cons.PRIMARY_KEY], foreignKeys=found[cons.FOREIGN_KEY],
            uniqueConstraints=found[cons.UNIQUE], notNullConstraints=found[cons.NOT_NULL],
            defaultConstraints=found[cons.DEFAULT], checkConstraints=found[cons.CHECK]))

    # ---- functions ----------------------------------------------------------------------------------

    def create_function(self, func: hms.Function) -> None:
        fn = from_thrift(_require(func, "function"), m.Function)
        fn.dbName = _db(fn.dbName)
        self.catalog.create_function(fn)

    def drop_function(self, dbName: str, funcName: str) -> None:
        self.catalog.drop_function(_db(dbName), funcName)

    def alter_function(self, dbName: str, funcName: str, newFunc: hms.Function) -> None:
        fn = from_thrift(_require(newFunc, "function"), m.Function)
        self.catalog.alter_function(_db(dbName), funcName, fn)

    def get_functions(self, dbName: str, pattern: str) -> list[str]:
        return self.catalog.get_functions(_db(dbName), pattern)

    def get_function(self, dbName: str, funcName: str) -> hms.Function:
        return to_thrift(self.catalog.get_function(_db(dbName), funcName))

    def get_all_functions(self) -> hms.GetAllFunctionsResponse:
        return hms.GetAllFunctionsResponse(functions=to_thrift(self.catalog.get_all_functions()))

    # ---- notifications ------------------------------------------------------------------------------

    def fire_listener_event(self, rqst: hms.FireEventRequest) -> hms.FireEventResponse:
        rqst = _require(rqst, "request")
        data = rqst.data
        inserts = ([data.insertData] if data is not None and data.insertData is not None else []) + list(
            (data.insertDatas if data is not None else None) or [])
        if not inserts:
            raise TApplicationException(TApplicationException.PROTOCOL_ERROR, "only insert events can be fired")
        ids = []
        for ins in inserts:
            vals = ins.partitionVal or rqst.partitionVals
            # Hive 2.3 layout: files in field 1; Hive 3+: field 1 was its replace flag, files are field 2.
            files = ins.filesAdded if ins.filesAdded is not None else (ins.filesAddedChecksum or [])
            ids.append(self.catalog.fire_insert_event(_db(rqst.dbName), rqst.tableName or "", vals, False, files))
        return hms.FireEventResponse(eventIds=ids)

    def get_current_notificationEventId(self) -> hms.CurrentNotificationEventId:
        return hms.CurrentNotificationEventId(eventId=self.catalog.current_event_id())

    def get_next_notification(self, rqst: hms.NotificationEventRequest) -> hms.NotificationEventResponse:
        rqst = _require(rqst, "request")
        # dbName and tableNames are Hive 4's fields, absent from this IDL: read only if a struct carries them
        tables, db = getattr(rqst, "tableNames", None), getattr(rqst, "dbName", None)
        events = self.catalog.next_notifications(rqst.lastEvent or 0, rqst.maxEvents, rqst.eventTypeSkipList or (),
                                                 _db(db) if db else None, tables)
        return hms.NotificationEventResponse(events=[
            hms.NotificationEvent(eventId=e.eventId, eventTime=e.eventTime, eventType=e.eventType, dbName=e.dbName,
                                  tableName=e.tableName, message=e.message, messageFormat=e.messageFormat,
                                  catName=e.catName) for e in events])

    def get_notification_events_count(self,
                                      rqst: hms.NotificationEventsCountRequest) -> hms.NotificationEventsCountResponse:
        rqst = _require(rqst, "request")
        if other_catalog(getattr(rqst, "catName", None)) is not None:  # Hive 3 counts a catalog's events
            return hms.NotificationEventsCountResponse(eventsCount=0)
        n = self.catalog.events_count(rqst.fromEventId or 0, _db(rqst.dbName) if rqst.dbName else None,
                                      getattr(rqst, "toEventId", None), getattr(rqst, "limit", None))
        return hms.NotificationEventsCountResponse(eventsCount=n)

    # ---- locks and transactions (issue: Iceberg on the metastore) -----------------------------------

    def lock(self, rqst: hms.LockRequest) -> hms.LockResponse:
        rqst = _require(rqst, "request")
        comps = [Component(_require(c.type, "lock type"), _require(c.level, "lock level"), _db(c.dbname),
                           c.tablename, c.partitionname) for c in _require(rqst.component, "lock components")]
        lockid, state = self.catalog.locks.lock(comps, rqst.txnid, rqst.user or "", rqst.hostname or "",
                                                rqst.agentInfo)
        return hms.LockResponse(lockid=lockid, state=state)

    def check_lock(self, rqst: hms.CheckLockRequest) -> hms.LockResponse:
        rqst = _require(rqst, "request")
        lockid, state = self.catalog.locks.check_lock(_require(rqst.lockid, "lockid"), rqst.txnid)
        return hms.LockResponse(lockid=lockid, state=state)

    def unlock(self, rqst: hms.UnlockRequest) -> None:
        self.catalog.locks.unlock(_require(_require(rqst, "request").lockid, "lockid"))

    def show_locks(self, rqst: hms.ShowLocksRequest) -> hms.ShowLocksResponse:
        db = table = part = txnid = None
        if rqst is not None:
            db, table, part, txnid = (_db(rqst.dbname) if rqst.dbname else None), rqst.tablename, rqst.partname, \
                rqst.txnid
        locks = self.catalog.locks.show_locks(db, table, part, txnid)
        return hms.ShowLocksResponse(locks=[hms.ShowLocksResponseElement(
            lockid=x.lockid, dbname=x.db, tablename=x.table, partname=x.partition, state=x.state, type=x.type,
            txnid=x.txnid, lastheartbeat=x.last_heartbeat, acquiredat=x.acquired_at, user=x.user,
            hostname=x.host, heartbeatCount=x.heartbeat_count, agentInfo=x.agent_info,
            blockedByExtId=x.blocked_by, lockIdInternal=x.int_id) for x in locks])

    def heartbeat(self, ids: hms.HeartbeatRequest) -> None:
        ids = _require(ids, "heartbeat request")
        self.catalog.locks.heartbeat(ids.lockid, ids.txnid)

    def open_txns(self, rqst: hms.OpenTxnRequest) -> hms.OpenTxnsResponse:
        rqst = _require(rqst, "request")
        ids = self.catalog.locks.open_txns(rqst.num_txns, rqst.user or "", rqst.hostname or "", rqst.agentInfo)
        return hms.OpenTxnsResponse(txn_ids=ids)

    def abort_txn(self, rqst: hms.AbortTxnRequest) -> None:
        self.catalog.locks.abort_txn(_require(_require(rqst, "request").txnid, "txnid"))

    def commit_txn(self, rqst: hms.CommitTxnRequest) -> None:
        self.catalog.locks.commit_txn(_require(_require(rqst, "request").txnid, "txnid"))

    def get_open_txns(self) -> hms.GetOpenTxnsResponse:
        o = self.catalog.locks.get_open_txns()
        # in Hive 2.3's shape and Hive 3's at once: nothing in the call tells which client asks (wire_shapes.py)
        return cast(hms.GetOpenTxnsResponse, OpenTxnsEveryShape(
            o.high_water_mark, o.open_txns, o.min_open_txn, aborted_bits(o.open_txns, o.aborted)))

    def get_open_txns_req(self, getOpenTxnsRequest: hms.GetOpenTxnsRequest) -> hms.GetOpenTxnsResponse:  # noqa: N803
        """Hive 4's get_open_txns, in Hive 3's shape (only Hive 4 clients call it). Transactions keep no type here,
        so excludeTxnTypes excludes nothing: a read-only transaction writes no data, and a reader that counts
        it open sees every write it would have seen."""
        o = self.catalog.locks.get_open_txns()
        return hms.GetOpenTxnsResponse(txn_high_water_mark=o.high_water_mark, open_txns=o.open_txns,
                                       min_open_txn=o.min_open_txn,
                                       abortedBits=aborted_bits(o.open_txns, o.aborted))

    def abort_txns(self, rqst: hms.AbortTxnsRequest) -> None:
        self.catalog.locks.abort_txns(list(_require(_require(rqst, "request").txn_ids, "txn_ids")))

    def heartbeat_txn_range(self, txns: hms.HeartbeatTxnRangeRequest) -> hms.HeartbeatTxnRangeResponse:
        txns = _require(txns, "request")
        aborted, nosuch = self.catalog.locks.heartbeat_txn_range(_require(txns.min, "min"), _require(txns.max, "max"))
        return hms.HeartbeatTxnRangeResponse(aborted=aborted, nosuch=nosuch)

    def seed_txn_id(self, rqst: hms.SeedTxnIdRequest) -> None:
        self.catalog.locks.seed_txn_id(_require(_require(rqst, "request").seedTxnId, "seedTxnId"))

    def get_latest_txnid_in_conflict(self, txnId: int) -> int:  # noqa: N803  # Hive's parameter name
        return self.catalog.locks.latest_txnid_in_conflict(_require(txnId, "txnId"))

    get_latest_txnid_in_conflict.thrift_status = (  # type: ignore[attr-defined]
        "no effect", "always 0 (no conflict): no write set of updates and deletes is kept (Hive's WRITE_SET)")

    def get_valid_write_ids(self, rqst: hms.GetValidWriteIdsRequest) -> hms.GetValidWriteIdsResponse:
        rqst = _require(rqst, "request")
        tables = self.catalog.locks.valid_write_ids(list(_require(rqst.fullTableNames, "fullTableNames")),
                                                    rqst.validTxnList, rqst.writeId)
        return hms.GetValidWriteIdsResponse(tblValidWriteIds=[hms.TableValidWriteIds(
            fullTableName=t.full_name, writeIdHighWaterMark=t.high_water_mark, invalidWriteIds=t.invalid,
            minOpenWriteId=t.min_open, abortedBits=aborted_bits(t.invalid, t.aborted)) for t in tables])

    def allocate_table_write_ids(self, rqst: hms.AllocateTableWriteIdsRequest) -> hms.AllocateTableWriteIdsResponse:
        rqst = _require(rqst, "request")
        if rqst.replPolicy or rqst.srcTxnToWriteIdList:
            raise E.MetaError("Write ids of a replication policy's source transactions are not supported")
        pairs = self.catalog.locks.allocate_table_write_ids(
            _db(_require(rqst.dbName, "dbName")), _require(rqst.tableName, "tableName"),
            list(_require(rqst.txnIds, "txnIds")), bool(rqst.reallocate))
        return hms.AllocateTableWriteIdsResponse(txnToWriteIds=[hms.TxnToWriteId(txnId=t, writeId=w)
                                                                for t, w in pairs])

    def get_max_allocated_table_write_id(
            self, rqst: hms.MaxAllocatedTableWriteIdRequest) -> hms.MaxAllocatedTableWriteIdResponse:
        rqst = _require(rqst, "request")
        return hms.MaxAllocatedTableWriteIdResponse(maxWriteId=self.catalog.locks.max_allocated_write_id(
            _db(_require(rqst.dbName, "dbName")), _require(rqst.tableName, "tableName")))

    def seed_write_id(self, rqst: hms.SeedTableWriteIdsRequest) -> None:
        rqst = _require(rqst, "request")
        self.catalog.locks.seed_write_id(_db(_require(rqst.dbName, "dbName")), _require(rqst.tableName, "tableName"),
                                         _require(rqst.seedWriteId, "seedWriteId"))

    @staticmethod
    def _write_note(r: hms.WriteNotificationLogRequest) -> WriteNote:
        info = r.fileInfo
        # Hive 3's InsertEventRequestData: field 1 is its replace flag, the files are field 2 (see the IDL)
        files = (info.filesAdded if info.filesAdded is not None else info.filesAddedChecksum) if info else None
        return WriteNote(_require(r.txnId, "txnId"), _require(r.writeId, "writeId"),
                         list(r.partitionVals) if r.partitionVals is not None else None, list(files or []))

    def add_write_notification_log(self, rqst: hms.WriteNotificationLogRequest) -> hms.WriteNotificationLogResponse:
        rqst = _require(rqst, "request")
        self.catalog.locks.add_write_notifications(_db(_require(rqst.db, "db")), _require(rqst.table, "table"),
                                                   [self._write_note(rqst)])
        return hms.WriteNotificationLogResponse()

    def add_write_notification_log_in_batch(
            self, rqst: hms.WriteNotificationLogBatchRequest) -> hms.WriteNotificationLogBatchResponse:
        rqst = _require(rqst, "request")
        writes = [self._write_note(r) for r in _require(rqst.requestList, "requestList")]
        if writes:  # as Hive: an empty batch names no table to check
            self.catalog.locks.add_write_notifications(_db(_require(rqst.db, "db")), _require(rqst.table, "table"),
                                                       writes, batch=True)
        return hms.WriteNotificationLogBatchResponse()

    def get_open_txns_info(self) -> hms.GetOpenTxnsInfoResponse:
        hwm, rows = self.catalog.locks.get_open_txns_info()
        return hms.GetOpenTxnsInfoResponse(txn_high_water_mark=hwm, open_txns=[hms.TxnInfo(
            id=r.id, state=_TXN_STATES.get(r.state, _TXN_OPEN), user=r.user, hostname=r.host,
            agentInfo=r.agent_info or "Unknown", startedTime=r.started, lastHeartbeatTime=r.last_heartbeat)
            for r in rows])

    def compact(self, rqst: hms.CompactionRequest) -> None:
        self.compact2(rqst)

    def compact2(self, rqst: hms.CompactionRequest) -> hms.CompactionResponse:
        rqst = _require(rqst, "rqst")
        kind = _require(rqst.type, "type")
        if kind not in (_MINOR, _MAJOR):
            raise E.MetaError(f"Unexpected compaction type {kind}")
        cid, state, accepted = self.catalog.locks.compact(
            _db(_require(rqst.dbname, "dbname")).lower(), _require(rqst.tablename, "tablename").lower(),
            rqst.partitionname or None, kind == _MAJOR, rqst.runas, dict(rqst.properties or {}))
        return hms.CompactionResponse(id=cid, state=state, accepted=accepted)

    def show_compact(self, rqst: hms.ShowCompactRequest) -> hms.ShowCompactResponse:
        return hms.ShowCompactResponse(compacts=[hms.ShowCompactResponseElement(
            dbname=c.db, tablename=c.table, partitionname=c.partition, type=_MAJOR if c.type == "a" else _MINOR,
            state=COMPACTION_STATES.get(c.state, c.state), workerid=c.worker_id, start=c.start, runAs=c.run_as,
            hightestTxnId=c.highest_txn_id, hadoopJobId=c.hadoop_job_id or "None", id=c.id)
            for c in self.catalog.locks.show_compactions()])


if TYPE_CHECKING:
    def _implements(handler: Handler) -> hms.ThriftHiveMetastoreIface:
        """mypy checks every method against the IDL's signature (the stub hms_types.pyi)."""
        return handler
