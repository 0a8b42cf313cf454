"""A small STOMP 1.2 client (frames over one TCP socket), enough for the relay and the subscribers.

It speaks to ActiveMQ's STOMP connector and to RabbitMQ's STOMP plugin. A SEND without a content-length
header becomes a JMS TextMessage in ActiveMQ (with one, a BytesMessage), and its other headers become the
message's string properties: that is how HCatalog's properties reach JMS subscribers.
"""

from __future__ import annotations

import itertools
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field


class StompError(ConnectionError):
    """The connection failed, was closed, timed out, or the broker answered with an ERROR frame."""


_ESCAPES = {"\\": "\\\\", "\n": "\\n", ":": "\\c", "\r": "\\r"}
_UNESCAPES = {"\\\\": "\\", "\\n": "\n", "\\c": ":", "\\r": "\r"}


def _escape(v: str) -> str:
    return "".join(_ESCAPES.get(ch, ch) for ch in v)


def _unescape(v: str) -> str:
    if "\\" not in v:
        return v
    out, i = [], 0
    while i < len(v):
        pair = v[i:i + 2]
        if pair in _UNESCAPES:
            out.append(_UNESCAPES[pair])
            i += 2
        else:
            out.append(v[i])
            i += 1
    return "".join(out)


@dataclass
class Frame:
    command: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def encode(self, escape: bool = True) -> bytes:
        lines = [self.command]
        for k, v in self.headers.items():
            lines.append(f"{_escape(k)}:{_escape(str(v))}" if escape else f"{k}:{v}")
        return ("\n".join(lines) + "\n\n").encode("utf-8") + self.body + b"\0"


