"""Episodes (what happened) beside facts (what is true): recorded with the facts written from
them, found by words and by meaning, fed to a context under their own budget and heading,
pruned by their slot's policy, and the retrieval log that says what a prompt was given."""

import asyncio
import hashlib
import json
import re

import llm
import pytest

from slotmem import InvalidInput, ProtectedFact, Store
from slotmem.agents.context import build, build_context
from slotmem.agents.episodes import EPISODE_TITLE, describe
from slotmem.aio import AsyncStore
from slotmem.search.terms import STOPWORDS
from tests.conftest import BOTH_BACKENDS, DAY_MS
from tests.test_migrations import make_old_file

pytest_plugins = ["llm_mock"]  # fixtures: mock_models

MEANING = "fake-meaning"
# Deterministic fake embeddings: each word hashed into a bucket, after folding the words that
# mean the same here into one, so that a paraphrase lands near what it paraphrases.
CONCEPTS = {
    "australian": "australia",
    "geography": "capital",
    "cities": "capital",
    "canberra": "capital",
    "sydney": "capital",
    "ways": "techniques",
    "assembling": "engineering",
    "input": "context",
    "survey": "covered",
    "model": "llm",
}


class MeaningEmbeddings(llm.EmbeddingModel):
    model_id = MEANING
    dimensions = 512

    def embed_batch(self, items):
        for text in items:
            vector = [0.0] * self.dimensions
            for word in re.findall(r"[a-z]{2,}", text.lower()):
                if word in STOPWORDS:
                    continue
                word = CONCEPTS.get(word, word)
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimensions] += 1.0
            yield vector


class Plugin:
    @llm.hookimpl
    def register_embedding_models(self, register):
        register(MeaningEmbeddings())


@pytest.fixture
def meaning():
    llm.pm.register(Plugin(), name="fake-meaning")
    yield
    llm.pm.unregister(name="fake-meaning")


# Seed 000/001: a research run compressed into an observation with its quality score.
OBSERVATION = {
    "text": (
        "Covered the top 5 context engineering techniques for production LLM agents including "
        "RAG, context compression, and chain-of-thought prompting."
    ),
    "title": "Context Engineering",
    "task": "What are the top context engineering techniques for production agents?",
    "run": "run-2026-05-30-0917",
    "score": 8.7,
    "outcome": "final",
    "data": {"task_type": "enumerated", "output_path": "runs/0917.md"},
    "facts": [
        {
            "slot": "project",
            "key": "rag.vs.static",
            "value": "RAG outperforms static context injection for dynamic knowledge tasks",
        },
        {
            "slot": "project",
            "key": "context.compression",
            "value": "Context compression via summarization reduces token cost by 60-80%",
        },
    ],
}


@BOTH_BACKENDS
def test_a_research_run_is_an_episode_with_its_facts_linked_both_ways(store, clock):
    episode = store.record_episode(**OBSERVATION, happened_at="2026-05-30T09:17:00Z")
    assert (episode.title, episode.run, episode.score, episode.outcome) == (
        "Context Engineering",
        "run-2026-05-30-0917",
        8.7,
        "final",
    )
    assert episode.data == {"task_type": "enumerated", "output_path": "runs/0917.md"}
    assert episode.slot == "episodes" and episode.key.startswith("context-engineering.")
    assert episode.happened_at == 1780132620000 and episode.created_at == clock.now
    assert store.get_episode(episode.id) == episode
    # which facts came from this run? which run did this fact come from?
    facts = store.episode_facts(episode.id)
    assert [f.key for f in facts] == ["rag.vs.static", "context.compression"]
    assert {f.source for f in facts} == {f"episode:{episode.id}"}
    assert [e.run for e in store.fact_episodes("project", "context.compression")] == [episode.run]
    # a later run restating a fact links it to that run too, the fact keeping its id
    clock.advance(days=1)
    later = store.record_episode(
        "Revisited context compression: summarization still cuts token cost by 60-80%.",
        run="run-2026-05-31",
        happened_at="2026-05-31",
        facts=[OBSERVATION["facts"][1]],
    )
    assert store.episode_facts(later.id)[0].id == facts[1].id
    assert [e.run for e in store.fact_episodes("project", "context.compression")] == [
        "run-2026-05-31",
        "run-2026-05-30-0917",
    ]
    # the episode is a fact too: history, the word index, feedback
    assert store.get("episodes", episode.key).value == OBSERVATION["text"]
    store.rate("episodes", episode.key, 2, "the planner used this well")
    assert store.get_episode(episode.id).quality == 2
    with pytest.raises(InvalidInput, match="no fact project/nothing"):
        store.fact_episodes("project", "nothing")


