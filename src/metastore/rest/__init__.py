"""The Iceberg REST catalog front: Iceberg's REST protocol over HTTP, on the catalog service (see iceberg.py
for the mapping of namespaces and tables onto Hive's, server.py for the HTTP side)."""
