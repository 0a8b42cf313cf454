"""Commands: `metastore relay` and `metastore events ...` (tail, consumers, clean, topics)."""

from __future__ import annotations

import datetime
import json
import logging
import signal
import sys
import threading
from typing import TYPE_CHECKING

import click

from ..app import command_settings, open_catalog
from ..config import Settings, parse_duration

if TYPE_CHECKING:
    from ..catalog.service import Catalog

log = logging.getLogger(__name__)


def _catalog(s: Settings) -> Catalog:
    from ..store.migrate import SchemaVersionError

    try:
        return open_catalog(s)
    except SchemaVersionError as e:
        raise click.ClickException(str(e)) from None


def _start(value: str | None) -> int | str | None:
    if value is None or value in ("latest", "earliest"):
        return value
    try:
        return int(value)
    except ValueError:
        raise click.BadParameter("an event id, 'earliest' or 'latest'") from None


_db_option = click.option("--db", help="SQLAlchemy URL of the store (default: SQLite in the data directory).")
_data_dir_option = click.option("--data-dir", help="Data directory for the embedded defaults [./metastore-data].")


@click.command()
@_db_option
@_data_dir_option
@click.option("--bus", help="Broker URL: activemq://HOST:61613, stomp://..., rabbitmq+stomp://..., amqp://... "
                            "(or METASTORE_BUS / `bus` in the configuration).")
@click.option("--name", default="relay", show_default=True, help="The relay's cursor (a registered consumer).")
@click.option("--from", "start", help="Where a new cursor starts: an event id, 'earliest' or 'latest' [latest].")
@click.option("--batch", type=int, default=500, show_default=True, help="Events per published batch.")
@click.option("--poll", type=float, default=0.1, show_default=True, help="Seconds between polls of the log.")
@click.option("--lease", type=float, default=10.0, show_default=True,
              help="Seconds the cursor stays with this relay without renewal (then another may take it).")
@click.option("--skip-missing", is_flag=True, help="If events were cleaned before they were published, log it "
                                                   "and go on from the oldest kept event (default: wait).")
@click.option("--topic-prefix", help="hcat.msgbus.topic.prefix [hcat].")
@click.option("--message-format", help="hcatalog.message.format: json or gzip(json) [json].")
@click.option("--server-url", help="The `server` field of messages [thrift://<host>:<port> of the settings].")
@click.pass_context
def relay(ctx: click.Context, db: str | None, data_dir: str | None, bus: str | None, name: str, start: str | None,
          batch: int, poll: float, lease: float, skip_missing: bool, topic_prefix: str | None,
          message_format: str | None, server_url: str | None) -> None:
    """Publish the notification log to a message bus (as `metastore serve --bus` does inside the server)."""
    from ..app import build_relay
    from .brokers import is_embedded

    s = command_settings(ctx, db=db, data_dir=data_dir, bus=bus, topic_prefix=topic_prefix)
    if message_format:
        s.extra["hcatalog.message.format"] = message_format
    if is_embedded(s.bus):
        raise click.ClickException("no message bus: give --bus URL (without one, subscribers read the log)")
    catalog = _catalog(s)
    start_at = _start(start)
    if start_at == "earliest":
        oldest = catalog.oldest_event_id()
        start_at = (oldest - 1) if oldest is not None else 0
    elif start_at == "latest":
        start_at = None
    r = build_relay(s, catalog, name, start_at, server_url,  # type: ignore[arg-type]
                    batch=batch, poll=poll, lease=lease, skip_missing=skip_missing)
    signal.signal(signal.SIGTERM, lambda *_: r.stop(0))
    click.echo(f"relay {name}: {catalog.store.describe()} -> "
               f"{r.broker.describe()}", err=True)
    try:
        r.run()
    except KeyboardInterrupt:
        pass


@click.group()
def events() -> None:
    """The notification log: watch events, consumers, retention, topics."""


def _fmt_time(ts: object) -> str:
    try:
        return datetime.datetime.fromtimestamp(int(ts)).strftime("%H:%M:%S")  # type: ignore[call-overload]
    except (TypeError, ValueError, OSError):
        return "--:--:--"


@events.command("tail")
@click.option("--topic", "topics", multiple=True, help="Topic or pattern (`*` one word, `#` any words); "
                                                       "repeatable [every topic: #].")
