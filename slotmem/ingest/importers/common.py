"""What the importers share: the error they raise, a conversation as they hand it to the
flusher, and reading a JSON file so that its errors name the line."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InvalidInput


class ImportFileError(InvalidInput):
    """The file to import is malformed; the message names the line or the conversation, and
    nothing was written."""


@dataclass
class Conversation:
    """One conversation of an export: ``messages`` are ``{role, content, create_time}`` dicts
    (roles ``user`` and ``assistant``), the shape the flusher reads."""

    id: str
    title: str
    messages: list[dict] = field(default_factory=list)

    def label(self) -> str:
        return f"{self.title!r} ({self.id})" if self.title else self.id


def read_bytes(path: str | os.PathLike) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise ImportFileError(f"cannot read {path}: {e.strerror or e}") from None


def read_export(path: str | os.PathLike, member: str = "conversations.json") -> tuple[bytes, str]:
    """The bytes of an export and the name to give it in errors: the file itself, or, when it
    is the zip archive the service sent, its ``member`` (wherever it is in the archive)."""
    import zipfile

    path = Path(path)
    if not zipfile.is_zipfile(path):
        return read_bytes(path), path.name
    try:
        with zipfile.ZipFile(path) as archive:
            found = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == member]
            if len(found) != 1:
                raise ImportFileError(
                    f"{path.name} holds {len(found) or 'no'} {member}"
                    f"{' files' if found else ''}: expected one; nothing was imported"
                )
            return archive.read(found[0]), f"{path.name}:{found[0]}"
    except (zipfile.BadZipFile, OSError) as e:
        raise ImportFileError(f"cannot read the archive {path.name}: {e}") from None


def text_of(data: str | bytes, name: str) -> str:
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise ImportFileError(
                f"{name} is not UTF-8 text ({e.reason} at byte {e.start}); nothing was imported"
            ) from None
    return data.lstrip("\ufeff")


def load_json(data: str | bytes, name: str):
    """The document in ``data``; a syntax error names its line and column."""
    text = text_of(data, name)
    if not text.strip():
        raise ImportFileError(f"{name} is empty; nothing was imported")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ImportFileError(
            f"{name} line {e.lineno}, column {e.colno}: not valid JSON ({e.msg}); "
            "nothing was imported"
        ) from None


def conversation_list(doc, name: str, kind: str) -> list:
    """The conversations of an export: a JSON list of them, or an object holding one under
    ``conversations``."""
    if isinstance(doc, dict) and isinstance(doc.get("conversations"), list):
        doc = doc["conversations"]
    if not isinstance(doc, list):
        raise ImportFileError(
            f"{name} is not a {kind} export: expected a JSON list of conversations, "
            f"found a JSON {type(doc).__name__}; nothing was imported"
        )
    return doc


def read_conversations(
    data: str | bytes, name: str, kind: str, parse, id_name: str
) -> list[Conversation]:
    """Every conversation of a ``kind`` export, each read by ``parse(item, index, name)``; a
    malformed one, or one whose ``id_name`` another has, raises ImportFileError naming it.
    Conversations without any text are left out."""
    found: list[Conversation] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(conversation_list(load_json(data, name), name, kind), 1):
        conversation = parse(item, index, name)
        if conversation.id in seen:
            problem = f"its {id_name} is also conversation {seen[conversation.id]}'s"
            raise wrong(name, index, item, problem)
        seen[conversation.id] = index
        if conversation.messages:
            found.append(conversation)
    return found


def wrong(name: str, index: int, item, problem: str) -> ImportFileError:
    """The error for conversation ``index`` (1-based) of ``name``, named by its title and id
    when it has them."""
    label = f"conversation {index}"
    if isinstance(item, dict):
        title = item.get("title") or item.get("name")
        ident = item.get("id") or item.get("conversation_id") or item.get("uuid")
        details = ", ".join(
            part for part in (repr(title) if title else "", str(ident) if ident else "") if part
        )
        label += f" ({details})" if details else ""
    return ImportFileError(f"{name} {label}: {problem}; nothing was imported")
