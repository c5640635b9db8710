"""Trusting the file (issue 13): no silent takeover of files that are not slotmem's, no file
made by a read command or a typo, plain paths only, read-only files and directories, and one
clear error naming the file for every fault of the disk."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from slotmem import (
    CorruptDatabase,
    DatabaseNotFound,
    DiskFull,
    ForeignDatabase,
    InvalidInput,
    ReadOnlyDatabase,
    SlotmemError,
    StorageError,
    Store,
    StoreBusy,
)
from slotmem.cli import cli
from slotmem.storage import db

# Every command with the arguments that make it do its work (`path` opens nothing).
COMMANDS = {
    "get": ["get", "user", "k"],
    "list": ["list"],
    "history": ["history", "user", "k"],
    "search": ["search", "deploy"],
    "context": ["context", "deploy"],
    "stats": ["stats"],
    "doctor": ["doctor"],
    "doctor --repair": ["doctor", "--repair"],
    "policy": ["policy"],
    "policy --cap": ["policy", "user", "--cap", "5"],
    "prune": ["prune"],
    "migrate": ["migrate"],
    "migrate --list": ["migrate", "--list"],
    "reindex": ["reindex"],
    "remember": ["remember", "user", "k", "v"],
    "forget": ["forget", "user", "k"],
    "rate": ["rate", "user", "k", "1"],
    "demo": ["demo"],
    "backup": ["backup", "{tmp}/copy.db"],
}
READS = {"get", "list", "history", "search", "context", "stats", "doctor", "policy"}
CREATES = {"remember", "policy --cap", "demo"}


def invoke(args, path, tmp):
    args = [a.replace("{tmp}", str(tmp)) for a in args]
    return CliRunner().invoke(cli, [*args, "-d", str(path)])


def snapshot(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def one_line_error(result, *needles):
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# -- 3. files that are not slotmem's --------------------------------------------------------


def foreign(path: Path, journal: str = "delete", own_facts: bool = False) -> Path:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    if own_facts:
        conn.execute("CREATE TABLE memory_facts (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('Ada'), ('Grace')")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("journal,own_facts", [("delete", False), ("wal", False), ("delete", True)])
def test_foreign_database_is_refused_by_every_command(tmp_path, journal, own_facts):
    home = tmp_path / "app"
    home.mkdir()
    path = foreign(home / "app.db", journal, own_facts)
    before = snapshot(home)
    for name, args in COMMANDS.items():
        result = invoke(args, path, tmp_path)
        one_line_error(result, str(path), "slotmem did not make", "customers")
        assert snapshot(home) == before, f"{name} changed the file"
    for create in (False, True):
        with pytest.raises(ForeignDatabase, match="left as it is"):
            Store(path, create=create)
    main = path.read_bytes()
    with pytest.raises(ForeignDatabase):
        Store(path, readonly=True)  # may leave SQLite's empty -shm of a WAL file beside it
    assert path.read_bytes() == main


def test_empty_and_zero_byte_databases_are_slotmems_to_use(tmp_path):
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("PRAGMA user_version = 0").close()
    zero = tmp_path / "zero.db"
    zero.touch()
    for path in (empty, zero):
        assert invoke(COMMANDS["remember"], path, tmp_path).exit_code == 0
        with Store(path) as store:
            assert store.get("user", "k").value == "v"


def test_missing_file_read_commands_say_so_and_make_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    path = home / "typo" / "memory.db"
    for name, args in COMMANDS.items():
        if name in CREATES:
            continue
        result = invoke(args, path, tmp_path)
        one_line_error(result, f"no memory file at {path}")
        assert list(home.iterdir()) == [], f"{name} made something"
    with pytest.raises(DatabaseNotFound, match="create=True"):
        Store(path)
    assert list(home.iterdir()) == []


@pytest.mark.parametrize("name", sorted(CREATES))
def test_writing_commands_create_the_file(tmp_path, name):
    path = tmp_path / "new" / "memory.db"
    result = invoke(COMMANDS[name], path, tmp_path)
    assert result.exit_code == 0, result.output
    with Store(path) as store:
        assert store.readonly is False


def test_bad_input_to_remember_makes_no_file(tmp_path):
    path = tmp_path / "memory.db"
    one_line_error(invoke(["remember", "Bad Slot", "k", "v"], path, tmp_path), "invalid slot")
    assert not path.exists()


@pytest.mark.parametrize(
    "name", ["file:memory.db?mode=memory", "file::memory:", ":memory:", "", "a\x00b.db"]
)
def test_uri_and_special_names_are_refused(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInput, match="plain file path"):
        Store(name, create=True)
    if "\x00" not in name and name:
        one_line_error(invoke(COMMANDS["remember"], name, tmp_path), "plain file path")
    assert list(tmp_path.iterdir()) == []


def test_odd_characters_are_plain_file_names(tmp_path):
    path = tmp_path / "we?ird #name%20&mode=ro.db"
    with Store(path, create=True) as store:
        store.upsert("user", "k", "v")
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == [path.name]
    with Store(path) as store:
        assert store.get("user", "k").value == "v"


# -- 4. read-only files and directories -----------------------------------------------------

READER = r"""
import json, sys
from click.testing import CliRunner
from slotmem import Store
from slotmem.cli import cli
path = sys.argv[1]
out = {}
for args in (["get", "user", "k"], ["list", "--json"], ["search", "deploy", "--no-track"],
             ["doctor"], ["stats"], ["history", "user", "k"], ["remember", "user", "k", "new"],
             ["forget", "user", "k"], ["rate", "user", "k", "1"]):
    result = CliRunner().invoke(cli, [*args, "-d", path])
    out[args[0]] = [result.exit_code, result.output]
