"""The typing stub of the Thrift module (src/metastore/thrift/hms_types.pyi) is what scripts/gen_hms_stub.py
writes from the IDL: a changed IDL without a regenerated stub fails here, not silently in mypy."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from scripts_support import load_script

from metastore.thrift import hms

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> ModuleType:
    return load_script("gen_hms_stub")


def test_the_stub_is_generated_from_the_idl() -> None:
    gen = _generator()
    assert gen.STUB.read_text() == gen.render(hms), "run .venv/bin/python scripts/gen_hms_stub.py"


def test_the_stub_declares_every_struct_field_and_service_method() -> None:
    text = (ROOT / "src" / "metastore" / "thrift" / "hms_types.pyi").read_text()
    for cls in hms.__thrift_meta__["structs"] + hms.__thrift_meta__["exceptions"]:
        assert f"class {cls.__name__}(" in text
        for _, spec in cls.thrift_spec.items():
            assert f"    {spec[1]}: " in text
    for name in hms.ThriftHiveMetastore.thrift_services:
        assert f"    def {name}(self" in text
    # a field of a known type, a method's arguments and result
    assert "    def get_table(self, dbname: str, tbl_name: str) -> Table: ..." in text
    assert "    partitionKeys: list[FieldSchema]" in text
