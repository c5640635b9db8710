"""Conversation transcripts: detect the format, parse into turns, split into chunks.

Formats: plain text; a JSON list of ``{role, content}`` messages (the OpenAI/Anthropic
shape, also ``{"messages": [...]}``); JSON Lines of the same; a conversation in the
``llm`` tool's logs database (see :func:`from_llm_logs`).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InvalidInput

TEXT_PART_TYPES = {None, "text", "input_text", "output_text"}


class TranscriptError(InvalidInput):
    """The transcript could not be read or is in no format slotmem knows."""


@dataclass(frozen=True)
class Turn:
    role: str  # "user", "assistant", ... or "" for plain text
    text: str

    def render(self) -> str:
        return f"{self.role}: {self.text}" if self.role else self.text


@dataclass
class Transcript:
    turns: list[Turn]
    format: str  # "text" | "json" | "jsonl" | "llm"
    source: str | None = None
    meta: dict = field(default_factory=dict)

    def render(self) -> str:
        return "\n\n".join(turn.render() for turn in self.turns)

    def chunks(self, max_chars: int) -> list[str]:
        """Split the rendered transcript into pieces of at most ``max_chars``,
        on turn boundaries where possible."""
        return chunk_texts([turn.render() for turn in self.turns], max_chars)


# -- detection and parsing ----------------------------------------------------


def parse(data: str | bytes, source: str | None = None) -> Transcript:
    """Detect the format of ``data`` and parse it; raise TranscriptError if it is none."""
    text = _decode(data, source)
    stripped = text.strip()
    if not stripped:
        raise TranscriptError(f"{_name(source)} is empty")
    if stripped[0] in "[{":
        parsed = _parse_json_like(stripped, source)
        if parsed is not None:
            return parsed
    return Transcript([Turn("", stripped)], "text", source)


def read_path(path: str | os.PathLike) -> Transcript:
    "Read and parse a transcript file."
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as ex:
        raise TranscriptError(f"Cannot read {path}: {ex.strerror or ex}") from ex
    return parse(data, source=path.name)


def _decode(data: str | bytes, source: str | None) -> str:
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise TranscriptError(
                f"{_name(source)} is not UTF-8 text: expected plain text, "
                "a JSON list of {role, content} messages, or JSON Lines"
            ) from None
    if "\x00" in data:
        raise TranscriptError(f"{_name(source)} looks like a binary file, not a transcript")
    return data.lstrip("\ufeff")


def _parse_json_like(text: str, source: str | None) -> Transcript | None:
    """JSON or JSON Lines; None if ``text`` is plain text that merely starts
    with a bracket (like ``[10:02] alice: hi``)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as ex:
        first_line = text.splitlines()[0].strip()
        if _is_json_object(first_line):
            return _parse_jsonl(text, source)
        if _looks_like_json(text):
            raise TranscriptError(
                f"{_name(source)} is not valid JSON (line {ex.lineno}, column {ex.colno}: {ex.msg})"
            ) from None
        return None
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        doc = doc["messages"]
    if isinstance(doc, dict):
        doc = [doc]  # a JSON Lines file of one message
        fmt = "jsonl"
    else:
        fmt = "json"
    if not isinstance(doc, list):
        raise TranscriptError(_shape_error(source))
    turns = [_turn(item, f"message {i}", source) for i, item in enumerate(doc, 1)]
    return _transcript(turns, fmt, source)


def _parse_jsonl(text: str, source: str | None) -> Transcript:
    turns = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as ex:
            raise TranscriptError(
                f"{_name(source)} line {lineno} is not valid JSON ({ex.msg}); "
                "JSON Lines needs one {role, content} object per line"
            ) from None
        turns.append(_turn(item, f"line {lineno}", source))
    return _transcript(turns, "jsonl", source)


def _turn(item, where: str, source: str | None) -> Turn:
    if not isinstance(item, dict):
        raise TranscriptError(f"{_name(source)} {where}: {_shape_error(None)}")
    role = item.get("role")
    content = item.get("content", item.get("parts"))
    if not isinstance(role, str) or ("content" not in item and "parts" not in item):
        raise TranscriptError(
            f"{_name(source)} {where}: expected an object with 'role' and 'content'"
        )
    return Turn(role.strip().lower(), content_text(content))