@BOTH_BACKENDS
def test_an_exchange_is_an_episode_with_session_and_feedback(store, clock):
    """Seed 002's engram: question and answer, session and query id, feedback later."""
    first = store.record_episode(
        "Q: What is the capital of France?\nA: Paris.",
        task="What is the capital of France?",
        session="s-1",
        run="q-1",
    )
    clock.advance(ms=1000)
    second = store.record_episode("Q: And of Italy?\nA: Rome.", session="s-1", run="q-2")
    clock.advance(ms=1000)
    other = store.record_episode("Q: Which editor do I use?\nA: Neovim.", session="s-2")
    assert second.key.startswith("episode.") and first.key != second.key
    assert [e.run for e in store.list_episodes(session="s-1")] == ["q-2", "q-1"]
    assert [e.id for e in store.list_episodes()] == [other.id, second.id, first.id]
    assert [e.id for e in store.list_episodes(run="q-1")] == [first.id]
    assert store.list_episodes(since=clock.now - 500) == [store.get_episode(other.id)]
    assert store.list_episodes(limit=1)[0].id == other.id
    store.rate("episodes", first.key, -2)
    line = build_context(store, "capital of France", [], episodes=True)
    assert line.splitlines()[0] == f"## {EPISODE_TITLE}"
    assert "- **" + first.key + "** (2026-01-01, rated -2): Q: What is the capital" in line


@BOTH_BACKENDS
def test_a_key_given_again_updates_the_episode_and_history_keeps_the_old(store, clock):
    store.record_episode("Started the benchmark run.", key="run.42", outcome="running")
    clock.advance(ms=10)
    done = store.record_episode("The benchmark run finished: 12 of 12.", key="run.42", score=1.0)
    assert (done.outcome, done.score, done.text) == (
        None,
        1.0,
        "The benchmark run finished: 12 of 12.",
    )
    assert [e.key for e in store.list_episodes()] == ["run.42"]
    assert store.history("episodes", "run.42")[0].value == "Started the benchmark run."


@BOTH_BACKENDS
def test_episodes_are_searched_by_words_and_facts_are_not_episodes(store):
    store.upsert("project", "compression", "We compress contexts with summaries.")
    episode = store.record_episode(**OBSERVATION)
    hits = store.search_episodes("context compression techniques", semantic=False)
    assert [h.episode.id for h in hits] == [episode.id] and 0 < hits[0].relevance <= 1
    assert store.search_episodes("engineering", semantic=False)[0].episode.id == episode.id
    assert store.search_episodes("nothing like it at all", semantic=False) == []
    assert store.search_episodes("context", slots=["project"]) == []  # no episode there
    assert store.get_episode(episode.id).access_count == 2  # the searches that found it
    with Store(store.path, clock=store.clock) as empty_episodes:
        empty_episodes.conn.execute("DELETE FROM memory_episodes")
        assert empty_episodes.search_episodes("context") == []


@BOTH_BACKENDS
def test_an_episode_is_found_by_meaning_with_the_semantic_leg(store, meaning):
    episode = store.record_episode(**OBSERVATION)
    store.semantic.reindex(MEANING)
    question = "Which ways of assembling model input did we survey?"
    assert store.search_episodes(question, semantic=False) == []
    hits = store.search_episodes(question)
    assert hits and hits[0].episode.id == episode.id
    # new episodes are embedded as they are written
    other = store.record_episode("Priced the cities of Australia by rent.", run="r-rent")
    assert store.search_episodes("Australian geography")[0].episode.id == other.id


