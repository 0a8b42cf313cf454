"""TLS for the Thrift front (hive.metastore.use.SSL): the server's SSLContext from the configured keystore or
PEM files, and the context the clients this package runs (catalogd, repl, the relay's reader, the scheduler)
use to reach a TLS front, from the truststore.

Key material, as Hive names it (README "TLS"):
- `ssl_cert` + `ssl_key`: PEM files (the key may be encrypted with `ssl_keystore_password`); read by OpenSSL
  itself, no extra needed;
- `ssl_keystore` (hive.metastore.keystore.path) + `ssl_keystore_password`: a PKCS12 keystore, as Java 17's
  keytool makes them by default, or a JKS one, as older Javas did (both read with `cryptography`: the `tls`
  extra; JKS's own layout and key protection are read here, `_jks`, since PyPI's JKS parser is unmaintained;
  its key must have the store's password, keytool's default). JCEKS is refused with the keytool command
  that converts it;
- `ssl_truststore` (+ password): what a client trusts: a PEM file of certificates, or a PKCS12 or JKS
  truststore; none set: in a process that serves TLS itself, its own certificate (pinned), else the system's
  CAs.

Every failure to build a context (a file missing or unreadable, a wrong password, a keystore without a private
key or certificate, a key that does not match its certificate) is a SettingsError naming the setting and what is
wrong, never the password: a server configured for TLS that cannot serve it does not start. TLS 1.2 is the
oldest version either side speaks.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import ssl
import struct
import tempfile
from typing import Any

from ..config import Settings, SettingsError
from ..extras import require

# the first four bytes of Java's own keystore formats (PKCS12 is DER: 0x30 ...)
_JKS_MAGIC = {b"\xfe\xed\xfe\xed": "JKS", b"\xce\xce\xce\xce": "JCEKS"}
_JKS_KEY_OID = bytes.fromhex("2b060104012a02110101")  # 1.3.6.1.4.1.42.2.17.1.1: Sun's JKS key protection
MAX_STORE_BYTES = 16 * 1024 * 1024  # a keystore or truststore larger than this is not one


def server_context(settings: Settings) -> ssl.SSLContext:
    """The Thrift front's context: its certificate chain and key; TLS 1.2 or later; no client certificate asked."""
    s = settings
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.options |= ssl.OP_NO_COMPRESSION | ssl.OP_CIPHER_SERVER_PREFERENCE
    if s.ssl_cert or s.ssl_key:
        if not (s.ssl_cert and s.ssl_key):
            raise SettingsError("settings: TLS with PEM files needs both ssl_cert (the certificate chain) and "
                                "ssl_key (its private key)")
        for key, path in (("ssl_cert", s.ssl_cert), ("ssl_key", s.ssl_key)):
            _readable(key, path)
        try:
            ctx.load_cert_chain(s.ssl_cert, s.ssl_key, password=s.ssl_keystore_password or _no_password)
        except ssl.SSLError as e:
            raise SettingsError(f"settings: ssl_cert = {s.ssl_cert!r}, ssl_key = {s.ssl_key!r}: not a PEM "
                                f"certificate chain and its private key, the key does not match the certificate, "
                                f"or the key's password (ssl_keystore_password) is wrong ({_reason(e)})") from None
        return ctx
    if not s.ssl_keystore:
        raise SettingsError("settings: hive.metastore.use.SSL = true needs the server's certificate and key: "
                            "hive.metastore.keystore.path (a PKCS12 keystore) with hive.metastore.keystore.password, "
                            "or ssl_cert and ssl_key (PEM files)")
    key, chain = _keystore(s.ssl_keystore, s.ssl_keystore_password)
    _load_pem_chain(ctx, key, chain, s.ssl_keystore)
    return ctx


