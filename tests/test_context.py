"""What reaches the prompt (slotmem/agents/context.py): relevance floors, pinned facts, one token
budget, dates, stable bytes, and access counts for what was rendered only."""

import inspect
import json

import llm
import pytest
from click.testing import CliRunner

from slotmem import InvalidInput, Store
from slotmem.agents import context
from slotmem.agents.context import about_time, build, build_context, estimate_tokens
from slotmem.agents.llm_plugin import Slotmem
from slotmem.agents.tools import AgentMemory
from slotmem.cli import cli
from slotmem.search.relevance import DEFAULT_FLOOR
from tests.conftest import DAY_MS
from tests.test_semantic import FakeEmbeddings

FAKE = "fake-1024"  # words hashed into 1,024 buckets: unrelated texts rarely share one
GLUE = {"the", "is", "a", "an", "of", "what", "do", "i", "how", "does", "on", "in", "s"}


class ContentWords(FakeEmbeddings):
    """Hashes the words that carry meaning only: a real model's cosine between unrelated texts
    is low whatever function words they share (relevance's excess reads it)."""

    def embed_batch(self, items):
        kept = [
            " ".join(w for w in t.lower().replace("'", " ").split() if w.strip("?.!") not in GLUE)
            for t in items
        ]
        return super().embed_batch(kept)


OFF_TOPIC = "What is the capital of France?"


class Plugin:
    @llm.hookimpl
    def register_embedding_models(self, register):
        register(ContentWords(FAKE, 1024))


@pytest.fixture
def fake_models():
    llm.pm.register(Plugin(), name="fake-embeddings-1024")
    yield
    llm.pm.unregister(name="fake-embeddings-1024")


@pytest.fixture
def memory(store):
    store.upsert("project", "deploy.schedule", "We deploy on Fridays after the standup.")
    store.upsert("project", "stack", "Python with FastAPI and PostgreSQL.")
    store.upsert("user", "drinks", "The user prefers green tea in the afternoon.")
    return store


@pytest.fixture(params=["lexical", "hybrid"])
def mode(request, memory, fake_models):
    if request.param == "hybrid":
        memory.semantic.reindex(FAKE)
    return request.param


def keys(text: str) -> list[str]:
    return [line.split("**")[1] for line in text.splitlines() if line.startswith("- **")]


def test_off_topic_message_gets_nothing_and_pinned_facts_always(memory, mode):
    nearest = memory.query_facts(OFF_TOPIC, track_access=False)
    assert bool(nearest) == (mode == "hybrid")  # the semantic leg has neighbours for anything
    assert all(hit.relevance < DEFAULT_FLOOR for hit in nearest)  # none near enough
    assert build_context(memory, OFF_TOPIC) == ""
    memory.pin("user", "drinks")
    text = build_context(memory, OFF_TOPIC)
    assert text == (
        "## What I know about the user\n- **drinks**: The user prefers green tea in the afternoon."
    )


def test_a_relevant_message_finds_its_fact(memory, mode):
    text = build_context(memory, "When do we deploy on Fridays?", semantic=mode == "hybrid")
    assert keys(text) == ["deploy.schedule"]
    hit = memory.query_facts("deploy on fridays", track_access=False)[0]
    assert hit.fact.key == "deploy.schedule" and DEFAULT_FLOOR < hit.relevance <= 1


def test_the_floor_holds_in_a_slot_of_two_facts(store, fake_models):
    store.upsert("user", "name", "The user's name is Maja.")
    store.upsert("user", "editor", "Maja uses Neovim.")
    for semantic in (False, True):
        if semantic:
            store.semantic.reindex(FAKE)
        for message in (OFF_TOPIC, "thanks!", "How do I undo the last git commit?", "hi"):
            assert build_context(store, message, semantic=semantic) == "", message
        assert keys(build_context(store, "which editor does Maja use?"))[0] == "editor"


def test_the_floor_per_slot_policy_and_per_call(memory, mode):
    message = "deploy python"  # each project fact matches one of the two words
    hits = memory.query_facts(message, slots=["project"], track_access=False)
    assert len(hits) == 2
    low, high = min(h.relevance for h in hits), max(h.relevance for h in hits)
    memory.set_policy("project", cap=100, min_relevance=low)
    assert len(keys(build_context(memory, message))) == 2
    memory.set_policy("project", cap=100, min_relevance=high + 0.001)
    assert memory.policy("project").min_relevance == high + 0.001
    assert build_context(memory, message) == ""
    assert len(keys(build_context(memory, message, min_relevance=low))) == 2  # the call wins
    memory.set_policy("project", cap=50)  # not given: the floor stays
    assert memory.policy("project").min_relevance == high + 0.001
    memory.set_policy("project", cap=50, min_relevance="default")
    assert memory.policy("project").min_relevance is None
    assert memory.min_relevance("project") == DEFAULT_FLOOR


