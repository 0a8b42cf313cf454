"""Hadoop's impersonation (proxy users) for the SASL front: a client that authenticated as one user and names
another as its SASL authorization id acts for that other user when the settings allow it, as Hadoop's
DefaultImpersonationProvider decides:

- hadoop.proxyuser.<short>.users: the users <short> may act for ("*": any), comma-separated;
- hadoop.proxyuser.<short>.groups: or any member of these groups (the server host's group database, as Hadoop's
  default group mapping reads it; "*": any);
- hadoop.proxyuser.<short>.hosts: the client addresses it may do so from: addresses, CIDR ranges, host names
  (resolved when the server starts) or "*". Without .hosts, or without both .users and .groups, it may not
  impersonate anyone.

`<short>` is the authenticated principal's short name (auth_to_local). The server's own principal (its keytab's,
which could mint a ticket for anyone anyway) may act for any user from anywhere: its scheduled policies run as
their EXECUTED AS user so.
"""

from __future__ import annotations

import grp
import ipaddress
import logging
import os
import pwd
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..config import PROXY_USER_KEY, SettingsError

log = logging.getLogger(__name__)

MAX_ENTRIES = 1024  # entries of one list
MAX_GROUPS = 4096  # groups of one user looked up


def _split(value: str) -> list[str]:
    return [x.strip() for x in value.split(",") if x.strip()]


@dataclass
class _Hosts:
    any: bool = False
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = field(default_factory=list)

    def allows(self, address: str | None) -> bool:
        if self.any:
            return True
        ip = _ip(address)
        if ip is None:
            return False
        return any(ip.version == n.version and ip in n for n in self.networks)


def _ip(address: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP of a connection's address as the Thrift front gives it (`host:port`)."""
    if not address:
        return None
    host = address.rpartition(":")[0] or address  # the port is last, after an IPv6 address's colons too
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _hosts(key: str, value: str) -> _Hosts:
    out = _Hosts()
    entries = _split(value)
    if len(entries) > MAX_ENTRIES:
        raise SettingsError(f"settings: {key}: more than {MAX_ENTRIES} entries")
    for e in entries:
        if e == "*":
            out.any = True
            continue
        try:
            out.networks.append(ipaddress.ip_network(e, strict=False))
            continue
        except ValueError:
            pass
        try:
            infos = socket.getaddrinfo(e, None, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            log.warning("%s: the host %r does not resolve: no connection from it may impersonate", key, e[:200])
            continue
        for info in infos:
            out.networks.append(ipaddress.ip_network(str(info[4][0]).partition("%")[0]))
    return out


@dataclass
class _Rule:
    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    hosts: _Hosts | None = None


def groups_of(user: str) -> frozenset[str]:
    """The user's groups in the server host's group database (Hadoop's default group mapping); none for a user
    the host does not know."""
    try:
        pw = pwd.getpwnam(user)
        ids = os.getgrouplist(user, pw.pw_gid)[:MAX_GROUPS]
    except (KeyError, OSError, ValueError):
        return frozenset()
    out = set()
    for gid in ids:
        try:
            out.add(grp.getgrgid(gid).gr_name)
        except KeyError:
            continue
    return frozenset(out)


class ProxyUsers:
    """The impersonation rules of the settings' hadoop.proxyuser.* keys (see the module's doc)."""

    def __init__(self, settings: Mapping[str, str], server_principal: str | None = None) -> None:
        self.server_principal = server_principal
        self.rules: dict[str, _Rule] = {}
        for key, value in settings.items():
            m = PROXY_USER_KEY.fullmatch(key)
            if m is None:
                continue
            short, kind = m.group(1), m.group(2)
            rule = self.rules.setdefault(short, _Rule())
            if kind == "hosts":
                rule.hosts = _hosts(key, value)
                continue
            entries = _split(value)
            if len(entries) > MAX_ENTRIES:
                raise SettingsError(f"settings: {key}: more than {MAX_ENTRIES} entries")
            if kind == "users":
                rule.users = frozenset(entries)
            else:
                rule.groups = frozenset(entries)

    def refusal(self, real: str, real_full: str, user: str, address: str | None) -> str | None:
        """None when `real` (short name; `real_full` its principal) may act for `user` from `address`; else why
        not (Hadoop's texts, for the log: the client gets a fixed one)."""
        if self.server_principal is not None and real_full == self.server_principal:
            return None
        rule = self.rules.get(real)
        if rule is None:
            return f"User: {real} is not allowed to impersonate {user}"
        if not ("*" in rule.users or user in rule.users or self._in_groups(rule.groups, user)):
            return f"User: {real} is not allowed to impersonate {user}"
        if rule.hosts is None or not rule.hosts.allows(address):
            return f"Unauthorized connection for super-user: {real} from IP {_ip(address)}"
        return None

    @staticmethod
    def _in_groups(groups: frozenset[str], user: str) -> bool:
        if not groups:
            return False
        return "*" in groups or bool(groups & groups_of(user))
