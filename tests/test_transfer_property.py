"""Export -> import is the identity (issue 22): any memory an owner can build through the Store
(odd text, whitespace, history, feedback, policies, pins, protection, expiry) exported and
imported into a new file comes back column by column; imported into itself, it changes nothing."""

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slotmem import SlotmemError, Store
from tests.conftest import DAY_MS, Clock
from tests.test_transfer_episodes import every_row as table_rows

TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=24)
ODD = st.one_of(TEXT, st.sampled_from(["\x80", " padded ", "a\tb\nc", "\u200b", "é" * 3, "🍣"]))
SLOTS = st.sampled_from(["user", "user", "project", "notes", "x.y-z"])
KEYS = st.one_of(st.sampled_from(["name", "city", "drink"]), ODD)
WHICH = st.integers(0, 100)  # which of the facts written so far
UPSERT = st.tuples(
    st.just("upsert"),
    SLOTS,
    KEYS,
    ODD,
    st.floats(0, 1),
    st.none() | ODD,
    st.sampled_from([None, "1h", "30d"]),
    st.booleans(),
)
OPS = st.one_of(
    UPSERT,
    st.tuples(st.sampled_from(["delete", "pin", "protect", "unprotect"]), WHICH, ODD),
    st.tuples(st.just("again"), WHICH, ODD),
    st.tuples(st.just("rate"), WHICH, st.integers(-3, 3), st.none() | ODD),
    st.tuples(
        st.just("policy"),
        SLOTS,
        st.integers(0, 2000),
        st.floats(0, 400),
        st.none() | ODD,
        st.none() | st.floats(0, 1),
    ),
    st.tuples(st.just("default"), st.integers(0, 2000)),
    st.tuples(
        st.just("episode"),
        ODD,
        st.fixed_dictionaries(
            {},
            optional={
                "title": ODD,
                "task": ODD,
                "session": ODD,
                "run": ODD,
                "outcome": ODD,
                "score": st.floats(-1e6, 1e6),
                "data": st.dictionaries(TEXT, st.none() | st.integers() | ODD, max_size=3),
            },
        ),
        st.lists(WHICH, max_size=2),
    ),
    st.tuples(st.just("retrieval"), ODD, st.lists(st.tuples(WHICH, st.booleans()), max_size=3)),
    st.tuples(st.just("cursor"), ODD, st.integers(0, 50), st.sampled_from(["ab", "cd"])),
)


def apply(store: Store, clock: Clock, op: tuple, written: list) -> None:
    kind, *args = op
    clock.advance(ms=1 + len(kind))
    try:
        if kind == "upsert":
            slot, key, value, confidence, source, ttl, protect = args
            result = store.upsert(slot, key, value, confidence=confidence, source=source,
                                  ttl=ttl, protect=protect)  # fmt: skip
            written.append((result.fact.slot, result.fact.key))
        elif not written and kind in ("delete", "pin", "protect", "unprotect", "again", "rate"):
            return
        elif kind == "again":  # a new value of a fact written before: history
            store.upsert(*written[args[0] % len(written)], args[1])
        elif kind == "rate":
            store.rate(*written[args[0] % len(written)], args[1], args[2])
        elif kind in ("delete", "pin", "protect", "unprotect"):
            getattr(store, kind)(*written[args[0] % len(written)])
        elif kind == "episode":  # linked to some of the facts written so far
            text, fields, which = args
            episode = store.record_episode(text, **fields)
            if written:
                store.link_facts(episode.id, [written[i % len(written)] for i in which])
            written.append((episode.slot, episode.key))
        elif kind == "retrieval":
            query, which = args
            found = [(store.get(*written[i % len(written)]), used) for i, used in which if written]
            items = [
                {"id": f.id, "slot": f.slot, "key": f.key, "value": f.value, "included": used}
                for f, used in found
                if f is not None
            ]
            store.record_retrieval(query, items, session="s", tokens=len(items))
        elif kind == "cursor":
            store.advance_flush_cursor(args[0], args[1], args[2] * 32)
        elif kind == "policy":
            slot, cap, age, description, floor = args
            store.set_policy(slot, cap=cap, min_age_days=age, description=description,
                             min_relevance=floor)  # fmt: skip
        else:
            store.set_default_policy(cap=args[0])
    except SlotmemError:
        pass  # what the owner could not store is not part of the memory


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(UPSERT, min_size=1, max_size=6), st.lists(OPS, max_size=20))
def test_export_then_import_is_the_identity(first, then):
    clock = Clock()
    with tempfile.TemporaryDirectory() as tmp:
        with Store(Path(tmp) / "memory.db", create=True, clock=clock) as store:
            written: list = []
            for op in first + then:
                apply(store, clock, op, written)
            clock.advance(days=1)
            lines = [json.dumps(record, ensure_ascii=False) for record in store.export()]
            before = table_rows(store)
            with Store(Path(tmp) / "copy.db", create=True, clock=clock) as copy:
                copy.import_records(lines, trusted=True)  # another file: the owner vouches
                assert table_rows(copy) == before
                assert copy.default_policy() == store.default_policy()
            for mode in ("merge", "replace", "skip-existing"):  # its own export: no scan
                report = store.import_records(lines, mode=mode)
                assert {change.action for change in report.changes} <= {"unchanged"}
                assert table_rows(store) == before
        assert clock.now > DAY_MS
