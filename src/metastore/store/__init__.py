"""The relational store: Hive's tables in SQLAlchemy Core, migrations, and the queries the catalog needs."""
