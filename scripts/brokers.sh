#!/usr/bin/env bash
# The message brokers the notification tests use: ActiveMQ is installed (the tests start and stop it, see
# scripts/activemq.sh); RabbitMQ, a service of the machine on 127.0.0.1:5672 (guest/guest), is started if it
# is installed but stopped.
set -u
bash "$(dirname "$0")/activemq.sh" install || echo "warning: could not install ActiveMQ" >&2
if command -v rabbitmq-server >/dev/null 2>&1 && ! (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; then
  echo "starting RabbitMQ" >&2
  rabbitmq-server -detached >/dev/null 2>&1 || true
  for _ in $(seq 1 60); do (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null && break; sleep 1; done
fi
exit 0
