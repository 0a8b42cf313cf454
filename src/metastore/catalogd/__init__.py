"""catalogd: a versioned cache of the metastore, fed by its notification log, served to engines.

It talks to the metastore only through the Hive Metastore Thrift API, with the project's one client
(thrift/client.py MetastoreClient, reads retried once on a fresh connection).
"""