@BOTH_BACKENDS
def test_the_agent_loop_recalls_an_episode_and_says_what_it_used(store, clock, meaning):
    """Several turns, each recording an episode and the facts extracted from it; a later
    question in a new session retrieves an earlier episode by meaning; the retrieval log then
    answers "which facts did you use for that answer?"."""
    store.semantic.reindex(MEANING)
    turns = [  # (session, message, facts the flusher would extract)
        (
            "s-1",
            "Please remember my preferred language is Elixir.",
            [{"slot": "user", "key": "language.preferred", "value": "The user prefers Elixir."}],
        ),
        (
            "s-1",
            "The capital of Australia is Canberra, not Sydney.",
            [
                {
                    "slot": "user",
                    "key": "geography.australia.capital",
                    "value": "Canberra is the capital of Australia, not Sydney.",
                }
            ],
        ),
        ("s-2", "What do you remember about Australian geography?", []),
    ]

    def answer(message: str, context: str) -> str:  # the scripted model
        if "Canberra" in context:
            return "You told me the capital of Australia is Canberra, not Sydney."
        return "Noted."

    episodes, contexts = [], []
    for number, (session, message, facts) in enumerate(turns, 1):
        run = f"turn-{number}"
        context = build(
            store, message, ["user"], episodes=True, record=True, session=session, run=run
        )
        reply = answer(message, context.text)
        contexts.append(context)
        episodes.append(
            store.record_episode(
                f"Q: {message}\nA: {reply}", task=message, session=session, run=run, facts=facts
            )
        )
        clock.advance(days=1)

    # the third turn's context held the second turn's episode: found by meaning alone
    lexical = store.search_episodes(turns[2][1], semantic=False, track_access=False)
    assert episodes[1].id not in [hit.episode.id for hit in lexical]
    third = contexts[2]
    assert f"## {EPISODE_TITLE}" in third.text and "Canberra" in third.text
    assert episodes[2].text.endswith("Canberra, not Sydney.")

    # "which facts did you use for that answer?"
    [retrieval] = store.retrievals(run="turn-3")
    assert (retrieval.query, retrieval.session, retrieval.tokens) == (
        turns[2][1],
        "s-2",
        third.tokens,
    )
    assert [i.key for i in retrieval.used("fact")] == ["geography.australia.capital"]
    assert episodes[1].id in [i.fact_id for i in retrieval.used("episode")]
    assert "language.preferred" not in [i.key for i in retrieval.used()]
    # ... and where each came from: the fact from the second turn's episode
    [origin] = store.fact_episodes("user", "geography.australia.capital")
    assert (origin.run, origin.session) == ("turn-2", "s-1")
    text = describe(retrieval)
    assert text.splitlines()[0].startswith('Used for "What do you remember about Australian')
    assert "- fact user/geography.australia.capital: Canberra is the capital" in text
    assert f"- episode episodes/{episodes[1].key}: Q: The capital of Australia" in text
    # the prompts that used a fact; the log keeps the value the prompt had
    store.upsert("user", "geography.australia.capital", "Canberra (ACT) is the capital.")
    [again] = store.retrievals(fact_id=retrieval.used("fact")[0].fact_id)
    assert again.id == retrieval.id and again.used("fact")[0].value.startswith("Canberra is")
    assert [r.run for r in store.retrievals(session="s-1")] == ["turn-2", "turn-1"]


@BOTH_BACKENDS
def test_episodes_have_their_own_budget_and_heading_and_leave_the_facts_alone(store):
    store.upsert("project", "context.compression", "Summaries cut the context by 60-80%.")
    store.record_episode(**OBSERVATION)
    message = "context compression"
    facts_only = build(store, message, ["project"], track_access=False)
    both = build(store, message, ["project"], episodes=True, track_access=False)
    assert both.text.startswith(facts_only.text + f"\n\n## {EPISODE_TITLE}\n- **Context Eng")
    assert "(2026-01-01, score 8.7, final)" in both.text
    assert [s.title for s in both.sections][-1] == EPISODE_TITLE
    none = build(store, message, ["project"], episodes=True, episode_tokens=10, track_access=False)
    assert none.text == facts_only.text
    assert [(i.key, i.reason) for i in none.cut][-1][1] == "over the episode budget"
    off = build(store, "what is the weather in Oslo?", ["project"], episodes=True, explain=True)
    assert off.text == "" and all(i.reason.startswith("below the floor") for i in off.cut)
    store.set_policy("episodes", cap=100, min_relevance=0.99)  # the episodes' own floor
    high = build(store, message, ["project"], episodes=True, explain=True, track_access=False)
    assert high.text == facts_only.text and high.cut[-1].reason == "below the floor 0.99"
    store.set_policy("episodes", cap=100, min_relevance="default")
    rerun = store.record_episode(
        "Context compression, run again: the same findings.", title="Context Engineering"
    )
    again = build(store, message, ["project"], episodes=True, track_access=False)
    assert again.text.count("**Context Engineering**") == 1
    assert again.cut[-1].reason == "a better match has its title"
    assert again.cut[-1].id in {rerun.id, store.list_episodes()[-1].id}
    # the episodes' slot asked for as facts too: each episode shown once
    twice = build(store, message, ["project", "episodes"], episodes=True, track_access=False)
    assert twice.text.count("Covered the top 5") == 1