def test_min_relevance_from_the_api_and_the_cli(memory, db_path):
    [hit] = memory.query_facts("green tea", track_access=False)
    assert memory.query_facts("green tea", min_relevance=hit.relevance, track_access=False)
    assert memory.query_facts("green tea", min_relevance=hit.relevance + 1e-6) == []
    for bad in (-0.1, 1.5, "high", float("nan"), True):
        with pytest.raises(InvalidInput):
            memory.query_facts("green tea", min_relevance=bad)
    run = CliRunner()
    args = ["-d", str(db_path), "--no-track"]
    found = run.invoke(cli, ["search", "green tea", "--min-relevance", "0", "--json", *args])
    assert [row["key"] for row in json.loads(found.output)] == ["drinks"]
    none = run.invoke(cli, ["search", "green tea", "--min-relevance", "1", "--json", *args])
    assert json.loads(none.output) == []
    out = run.invoke(cli, ["context", "green tea", "--min-relevance", "1", *args]).output
    assert out == "(no relevant facts)\n"
    bad = run.invoke(cli, ["context", "green tea", "--min-relevance", "2", *args])
    assert bad.exit_code == 2 and "2" in bad.output


def test_explain_shows_the_relevance_and_what_it_came_from(memory, mode):
    hit = memory.query_facts(
        "green tea", explain=True, track_access=False, semantic=mode == "hybrid"
    )[0]
    parts = hit.explanation
    assert parts["relevance"] == hit.relevance and parts["relevance_from"].startswith(mode)
    assert "coverage" in parts and ("similarity" in parts) == (mode == "hybrid")


# -- the budget -------------------------------------------------------------------------------
@pytest.fixture
def crowded(store):
    store.upsert_many(
        {
            "slot": ("user", "project", "agent")[i % 3],
            "key": f"note.{i:03d}",
            "value": f"Note {i} about the invoice migration: " + "lorem ipsum dolor sit " * 6,
        }
        for i in range(200)
    )
    store.pin("user", "note.000")
    store.pin("agent", "note.002")
    return store


@pytest.mark.parametrize("budget", [0, 40, 250, 500, 2000])
def test_the_budget_is_never_exceeded_and_pinned_facts_come_first(crowded, budget):
    built = build(crowded, "invoice migration", budget_tokens=budget, explain=True)
    assert built.tokens == estimate_tokens(built.text) <= budget
    assert "over budget" in {item.reason for item in built.cut}  # 200 facts never all fit
    pinned = [item.key for item in built.facts() if item.pinned]
    if budget >= 250:  # half of it holds both pinned facts (about 60 tokens each)
        assert pinned == ["note.000", "note.002"]
        assert all(s.items[0].pinned for s in built.sections if s.slot in ("user", "agent"))
    else:
        assert "over the pinned budget" in {item.reason for item in built.cut}
    everything = build(crowded, "invoice migration", budget_tokens=budget, pinned_tokens=budget)
    assert everything.tokens <= budget
    if budget >= 250:  # given the whole budget, pinned facts survive any cut
        assert [item.key for item in everything.facts() if item.pinned] == pinned


# -- the defaults (docs/benchmarks.md, "The default budget and candidates") ------------------
def test_the_defaults_are_those_chosen_on_locomos_dev_folds():
    chosen = (100, 3250)  # candidates per slot, budget tokens
    assert (context.CANDIDATES, context.DEFAULT_BUDGET_TOKENS) == chosen
    options = inspect.signature(build).parameters
    assert (options["candidates"].default, options["budget_tokens"].default) == chosen
    for tool in (AgentMemory.context, Slotmem.context):  # MCP's context tool calls the first
        assert inspect.signature(tool).parameters["budget_tokens"].default == chosen[1]
    shown = " ".join(CliRunner().invoke(cli, ["context", "--help"]).output.split())
    assert f"[default: {chosen[1]}; x>=0]" in shown and f"[default: {chosen[0]}]" in shown


@pytest.mark.parametrize("candidates", [10, 30, 100, 300])
@pytest.mark.parametrize("budget", [None, 1, 333, 1000, 2999, 5000])
def test_a_context_never_exceeds_its_budget(crowded, candidates, budget):
    """At the default budget too (None), whatever the candidates, pinned facts or not."""
    options = {} if budget is None else {"budget_tokens": budget}
    limit = context.DEFAULT_BUDGET_TOKENS if budget is None else budget
    for pinned in (None, 0, limit):
        built = build(
            crowded,
            "invoice migration note",
            candidates=candidates,
            pinned_tokens=pinned,
            explain=True,
            track_access=False,
            **options,
        )
        assert built.budget_tokens == limit and built.tokens == estimate_tokens(built.text)
        assert built.tokens <= limit
        if 3 * candidates * 40 > limit:  # more than fits was found: the budget did the cutting
            assert "over budget" in {item.reason for item in built.cut}


