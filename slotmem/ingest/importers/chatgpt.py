"""ChatGPT's export (Settings > Data controls > Export data): ``conversations.json``, a JSON list
of conversations. Each has an ``id`` (also ``conversation_id``), a ``title``, ``create_time``
(epoch seconds), ``current_node`` and a ``mapping`` of node id -> ``{id, message, parent,
children}``: a tree, since an edited prompt or a regenerated answer starts a branch. The
conversation a person saw is the path from the root to ``current_node``.

A message is ``{author: {role}, create_time, content: {content_type, parts}, metadata}``. Kept:
the user's and the assistant's text (``text`` and ``multimodal_text`` content; images and other
non-text parts are skipped); left out: system and tool messages, hidden ones
(``metadata.is_visually_hidden_from_conversation``), code, reasoning and browsing displays.
"""

from __future__ import annotations

from .common import Conversation, read_conversations, wrong

ROLES = {"user", "assistant"}
TEXT_TYPES = {"text", "multimodal_text"}


def read(data: str | bytes, name: str = "conversations.json") -> list[Conversation]:
    """Every conversation of the export, checked; a malformed one raises ImportFileError naming
    it. Conversations without any text are left out."""
    return read_conversations(data, name, "ChatGPT", _conversation, "id")


def _conversation(item, index: int, name: str) -> Conversation:
    if not isinstance(item, dict):
        raise wrong(name, index, item, f"expected an object, found {type(item).__name__}")
    ident = item.get("conversation_id") or item.get("id")
    if not isinstance(ident, str) or not ident.strip():
        raise wrong(name, index, item, "it has no id (conversation_id or id)")
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise wrong(name, index, item, "it has no 'mapping' of message nodes")
    title = item.get("title")
    messages = []
    for node_id in _thread(
        mapping, item.get("current_node"), lambda p: wrong(name, index, item, p)
    ):
        message = _message(mapping[node_id], node_id, lambda p: wrong(name, index, item, p))
        if message is not None:
            messages.append(message)
    return Conversation(ident.strip(), title if isinstance(title, str) else "", messages)


def _thread(mapping: dict, current, fail) -> list[str]:
    """The node ids from the root to ``current_node`` (none given: to the last leaf, following
    each node's last child)."""
    for node_id, node in mapping.items():
        if not isinstance(node, dict):
            raise fail(f"node {node_id!r} is not an object")
        parent = node.get("parent")
        if parent is not None and parent not in mapping:
            raise fail(f"node {node_id!r} has parent {parent!r}, which is not in its mapping")
        children = node.get("children", [])
        if not isinstance(children, list) or any(c not in mapping for c in children):
            raise fail(f"node {node_id!r} names a child that is not in its mapping")
    if not mapping:
        return []
    if current is None:
        roots = [i for i, node in mapping.items() if node.get("parent") is None]
        if len(roots) != 1:
            raise fail(f"it has no current_node and {len(roots)} root nodes, not one")
        current = roots[0]
        while mapping[current].get("children"):
            current = mapping[current]["children"][-1]
    if current not in mapping:
        raise fail(f"its current_node {current!r} is not in its mapping")
    path, seen = [], set()
    while current is not None:
        if current in seen:
            raise fail(f"node {current!r} is its own ancestor (the parents form a loop)")
        seen.add(current)
        path.append(current)
        current = mapping[current].get("parent")
    return path[::-1]


def _message(node: dict, node_id: str, fail) -> dict | None:
    message = node.get("message")
    if message is None:
        return None
    if not isinstance(message, dict):
        raise fail(f"node {node_id!r}: its message is not an object")
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if not isinstance(role, str):
        raise fail(f"node {node_id!r}: its message has no author.role")
    content = message.get("content")
    if not isinstance(content, dict):
        raise fail(f"node {node_id!r}: its message has no content object")
    parts = content.get("parts", [])
    if content.get("content_type") in TEXT_TYPES and not isinstance(parts, list):
        raise fail(f"node {node_id!r}: content.parts is not a list")
    metadata = message.get("metadata") or {}
    hidden = isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation")
    if role not in ROLES or hidden or content.get("content_type") not in TEXT_TYPES:
        return None
    text = "\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    if not text:
        return None
    return {"role": role, "content": text, "create_time": message.get("create_time")}
