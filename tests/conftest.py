import os

import pytest

from slotmem import Store

# The write scan weighs texts with the embedding model when one is at hand (the semantic extra):
# off for the suite, here and in the processes it starts, so that a test that writes does not
# load onnxruntime; tests/test_scan_embedding.py turns it on.
os.environ.setdefault("SLOTMEM_SCAN_EMBEDDINGS", "0")

DAY_MS = 86_400_000
START_MS = 1_767_225_600_000  # 2026-01-01


class Clock:
    """An injected clock in integer milliseconds; tests advance it instead of sleeping."""

    def __init__(self, now: int = START_MS):
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, days: float = 0, ms: int = 0) -> None:
        self.now += int(days * DAY_MS) + ms


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "memory.db"


@pytest.fixture
def store(request, db_path, clock):
    """A new memory: a file, or (``@BOTH_BACKENDS``, parametrizing ``store`` indirectly with
    "postgresql") a memory on the session's PostgreSQL server."""
    target = db_path
    if getattr(request, "param", "file") == "postgresql":
        target = request.getfixturevalue("pg_url")
    with Store(target, create=True, clock=clock) as mem:
        yield mem


# a test that takes ``store`` runs on a file and on PostgreSQL
BOTH_BACKENDS = pytest.mark.parametrize("store", ["file", "postgresql"], indirect=True)


def fts_integrity_error(store):
    """None when the FTS index matches memory_facts, else the error FTS5 reports (a memory on
    PostgreSQL has no FTS index: None)."""
    if getattr(store, "target", None) is not None:  # a PostgresStore
        return None
    try:
        store.conn.execute(
            "INSERT INTO memory_facts_fts (memory_facts_fts, rank) VALUES ('integrity-check', 1)"
        )
    except Exception as e:  # noqa: BLE001 - the driver's DatabaseError
        return str(e)
    return None


# -- PostgreSQL (slotmem.pg): one server per session, a fresh memory (schema) per test ----------
SKIP_POSTGRES = "SLOTMEM_SKIP_POSTGRES"  # locally only: CI (CI set) runs them, whatever it says


@pytest.fixture(scope="session")
def pg_server():
    import os

    if os.environ.get(SKIP_POSTGRES) == "1" and not os.environ.get("CI"):
        pytest.skip(f"{SKIP_POSTGRES}=1")
    from pg_server import Server

    server = Server().start()  # raises (the tests fail) when it cannot start
    yield server
    server.stop()


_memories = iter(range(1, 1_000_000))


@pytest.fixture
def pg_url(pg_server):
    """The URL of a new, empty memory on the session's server."""
    return f"{pg_server.url}?memory=t{next(_memories)}"


@pytest.fixture
def pg_store(pg_url, clock):
    with Store(pg_url, create=True, clock=clock) as mem:
        yield mem
