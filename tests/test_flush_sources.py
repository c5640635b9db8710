"""Any transcript shape, flushed incrementally: messages in memory (dicts, llm responses and
messages, LangChain messages), files, paths; a per-source cursor; model options."""

import io
import json
from pathlib import Path

import llm
import pytest
from click.testing import CliRunner
from sqlite_utils import Database

from slotmem import InvalidInput, ModelError, Store
from slotmem.cli.flush import flush as flush_command
from slotmem.ingest import cursor
from slotmem.ingest.flusher import flush
from slotmem.ingest.messages import from_messages, to_transcript
from slotmem.ingest.transcripts import TranscriptError, Turn, parse
from slotmem.storage import db, migrate
from tests.conftest import BOTH_BACKENDS

pytest_plugins = ["llm_mock"]


def fact(key, value, slot="user", confidence=0.9):
    return {"slot": slot, "key": key, "value": value, "confidence": confidence}


def reply(*facts):
    return {"facts": list(facts)}


def said(mock):
    "The transcript part of the last prompt the mock model received."
    text = mock.prompts[-1].prompt
    return text[text.index("<transcript>") :]


def messages(n, start=0):
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Message number {i}."}
        for i in range(start, start + n)
    ]


# -- shapes ----------------------------------------------------------------------------------


def test_a_list_of_dicts_is_a_transcript(store, mock_models):
    """It raised AttributeError: 'list' object has no attribute 'lstrip'."""
    mock_models.plain.enqueue(reply(fact("drink", "Prefers tea.")))
    report = flush(store, [{"role": "user", "content": "I prefer tea."}], "mock")
    assert [i.key for i in report.created] == ["drink"]
    assert "user: I prefer tea." in said(mock_models.plain)
    assert report.source == "transcript" and store.flush_cursors() == []  # no name, no cursor


class LangChainMessage:  # the attributes of langchain_core.messages.BaseMessage slotmem reads
    def __init__(self, type, content, **extra):
        self.type, self.content, self.additional_kwargs = type, content, {}
        self.__dict__.update(extra)


def test_every_message_shape(mock_models):
    model = mock_models.plain.enqueue("Paris.")
    response = model.prompt("Where do I live?")
    response.text()
    shapes = [
        {"role": "system", "content": "Be brief."},
        {"role": "User", "content": [{"type": "text", "text": "Part one."}, {"type": "image"}]},
        {"role": "assistant", "parts": [{"type": "text", "text": "From llm's to_dict."}]},
        ("user", "A LangChain tuple."),
        ("ai", "Its reply."),
        response,
        llm.user("An llm Message."),
        LangChainMessage("human", "A HumanMessage."),
        LangChainMessage("ai", [{"type": "text", "text": "An AIMessage in parts."}]),
        LangChainMessage("chat", "A ChatMessage.", role="critic"),
        LangChainMessage("tool", "A ToolMessage."),
        Turn("user", "A Turn."),
        "A bare string.",
    ]
    t = from_messages(shapes)
    assert [(turn.role, turn.text) for turn in t.turns] == [
        ("system", "Be brief."),
        ("user", "Part one."),
        ("assistant", "From llm's to_dict."),
        ("user", "A LangChain tuple."),
        ("assistant", "Its reply."),
        ("user", "Where do I live?"),
        ("assistant", "Paris."),
        ("user", "An llm Message."),
        ("user", "A HumanMessage."),
        ("assistant", "An AIMessage in parts."),
        ("critic", "A ChatMessage."),
        ("tool", "A ToolMessage."),
        ("user", "A Turn."),
        ("", "A bare string."),
    ]
    assert t.turns[5].at is not None  # the response's time


def test_llm_conversation_dict_path_and_open_file(tmp_path, mock_models):
    model = mock_models.plain.enqueue("Hi!", "Noted.")
    conversation = model.conversation()
    for prompt in ("Hello", "I prefer tea."):
        conversation.prompt(prompt).text()
    assert [t.text for t in to_transcript(conversation).turns] == [
        "Hello",
        "Hi!",
        "I prefer tea.",
        "Noted.",
    ]
    wrapped = to_transcript({"messages": [{"role": "user", "content": "x"}]})
    assert wrapped.turns == [Turn("user", "x")]
    assert to_transcript({"role": "user", "content": "one"}).turns == [Turn("user", "one")]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages(2)))
    assert to_transcript(path).source == "chat.json"
    assert to_transcript(path, source="s").source == "s"
    with path.open("rb") as file:
        assert to_transcript(file).source == "chat.json" and len(to_transcript(path).turns) == 2
    stdin = io.BytesIO(b"I prefer tea.")
    stdin.name = "<stdin>"
    assert to_transcript(stdin).source == "stdin"


