"""constraints: Hive's KEY_CONSTRAINTS

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28 06:00:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

_MYSQL: dict[str, Any] = dict(mariadb_charset='utf8mb4', mariadb_collate='utf8mb4_bin', mysql_charset='utf8mb4',
              mysql_collate='utf8mb4_bin')
_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('KEY_CONSTRAINTS',
    sa.Column('KC_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('CHILD_CD_ID', _ID, nullable=True),
    sa.Column('CHILD_INTEGER_IDX', sa.Integer(), nullable=True),
    sa.Column('CHILD_TBL_ID', _ID, nullable=True),
    sa.Column('PARENT_CD_ID', _ID, nullable=True),
    sa.Column('PARENT_INTEGER_IDX', sa.Integer(), nullable=False),
    sa.Column('PARENT_TBL_ID', _ID, nullable=False),
    sa.Column('POSITION', sa.BigInteger(), nullable=False),
    sa.Column('CONSTRAINT_NAME', sa.String(length=400), nullable=False),
    sa.Column('CONSTRAINT_TYPE', sa.SmallInteger(), nullable=False),
    sa.Column('UPDATE_RULE', sa.SmallInteger(), nullable=True),
    sa.Column('DELETE_RULE', sa.SmallInteger(), nullable=True),
    sa.Column('ENABLE_VALIDATE_RELY', sa.SmallInteger(), nullable=False),
    sa.Column('DEFAULT_VALUE', sa.String(length=400), nullable=True),
    sa.ForeignKeyConstraint(['CHILD_TBL_ID'], ['TBLS.TBL_ID'], name=op.f('FK_KEY_CONSTRAINTS_CHILD_TBL_ID'),
                            ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['PARENT_TBL_ID'], ['TBLS.TBL_ID'], name=op.f('FK_KEY_CONSTRAINTS_PARENT_TBL_ID'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('KC_ID', name=op.f('PK_KEY_CONSTRAINTS')),
    **_MYSQL
    )
    op.create_index('IX_KEY_CONSTRAINTS_CHILD_TBL_ID', 'KEY_CONSTRAINTS', ['CHILD_TBL_ID'], unique=False)
    op.create_index('IX_KEY_CONSTRAINTS_CONSTRAINT_NAME', 'KEY_CONSTRAINTS', ['CONSTRAINT_NAME'], unique=False)
    op.create_index('IX_KEY_CONSTRAINTS_PARENT_TBL_ID', 'KEY_CONSTRAINTS', ['PARENT_TBL_ID'], unique=False)


def downgrade() -> None:
    op.drop_index('IX_KEY_CONSTRAINTS_PARENT_TBL_ID', table_name='KEY_CONSTRAINTS')
    op.drop_index('IX_KEY_CONSTRAINTS_CONSTRAINT_NAME', table_name='KEY_CONSTRAINTS')
    op.drop_index('IX_KEY_CONSTRAINTS_CHILD_TBL_ID', table_name='KEY_CONSTRAINTS')
    op.drop_table('KEY_CONSTRAINTS')
