"""Vectors stored as int8 (migration 0016): a file from before converts in place, in batches,
gives the same kNN top 10 as before, and a conversion killed midway finishes at the next open."""

import hashlib
import random
import signal
import subprocess
import sys
import textwrap

import pytest
from sqlite_utils import Database

from slotmem import Store
from slotmem.storage import db, migrate
from slotmem.vectors import codec, texts
from slotmem.vectors.embedders import to_blob
from slotmem.vectors.index import INDEX_COLUMNS, VEC_TABLE, VectorIndex
from slotmem.vectors.semantic import content_hash

np = pytest.importorskip("numpy")
MIGRATION = "0016_compact_vectors"
MODEL, DIMENSIONS = "fake-64", 64
FACTS, QUERIES = 400, 12
WORDS = [f"w{i}" for i in range(300)]


def word_vector(word: str):
    """A fixed Gaussian vector per word: sums of them rarely tie."""
    seed = int(hashlib.md5(word.encode()).hexdigest()[:8], 16)
    return np.random.default_rng(seed).standard_normal(DIMENSIONS)


def embed(text: str) -> bytes:
    return to_blob(sum(word_vector(w) for w in text.split() if w in WORDS))


def corpus():
    rng = random.Random(24)
    facts = [
        (f"f{i}", rng.choice(["user", "project"]), f"k{i}", " ".join(rng.sample(WORDS, 6)))
        for i in range(FACTS)
    ]
    queries = [" ".join(rng.sample(WORDS, 4)) for _ in range(QUERIES)]
    return facts, queries


def make_old_file(path):
    """The schema before 0016, with facts, float32 vectors as 0005 stored them and the index."""
    conn = db.connect(path, "rwc")
    names = migrate.migration_names()
    migrate.migration_set().apply(Database(conn), stop_before=names[names.index(MIGRATION) :])
    facts, _ = corpus()
    conn.executemany(
        "INSERT INTO memory_facts (id, slot, key, value, created_at, updated_at, last_accessed) "
        "VALUES (?, ?, ?, ?, 1, 1, 1)",
        facts,
    )
    conn.executemany(
        "INSERT INTO memory_settings VALUES (?, ?)",
        [("embedding_model", MODEL), ("embedding_dimensions", str(DIMENSIONS))],
    )
    rows = []
    for seq, slot, key, value in conn.execute("SELECT seq, slot, key, value FROM memory_facts"):
        text = texts.document(MODEL, key, value)
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]  # as slotmem hashed it then
        rows.append((seq, slot, digest, embed(value)))
    conn.executemany(
        "INSERT INTO memory_embeddings VALUES (?, ?, ?, ?, ?, 1)",
        [(seq, MODEL, DIMENSIONS, digest, blob) for seq, _, digest, blob in rows],
    )
    assert db.load_sqlite_vec(conn) is None
    conn.execute(f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0({INDEX_COLUMNS})")
    VectorIndex(lambda: conn).add([(seq, slot, blob) for seq, slot, _, blob in rows], DIMENSIONS)
    conn.commit()
    before = old_knn(conn, {seq: blob for seq, _, _, blob in rows})
    conn.close()
    return before


def old_knn(conn, floats):
    """The kNN top 10 as the code before 0016 ranked it: the index's candidates by the exact
    cosine of the float32 vectors."""
    index, found = VectorIndex(lambda: conn, helper=False), {}
    for query in corpus()[1]:
        blob = embed(query)
        for slots in (None, ["user"]):
            seqs = index.candidates(blob, slots, 10)
            q = np.frombuffer(blob, dtype="<f4")
            cosines = {s: float(np.frombuffer(floats[s], "<f4") @ q) for s in seqs}
            found[query, str(slots)] = sorted(cosines.items(), key=lambda item: -item[1])[:10]
    return found


def new_knn(store):
    return {
        (query, str(slots)): [seq for seq, _ in store.semantic.knn(embed(query), slots, 10)]
        for query in corpus()[1]
        for slots in (None, ["user"])
    }


def same_top_10(after, before, tolerance=2e-3):
    """The same 10 facts, in the same order but where two were closer than int8 can tell."""
    assert after.keys() == before.keys()
    for key, ranked in before.items():
        cosine = dict(ranked)
        assert set(after[key]) == set(cosine), key
        for i, seq in enumerate(after[key]):
            for later in after[key][i + 1 :]:
                assert cosine[seq] > cosine[later] - tolerance, (key, seq, later)


def counts(path):
    conn = db.connect(path, "rw")
    try:
        tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("memory_embeddings", "memory_embeddings_compact")
            if table in tables
        }, MIGRATION in migrate.applied_migrations(conn)
    finally:
        conn.close()