@BOTH_BACKENDS
def test_only_the_episodes_in_the_text_count_as_accessed(store):
    kept = store.record_episode("Compressed the context with summaries.", title="Compression")
    long = store.record_episode("Compressed the context " + "with many words " * 80, title="Long")
    text = build_context(
        store, "compressed context summaries", [], episodes=True, episode_tokens=60
    )
    assert "Compression" in text and "Long" not in text
    assert store.get_episode(kept.id).access_count == 1
    assert store.get_episode(long.id).access_count == 0


@BOTH_BACKENDS
def test_episodes_are_pruned_by_their_slots_policy_and_restored_whole(store, clock):
    store.upsert("project", "stack", "Python")
    old = [store.record_episode(f"Run number {n} finished.", run=f"r{n}") for n in range(3)]
    clock.advance(days=40)
    store.set_policy("episodes", cap=1, min_age_days=30, min_access_count=1)
    [report] = [r for r in store.prune() if r.slot == "episodes"]
    assert len(report.removed) == 2 and store.get("project", "stack") is not None
    [left] = store.list_episodes()
    assert left.id == old[2].id  # the oldest went first
    gone = old[0]
    assert store.get_episode(gone.id) is None
    store.restore("episodes", gone.key)
    assert store.get_episode(gone.id).run == "r0"  # its metadata was kept, as history is


@BOTH_BACKENDS
def test_the_facts_a_flush_wrote_are_linked_to_the_episode(store, mock_models):
    """The flusher extracts the facts of a conversation; the conversation is the episode."""
    from slotmem.ingest.flusher import flush
    from slotmem.ingest.transcripts import parse

    chat = "user: I moved from Paris to Berlin last month. I prefer tea.\nassistant: Noted!"
    mock_models.plain.enqueue(
        {
            "facts": [
                {"slot": "user", "key": "home_city", "value": "Lives in Berlin.", "confidence": 0.9}
            ]
        }
    )
    report = flush(store, parse(chat, source="chat-7"), "mock")
    episode = store.record_episode(chat, session="chat-7", title="Moved to Berlin")
    linked = store.link_facts(episode.id, [(i.slot, i.key) for i in report.created])
    assert [f.key for f in linked] == ["home_city"]
    assert store.fact_episodes("user", "home_city")[0].session == "chat-7"


@BOTH_BACKENDS
def test_undo_flush_reverts_the_facts_an_episode_wrote(store):
    store.upsert("project", "rag.vs.static", "Static context is enough.")
    episode = store.record_episode(**OBSERVATION)
    report = store.undo_flush(f"episode:{episode.id}")
    assert report.counts() == {"reverted": 1, "deleted": 1}
    assert store.get("project", "rag.vs.static").value == "Static context is enough."


@BOTH_BACKENDS
def test_the_retrieval_log_keeps_cut_items_and_forgets_old_builds(store, clock):
    store.upsert("project", "deploy", "We deploy on Fridays.")
    store.upsert("project", "deploy.window", "Deploy between 10:00 and 12:00 " + "please " * 50)
    context = build(store, "when do we deploy?", ["project"], budget_tokens=30, record=True)
    [retrieval] = store.retrievals()
    assert [(i.position, i.key, i.included) for i in retrieval.items] == [
        (1, "deploy", True),
        (2, "deploy.window", False),
    ]
    assert retrieval.cut()[0].reason == "over budget" and retrieval.tokens == context.tokens
    assert store.get_retrieval(retrieval.id) == retrieval and store.get_retrieval(99) is None
    clock.advance(days=31)
    build(store, "when do we deploy?", ["project"], record=True, run="later")
    assert store.prune_retrievals("30d") == 1
    assert [r.run for r in store.retrievals()] == ["later"]
    left = store.conn.execute("SELECT count(*) AS n FROM memory_retrieval_items").fetchone()["n"]
    assert left == len(store.retrievals()[0].items)
    assert build(store, "anything", ["project"]).text == ""  # not recorded unless asked
    assert len(store.retrievals()) == 1