def client_context(settings: Settings) -> ssl.SSLContext:
    """What a client of a TLS metastore trusts, and how it checks the server:
    - the truststore when one is set, the server's name checked against its certificate unless
      ssl_check_hostname is off (Hive's own Java client does not check it);
    - else, in a process with its own server certificate (`serve`, whose scheduler calls the server itself, at
      the address it listens on, 0.0.0.0 included): exactly that certificate, pinned (the server must present
      it; no name to check, no CA trusted);
    - else the system's CAs, names checked as above."""
    s = settings
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = s.ssl_check_hostname
    if s.ssl_truststore:
        for pem in _truststore(s.ssl_truststore, s.ssl_truststore_password):
            ctx.load_verify_locations(cadata=pem)
        return ctx
    own = _own_certificate(s)
    if own:
        ctx.check_hostname = False
        ctx.load_verify_locations(cadata=own)
        ctx.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # the leaf itself is the trust anchor
        return ctx
    ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    return ctx


# ---- reading key material ---------------------------------------------------------------------------------

def _no_password() -> bytes:
    # an encrypted key and no password set: OpenSSL would otherwise prompt on the terminal
    raise ssl.SSLError("the key is encrypted and no password is set")


def _reason(e: ssl.SSLError) -> str:
    return str(e.reason or e.strerror or type(e).__name__)[:200]


def _readable(key: str, path: str) -> bytes:
    """The bytes of the file a setting names (at most MAX_STORE_BYTES); SettingsError if it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_STORE_BYTES + 1)
    except OSError as e:
        raise SettingsError(f"settings: {key} = {path!r}: cannot read it: {e.strerror or e}") from None
    if len(data) > MAX_STORE_BYTES:
        raise SettingsError(f"settings: {key} = {path!r}: larger than {MAX_STORE_BYTES} bytes: not a keystore")
    if not data:
        raise SettingsError(f"settings: {key} = {path!r}: the file is empty")
    return data


def _java_format(key: str, path: str, data: bytes) -> bool:
    """Whether the file is a JKS keystore; a JCEKS one is refused."""
    kind = _JKS_MAGIC.get(data[:4])
    if kind == "JCEKS":
        raise SettingsError(f"settings: {key} = {path!r}: a JCEKS keystore, which is not supported: convert it to "
                            f"PKCS12 (Java 17's default) with keytool -importkeystore -srckeystore {path} "
                            "-srcstoretype jceks -destkeystore NEW.p12 -deststoretype pkcs12, and name that one")
    return kind == "JKS"


class _Bytes:
    """A bounded reader of a keystore's bytes: ValueError past the end."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("truncated")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def utf(self) -> bytes:  # Java's DataOutput.writeUTF: a 2-byte length, then the bytes
        return self.take(struct.unpack(">H", self.take(2))[0])


def _jks(data: bytes, password: str) -> tuple[list[tuple[bytes, list[bytes]]], list[bytes]]:
    """The entries of a JKS keystore (Java's own format): its private keys, each as (the protected key, its
    certificate chain), and its trusted certificates (DER). The store's digest (SHA-1 over the password in
    UTF-16BE, the text "Mighty Aphrodite" and the store) is checked first: ValueError if it does not match (a
    wrong password) or the store is malformed."""
    secret = password.encode("utf-16-be")
    body, digest = data[:-20], data[-20:]
    if len(data) < 32 or not hmac.compare_digest(hashlib.sha1(secret + b"Mighty Aphrodite" + body).digest(),
                                                 digest):
        raise ValueError("the keystore's digest does not match")
    r = _Bytes(body)
    r.take(4)
    version = r.u32()
    if version not in (1, 2):
        raise ValueError(f"JKS version {version}")
    keys, trusted = [], []
    for _ in range(r.u32()):
        tag = r.u32()
        r.utf()  # alias
        r.take(8)  # creation time
        if tag == 1:  # a private key and its chain
            protected = r.take(r.u32())
            chain = []
            for _ in range(r.u32()):
                if version == 2:
                    r.utf()  # certificate type
                chain.append(r.take(r.u32()))
            keys.append((protected, chain))
        elif tag == 2:  # a trusted certificate
            if version == 2:
                r.utf()
            trusted.append(r.take(r.u32()))
        else:
            raise ValueError(f"entry type {tag}")
    return keys, trusted


