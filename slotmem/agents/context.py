"""Context contributors: what an agent's prompt gets from each slot, as markdown bullets."""

from __future__ import annotations

from collections.abc import Iterable

SLOT_TITLES = {
    "user": "What I know about the user",
    "project": "What I know about the project",
    "agent": "Lessons I have learned",
}


def contribute(
    store,
    message: str,
    slot: str,
    *,
    limit: int = 10,
    budget_chars: int = 1500,
    track_access: bool = True,
) -> str:
    """The markdown section for one slot: a heading and one bullet per relevant fact, or ''."""
    hits = store.query_facts(message, slots=[slot], limit=limit, track_access=track_access)
    lines: list[str] = []
    used = 0
    for hit in hits:
        bullet = f"- **{hit.fact.key}**: {' '.join(hit.fact.value.split())}"
        if used + len(bullet) > budget_chars and lines:
            break
        lines.append(bullet)
        used += len(bullet) + 1
    if not lines:
        return ""
    return f"## {SLOT_TITLES.get(slot, slot.capitalize())}\n" + "\n".join(lines)


def build_context(
    store,
    message: str,
    slots: Iterable[str] = ("user", "project", "agent"),
    *,
    limit: int = 10,
    budget_chars: int = 1500,
    track_access: bool = True,
) -> str:
    """Every slot's section, in order, separated by blank lines."""
    sections = (
        contribute(
            store, message, slot, limit=limit, budget_chars=budget_chars, track_access=track_access
        )
        for slot in slots
    )
    return "\n\n".join(section for section in sections if section)
