"""OAuth2 on the Iceberg REST front (rest_auth = oauth2; README "REST authentication"): PyIceberg's RestCatalog
with `credential` gets a token from /v1/oauth/tokens and works; a missing, expired, tampered or foreign token is
refused with 401 in the spec's error model; an external issuer's token (a key pair made here, its JWKS in a file
or served over HTTP) works, one for another audience or issuer does not; DuckDB's Iceberg extension with OAuth2
client credentials reads a table; the server's processes on one store accept each other's tokens."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import http.server
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pyarrow as pa
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import OAuthError

from conftest import Server, make_database, unique

ISSUER = "https://idp.test.invalid/realms/lake"
AUDIENCE = "metastore-rest"


def _b64(data: bytes | int, size: int = 0) -> str:
    raw = data if isinstance(data, bytes) else data.to_bytes(size or (data.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def hs256_by_hand(claims: dict[str, Any], secret: bytes, kid: str) -> str:
    """An HS256 token keyed by any bytes (PyJWT refuses a PEM public key as an HMAC secret; an attacker does not)."""
    signing = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode()) + "." + \
        _b64(json.dumps(claims).encode())
    return signing + "." + _b64(hmac.new(secret, signing.encode(), hashlib.sha256).digest())


class Idp:
    """An external issuer made by the test: an RSA and an EC key pair, their JWKS, tokens it signs."""

    def __init__(self) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        rn = self.rsa.public_key().public_numbers()
        en = self.ec.public_key().public_numbers()
        self.jwks = {"keys": [
            {"kty": "RSA", "kid": "rsa-1", "use": "sig", "alg": "RS256", "n": _b64(rn.n), "e": _b64(rn.e)},
            {"kty": "EC", "kid": "ec-1", "use": "sig", "crv": "P-256", "x": _b64(en.x, 32), "y": _b64(en.y, 32)},
        ]}

    def token(self, user: str = "carol", kid: str = "rsa-1", alg: str = "RS256", **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": f"uid-{user}", "preferred_username": user,
                "iat": now, "nbf": now, "exp": now + 600, **claims}
        key = self.rsa if alg.startswith(("RS", "PS")) else self.ec
        return jwt.encode({k: v for k, v in body.items() if v is not None}, key, algorithm=alg,
                          headers={"kid": kid})

    def public_pem(self) -> bytes:
        return self.rsa.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo)


def add_client(data_dir: Path, client_id: str, user: str) -> str:
    """`metastore oauth add-client`: the credential it prints (CLIENT_ID:SECRET)."""
    out = subprocess.run([sys.executable, "-m", "metastore.cli", "oauth", "add-client", client_id, "--user", user,
                          "--data-dir", str(data_dir)], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip()


def test_a_chosen_secret_shorter_than_16_characters_is_refused(tmp_path: Path) -> None:
    """`add-client --secret-stdin` refuses a short secret (and writes nothing); one of 16 characters is taken."""
    def add(secret: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "metastore.cli", "oauth", "add-client", "job", "--user", "alice",
                               "--secret-stdin", "--data-dir", str(tmp_path)], input=secret + "\n",
                              capture_output=True, text=True, timeout=60)

    short = add("x" * 15)
    assert short.returncode != 0 and "a secret is 16 to 1024 characters" in short.stderr, short
    assert not (tmp_path / "rest-clients.toml").exists()
    ok = add("y" * 16)
    assert ok.returncode == 0 and ok.stdout.strip() == "job:" + "y" * 16, ok


def oauth_env(jwks: str) -> dict[str, str]:
    return {"METASTORE_REST_AUTH": "oauth2", "METASTORE_REST_OIDC_ISSUER": ISSUER,
            "METASTORE_REST_OIDC_AUDIENCE": AUDIENCE, "METASTORE_REST_OIDC_JWKS": jwks,
            "METASTORE_REST_OIDC_USER_CLAIM": "preferred_username"}


@pytest.fixture(scope="module")
def idp() -> Idp:
    return Idp()


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, idp: Idp) -> Iterator[tuple[Server, str, Path]]:
    tmp = tmp_path_factory.mktemp("rest_auth")
    jwks = tmp / "jwks.json"
    jwks.write_text(json.dumps(idp.jwks))
    credential = add_client(tmp / "data", "etl-job", "alice")
    audit = tmp / "audit.jsonl"
    for db in make_database("sqlite", tmp):
        srv = Server(db, tmp, "--audit-log", str(audit), env=oauth_env(str(jwks))).start()
        yield srv, credential, audit
        srv.stop()


def catalog(srv: Server, **props: str) -> RestCatalog:
    return RestCatalog("rest", uri=srv.rest_uri, warehouse=f"file://{srv.warehouse}", **props)


def token_of(srv: Server, credential: str) -> str:
    cid, secret = credential.split(":", 1)
    r = requests.post(srv.rest_uri + "/v1/oauth/tokens", timeout=30,
                      data={"grant_type": "client_credentials", "client_id": cid, "client_secret": secret})
    assert r.status_code == 200, r.text
    return str(r.json()["access_token"])


def get(srv: Server, path: str, token: str | None = None) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return requests.get(srv.rest_uri + path, headers=headers, timeout=30)


def refused(r: requests.Response, why: str = "") -> None:
    assert r.status_code == 401, (r.status_code, r.text)
    assert r.json()["error"]["type"] == "NotAuthorizedException"
    assert r.json()["error"]["code"] == 401
    assert r.headers["WWW-Authenticate"].startswith('Bearer realm="metastore"')
    assert why.lower() in r.json()["error"]["message"].lower(), r.text


def audit_lines(audit: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in audit.read_text().splitlines()]


def logged(audit: Path, after: int, **fields: Any) -> dict[str, Any]:
    """The first audit line past the first `after` ones with these fields. A line is written before its answer
    is sent: it is there once the client has the answer."""
    found = [e for e in audit_lines(audit)[after:] if all(e.get(k) == v for k, v in fields.items())]
    assert found, (fields, audit_lines(audit)[after:])
    return found[0]


def logged_soon(audit: Path, after: int, **fields: Any) -> dict[str, Any]:
    """`logged`, for a call whose client does not wait for its answer: waits for the line (up to 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            return logged(audit, after, **fields)
        except AssertionError:
            time.sleep(0.05)
    return logged(audit, after, **fields)


def test_pyiceberg_with_a_credential_gets_a_token_and_works(setup: tuple[Server, str, Path]) -> None:
    srv, credential, audit = setup
    start = len(audit_lines(audit))
    cat = catalog(srv, credential=credential)
    assert cat.properties["oauth2-server-uri"] == srv.rest_uri + "/v1/oauth/tokens"  # /v1/config's default
    ns = unique("auth")
    cat.create_namespace(ns)
    table = cat.create_table(f"{ns}.events", schema=pa.schema([("id", pa.int64()), ("name", pa.string())]))
    table.append(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}))
    loaded = cat.load_table(f"{ns}.events")
    assert loaded.scan().to_arrow().num_rows == 3
    assert (ns,) in cat.list_namespaces()
    logged(audit, start, front="rest", method="createTable", principal="alice", auth="oauth2", result="ok")


