import json
import shutil

import pytest
import sqlite_utils
from hypothesis import given
from hypothesis import strategies as st

from slotmem.errors import InvalidInput
from slotmem.ingest.llm_logs import from_llm_logs
from slotmem.ingest.transcripts import (
    TranscriptError,
    Turn,
    chunk_texts,
    content_text,
    parse,
    read_path,
)

MESSAGES = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "I moved to Berlin last month."},
    {"role": "assistant", "content": [{"type": "text", "text": "Welcome to Berlin!"}]},
]

pytest_plugins = ["llm_mock"]  # fixtures: llm_user_dir, log_chat, migrated_logs_db


def test_plain_text():
    t = parse("I moved to Berlin.\nI prefer tea.\n", source="chat.txt")
    assert t.format == "text"
    assert t.turns == [Turn("", "I moved to Berlin.\nI prefer tea.")]
    assert t.source == "chat.txt"
    assert t.render() == "I moved to Berlin.\nI prefer tea."


@pytest.mark.parametrize(
    "text", ["[10:02] alice: I prefer tea", "{name} is a placeholder we use", "[1] see notes"]
)
def test_plain_text_that_starts_with_a_bracket(text):
    assert parse(text).format == "text"


def test_json_list_of_messages():
    t = parse(json.dumps(MESSAGES))
    assert t.format == "json"
    assert [turn.role for turn in t.turns] == ["system", "user", "assistant"]
    assert t.turns[2].text == "Welcome to Berlin!"
    assert "user: I moved to Berlin last month." in t.render()


def test_json_object_with_messages_key():
    t = parse(json.dumps({"model": "x", "messages": MESSAGES}))
    assert t.format == "json" and len(t.turns) == 3


def test_content_parts():
    content = [
        {"type": "text", "text": "First."},
        {"type": "image_url", "image_url": {"url": "http://x/y.png"}},
        {"type": "tool_use", "id": "t1", "name": "search", "input": {}},
        "Second.",
        {"type": "output_text", "text": "Third."},
    ]
    assert content_text(content) == "First.\nSecond.\nThird."
    assert content_text(None) == ""
    assert content_text({"type": "text", "text": "One"}) == "One"