with Store(path) as store:
    out["readonly"] = store.readonly
    out["hits"] = [h.fact.key for h in store.query_facts("deploy", track_access=False)]
    try:
        store.upsert("user", "k", "newer")
    except Exception as e:
        out["upsert"] = [type(e).__name__, str(e)]
print(json.dumps(out))
"""


def as_reader(code: str, *args: str) -> subprocess.CompletedProcess:
    """Run ``code`` under file permissions: root ignores them, so as root the process drops
    the capabilities that override them (setpriv); as any other user, as that user."""
    prefix = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: permissions cannot be tested")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    return subprocess.run(
        [*prefix, sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


@pytest.fixture
def shared_dir(tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir()
    yield directory
    directory.chmod(0o755)  # so that pytest can clean up


@pytest.mark.parametrize("where", ["file", "directory"])
def test_read_only_file_or_directory_serves_reads(shared_dir, where):
    path = shared_dir / "memory.db"
    with Store(path, create=True) as store:
        store.upsert("user", "k", "We deploy on Fridays")
        store.upsert("project", "deploy", "deploy with care")
    path.chmod(0o444 if where == "file" else 0o644)
    shared_dir.chmod(0o777 if where == "file" else 0o555)
    before = path.read_bytes()
    done = as_reader(READER, str(path))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["readonly"] is True and set(out["hits"]) == {"deploy", "k"}
    assert out["get"] == [0, "We deploy on Fridays\n"]
    assert {row["key"] for row in json.loads(out["list"][1])} == {"k", "deploy"}
    assert out["search"][0] == 0 and "deploy" in out["search"][1]
    assert out["stats"][0] == 0 and out["history"][0] == 0
    doctor = out["doctor"][1]
    assert out["doctor"][0] == 0 and "BAD" not in doctor and "--repair" not in doctor, doctor
    assert "[-- ] full-text index in sync: not checked" in doctor
    for command in ("remember", "forget", "rate"):
        code, output = out[command]
        assert code == 1 and output.startswith("Error: ") and "read-only" in output, output
        assert len(output.strip().splitlines()) == 1 and str(path) in output
    assert out["upsert"][0] == "ReadOnlyDatabase" and str(path) in out["upsert"][1]
    assert path.read_bytes() == before


def test_a_directory_this_user_cannot_enter(shared_dir):
    locked = shared_dir / "locked"
    locked.mkdir()
    locked.chmod(0)
    code = (
        "import sys\nfrom slotmem import Store, StorageError\n"
        "try:\n    Store(sys.argv[1], create=True)\nexcept StorageError as e:\n    print(e)"
    )
    done = as_reader(code, str(locked / "memory.db"))
    locked.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"cannot reach {locked / 'memory.db'} (Permission denied)")


def test_read_only_file_that_needs_a_migration_says_so(db_path):
    with Store(db_path, create=True) as store:
        store.conn.execute("DELETE FROM _sqlite_migrations WHERE name LIKE '0005%'")
    with pytest.raises(ReadOnlyDatabase, match="needs schema changes.*0005"):
        Store(db_path, readonly=True)


# -- 6. faults of the disk, one clear error each --------------------------------------------


@pytest.fixture
def tiny_disk():
    """A 1 MB tmpfs: a disk that really fills up (needs the right to mount)."""
    directory = Path(tempfile.mkdtemp(prefix="slotmem-full-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(directory)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        directory.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield directory
    subprocess.run(["umount", "-l", str(directory)], check=False)
    directory.rmdir()


def test_full_disk_is_one_clear_error_and_loses_nothing(tiny_disk):
    path, filler = tiny_disk / "memory.db", tiny_disk / "filler"
    filler.write_bytes(b"\0" * 300_000)
    written = 0
    with Store(path, create=True) as store:
        with pytest.raises(DiskFull) as caught:
            for i in range(1000):
                store.upsert("user", f"k{i}", f"fact {i} " + "x" * 3900)
                written += 1
        message = str(caught.value)
        assert str(path) in message and "disk is full" in message and "Free space" in message
        assert store.stats()["facts"] == written  # the failed write was rolled back
        result = CliRunner().invoke(cli, ["remember", "user", "big", "y" * 3999, "-d", str(path)])
        one_line_error(result, str(path), "disk is full")
        filler.unlink()  # the user frees space: the same Store writes again
        store.upsert("user", "after", "written once there was space")
        assert store.stats()["facts"] == written + 1
        assert store.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"


IO_WRITER = r"""
import resource, signal, sys
from slotmem import Store, SlotmemError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
store = Store(sys.argv[1], create=True)
resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))
try:
    for i in range(1000):
        store.upsert("user", f"k{i}", "x" * 3900)
