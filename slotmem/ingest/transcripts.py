"""Conversation transcripts: detect the format, parse into turns, split into chunks.

Formats: plain text (one turn per paragraph); a JSON list of ``{role, content}`` messages (the
OpenAI/Anthropic shape, also ``{"messages": [...]}``); JSON Lines of the same. A conversation in
the ``llm`` tool's logs database is read by ``llm_logs.from_llm_logs``; messages in memory (llm
and LangChain objects too) by ``messages.from_messages``. A message's time is read from its
``timestamp``, ``created_at``, ``create_time``, ``time``, ``date`` or ``datetime`` field when it
has one (ISO text or epoch seconds or milliseconds); the rendered transcript then shows the day
wherever it changes, ``[2026-10-15] user: ...``.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidInput
from .dates import day, message_time

TEXT_PART_TYPES = {None, "text", "input_text", "output_text"}
_PARAGRAPH = re.compile(r"\n[ \t]*\n")  # plain text: one turn per paragraph


class TranscriptError(InvalidInput):
    """The transcript could not be read or is in no format slotmem knows."""


@dataclass(frozen=True)
class Turn:
    role: str  # "user", "assistant", ... or "" for plain text
    text: str
    at: datetime.datetime | None = None  # when it was said, when the format says

    def render(self) -> str:
        return f"{self.role}: {self.text}" if self.role else self.text


@dataclass
class Transcript:
    turns: list[Turn]
    format: str  # "text" | "json" | "jsonl" | "llm" | "messages"
    source: str | None = None
    meta: dict = field(default_factory=dict)
    at: datetime.datetime | None = None  # when the conversation took place, if only that is known

    def pieces(self) -> list[str]:
        """Each turn rendered; a dated turn starts with its day where the day changes."""
        pieces, last = [], None
        for turn in self.turns:
            text = turn.render()
            if turn.at is not None and day(turn.at) != last:
                last = day(turn.at)
                text = f"[{last}] {text}"
            pieces.append(text)
        return pieces

    def render(self) -> str:
        return "\n\n".join(self.pieces())

    def chunks(self, max_chars: int) -> list[str]:
        """Split the rendered transcript into pieces of at most ``max_chars``,
        on turn boundaries where possible."""
        return [text for text, _ in self.dated_chunks(max_chars)]

    def dated_chunks(self, max_chars: int) -> list[tuple[str, datetime.datetime | None]]:
        """``chunks``, each with when its last dated turn was said (a chunk without one: the
        chunk before's, else the transcript's ``at``, else None)."""
        found, last = [], self.at
        for text, indexes in chunk_spans(self.pieces(), max_chars):
            times = [at for i in indexes if (at := self.turns[i].at) is not None]
            last = max(times) if times else last
            found.append((text, last))
        return found


# -- detection and parsing ----------------------------------------------------


def parse(data: str | bytes, source: str | None = None) -> Transcript:
    """Detect the format of ``data`` and parse it; raise TranscriptError if it is none."""
    text = _decode(data, source)
    stripped = text.strip()
    if not stripped:
        raise TranscriptError(f"{describe_source(source)} is empty")
    if stripped[0] in "[{":
        parsed = _parse_json_like(stripped, source)
        if parsed is not None:
            return parsed
    paragraphs = (part.strip() for part in _PARAGRAPH.split(stripped))
    return Transcript([Turn("", part) for part in paragraphs if part], "text", source)


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
                f"{describe_source(source)} is not UTF-8 text: expected plain text, "
                "a JSON list of {role, content} messages, or JSON Lines"
            ) from None
    if "\x00" in data:
        raise TranscriptError(
            f"{describe_source(source)} looks like a binary file, not a transcript"
        )
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
                f"{describe_source(source)} is not valid JSON (line {ex.lineno}, column {ex.colno}: {ex.msg})"
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
    turns = [message_turn(item, f"message {i}", source) for i, item in enumerate(doc, 1)]
    return make_transcript(turns, fmt, source)


def _parse_jsonl(text: str, source: str | None) -> Transcript:
    turns = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as ex:
            raise TranscriptError(
                f"{describe_source(source)} line {lineno} is not valid JSON ({ex.msg}); "
                "JSON Lines needs one {role, content} object per line"
            ) from None
        turns.append(message_turn(item, f"line {lineno}", source))
    return make_transcript(turns, "jsonl", source)


def message_turn(item, where: str, source: str | None = None) -> Turn:
    "One ``{role, content}`` (or ``{role, parts}``) message as a Turn."
    if not isinstance(item, dict):
        raise TranscriptError(f"{describe_source(source)} {where}: {_shape_error(None)}")
    role = item.get("role")
    content = item.get("content", item.get("parts"))
    if not isinstance(role, str) or ("content" not in item and "parts" not in item):
        raise TranscriptError(
            f"{describe_source(source)} {where}: expected an object with 'role' and 'content'"
        )
    return Turn(role.strip().lower(), content_text(content), message_time(item))


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


def make_transcript(turns: list[Turn], fmt: str, source: str | None) -> Transcript:
    turns = [turn for turn in turns if turn.text]
    if not turns:
        raise TranscriptError(f"{describe_source(source)} has no message with any text")
    return Transcript(turns, fmt, source)


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def _looks_like_json(text: str) -> bool:
    return bool(re.match(r'[\[{]\s*(["{\[\]}]|$)', text))


def _shape_error(source: str | None) -> str:
    prefix = f"{describe_source(source)} is JSON but not " if source else "expected "
    return prefix + "a list of {role, content} messages"


def describe_source(source: str | None) -> str:
    return f"Transcript {source!r}" if source else "The transcript"


# -- chunking ------------------------------------------------------------------


def chunk_texts(pieces: list[str], max_chars: int, sep: str = "\n\n") -> list[str]:
    """Pack ``pieces`` in order into chunks of at most ``max_chars``; a piece
    longer than that is split at paragraph, line, sentence or word boundaries."""
    return [text for text, _ in chunk_spans(pieces, max_chars, sep)]


def chunk_spans(
    pieces: list[str], max_chars: int, sep: str = "\n\n"
) -> list[tuple[str, list[int]]]:
    """``chunk_texts``, each chunk with the indexes of the pieces it holds (a part of one)."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    chunks: list[tuple[str, list[int]]] = []
    current, held = "", list[int]()
    for index, piece in enumerate(pieces):
        for part in split_text(piece, max_chars):
            if current and len(current) + len(sep) + len(part) > max_chars:
                chunks.append((current, held))
                current, held = "", []
            current = current + sep + part if current else part
            if not held or held[-1] != index:
                held.append(index)
    if current:
        chunks.append((current, held))
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
