"""metastore: a Hive-Metastore-compatible metadata service in Python."""

__version__ = "0.1.0"