def test_the_token_response_is_the_specs(setup: tuple[Server, str, Path]) -> None:
    srv, credential, _ = setup
    cid, secret = credential.split(":", 1)
    basic = base64.b64encode(f"{cid}:{secret}".encode()).decode()
    r = requests.post(srv.rest_uri + "/v1/oauth/tokens", timeout=30, headers={"Authorization": f"Basic {basic}"},
                      data={"grant_type": "client_credentials", "scope": "catalog"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["token_type"] == "bearer" and body["expires_in"] == 3600 and body["scope"] == "catalog"
    assert r.headers["Cache-Control"] == "no-store"
    claims = jwt.decode(body["access_token"], options={"verify_signature": False})
    assert claims["sub"] == "alice" and claims["client_id"] == cid and claims["exp"] - claims["iat"] == 3600
    assert get(srv, "/v1/namespaces", body["access_token"]).status_code == 200


def test_a_wrong_secret_or_grant_is_refused_in_the_oauth_error_model(setup: tuple[Server, str, Path]) -> None:
    srv, credential, _ = setup
    cid = credential.split(":", 1)[0]
    for client_id, secret in ((cid, "not-the-secret"), ("nobody", "x")):
        r = requests.post(srv.rest_uri + "/v1/oauth/tokens", timeout=30,
                          data={"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret})
        assert r.status_code == 401 and r.json()["error"] == "invalid_client", r.text
        assert "not-the-secret" not in r.text
    r = requests.post(srv.rest_uri + "/v1/oauth/tokens", timeout=30, data={"grant_type": "password"})
    assert r.status_code == 400 and r.json()["error"] == "unsupported_grant_type", r.text
    r = requests.post(srv.rest_uri + "/v1/oauth/tokens", timeout=30, json={"grant_type": "client_credentials"})
    assert r.status_code == 400 and r.json()["error"] == "invalid_request", r.text
    with pytest.raises(OAuthError):
        catalog(srv, credential=f"{cid}:wrong")


def test_a_refused_call_whose_client_is_gone_is_logged_with_its_refusal(setup: tuple[Server, str, Path]) -> None:
    """The audit line is written before the answer is sent: a client that resets its connection as soon as its
    token request is out (the server checks the secret for tens of ms, so the reset is there before the answer)
    leaves the line of its refusal, not of the broken connection the answer then meets."""
    srv, credential, audit = setup
    cid = credential.split(":", 1)[0]
    start = len(audit_lines(audit))
    form = f"grant_type=client_credentials&client_id={cid}&client_secret=not-the-secret".encode()
    request = (b"POST /v1/oauth/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n" % len(form)) + form
    with socket.create_connection(("127.0.0.1", srv.rest_port), timeout=30) as s:
        # a first request answered: the connection is accepted and read by its thread before the reset
        s.sendall(b"GET /v1/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(65536)
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        body = head.split(b"\r\n\r\n", 1)[1]
        while len(body) < length:
            body += s.recv(65536)
        s.sendall(request)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close() resets
    line = logged_soon(audit, start, method="getToken", principal="anonymous")
    assert line["result"] == "TokenRequestError", line
    assert line["address"].startswith("127.0.0.1:"), line
    assert "not-the-secret" not in audit.read_text()


def test_refusals_are_logged_as_denied_and_token_requests_name_their_client(setup: tuple[Server, str, Path]) -> None:
    """A call refused for who its caller is says `allowed: false` (denied AUTHENTICATION): no token, a token that
    is not one, a wrong client secret; a token request's line names the client it was for, never the secret."""
    srv, credential, audit = setup
    cid = credential.split(":", 1)[0]
    start = len(audit_lines(audit))
    refused(get(srv, "/v1/namespaces"))
    refused(get(srv, "/v1/namespaces", "not.a.token"))
    r = requests.post(srv.rest_uri + "/v1/oauth/tokens", timeout=30,
                      data={"grant_type": "client_credentials", "client_id": cid, "client_secret": "wrong-secret"})
    assert r.status_code == 401, r.text
    assert get(srv, "/v1/namespaces", token_of(srv, credential)).status_code == 200
    got = audit_lines(audit)[start:]
    assert [(e["method"], e["result"], e["allowed"], e["denied"]) for e in got] == [
        ("listNamespaces", "NotAuthorizedException", False, "AUTHENTICATION"),
        ("listNamespaces", "NotAuthorizedException", False, "AUTHENTICATION"),
        ("getToken", "TokenRequestError", False, "AUTHENTICATION"),
        ("getToken", "ok", True, None),
        ("listNamespaces", "ok", True, None)], got
    assert [e["objects"] for e in got if e["method"] == "getToken"] == [[f"client:{cid}"]] * 2
    assert "wrong-secret" not in audit.read_text() and credential.split(":", 1)[1] not in audit.read_text()


def test_pyiceberg_gets_a_new_token_when_its_token_is_refused(setup: tuple[Server, str, Path]) -> None:
    """PyIceberg answered 401 asks for a new token with its credential in the form and its old token still in a
    Bearer header: the form's credential is the client's authentication, the header is not; a Basic header
    still is."""
    srv, credential, _ = setup
    cid, secret = credential.split(":", 1)
    cat = catalog(srv, credential=credential)
    cat._session.auth.auth_manager._token = "expired.or.revoked"  # as its token after rest_token_lifetime
    ns = unique("renewed")
    cat.create_namespace(ns)  # 401, a new token, the call again
    assert (ns,) in cat.list_namespaces()
    form = {"grant_type": "client_credentials", "client_id": cid, "client_secret": secret}
    r = requests.post(srv.rest_uri + "/v1/oauth/tokens", data=form, timeout=30,
                      headers={"Authorization": "Bearer expired.or.revoked"})
    assert r.status_code == 200, r.text
    wrong = base64.b64encode(f"{cid}:wrong".encode()).decode()
    r = requests.post(srv.rest_uri + "/v1/oauth/tokens", data=form, timeout=30,
                      headers={"Authorization": f"Basic {wrong}"})
    assert r.status_code == 401 and r.json()["error"] == "invalid_client", r.text


def test_the_token_endpoints_refusals_of_a_body_are_oauth_errors(setup: tuple[Server, str, Path]) -> None:
    """A token request whose body's length is missing, malformed or chunked is refused in the OAuthError model
    (as every refusal of the endpoint), not the catalog's."""
    srv, _, _ = setup
    head = (b"POST /v1/oauth/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n")
    for framing in (b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                    b"Content-Length: +5\r\n\r\nhello"):
        with socket.create_connection(("127.0.0.1", srv.rest_port), timeout=30) as s:
            s.sendall(head + framing)
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
        status, _, rest = answer.partition(b"\r\n")
        assert status.split()[1] in (b"400", b"411"), answer
        body = json.loads(rest.split(b"\r\n\r\n", 1)[1])
        assert body["error"] == "invalid_request" and body["error_description"], body


def test_guessing_a_clients_secret_is_bounded(setup: tuple[Server, str, Path]) -> None:
    """After 10 wrong secrets for one client from one address within a minute, that address's requests for the
    client are refused unchecked, the right secret too; the client from another address, and another client
    from this one, are served."""
    srv, credential, _ = setup
    guessed = add_client(srv.workdir / "data", "guessed-" + unique("c"), "alice")
    cid, secret = guessed.split(":", 1)

    def ask(client_id: str, client_secret: str, source: str = "127.0.0.1") -> tuple[int, dict[str, Any]]:
        conn = http.client.HTTPConnection("127.0.0.1", srv.rest_port, timeout=30, source_address=(source, 0))
        try:
            form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": client_id,
                                           "client_secret": client_secret})
            conn.request("POST", "/v1/oauth/tokens", form, {"Content-Type": "application/x-www-form-urlencoded"})
            r = conn.getresponse()
            return r.status, json.loads(r.read())
        finally:
            conn.close()

    for i in range(10):
        status, body = ask(cid, f"guess-{i}")
        assert status == 401 and body["error_description"] == "client authentication failed", body
    status, body = ask(cid, secret)
    assert status == 401 and body["error"] == "invalid_client", body
    assert "too many failed attempts" in body["error_description"], body
    assert ask(cid, secret, "127.0.0.2")[0] == 200  # another address
    assert token_of(srv, credential)  # another client


def test_a_token_is_refreshed_by_token_exchange(setup: tuple[Server, str, Path], idp: Idp) -> None:
    """As Iceberg's clients refresh a token: RFC 8693's exchange of a valid token of ours, for its client."""
    srv, credential, _ = setup
    token = token_of(srv, credential)
    exchange = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                "subject_token_type": "urn:ietf:params:oauth:token-type:access_token"}

    def exchanged(subject: str) -> requests.Response:
        return requests.post(srv.rest_uri + "/v1/oauth/tokens", data={**exchange, "subject_token": subject},
                             headers={"Authorization": f"Bearer {subject}"}, timeout=30)

    r = exchanged(token)
    assert r.status_code == 200, r.text
    fresh = r.json()["access_token"]
    assert fresh != token and get(srv, "/v1/namespaces", fresh).status_code == 200
    claims = jwt.decode(fresh, options={"verify_signature": False})
    assert claims["sub"] == "alice" and claims["auth_time"] == jwt.decode(
        token, options={"verify_signature": False})["auth_time"]  # the session's start carries over
    key = base64.b64decode((srv.workdir / "data" / "rest-token.key").read_text().strip())
    now = int(time.time())
    base = {"iss": "metastore", "sub": "alice", "client_id": claims["client_id"], "iat": now, "exp": now + 600}
    for subject in (idp.token(), token[:-3] + "AAA",  # another issuer's; a forged one
                    jwt.encode({**base, "exp": now - 3600, "auth_time": now}, key, algorithm="HS256"),  # expired
                    jwt.encode({**base, "auth_time": now - 2 * 86400}, key, algorithm="HS256"),  # session too old
                    jwt.encode({**base, "client_id": "gone", "auth_time": now}, key, algorithm="HS256")):
        r = exchanged(subject)
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant", r.text
    assert exchanged(jwt.encode({**base, "auth_time": now}, key, algorithm="HS256")).status_code == 200


def test_a_missing_token_is_401(setup: tuple[Server, str, Path]) -> None:
    srv, _, audit = setup
    start = len(audit_lines(audit))
    for path in ("/v1/namespaces", "/v1/config", "/v1/namespaces/x/tables/y", "/v1/no/such/endpoint/at/all"):
        r = get(srv, path)
        refused(r, "authentication required")
        assert r.headers["WWW-Authenticate"] == 'Bearer realm="metastore"'
    r = requests.get(srv.rest_uri + "/v1/namespaces", headers={"Authorization": "Basic YTpi"}, timeout=30)
    refused(r)
    assert get(srv, "/v1/openapi.json").status_code == 200  # public, as the token endpoint
    logged(audit, start, method="getConfig", principal="anonymous", auth="claimed", result="NotAuthorizedException")
    with pytest.raises(Exception, match="(?i)not ?authorized|401"):
        catalog(srv).list_namespaces()


def test_an_expired_token_is_401(setup: tuple[Server, str, Path]) -> None:
    srv, _, _ = setup
    key = base64.b64decode((srv.workdir / "data" / "rest-token.key").read_text().strip())
    now = int(time.time())
    claims = {"iss": "metastore", "sub": "alice", "iat": now - 7200, "nbf": now - 7200}
    fresh = jwt.encode({**claims, "exp": now + 600}, key, algorithm="HS256")
    assert get(srv, "/v1/namespaces", fresh).status_code == 200  # the key and claims are right...
    expired = jwt.encode({**claims, "exp": now - 3600}, key, algorithm="HS256")
    refused(get(srv, "/v1/namespaces", expired), "expired")  # ...but it expired
    assert 'error="invalid_token"' in get(srv, "/v1/namespaces", expired).headers["WWW-Authenticate"]


def test_a_tampered_token_is_401(setup: tuple[Server, str, Path], idp: Idp) -> None:
    srv, credential, _ = setup
    token = token_of(srv, credential)
    head, payload, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = "admin"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    refused(get(srv, "/v1/namespaces", f"{head}.{forged}.{sig}"), "token not valid")
    refused(get(srv, "/v1/namespaces", f"{head}.{payload}.{sig[:-4]}AAAA"))
    other_key = jwt.encode({**claims, "sub": "alice"}, os.urandom(32), algorithm="HS256")
    refused(get(srv, "/v1/namespaces", other_key), "token not valid")
    unsigned = jwt.encode({**claims, "sub": "alice"}, None, algorithm="none")
    refused(get(srv, "/v1/namespaces", unsigned))
    refused(get(srv, "/v1/namespaces", "x" * 10_000), "longer than")
    assert get(srv, "/v1/namespaces", token).status_code == 200


def test_an_external_issuers_token_works(setup: tuple[Server, str, Path], idp: Idp) -> None:
    srv, _, audit = setup
    start = len(audit_lines(audit))
    for kid, alg in (("rsa-1", "RS256"), ("ec-1", "ES256")):
        cat = catalog(srv, token=idp.token("carol", kid=kid, alg=alg))
        ns = unique("idp")
        cat.create_namespace(ns)
        assert (ns,) in cat.list_namespaces()
    logged(audit, start, method="createNamespace", principal="carol", auth="oauth2", result="ok")


def test_an_external_token_for_another_audience_or_issuer_is_refused(setup: tuple[Server, str, Path],
                                                                     idp: Idp) -> None:
    srv, _, _ = setup
    assert get(srv, "/v1/namespaces", idp.token()).status_code == 200
    refused(get(srv, "/v1/namespaces", idp.token(aud="another-app")), "audience")
    refused(get(srv, "/v1/namespaces", idp.token(aud=None)))
    refused(get(srv, "/v1/namespaces", idp.token(iss="https://evil.test.invalid/")), "issuer")
    refused(get(srv, "/v1/namespaces", idp.token(exp=int(time.time()) - 3600)), "expired")
    refused(get(srv, "/v1/namespaces", idp.token(nbf=int(time.time()) + 3600)))
    refused(get(srv, "/v1/namespaces", idp.token(kid="unknown-key")), "does not list")
    refused(get(srv, "/v1/namespaces", idp.token(kid="ec-1", alg="RS256")), "does not list")  # alg of another kty
    refused(get(srv, "/v1/namespaces", idp.token(preferred_username=None)), "user claim")
    # the public key as an HMAC secret (algorithm confusion), and another key pair with a listed key id
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "preferred_username": "x", "exp": now + 600}
    confused = hs256_by_hand(claims, idp.public_pem(), "rsa-1")
    refused(get(srv, "/v1/namespaces", confused), "algorithm")
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    refused(get(srv, "/v1/namespaces", jwt.encode(claims, stranger, algorithm="RS256", headers={"kid": "rsa-1"})))


def test_a_key_added_to_the_jwks_file_is_used_without_a_restart(setup: tuple[Server, str, Path], idp: Idp) -> None:
    srv, _, _ = setup
    jwks = srv.workdir / "jwks.json"
    rotated = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    token = jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "uid-erin", "preferred_username": "erin",
                        "exp": now + 600}, rotated, algorithm="RS256", headers={"kid": "rsa-2"})
    refused(get(srv, "/v1/namespaces", token), "does not list")
    n = rotated.public_key().public_numbers()
    doc = json.loads(jwks.read_text())
    doc["keys"].append({"kty": "RSA", "kid": "rsa-2", "use": "sig", "n": _b64(n.n), "e": _b64(n.e)})
    jwks.write_text(json.dumps(doc))
    assert get(srv, "/v1/namespaces", token).status_code == 200


