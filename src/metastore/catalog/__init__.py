"""The catalog service: Hive's operations, validation, transactions and events, independent of any wire."""
