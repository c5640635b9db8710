"""A hybrid search embeds its question, and scans the signatures for it, on a worker thread while
the calling thread runs the lexical leg (``Semantic.ask``): the hits are the ones the search
gave with everything on the calling thread, every time; the worker's exceptions reach the
caller; inside a write transaction the vector leg still sees the transaction's writes."""

import logging
import threading
from typing import ClassVar

import llm
import pytest

from slotmem.search import relevance
from slotmem.vectors import scan, semantic
from tests.test_hybrid_share import OPTIONS, Plugin, WordVectors, questions


class AskedVectors(WordVectors):
    """test_hybrid_share's model under its own id, noting the threads that embed questions."""

    model_id = "fake-words-ask"
    threads: ClassVar[list[str]] = []
    fail = False

    def embed_batch(self, items):
        AskedVectors.threads.append(threading.current_thread().name)
        if AskedVectors.fail:
            raise RuntimeError("the model broke")
        yield from super().embed_batch(items)


@pytest.fixture
def mem(store, monkeypatch):
    monkeypatch.setattr(semantic.os, "cpu_count", lambda: 2)  # a worker even on one core
    llm.pm.register(Plugin(AskedVectors), name="word-vectors-ask")
    facts = [
        {
            "slot": ("user", "project", "agent")[i % 3],
            "key": f"k{i}.{i % 7}",
            "value": " ".join(f"w{(i * j) % 150:03d}" for j in range(1, 9)),
        }
        for i in range(300)
    ]
    store.upsert_many(facts)
    store.semantic.reindex("fake-words-ask")
    for text in questions()[:12]:  # past the first vec0 scans: the signatures are in memory
        store.query_facts(text, track_access=False)
    AskedVectors.threads.clear()
    yield store
    llm.pm.unregister(name="word-vectors-ask")


def every_hit(store, *, concurrent: bool) -> list:
    semantic.CONCURRENT = concurrent
    try:
        found = []
        for text in questions():
            for options in OPTIONS:
                store.semantic.forget_query_vectors()  # each question embedded afresh
                hits = store.query_facts(text, track_access=False, **options)
                found.append(
                    [(hit.fact.id, hit.score, hit.relevance, hit.explanation) for hit in hits]
                )
        return found
    finally:
        semantic.CONCURRENT = True


def test_the_worker_gives_the_hits_the_calling_thread_gave(mem):
    in_line = every_hit(mem, concurrent=False)
    assert not any(name.startswith("slotmem-ask") for name in AskedVectors.threads)
    asked = every_hit(mem, concurrent=True)
    assert sum(map(len, asked)) > 300  # the questions find things
    assert asked == in_line
    assert asked == every_hit(mem, concurrent=True)  # and again: nothing depends on timing
    workers = [name for name in AskedVectors.threads if name.startswith("slotmem-ask")]
    assert len(workers) >= 2 * len(questions()) * len(OPTIONS) - 10  # (empty texts: none)


def test_the_calling_thread_joins_only_a_large_scan(mem, monkeypatch):
    """Over a small index the calling thread waits for the worker's scan (the two threads'
    turns at the GIL cost more than they save); over one of ``SHARE_ROWS`` signatures or more
    it counts a share of them. The hits are the same either way."""
    helpers = []
    real = scan.Scan.help

    def help(self):
        helpers.append((threading.current_thread().name, self.rows))
        return real(self)

    monkeypatch.setattr(scan.Scan, "help", help)
    alone = every_hit(mem, concurrent=True)
    on_worker = [name for name, _ in helpers if name.startswith("slotmem-ask")]
    assert on_worker and len(on_worker) == len(helpers)  # the caller never joined
    assert {rows for _, rows in helpers} == {100, 200, 300}  # the signatures of 1, 2, 3 slots
    helpers.clear()
    monkeypatch.setattr(semantic, "SHARE_ROWS", 300)  # the scans across slots are now large
    assert every_hit(mem, concurrent=True) == alone
    joined = [rows for name, rows in helpers if name == threading.main_thread().name]
    assert joined and set(joined) == {300}


def test_a_remembered_question_needs_no_worker(mem):
    mem.query_facts("w003 w010", track_access=False)
    AskedVectors.threads.clear()
    question = mem.semantic.ask("w003   w010", None, 16)  # the same words, the same question
    assert not question.running
    blob, candidates = question.result()
    assert blob == mem.semantic.query_vector("w003 w010") and candidates
    assert AskedVectors.threads == []


