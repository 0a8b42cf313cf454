"""The client side of Thrift's SASL transport with GSSAPI (Kerberos), for thriftpy2: what MetastoreClient uses
when the metastore wants Kerberos (hive.metastore.sasl.enabled). The ticket comes from the default credential
cache (kinit; KRB5CCNAME), or, given a (principal, keytab), from that keytab (`serve`'s own clients, which
reach that server itself, whatever address they name: the service is that principal; their tickets are kept in a
memory cache of the process); otherwise the service principal is `<service>/<host>` in the host's realm (krb5.conf).

Negotiation frames are `[status][4-byte length][payload]` (START with the mechanism name, then OK/COMPLETE;
BAD/ERROR end it), then data frames `[4-byte length][payload]`; RFC 4752's security layer: the client takes
the first of authentication / integrity / privacy the server offers, in the order of `prefer`; its answer
carries the authorization id (`authzid`: the user the client acts for, a proxy user's impersonated one), if any.
"""

from __future__ import annotations

import os
import struct
from typing import Any

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
MAX_NEGOTIATION = 1 << 20
MAX_FRAME = 256 * 1024 * 1024  # one answer: what the client will hold for a server (or a man in the middle)
LAYER_NONE, LAYER_INTEGRITY, LAYER_PRIVACY = 1, 2, 4


class SaslError(Exception):
    pass


class GssapiTransport:
    """A thriftpy2 transport (is_open/open/close/read/write/flush) over `sock` (a thriftpy2 TSocket)."""

    def __init__(self, sock: Any, host: str, service: str = "hive",
                 prefer: tuple[int, ...] = (LAYER_NONE, LAYER_INTEGRITY, LAYER_PRIVACY),
                 authzid: str | None = None, keytab: tuple[str, str] | None = None) -> None:
        self.sock, self.host, self.service, self.prefer = sock, host, service, prefer
        self.authzid = authzid
        self.keytab = keytab
        self._wbuf: list[bytes] = []
        self._rbuf, self._at = memoryview(b""), 0  # the current data frame and how far it was read
        self._ctx: Any = None
        self.layer = 0

    def is_open(self) -> bool:
        return bool(self.sock.is_open())

    def _exact(self, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            b = self.sock.read(min(n - got, 1 << 20))
            if not b:
                raise SaslError("the server closed the connection")
            chunks.append(b)
            got += len(b)
        return b"".join(chunks)

    def _send(self, status: int, payload: bytes) -> None:
        self.sock.write(bytes([status]) + struct.pack("!i", len(payload)) + payload)
        self.sock.flush()

    def _recv(self) -> tuple[int, bytes]:
        head = self._exact(5)
        status, (size,) = head[0], struct.unpack("!i", head[1:])
        if size < 0 or size > MAX_NEGOTIATION:
            raise SaslError(f"SASL negotiation frame of {size} bytes")
        payload = self._exact(size) if size else b""
        if status in (BAD, ERROR):
            raise SaslError(f"the metastore refused the SASL negotiation: {payload[:300].decode(errors='replace')}")
        if status not in (OK, COMPLETE):
            raise SaslError(f"unexpected SASL status {status}")
        return status, payload

    def open(self) -> None:
        import gssapi

        if not self.sock.is_open():
            self.sock.open()
        name = gssapi.Name(f"{self.service}@{self.host}", gssapi.NameType.hostbased_service)
        creds = None
        try:
            if self.keytab is not None:  # the server's own client, to itself
                name = gssapi.Name(self.keytab[0], gssapi.NameType.kerberos_principal)
                creds = gssapi.Credentials(name=name, usage="initiate",
                                           store={"client_keytab": self.keytab[1],
                                                  "ccache": f"MEMORY:metastore-{os.getpid()}"})
        except gssapi.exceptions.GSSError as e:
            raise SaslError(f"Kerberos: the keytab's credentials: {' '.join(str(e).split())[:300]}") from None
        ctx = gssapi.SecurityContext(name=name, creds=creds, usage="initiate", mech=gssapi.MechType.kerberos,
                                     flags=gssapi.RequirementFlag.mutual_authentication
                                     | gssapi.RequirementFlag.integrity | gssapi.RequirementFlag.confidentiality)
        try:
            first = ctx.step()
        except gssapi.exceptions.GSSError as e:
            raise SaslError(f"Kerberos: {' '.join(str(e).split())[:300]}") from None
        self._send(START, b"GSSAPI")
        self._send(OK, first or b"")
        for _ in range(16):
            status, payload = self._recv()
            if status == COMPLETE and self.layer:
                self._ctx = ctx
                return
            if not ctx.complete:
                out = ctx.step(payload)
                self._send(OK, out or b"")
                continue
            if not payload:
                raise SaslError("the metastore ended the SASL negotiation early")
            offer = ctx.unwrap(payload).message
            if len(offer) != 4:
                raise SaslError("malformed SASL security layer offer")
            offered = offer[0]
            layer = next((x for x in self.prefer if x & offered), 0)
            if not layer:
                raise SaslError("the metastore offers no security layer this client accepts")
            self.layer = layer
            chosen = struct.pack("!I", (layer << 24) | 0xFFFFFF) + (self.authzid or "").encode()
            self._send(OK, ctx.wrap(chosen, False).message)
        raise SaslError("SASL negotiation did not complete")

    def close(self) -> None:
        self.sock.close()

    def read(self, sz: int) -> bytes:
        if self._at >= len(self._rbuf):
            (size,) = struct.unpack("!i", self._exact(4))
            if size <= 0 or size > MAX_FRAME:
                raise SaslError(f"frame of {size} bytes")
            data = self._exact(size)
            if self.layer != LAYER_NONE:
                data = bytes(self._ctx.unwrap(data).message)
            self._rbuf, self._at = memoryview(data), 0
        out = bytes(self._rbuf[self._at:self._at + sz])  # thriftpy2 reads a field at a time: no copy of the rest
        self._at += len(out)
        return out

    def write(self, buf: bytes) -> None:
        self._wbuf.append(bytes(buf))

    def flush(self) -> None:
        data, self._wbuf = b"".join(self._wbuf), []
        if self.layer != LAYER_NONE:
            data = bytes(self._ctx.wrap(data, self.layer == LAYER_PRIVACY).message)
        self.sock.write(struct.pack("!i", len(data)) + data)
        self.sock.flush()


class GssapiTransportFactory:
    def __init__(self, host: str, service: str = "hive", authzid: str | None = None,
                 keytab: tuple[str, str] | None = None) -> None:
        self.host, self.service, self.authzid, self.keytab = host, service, authzid, keytab

    def get_transport(self, sock: Any) -> GssapiTransport:
        return GssapiTransport(sock, self.host, self.service, authzid=self.authzid, keytab=self.keytab)
