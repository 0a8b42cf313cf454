"""roles, privileges and delegation tokens

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26 05:42:00.000000
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

_MYSQL: dict[str, Any] = dict(mariadb_charset='utf8mb4', mariadb_collate='utf8mb4_bin', mysql_charset='utf8mb4',
              mysql_collate='utf8mb4_bin')
_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('DELEGATION_TOKENS',
    sa.Column('TOKEN_IDENT', sa.String(length=767), nullable=False),
    sa.Column('TOKEN', sa.String(length=767), nullable=True),
    sa.PrimaryKeyConstraint('TOKEN_IDENT', name=op.f('PK_DELEGATION_TOKENS')),
    **_MYSQL
    )
    op.create_table('GLOBAL_PRIVS',
    sa.Column('USER_GRANT_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('CREATE_TIME', sa.Integer(), nullable=False),
    sa.Column('GRANT_OPTION', sa.SmallInteger(), server_default='0', nullable=False),
    sa.Column('GRANTOR', sa.String(length=128), nullable=False),
    sa.Column('GRANTOR_TYPE', sa.String(length=128), nullable=False),
    sa.Column('PRINCIPAL_NAME', sa.String(length=128), nullable=False),
    sa.Column('PRINCIPAL_TYPE', sa.String(length=128), nullable=False),
    sa.Column('USER_PRIV', sa.String(length=128), nullable=False),
    sa.PrimaryKeyConstraint('USER_GRANT_ID', name=op.f('PK_GLOBAL_PRIVS')),
    sa.UniqueConstraint('PRINCIPAL_NAME', 'PRINCIPAL_TYPE', 'USER_PRIV', name=op.f('UQ_GLOBAL_PRIVS_PRINCIPAL_NAME_PRINCIPAL_TYPE_USER_PRIV')),
    **_MYSQL
    )
    op.create_table('MASTER_KEYS',
    sa.Column('KEY_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('MASTER_KEY', sa.String(length=767), nullable=True),
    sa.PrimaryKeyConstraint('KEY_ID', name=op.f('PK_MASTER_KEYS')),
    **_MYSQL
    )
    op.create_table('ROLES',
    sa.Column('ROLE_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('CREATE_TIME', sa.Integer(), nullable=False),
    sa.Column('OWNER_NAME', sa.String(length=128), nullable=True),
    sa.Column('ROLE_NAME', sa.String(length=128), nullable=False),
    sa.PrimaryKeyConstraint('ROLE_ID', name=op.f('PK_ROLES')),
    sa.UniqueConstraint('ROLE_NAME', name=op.f('UQ_ROLES_ROLE_NAME')),
    **_MYSQL
    )
    op.create_table('DB_PRIVS',
    sa.Column('DB_GRANT_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('DB_ID', _ID, nullable=False),
    sa.Column('CREATE_TIME', sa.Integer(), nullable=False),
    sa.Column('GRANT_OPTION', sa.SmallInteger(), server_default='0', nullable=False),
    sa.Column('GRANTOR', sa.String(length=128), nullable=False),
    sa.Column('GRANTOR_TYPE', sa.String(length=128), nullable=False),
    sa.Column('PRINCIPAL_NAME', sa.String(length=128), nullable=False),
    sa.Column('PRINCIPAL_TYPE', sa.String(length=128), nullable=False),
    sa.Column('DB_PRIV', sa.String(length=128), nullable=False),
    sa.ForeignKeyConstraint(['DB_ID'], ['DBS.DB_ID'], name=op.f('FK_DB_PRIVS_DB_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('DB_GRANT_ID', name=op.f('PK_DB_PRIVS')),
    sa.UniqueConstraint('DB_ID', 'PRINCIPAL_NAME', 'PRINCIPAL_TYPE', 'DB_PRIV', name=op.f('UQ_DB_PRIVS_DB_ID_PRINCIPAL_NAME_PRINCIPAL_TYPE_DB_PRIV')),
    **_MYSQL
    )
    op.create_index('IX_DB_PRIVS_PRINCIPAL_NAME_PRINCIPAL_TYPE', 'DB_PRIVS', ['PRINCIPAL_NAME', 'PRINCIPAL_TYPE'], unique=False)
    op.create_table('ROLE_MAP',
    sa.Column('ROLE_GRANT_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('ADD_TIME', sa.Integer(), nullable=False),
    sa.Column('GRANT_OPTION', sa.SmallInteger(), server_default='0', nullable=False),
    sa.Column('GRANTOR', sa.String(length=128), nullable=False),
    sa.Column('GRANTOR_TYPE', sa.String(length=128), nullable=False),
    sa.Column('PRINCIPAL_NAME', sa.String(length=128), nullable=False),
    sa.Column('PRINCIPAL_TYPE', sa.String(length=128), nullable=False),
    sa.Column('ROLE_ID', _ID, nullable=False),
    sa.ForeignKeyConstraint(['ROLE_ID'], ['ROLES.ROLE_ID'], name=op.f('FK_ROLE_MAP_ROLE_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('ROLE_GRANT_ID', name=op.f('PK_ROLE_MAP')),
    sa.UniqueConstraint('ROLE_ID', 'PRINCIPAL_NAME', 'PRINCIPAL_TYPE', name=op.f('UQ_ROLE_MAP_ROLE_ID_PRINCIPAL_NAME_PRINCIPAL_TYPE')),
    **_MYSQL
    )
    op.create_index('IX_ROLE_MAP_PRINCIPAL_NAME_PRINCIPAL_TYPE', 'ROLE_MAP', ['PRINCIPAL_NAME', 'PRINCIPAL_TYPE'], unique=False)
    op.create_table('TBL_PRIVS',
    sa.Column('TBL_GRANT_ID', _ID, autoincrement=True, nullable=False),
    sa.Column('TBL_ID', _ID, nullable=False),
    sa.Column('CREATE_TIME', sa.Integer(), nullable=False),
    sa.Column('GRANT_OPTION', sa.SmallInteger(), server_default='0', nullable=False),
    sa.Column('GRANTOR', sa.String(length=128), nullable=False),
    sa.Column('GRANTOR_TYPE', sa.String(length=128), nullable=False),
    sa.Column('PRINCIPAL_NAME', sa.String(length=128), nullable=False),
    sa.Column('PRINCIPAL_TYPE', sa.String(length=128), nullable=False),
    sa.Column('TBL_PRIV', sa.String(length=128), nullable=False),
    sa.ForeignKeyConstraint(['TBL_ID'], ['TBLS.TBL_ID'], name=op.f('FK_TBL_PRIVS_TBL_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('TBL_GRANT_ID', name=op.f('PK_TBL_PRIVS')),
    sa.UniqueConstraint('TBL_ID', 'PRINCIPAL_NAME', 'PRINCIPAL_TYPE', 'TBL_PRIV', name=op.f('UQ_TBL_PRIVS_TBL_ID_PRINCIPAL_NAME_PRINCIPAL_TYPE_TBL_PRIV')),
    **_MYSQL
    )
    op.create_index('IX_TBL_PRIVS_PRINCIPAL_NAME_PRINCIPAL_TYPE', 'TBL_PRIVS', ['PRINCIPAL_NAME', 'PRINCIPAL_TYPE'], unique=False)


def downgrade() -> None:
    op.drop_index('IX_TBL_PRIVS_PRINCIPAL_NAME_PRINCIPAL_TYPE', table_name='TBL_PRIVS')
    op.drop_table('TBL_PRIVS')
    op.drop_index('IX_ROLE_MAP_PRINCIPAL_NAME_PRINCIPAL_TYPE', table_name='ROLE_MAP')
    op.drop_table('ROLE_MAP')
    op.drop_index('IX_DB_PRIVS_PRINCIPAL_NAME_PRINCIPAL_TYPE', table_name='DB_PRIVS')
    op.drop_table('DB_PRIVS')
    op.drop_table('ROLES')
    op.drop_table('MASTER_KEYS')
    op.drop_table('GLOBAL_PRIVS')
    op.drop_table('DELEGATION_TOKENS')
