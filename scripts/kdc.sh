#!/usr/bin/env bash
# MIT Kerberos for the Kerberos tests (tests/kdc.py starts a KDC of its own on loopback, in a temporary realm)
# and the headers python-gssapi builds against: Debian's krb5-kdc, krb5-admin-server, krb5-user, libkrb5-dev.
#
#   bash scripts/kdc.sh install   # apt-get install what is missing (root); `make setup` runs it before pip
#   bash scripts/kdc.sh status    # exit 0 when krb5kdc, kadmin.local, kinit and krb5-config are there
#
# Nothing here starts a daemon or touches /etc/krb5.conf: every realm the tests make lives under their tmp_path.
set -u

have_all() {
  command -v krb5kdc >/dev/null 2>&1 || [ -x /usr/sbin/krb5kdc ] || return 1
  command -v kadmin.local >/dev/null 2>&1 || [ -x /usr/sbin/kadmin.local ] || return 1
  command -v kinit >/dev/null 2>&1 || return 1
  command -v krb5-config >/dev/null 2>&1 || return 1
}

install() {
  have_all && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "kdc.sh: MIT Kerberos is missing; run as root: apt-get install krb5-kdc krb5-admin-server krb5-user libkrb5-dev" >&2
    return 1
  fi
  echo "installing MIT Kerberos (Debian packages krb5-kdc krb5-admin-server krb5-user libkrb5-dev)" >&2
  apt-get update -qq || return 1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    krb5-kdc krb5-admin-server krb5-user libkrb5-dev gcc >/dev/null || return 1
  have_all
}

case "${1:-install}" in
  install) install ;;
  status) have_all ;;
  *) echo "usage: $0 install|status" >&2; exit 2 ;;
esac
