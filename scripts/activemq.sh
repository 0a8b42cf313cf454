#!/usr/bin/env bash
# ActiveMQ for the notification relay's tests and benchmark: Debian's `activemq` package, its instance
# "main" with a STOMP connector added beside OpenWire, run through Debian's init script.
#
#   bash scripts/activemq.sh install   # apt-get install activemq (if missing), add the STOMP connector, enable "main"
#   bash scripts/activemq.sh start     # install, then start the broker and wait for its ports
#   bash scripts/activemq.sh stop      # stop the broker (and wait until the process is gone)
#   bash scripts/activemq.sh status    # exit 0 when both ports answer
#
# Ports: OpenWire (JMS clients) 127.0.0.1:61616, STOMP (the relay) 127.0.0.1:61613.
# `make services` runs `install` only; the tests start and stop the broker themselves.
set -u

CONF_DIR=/etc/activemq/instances-available/main
CONF=$CONF_DIR/activemq.xml
OPENWIRE_PORT=61616
STOMP_PORT=61613
PIDFILE=/var/run/activemq/main.pid

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

install() {
  if [ ! -f /usr/share/activemq/bin/activemq.jar ] || [ ! -f "$CONF" ]; then
    echo "installing ActiveMQ (Debian package activemq)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q activemq >/dev/null || return 1
  fi
  if ! grep -q 'transportConnector name="stomp"' "$CONF"; then
    sed -i "s#\(<transportConnector name=\"openwire\"[^>]*/>\)#\1\n            <transportConnector name=\"stomp\" uri=\"stomp://127.0.0.1:$STOMP_PORT\"/>#" "$CONF"
  fi
  grep -q 'transportConnector name="stomp"' "$CONF" || { echo "could not add the STOMP connector to $CONF" >&2; return 1; }
  mkdir -p /etc/activemq/instances-enabled
  ln -sfn "$CONF_DIR" /etc/activemq/instances-enabled/main
}

running_pid() {
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -d "/proc/$pid" ] && echo "$pid"
}

start() {
  install || return 1
  if port_open $OPENWIRE_PORT && port_open $STOMP_PORT; then return 0; fi
  /etc/init.d/activemq start >/dev/null 2>&1 || true
  for _ in $(seq 1 120); do
    port_open $OPENWIRE_PORT && port_open $STOMP_PORT && return 0
    sleep 0.5
  done
  echo "ActiveMQ did not open ports $OPENWIRE_PORT and $STOMP_PORT" >&2
  return 1
}

stop() {
  local pid
  pid=$(running_pid) || pid=$(pgrep -u activemq -f 'activemq.base=/var/lib/activemq/main' | head -1)
  if [ -n "${pid:-}" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do [ -d "/proc/$pid" ] || break; sleep 0.5; done
    [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null
    for _ in $(seq 1 20); do [ -d "/proc/$pid" ] || break; sleep 0.25; done
  fi
  rm -f "$PIDFILE"
  for _ in $(seq 1 40); do port_open $OPENWIRE_PORT || port_open $STOMP_PORT || return 0; sleep 0.25; done
  return 0
}

case "${1:-start}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) port_open $OPENWIRE_PORT && port_open $STOMP_PORT ;;
  *) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