def check_converted(store, before):
    assert MIGRATION in migrate.applied_migrations(store.conn)
    columns = [row[1] for row in store.conn.execute("PRAGMA table_info(memory_embeddings)")]
    assert columns == ["fact_seq", "model", "content_hash", "embedding"]
    lengths = {n for (n,) in store.conn.execute("SELECT length(embedding) FROM memory_embeddings")}
    assert lengths == {codec.stored_length(DIMENSIONS)}
    status = store.semantic.status()
    assert (status["embedded"], status["stale"], status["index_rows"]) == (FACTS, 0, FACTS)
    same_top_10(new_knn(store), before)
    store.delete(*store.conn.execute("SELECT slot, key FROM memory_facts LIMIT 1").fetchone())
    assert store.semantic.status()["embedded"] == FACTS - 1  # the delete trigger follows


def test_an_old_file_converts_and_ranks_as_before(db_path):
    before = make_old_file(db_path)
    seen = []
    conn = db.connect(db_path, "rw")
    migrate.migrate(conn, db_path, batch=64, progress=lambda *args: seen.append(args))
    conn.close()
    assert seen[0] == (MIGRATION, 64, FACTS) and seen[-1] == (MIGRATION, FACTS, FACTS)
    assert len(seen) == -(-FACTS // 64)
    with Store(db_path) as store:
        check_converted(store, before)


def test_the_stored_hash_is_the_old_hash_read_as_an_integer():
    for text in ("language: Elixir", "", "日本語"):
        old = hashlib.sha256(text.encode()).hexdigest()[:32]
        module = migrate.migration_modules()[MIGRATION]
        assert module.old_hash(old) == content_hash(text)
    assert module.old_hash("not hex") == 0  # stale: reindex embeds it again


def test_a_failure_midway_keeps_the_batches_done_and_the_next_open_finishes(db_path):
    before = make_old_file(db_path)

    def fail(name, done, total):
        if done >= 128:
            raise OSError("disk full")

    conn = db.connect(db_path, "rw")
    with pytest.raises(OSError):
        migrate.migrate(conn, db_path, batch=64, progress=fail)
    conn.close()
    assert counts(db_path) == (
        {"memory_embeddings": FACTS - 128, "memory_embeddings_compact": 128},
        False,
    )
    with Store(db_path) as store:
        check_converted(store, before)


def test_a_conversion_killed_midway_opens_and_finishes(db_path):
    before = make_old_file(db_path)
    script = textwrap.dedent(
        f"""
        import os, signal
        from slotmem.storage import db, migrate

        def kill(name, done, total):
            if done >= 192:
                os.kill(os.getpid(), signal.SIGKILL)

        conn = db.connect({str(db_path)!r}, "rw")
        migrate.migrate(conn, batch=64, progress=kill)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], check=False, timeout=120)
    assert result.returncode == -signal.SIGKILL
    assert counts(db_path) == (
        {"memory_embeddings": FACTS - 192, "memory_embeddings_compact": 192},
        False,
    )
    with Store(db_path) as store:
        check_converted(store, before)


def stop(name, done, total):
    raise OSError("stopped")


def test_rows_an_older_slotmem_writes_during_the_conversion_are_converted(db_path):
    make_old_file(db_path)
    conn = db.connect(db_path, "rw")
    with pytest.raises(OSError):
        migrate.migrate(conn, db_path, batch=64, progress=stop)
    conn.execute(  # a converted row written again, the old way, by a process of the old code
        "INSERT INTO memory_embeddings SELECT fact_seq, ?, ?, 'x', ?, 2 "
        "FROM memory_embeddings_compact WHERE fact_seq = 1",
        (MODEL, DIMENSIONS, to_blob([1.0] * DIMENSIONS)),
    )
    conn.commit()
    conn.close()
    with Store(db_path) as store:
        sql = "SELECT content_hash FROM memory_embeddings WHERE fact_seq = 1"
        assert store.conn.execute(sql).fetchone()[0] == 0
        assert store.semantic.status()["stale"] == 1
        assert store.semantic.stored([1])[1] == codec.decode(codec.encode(to_blob([1.0] * 64)))


def test_encoding_without_numpy_gives_the_same_bytes():
    rng = np.random.default_rng(5)
    blobs = [to_blob(rng.standard_normal(384)) for _ in range(20)] + [None, to_blob([0, 0, 1])]
    assert [codec.encode(b) for b in blobs] == codec.encode_many(blobs)
    assert codec.encode(None) == b"" and len(codec.encode(blobs[0])) == 388
    back = np.frombuffer(codec.decode(codec.encode(blobs[0])), "<f4")
    assert abs(float(back @ np.frombuffer(blobs[0], "<f4")) - 1) < 1e-4


def test_new_files_store_int8(store):
    assert MIGRATION in migrate.applied_migrations(store.conn)
    assert counts(store.path)[0] == {"memory_embeddings": 0}


def test_slotmem_migrate_shows_the_conversion_s_progress(db_path):
    from click.testing import CliRunner

    from slotmem.cli import cli

    make_old_file(db_path)
    result = CliRunner().invoke(cli, ["migrate", "-d", str(db_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"Converting rows ({MIGRATION})" in result.stderr
    assert f"applied: {MIGRATION}" in result.stdout
    assert counts(db_path) == ({"memory_embeddings": FACTS}, True)
