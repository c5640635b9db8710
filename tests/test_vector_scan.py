"""The candidate scan in numpy (slotmem/vectors/scan.py): the same neighbours as vec0's scans,
and fresh after writes by this connection, another connection and another process."""

from __future__ import annotations

import random
import subprocess
import sys

import llm
import pytest

from slotmem import Store
from slotmem.vectors import index, scan, simhash
from tests.test_semantic import Plugin

np = pytest.importorskip("numpy")
READ_AFTER = index.READ_AFTER  # the default, before a fixture sets it to 0


@pytest.fixture(autouse=True)
def fake_models(monkeypatch):
    monkeypatch.setattr(index, "READ_AFTER", 0)  # every search scans the copy in memory
    llm.pm.register(Plugin(), name="fake-embeddings")
    yield
    llm.pm.unregister(name="fake-embeddings")


WORDS = [
    "tea",
    "coffee",
    "deploy",
    "friday",
    "python",
    "rust",
    "garden",
    "river",
    "stone",
    "cloud",
    "paper",
    "lamp",
]


def seeded(store, facts=300, seed=7):
    rng = random.Random(seed)
    store.upsert_many(
        [
            {
                "slot": ("user", "project", "agent")[i % 3],
                "key": f"k{i}",
                "value": " ".join(rng.choices(WORDS, k=rng.randint(3, 9))) + f" n{i}",
            }
            for i in range(facts)
        ]
    )
    store.semantic.reindex("fake-64")
    return rng


def both_ways(store, blob, slots, k):
    """(numpy scan's, vec0 scans') kNN and candidates."""
    vectors = store.semantic.index
    found = []
    for in_memory in (True, False):
        vectors.in_memory = in_memory
        found.append((store.semantic.knn(blob, slots, k), vectors.candidates(blob, slots, k)))
    vectors.in_memory = True
    return found


