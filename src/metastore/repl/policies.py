"""Scheduled replication policies: the statements run against the store, and the scheduler that runs due
policies inside `metastore serve` (one execution of a policy at a time), recording executions and metrics.

A policy's REPL DUMP runs against the metastore whose scheduler runs it (the source), its REPL LOAD into
that metastore (the target), as Hive runs each on its own cluster; the staging root in the WITH clause is
what the two share.

EXECUTED AS: a policy runs as its user. Its run's clients act for that user (repl/client.py: set_ugi, or over
Kerberos a SASL authorization id the server accepts from its own principal or a proxy user), so the metastore
authorizes the dump's reads and the load's writes as that user's; a run the user may not make fails and is
recorded FAILED with the metastore's refusal. With authorization "sql", only an administrator, or the user
itself, may create a policy executing as a user, change one, or drop one (`execute`'s `is_admin`).
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ..core import identity
from ..store.scheduled import ScheduledStore
from ..thrift.client import HIVE_ERRORS, hive_message
from . import dump, load, root_dir
from .errors import NeedsReset, NothingToDo, ReplError
from .schedule import next_time
from .staging import DUMP_EXECUTION
from .statements import Alter, Create, Drop, ReplQuery, Select, StatementError, parse

log = logging.getLogger(__name__)
CONSUMER_PREFIX = "repl.policy."  # notification consumers that keep the events a dump policy still needs

# Columns of the three views, as Hive 4 names them.
COLUMNS = {
    "scheduled_queries": ["scheduled_query_id", "schedule_name", "enabled", "cluster_namespace", "schedule",
                          "user", "query", "next_execution", "active_execution_id"],
    "scheduled_executions": ["scheduled_execution_id", "schedule_name", "executor_query_id", "state",
                             "start_time", "end_time", "elapsed", "error_message", "last_update_time"],
    "replication_metrics": ["scheduled_execution_id", "policy_name", "dump_execution_id", "metadata", "progress",
                            "start_time", "message_format"],
}


def _now() -> int:
    return int(time.time())


def _fmt_time(t: int | None) -> str | None:
    return None if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


class NotAllowed(ReplError):
    """The caller may not make a policy execute as that user, nor change one that does; nothing was changed."""


def _may_act_as(caller: str, user: str, is_admin: Callable[[str], bool] | None, what: str) -> None:
    if is_admin is None or caller == user or is_admin(caller):
        return
    raise NotAllowed(f"User {caller} does not have privileges to {what} (only an administrator or {user} may)")


def execute(store: ScheduledStore, text: str, user: str | None = None,
            is_admin: Callable[[str], bool] | None = None) -> tuple[list[str], list[list[Any]]] | str:
    """Run one statement: rows (columns, rows) for a SELECT, a message otherwise.

    `user`: who runs it (the command's OS user by default); `is_admin(name)`: with authorization "sql", whether
    a user is an administrator, who alone may make or change a policy executing as someone else (NotAllowed)."""
    caller = user or getpass.getuser()
    st = parse(text)
    if isinstance(st, Select):
        return select(store, st)
    if isinstance(st, Create):
        if store.get(st.name) is not None:
            raise StatementError(f"scheduled query {st.name} already exists")
        runs_as = st.user or caller
        _may_act_as(caller, runs_as, is_admin, f"create a scheduled query executed as {runs_as}")
        store.create(st.name, st.schedule, runs_as, st.enabled, st.query.text(), next_time(st.schedule, time.time()))
        return f"created scheduled query {st.name}"
    q = store.get(st.name)
    if q is None:
        raise StatementError(f"scheduled query {st.name} does not exist")
    verb = "drop" if isinstance(st, Drop) else "alter"
    _may_act_as(caller, q["USER"], is_admin, f"{verb} scheduled query {st.name}, executed as {q['USER']}")
    if isinstance(st, Drop):
        if not store.drop(st.name):
            raise StatementError(f"scheduled query {st.name} does not exist")
        return f"dropped scheduled query {st.name}"
    assert isinstance(st, Alter)
    if st.user is not None:
        _may_act_as(caller, st.user, is_admin, f"make scheduled query {st.name} execute as {st.user}")
    if st.schedule is not None:
        store.update(st.name, SCHEDULE=st.schedule, NEXT_EXECUTION=next_time(st.schedule, time.time()))
    elif st.user is not None:
        store.update(st.name, USER=st.user)
    elif st.enabled is not None:
        values: dict[str, Any] = {"ENABLED": st.enabled}
        if st.enabled:  # resumes at its next time, not at every time it missed
            values["NEXT_EXECUTION"] = next_time(q["SCHEDULE"], time.time())
        store.update(st.name, **values)
    elif st.query is not None:
        store.update(st.name, QUERY=st.query.text())
    elif st.execute:
        store.update(st.name, NEXT_EXECUTION=0)  # due now; the scheduler picks it up on its next poll
    return f"altered scheduled query {st.name}"


def _match(row: dict[str, Any], where: dict[str, str]) -> bool:
    return all(str(row.get(k)) == v or (isinstance(row.get(k), bool) and str(row[k]).lower() == v.lower())
               for k, v in where.items())


def select(store: ScheduledStore, st: Select) -> tuple[list[str], list[list[Any]]]:
    cols = COLUMNS[st.view]
    unknown = [c for c in st.where if c not in cols]
    if unknown:
        raise StatementError(f"unknown column {unknown[0]} of {st.view} (columns: {', '.join(cols)})")
    if st.view == "scheduled_queries":
        rows = [{"scheduled_query_id": q["SCHEDULED_QUERY_ID"], "schedule_name": q["SCHEDULE_NAME"],
                 "enabled": bool(q["ENABLED"]), "cluster_namespace": q["CLUSTER_NAMESPACE"], "schedule": q["SCHEDULE"],
                 "user": q["USER"], "query": q["QUERY"], "next_execution": _fmt_time(q["NEXT_EXECUTION"]),
                 "active_execution_id": q["ACTIVE_EXECUTION_ID"]} for q in store.queries()]
    elif st.view == "scheduled_executions":
        rows = [{"scheduled_execution_id": e["SCHEDULED_EXECUTION_ID"], "schedule_name": e["SCHEDULE_NAME"],
                 "executor_query_id": e["EXECUTOR_QUERY_ID"], "state": e["STATE"],
                 "start_time": _fmt_time(e["START_TIME"]), "end_time": _fmt_time(e["END_TIME"]),
                 "elapsed": (e["END_TIME"] or e["LAST_UPDATE_TIME"]) - e["START_TIME"],
                 "error_message": e["ERROR_MESSAGE"], "last_update_time": _fmt_time(e["LAST_UPDATE_TIME"])}
                for e in store.executions()]
    else:
        rows = [{"scheduled_execution_id": m["RM_SCHEDULED_EXECUTION_ID"], "policy_name": m["RM_POLICY"],
                 "dump_execution_id": m["RM_DUMP_EXECUTION_ID"], "metadata": m["RM_METADATA"],
                 "progress": m["RM_PROGRESS"], "start_time": m["RM_START_TIME"],
                 "message_format": m["MESSAGE_FORMAT"]} for m in store.metrics()]
    return cols, [[r[c] for c in cols] for r in rows if _match(r, st.where)]


# ---- running policies ---------------------------------------------------------------------------------------

def _query(text: str) -> ReplQuery:
    st = parse(f"CREATE SCHEDULED QUERY x EVERY 1 SECONDS AS {text}")
    return st.query


def run_policy(store: ScheduledStore, q: dict[str, Any], exec_id: int, self_uri: str,
               on_dump: Callable[[str, int], None] | None = None) -> None:
    """One execution of a policy: its REPL DUMP or LOAD, its execution row, its metrics row.

    `on_dump(policy, to_id)` after a dump: the events up to `to_id` are in the staging directory, so the
    source need keep only the later ones."""
    started = _now()
    rq = _query(q["QUERY"])
    opts = dict(rq.options)
    root = root_dir(opts)
    stage = {"name": f"REPL_{rq.action}", "status": "IN_PROGRESS", "startTime": started, "endTime": 0,
             "metrics": []}
    progress: dict[str, Any] = {"status": "IN_PROGRESS", "stages": [stage]}
    meta: dict[str, Any] = {"dbName": rq.into or rq.db if rq.action == "LOAD" else rq.db, "replicationType": None,
                            "stagingDir": root, "lastReplId": None, "failoverMetadataLoc": None}
    dump_exec = exec_id
    state, error = "FINISHED", None

    def metrics() -> None:
        store.put_metrics(exec_id, q["SCHEDULE_NAME"], dump_exec, json.dumps(meta), json.dumps(progress), started)

    metrics()
    # the run's clients act for the policy's user (repl/client.py): the metastore authorizes the run as its
    runner = identity.Principal(q["USER"], method=identity.CLAIMED)
    try:
        if rq.action == "DUMP":
            with identity.acting_as(runner):
                r = dump(self_uri, rq.db, root, exec_id)
            if on_dump is not None:
                on_dump(q["SCHEDULE_NAME"], r.to_id)
            meta.update(replicationType=r.dump_type, stagingDir=r.path, lastReplId=r.to_id)
            stage["metrics"] = [{"name": n, "currentCount": v, "totalCount": v} for n, v in
                                (("TABLES", r.tables), ("PARTITIONS", r.partitions), ("FUNCTIONS", r.functions),
                                 ("EVENTS", r.events))]
        else:
            with identity.acting_as(runner):
                results = load(self_uri, rq.db, rq.into or rq.db, root, opts)
            r2 = results[-1]
            try:
                with open(os.path.join(r2.path, DUMP_EXECUTION)) as f:
                    dump_exec = int(f.read().strip())
            except (OSError, ValueError):
                dump_exec = 0  # a dump taken by hand
            meta.update(replicationType=r2.dump_type, stagingDir=r2.path, lastReplId=r2.to_id)
            stage["metrics"] = [{"name": n, "currentCount": sum(getattr(x, a) for x in results),
                                 "totalCount": sum(getattr(x, a) for x in results)} for n, a in
                                (("TABLES", "tables"), ("PARTITIONS", "partitions"), ("FUNCTIONS", "functions"),
                                 ("EVENTS", "events"), ("FILES", "files_copied"), ("BYTES", "bytes_copied"))]
        stage["status"] = progress["status"] = "SUCCESS"
    except NothingToDo as e:
        stage["status"] = progress["status"] = "SKIPPED"
        stage["message"] = str(e)
    except NeedsReset as e:
        stage["status"] = progress["status"] = "FAILED_ADMIN"
        state, error = "FAILED", str(e)
    except Exception as e:  # noqa: BLE001 - recorded on the execution; the scheduler carries on
        stage["status"] = progress["status"] = "FAILED"
        refused = isinstance(e, HIVE_ERRORS)  # the metastore's answer: the user may not, or the object is gone
        state, error = "FAILED", (str(e) if isinstance(e, ReplError) else hive_message(e) if refused
                                  else f"{type(e).__name__}: {e}")
        if not (isinstance(e, ReplError) or refused):
            log.exception("scheduled query %s failed", q["SCHEDULE_NAME"])
    stage["endTime"] = _now()
    if error:
        stage["errorLog"] = error
    metrics()
    store.finish(q["SCHEDULED_QUERY_ID"], exec_id, state, _now(), error)


class Scheduler:
    """Polls the store for due, enabled policies and runs each in its own thread."""

    def __init__(self, store: ScheduledStore, self_uri: str, poll: float = 1.0, catalog: Any = None) -> None:
        self.store = store
        self.catalog = catalog
        self.self_uri = self_uri
        self.poll = poll
        self.stop_event = threading.Event()
        self.executor_id = f"{os.uname().nodename}:{os.getpid()}"
        self.running: dict[int, threading.Thread] = {}

    def _keep_events(self, policy: str, to_id: int) -> None:
        """The policy as a registered consumer of the log: retention keeps the events after its last dump."""
        name = CONSUMER_PREFIX + policy
        self.catalog.register_consumer(name, to_id)
        self.catalog.set_consumer(name, to_id)

    def _forget_dropped(self) -> None:
        names = {q["SCHEDULE_NAME"] for q in self.store.queries()}
        for c in self.catalog.consumers():
            if c.name.startswith(CONSUMER_PREFIX) and c.name[len(CONSUMER_PREFIX):] not in names:
                self.catalog.remove_consumer(c.name)

    def tick(self) -> None:
        now = _now()
        self.store.abandon_stale(now - 600, now)
        if self.catalog is not None:
            self._forget_dropped()
        for q in self.store.due(now):
            exec_id = self.store.claim(q["SCHEDULED_QUERY_ID"], next_time(q["SCHEDULE"], now), now, self.executor_id)
            if exec_id is None:
                continue
            t = threading.Thread(target=self._run, args=(q, exec_id), name=f"policy-{q['SCHEDULE_NAME']}",
                                 daemon=True)
            self.running[exec_id] = t
            t.start()
        for exec_id, t in list(self.running.items()):
            if t.is_alive():
                self.store.touch(exec_id, now)
            else:
                del self.running[exec_id]

    def _run(self, q: dict[str, Any], exec_id: int) -> None:
        try:
            run_policy(self.store, q, exec_id, self.self_uri, self._keep_events if self.catalog else None)
        except Exception as e:  # noqa: BLE001 - the store failed: leave the execution to abandon_stale
            log.exception("scheduled query %s: %s", q["SCHEDULE_NAME"], e)

    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - a store outage: try again next poll
                log.exception("scheduler poll failed")
            self.stop_event.wait(self.poll)

    def start(self) -> threading.Thread:
        t = threading.Thread(target=self.run, name="repl-scheduler", daemon=True)
        t.start()
        return t


def start_scheduler(catalog: Any, self_uri: str) -> Scheduler:
    """The scheduler of `metastore serve`, on the server's own store."""
    s = Scheduler(ScheduledStore.of(catalog.store), self_uri, catalog=catalog)
    s.start()
    return s
