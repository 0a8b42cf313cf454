"""the store's properties: Hive's METASTORE_DB_PROPERTIES (the store's uuid, get_metastore_db_uuid)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28 06:10:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

_MYSQL: dict[str, Any] = dict(mariadb_charset='utf8mb4', mariadb_collate='utf8mb4_bin', mysql_charset='utf8mb4',
              mysql_collate='utf8mb4_bin')


def upgrade() -> None:
    op.create_table('METASTORE_DB_PROPERTIES',
    sa.Column('PROPERTY_KEY', sa.String(length=255), nullable=False),
    sa.Column('PROPERTY_VALUE', sa.String(length=1000), nullable=False),
    sa.Column('DESCRIPTION', sa.String(length=1000), nullable=True),
    sa.PrimaryKeyConstraint('PROPERTY_KEY', name=op.f('PK_METASTORE_DB_PROPERTIES')),
    **_MYSQL
    )


def downgrade() -> None:
    op.drop_table('METASTORE_DB_PROPERTIES')