def _der(data: bytes, pos: int, tag: int) -> tuple[int, int]:
    """(start, end) of the contents of the DER value at `pos`, which must have `tag`; ValueError otherwise."""
    if pos + 2 > len(data) or data[pos] != tag:
        raise ValueError("not the expected DER value")
    n, pos = data[pos + 1], pos + 2
    if n & 0x80:
        k = n & 0x7F
        if not 0 < k <= 4:
            raise ValueError("bad DER length")
        n, pos = int.from_bytes(data[pos:pos + k], "big"), pos + k
    if pos + n > len(data):
        raise ValueError("truncated DER value")
    return pos, pos + n


def _jks_key(protected: bytes, password: str) -> bytes:
    """A JKS private key (PKCS#8 DER) from its EncryptedPrivateKeyInfo under Sun's key protection (salt, the key
    XORed with a SHA-1 chain over the password and the salt, then SHA-1 over the password and the key)."""
    start, _ = _der(protected, 0, 0x30)
    alg_start, alg_end = _der(protected, start, 0x30)
    oid_start, oid_end = _der(protected, alg_start, 0x06)
    if protected[oid_start:oid_end] != _JKS_KEY_OID:
        raise ValueError("the key is not protected with JKS's own scheme")
    enc_start, enc_end = _der(protected, alg_end, 0x04)
    enc = protected[enc_start:enc_end]
    if len(enc) <= 40:
        raise ValueError("truncated key")
    secret = password.encode("utf-16-be")
    salt, body, check = enc[:20], enc[20:-20], enc[-20:]
    stream, block = bytearray(), salt
    while len(stream) < len(body):
        block = hashlib.sha1(secret + block).digest()
        stream += block
    key = bytes(a ^ b for a, b in zip(body, stream, strict=False))
    if not hmac.compare_digest(hashlib.sha1(secret + key).digest(), check):
        raise ValueError("the key's password differs")
    return key


def _pkcs12() -> Any:
    return require("cryptography.hazmat.primitives.serialization.pkcs12", "tls", "A PKCS12 keystore or truststore")


def _pkcs12_load(key_name: str, path: str, data: bytes, password: str, what: str) -> tuple[Any, Any, list[Any]]:
    """(key or None, certificate or None, other certificates) of a PKCS12 store; `what` names the failure
    for the setting `key_name` (hive.metastore.keystore.path or .truststore.path)."""
    pkcs12 = _pkcs12()
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError:
        password_key = key_name.removesuffix(".path") + ".password"
        raise SettingsError(f"settings: {key_name} = {path!r}: {what}, or {password_key} is wrong") from None
    return key, cert, list(extra)


def _keystore(path: str, password: str) -> tuple[Any, list[Any]]:
    """(private key, certificate chain, leaf first) of a PKCS12 keystore."""
    key_name = "hive.metastore.keystore.path"
    data = _readable(key_name, path)
    if _java_format(key_name, path, data):
        return _jks_keystore(key_name, path, data, password)
    key, cert, extra = _pkcs12_load(key_name, path, data, password, "not a PKCS12 keystore")
    if key is None:
        raise SettingsError(f"settings: {key_name} = {path!r}: the keystore holds no private key (a truststore?)")
    if cert is None:
        raise SettingsError(f"settings: {key_name} = {path!r}: the keystore holds no certificate for its key")
    return key, [cert, *extra]


