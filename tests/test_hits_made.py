"""How a search makes its hits' facts cheaply (records.fact_reader, tags.attach): the same facts,
fields and tags as the plain way (Fact.from_row, a replace per fact)."""

import dataclasses

from slotmem.records import Fact, fact_reader
from slotmem.storage import tags as fact_tags


def test_fact_reader_reads_by_the_statements_own_column_order(store):
    store.upsert("user", "city", "Lives in Porto", confidence=0.7)
    # the fact's columns after others, and in another order than FACT_COLUMNS
    row = store.conn.execute(
        "SELECT 1.5 AS score, expires_at, protected_at, f.* FROM memory_facts f"
    ).fetchone()
    made = fact_reader(row.keys())(row)
    assert made == Fact.from_row(row) == store.get("user", "city")
    assert dataclasses.asdict(made) == dataclasses.asdict(Fact.from_row(row))
    assert made.confidence == 0.7 and made.tags == () and made.value == "Lives in Porto"


def test_attach_gives_each_fact_its_own_tags_and_only_those(store):
    store.upsert("user", "city", "Lives in Porto", tags=["geo"])
    store.upsert("user", "pet", "Has a cat")
    city, pet = (Fact.from_row(row) for row in store.conn.execute("SELECT * FROM memory_facts"))
    stale = dataclasses.replace(pet, tags=("old",))  # tags it no longer has
    found = fact_tags.attach(store.conn, [city, pet, stale])
    assert [fact.tags for fact in found] == [("geo",), (), ()]
    assert found[1] is pet  # nothing to change: the same object


def test_query_facts_hits_carry_their_tags(store):
    store.upsert("user", "city", "Lives in Porto", tags=["geo", "home"])
    store.upsert("user", "town", "Was born in Porto")
    hits = store.query_facts("Porto", track_access=False)
    assert {hit.fact.key: hit.fact.tags for hit in hits} == {"city": ("geo", "home"), "town": ()}
    assert {hit.fact.key: hit.fact for hit in hits} == {
        key: store.get("user", key) for key in ("city", "town")
    }