def content_text(content) -> str:
    """The text of a message's content: a string, or a list of parts such as
    ``{"type": "text", "text": ...}``; images, tool calls and the like are skipped."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    pieces = []
    for part in content:
        if isinstance(part, str):
            pieces.append(part)
        elif (
            isinstance(part, dict)
            and part.get("type") in TEXT_PART_TYPES
            and isinstance(part.get("text"), str)
        ):
            pieces.append(part["text"])
    return "\n".join(p.strip() for p in pieces if p.strip())


def _transcript(turns: list[Turn], fmt: str, source: str | None) -> Transcript:
    turns = [turn for turn in turns if turn.text]
    if not turns:
        raise TranscriptError(f"{_name(source)} has no message with any text")
    return Transcript(turns, fmt, source)


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def _looks_like_json(text: str) -> bool:
    return bool(re.match(r'[\[{]\s*(["{\[\]}]|$)', text))


def _shape_error(source: str | None) -> str:
    prefix = f"{_name(source)} is JSON but not " if source else "expected "
    return prefix + "a list of {role, content} messages"


def _name(source: str | None) -> str:
    return f"Transcript {source!r}" if source else "The transcript"


# -- chunking ------------------------------------------------------------------


def chunk_texts(pieces: list[str], max_chars: int, sep: str = "\n\n") -> list[str]:
    """Pack ``pieces`` in order into chunks of at most ``max_chars``; a piece
    longer than that is split at paragraph, line, sentence or word boundaries."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        for part in split_text(piece, max_chars):
            if current and len(current) + len(sep) + len(part) > max_chars:
                chunks.append(current)
                current = ""
            current = current + sep + part if current else part
    if current:
        chunks.append(current)
    return chunks


def split_text(text: str, max_chars: int) -> list[str]:
    "Split ``text`` into pieces of at most ``max_chars`` at the best boundary available."
    parts = []
    while len(text) > max_chars:
        cut = _cut_point(text, max_chars)
        parts.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text:
        parts.append(text)
    return parts


def _cut_point(text: str, max_chars: int) -> int:
    window = text[: max_chars + 1]
    for boundary in ("\n\n", "\n", ". ", " "):
        index = window.rfind(boundary, 0, max_chars)
        if index > max_chars // 2:
            return index + (1 if boundary == ". " else 0)
    return max_chars


# -- the llm tool's logs database --------------------------------------------


def llm_logs_path() -> Path:
    "The llm tool's logs database (honours LLM_USER_PATH)."
    import llm

    return llm.user_dir() / "logs.db"


def from_llm_logs(conversation_id: str, database: str | os.PathLike | None = None) -> Transcript:
    """Read one conversation from the ``llm`` tool's logs database, read-only.

    llm 0.36 logs to ``threads``/``messages``/``parts`` (a thread id is the conversation
    id); earlier versions logged to ``conversations``/``responses``. Both are read.
    """
    path = Path(database) if database else llm_logs_path()
    if not path.exists():
        raise TranscriptError(f"No llm logs database at {path}: has 'llm' logged anything yet?")
    source = f"llm:{conversation_id}"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as ex:
        raise TranscriptError(f"Cannot open llm logs database {path}: {ex}") from ex
    conn.row_factory = sqlite3.Row
    try:
        tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
        turns = None
        if "threads" in tables:
            turns = _thread_turns(conn, conversation_id)
        if not turns and "responses" in tables:
            turns = _legacy_turns(conn, conversation_id)
    except sqlite3.Error as ex:
        raise TranscriptError(f"Cannot read llm logs database {path}: {ex}") from ex
    finally:
        conn.close()
    if not turns:
        raise TranscriptError(
            f"No conversation {conversation_id!r} in {path}; 'llm logs list' shows the ids"
        )
    return _transcript(turns, "llm", source)


def _thread_turns(conn, thread_id: str) -> list[Turn] | None:
    row = conn.execute("select tip_message_hash from threads where id = ?", [thread_id]).fetchone()
    if row is None or row[0] is None:
        return None
    chain = []
    hash_ = row[0]
    while hash_ is not None:
        message = conn.execute(
            "select hash, parent_hash, role from messages where hash = ?", [hash_]
        ).fetchone()
        if message is None:
            break
        chain.append(message)
        hash_ = message["parent_hash"]
    chain.reverse()
    return [Turn(m["role"], _message_text(conn, m["hash"])) for m in chain]


def _message_text(conn, message_hash: str) -> str:
    pieces = []
    for part in conn.execute(
        "select text, payload from parts where message_hash = ? and type = 'text' "
        "order by position",
        [message_hash],
    ):
        text = part["text"]
        if text is None and part["payload"]:
            text = _text_from_refs(conn, json.loads(part["payload"]).get("text_ref") or [])
        if text and text.strip():
            pieces.append(text.strip())
    return "\n".join(pieces)


def _text_from_refs(conn, pieces: list[dict]) -> str:
    "Text stored as literals and references to the fragments table."
    out = []
    for piece in pieces:
        if "literal" in piece:
            out.append(piece["literal"])
        elif "fragment" in piece:
            row = conn.execute(
                "select content from fragments where id = ?", [piece["fragment"]]
            ).fetchone()
            out.append(row[0] if row else "")
    return "".join(out)


def _legacy_turns(conn, conversation_id: str) -> list[Turn]:
    turns = []
    rows = conn.execute(
        "select prompt, response from responses where conversation_id = ? "
        "order by datetime_utc, id",
        [conversation_id],
    )
    for row in rows:
        turns.append(Turn("user", (row["prompt"] or "").strip()))
        turns.append(Turn("assistant", (row["response"] or "").strip()))
    return turns
