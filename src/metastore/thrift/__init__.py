"""The Hive Metastore Thrift definitions, loaded at import time by thriftpy2 from our own IDL.

For mypy, `hms` is the generated stub `hms_types.pyi` (scripts/gen_hms_stub.py writes it from the same IDL, and
a test checks it is current): thriftpy2 makes the structs at run time, so without it every struct is Any.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import thriftpy2

_HERE = os.path.dirname(__file__)

if TYPE_CHECKING:
    from . import hms_types as hms
else:
    # module_name ending in _thrift makes thriftpy2 register the module so its classes pickle by reference.
    hms = thriftpy2.load(
        os.path.join(_HERE, "hive_metastore.thrift"), module_name="hive_metastore_thrift", include_dirs=[_HERE]
    )
fb303 = hms.fb303

__all__ = ["hms", "fb303"]