class StompConnection:
    """One STOMP connection. Not thread-safe: one thread uses it at a time."""

    def __init__(self, host: str, port: int, login: str | None = None, passcode: str | None = None,
                 vhost: str | None = None, client_id: str | None = None, heartbeat_ms: int = 0,
                 timeout: float = 10.0) -> None:
        self.host, self.port = host, port
        self.login, self.passcode, self.vhost, self.client_id = login, passcode, vhost, client_id
        self.heartbeat_ms = heartbeat_ms
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self._buf = bytearray()
        self._ids = itertools.count(1)
        self.server_heartbeat_ms = 0
        self._last_recv = 0.0

    # ---- connection ----------------------------------------------------------------------------------

    def connect(self) -> Frame:
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as e:
            self.sock = None
            raise StompError(f"cannot connect to stomp://{self.host}:{self.port}: {e}") from e
        headers = {"accept-version": "1.2,1.1", "host": self.vhost or self.host,
                   "heart-beat": f"0,{self.heartbeat_ms}"}
        if self.login is not None:
            headers["login"] = self.login
            headers["passcode"] = self.passcode or ""
        if self.client_id:
            headers["client-id"] = self.client_id
        self._send(Frame("CONNECT", headers), escape=False)
        frame = self.read_frame(self.timeout)
        if frame is None:
            self.close()
            raise StompError(f"stomp://{self.host}:{self.port}: no answer to CONNECT")
        if frame.command != "CONNECTED":
            self.close()
            raise StompError(f"stomp://{self.host}:{self.port} refused the connection: {_error_text(frame)}")
        hb = frame.headers.get("heart-beat", "0,0").split(",")
        try:
            self.server_heartbeat_ms = int(hb[0]) if self.heartbeat_ms else 0
        except (ValueError, IndexError):
            self.server_heartbeat_ms = 0
        return frame

    @property
    def connected(self) -> bool:
        return self.sock is not None

    def close(self, graceful: bool = False) -> None:
        if self.sock is None:
            return
        if graceful:
            try:
                receipt = f"bye-{next(self._ids)}"
                self._send(Frame("DISCONNECT", {"receipt": receipt}))
                self.wait_receipt(receipt, 2.0)
            except StompError:
                pass
        try:
            self.sock.close()
        except OSError:
            pass
        self.sock = None
        self._buf.clear()

    def next_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    # ---- frames --------------------------------------------------------------------------------------

    def _send(self, frame: Frame, escape: bool = True) -> None:
        if self.sock is None:
            raise StompError("not connected")
        try:
            self.sock.sendall(frame.encode(escape))
        except OSError as e:
            self.close()
            raise StompError(f"stomp://{self.host}:{self.port}: send failed: {e}") from e

    def send_frames(self, frames: list[Frame]) -> None:
        """Send several frames in one write."""
        if self.sock is None:
            raise StompError("not connected")
        try:
            self.sock.sendall(b"".join(f.encode() for f in frames))
        except OSError as e:
            self.close()
            raise StompError(f"stomp://{self.host}:{self.port}: send failed: {e}") from e

    def send(self, command: str, headers: dict[str, str], body: bytes = b"") -> None:
        self._send(Frame(command, headers, body))

    def heartbeat(self) -> None:
        if self.sock is not None:
            try:
                self.sock.sendall(b"\n")
            except OSError as e:
                self.close()
                raise StompError(f"stomp://{self.host}:{self.port}: {e}") from e

    def read_frame(self, timeout: float | None) -> Frame | None:
        """The next frame, or None when none arrived within `timeout` seconds. ERROR frames raise."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            frame = self._parse()
            if frame is not None:
                if frame.command == "ERROR":
                    self.close()
                    raise StompError(f"stomp://{self.host}:{self.port}: {_error_text(frame)}")
                return frame
            if self.sock is None:
                raise StompError("not connected")
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            try:
                self.sock.settimeout(left if left is not None else None)
                chunk = self.sock.recv(65536)
            except TimeoutError:
                return None
            except OSError as e:
                self.close()
                raise StompError(f"stomp://{self.host}:{self.port}: receive failed: {e}") from e
            if not chunk:
                self.close()
                raise StompError(f"stomp://{self.host}:{self.port}: the broker closed the connection")
            self._last_recv = time.monotonic()
            self._buf += chunk

    def silent_for(self) -> float:
        """Seconds since the broker last sent anything."""
        return time.monotonic() - self._last_recv if self._last_recv else 0.0

    def _parse(self) -> Frame | None:
        buf = self._buf
        i = 0
        while i < len(buf) and buf[i] in (10, 13):  # heart-beats between frames
            i += 1
        if i:
            del buf[:i]
        if not buf:
            return None
        end = buf.find(b"\n\n")
        end_crlf = buf.find(b"\r\n\r\n")
        if end_crlf != -1 and (end == -1 or end_crlf < end):
            head, start = bytes(buf[:end_crlf]), end_crlf + 4
        elif end != -1:
            head, start = bytes(buf[:end]), end + 2
        else:
            return None
        lines = head.decode("utf-8").replace("\r\n", "\n").split("\n")
        command, headers = lines[0], dict[str, str]()
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if command in ("CONNECTED",):
                headers.setdefault(k, v)
            else:
                headers.setdefault(_unescape(k), _unescape(v))
        if "content-length" in headers:
            n = int(headers["content-length"])
            if len(buf) < start + n + 1:
                return None
            body = bytes(buf[start:start + n])
            del buf[:start + n + 1]
        else:
            z = buf.find(b"\0", start)
            if z == -1:
                return None
            body = bytes(buf[start:z])
            del buf[:z + 1]
        return Frame(command, headers, body)

    def wait_receipt(self, receipt: str, timeout: float, on_frame: Callable[[Frame], None] | None = None) -> None:
        """Wait for the RECEIPT of `receipt`; other frames go to `on_frame` (or are dropped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            frame = self.read_frame(max(left, 0.0)) if left > 0 else None
            if frame is None:
                self.close()
                raise StompError(f"stomp://{self.host}:{self.port}: no receipt for {receipt} within {timeout}s")
            if frame.command == "RECEIPT" and frame.headers.get("receipt-id") == receipt:
                return
            if on_frame is not None:
                on_frame(frame)


def _error_text(frame: Frame) -> str:
    msg = frame.headers.get("message", frame.command)
    detail = frame.body.decode("utf-8", "replace").strip()
    return f"{msg}: {detail[:500]}" if detail else msg