@pytest.mark.parametrize(
    "data,message",
    [
        (42, "Cannot read a transcript from a int"),
        ([{"role": "user"}], "message 1: expected an object with 'role' and 'content'"),
        ([object()], "message 1: a object is not a message"),
        ([("user", "hi", "extra")], "message 1: a tuple is not a message"),
        ([], "has no message with any text"),
    ],
)
def test_what_is_not_a_message_is_one_clear_line(store, mock_models, data, message):
    with pytest.raises(TranscriptError, match=message):
        flush(store, data, "mock")
    assert mock_models.plain.prompts == [] and store.list_facts() == []


def test_plain_text_is_one_turn_per_paragraph():
    t = parse("First line.\nSame paragraph.\n\n  \nSecond paragraph.\n")
    assert [turn.text for turn in t.turns] == ["First line.\nSame paragraph.", "Second paragraph."]


# -- the cursor ------------------------------------------------------------------------------


@BOTH_BACKENDS
def test_store_cursor_api(store, clock):
    assert store.flush_cursor("chat") is None and store.reset_flush_cursor("chat") is False
    h = cursor.prefix_hash(messages(3))
    saved = store.advance_flush_cursor("chat", 3, h)
    assert saved == store.flush_cursor("chat")
    assert (saved.messages, saved.prefix_hash, saved.flushed_at) == (3, h, clock.now)
    clock.advance(ms=5)
    store.advance_flush_cursor("chat", 1, cursor.prefix_hash(messages(1)))  # it may move back
    assert store.flush_cursor("chat").messages == 1
    assert [c.source for c in store.flush_cursors()] == ["chat"]
    assert store.reset_flush_cursor("chat") is True and store.flush_cursor("chat") is None


@pytest.mark.parametrize(
    "args,message",
    [
        (("", 1, "0" * 64), "needs a source"),
        (("s", -1, "0" * 64), "whole number >= 0"),
        (("s", True, "0" * 64), "whole number >= 0"),
        (("s", 1, "abc"), "SHA-256"),
        (("s", 1, "A" * 64), "SHA-256"),
    ],
)
@BOTH_BACKENDS
def test_bad_cursors_are_refused(store, args, message):
    with pytest.raises(InvalidInput, match=message):
        store.advance_flush_cursor(*args)
    assert store.flush_cursors() == []


def test_prefix_hash_reads_every_shape_alike():
    as_dicts = cursor.prefix_hash(messages(2))
    as_turns = cursor.prefix_hash([Turn("user", "Message number 0."), ("ai", "Message number 1.")])
    assert as_dicts == as_turns == cursor.prefix_hash(from_messages(messages(2)))
    assert as_dicts != cursor.prefix_hash(messages(3)) != cursor.prefix_hash([])


@BOTH_BACKENDS
def test_a_growing_conversation_sends_only_what_is_new(store, mock_models):
    mock_models.plain.enqueue(reply(fact("a", "Said first.")), reply(fact("b", "Said later.")))
    first = flush(store, messages(10), "mock", source="chat-1")
    assert (first.messages, first.skipped, first.context) == (10, 0, 0)
    assert "Message number 0." in said(mock_models.plain)
    assert store.flush_cursor("chat-1").messages == 10
    second = flush(store, messages(13), "mock", source="chat-1")
    assert (second.messages, second.skipped, second.context) == (3, 10, cursor.CONTEXT_MESSAGES)
    prompt = mock_models.plain.prompts[-1].prompt
    sent = said(mock_models.plain)
    assert "Message number 10." in sent and "Message number 12." in sent
    assert "Message number 9." not in sent and "Message number 9." in prompt  # context
    assert "Message number 5." not in prompt  # older than the context
    assert "already read: for context only" in prompt
    assert store.flush_cursor("chat-1").messages == 13
    assert {f.key for f in store.list_facts("user")} == {"a", "b"}


