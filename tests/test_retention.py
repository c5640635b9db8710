import pytest

from slotmem import InvalidInput
from tests.conftest import BOTH_BACKENDS, fts_integrity_error

pytestmark = BOTH_BACKENDS  # every test here runs on a file and on PostgreSQL


def fill(store, clock, n, slot="project"):
    for i in range(n):
        store.upsert(slot, f"fact{i:02d}", f"value {i}")
        clock.advance(ms=1)


def test_under_cap_removes_nothing(store, clock):
    fill(store, clock, 5)
    clock.advance(days=100)
    report = store.prune_slot("project", cap=5, min_age_days=30, min_access_count=3)
    assert (report.count, report.removed, report.protected) == (5, [], 0)


def test_over_cap_removes_least_used_then_oldest(store, clock):
    fill(store, clock, 6)
    store.query_facts("value", limit=2, slots=["project"])  # bumps two facts to 1 access
    used = {f.key for f in store.list_facts("project") if f.access_count}
    clock.advance(days=31)
    report = store.prune_slot("project", cap=2, min_age_days=30, min_access_count=3)
    removed = [f.key for f in report.removed]
    unused = sorted(f"fact{i:02d}" for i in range(6) if f"fact{i:02d}" not in used)
    assert removed == unused  # access 0 first, oldest first among them
    assert len(store.list_facts("project")) == 2
    assert {f.key for f in store.list_facts("project")} == used
    assert all(store.history("project", key)[0].reason == "prune" for key in removed)
    assert fts_integrity_error(store) is None


def test_recent_facts_are_never_pruned(store, clock):
    fill(store, clock, 4)
    clock.advance(days=31)
    fill(store, clock, 0)
    store.upsert("project", "fresh", "just learned")
    report = store.prune_slot("project", cap=1, min_age_days=30, min_access_count=3)
    assert "fresh" not in {f.key for f in report.removed}
    assert store.get("project", "fresh") is not None
    assert len(report.removed) == 4 - 0 and report.protected == 0


def test_recently_accessed_or_updated_facts_are_protected(store, clock):
    fill(store, clock, 4)
    clock.advance(days=40)
    store.query_facts("fact00 value", limit=1)  # accessed now -> recent
    store.upsert("project", "fact01", "value 1 revised")  # updated now -> recent
    report = store.prune_slot("project", cap=0, min_age_days=30, min_access_count=3)
    assert sorted(f.key for f in report.removed) == ["fact02", "fact03"]
    assert report.protected == 2


def test_frequently_used_facts_are_protected_even_over_cap(store, clock):
    fill(store, clock, 3)
    for _ in range(3):
        store.query_facts("value", limit=10)  # every fact reaches 3 accesses
    clock.advance(days=365)
    report = store.prune_slot("project", cap=0, min_age_days=30, min_access_count=3)
    assert report.removed == [] and report.protected == 3
    assert len(store.list_facts("project")) == 3


def test_dry_run_removes_nothing(store, clock):
    fill(store, clock, 5)
    clock.advance(days=31)
    report = store.prune_slot("project", cap=2, min_age_days=30, min_access_count=3, dry_run=True)
    assert len(report.removed) == 3 and report.dry_run
    assert len(store.list_facts("project")) == 5
    assert store.history("project", "fact00") == []


def test_other_slots_are_untouched(store, clock):
    fill(store, clock, 3, slot="user")
    fill(store, clock, 3, slot="project")
    clock.advance(days=31)
    store.prune_slot("project", cap=0, min_age_days=30, min_access_count=3)
    assert len(store.list_facts("user")) == 3


def test_prune_all_uses_policies(store, clock):
    store.set_policy("project", cap=1, min_age_days=1, min_access_count=1)
    store.set_policy("episodic", cap=0, min_age_days=0, min_access_count=1)
    fill(store, clock, 3, slot="project")
    fill(store, clock, 2, slot="episodic")
    fill(store, clock, 2, slot="scratch")  # no policy: the default one (cap 500)
    clock.advance(days=2)
    reports = {r.slot: r for r in store.prune()}
    assert len(reports["project"].removed) == 2
    assert len(reports["episodic"].removed) == 2
    assert reports["scratch"].cap == 500 and reports["scratch"].removed == []
    assert store.slots() == {"project": 1, "scratch": 2}


def test_policy_validation(store):
    assert store.policy("user").cap == 500
    with pytest.raises(InvalidInput):
        store.set_policy("user", cap=-1)
    with pytest.raises(InvalidInput):
        store.prune_slot("user", cap=1, min_age_days=-2)
    with pytest.raises(InvalidInput):
        store.prune_slot("Bad Slot")
    assert store.policy("user").cap == 500


def test_a_policys_floor_and_description_stay_unless_given(store):
    from slotmem.search.relevance import DEFAULT_FLOOR

    store.set_policy("project", cap=100, min_relevance=0.4, description="what we build")
    kept = store.set_policy("project", cap=50)  # not given: the floor and description stay
    assert (kept.cap, kept.min_relevance, kept.description) == (50, 0.4, "what we build")
    for bad in ({"min_relevance": 1.5}, {"min_age_days": float("nan")}, {"cap": "many"}):
        with pytest.raises(InvalidInput):
            store.set_policy("project", **{"cap": 1, **bad})
    with pytest.raises(InvalidInput):
        store.set_default_policy(cap=5, min_access_count=-1)
    assert store.policy("project") == kept and store.default_policy().cap == 500
    reset = store.set_policy("project", cap=50, min_relevance="default")
    assert reset.min_relevance is None and store.min_relevance("project") == DEFAULT_FLOOR
    assert store.policy("nowhere") is None
    assert [p.slot for p in store.policies()] == ["agent", "project", "user"]
