"""SQL of scheduled queries, their executions and replication metrics (tables in schema.py, migration 0004).

Claiming a due query is one conditional UPDATE (ACTIVE_EXECUTION_ID still NULL), so of several servers on
one database exactly one starts an execution, and a query never has two executions at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from .schema import replication_metrics as RM
from .schema import scheduled_executions as SE
from .schema import scheduled_queries as SQ

if TYPE_CHECKING:
    from .store import Store

NAMESPACE = "hive"


class _Taken(Exception):
    pass


class ScheduledStore:
    def __init__(self, engine: Engine, namespace: str = NAMESPACE) -> None:
        self.engine = engine
        self.ns = namespace

    @classmethod
    def of(cls, store: Store, namespace: str = NAMESPACE) -> ScheduledStore:
        """The scheduled queries on the same database (and engine) as `store`: what the layers above pass."""
        return cls(store.engine, namespace)

    # ---- scheduled queries ------------------------------------------------------------------------------

    def get(self, name: str) -> dict[str, Any] | None:
        with self.engine.connect() as c:
            r = c.execute(sa.select(SQ).where(SQ.c.CLUSTER_NAMESPACE == self.ns, SQ.c.SCHEDULE_NAME == name)).first()
        return dict(r._mapping) if r else None

    def create(self, name: str, schedule: str, user: str, enabled: bool, query: str, next_execution: int) -> None:
        with self.engine.begin() as c:
            c.execute(sa.insert(SQ).values(SCHEDULE_NAME=name, CLUSTER_NAMESPACE=self.ns, ENABLED=enabled, USER=user,
                                           SCHEDULE=schedule, QUERY=query, NEXT_EXECUTION=next_execution))

    def update(self, name: str, **values: Any) -> bool:
        with self.engine.begin() as c:
            n = c.execute(sa.update(SQ).where(SQ.c.CLUSTER_NAMESPACE == self.ns, SQ.c.SCHEDULE_NAME == name)
                          .values(**values)).rowcount
        return n > 0

    def drop(self, name: str) -> bool:
        with self.engine.begin() as c:
            ids = [r[0] for r in c.execute(sa.select(SQ.c.SCHEDULED_QUERY_ID).where(
                SQ.c.CLUSTER_NAMESPACE == self.ns, SQ.c.SCHEDULE_NAME == name))]
            if not ids:
                return False
            c.execute(sa.delete(SE).where(SE.c.SCHEDULED_QUERY_ID.in_(ids)))
            c.execute(sa.delete(SQ).where(SQ.c.SCHEDULED_QUERY_ID.in_(ids)))
        return True

    def queries(self) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(
                sa.select(SQ).where(SQ.c.CLUSTER_NAMESPACE == self.ns).order_by(SQ.c.SCHEDULED_QUERY_ID))]

    def due(self, now: int) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            # NEXT_EXECUTION 0: ALTER ... EXECUTE asked for one run now, enabled or not
            return [dict(r._mapping) for r in c.execute(sa.select(SQ).where(
                SQ.c.CLUSTER_NAMESPACE == self.ns, SQ.c.ACTIVE_EXECUTION_ID.is_(None),
                sa.or_(sa.and_(SQ.c.ENABLED.is_(True), SQ.c.NEXT_EXECUTION <= now), SQ.c.NEXT_EXECUTION == 0))
                .order_by(SQ.c.NEXT_EXECUTION))]

    # ---- executions --------------------------------------------------------------------------------------

    def claim(self, query_id: int, next_execution: int, now: int, executor: str) -> int | None:
        """Start an execution of the query unless one runs; its id, or None when another took it."""
        try:
            with self.engine.begin() as c:
                key = c.execute(sa.insert(SE).values(
                    SCHEDULED_QUERY_ID=query_id, EXECUTOR_QUERY_ID=executor, STATE="EXECUTING", START_TIME=now,
                    LAST_UPDATE_TIME=now)).inserted_primary_key
                assert key is not None, "an INSERT of one row"
                exec_id = key[0]
                n = c.execute(sa.update(SQ).where(SQ.c.SCHEDULED_QUERY_ID == query_id,
                                                  SQ.c.ACTIVE_EXECUTION_ID.is_(None))
                              .values(ACTIVE_EXECUTION_ID=exec_id, NEXT_EXECUTION=next_execution)).rowcount
                if n != 1:
                    raise _Taken
        except _Taken:  # rolled back: the execution row goes too
            return None
        return int(exec_id)

    def finish(self, query_id: int, exec_id: int, state: str, now: int, error: str | None) -> None:
        with self.engine.begin() as c:
            c.execute(sa.update(SE).where(SE.c.SCHEDULED_EXECUTION_ID == exec_id).values(
                STATE=state, END_TIME=now, LAST_UPDATE_TIME=now, ERROR_MESSAGE=(error or None) and error[:2000]))
            c.execute(sa.update(SQ).where(SQ.c.SCHEDULED_QUERY_ID == query_id,
                                          SQ.c.ACTIVE_EXECUTION_ID == exec_id).values(ACTIVE_EXECUTION_ID=None))

    def abandon_stale(self, older_than: int, now: int) -> int:
        """Executions whose server died (no update since `older_than`): TIMED_OUT, and their query freed."""
        with self.engine.begin() as c:
            stale = [r[0] for r in c.execute(sa.select(SE.c.SCHEDULED_EXECUTION_ID).where(
                SE.c.STATE == "EXECUTING", SE.c.LAST_UPDATE_TIME < older_than))]
            if not stale:
                return 0
            c.execute(sa.update(SE).where(SE.c.SCHEDULED_EXECUTION_ID.in_(stale)).values(
                STATE="TIMED_OUT", END_TIME=now, LAST_UPDATE_TIME=now, ERROR_MESSAGE="the executing server stopped"))
            c.execute(sa.update(SQ).where(SQ.c.ACTIVE_EXECUTION_ID.in_(stale)).values(ACTIVE_EXECUTION_ID=None))
        return len(stale)

    def touch(self, exec_id: int, now: int) -> None:
        with self.engine.begin() as c:
            c.execute(sa.update(SE).where(SE.c.SCHEDULED_EXECUTION_ID == exec_id).values(LAST_UPDATE_TIME=now))

    def executions(self) -> list[dict[str, Any]]:
        q = (sa.select(SE, SQ.c.SCHEDULE_NAME).join(SQ, SQ.c.SCHEDULED_QUERY_ID == SE.c.SCHEDULED_QUERY_ID)
             .where(SQ.c.CLUSTER_NAMESPACE == self.ns).order_by(SE.c.SCHEDULED_EXECUTION_ID))
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(q)]

    # ---- replication metrics ------------------------------------------------------------------------------

    def put_metrics(self, exec_id: int, policy: str, dump_exec_id: int, metadata: str, progress: str,
                    start: int) -> None:
        with self.engine.begin() as c:
            c.execute(sa.delete(RM).where(RM.c.RM_SCHEDULED_EXECUTION_ID == exec_id))
            c.execute(sa.insert(RM).values(RM_SCHEDULED_EXECUTION_ID=exec_id, RM_POLICY=policy,
                                           RM_DUMP_EXECUTION_ID=dump_exec_id, RM_METADATA=metadata,
                                           RM_PROGRESS=progress, RM_START_TIME=start, MESSAGE_FORMAT="json"))

    def metrics(self) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(sa.select(RM).order_by(RM.c.RM_SCHEDULED_EXECUTION_ID))]
