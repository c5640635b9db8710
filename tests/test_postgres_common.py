"""Common-word questions over every posting on PostgreSQL (slotmem/pg/common.py), at the toy
scale of tests/test_common_words.py ('common' above 5 facts, 12 postings in the plan's budget,
60 of the 160 facts scored exactly): the server ranks them as the file does, as over every
posting, and plans them as before where the file does."""

import pytest

from slotmem import Ranking, Store
from slotmem.search import common, plan
from slotmem.search.terms import parse
from tests.test_common_words import QUESTIONS, corpus, exhaustive, small  # noqa: F401


@pytest.fixture
def pair(tmp_path, pg_url, clock, small):  # noqa: F811 - the fixture imported above
    with (
        Store(tmp_path / "m.db", create=True, clock=clock) as file,
        Store(pg_url, create=True, clock=clock) as server,
    ):
        corpus(file)
        corpus(server)
        server.refresh_statistics()
        yield file, server


def truth(file: Store, text: str, slots=None) -> list:
    """The file's top 10 over every posting of every word (FTS5's bm25), by slot and key."""
    where = {
        row[0]: (row[1], row[2])
        for row in file.conn.execute("SELECT id, slot, key FROM memory_facts")
    }
    return [(*where[fid], score) for fid, score in exhaustive(file, text, slots)]


def found(store, text: str, slots=None) -> list:
    hits = store.query_facts(text, slots=slots, limit=10, track_access=False)
    return [(hit.fact.slot, hit.fact.key, hit.score) for hit in hits]


def same(got: list, expected: list) -> bool:
    assert [item[:2] for item in got] == [item[:2] for item in expected]
    assert [item[2] for item in got] == pytest.approx([item[2] for item in expected], rel=1e-9)
    return True


@pytest.mark.parametrize("presence", [False, True])
def test_common_word_questions_rank_as_over_every_posting(pair, presence):
    file, server = pair
    file.ranking = server.ranking = Ranking(presence=presence)
    for text in QUESTIONS:
        assert plan.plan(file.conn, parse(text)).dropped  # the plan alone leaves words out
        assert same(found(server, text), truth(file, text))
        assert same(found(server, text, ["user"]), truth(file, text, ["user"]))
        hits = server.query_facts(text, explain=True, track_access=False)
        assert hits[0].explanation["ignored"] == []


def test_without_numpy_or_disabled_the_plan_applies(pair, monkeypatch):
    """The server needs no numpy, but follows the file's rule: the two agree."""
    file, server = pair
    text = QUESTIONS[0]
    expected = truth(file, text)
    assert same(found(server, text), expected)
    for patch in [("ENABLED", False), ("numpy", lambda: None)]:
        with monkeypatch.context() as m:
            m.setattr(common, *patch)
            hits = server.query_facts(text, limit=10, explain=True, track_access=False)
            assert hits[0].explanation["ignored"]  # the plan's budget, as before
            assert found(server, text) == found(file, text) != expected


def test_a_search_inside_a_transaction_is_planned_as_before(pair):
    """As the file's (whose postings in memory could outlive a rollback): the same hits."""
    file, server = pair
    text = QUESTIONS[0]
    with server.transaction(), file.transaction():
        hits = server.query_facts(text, explain=True, track_access=False)
        assert hits[0].explanation["ignored"]
        assert found(server, text) == found(file, text)


def test_postings_the_file_could_not_hold_are_planned_as_before(pair, monkeypatch):
    file, server = pair
    monkeypatch.setattr(common, "MAX_BYTES", 8)
    hits = server.query_facts(QUESTIONS[0], explain=True, track_access=False)
    assert hits[0].explanation["ignored"]
    assert found(server, QUESTIONS[0]) == found(file, QUESTIONS[0])
