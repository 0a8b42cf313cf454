"""locks and transactions: Hive's HIVE_LOCKS and TXNS, and their id sequences

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 02:30:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

_MYSQL: dict[str, Any] = dict(mariadb_charset='utf8mb4', mariadb_collate='utf8mb4_bin', mysql_charset='utf8mb4',
              mysql_collate='utf8mb4_bin')


def upgrade() -> None:
    op.create_table('HIVE_LOCKS',
    sa.Column('HL_LOCK_EXT_ID', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('HL_LOCK_INT_ID', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('HL_TXNID', sa.BigInteger(), server_default='0', nullable=False),
    sa.Column('HL_DB', sa.String(length=128), nullable=False),
    sa.Column('HL_TABLE', sa.String(length=256), nullable=True),
    sa.Column('HL_PARTITION', sa.String(length=767), nullable=True),
    sa.Column('HL_LOCK_STATE', sa.String(length=1), nullable=False),
    sa.Column('HL_LOCK_TYPE', sa.String(length=1), nullable=False),
    sa.Column('HL_LAST_HEARTBEAT', sa.BigInteger(), nullable=False),
    sa.Column('HL_ACQUIRED_AT', sa.BigInteger(), nullable=True),
    sa.Column('HL_USER', sa.String(length=128), nullable=False),
    sa.Column('HL_HOST', sa.String(length=128), nullable=False),
    sa.Column('HL_HEARTBEAT_COUNT', sa.Integer(), nullable=True),
    sa.Column('HL_AGENT_INFO', sa.String(length=128), nullable=True),
    sa.PrimaryKeyConstraint('HL_LOCK_EXT_ID', 'HL_LOCK_INT_ID', name=op.f('PK_HIVE_LOCKS')),
    **_MYSQL
    )
    op.create_index('IX_HIVE_LOCKS_HL_TXNID', 'HIVE_LOCKS', ['HL_TXNID'], unique=False)
    op.create_table('TXNS',
    sa.Column('TXN_ID', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('TXN_STATE', sa.String(length=1), nullable=False),
    sa.Column('TXN_STARTED', sa.BigInteger(), nullable=False),
    sa.Column('TXN_LAST_HEARTBEAT', sa.BigInteger(), nullable=False),
    sa.Column('TXN_USER', sa.String(length=128), nullable=False),
    sa.Column('TXN_HOST', sa.String(length=128), nullable=False),
    sa.Column('TXN_AGENT_INFO', sa.String(length=128), nullable=True),
    sa.PrimaryKeyConstraint('TXN_ID', name=op.f('PK_TXNS')),
    **_MYSQL
    )
    op.create_index('IX_TXNS_TXN_STATE', 'TXNS', ['TXN_STATE'], unique=False)
    op.create_table('NEXT_LOCK_ID',
    sa.Column('NL_NEXT', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint('NL_NEXT', name=op.f('PK_NEXT_LOCK_ID')),
    **_MYSQL
    )
    op.create_table('NEXT_TXN_ID',
    sa.Column('NTXN_NEXT', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint('NTXN_NEXT', name=op.f('PK_NEXT_TXN_ID')),
    **_MYSQL
    )
    op.bulk_insert(sa.table('NEXT_LOCK_ID', sa.column('NL_NEXT')), [{'NL_NEXT': 1}])
    op.bulk_insert(sa.table('NEXT_TXN_ID', sa.column('NTXN_NEXT')), [{'NTXN_NEXT': 1}])


def downgrade() -> None:
    op.drop_table('NEXT_TXN_ID')
    op.drop_table('NEXT_LOCK_ID')
    op.drop_index('IX_TXNS_TXN_STATE', table_name='TXNS')
    op.drop_table('TXNS')
    op.drop_index('IX_HIVE_LOCKS_HL_TXNID', table_name='HIVE_LOCKS')
    op.drop_table('HIVE_LOCKS')