def test_an_exception_in_the_worker_reaches_the_caller(mem, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("the scan broke")

    monkeypatch.setattr(scan, "_nearest", broken)  # a task of the scan the two threads share
    for concurrent in (True, False):
        semantic.CONCURRENT = concurrent
        mem.semantic.forget_query_vectors()
        try:
            with pytest.raises(ValueError, match="the scan broke"):
                mem.query_facts("w003 w010 w020", track_access=False)
        finally:
            semantic.CONCURRENT = True
    assert any(name.startswith("slotmem-ask") for name in AskedVectors.threads)


def test_a_model_failing_on_the_worker_leaves_the_lexical_hits_and_one_warning(
    mem, monkeypatch, caplog
):
    lexical = mem.query_facts("w003 w010 w020", track_access=False, semantic=False)
    monkeypatch.setattr(AskedVectors, "fail", True)
    caplog.set_level(logging.WARNING, logger="slotmem")
    for concurrent in (True, False, True):
        semantic.CONCURRENT = concurrent
        mem.semantic.forget_query_vectors()
        try:
            hits = mem.query_facts("w003 w010 w020", track_access=False)
        finally:
            semantic.CONCURRENT = True
        assert [(h.fact.id, h.score, h.relevance) for h in hits] == [
            (h.fact.id, h.score, h.relevance) for h in lexical
        ]
    warned = [r.getMessage() for r in caplog.records if "the model broke" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("searches stay full-text")


def test_a_search_inside_a_write_transaction_sees_its_writes(mem):
    text = "w011 w022 w033 w044 w055 w066"
    with mem.transaction():
        mem.upsert("user", "fresh.one", text)
        seq = mem.conn.execute("SELECT seq FROM memory_facts WHERE key = 'fresh.one'").fetchone()
        question = mem.semantic.ask(text, ["user"], 16)
        assert question.running  # the question is embedded on the worker, even here
        _, candidates = question.result()
        assert seq[0] in candidates  # from vec0, on the transaction's connection
        asked = every_hit(mem, concurrent=True)
        assert asked == every_hit(mem, concurrent=False)
        [top] = mem.query_facts(text, track_access=False, slots=["user"], limit=1)
        assert top.fact.key == "fresh.one"
    assert asked == every_hit(mem, concurrent=True)  # committed: the same, from memory


def test_the_calling_thread_reads_the_lexical_candidates_vectors_meanwhile(mem, monkeypatch):
    """While the worker embeds, the caller reads the stored vectors of the lexical leg's
    candidates (``Question.stored``) and stems their keys: the same distances."""
    release = threading.Event()
    real = AskedVectors.embed_batch

    def slow(self, items):
        assert release.wait(60)  # until the caller has read what it reads meanwhile
        yield from real(self, items)

    monkeypatch.setattr(AskedVectors, "embed_batch", slow)
    read = []
    real_matrix = semantic.Semantic._matrix

    def matrix(self, seqs, chunk=500):
        if threading.current_thread() is threading.main_thread():
            read.append(list(seqs))
            release.set()
        return real_matrix(self, seqs, chunk)

    monkeypatch.setattr(semantic.Semantic, "_matrix", matrix)
    relevance.key_stems.cache_clear()
    mem.semantic.forget_query_vectors()
    hits = mem.query_facts("w003 w010 w020", track_access=False, explain=True)
    assert read and read[0]  # the lexical candidates' vectors first, while the worker waited
    assert relevance.key_stems.cache_info().currsize > 0
    semantic.CONCURRENT = False
    try:
        mem.semantic.forget_query_vectors()
        release.set()
        again = mem.query_facts("w003 w010 w020", track_access=False, explain=True)
    finally:
        semantic.CONCURRENT = True
    assert [(h.fact.id, h.score, h.explanation) for h in hits] == [
        (h.fact.id, h.score, h.explanation) for h in again
    ]


def test_a_search_while_the_worker_is_busy_runs_its_question_itself(mem, monkeypatch):
    """One worker a file: a search on another thread meanwhile (a server's) does not queue
    behind it, it embeds its question on its own thread, as before."""
    release = threading.Event()
    real = AskedVectors.embed_batch

    def slow(self, items):
        if threading.current_thread().name.startswith("slotmem-ask"):
            assert release.wait(60)
        yield from real(self, items)

    monkeypatch.setattr(AskedVectors, "embed_batch", slow)
    mem.semantic.forget_query_vectors()
    first = mem.semantic.ask("w003 w010", None, 16)
    assert first.running
    second = mem.semantic.ask("w020 w030", None, 16)
    assert not second.running  # not queued behind the first
    blob, candidates = second.result()
    assert blob and candidates
    release.set()
    assert first.result()[0]
    third = mem.semantic.ask("w040 w050", None, 16)  # the worker is free again
    assert third.running and third.result()[0]


def test_an_early_search_by_words_alone_reads_the_lexical_candidates_vectors_first(
    mem, monkeypatch
):
    """A search whose words alone run while the worker embeds (search._needed: here a floor)
    reads the lexical leg's stored vectors before that search, while the worker still runs;
    the hits are those of the search in line."""
    from slotmem import search

    release = threading.Event()
    real = AskedVectors.embed_batch

    def slow(self, items):
        if threading.current_thread().name.startswith("slotmem-ask"):
            assert release.wait(60)  # until the search by words alone starts
        yield from real(self, items)

    events = []
    real_matrix, lexical = semantic.Semantic._matrix, search._lexical

    def matrix(self, seqs, chunk=500):
        if threading.current_thread() is threading.main_thread():
            events.append("read")
        return real_matrix(self, seqs, chunk)

    def alone(*args, **kwargs):
        events.append("alone")
        release.set()
        return lexical(*args, **kwargs)

    monkeypatch.setattr(AskedVectors, "embed_batch", slow)
    monkeypatch.setattr(search, "SHARED", False)  # the two lexical searches apart
    monkeypatch.setattr(semantic.Semantic, "_matrix", matrix)
    monkeypatch.setattr(search, "_lexical", alone)
    mem.semantic.forget_query_vectors()
    hits = mem.query_facts("w003 w010 w020", track_access=False, min_relevance=0.01)
    assert events[:2] == ["read", "alone"]
    semantic.CONCURRENT = False
    try:
        mem.semantic.forget_query_vectors()
        again = mem.query_facts("w003 w010 w020", track_access=False, min_relevance=0.01)
    finally:
        semantic.CONCURRENT = True
    assert hits and [(h.fact.id, h.score, h.relevance) for h in hits] == [
        (h.fact.id, h.score, h.relevance) for h in again
    ]
