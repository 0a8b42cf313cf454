"""The OAuth2 clients allowed to get tokens from the REST front's token endpoint: a TOML file of client id ->
the user it acts as and its secret, hashed (never stored in plain text).

    [clients."etl-job"]
    user = "etl"
    secret = "scrypt$16384$8$1$<salt, base64>$<hash, base64>"

`metastore oauth add-client` writes entries (the file is rewritten whole, atomically, mode 0600); the server
re-reads the file when it changes, so a new client needs no restart. Bounds: the file is at most
MAX_FILE_BYTES; a client id at most 256 characters, a secret at most 1,024; at most VERIFY_CONCURRENCY secret
checks run at once (scrypt costs ~16 MiB and tens of milliseconds each: a flood of token requests queues
instead of taking the host's memory), and a client id that does not exist costs a check too, so the answer's
time does not tell which ids exist.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import tempfile
import threading
from dataclasses import dataclass

from ..config import toml_table

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 1 << 20
MAX_CLIENT_ID = 256
MAX_SECRET = 1024
# a secret an operator chooses is at least this long: the token endpoint is on the network, and a short secret
# falls to guessing even at its rate limit (the generated ones are 43 characters)
MIN_SECRET = 16
VERIFY_CONCURRENCY = 2
_SCRYPT = (1 << 14, 8, 1)  # n, r, p: ~16 MiB, tens of ms on this machine
_USER = re.compile(r"[^\x00-\x1f\x7f]{1,128}")
_CLIENT_ID = re.compile(r"[\x21-\x7e]{1," + str(MAX_CLIENT_ID) + "}")


class ClientsError(ValueError):
    """The clients file is unreadable or malformed (the message names the file, never a secret)."""


@dataclass(frozen=True)
class Client:
    client_id: str
    user: str
    secret_hash: str


def hash_secret(secret: str) -> str:
    """The stored form of a client secret: scrypt with a random salt and its parameters."""
    n, r, p = _SCRYPT
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, dklen=32)
    return "$".join(("scrypt", str(n), str(r), str(p), base64.b64encode(salt).decode(),
                     base64.b64encode(digest).decode()))


def _check_hash(encoded: str) -> tuple[int, int, int, bytes, bytes]:
    parts = encoded.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        raise ValueError("not a hashed secret (scrypt$N$r$p$salt$hash: see `metastore oauth add-client`)")
    n, r, p = (int(x) for x in parts[1:4])
    if not (2 <= n <= 1 << 20 and n & (n - 1) == 0 and 1 <= r <= 32 and 1 <= p <= 16 and n * r * 128 <= 1 << 28):
        raise ValueError("scrypt parameters out of range")
    return n, r, p, base64.b64decode(parts[4], validate=True), base64.b64decode(parts[5], validate=True)


_DUMMY = hash_secret(secrets.token_urlsafe(16))  # checked for unknown client ids: the same cost as a real one
_verifying = threading.BoundedSemaphore(VERIFY_CONCURRENCY)


def verify_secret(secret: str, encoded: str) -> bool:
    """Whether `secret` is the one `encoded` (hash_secret's form) was made from; compared in constant time."""
    n, r, p, salt, expected = _check_hash(encoded)
    with _verifying:
        got = hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, dklen=len(expected),
                             maxmem=n * r * 128 + (1 << 20))
    return hmac.compare_digest(got, expected)


def parse_clients(text: str, path: str) -> dict[str, Client]:
    _, table = toml_table(text, "clients", lambda msg: ClientsError(f"{path}: {msg}"))
    out: dict[str, Client] = {}
    for client_id, entry in table.items():
        where = f"{path}: client {client_id[:MAX_CLIENT_ID]!r}"
        if not _CLIENT_ID.fullmatch(client_id):
            raise ClientsError(f"{where}: a client id is 1 to {MAX_CLIENT_ID} printable characters, no spaces")
        if not isinstance(entry, dict) or not isinstance(entry.get("user"), str) or \
                not isinstance(entry.get("secret"), str):
            raise ClientsError(f"{where}: needs user = \"...\" and secret = \"scrypt$...\" (the hashed secret)")
        if not _USER.fullmatch(entry["user"]):
            raise ClientsError(f"{where}: user must be 1 to 128 characters, no control characters")
        try:
            _check_hash(entry["secret"])
        except ValueError as e:
            raise ClientsError(f"{where}: secret: {e}") from None
        out[client_id] = Client(client_id, entry["user"], entry["secret"])
    return out