def test_nothing_new_asks_the_model_nothing(store, mock_models):
    mock_models.plain.enqueue(reply())
    flush(store, messages(4), "mock", source="chat")
    report = flush(store, messages(4), "mock", source="chat")  # no reply queued: not asked
    assert report.chunks == 0 and report.items == [] and len(mock_models.plain.prompts) == 1
    assert report.notes == ["nothing new in 'chat' since its last flush"]


def test_a_changed_conversation_is_read_again_and_the_report_says_so(store, mock_models):
    mock_models.plain.enqueue(reply(), reply(), reply())
    flush(store, messages(4), "mock", source="chat")
    edited = messages(5)
    edited[1]["content"] = "An edited message."
    report = flush(store, edited, "mock", source="chat")
    assert report.skipped == 0 and report.messages == 5
    assert "changed since it was last flushed" in report.notes[0]
    assert "Message number 0." in said(mock_models.plain)
    shorter = flush(store, messages(2), "mock", source="chat")  # fewer messages than the cursor
    assert shorter.skipped == 0 and "changed" in shorter.notes[0]
    assert store.flush_cursor("chat").messages == 2


def test_from_start_reads_it_all(store, mock_models):
    mock_models.plain.enqueue(reply(), reply())
    flush(store, messages(4), "mock", source="chat")
    report = flush(store, messages(6), "mock", source="chat", from_start=True)
    assert (report.messages, report.skipped) == (6, 0)
    assert "Message number 0." in said(mock_models.plain)
    assert store.flush_cursor("chat").messages == 6


@BOTH_BACKENDS
def test_dry_runs_and_failures_leave_the_cursor(store, mock_models):
    mock_models.plain.enqueue(reply(fact("a", "A.")), ModelError("boom"), "no JSON", reply())
    flush(store, messages(4), "mock", source="chat", dry_run=True)
    assert store.flush_cursor("chat") is None and store.list_facts() == []
    for _ in range(2):  # the model fails; its reply cannot be read
        with pytest.raises(ModelError):
            flush(store, messages(4), "mock", source="chat")
        assert store.flush_cursor("chat") is None
    flush(store, messages(4), "mock", source="chat")
    assert store.flush_cursor("chat").messages == 4


@BOTH_BACKENDS
def test_the_cursor_moves_with_the_facts_or_not_at_all(store, mock_models, monkeypatch):
    mock_models.plain.enqueue(reply(fact("a", "A.")))

    def broken(*args):
        raise InvalidInput("cannot write the cursor")

    monkeypatch.setattr(store, "advance_flush_cursor", broken)
    with pytest.raises(InvalidInput):
        flush(store, messages(4), "mock", source="chat")
    assert store.list_facts() == []  # the facts' writes rolled back with it


def test_a_long_message_of_context_keeps_its_end(store, mock_models):
    mock_models.plain.enqueue(reply(), reply())
    long = [{"role": "user", "content": "start " + "word " * 1000 + "the end."}]
    flush(store, long, "mock", source="chat")
    flush(store, [*long, {"role": "user", "content": "New."}], "mock", source="chat")
    prompt = mock_models.plain.prompts[-1].prompt
    earlier = prompt[prompt.index("<earlier>") : prompt.index("</earlier>")]
    assert "the end." in earlier and "start" not in earlier
    assert len(earlier) < cursor.CONTEXT_CHARS + 20


def test_a_file_made_before_cursors_gets_them(db_path):
    conn = db.connect(db_path, "rwc")
    names = migrate.migration_names()
    migrate.migration_set().apply(
        Database(conn), stop_before=names[names.index("0009_flush_cursors") :]
    )
    conn.close()
    with Store(db_path) as store:
        assert "0009_flush_cursors" in store.migrated
        assert store.advance_flush_cursor("s", 0, "0" * 64).messages == 0


# -- model options ---------------------------------------------------------------------------


