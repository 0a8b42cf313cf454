"""scheduled queries and replication metrics: Hive 4's SCHEDULED_QUERIES, SCHEDULED_EXECUTIONS, REPLICATION_METRICS

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 05:00:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

_MYSQL: dict[str, Any] = dict(mariadb_charset='utf8mb4', mariadb_collate='utf8mb4_bin', mysql_charset='utf8mb4',
              mysql_collate='utf8mb4_bin')
_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('SCHEDULED_QUERIES',
    sa.Column('SCHEDULED_QUERY_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('SCHEDULE_NAME', sa.String(length=256), nullable=False),
    sa.Column('CLUSTER_NAMESPACE', sa.String(length=256), nullable=False),
    sa.Column('ENABLED', sa.Boolean(), nullable=False),
    sa.Column('USER', sa.String(length=256), nullable=False),
    sa.Column('SCHEDULE', sa.String(length=256), nullable=False),
    sa.Column('QUERY', sa.Text(), nullable=False),
    sa.Column('NEXT_EXECUTION', sa.BigInteger(), nullable=True),
    sa.Column('ACTIVE_EXECUTION_ID', sa.BigInteger(), nullable=True),
    sa.PrimaryKeyConstraint('SCHEDULED_QUERY_ID', name=op.f('PK_SCHEDULED_QUERIES')),
    sa.UniqueConstraint('CLUSTER_NAMESPACE', 'SCHEDULE_NAME',
                        name=op.f('UQ_SCHEDULED_QUERIES_CLUSTER_NAMESPACE_SCHEDULE_NAME')),
    **_MYSQL
    )
    op.create_table('SCHEDULED_EXECUTIONS',
    sa.Column('SCHEDULED_EXECUTION_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('SCHEDULED_QUERY_ID', _ID, nullable=False),
    sa.Column('EXECUTOR_QUERY_ID', sa.String(length=256), nullable=True),
    sa.Column('STATE', sa.String(length=256), nullable=False),
    sa.Column('START_TIME', sa.BigInteger(), nullable=False),
    sa.Column('END_TIME', sa.BigInteger(), nullable=True),
    sa.Column('ERROR_MESSAGE', sa.String(length=2000), nullable=True),
    sa.Column('LAST_UPDATE_TIME', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['SCHEDULED_QUERY_ID'], ['SCHEDULED_QUERIES.SCHEDULED_QUERY_ID'],
                            name=op.f('FK_SCHEDULED_EXECUTIONS_SCHEDULED_QUERY_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('SCHEDULED_EXECUTION_ID', name=op.f('PK_SCHEDULED_EXECUTIONS')),
    **_MYSQL
    )
    op.create_index('IX_SCHEDULED_EXECUTIONS_SCHEDULED_QUERY_ID', 'SCHEDULED_EXECUTIONS', ['SCHEDULED_QUERY_ID'],
                    unique=False)
    op.create_table('REPLICATION_METRICS',
    sa.Column('RM_SCHEDULED_EXECUTION_ID', _ID, autoincrement=False, nullable=False),
    sa.Column('RM_POLICY', sa.String(length=256), nullable=False),
    sa.Column('RM_DUMP_EXECUTION_ID', sa.BigInteger(), nullable=False),
    sa.Column('RM_METADATA', sa.Text(), nullable=True),
    sa.Column('RM_PROGRESS', sa.Text(), nullable=True),
    sa.Column('RM_START_TIME', sa.BigInteger(), nullable=False),
    sa.Column('MESSAGE_FORMAT', sa.String(length=16), server_default='json', nullable=True),
    sa.PrimaryKeyConstraint('RM_SCHEDULED_EXECUTION_ID', name=op.f('PK_REPLICATION_METRICS')),
    **_MYSQL
    )
    op.create_index('IX_REPLICATION_METRICS_RM_POLICY', 'REPLICATION_METRICS', ['RM_POLICY'], unique=False)


def downgrade() -> None:
    op.drop_index('IX_REPLICATION_METRICS_RM_POLICY', table_name='REPLICATION_METRICS')
    op.drop_table('REPLICATION_METRICS')
    op.drop_index('IX_SCHEDULED_EXECUTIONS_SCHEDULED_QUERY_ID', table_name='SCHEDULED_EXECUTIONS')
    op.drop_table('SCHEDULED_EXECUTIONS')
    op.drop_table('SCHEDULED_QUERIES')