def hamming(store, blob, seqs):
    """The sorted Hamming distances of these facts' signatures to the question's."""
    import numpy as np

    signatures = scan.load(store.conn, "memory_vec", simhash.VERSION, simhash.BITS)
    row = {seq: i for i, seq in enumerate(signatures.seqs.tolist())}
    [signature] = simhash.signatures([blob], len(blob) // 4)
    query = np.frombuffer(signature, dtype=np.uint64)
    return sorted(int(np.bitwise_count(signatures.words[row[s]] ^ query).sum()) for s in seqs)


def by_distance(item):
    return item[1], item[0]


def test_the_numpy_scan_finds_the_neighbours_vec0_finds(store, monkeypatch):
    rng = seeded(store)
    monkeypatch.setattr(simhash, "CANDIDATES", 32)  # 2 per shard: the choice is the scan's
    for _ in range(12):
        blob = store.semantic.query_vector(" ".join(rng.choices(WORDS, k=5)))
        for slots in (["user"], ["user", "agent"], None):
            (knn, candidates), (vec0_knn, vec0_candidates) = both_ways(store, blob, slots, 10)
            assert len(candidates) == len(vec0_candidates)
            # ties apart (vec0 breaks equal distances its own way), the same candidates
            assert hamming(store, blob, candidates) == hamming(store, blob, vec0_candidates)
            if set(candidates) == set(vec0_candidates):
                assert knn == vec0_knn
                continue
            # a tie at a shard's last place chosen apart: each kNN exact over its own candidates
            for found, pool in ((knn, candidates), (vec0_knn, vec0_candidates)):
                exact = sorted(store.semantic.distances(blob, list(pool)).items(), key=by_distance)
                assert found == exact[:10]


def test_without_shadow_tables_it_reads_the_virtual_table(store, monkeypatch):
    rng = seeded(store, facts=60)
    blob = store.semantic.query_vector(" ".join(rng.choices(WORDS, k=5)))
    expected = store.semantic.knn(blob, None, 10)
    monkeypatch.setattr(scan, "SHADOW_SQL", "SELECT * FROM {table}_no_such_layout")
    store.semantic.index._signatures = None
    assert store.semantic.knn(blob, None, 10) == expected


def bit_counts(words, query):
    return [sum(int(w ^ q).bit_count() for w, q in zip(row, query)) for row in words]


@pytest.mark.parametrize("chunk", [scan.CHUNK, 7])  # one call a step; a column at a time
def test_the_distances_are_the_set_bits_of_every_row(monkeypatch, chunk):
    import numpy as np

    words = np.random.default_rng(5).integers(0, 2**63, size=(50, 16), dtype=np.uint64)
    query = words[7].copy()
    monkeypatch.setattr(scan, "CHUNK", chunk)
    for columns in (np.ascontiguousarray(words.T), words.T):  # columns, or rows transposed
        found = scan._distances(columns, query)
        assert found.tolist() == bit_counts(words, query) and found[7] == 0
    every = np.full((4, 16), 2**64 - 1, dtype=np.uint64)  # 1,024 bits apart: no overflow
    assert scan._distances(every.T, np.zeros(16, dtype=np.uint64)).tolist() == [1024] * 4


@pytest.mark.parametrize("chunk", [scan.CHUNK, 7])
def test_the_byte_table_counts_as_numpy_2_does(monkeypatch, chunk):
    import numpy as np

    words = np.random.default_rng(3).integers(0, 2**63, size=(50, 16), dtype=np.uint64)
    monkeypatch.setattr(scan, "CHUNK", chunk)
    expected = scan._distances(words.T, words[0])
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert scan._distances(words.T, words[0]).tolist() == expected.tolist()


def key_of(store, blob, slots=None):
    [(seq, _distance)] = store.semantic.knn(blob, slots, 1)
    return store.conn.execute("SELECT key FROM memory_facts WHERE seq = ?", (seq,)).fetchone()[0]


def test_this_connections_writes_are_seen_by_its_next_search(store):
    seeded(store, facts=40)
    blob = store.semantic.query_vector("zebra zebra quartz")
    assert key_of(store, blob) != "new"  # the signatures are in memory now
    store.upsert("user", "new", "zebra zebra quartz")
    assert key_of(store, blob) == "new"
    store.delete("user", "new")
    assert key_of(store, blob) != "new"
    with store.transaction():  # a search inside a write transaction sees its writes
        store.upsert("agent", "inside", "zebra zebra quartz")
        assert key_of(store, blob) == "inside"
    assert key_of(store, blob) == "inside"


def test_a_rolled_back_write_leaves_no_signature_behind(store):
    seeded(store, facts=40)
    blob = store.semantic.query_vector("zebra zebra quartz")
    key_of(store, blob)
    with pytest.raises(RuntimeError), store.transaction():
        store.upsert("agent", "undone", "zebra zebra quartz")
        [seq] = store.conn.execute("SELECT seq FROM memory_facts WHERE key = 'undone'").fetchone()
        assert seq in store.semantic.index.candidates(blob, None, 1)
        raise RuntimeError("roll back")
    assert seq not in store.semantic.index.candidates(blob, None, 1)


def test_another_connections_writes_are_seen_by_the_next_search(store, db_path):
    seeded(store, facts=40)
    blob = store.semantic.query_vector("zebra zebra quartz")
    assert key_of(store, blob) != "theirs"
    with Store(db_path) as other:
        other.upsert("project", "theirs", "zebra zebra quartz")
        assert key_of(store, blob) == "theirs"
        assert key_of(store, blob, ["project"]) == "theirs"
        other.delete("project", "theirs")
        assert key_of(store, blob) != "theirs"


def test_another_process_writes_are_seen_by_the_next_search(store, db_path, monkeypatch):
    seeded(store, facts=40)
    monkeypatch.setattr(simhash, "CANDIDATES", 16)  # one per shard: not every fact re-ranked
    blob = store.semantic.query_vector("zebra zebra quartz")
    assert key_of(store, blob) != "elsewhere"
    # another process gives the farthest fact the question's own vector: its signature changes
    code = (
        "import sys; from slotmem import Store\n"
        "s = Store(sys.argv[1]); s.semantic.vec_error()\n"
        "with s.transaction():\n"
        "    slot = s.conn.execute('SELECT slot FROM memory_facts WHERE seq = ?', (int(sys.argv[2]),)).fetchone()[0]\n"
        "    s.conn.execute(\"UPDATE memory_facts SET key = 'elsewhere' WHERE seq = ?\", (int(sys.argv[2]),))\n"
        "    s.semantic.write_rows([(int(sys.argv[2]), slot, 0, bytes.fromhex(sys.argv[3]))], 'fake-64', 64)\n"
        "s.close()\n"
    )
    top = store.semantic.knn(blob, None, 1)[0][0]
    far = [seq for seq, _ in store.semantic.knn(blob, None, 40)][-1]
    assert far != top
    subprocess.run(
        [sys.executable, "-c", code, str(db_path), str(far), blob.hex()], check=True, timeout=120
    )
    assert far in store.semantic.index.candidates(blob, None, 1)
    assert key_of(store, blob) == "elsewhere"


def test_a_few_searches_scan_vec0_before_the_signatures_are_read(store, monkeypatch):
    """Reading the copy costs about ten vec0 scans: a process that searches once, or a few
    times between writes, scans vec0 (docs/semantic.md: 8 searches)."""
    monkeypatch.setattr(index, "READ_AFTER", READ_AFTER)
    assert READ_AFTER == 8
    seeded(store, facts=40)
    blob = store.semantic.query_vector("zebra zebra quartz")
    vectors = store.semantic.index
    expected = store.semantic.knn(blob, None, 5)  # the first search: vec0's
    for _ in range(READ_AFTER - 1):
        assert store.semantic.knn(blob, None, 5) == expected and vectors._signatures is None
    assert store.semantic.knn(blob, None, 5) == expected and vectors._signatures is not None
    copy = vectors._signatures
    store.upsert("user", "new", "zebra zebra quartz")  # stale: vec0 again, READ_AFTER times
    for _ in range(READ_AFTER):
        assert key_of(store, blob) == "new" and vectors._signatures is copy
    assert key_of(store, blob) == "new" and vectors._signatures is not copy


def test_a_closed_store_lets_its_signatures_go_and_reads_them_again(store):
    seeded(store, facts=40)
    blob = store.semantic.query_vector("zebra zebra quartz")
    expected = store.semantic.knn(blob, None, 5)
    assert store.semantic.index._signatures is not None
    store.close()
    assert store.semantic.index._signatures is None
    assert store.semantic.knn(blob, None, 5) == expected  # a closed store reopens
    assert store.semantic.index._signatures is not None


def synthetic_signatures(rows=40_000, seed=3, slot=None):
    """Random signatures in three slots (seq i's: ``words[i - 1]``, in ``slot[i - 1]``), sorted
    and indexed by ``scan.arrange`` as ``scan.load`` leaves them. Partitions of 40,000 rows hold
    more than the 768 rows the first stage keeps (833 in a slot's shard, 2,500 in a shard)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    seqs = np.arange(1, rows + 1, dtype=np.int64)
    if slot is None:
        slot = np.array(["a", "b", "c"], dtype=object)[rng.integers(0, 3, rows)]
    words = rng.integers(0, 2**63, (rows, simhash.BITS // 64), dtype=np.uint64)
    words[rows // 2 :: 7] = words[rows // 2]  # ties at the boundaries too
    return scan.arrange(seqs, slot, seqs % index.SHARDS, words), words


def nearest_by_every_bit(words, slot, query, slots, per_shard):
    """The reference: each partition's ``per_shard`` nearest by all 1,024 bits, of equal
    distances the lowest (slot, seq), counted one byte at a time."""
    import numpy as np

    distances = np.unpackbits((words ^ query).view(np.uint8), axis=1).sum(axis=1)
    seqs = np.arange(1, len(words) + 1)
    found = []
    for shard in range(index.SHARDS):
        for name in slots or [None]:
            mask = (seqs % index.SHARDS == shard) & ((slot == name) if name else True)
            ranked = sorted(zip(distances[mask].tolist(), slot[mask].tolist(), seqs[mask].tolist()))
            found += [seq for *_, seq in ranked[:per_shard]]
    return sorted(found)


@pytest.mark.parametrize("slots", [["a"], ["c", "a"], None])
def test_a_scan_two_threads_share_gives_the_candidates_one_thread_gave(slots):
    import threading

    signatures, words = synthetic_signatures()
    for i in range(6):
        signature = words[(i * 7919) % len(words)].tobytes()
        alone = signatures.scan(signature, slots, 16, index.SHARDS).run()
        shared = signatures.scan(signature, slots, 16, index.SHARDS)
        helper = threading.Thread(target=shared.help)
        helper.start()
        assert shared.run() == alone
        helper.join(60)
        assert not helper.is_alive()
        assert len(alone) == len(set(alone)) == 16 * index.SHARDS * len(slots or ["all"])


def test_a_task_that_fails_fails_every_thread_sharing_the_scan(monkeypatch):
    """A failing task ends the scan in every thread that helps (none waits for it forever)."""
    import threading

    signatures, words = synthetic_signatures(rows=5_000)
    calls = []

    def failing(distances, seqs, k):
        calls.append(threading.current_thread().name)
        raise ValueError("the count broke")

    monkeypatch.setattr(scan, "_nearest", failing)
    for slots in (["a"], None):
        shared = signatures.scan(words[0].tobytes(), slots, 16, index.SHARDS)
        raised = []

        def helping(shared=shared, raised=raised):
            try:
                shared.help()
            except ValueError as failure:
                raised.append(failure)

        helper = threading.Thread(target=helping)
        helper.start()
        with pytest.raises(ValueError, match="the count broke"):
            shared.run()
        helper.join(60)
        assert not helper.is_alive()
        assert all(str(each) == "the count broke" for each in raised)
    assert calls


@pytest.mark.parametrize("slots", [["a"], ["c", "a"], None])
def test_partitions_no_larger_than_the_rows_kept_give_the_exact_nearest(monkeypatch, slots):
    """A small file's partitions are counted whole (the first stage keeps them all); so are a
    large one's when the first stage keeps as many rows as a partition holds."""
    signatures, words = synthetic_signatures(rows=3_000)  # partitions of 62 and 188 rows
    slot = np.array(["a", "b", "c"], dtype=object)[np.random.default_rng(3).integers(0, 3, 3_000)]
    for i in range(4):
        query = words[(i * 997) % len(words)]
        expected = nearest_by_every_bit(words, slot, query, slots, 16)
        assert sorted(signatures.candidates(query.tobytes(), slots, 16, index.SHARDS)) == expected
    signatures, words = synthetic_signatures()
    slot = np.array(["a", "b", "c"], dtype=object)[np.random.default_rng(3).integers(0, 3, 40_000)]
    monkeypatch.setattr(scan, "SCREEN", 200)  # 3,200 rows kept: more than any partition holds
    query = words[123]
    expected = nearest_by_every_bit(words, slot, query, slots, 16)
    assert sorted(signatures.candidates(query.tobytes(), slots, 16, index.SHARDS)) == expected


@pytest.mark.parametrize("slots", [["a"], None])
def test_the_two_stages_find_the_near_signatures_of_a_large_partition(slots):
    """Signatures tens to hundreds of bits from the question's (as a true neighbour's are) are
    found in partitions of more rows than the first stage keeps."""
    rng = np.random.default_rng(11)
    rows = 40_000
    slot = np.array(["a", "b", "c"], dtype=object)[rng.integers(0, 3, rows)]
    slot[1600:1616] = "a"
    signatures, words = synthetic_signatures(rows, slot=slot)
    query = rng.integers(0, 2**63, simhash.BITS // 64, dtype=np.uint64)
    planted = []
    for j in range(index.SHARDS):  # seqs 1601-1616: a shard each, 20 to 320 bits away
        bits = np.unpackbits(query.view(np.uint8))
        bits[rng.choice(simhash.BITS, size=20 * (j + 1), replace=False)] ^= 1
        words[1600 + j] = np.packbits(bits).view(np.uint64)
        planted.append(1601 + j)
    seqs = np.arange(1, rows + 1)
    signatures = scan.arrange(seqs, slot, seqs % index.SHARDS, words)
    found = signatures.candidates(query.tobytes(), slots, 1, index.SHARDS)
    assert sorted(found) == planted == nearest_by_every_bit(words, slot, query, slots, 1)


def one_partition(heads, tails):
    """Signatures of one partition (slot a, shard 0: seqs 16, 32, ...): each row's first
    SCREEN_WORDS words all ``heads[i]``, the rest all ``tails[i]``."""
    rows = len(heads)
    words = np.empty((rows, simhash.BITS // 64), dtype=np.uint64)
    words[:, : scan.SCREEN_WORDS] = np.array(heads, dtype=np.uint64)[:, None]
    words[:, scan.SCREEN_WORDS :] = np.array(tails, dtype=np.uint64)[:, None]
    seqs = np.arange(1, rows + 1, dtype=np.int64) * index.SHARDS
    slot = np.full(rows, "a", dtype=object)
    return scan.arrange(seqs, slot, seqs % index.SHARDS, words)


def test_the_whole_distance_ranks_the_rows_the_first_stage_kept(monkeypatch):
    monkeypatch.setattr(scan, "SCREEN", 2)  # 2 rows kept per candidate asked
    ones = 2**64 - 1
    # 40 rows (more than the 2 kept): the first stage keeps those whose first words are
    # nearest (seqs 32 and 48, at 0 bits), of which the rest of the words picks seq 48
    heads = [1] * 40
    heads[1] = heads[2] = 0
    tails = [ones] * 40
    tails[2] = 0
    signatures = one_partition(heads, tails)
    query = np.zeros(simhash.BITS // 64, dtype=np.uint64).tobytes()
    assert signatures.candidates(query, ["a"], 1, index.SHARDS) == [48]
    assert signatures.candidates(query, None, 1, index.SHARDS) == [48]


def test_every_row_at_the_first_stages_bound_is_kept(monkeypatch):
    monkeypatch.setattr(scan, "SCREEN", 1)  # 1 row kept per candidate asked...
    ones = 2**64 - 1
    # ...but seqs 16 and 32 are tied at the first stage (0 bits): both kept, and the rest of
    # the words picks seq 32 (seq 16 is 640 bits away there, seq 48 a bit in each first word)
    signatures = one_partition([0, 0, 1], [ones, 0, 0])
    query = np.zeros(simhash.BITS // 64, dtype=np.uint64).tobytes()
    assert signatures.candidates(query, ["a"], 1, index.SHARDS) == [32]


def test_the_copy_read_again_holds_each_seqs_signature_in_its_partition(store):
    """After writes and a reload, every row of the copy (its first words as columns, the rest
    as rows) is its seq's signature in vec0, in the partition of its slot and shard."""
    rng = seeded(store, facts=120)
    blob = store.semantic.query_vector("zebra zebra quartz")
    first = store.semantic.index.signatures(store.conn)
    store.upsert_many(
        [
            {"slot": "agent", "key": f"new{i}", "value": " ".join(rng.choices(WORDS, k=4))}
            for i in range(30)
        ]
    )
    for i in (4, 17, 63):
        store.delete(("user", "project", "agent")[i % 3], f"k{i}")
    store.semantic.knn(blob, None, 5)
    copy = store.semantic.index.signatures(store.conn)
    assert copy is not first and len(copy) == 120 + 30 - 3
    in_vec0 = {
        seq: (slot, shard, signature)
        for seq, slot, shard, signature in store.conn.execute(
            scan.VIRTUAL_SQL.format(column=simhash.VERSION, table="memory_vec")
        )
    }
    words = copy.words
    rows = {}
    for (slot, shard), (lo, hi) in copy.partitions.items():
        assert copy.shards[shard][0] <= lo < hi <= copy.shards[shard][1]
        for row in range(lo, hi):
            rows[int(copy.seqs[row])] = (slot, shard, words[row].tobytes())
    assert rows == in_vec0


def test_an_empty_index_is_read_into_memory_and_finds_nothing(store):
    """No facts yet (or every one deleted) with semantic search on: the copy in memory is an
    empty one, not an error on every search once it is read (numpy cannot reshape 0 rows by
    ``-1``)."""
    store.semantic.reindex("fake-64")
    assert store.semantic.leg() is not None
    for _ in range(3):
        assert store.query_facts("tea on friday", track_access=False) == []
    signatures = store.semantic.index.signatures(store.conn)
    assert signatures is not None and len(signatures) == 0
    seeded(store, facts=30)
    assert store.query_facts("tea", track_access=False)  # the copy is read again, with rows
    for i in range(30):
        store.delete(("user", "project", "agent")[i % 3], f"k{i}")
    assert store.query_facts("tea", track_access=False) == []
    assert len(store.semantic.index.signatures(store.conn)) == 0


def test_the_scan_sharing_benchmark_runs(capsys):
    """benchmarks/scan_sharing.py (where sharing a scan pays: semantic.SHARE_ROWS) still runs
    against this scan module: a benchmark mode that no test ran broke unnoticed once."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "scan_sharing.py"
    spec = importlib.util.spec_from_file_location("scan_sharing", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--rows", "4800", "9600", "--questions", "2"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 4,8")]
    assert len(rows) == 1 and len(rows[0].split("|")) == 6
