"""Commands that take the file beyond one machine, with Litestream: replicate, restore-from,
follow."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import file_only
from ..storage import replication
from .app import cli, database_option, on_server, open_store
from .output import echo_json, json_option, print_doctor

URL_HELP = (
    "s3://BUCKET/PATH (another S3-compatible service: add ?endpoint=URL&region=R), "
    "sftp://USER@HOST/PATH, or a directory"
)


def output_option(text: str):
    return click.option(
        "-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help=text
    )


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--to", "url", required=True, help=URL_HELP)
@click.option(
    "--sync-interval",
    default=replication.SYNC_INTERVAL,
    show_default=True,
    help="How often changes leave this host: what a lost host can lose",
)
@click.option(
    "--retention",
    default=replication.RETENTION,
    show_default=True,
    help="How far back a point-in-time restore can always go (storage grows with it)",
)
@click.option(
    "--snapshot-interval", help="A full snapshot this often  [default: a quarter of the retention]"
)
@click.option(
    "--config", "print_config", is_flag=True, help="Print Litestream's config; run nothing"
)
@database_option
def replicate(files, url, sync_interval, retention, snapshot_interval, print_config, database):
    """Replicate the memory file continuously to --to, in the foreground (Litestream).

    Runs until stopped (SIGTERM or Ctrl+C: one last sync first), for systemd or a container.
    Exactly one host may write a replicated file. Credentials come from the environment
    (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE; an SSH key for SFTP:
    $SLOTMEM_SFTP_KEY, else ~/.ssh/id_ed25519...) and are never written to a file.

    With FILES (one file per tenant), each goes to --to/NAME, in one Litestream config.
    Needs pip install 'slotmem[replicate]'.

    \b
    slotmem replicate -d agent.db --to s3://backups/agent.db
    slotmem replicate --to s3://backups/tenants tenants/*.db --config > litestream.yml
    """
    if on_server(database):
        raise file_only("replicate")  # the server replicates itself
    settings = replication.Settings(sync_interval, retention, snapshot_interval)
    target = replication.replica_url(url)
    pairs = [(path, replication.joined(target, path.name)) for path in files] or [
        (database, target)
    ]
    if print_config:
        click.echo(replication.config_text(pairs, settings), nl=False)
        return
    replication.binary()  # before anything is made: a missing extra is one line
    for path, _ in pairs:
        open_store(path, create=True).close()  # slotmem's, its schema up to date, in WAL mode
    replication.replicate(pairs, settings)


@cli.command("restore-from")
@click.argument("url")
@output_option("The new file (never overwritten)")
@click.option(
    "--timestamp", help="Restore the file as it was then (ISO 8601; local time without a zone)"
)
@json_option("what was restored, and the checks of the new file")
def restore_from(url, output, timestamp, as_json):
    """Restore a replica (see 'slotmem replicate') to a new file, then check it.

    URL is what 'slotmem replicate --to' was given. The latest state, or the state at
    --timestamp within the replica's retention. The restored file is checked as 'slotmem
    doctor' checks it (exit status 1 when a check fails).

    \b
    slotmem restore-from s3://backups/agent.db -o restored.db --timestamp 2026-11-23T14:30Z
    """
    replication.restore(url, output, at=timestamp)
    checks = open_store(output).doctor()
    if as_json:
        echo_json({"action": "restored", "url": url, "path": str(output), "checks": checks})
        if any(row["ok"] is False for row in checks):
            sys.exit(1)
        return
    click.echo(f"restored {url} to {output}")
    print_doctor(checks)


@cli.command()
@click.argument("url")
@output_option("The read-only copy to keep")
@click.option(
    "--interval",
    default=replication.FOLLOW_INTERVAL,
    show_default=True,
    help="How often to look for new changes",
)
def follow(url, output, interval):
    """Keep a read-only copy of a replica up to date, in the foreground (a read replica).

    The copy trails the writer by about the writer's --sync-interval plus --interval. Open
    it only to read (slotmem does so by itself: it sees OUTPUT-txid beside it). A follower
    left by an earlier run is replaced by a fresh copy.

    \b
    slotmem follow s3://backups/agent.db -o /srv/replica/agent.db
    """
    replication.Settings(sync_interval=interval)  # the same check as every duration
    replication.follow(url, output, interval)
