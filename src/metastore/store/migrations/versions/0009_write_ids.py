"""write ids: Hive 3's TXN_TO_WRITE_ID, NEXT_WRITE_ID and TXN_WRITE_NOTIFICATION_LOG (allocate_table_write_ids,
get_valid_write_ids, add_write_notification_log)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28 10:10:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None

_MYSQL: dict[str, Any] = dict(mariadb_charset='utf8mb4', mariadb_collate='utf8mb4_bin', mysql_charset='utf8mb4',
              mysql_collate='utf8mb4_bin')
_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
_LONG_TEXT = sa.Text().with_variant(mysql.LONGTEXT(), 'mysql', 'mariadb')


def upgrade() -> None:
    op.create_table('TXN_TO_WRITE_ID',
    sa.Column('T2W_TXNID', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('T2W_DATABASE', sa.String(length=128), nullable=False),
    sa.Column('T2W_TABLE', sa.String(length=256), nullable=False),
    sa.Column('T2W_WRITEID', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('T2W_TXNID', 'T2W_DATABASE', 'T2W_TABLE', name=op.f('PK_TXN_TO_WRITE_ID')),
    sa.UniqueConstraint('T2W_DATABASE', 'T2W_TABLE', 'T2W_WRITEID',
                        name=op.f('UQ_TXN_TO_WRITE_ID_T2W_DATABASE_T2W_TABLE_T2W_WRITEID')),
    **_MYSQL
    )
    op.create_index('IX_TXN_TO_WRITE_ID_T2W_TXNID', 'TXN_TO_WRITE_ID', ['T2W_TXNID'], unique=False)
    op.create_table('NEXT_WRITE_ID',
    sa.Column('NWI_DATABASE', sa.String(length=128), nullable=False),
    sa.Column('NWI_TABLE', sa.String(length=256), nullable=False),
    sa.Column('NWI_NEXT', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('NWI_DATABASE', 'NWI_TABLE', name=op.f('PK_NEXT_WRITE_ID')),
    **_MYSQL
    )
    op.create_table('TXN_WRITE_NOTIFICATION_LOG',
    sa.Column('WNL_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('WNL_TXNID', sa.BigInteger(), nullable=False),
    sa.Column('WNL_WRITEID', sa.BigInteger(), nullable=False),
    sa.Column('WNL_DATABASE', sa.String(length=128), nullable=False),
    sa.Column('WNL_TABLE', sa.String(length=256), nullable=False),
    sa.Column('WNL_PARTITION', sa.String(length=767), nullable=False),
    sa.Column('WNL_TABLE_OBJ', _LONG_TEXT, nullable=False),
    sa.Column('WNL_PARTITION_OBJ', _LONG_TEXT, nullable=True),
    sa.Column('WNL_FILES', _LONG_TEXT, nullable=True),
    sa.Column('WNL_EVENT_TIME', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('WNL_ID', name=op.f('PK_TXN_WRITE_NOTIFICATION_LOG')),
    **_MYSQL
    )
    op.create_index('IX_TXN_WRITE_NOTIFICATION_LOG_WNL_TXNID', 'TXN_WRITE_NOTIFICATION_LOG', ['WNL_TXNID'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('IX_TXN_WRITE_NOTIFICATION_LOG_WNL_TXNID', table_name='TXN_WRITE_NOTIFICATION_LOG')
    op.drop_table('TXN_WRITE_NOTIFICATION_LOG')
    op.drop_table('NEXT_WRITE_ID')
    op.drop_index('IX_TXN_TO_WRITE_ID_T2W_TXNID', table_name='TXN_TO_WRITE_ID')
    op.drop_table('TXN_TO_WRITE_ID')