@click.option("--bus", help="Read from this broker instead of the log (activemq://, amqp://, ...).")
@click.option("--metastore", help="Read the log of the metastore at thrift://HOST:PORT [the settings' host:port].")
@_db_option
@click.option("--from", "start", help="Start after this event id, or 'earliest' (log only) [latest].")
@click.option("--name", help="A durable subscription name (resume where it stopped).")
@click.option("--state", type=click.Path(dir_okay=False), help="File for the subscription's position.")
@click.option("--body", is_flag=True, help="Print each message's body (HCatalog's JSON).")
@click.option("--count", type=int, help="Stop after this many messages.")
@click.option("--topic-prefix", help="hcat.msgbus.topic.prefix, when reading the log [hcat].")
@click.pass_context
def events_tail(ctx: click.Context, topics: tuple[str, ...], bus: str | None, metastore: str | None,
                db: str | None, start: str | None, name: str | None, state: str | None, body: bool,
                count: int | None, topic_prefix: str | None) -> None:
    """Watch events live: one line per event (id, time, topic, type, object), as a subscriber sees them."""
    from .brokers import is_embedded
    from .subscriber import Message, subscribe

    s = command_settings(ctx, db=db, bus=bus, topic_prefix=topic_prefix, metastore=metastore)
    seen = 0
    done = threading.Event()

    def show(m: Message) -> None:
        nonlocal seen
        try:
            f = m.fields()
        except Exception:  # noqa: BLE001 - print what we have
            f = {}
        what = ".".join(x for x in (f.get("db"), f.get("table")) if x)
        if f.get("partitions"):
            what += " " + ", ".join("/".join(f"{k}={v}" for k, v in p.items()) for p in f["partitions"])
        elif f.get("keyValues"):
            what += " " + "/".join(f"{k}={v}" for k, v in f["keyValues"].items())
        elif f.get("functionName"):
            what += "." + str(f["functionName"])
        click.echo(f"{m.event_id:>8}  {_fmt_time(f.get('timestamp'))}  {m.topic:<32} {m.event_type:<16} {what}")
        if body:
            click.echo("          " + json.dumps(f, separators=(",", ":")))
        sys.stdout.flush()
        seen += 1
        if count is not None and seen >= count:
            done.set()

    source: str | Catalog | None
    if bus or not is_embedded(s.bus) and db is None and metastore is None:
        source = None
        url = bus or s.bus
        where = url
    else:
        url = None
        source = _catalog(s) if db else s.metastore_uri
        where = db or s.metastore_uri
    sub = subscribe(list(topics) or ["#"], show, bus=url, source=source, name=name, state=state,
                    start=_start(start), prefix=s.topic_prefix)
    click.echo(f"watching {', '.join(topics) or '#'} on {where} (Ctrl-C to stop)", err=True)
    try:
        while sub.running and not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    sub.stop()
    try:
        sub.join(5)
    except Exception as e:  # noqa: BLE001
        raise click.ClickException(str(e)) from None


@events.group("consumers", invoke_without_command=True)
@_db_option
@_data_dir_option
@click.pass_context
def consumers(ctx: click.Context, db: str | None, data_dir: str | None) -> None:
    """Registered consumers of the log (relay cursors, replication policies): retention keeps what they
    have not read. Without a subcommand: list them."""
    ctx.obj = dict(ctx.obj or {}, db=db, data_dir=data_dir)
    if ctx.invoked_subcommand is None:
        cat = _catalog(command_settings(ctx, db=db, data_dir=data_dir))
        current, oldest = cat.current_event_id(), cat.oldest_event_id()
        click.echo(f"log: events {oldest if oldest is not None else '-'} to {current}")
        for c in cat.consumers():
            lease = ""
            if c.owner:
                until = datetime.datetime.fromtimestamp((c.leaseUntil or 0) / 1000)
                lease = f"  owner {c.owner} until {until:%H:%M:%S}"
            click.echo(f"{c.name:<32} at {c.lastEventId:>10}  ({current - c.lastEventId} behind){lease}")


def _consumer_catalog(ctx: click.Context) -> Catalog:
    o = ctx.parent.obj if ctx.parent else {}
    return _catalog(command_settings(ctx, db=o.get("db"), data_dir=o.get("data_dir")))


@consumers.command("register")
@click.argument("name")
@click.option("--at", type=int, help="Last event read [the current event].")
@click.pass_context
def consumers_register(ctx: click.Context, name: str, at: int | None) -> None:
    """Register a consumer (a replication policy, say): events after its position are kept for it."""
    c = _consumer_catalog(ctx).register_consumer(name, at)
    click.echo(f"{c.name} at {c.lastEventId}")


@consumers.command("set")
@click.argument("name")
@click.argument("event_id", type=int)
@click.pass_context
def consumers_set(ctx: click.Context, name: str, event_id: int) -> None:
    """Move a consumer to EVENT_ID (the last event it has read)."""
    from ..core.errors import CatalogError
    try:
        _consumer_catalog(ctx).set_consumer(name, event_id)
    except CatalogError as e:
        raise click.ClickException(e.message) from None


@consumers.command("remove")
@click.argument("name")
@click.pass_context
def consumers_remove(ctx: click.Context, name: str) -> None:
    """Unregister a consumer (retention no longer waits for it)."""
    if not _consumer_catalog(ctx).remove_consumer(name):
        raise click.ClickException(f"no consumer {name}")


@events.command("clean")
@_db_option
@_data_dir_option
@click.option("--ttl", help="Time-to-live [event_ttl, 86400s].")
@click.option("--max-ttl", help="Hard cap: older events go even if a consumer has not read them [event_ttl_max, 7d].")
@click.pass_context
def events_clean(ctx: click.Context, db: str | None, data_dir: str | None, ttl: str | None,
                 max_ttl: str | None) -> None:
    """Clean the log once, as the server does every event_clean_interval."""
    from .background import retention_settings

    s = command_settings(ctx, db=db, data_dir=data_dir)
    t, cap, _ = retention_settings(s)
    try:  # one-off values of this command, not settings
        t = parse_duration(ttl, t) or 0
        cap = parse_duration(max_ttl, cap)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--ttl/--max-ttl") from None
    n = _catalog(s).clean_notifications(int(t), int(cap) if cap is not None else None)
    click.echo(f"cleaned {n} events")


@events.command("topics")
def events_topics() -> None:
    """Which topic each event type goes to."""
    from .topics import TOPIC_RULES

    for t, rule in TOPIC_RULES.items():
        click.echo(f"{t:<32} {rule}")
