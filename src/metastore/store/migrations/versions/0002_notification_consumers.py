"""notification consumers: durable cursors of relays and replication policies, honoured by retention

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 02:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('NOTIFICATION_CONSUMERS',
    sa.Column('NAME', sa.String(length=256), nullable=False),
    sa.Column('LAST_EVENT_ID', sa.BigInteger(), nullable=False),
    sa.Column('UPDATED', sa.BigInteger(), nullable=False),
    sa.Column('OWNER', sa.String(length=256), nullable=True),
    sa.Column('LEASE_UNTIL', sa.BigInteger(), nullable=True),
    sa.PrimaryKeyConstraint('NAME', name=op.f('PK_NOTIFICATION_CONSUMERS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )


def downgrade() -> None:
    op.drop_table('NOTIFICATION_CONSUMERS')