def test_a_file_from_before_0011_opens_and_works(db_path):
    make_old_file(db_path, before="0011_episodes")
    with Store(db_path) as store:
        assert store.migrated[0] == "0011_episodes"  # then any later ones
        assert [h.fact.key for h in store.query_facts("Stockholm")] == ["timezone"]
        assert store.list_episodes() == [] and store.retrievals() == []
        episode = store.record_episode(
            "Set the timezone to Stockholm.", facts=[{"slot": "user", "key": "tz", "value": "CET"}]
        )
        assert store.search_episodes("timezone")[0].episode.id == episode.id
        assert store.fact_episodes("user", "tz")[0].id == episode.id
        assert build_context(store, "Stockholm", record=True).startswith("## What I know about")
        assert len(store.retrievals()) == 1


def test_async_store_records_and_searches_episodes(db_path):
    async def main():
        async with AsyncStore(db_path, create=True) as mem:
            episode = await mem.record_episode("Deployed the release on Friday.", run="r1")
            hits = await mem.search_episodes("deployed release")
            return episode, hits, await mem.episode_facts(episode.id)

    episode, hits, facts = asyncio.run(main())
    assert hits[0].episode == episode or hits[0].episode.id == episode.id
    assert facts == []


BAD_EPISODES = [
    ({"text": ""}, "text must not be empty"),
    ({"text": "x" * 4001}, "text is 4001 characters long"),
    ({"text": "ok", "slot": "Bad Slot"}, "invalid slot"),
    ({"text": "ok", "score": "high"}, "score must be a finite number"),
    ({"text": "ok", "score": float("nan")}, "score must be a finite number"),
    ({"text": "ok", "score": True}, "score must be a finite number"),
    ({"text": "ok", "title": "two\nlines"}, "title contains a control character"),
    ({"text": "ok", "session": ""}, "session must not be empty"),
    ({"text": "ok", "data": ["a"]}, "data must be a JSON object"),
    ({"text": "ok", "data": {"when": object()}}, "data must be a JSON object"),
    ({"text": "ok", "happened_at": "soonish"}, "happened_at 'soonish' is neither"),
    ({"text": "ok", "confidence": 2}, "confidence must be in"),
    ({"text": "ok", "facts": [{"slot": "user", "key": "k"}]}, "fact 0: needs slot, key and value"),
    (
        {"text": "ok", "facts": [{"slot": "user", "key": "k", "value": "v", "x": 1}]},
        "unknown field",
    ),
    ({"text": "ok", "facts": [{"slot": "User", "key": "k", "value": "v"}]}, "fact 0: invalid slot"),
    ({"text": "ok", "facts": ["user/k=v"]}, "fact 0: needs slot, key and value"),
    ({"text": "ok", "facts": {"slot": "user"}}, "facts must be a list"),
]


@pytest.mark.parametrize("arguments,message", BAD_EPISODES, ids=lambda v: str(v)[:40])
@BOTH_BACKENDS
def test_bad_episodes_are_refused_with_one_line_and_write_nothing(store, arguments, message):
    arguments = dict(arguments)  # shared by both backends
    text = arguments.pop("text")
    with pytest.raises(InvalidInput, match=re.escape(message)) as error:
        store.record_episode(text, **arguments)
    assert "\n" not in str(error.value)
    assert store.stats()["facts"] == 0 and store.list_episodes() == []