except SlotmemError as e:
    print(type(e).__name__, "|", e)
"""


def test_io_error_is_a_storage_error_naming_the_file(db_path):
    done = subprocess.run(
        [sys.executable, "-c", IO_WRITER, str(db_path)], capture_output=True, text=True, check=False
    )
    kind, message = done.stdout.strip().split(" | ")
    assert kind in ("StorageError", "DiskFull") and str(db_path) in message, done
    with Store(db_path) as store:
        assert store.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"


def test_unopenable_paths_are_storage_errors(tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file")
    with pytest.raises(StorageError, match="cannot create the directory"):
        Store(blocker / "memory.db", create=True)
    one_line_error(invoke(COMMANDS["remember"], blocker / "m.db", tmp_path), str(blocker))


def test_doctor_on_a_file_it_cannot_open_does_not_send_you_to_doctor(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 1000)
    line = one_line_error(invoke(["doctor"], bad, tmp_path), str(bad), "backup")
    assert "slotmem doctor" not in line


class FakeError(Exception):
    def __init__(self, name, message):
        super().__init__(message)
        self.sqlite_errorname = name


@pytest.mark.parametrize(
    "name,message,kind",
    [
        ("SQLITE_FULL", "database or disk is full", DiskFull),
        ("SQLITE_IOERR_WRITE", "disk I/O error", StorageError),
        ("SQLITE_READONLY_DIRECTORY", "attempt to write a readonly database", ReadOnlyDatabase),
        ("SQLITE_CANTOPEN", "unable to open database file", StorageError),
        ("SQLITE_BUSY", "database is locked", StoreBusy),
        ("SQLITE_NOTADB", "file is not a database", CorruptDatabase),
        ("SQLITE_CORRUPT", "database disk image is malformed", CorruptDatabase),
        ("SQLITE_ERROR", "something else", StorageError),
        (None, "database or disk is full", DiskFull),  # Python 3.10: no error names
    ],
)
def test_every_driver_error_becomes_a_slotmem_error_naming_the_file(name, message, kind):
    error = db.translate(FakeError(name, message), Path("/data/agent.db"))
    assert isinstance(error, kind) and isinstance(error, SlotmemError)
    assert "/data/agent.db" in str(error) and message in str(error)