def test_each_slot_gets_its_share_and_relevance_orders_the_rest(crowded):
    built = build(crowded, "invoice migration", budget_tokens=1000, pinned_tokens=0)
    counts = {s.slot: len(s.items) for s in built.sections}
    assert set(counts) == {"user", "project", "agent"} and min(counts.values()) >= 3
    # every fact is as relevant as the others: without shares, the first slot takes it all
    lopsided = build(crowded, "invoice migration", budget_tokens=1000, min_share=0)
    assert [s.slot for s in lopsided.sections if not s.items[-1].pinned] == ["user"]
    for section in built.sections:
        relevances = [item.relevance for item in section.items if not item.pinned]
        assert relevances == sorted(relevances, reverse=True)


def test_the_same_memory_and_message_give_the_same_bytes(crowded):
    first = build_context(crowded, "invoice migration note", budget_tokens=700)
    second = build_context(crowded, "invoice migration note", budget_tokens=700)
    assert first == second and first.encode() == second.encode()


def test_access_counts_rise_only_for_what_was_rendered(crowded):
    built = build(crowded, "invoice migration", budget_tokens=300)
    shown = {item.id for item in built.facts()}
    assert 2 < len(shown) < 200
    counts = dict(crowded.conn.execute("SELECT id, access_count FROM memory_facts"))
    assert {i for i, n in counts.items() if n} == shown and set(counts.values()) == {0, 1}
    build(crowded, "invoice migration", budget_tokens=300, track_access=False)
    assert dict(crowded.conn.execute("SELECT id, access_count FROM memory_facts")) == counts


def test_bad_options_are_refused(memory):
    for options in (
        {"budget_tokens": -1},
        {"budget_tokens": 1.5},
        {"pinned_tokens": -5},
        {"min_share": 2},
        {"min_share": {"user": -0.1}},
        {"min_relevance": 3},
    ):
        with pytest.raises(InvalidInput):
            build(memory, "tea", **options)
    with pytest.raises(InvalidInput):
        build(memory, "tea", ["Not A Slot"])


def test_odd_messages_never_raise(memory, mode):
    for message in ("", '"', "AND OR NOT", "\x00", "🙂" * 50, "我喜欢喝咖啡", "x" * 50_000):
        assert isinstance(build_context(memory, message, semantic=mode == "hybrid"), str)


# -- pins -------------------------------------------------------------------------------------
def test_pin_unpin_list_and_prune(store, clock):
    store.upsert("user", "name", "The user's name is Maja.")
    for i in range(5):
        store.upsert("user", f"old.{i}", f"an old fact {i}")
    fact = store.pin("user", "name")
    assert fact.pinned and fact.pinned_at == clock.now
    clock.advance(days=1)
    assert store.pin("user", "name").pinned_at == fact.pinned_at  # already pinned: unchanged
    assert [f.key for f in store.list_facts(pinned=True)] == ["name"]
    store.upsert("user", "name", "The user's name is Maja Lindqvist.")  # an update keeps the pin
    assert store.get("user", "name").pinned
    clock.advance(days=90)
    report = store.prune_slot("user", cap=0, min_age_days=30, min_access_count=3)
    assert {f.key for f in report.removed} == {f"old.{i}" for i in range(5)}
    assert report.protected == 1 and store.get("user", "name") is not None
    assert not store.unpin("user", "name").pinned
    assert [f.key for f in store.prune_slot("user", cap=0, min_age_days=30).removed] == ["name"]
    with pytest.raises(InvalidInput, match="no fact user/name to pin"):
        store.pin("user", "name")


def test_pin_from_the_cli(db_path):
    run = CliRunner()
    Store(db_path, create=True).upsert("user", "name", "The user's name is Maja.")
    assert run.invoke(cli, ["pin", "user/name", "-d", str(db_path)]).output == "pinned: user/name\n"
    listed = json.loads(run.invoke(cli, ["list", "--pinned", "--json", "-d", str(db_path)]).output)
    assert [row["key"] for row in listed] == ["name"] and listed[0]["pinned_at"]
    context = run.invoke(cli, ["context", OFF_TOPIC, "-d", str(db_path)]).output
    assert "- **name**: The user's name is Maja." in context
    assert "unpinned" in run.invoke(cli, ["unpin", "user/name", "-d", str(db_path)]).output
    bad = run.invoke(cli, ["pin", "user-name", "-d", str(db_path)])
    assert bad.exit_code == 2 and "SLOT/KEY" in bad.output
    missing = run.invoke(cli, ["pin", "user/nobody", "-d", str(db_path)])
    assert missing.exit_code == 1 and missing.output == "Error: no fact user/nobody to pin\n"