def _jks_keystore(key_name: str, path: str, data: bytes, password: str) -> tuple[Any, list[Any]]:
    require("cryptography", "tls", "A JKS keystore")
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        keys, _ = _jks(data, password)
    except ValueError:
        raise SettingsError(f"settings: {key_name} = {path!r}: not a JKS keystore, or "
                            "hive.metastore.keystore.password is wrong") from None
    if not keys:
        raise SettingsError(f"settings: {key_name} = {path!r}: the keystore holds no private key (a truststore?)")
    protected, chain = keys[0]
    if not chain:
        raise SettingsError(f"settings: {key_name} = {path!r}: the keystore holds no certificate for its key")
    try:
        key = serialization.load_der_private_key(_jks_key(protected, password), None)
        certs = [x509.load_der_x509_certificate(c) for c in chain]
    except ValueError:
        raise SettingsError(f"settings: {key_name} = {path!r}: its private key cannot be read with "
                            "hive.metastore.keystore.password (a key password other than the store's is not "
                            "supported)") from None
    return key, certs


def _load_pem_chain(ctx: ssl.SSLContext, key: Any, chain: list[Any], path: str) -> None:
    """Give a key and chain held in memory to OpenSSL, which reads files only: the key goes to a private
    temporary file encrypted with a random password that never leaves this process, removed at once."""
    from cryptography.hazmat.primitives import serialization

    secret = os.urandom(32).hex().encode()
    pem_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.BestAvailableEncryption(secret))
    pem_chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain)
    with tempfile.TemporaryDirectory(prefix="metastore-tls-") as d:  # mode 0700
        key_file, chain_file = os.path.join(d, "key.pem"), os.path.join(d, "chain.pem")
        for name, data in ((key_file, pem_key), (chain_file, pem_chain)):
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        try:
            ctx.load_cert_chain(chain_file, key_file, password=secret)
        except ssl.SSLError as e:
            raise SettingsError(f"settings: hive.metastore.keystore.path = {path!r}: its key and certificate "
                                f"cannot be used ({_reason(e)}): does the key match the certificate?") from None


def _truststore(path: str, password: str) -> list[str]:
    """The certificates (PEM) of a truststore: a PEM file, or a PKCS12 store (of trusted certificates, or a
    keystore whose certificates are trusted)."""
    key_name = "hive.metastore.truststore.path"
    data = _readable(key_name, path)
    if _java_format(key_name, path, data):
        try:
            keys, trusted = _jks(data, password)
        except ValueError:
            raise SettingsError(f"settings: {key_name} = {path!r}: not a JKS truststore, or "
                                "hive.metastore.truststore.password is wrong") from None
        pem = [ssl.DER_cert_to_PEM_cert(c) for c in trusted + [c for _, chain in keys for c in chain]]
    elif b"-----BEGIN CERTIFICATE-----" in data:
        pem = [data.decode("ascii", "replace")]
    else:
        _, cert, extra = _pkcs12_load(key_name, path, data, password, "not a PEM file or a PKCS12 truststore")
        from cryptography.hazmat.primitives import serialization

        pem = [c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in ([cert] if cert else []) + extra]
    if not pem:
        raise SettingsError(f"settings: {key_name} = {path!r}: the truststore holds no certificate")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    for p in pem:
        try:
            ctx.load_verify_locations(cadata=p)
        except ssl.SSLError as e:
            raise SettingsError(f"settings: {key_name} = {path!r}: a certificate in it cannot be read "
                                f"({_reason(e)})") from None
    return pem


def _own_certificate(settings: Settings) -> str:
    """This process's own server certificate (PEM, the leaf), when the settings give one, so that the server's
    own clients (the scheduler's replication policies) reach it without a truststore; "" when there is none."""
    s = settings
    try:
        if s.ssl_cert:
            return _readable("ssl_cert", s.ssl_cert).decode("ascii", "replace")
        if s.ssl_keystore:
            from cryptography.hazmat.primitives import serialization

            _, chain = _keystore(s.ssl_keystore, s.ssl_keystore_password)
            return chain[0].public_bytes(serialization.Encoding.PEM).decode("ascii")
    except (SettingsError, ImportError):
        return ""
    return ""
