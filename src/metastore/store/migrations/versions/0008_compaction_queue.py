"""compaction requests: Hive's COMPACTION_QUEUE and NEXT_COMPACTION_QUEUE_ID (ALTER TABLE ... COMPACT, SHOW
COMPACTIONS)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28 06:35:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

_MYSQL: dict[str, Any] = dict(mariadb_charset='utf8mb4', mariadb_collate='utf8mb4_bin', mysql_charset='utf8mb4',
              mysql_collate='utf8mb4_bin')


def upgrade() -> None:
    op.create_table('COMPACTION_QUEUE',
    sa.Column('CQ_ID', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('CQ_DATABASE', sa.String(length=128), nullable=False),
    sa.Column('CQ_TABLE', sa.String(length=256), nullable=False),
    sa.Column('CQ_PARTITION', sa.String(length=767), nullable=True),
    sa.Column('CQ_STATE', sa.String(length=1), nullable=False),
    sa.Column('CQ_TYPE', sa.String(length=1), nullable=False),
    sa.Column('CQ_TBLPROPERTIES', sa.String(length=2048), nullable=True),
    sa.Column('CQ_WORKER_ID', sa.String(length=128), nullable=True),
    sa.Column('CQ_START', sa.BigInteger(), nullable=True),
    sa.Column('CQ_RUN_AS', sa.String(length=128), nullable=True),
    sa.Column('CQ_HIGHEST_TXN_ID', sa.BigInteger(), nullable=True),
    sa.Column('CQ_HADOOP_JOB_ID', sa.String(length=32), nullable=True),
    sa.PrimaryKeyConstraint('CQ_ID', name=op.f('PK_COMPACTION_QUEUE')),
    **_MYSQL
    )
    op.create_index('IX_COMPACTION_QUEUE_TABLE', 'COMPACTION_QUEUE', ['CQ_DATABASE', 'CQ_TABLE'], unique=False)
    op.create_table('NEXT_COMPACTION_QUEUE_ID',
    sa.Column('NCQ_NEXT', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint('NCQ_NEXT', name=op.f('PK_NEXT_COMPACTION_QUEUE_ID')),
    **_MYSQL
    )
    op.bulk_insert(sa.table('NEXT_COMPACTION_QUEUE_ID', sa.column('NCQ_NEXT')), [{'NCQ_NEXT': 1}])


def downgrade() -> None:
    op.drop_table('NEXT_COMPACTION_QUEUE_ID')
    op.drop_index('IX_COMPACTION_QUEUE_TABLE', table_name='COMPACTION_QUEUE')
    op.drop_table('COMPACTION_QUEUE')
