"""The Hive Metastore Thrift definitions, loaded at import time by thriftpy2 from our own IDL."""

from __future__ import annotations

import os

import thriftpy2

_HERE = os.path.dirname(__file__)

# module_name ending in _thrift makes thriftpy2 register the module so its classes pickle by reference.
hms = thriftpy2.load(
    os.path.join(_HERE, "hive_metastore.thrift"), module_name="hive_metastore_thrift", include_dirs=[_HERE]
)
fb303 = hms.fb303

__all__ = ["hms", "fb303"]
