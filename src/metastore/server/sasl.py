"""SASL on the Thrift front (hive.metastore.sasl.enabled): GSSAPI with the server's Kerberos keytab, and
DIGEST-MD5 with the delegation tokens the server issued. A server configured for SASL that cannot honour it
refuses to start."""

from __future__ import annotations

from ..config import Settings, SettingsError
from .thrift_server import Negotiate


def negotiator(settings: Settings) -> Negotiate:
    raise SettingsError("settings: hive.metastore.sasl.enabled = true: SASL on the Thrift front is not supported "
                        "yet; the server does not start rather than serve unauthenticated")