def test_agents_read_pins_but_cannot_pin(memory):
    from slotmem.agents.llm_plugin import Slotmem
    from slotmem.agents.tools import AgentMemory

    memory.pin("user", "drinks")
    agent = AgentMemory(memory)
    [found] = agent.recall("green tea")
    assert found["pinned"] is True and 0 < found["relevance"] <= 1
    assert not {"pin", "unpin"} & {name for name in dir(Slotmem) if not name.startswith("_")}
    assert agent.recall(OFF_TOPIC) == []


# -- dates ------------------------------------------------------------------------------------
def test_dates_where_a_value_speaks_of_time(store, clock):
    store.upsert("project", "deadline", "Version 2 must ship before March 31.")
    store.upsert("project", "deploy", "We deploy on Tuesdays.")
    store.upsert("user", "trip", "Maja is flying to Lisbon next week.")
    message = "deadline deploy trip"
    text = build_context(store, message)
    assert "- **deadline** (2026-01-01): Version 2" in text and "- **deploy**: We" in text
    assert "- **trip** (2026-01-01): Maja" in text
    assert "- **deploy** (2026-01-01)" in build_context(store, message, dates=True)
    assert "(2026-" not in build_context(store, message, dates=False)
    clock.advance(days=3)
    store.upsert("user", "trip", "Maja flew back from Lisbon yesterday.")
    assert "- **trip** (2026-01-04)" in build_context(store, message)
    assert clock.now - DAY_MS * 3 == 1_767_225_600_000


@pytest.mark.parametrize(
    "value, dated",
    [
        ("Maja moved to Berlin recently.", True),
        ("The release is on 2026-03-02.", True),
        ("Standup moved to Friday.", False),
        ("Standup is on Friday.", True),
        ("We deploy on Fridays.", False),
        ("Maja prefers tea.", False),
        ("She may come.", False),
        ("Due in May 2027.", True),
    ],
)
def test_about_time(value, dated):
    assert about_time(value) is dated


# -- the command line -------------------------------------------------------------------------
def test_context_json_and_explain(memory, db_path):
    run = CliRunner()
    args = ["-d", str(db_path), "--no-track"]
    data = json.loads(run.invoke(cli, ["context", "green tea", "--json", *args]).output)
    assert data["tokens"] <= data["budget_tokens"] == context.DEFAULT_BUDGET_TOKENS
    [section] = data["sections"]
    assert section["slot"] == "user" and section["facts"][0]["key"] == "drinks"
    assert section["facts"][0]["relevance"] > DEFAULT_FLOOR
    assert data["text"].startswith("## What I know about the user\n- **drinks**")
    tight = json.loads(
        run.invoke(cli, ["context", "green tea", "--budget", "5", "--json", *args]).output
    )
    assert tight["sections"] == [] and tight["cut"][0]["reason"] == "over budget"
    explained = run.invoke(cli, ["context", "tea fastapi", "--explain", *args]).output
    assert "drinks" in explained and "relevant" in explained and "tokens" in explained


def test_policy_sets_the_floor_from_the_cli(memory, db_path):
    run = CliRunner()

    def policy(*args):
        return run.invoke(cli, ["policy", *args, "-d", str(db_path)])

    shown = json.loads(policy("project", "--min-relevance", "0.2", "--json").output)
    assert shown["action"] == "set" and shown["policy"] == {  # a write's --json: what it did
        "slot": "project",
        "cap": 1000,  # what was not given stays as it was
        "min_age_days": 30.0,
        "min_access_count": 3,
        "description": "Decisions, stack, constraints and deadlines of the project",
        "min_relevance": 0.2,
    }
    assert shown["previous"]["min_relevance"] is None
    assert memory.min_relevance("project") == 0.2
    set_cap = json.loads(policy("project", "--cap", "50", "--json").output)
    assert set_cap["policy"]["min_relevance"] == 0.2 and set_cap["policy"]["cap"] == 50
    assert json.loads(policy("project", "--json").output)[0]["cap"] == 50  # a read: the rows
    policy("project", "--min-relevance", "default")
    assert memory.policy("project").min_relevance is None
    for bad in ("2", "high", "-0.5"):
        result = policy("project", "--min-relevance", bad)
        assert result.exit_code in (1, 2)
        assert result.output.strip().splitlines()[-1].startswith("Error:"), result.output
    assert memory.policy("project").min_relevance is None  # nothing changed
    new = policy("notes", "--min-relevance", "0.1")
    assert new.exit_code == 2 and "give it a --cap" in new.output
