"""initial schema: Hive's tables and the notification log

Revision ID: 0001
Revises: 
Create Date: 2026-11-22 01:02:17.640108
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('CDS',
    sa.Column('CD_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.PrimaryKeyConstraint('CD_ID', name=op.f('PK_CDS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('DBS',
    sa.Column('DB_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('NAME', sa.String(length=128), nullable=False),
    sa.Column('DESC', sa.String(length=4000), nullable=True),
    sa.Column('DB_LOCATION_URI', sa.String(length=4000), nullable=False),
    sa.Column('OWNER_NAME', sa.String(length=128), nullable=True),
    sa.Column('OWNER_TYPE', sa.String(length=10), nullable=True),
    sa.Column('CTLG_NAME', sa.String(length=256), server_default='hive', nullable=False),
    sa.Column('CREATE_TIME', sa.Integer(), nullable=True),
    sa.PrimaryKeyConstraint('DB_ID', name=op.f('PK_DBS')),
    sa.UniqueConstraint('CTLG_NAME', 'NAME', name=op.f('UQ_DBS_CTLG_NAME_NAME')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('NOTIFICATION_LOG',
    sa.Column('NL_ID', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('EVENT_ID', sa.BigInteger(), nullable=False),
    sa.Column('EVENT_TIME', sa.Integer(), nullable=False),
    sa.Column('EVENT_TYPE', sa.String(length=32), nullable=False),
    sa.Column('CAT_NAME', sa.String(length=256), nullable=True),
    sa.Column('DB_NAME', sa.String(length=128), nullable=True),
    sa.Column('TBL_NAME', sa.String(length=256), nullable=True),
    sa.Column('MESSAGE', sa.Text().with_variant(mysql.LONGTEXT(), 'mariadb').with_variant(mysql.LONGTEXT(), 'mysql'), nullable=True),
    sa.Column('MESSAGE_FORMAT', sa.String(length=16), nullable=True),
    sa.PrimaryKeyConstraint('NL_ID', name=op.f('PK_NOTIFICATION_LOG')),
    sa.UniqueConstraint('EVENT_ID', name=op.f('UQ_NOTIFICATION_LOG_EVENT_ID')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    with op.batch_alter_table('NOTIFICATION_LOG', schema=None) as batch_op:
        batch_op.create_index('IX_NOTIFICATION_LOG_DB_TBL', ['DB_NAME', 'TBL_NAME'], unique=False)

    op.create_table('NOTIFICATION_SEQUENCE',
    sa.Column('NNI_ID', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('NEXT_EVENT_ID', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('NNI_ID', name=op.f('PK_NOTIFICATION_SEQUENCE')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('SERDES',
    sa.Column('SERDE_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('NAME', sa.String(length=128), nullable=True),
    sa.Column('SLIB', sa.String(length=4000), nullable=True),
    sa.Column('DESCRIPTION', sa.String(length=4000), nullable=True),
    sa.Column('SERIALIZER_CLASS', sa.String(length=4000), nullable=True),
    sa.Column('DESERIALIZER_CLASS', sa.String(length=4000), nullable=True),
    sa.Column('SERDE_TYPE', sa.Integer(), nullable=True),
    sa.PrimaryKeyConstraint('SERDE_ID', name=op.f('PK_SERDES')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('COLUMNS_V2',
    sa.Column('CD_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('INTEGER_IDX', sa.Integer(), nullable=False),
    sa.Column('COLUMN_NAME', sa.String(length=767), nullable=False),
    sa.Column('TYPE_NAME', sa.Text(), nullable=False),
    sa.Column('COMMENT', sa.String(length=4000), nullable=True),
    sa.ForeignKeyConstraint(['CD_ID'], ['CDS.CD_ID'], name=op.f('FK_COLUMNS_V2_CD_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('CD_ID', 'INTEGER_IDX', name=op.f('PK_COLUMNS_V2')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('DATABASE_PARAMS',
    sa.Column('DB_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('PARAM_KEY', sa.String(length=256), nullable=False),
    sa.Column('PARAM_VALUE', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['DB_ID'], ['DBS.DB_ID'], name=op.f('FK_DATABASE_PARAMS_DB_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('DB_ID', 'PARAM_KEY', name=op.f('PK_DATABASE_PARAMS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('FUNCS',
    sa.Column('FUNC_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('DB_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('FUNC_NAME', sa.String(length=128), nullable=False),
    sa.Column('CLASS_NAME', sa.String(length=4000), nullable=True),
    sa.Column('OWNER_NAME', sa.String(length=128), nullable=True),
    sa.Column('OWNER_TYPE', sa.String(length=10), nullable=True),
    sa.Column('CREATE_TIME', sa.Integer(), nullable=False),
    sa.Column('FUNC_TYPE', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['DB_ID'], ['DBS.DB_ID'], name=op.f('FK_FUNCS_DB_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('FUNC_ID', name=op.f('PK_FUNCS')),
    sa.UniqueConstraint('DB_ID', 'FUNC_NAME', name=op.f('UQ_FUNCS_DB_ID_FUNC_NAME')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('SDS',
    sa.Column('SD_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('CD_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('SERDE_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('INPUT_FORMAT', sa.String(length=4000), nullable=True),
    sa.Column('OUTPUT_FORMAT', sa.String(length=4000), nullable=True),
    sa.Column('LOCATION', sa.String(length=4000), nullable=True),
    sa.Column('IS_COMPRESSED', sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column('IS_STOREDASSUBDIRECTORIES', sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column('NUM_BUCKETS', sa.Integer(), server_default='-1', nullable=False),
    sa.Column('BUCKET_COLS', sa.Text(), nullable=True),
    sa.Column('SORT_COLS', sa.Text(), nullable=True),
    sa.Column('SKEWED_INFO', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['CD_ID'], ['CDS.CD_ID'], name=op.f('FK_SDS_CD_ID')),
    sa.ForeignKeyConstraint(['SERDE_ID'], ['SERDES.SERDE_ID'], name=op.f('FK_SDS_SERDE_ID')),
    sa.PrimaryKeyConstraint('SD_ID', name=op.f('PK_SDS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    with op.batch_alter_table('SDS', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('IX_SDS_CD_ID'), ['CD_ID'], unique=False)
        batch_op.create_index(batch_op.f('IX_SDS_SERDE_ID'), ['SERDE_ID'], unique=False)

    op.create_table('SERDE_PARAMS',
    sa.Column('SERDE_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('PARAM_KEY', sa.String(length=256), nullable=False),
    sa.Column('PARAM_VALUE', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['SERDE_ID'], ['SERDES.SERDE_ID'], name=op.f('FK_SERDE_PARAMS_SERDE_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('SERDE_ID', 'PARAM_KEY', name=op.f('PK_SERDE_PARAMS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('FUNC_RU',
    sa.Column('FUNC_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('INTEGER_IDX', sa.Integer(), nullable=False),
    sa.Column('RESOURCE_TYPE', sa.Integer(), nullable=False),
    sa.Column('RESOURCE_URI', sa.String(length=4000), nullable=True),
    sa.ForeignKeyConstraint(['FUNC_ID'], ['FUNCS.FUNC_ID'], name=op.f('FK_FUNC_RU_FUNC_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('FUNC_ID', 'INTEGER_IDX', name=op.f('PK_FUNC_RU')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('SD_PARAMS',
    sa.Column('SD_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('PARAM_KEY', sa.String(length=256), nullable=False),
    sa.Column('PARAM_VALUE', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['SD_ID'], ['SDS.SD_ID'], name=op.f('FK_SD_PARAMS_SD_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('SD_ID', 'PARAM_KEY', name=op.f('PK_SD_PARAMS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('TBLS',
    sa.Column('TBL_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('DB_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('TBL_NAME', sa.String(length=256), nullable=False),
    sa.Column('OWNER', sa.String(length=767), nullable=True),
    sa.Column('OWNER_TYPE', sa.String(length=10), nullable=True),
    sa.Column('CREATE_TIME', sa.Integer(), nullable=False),
    sa.Column('LAST_ACCESS_TIME', sa.Integer(), server_default='0', nullable=False),
    sa.Column('RETENTION', sa.Integer(), server_default='0', nullable=False),
    sa.Column('SD_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('TBL_TYPE', sa.String(length=128), nullable=True),
    sa.Column('VIEW_ORIGINAL_TEXT', sa.Text().with_variant(mysql.LONGTEXT(), 'mariadb').with_variant(mysql.LONGTEXT(), 'mysql'), nullable=True),
    sa.Column('VIEW_EXPANDED_TEXT', sa.Text().with_variant(mysql.LONGTEXT(), 'mariadb').with_variant(mysql.LONGTEXT(), 'mysql'), nullable=True),
    sa.Column('IS_REWRITE_ENABLED', sa.Boolean(), server_default=sa.false(), nullable=False),
    sa.Column('VERSION', sa.BigInteger(), server_default='1', nullable=False),
    sa.ForeignKeyConstraint(['DB_ID'], ['DBS.DB_ID'], name=op.f('FK_TBLS_DB_ID'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['SD_ID'], ['SDS.SD_ID'], name=op.f('FK_TBLS_SD_ID')),
    sa.PrimaryKeyConstraint('TBL_ID', name=op.f('PK_TBLS')),
    sa.UniqueConstraint('DB_ID', 'TBL_NAME', name=op.f('UQ_TBLS_DB_ID_TBL_NAME')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    with op.batch_alter_table('TBLS', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('IX_TBLS_SD_ID'), ['SD_ID'], unique=False)

    op.create_table('PARTITIONS',
    sa.Column('PART_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('TBL_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('PART_NAME', sa.String(length=767), nullable=False),
    sa.Column('CREATE_TIME', sa.Integer(), nullable=False),
    sa.Column('LAST_ACCESS_TIME', sa.Integer(), server_default='0', nullable=False),
    sa.Column('SD_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.ForeignKeyConstraint(['SD_ID'], ['SDS.SD_ID'], name=op.f('FK_PARTITIONS_SD_ID')),
    sa.ForeignKeyConstraint(['TBL_ID'], ['TBLS.TBL_ID'], name=op.f('FK_PARTITIONS_TBL_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('PART_ID', name=op.f('PK_PARTITIONS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    with op.batch_alter_table('PARTITIONS', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('IX_PARTITIONS_SD_ID'), ['SD_ID'], unique=False)
        batch_op.create_index('UQ_PARTITIONS_TBL_ID_PART_NAME', ['TBL_ID', 'PART_NAME'], unique=True, mysql_length={'PART_NAME': 760}, mariadb_length={'PART_NAME': 760})

    op.create_table('PARTITION_KEYS',
    sa.Column('TBL_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('INTEGER_IDX', sa.Integer(), nullable=False),
    sa.Column('PKEY_NAME', sa.String(length=128), nullable=False),
    sa.Column('PKEY_TYPE', sa.String(length=767), nullable=False),
    sa.Column('PKEY_COMMENT', sa.String(length=4000), nullable=True),
    sa.ForeignKeyConstraint(['TBL_ID'], ['TBLS.TBL_ID'], name=op.f('FK_PARTITION_KEYS_TBL_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('TBL_ID', 'INTEGER_IDX', name=op.f('PK_PARTITION_KEYS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('TABLE_PARAMS',
    sa.Column('TBL_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('PARAM_KEY', sa.String(length=256), nullable=False),
    sa.Column('PARAM_VALUE', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['TBL_ID'], ['TBLS.TBL_ID'], name=op.f('FK_TABLE_PARAMS_TBL_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('TBL_ID', 'PARAM_KEY', name=op.f('PK_TABLE_PARAMS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('TAB_COL_STATS',
    sa.Column('CS_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('TBL_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('COLUMN_NAME', sa.String(length=767), nullable=False),
    sa.Column('COLUMN_TYPE', sa.String(length=128), nullable=False),
    sa.Column('STATS_KIND', sa.String(length=16), nullable=False),
    sa.Column('LONG_LOW_VALUE', sa.BigInteger(), nullable=True),
    sa.Column('LONG_HIGH_VALUE', sa.BigInteger(), nullable=True),
    sa.Column('DOUBLE_LOW_VALUE', sa.Float(precision=53), nullable=True),
    sa.Column('DOUBLE_HIGH_VALUE', sa.Float(precision=53), nullable=True),
    sa.Column('BIG_DECIMAL_LOW_VALUE', sa.String(length=4000), nullable=True),
    sa.Column('BIG_DECIMAL_HIGH_VALUE', sa.String(length=4000), nullable=True),
    sa.Column('NUM_NULLS', sa.BigInteger(), nullable=False),
    sa.Column('NUM_DISTINCTS', sa.BigInteger(), nullable=True),
    sa.Column('BIT_VECTOR', sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mariadb').with_variant(mysql.LONGBLOB(), 'mysql'), nullable=True),
    sa.Column('AVG_COL_LEN', sa.Float(precision=53), nullable=True),
    sa.Column('MAX_COL_LEN', sa.BigInteger(), nullable=True),
    sa.Column('NUM_TRUES', sa.BigInteger(), nullable=True),
    sa.Column('NUM_FALSES', sa.BigInteger(), nullable=True),
    sa.Column('LAST_ANALYZED', sa.BigInteger(), nullable=False),
    sa.Column('ENGINE', sa.String(length=128), server_default='hive', nullable=False),
    sa.ForeignKeyConstraint(['TBL_ID'], ['TBLS.TBL_ID'], name=op.f('FK_TAB_COL_STATS_TBL_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('CS_ID', name=op.f('PK_TAB_COL_STATS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    with op.batch_alter_table('TAB_COL_STATS', schema=None) as batch_op:
        batch_op.create_index('UQ_TAB_COL_STATS_COL', ['TBL_ID', 'COLUMN_NAME', 'ENGINE'], unique=True, mysql_length={'COLUMN_NAME': 600}, mariadb_length={'COLUMN_NAME': 600})

    op.create_table('PARTITION_KEY_VALS',
    sa.Column('PART_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('INTEGER_IDX', sa.Integer(), nullable=False),
    sa.Column('PART_KEY_VAL', sa.String(length=256), nullable=True),
    sa.ForeignKeyConstraint(['PART_ID'], ['PARTITIONS.PART_ID'], name=op.f('FK_PARTITION_KEY_VALS_PART_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('PART_ID', 'INTEGER_IDX', name=op.f('PK_PARTITION_KEY_VALS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    with op.batch_alter_table('PARTITION_KEY_VALS', schema=None) as batch_op:
        batch_op.create_index('IX_PARTITION_KEY_VALS_IDX_VAL', ['INTEGER_IDX', 'PART_KEY_VAL'], unique=False)

    op.create_table('PARTITION_PARAMS',
    sa.Column('PART_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('PARAM_KEY', sa.String(length=256), nullable=False),
    sa.Column('PARAM_VALUE', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['PART_ID'], ['PARTITIONS.PART_ID'], name=op.f('FK_PARTITION_PARAMS_PART_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('PART_ID', 'PARAM_KEY', name=op.f('PK_PARTITION_PARAMS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    op.create_table('PART_COL_STATS',
    sa.Column('CS_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('PART_ID', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('COLUMN_NAME', sa.String(length=767), nullable=False),
    sa.Column('COLUMN_TYPE', sa.String(length=128), nullable=False),
    sa.Column('STATS_KIND', sa.String(length=16), nullable=False),
    sa.Column('LONG_LOW_VALUE', sa.BigInteger(), nullable=True),
    sa.Column('LONG_HIGH_VALUE', sa.BigInteger(), nullable=True),
    sa.Column('DOUBLE_LOW_VALUE', sa.Float(precision=53), nullable=True),
    sa.Column('DOUBLE_HIGH_VALUE', sa.Float(precision=53), nullable=True),
    sa.Column('BIG_DECIMAL_LOW_VALUE', sa.String(length=4000), nullable=True),
    sa.Column('BIG_DECIMAL_HIGH_VALUE', sa.String(length=4000), nullable=True),
    sa.Column('NUM_NULLS', sa.BigInteger(), nullable=False),
    sa.Column('NUM_DISTINCTS', sa.BigInteger(), nullable=True),
    sa.Column('BIT_VECTOR', sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mariadb').with_variant(mysql.LONGBLOB(), 'mysql'), nullable=True),
    sa.Column('AVG_COL_LEN', sa.Float(precision=53), nullable=True),
    sa.Column('MAX_COL_LEN', sa.BigInteger(), nullable=True),
    sa.Column('NUM_TRUES', sa.BigInteger(), nullable=True),
    sa.Column('NUM_FALSES', sa.BigInteger(), nullable=True),
    sa.Column('LAST_ANALYZED', sa.BigInteger(), nullable=False),
    sa.Column('ENGINE', sa.String(length=128), server_default='hive', nullable=False),
    sa.ForeignKeyConstraint(['PART_ID'], ['PARTITIONS.PART_ID'], name=op.f('FK_PART_COL_STATS_PART_ID'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('CS_ID', name=op.f('PK_PART_COL_STATS')),
    mariadb_charset='utf8mb4',
    mariadb_collate='utf8mb4_bin',
    mysql_charset='utf8mb4',
    mysql_collate='utf8mb4_bin'
    )
    with op.batch_alter_table('PART_COL_STATS', schema=None) as batch_op:
        batch_op.create_index('UQ_PART_COL_STATS_COL', ['PART_ID', 'COLUMN_NAME', 'ENGINE'], unique=True, mysql_length={'COLUMN_NAME': 600}, mariadb_length={'COLUMN_NAME': 600})

    # the single row of the event-id sequence; the first event gets id 1, as in Hive
    seq = sa.table("NOTIFICATION_SEQUENCE", sa.column("NNI_ID"), sa.column("NEXT_EVENT_ID"))
    op.bulk_insert(seq, [{"NNI_ID": 1, "NEXT_EVENT_ID": 1}])


def downgrade() -> None:
    with op.batch_alter_table('PART_COL_STATS', schema=None) as batch_op:
        batch_op.drop_index('UQ_PART_COL_STATS_COL', mysql_length={'COLUMN_NAME': 600}, mariadb_length={'COLUMN_NAME': 600})

    op.drop_table('PART_COL_STATS')
    op.drop_table('PARTITION_PARAMS')
    with op.batch_alter_table('PARTITION_KEY_VALS', schema=None) as batch_op:
        batch_op.drop_index('IX_PARTITION_KEY_VALS_IDX_VAL')

    op.drop_table('PARTITION_KEY_VALS')
    with op.batch_alter_table('TAB_COL_STATS', schema=None) as batch_op:
        batch_op.drop_index('UQ_TAB_COL_STATS_COL', mysql_length={'COLUMN_NAME': 600}, mariadb_length={'COLUMN_NAME': 600})

    op.drop_table('TAB_COL_STATS')
    op.drop_table('TABLE_PARAMS')
    op.drop_table('PARTITION_KEYS')
    with op.batch_alter_table('PARTITIONS', schema=None) as batch_op:
        batch_op.drop_index('UQ_PARTITIONS_TBL_ID_PART_NAME', mysql_length={'PART_NAME': 760}, mariadb_length={'PART_NAME': 760})
        batch_op.drop_index(batch_op.f('IX_PARTITIONS_SD_ID'))

    op.drop_table('PARTITIONS')
    with op.batch_alter_table('TBLS', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('IX_TBLS_SD_ID'))

    op.drop_table('TBLS')
    op.drop_table('SD_PARAMS')
    op.drop_table('FUNC_RU')
    op.drop_table('SERDE_PARAMS')
    with op.batch_alter_table('SDS', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('IX_SDS_SERDE_ID'))
        batch_op.drop_index(batch_op.f('IX_SDS_CD_ID'))

    op.drop_table('SDS')
    op.drop_table('FUNCS')
    op.drop_table('DATABASE_PARAMS')
    op.drop_table('COLUMNS_V2')
    op.drop_table('SERDES')
    op.drop_table('NOTIFICATION_SEQUENCE')
    with op.batch_alter_table('NOTIFICATION_LOG', schema=None) as batch_op:
        batch_op.drop_index('IX_NOTIFICATION_LOG_DB_TBL')

    op.drop_table('NOTIFICATION_LOG')
    op.drop_table('DBS')
    op.drop_table('CDS')