def test_options_reach_the_model(store, mock_models):
    mock_models.plain.enqueue(reply())
    flush(store, "I prefer tea.", "mock", options={"temperature": "0.1", "max_tokens": 800})
    options = mock_models.plain.prompts[0].options
    assert (options.temperature, options.max_tokens) == (0.1, 800)


@pytest.mark.parametrize(
    "options,message",
    [
        ({"temprature": 0.1}, "rejects option 'temprature'.*its options: max_tokens, temperature"),
        ({"temperature": "warm"}, "rejects option 'temperature'"),
        ([("temperature", 0.1)], "options must be a dict"),
    ],
)
def test_bad_options_are_one_line_and_nothing_is_sent(store, mock_models, options, message):
    with pytest.raises(InvalidInput, match=message) as excinfo:
        flush(store, "I prefer tea.", "mock", options=options)
    assert "\n" not in str(excinfo.value) and mock_models.plain.prompts == []


# -- the command line ------------------------------------------------------------------------


@pytest.fixture
def cli_db(tmp_path, mock_models, monkeypatch):
    path = tmp_path / "cli.db"
    monkeypatch.setenv("SLOTMEM_DB", str(path))
    return path


def test_cli_options_growth_and_all(tmp_path, cli_db, mock_models):
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(messages(4)))
    mock_models.plain.enqueue(reply(fact("a", "A.")), reply(fact("b", "B.")), reply())
    runner = CliRunner()
    args = [str(chat), "-m", "mock", "-o", "temperature", "0.1", "-o", "max_tokens", "900"]
    result = runner.invoke(flush_command, args)
    assert result.exit_code == 0, result.output
    assert mock_models.plain.prompts[0].options.temperature == 0.1
    assert mock_models.plain.prompts[0].options.max_tokens == 900
    again = runner.invoke(flush_command, [str(chat), "-m", "mock"])
    assert "Note: nothing new in 'chat.json' since its last flush" in again.output
    chat.write_text(json.dumps(messages(6)))
    grown = runner.invoke(flush_command, [str(chat), "-m", "mock"])
    assert "1 created" in grown.output and "2 new messages, 4 read before" in grown.output
    assert "Message number 0." not in said(mock_models.plain)
    every = runner.invoke(flush_command, [str(chat), "-m", "mock", "--all", "--json"])
    data = json.loads(every.output)
    assert (data["messages"], data["skipped"]) == (6, 0)
    assert "Message number 0." in said(mock_models.plain)
    bad = runner.invoke(flush_command, [str(chat), "-m", "mock", "-o", "warmth", "1", "--all"])
    assert bad.exit_code == 1 and "rejects option 'warmth'" in bad.output


def test_cli_stdin_grows_too(cli_db, mock_models):
    mock_models.plain.enqueue(reply(), reply())
    runner = CliRunner()
    runner.invoke(flush_command, ["-", "-m", "mock"], input="First paragraph.")
    result = runner.invoke(
        flush_command, ["-", "-m", "mock"], input="First paragraph.\n\nSecond paragraph."
    )
    assert result.exit_code == 0, result.output
    assert "First paragraph." not in said(mock_models.plain)
    assert "Second paragraph." in said(mock_models.plain)


def test_python_path_source(tmp_path, store, mock_models):
    path = tmp_path / "notes.txt"
    path.write_text("One.\n\nTwo.")
    mock_models.plain.enqueue(reply())
    report = flush(store, Path(path), "mock")
    assert report.source == "notes.txt" and store.flush_cursor("notes.txt").messages == 2


def test_the_growing_benchmark_at_a_small_scale(tmp_path):
    """benchmarks/flush_growing.py's claim, on 60 messages flushed 6 times: each message is
    sent once, and the facts are those of one flush of the whole."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "flush_growing.py"
    spec = importlib.util.spec_from_file_location("flush_growing", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    messages = bench.conversation(60)
    whole, reference = bench.run(tmp_path, "whole", messages, [60])
    assert whole.sent == dict.fromkeys(range(60), 1)
    model, found = bench.run(tmp_path, "cursor", messages, list(range(10, 61, 10)))
    assert found == reference and len(reference) == 10
    assert model.sent == dict.fromkeys(range(60), 1) and model.calls == 6
    assert sum(model.context.values()) == 5 * cursor.CONTEXT_MESSAGES