@BOTH_BACKENDS
def test_bad_links_retrievals_and_context_options_are_refused(store):
    episode = store.record_episode("Ran it.")
    store.upsert("user", "k", "v")
    with pytest.raises(InvalidInput, match="no fact user/missing to link"):
        store.link_facts(episode.id, [("user", "k"), ("user", "missing")])
    assert store.episode_facts(episode.id) == []  # nothing linked
    with pytest.raises(InvalidInput, match="no episode nope"):
        store.link_facts("nope", [("user", "k")])
    with pytest.raises(InvalidInput, match="give each fact as a Fact"):
        store.link_facts(episode.id, [42])
    assert [f.key for f in store.link_facts(episode.id, ["user/k", store.get("user", "k")])] == [
        "k",
        "k",
    ]
    assert [f.key for f in store.episode_facts(episode.id)] == ["k"]
    with pytest.raises(InvalidInput, match="item 0: needs id, slot, key, value and included"):
        store.record_retrieval("q", [{"id": "a", "slot": "user", "key": "k"}])
    with pytest.raises(InvalidInput, match="item 0: relevance must be a number from 0 to 1"):
        store.record_retrieval(
            "q",
            [{"id": "a", "slot": "user", "key": "k", "value": "v", "included": 1, "relevance": 2}],
        )
    with pytest.raises(InvalidInput, match="query must not be empty"):
        store.record_retrieval(" ", [])
    with pytest.raises(InvalidInput, match="pass record=True too"):
        build(store, "k", run="turn-1")
    with pytest.raises(InvalidInput, match="episode_tokens must be a number of tokens"):
        build(store, "k", episodes=True, episode_tokens=-1)
    with pytest.raises(InvalidInput, match="invalid slot"):
        build(store, "k", episodes=["Not A Slot"])
    with pytest.raises(InvalidInput, match="before 'soon' is neither"):
        store.prune_retrievals("soon")
    with pytest.raises(InvalidInput, match="retrieval id must be a positive integer"):
        store.get_retrieval(0)
    assert store.retrievals() == [] and store.get("user", "k").access_count == 0


@BOTH_BACKENDS
def test_happened_at_takes_durations_and_days(store, clock):
    episode = store.record_episode("Yesterday's run.", happened_at="1d")
    assert episode.happened_at == clock.now - DAY_MS
    assert store.list_episodes(until=clock.now - 1) == [episode]