def test_messages_without_text_are_dropped():
    messages = MESSAGES + [{"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]}]
    assert len(parse(json.dumps(messages)).turns) == 3


def test_json_lines():
    lines = "\n".join(json.dumps(m) for m in MESSAGES) + "\n\n"
    t = parse(lines.encode("utf-8"), source="chat.jsonl")
    assert t.format == "jsonl"
    assert [turn.text for turn in t.turns][1] == "I moved to Berlin last month."


def test_json_lines_of_one_message():
    t = parse(json.dumps(MESSAGES[1]))
    assert t.turns == [Turn("user", "I moved to Berlin last month.")]


def test_byte_order_mark_is_ignored():
    assert parse(b"\xef\xbb\xbf" + json.dumps(MESSAGES).encode()).format == "json"


@pytest.mark.parametrize(
    "data, message",
    [
        ("", "is empty"),
        ("   \n ", "is empty"),
        (b"\xff\xfe\x00\x01binary", "not UTF-8"),
        ("abc\x00def", "binary"),
        ('[{"role": "user", "content": "hi"},', "not valid JSON (line 1"),
        ('{"foo": 1}', "expected an object with 'role' and 'content'"),
        ("[1, 2, 3]", "list of {role, content} messages"),
        ('"just a string"', None),
        ('[{"role": "user"}]', "message 1: expected an object with 'role' and 'content'"),
        ("[]", "has no message with any text"),
        ('{"role": "user", "content": "hi"}\nnot json\n', "line 2 is not valid JSON"),
        ('{"role": "user", "content": "hi"}\n[1]\n', "line 2"),
    ],
)
def test_unknown_formats_are_clear_errors(data, message):
    if message is None:  # a JSON string is plain text that happens to be quoted
        assert parse(data).format == "text"
        return
    with pytest.raises(TranscriptError) as excinfo:
        parse(data, source="t.json")
    assert message in str(excinfo.value)
    assert isinstance(excinfo.value, InvalidInput)


def test_read_path(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(MESSAGES))
    t = read_path(path)
    assert t.source == "chat.json" and t.format == "json"
    with pytest.raises(TranscriptError, match="Cannot read"):
        read_path(tmp_path / "missing.txt")


# -- chunking -------------------------------------------------------------------------


def test_chunks_keep_turns_whole_when_they_fit():
    t = parse(
        json.dumps([{"role": "user", "content": f"message {i} " + "x" * 50} for i in range(10)])
    )
    chunks = t.chunks(200)
    assert len(chunks) > 1
    assert all(len(chunk) <= 200 for chunk in chunks)
    assert "\n\n".join(chunks) == t.render()


def test_chunks_split_a_long_turn_at_boundaries():
    text = " ".join(f"Sentence number {i}." for i in range(200))
    chunks = parse(text).chunks(300)
    assert all(len(chunk) <= 300 for chunk in chunks)
    assert all(chunk.endswith(".") for chunk in chunks)
    assert " ".join(chunks) == text


def test_one_chunk_when_small():
    assert parse("hello").chunks(1000) == ["hello"]


@given(
    st.lists(st.text(alphabet="ab .\n", min_size=1, max_size=300), min_size=1, max_size=8),
    st.integers(min_value=1, max_value=120),
)
def test_chunking_loses_no_words(pieces, size):
    chunks = chunk_texts(pieces, size)
    assert all(len(chunk) <= size for chunk in chunks)
    assert "".join("".join(chunks).split()) == "".join("".join(pieces).split())


# -- the llm tool's logs database ------------------------------------------------------


def test_llm_logs_conversation(log_chat):
    cid = log_chat(
        [("I moved to Berlin.", "Nice!"), ("I prefer green tea.", "Noted.")],
    )
    log_chat([("Another chat entirely.", "Ok.")])
    t = from_llm_logs(cid)
    assert t.format == "llm"
    assert t.source == f"llm:{cid}"
    texts = [(turn.role, turn.text) for turn in t.turns]
    assert ("user", "I moved to Berlin.") in texts
    assert ("assistant", "Noted.") in texts
    assert texts.index(("user", "I moved to Berlin.")) < texts.index(
        ("user", "I prefer green tea.")
    )
    assert "Another chat" not in t.render()


def test_llm_logs_text_stored_as_fragments(tmp_path, migrated_logs_db):
    pytest.importorskip("llm.logs", reason="llm's LogStore writes fragments from llm 0.3x on")
    from llm.logs import LogStore
    from llm.parts import assistant, user

    shutil.copy(migrated_logs_db, tmp_path / "logs.db")
    db = sqlite_utils.Database(tmp_path / "logs.db")
    store = LogStore(db)
    novel = "It was a dark and stormy night. " * 20
    tip = store.ensure_chain(
        [user(novel + "Summarise this, I like short summaries."), assistant("Short: storm.")],
        fragments=[novel],
    )
    thread = store.create_thread(tip=tip)
    assert db["part_fragments"].count == 1  # the text really is stored by reference
    t = from_llm_logs(thread, database=tmp_path / "logs.db")
    assert t.turns[0].text == (novel + "Summarise this, I like short summaries.").strip()


def test_llm_logs_legacy_tables(tmp_path, migrated_logs_db):
    path = tmp_path / "logs.db"
    shutil.copy(migrated_logs_db, path)
    db = sqlite_utils.Database(path)
    db["conversations"].insert({"id": "01legacy", "name": "old", "model": "gpt-3.5-turbo"})
    for i, (prompt, reply) in enumerate([("I use vim.", "Great."), ("Deadline is Friday.", "OK")]):
        db["responses"].insert(
            {
                "id": f"r{i}",
                "model": "gpt-3.5-turbo",
                "prompt": prompt,
                "response": reply,
                "conversation_id": "01legacy",
                "datetime_utc": f"2024-01-0{i + 1}T10:00:00",
            }
        )
    db.close()
    t = from_llm_logs("01legacy", database=path)
    assert [(turn.role, turn.text) for turn in t.turns] == [
        ("user", "I use vim."),
        ("assistant", "Great."),
        ("user", "Deadline is Friday."),
        ("assistant", "OK"),
    ]
    assert t.render().startswith("[2024-01-01] user: I use vim.")
    assert "[2024-01-02] user: Deadline is Friday." in t.render()


def test_llm_logs_errors(log_chat):
    with pytest.raises(TranscriptError, match="No llm logs database"):
        from_llm_logs("nope")
    log_chat([("hi", "hello")])
    with pytest.raises(TranscriptError, match="No conversation 'nope'.*llm logs list"):
        from_llm_logs("nope")


def test_llm_logs_thread_time_is_the_transcript_time(log_chat):
    t = from_llm_logs(log_chat([("I live in Oslo.", "Ok")]))
    assert t.at is not None and t.at.tzinfo is not None
    assert t.dated_chunks(1000)[0][1] == t.at


def test_llm_logs_are_read_only(llm_user_dir, log_chat):
    path = llm_user_dir / "logs.db"
    cid = log_chat([("I live in Oslo.", "Ok")])
    before = path.read_bytes()
    from_llm_logs(cid)
    assert path.read_bytes() == before


# -- when it was said ---------------------------------------------------------------------


def test_message_times_in_every_form():
    messages = [
        {"role": "user", "content": "a", "timestamp": "2026-10-15T09:30:00Z"},
        {"role": "user", "content": "b", "created_at": "2026-10-15 23:30:00+02:00"},
        {"role": "user", "content": "c", "create_time": 1792108800},  # 2026-10-16, seconds
        {"role": "user", "content": "d", "time": 1792108800000},  # milliseconds
        {"role": "user", "content": "e", "date": "not a date"},  # ignored, never an error
        {"role": "user", "content": "f", "datetime": True},
    ]
    t = parse(json.dumps(messages))
    days = [turn.at and turn.at.strftime("%Y-%m-%d %z") for turn in t.turns]
    assert days == [
        "2026-10-15 +0000",
        "2026-10-15 +0200",
        "2026-10-16 +0000",
        "2026-10-16 +0000",
        None,
        None,
    ]
    assert t.render().split("\n\n") == [
        "[2026-10-15] user: a",
        "user: b",
        "[2026-10-16] user: c",
        "user: d",
        "user: e",
        "user: f",
    ]


def test_each_chunk_has_the_time_of_its_last_dated_turn():
    messages = [
        {"role": "user", "content": "x" * 300, "timestamp": f"2026-10-{day}T10:00:00Z"}
        for day in (10, 11, 12)
    ] + [{"role": "user", "content": "undated " * 40}]
    t = parse(json.dumps(messages))
    chunks = t.dated_chunks(400)
    assert [when.day for _, when in chunks] == [10, 11, 12, 12]
    assert [text for text, _ in chunks] == t.chunks(400)
    assert parse("plain text").dated_chunks(100) == [("plain text", None)]
