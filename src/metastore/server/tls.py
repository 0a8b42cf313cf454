"""TLS for the Thrift front (hive.metastore.use.SSL): the server's SSLContext from the configured keystore or
PEM files. A server configured for TLS that cannot build its context refuses to start."""

from __future__ import annotations

import ssl

from ..config import Settings, SettingsError


def server_context(settings: Settings) -> ssl.SSLContext:
    raise SettingsError("settings: hive.metastore.use.SSL = true: TLS on the Thrift front is not supported yet; "
                        "the server does not start rather than serve in the clear")