def test_the_processes_of_a_server_on_one_store_accept_each_others_tokens(
        setup: tuple[Server, str, Path], idp: Idp) -> None:
    srv, credential, _ = setup
    token = token_of(srv, credential)
    jwks = srv.workdir / "jwks.json"
    other = Server(srv.db, srv.workdir, env=oauth_env(str(jwks))).start()  # same data dir: the same key file
    try:
        assert get(other, "/v1/namespaces", token).status_code == 200
    finally:
        other.stop()


def test_jwks_served_over_http(tmp_path: Path, idp: Idp) -> None:
    body = json.dumps(idp.jwks).encode()

    class Jwks(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the base class's name
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Jwks)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        for db in make_database("sqlite", tmp_path):
            env = oauth_env(f"http://127.0.0.1:{httpd.server_address[1]}/jwks")
            srv = Server(db, tmp_path, env=env).start()
            try:
                assert get(srv, "/v1/namespaces", idp.token(kid="ec-1", alg="ES256")).status_code == 200
                refused(get(srv, "/v1/namespaces", idp.token(aud="another-app")))
            finally:
                srv.stop()
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_jwks_url_that_trickles_is_given_up_on(tmp_path: Path, idp: Idp) -> None:
    """An issuer whose JWKS URL sends its answer a byte at a time (each read within urllib's timeout) does not hold
    the requests that carry its tokens: the fetch is given up on after rest_oidc_jwks's 10 s in all, the token
    refused (no key listed), while the issuer still trickles; the server's own tokens are served meanwhile."""
    body = json.dumps(idp.jwks).encode()
    stop = threading.Event()

    class Trickle(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the base class's name
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for byte in body:
                if stop.wait(0.2):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    credential = add_client(tmp_path / "data", "etl-job", "alice")
    try:
        for db in make_database("sqlite", tmp_path):
            srv = Server(db, tmp_path, env=oauth_env(f"http://127.0.0.1:{httpd.server_address[1]}/jwks")).start()
            try:
                # the whole answer takes len(body) / 5 s (~90 s): refused long before (the safety timeout is 120 s)
                refused(get_within(srv, "/v1/namespaces", idp.token(), 120), "does not list")
                assert not stop.is_set()
                assert get(srv, "/v1/namespaces", token_of(srv, credential)).status_code == 200
            finally:
                srv.stop()
    finally:
        stop.set()
        httpd.shutdown()
        httpd.server_close()


def get_within(srv: Server, path: str, token: str, seconds: float) -> requests.Response:
    return requests.get(srv.rest_uri + path, headers={"Authorization": f"Bearer {token}"}, timeout=seconds)


def serve_fails(tmp_path: Path, env: dict[str, str]) -> str:
    for db in make_database("sqlite", tmp_path):
        out = subprocess.run([sys.executable, "-m", "metastore.cli", "serve", "--db", db.url, "--data-dir",
                              str(tmp_path / "data"), "--port", "0", "--rest-port", "0"],
                             capture_output=True, text=True, timeout=60, env={**os.environ, **env})
        assert out.returncode != 0, out.stderr
        return out.stderr
    raise AssertionError("no database")


def test_settings_that_cannot_be_honoured_stop_the_server(tmp_path: Path) -> None:
    env = {"METASTORE_REST_AUTH": "oauth2", "METASTORE_REST_OIDC_ISSUER": ISSUER,
           "METASTORE_REST_OIDC_JWKS": str(tmp_path / "jwks.json")}
    assert "needs rest_oidc_audience" in serve_fails(tmp_path, env)
    env["METASTORE_REST_OIDC_AUDIENCE"] = AUDIENCE
    assert "cannot read the JWKS" in serve_fails(tmp_path, env)
    key = tmp_path / "open.key"
    key.write_text(base64.b64encode(os.urandom(32)).decode())
    key.chmod(0o644)
    err = serve_fails(tmp_path, {"METASTORE_REST_AUTH": "oauth2", "METASTORE_REST_TOKEN_KEY": str(key)})
    assert "may be read by others" in err, err


def _duckdb() -> Any:
    """DuckDB with its iceberg, httpfs and avro extensions loaded from their PyPI wheels (the duckdb-iceberg
    extra); skipped only when those wheels are not installed (no wheel for this platform)."""
    duckdb = pytest.importorskip("duckdb")
    mods = []
    for name in ("duckdb_extension_avro", "duckdb_extension_httpfs", "duckdb_extension_iceberg"):
        try:
            mods.append(__import__(name))
        except ImportError:
            pytest.skip(f"{name} (PyPI wheel of DuckDB's extension) is not installed for this platform")
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for mod in mods:
        folder = Path(mod.__file__).parent / "extensions" / f"v{duckdb.__version__}"
        (path,) = folder.glob("*.duckdb_extension")
        con.execute(f"LOAD '{path}'")
    return con


def test_duckdb_iceberg_extension_with_client_credentials(setup: tuple[Server, str, Path]) -> None:
    srv, credential, _ = setup
    con = _duckdb()
    import duckdb
    ns = unique("duck")
    cat = catalog(srv, credential=credential)
    cat.create_namespace(ns)
    table = cat.create_table(f"{ns}.sales", schema=pa.schema([("id", pa.int64()), ("amount", pa.float64())]))
    table.append(pa.table({"id": [1, 2, 3, 4], "amount": [1.5, 2.5, 3.0, 4.0]}))
    cid, secret = credential.split(":", 1)
    token_uri = srv.rest_uri + "/v1/oauth/tokens"
    con.execute(f"CREATE SECRET good (TYPE ICEBERG, CLIENT_ID '{cid}', CLIENT_SECRET '{secret}', "
                f"OAUTH2_SERVER_URI '{token_uri}')")
    con.execute(f"ATTACH 'warehouse' AS lake (TYPE ICEBERG, SECRET good, ENDPOINT '{srv.rest_uri}')")
    assert con.sql(f"SELECT count(*), sum(amount) FROM lake.{ns}.sales").fetchall() == [(4, 11.0)]
    with pytest.raises(duckdb.Error, match="invalid_client"):  # DuckDB asks for its token here
        con.execute(f"CREATE SECRET bad (TYPE ICEBERG, CLIENT_ID '{cid}', CLIENT_SECRET 'wrong', "
                    f"OAUTH2_SERVER_URI '{token_uri}')")


def test_a_privilege_the_tokens_user_lacks_is_403(tmp_path: Path) -> None:
    """authorization = sql: the catalog checks the token's user; a refusal is 403 ForbiddenException and changes
    nothing, the same call by an admin succeeds."""
    from pyiceberg.exceptions import ForbiddenError

    admin = add_client(tmp_path / "data", "ops", "root")
    user = add_client(tmp_path / "data", "analyst", "bob")
    env = {"METASTORE_REST_AUTH": "oauth2", "METASTORE_AUTHORIZATION": "sql", "METASTORE_ADMIN_USERS": "root"}
    for db in make_database("sqlite", tmp_path):
        srv = Server(db, tmp_path, env=env).start()
        try:
            ns = unique("guarded")
            r = requests.post(srv.rest_uri + "/v1/namespaces", json={"namespace": [ns]}, timeout=30,
                              headers={"Authorization": f"Bearer {token_of(srv, user)}"})
            assert r.status_code == 403 and r.json()["error"]["type"] == "ForbiddenException", r.text
            with pytest.raises(ForbiddenError):
                catalog(srv, credential=user).create_namespace(ns)
            ops = catalog(srv, credential=admin)
            assert (ns,) not in ops.list_namespaces()  # the refusals changed nothing
            ops.create_namespace(ns)
            assert (ns,) in ops.list_namespaces()
        finally:
            srv.stop()