def run_cli(*args, input=None):
    from click.testing import CliRunner

    from slotmem.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_the_command_line_records_lists_searches_and_shows_episodes(db_path):
    done = run_cli(
        "episodes", "record", "-", "--title", "Context Engineering", "--run", "r-17",
        "--score", "8.7", "--session", "s1", "--data", '{"task_type": "enumerated"}',
        "--fact", "project/rag.vs.static=RAG beats static context", "--at", "2026-05-30",
        "-d", db_path, input="Covered RAG and context compression.\n",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert (
        done.output.startswith("recorded episode ") and "fact project/rag.vs.static" in done.output
    )
    episode_id = done.output.split()[2].rstrip(":")
    listed = run_cli("episodes", "list", "--json", "-d", db_path)
    [row] = json.loads(listed.output)
    assert (row["id"], row["label"], row["score"], row["data"]) == (
        episode_id,
        "Context Engineering",
        8.7,
        {"task_type": "enumerated"},
    )
    assert row["happened_at"][:10] in ("2026-05-29", "2026-05-30") and row["text"].endswith(
        "compression."
    )
    table = run_cli("episodes", "list", "--session", "s1", "-d", db_path).output
    assert "Context Engineering" in table and "r-17" in table
    assert run_cli("episodes", "list", "--session", "s2", "-d", db_path).output == "(none)\n"
    origin = run_cli("episodes", "list", "--fact", "project/rag.vs.static", "--json", "-d", db_path)
    assert [r["id"] for r in json.loads(origin.output)] == [episode_id]
    found = run_cli("episodes", "search", "context compression", "--json", "-d", db_path)
    assert [(h["id"], h["relevance"] > 0) for h in json.loads(found.output)] == [(episode_id, True)]
    shown = run_cli("episodes", "show", episode_id, "-d", db_path).output
    assert "  run: r-17" in shown and "facts from it (1):\n  project/rag.vs.static: RAG" in shown
    data = json.loads(run_cli("episodes", "show", episode_id, "--json", "-d", db_path).output)
    assert [f["key"] for f in data["facts"]] == ["rag.vs.static"] and data["retrievals"] == []


def test_the_command_line_records_a_context_and_shows_what_it_used(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("project", "deploy", "We deploy on Fridays.")
        episode = store.record_episode("Deployed on Friday; the rollback was not needed.")
    context = run_cli(
        "context", "when do we deploy?", "--episodes", "--record", "--run", "turn-1",
        "-d", db_path,
    )  # fmt: skip
    assert context.exit_code == 0, context.output
    assert f"## {EPISODE_TITLE}\n- **episode." in context.output
    listed = json.loads(
        run_cli("retrievals", "list", "--run", "turn-1", "--json", "-d", db_path).output
    )
    [row] = listed
    assert (row["facts"], row["episodes"], row["query"]) == (1, 1, "when do we deploy?")
    assert [r["id"] for r in json.loads(
        run_cli("retrievals", "list", "--fact", "project/deploy", "--json", "-d", db_path).output
    )] == [row["id"]]  # fmt: skip
    by_episode = run_cli("retrievals", "list", "--episode", episode.id, "-d", db_path).output
    assert "when do we deploy?" in by_episode
    shown = run_cli("retrievals", "show", row["id"], "-d", db_path).output
    assert shown.splitlines()[0].startswith('Used for "when do we deploy?" (')
    assert "- fact project/deploy: We deploy on Fridays." in shown
    items = json.loads(run_cli("retrievals", "show", row["id"], "--json", "-d", db_path).output)
    assert [i["kind"] for i in items["items"]] == ["fact", "episode"]
    assert run_cli("retrievals", "prune", "--before", "1d", "-d", db_path).output == (
        "forgot 0 recorded contexts\n"
    )
    assert (
        "forgot 1 recorded context\n"
        == run_cli("retrievals", "prune", "--before", "2100-01-01", "-d", db_path).output
    )


@pytest.mark.parametrize(
    "args,message",
    [
        (["episodes", "record", "ok", "--data", "{nope"], "Invalid value for --data: not JSON"),
        (["episodes", "record", "ok", "--data", "[1]"], "Error: data must be a JSON object"),
        (["episodes", "record", "ok", "--fact", "user/k"], "give --fact as SLOT/KEY=VALUE"),
        (["episodes", "record", "ok", "--fact", "k=v"], "give the fact as SLOT/KEY"),
        (["episodes", "record", " "], "Error: text must not be empty"),
        (["episodes", "show", "nope"], "Error: no episode nope"),
        (["episodes", "list", "--fact", "user/none"], "Error: no fact user/none"),
        (["retrievals", "show", "7"], "Error: no retrieval 7"),
        (["retrievals", "list", "--fact", "user/none"], "Error: no fact user/none"),
        (["retrievals", "list", "--fact", "u/k", "--episode", "x"], "give --fact or --episode"),
        (["retrievals", "prune", "--before", "soon"], "Error: before 'soon' is neither"),
        (["context", "hello", "--run", "r1"], "Error: session and run name a recorded context"),
    ],
)
def test_the_command_line_refuses_bad_input_with_one_line(db_path, args, message):
    Store(db_path, create=True).close()
    result = run_cli(*args, "-d", db_path)
    assert result.exit_code != 0 and message in result.output, result.output
    assert len([line for line in result.output.splitlines() if line.startswith("Error")]) == 1
    with Store(db_path) as store:
        assert store.stats()["facts"] == 0 and store.retrievals() == []


@BOTH_BACKENDS
def test_a_run_recorded_with_less_confidence_ranks_below_its_twin(store):
    strong = store.record_episode("Benchmarked the parser on malformed replies.", score=9.1)
    weak = store.record_episode("Benchmarked the parser on malformed replies.", confidence=0.5)
    hits = store.search_episodes("benchmarked parser", semantic=False)
    assert [h.episode.id for h in hits] == [strong.id, weak.id]  # a tie goes to the later


@BOTH_BACKENDS
def test_an_episode_cannot_change_a_protected_fact_unless_allowed(store):
    store.upsert("user", "owner", "Maja owns this memory.", protect=True)
    attempts = [
        {"slot": "user", "key": "owner", "text": "Someone else owns it."},
        {"slot": "user", "key": "Owner", "text": "Maja owns this memory."},  # would become one
        {
            "facts": [
                {"slot": "user", "key": "owner", "value": "Maja owns this memory.", "ttl": "1d"}
            ]
        },
        {"facts": [{"slot": "user", "key": "ＯＷＮＥＲ", "value": "Someone else."}]},
    ]
    for attempt in attempts:
        attempt.setdefault("text", "The agent's run")
        with pytest.raises(ProtectedFact, match="user/owner is protected"):
            store.record_episode(**attempt, title="run")
    assert store.list_episodes() == [] and store.stats()["facts"] == 1
    fact = store.get("user", "owner")
    assert (fact.value, fact.expires_at) == ("Maja owns this memory.", None)
    store.record_episode("Maja's own note", slot="user", key="owner", allow_protected=True)
    assert store.get("user", "owner").value == "Maja's own note"  # a person may
