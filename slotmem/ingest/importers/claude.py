"""Claude's export (Settings > Privacy > Export data): ``conversations.json``, a JSON list of
conversations (an object holding them under ``conversations`` is read too). Each has a
``uuid``, a ``name``, ``created_at`` and ``chat_messages``: ``{uuid, sender, text, content,
created_at, attachments, files}`` in order, ``sender`` being ``human`` or ``assistant``.
``content`` is a list of blocks (``{"type": "text", "text": ...}``, ``tool_use``,
``tool_result``, ``thinking``); its text blocks are the message, else ``text`` is. Attachments
and tool blocks are skipped.
"""

from __future__ import annotations

from .common import Conversation, read_conversations, wrong

ROLES = {"human": "user", "user": "user", "assistant": "assistant"}


def read(data: str | bytes, name: str = "conversations.json") -> list[Conversation]:
    """Every conversation of the export, checked; a malformed one raises ImportFileError naming
    it. Conversations without any text are left out."""
    return read_conversations(data, name, "Claude", _conversation, "uuid")


def _conversation(item, index: int, name: str) -> Conversation:
    if not isinstance(item, dict):
        raise wrong(name, index, item, f"expected an object, found {type(item).__name__}")
    ident = item.get("uuid")
    if not isinstance(ident, str) or not ident.strip():
        raise wrong(name, index, item, "it has no uuid")
    chat = item.get("chat_messages")
    if not isinstance(chat, list):
        raise wrong(name, index, item, "it has no 'chat_messages' list")
    messages = []
    for number, message in enumerate(chat, 1):
        problem = _problem(message)
        if problem:
            raise wrong(name, index, item, f"message {number}: {problem}")
        text = _text(message)
        if text:
            messages.append(
                {
                    "role": ROLES[message["sender"]],
                    "content": text,
                    "created_at": message.get("created_at"),
                }
            )
    title = item.get("name")
    return Conversation(ident.strip(), title if isinstance(title, str) else "", messages)


def _problem(message) -> str | None:
    if not isinstance(message, dict):
        return f"expected an object, found {type(message).__name__}"
    if message.get("sender") not in ROLES:
        return f"sender is {message.get('sender')!r}, not human or assistant"
    if not isinstance(message.get("text", ""), str):
        return "text is not a string"
    content = message.get("content", [])
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        return "content is not a list of blocks"
    return None


def _text(message: dict) -> str:
    blocks = [
        block["text"].strip()
        for block in message.get("content") or []
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    text = "\n".join(b for b in blocks if b)
    return text or (message.get("text") or "").strip()
