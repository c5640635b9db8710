"""Conversations already in memory, in the shapes agent code holds them, as transcripts:

- dicts ``{"role": ..., "content": ...}`` (content a string or a list of parts such as
  ``{"type": "text", "text": ...}``; ``"parts"`` instead of ``"content"``, as llm's
  ``Message.to_dict()`` gives), or ``{"messages": [...]}``;
- ``(role, content)`` pairs, as LangChain accepts them;
- llm's objects: a ``Response`` (its prompt, then its text), a ``Conversation`` (its responses),
  a ``Message`` (role and parts);
- LangChain message objects (``HumanMessage``, ``AIMessage``, ...: a ``type`` and a ``content``),
  recognised by those attributes without importing LangChain;
- ``Turn`` objects, and plain strings (a turn with no role).

``to_transcript`` takes any of these, a ``Transcript``, text or bytes (``transcripts.parse``), a
path, or an open file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .dates import message_time, timestamp
from .transcripts import (
    Transcript,
    TranscriptError,
    Turn,
    content_text,
    describe_source,
    make_transcript,
    message_turn,
    parse,
    read_path,
)

LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def to_transcript(data, source: str | None = None) -> Transcript:
    """A Transcript from whatever ``data`` is (see the module's docstring); ``source`` names
    it (default: the file's name for a path or a file, else the transcript's own)."""
    if isinstance(data, Transcript):
        return data
    if isinstance(data, (str, bytes)):
        return parse(data, source=source)
    if isinstance(data, os.PathLike):
        transcript = read_path(data)
        transcript.source = source or transcript.source
        return transcript
    if callable(getattr(data, "read", None)):  # an open file
        name = getattr(data, "name", None)
        if isinstance(name, str):  # sys.stdin is "<stdin>", as the command line names it
            name = (
                "stdin" if name == "<stdin>" else None if name.startswith("<") else Path(name).name
            )
        return parse(data.read(), source=source or name)
    if isinstance(data, dict):
        data = data["messages"] if isinstance(data.get("messages"), list) else [data]
    responses = getattr(data, "responses", None)
    if isinstance(responses, list) and not isinstance(data, (list, tuple)):  # llm Conversation
        data = responses
    if isinstance(data, Iterable):
        return from_messages(data, source)
    raise TranscriptError(
        f"Cannot read a transcript from a {type(data).__name__}: give text, a file, or a list "
        "of messages ({role, content} dicts, llm responses or LangChain messages)"
    )


def from_messages(messages: Iterable, source: str | None = None) -> Transcript:
    "A Transcript of ``messages``, each in any shape the module's docstring lists."
    turns: list[Turn] = []
    for index, message in enumerate(messages, 1):
        turns.extend(message_turns(message, f"message {index}", source))
    return make_transcript(turns, "messages", source)


def message_turns(message, where: str = "the message", source: str | None = None) -> list[Turn]:
    """The turns of one message (two for an llm Response: the prompt and the reply)."""
    if isinstance(message, Turn):
        return [message]
    if isinstance(message, str):
        return [Turn("", message.strip())]
    if isinstance(message, dict):
        return [message_turn(message, where, source)]
    if isinstance(message, (tuple, list)) and len(message) == 2 and isinstance(message[0], str):
        role, content = message
        return [Turn(_role(LANGCHAIN_ROLES.get(role) or role), content_text(content))]
    if callable(getattr(message, "text", None)) and hasattr(message, "prompt"):
        return _response_turns(message)
    role, parts = getattr(message, "role", None), getattr(message, "parts", None)
    if isinstance(role, str) and isinstance(parts, list):  # llm Message
        texts = [p.text for p in parts if isinstance(getattr(p, "text", None), str)]
        return [Turn(_role(role), content_text(texts))]
    kind = getattr(message, "type", None)
    if isinstance(kind, str) and hasattr(message, "content"):  # LangChain
        role = getattr(message, "role", None) if kind == "chat" else None
        role = role if isinstance(role, str) else LANGCHAIN_ROLES.get(kind, kind)
        at = _langchain_time(message)
        return [Turn(_role(role), content_text(message.content), at)]
    raise TranscriptError(
        f"{describe_source(source)} {where}: a {type(message).__name__} is not a message "
        "(expected a {role, content} dict, an llm response or a LangChain message)"
    )


def _role(role: str) -> str:
    return role.strip().lower()


def _response_turns(response) -> list[Turn]:
    "An llm Response: what it was asked, then what it answered, at its time."
    at = None
    when = getattr(response, "datetime_utc", None)
    if callable(when):
        try:
            at = timestamp(when())
        except Exception:  # noqa: BLE001 - a response without a time is still a message
            at = None
    prompt = getattr(response.prompt, "prompt", None)
    turns = [Turn("user", prompt.strip(), at)] if isinstance(prompt, str) else []
    return [*turns, Turn("assistant", (response.text() or "").strip(), at)]


def _langchain_time(message):
    metadata = getattr(message, "additional_kwargs", None)
    return message_time(metadata) if isinstance(metadata, dict) else None
