"""`metastore catalogd`: run catalogd; `metastore catalogd status`: print its status and metrics."""

from __future__ import annotations

import json
import signal
import sys
import threading
import urllib.request

import click

from ..app import command_settings


def _split(values: tuple[str, ...]) -> list[str]:
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


@click.group(invoke_without_command=True)
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False),
              help="The metastore's settings (TOML or hive-site.xml): `metastore`, and the fronts' bounds "
                   "(max_connections, idle_timeout, read_timeout, max_message_bytes) [METASTORE_CONFIG].")
@click.option("--metastore", "metastore_url", help="The metastore, thrift://HOST:PORT [setting `metastore`].")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=9084, show_default=True, help="catalogd's Thrift port.")
@click.option("--http-port", type=int, help="Status/topic HTTP port [the Thrift port + 1].")
@click.option("--hierarchical/--sequential", "hierarchical", default=True, show_default=True,
              help="enable_hierarchical_event_processing.")
@click.option("--blacklist-dbs", multiple=True, help="Databases not cached (comma-separated, repeatable).")
@click.option("--blacklist-tables", multiple=True, help="Tables db.table not cached (comma-separated).")
@click.option("--topic-mode", type=click.Choice(["full", "minimal"]), default="full", show_default=True)
@click.option("--sync-ddl/--no-sync-ddl", default=False, show_default=True,
              help="Changes through catalogd return once subscribers have them.")
@click.option("--sync-ddl-timeout", type=float, default=30.0, show_default=True, help="Seconds.")
@click.option("--sync-reads/--no-sync-reads", default=False, show_default=True,
              help="Reads first sync the cache to the metastore's latest event.")
@click.option("--loader-threads", type=int, default=4, show_default=True)
@click.option("--db-executors", type=int, default=4, show_default=True)
@click.option("--table-executors", type=int, default=4, show_default=True, help="Per database executor.")
@click.pass_context
def catalogd(ctx: click.Context, config_file: str | None, metastore_url: str | None, host: str, port: int,
             http_port: int | None,
             hierarchical: bool, blacklist_dbs: tuple[str, ...], blacklist_tables: tuple[str, ...],
             topic_mode: str, sync_ddl: bool, sync_ddl_timeout: float, sync_reads: bool, loader_threads: int,
             db_executors: int, table_executors: int) -> None:
    """catalogd: a versioned cache of the metastore, fed by its events, serving the Thrift API."""
    if ctx.invoked_subcommand is not None:
        return
    from ..app import catalogd_service
    from ..config import SettingsError

    settings = command_settings(ctx, metastore=metastore_url)  # checked: thrift://HOST:PORT
    if settings.metastore is None:
        raise click.UsageError("--metastore thrift://HOST:PORT is required (or the setting `metastore`)")
    try:  # TLS configured (hive.metastore.use.SSL) but its keystore unusable: refused, never served in the clear
        svc = catalogd_service(settings, host, port, hierarchical=hierarchical, http_port=http_port,
                               blacklist_dbs=_split(blacklist_dbs), blacklist_tables=_split(blacklist_tables),
                               topic_mode=topic_mode, sync_ddl=sync_ddl, sync_ddl_timeout=sync_ddl_timeout,
                               sync_reads=sync_reads, loader_threads=loader_threads, db_executors=db_executors,
                               table_executors_per_db=table_executors)
    except SettingsError as e:
        raise click.ClickException(str(e)) from None
    try:
        svc.start()
    except Exception as e:  # noqa: BLE001 - the metastore is down or the port taken: say so plainly
        click.echo(f"catalogd: cannot start: {type(e).__name__}: {e}", err=True)
        sys.exit(1)
    tls = " (TLS)" if svc.tls is not None else ""
    click.echo(f"catalogd: thrift://{host}:{svc.port}{tls} (status http://{host}:{svc.http_port}/status), "
               f"{'hierarchical' if hierarchical else 'sequential'}, metastore {settings.metastore}", err=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    svc.close()


@catalogd.command()
@click.option("--url", default="http://127.0.0.1:9085", show_default=True, help="catalogd's HTTP endpoint.")
@click.option("--json", "as_json", is_flag=True, help="Print the raw JSON.")
def status(url: str, as_json: bool) -> None:
    """Events received/applied/skipped, events/s, lag, queue depths, table loads, topic versions."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/status", timeout=10) as r:
            doc = json.loads(r.read().decode("utf-8"))
    except OSError as e:
        click.echo(f"catalogd at {url} is not reachable: {e}", err=True)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    p, c, lo, t = doc["processor"], doc["catalog"], doc["loader"], doc["topics"]
    rows = [
        ("mode", p["mode"]), ("metastore", doc["metastore"]),
        ("events received / applied / skipped / failed",
         f"{p['events_received']} / {p['events_applied']} / {p['events_skipped']} / {p['events_failed']}"),
        ("events per second", p["events_per_second"]),
        ("synced event id / metastore's latest", f"{p['synced_event_id']} / {p['latest_event_id']}"),
        ("lag", f"{p['lag_events']} events, {p['lag_seconds']:.1f} s"),
        ("catalog version", c["version"]),
        ("databases / tables (incomplete) / partitions / files",
         f"{c['databases']} / {c['tables']} ({c['incomplete_tables']}) / {c['partitions']} / {c['files']}"),
        ("table loads (failures, queued)", f"{lo['loads']} ({lo['failures']}, {lo['queued']})"),
        ("topic updates / last version / mode", f"{t['updates']} / {t['last_version']} / {t['mode']}"),
        ("subscribers (version applied)", ", ".join(f"{k}={v}" for k, v in t["subscribers"].items()) or "none"),
        ("tables invalidated after failures", p["tables_invalidated"]),
    ]
    depths = {k: v for k, v in (p.get("queue_depths") or {}).items() if v}
    rows.append(("queue depth per executor", ", ".join(f"{k}={v}" for k, v in depths.items()) or "all empty"))
    if p.get("error"):
        rows.append(("last error", p["error"]))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        click.echo(f"{k:<{width}}  {v}")