def read_clients(path: str) -> dict[str, Client]:
    """The clients of the file at `path` (none when it does not exist); ClientsError when it is malformed."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise ClientsError(f"{path}: cannot read the OAuth2 clients file: {e.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ClientsError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
    try:
        return parse_clients(raw.decode("utf-8"), path)
    except UnicodeDecodeError:
        raise ClientsError(f"{path}: not UTF-8 text") from None


def _toml(value: str) -> str:
    return json.dumps(value, ensure_ascii=True)  # a JSON string with ASCII escapes is a TOML basic string


def write_clients(path: str, clients: dict[str, Client]) -> None:
    """Rewrite the file whole: a temporary file beside it (mode 0600), renamed over it."""
    lines = ["# OAuth2 clients of the metastore's REST token endpoint (metastore oauth add-client).",
             "# Secrets are scrypt hashes; the plain secret is shown once, when the client is added.", ""]
    for c in sorted(clients.values(), key=lambda c: c.client_id):
        lines += [f"[clients.{_toml(c.client_id)}]", f"user = {_toml(c.user)}", f"secret = {_toml(c.secret_hash)}", ""]
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".rest-clients.", dir=directory)  # mkstemp: mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def add_client(path: str, client_id: str, user: str, secret: str | None = None) -> str:
    """Add (or replace) a client; returns its secret (a new random one unless given)."""
    if not _CLIENT_ID.fullmatch(client_id):
        raise ClientsError(f"a client id is 1 to {MAX_CLIENT_ID} printable characters, no spaces or colons")
    if ":" in client_id:  # PyIceberg's credential is "id:secret", split at the first colon
        raise ClientsError("a client id may not contain ':' (credential=\"id:secret\" splits at the first one)")
    if not _USER.fullmatch(user):
        raise ClientsError("a user is 1 to 128 characters, no control characters")
    secret = secret if secret is not None else secrets.token_urlsafe(32)
    if not MIN_SECRET <= len(secret) <= MAX_SECRET:
        raise ClientsError(f"a secret is {MIN_SECRET} to {MAX_SECRET} characters")
    clients = read_clients(path)
    clients[client_id] = Client(client_id, user, hash_secret(secret))
    write_clients(path, clients)
    return secret


def remove_client(path: str, client_id: str) -> bool:
    clients = read_clients(path)
    if clients.pop(client_id, None) is None:
        return False
    write_clients(path, clients)
    return True


class ClientRegistry:
    """The clients file as the server sees it: read at start (ClientsError stops the server), re-read when its
    size or modification time changes; a change that does not parse is logged and the last good set kept."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp = self._stat()
        self._clients = read_clients(path)

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def get(self, client_id: str) -> Client | None:
        stamp = self._stat()
        if stamp != self._stamp:
            with self._lock:
                if stamp != self._stamp:
                    try:
                        self._clients = read_clients(self.path)
                    except ClientsError as e:
                        log.error("OAuth2 clients not reloaded, the previous ones stay: %s", e)
                    self._stamp = stamp
        return self._clients.get(client_id)

    def check(self, client_id: str, secret: str) -> Client | None:
        """The client when `secret` is its secret; None otherwise (an unknown id costs the same check)."""
        client = self.get(client_id) if len(client_id) <= MAX_CLIENT_ID else None
        if len(secret) > MAX_SECRET:
            return None
        ok = verify_secret(secret, client.secret_hash if client is not None else _DUMMY)
        return client if ok and client is not None else None
