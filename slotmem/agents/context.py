"""What an agent's prompt gets from memory for one message: markdown sections, one per slot.

``build(store, message, slots)`` returns a ``Context`` (its ``text``, the facts in each section
with their relevance, and what was left out and why); ``build_context`` returns the text alone.

- **Pinned facts first.** Every pinned fact of the asked slots is in, whatever the message,
  within its own hard budget (``pinned_tokens``, half the whole budget unless given).
- **Then relevant facts only.** Each slot is searched for the message (``CANDIDATES`` hits), and
  hits below the slot's floor (``min_relevance`` per call, else the slot's policy, else
  ``slotmem.search.relevance.DEFAULT_FLOOR``) stay out: an off-topic message gets an empty
  context, not the nearest facts.
- **One budget** (``budget_tokens``) for the whole context, headings included. What the pinned
  facts leave is shared: each slot that has relevant facts first gets up to ``min_share`` of it
  for its most relevant ones (slots in the order given: that order is their priority), then the
  rest goes to the most relevant facts of all slots. A fact that does not fit is left out.
- **Stable.** The same memory and message give the same bytes (prompt caches depend on it):
  sections in the slots' order; in each, pinned facts in the order they were pinned, then the
  others by relevance (ties by key). Access tracking does not change what is chosen.
- **Dates where they matter.** ``dates=None`` (the default) shows the day a fact was last updated
  (UTC) when its value is about time (``recently``, ``next week``, ``on Friday``, a month, a
  date); ``True`` for every fact, ``False`` for none: ``- **deadline** (2026-03-02): ...``.
- **Access counts what reached the prompt**: only the facts in the text count as accessed.

Tokens are estimated, not counted: one per 4 ASCII characters and one per other character
(CJK, emoji, accents), which is at or above what common BPE tokenizers give.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field

from ..errors import InvalidInput

SLOT_TITLES = {
    "user": "What I know about the user",
    "project": "What I know about the project",
    "agent": "Lessons I have learned",
}
DEFAULT_SLOTS = ("user", "project", "agent")
# A key that is an id, not a name (a UUID as LangGraph and LangMem write them, a long hex digest,
# the LangGraph store's encoded keys): the bullet shows the value alone.
OPAQUE_KEY = re.compile(
    r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}|[0-9a-f]{24,}|~.*",
    re.IGNORECASE,
)
# chosen on LoCoMo's development folds (docs/benchmarks.md, "The default budget and candidates"):
# the smallest budget and candidates per slot at which the answering fact reaches the context
# for 0.93 (lexical) / 0.96 (hybrid) of the questions; relevance is fitted on the best 30
DEFAULT_BUDGET_TOKENS = 3250
CANDIDATES = 100  # hits asked of each slot
MIN_SHARE = 0.2  # of what the pinned facts leave, kept for each slot that has relevant facts
EXPLAIN_BELOW = 5  # hits below the floor that an explained context lists, per slot

_MONTHS = "january february march april june july august september october november december"
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
ABOUT_TIME = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|recently|recent|lately|soon|ago|currently|nowadays|"
    r"upcoming|deadline|"
    + "|".join(_MONTHS.split())
    + r"|may\s+\d+"
    # a day whose date matters ("on Friday"), not one that recurs ("on Fridays", "to Friday")
    + rf"|(?:on|this|next|last|coming|by|until|since|before|after)\s+(?:{_WEEKDAYS})"
    r"|(?:next|last|this|coming|past)\s+(?:week|weekend|month|year|summer|winter|spring|autumn|"
    r"fall|night|morning|evening|season|quarter)"
    r"|(?:in|since|until|by|before|after)\s+(?:19|20)\d\d"
    r"|\d{4}-\d\d-\d\d|\d{1,2}/\d{1,2}/\d{2,4})\b",
    re.IGNORECASE,
)


def estimate_tokens(text: str) -> int:
    """One token per 4 ASCII characters (rounded up), one per other character."""
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    return math.ceil(ascii_chars / 4) + len(text) - ascii_chars


def about_time(value: str) -> bool:
    """Does the value speak of time in a way its date changes (English words, dates)?"""
    return ABOUT_TIME.search(value) is not None


@dataclass(frozen=True)
class Item:
    """A fact considered for the context: in a section, or left out (``reason``)."""

    id: str
    slot: str
    key: str
    value: str
    relevance: float | None  # None for a pinned fact (it is in whatever the message)
    pinned: bool
    updated_at: int
    line: str
    tokens: int
    reason: str | None = None  # why it was left out: below the floor, over budget

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Section:
    slot: str
    title: str
    items: tuple[Item, ...]

    def text(self) -> str:
        return "\n".join([f"## {self.title}", *(item.line for item in self.items)])


@dataclass(frozen=True)
class Context:
    message: str
    sections: tuple[Section, ...]
    cut: tuple[Item, ...] = ()
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    text: str = field(init=False)
    tokens: int = field(init=False)

    def __post_init__(self):
        text = "\n\n".join(section.text() for section in self.sections)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "tokens", estimate_tokens(text))

    def facts(self) -> list[Item]:
        return [item for section in self.sections for item in section.items]

    def to_dict(self) -> dict:
        return {
            "message": self.message,
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "text": self.text,
            "sections": [
                {"slot": s.slot, "title": s.title, "facts": [i.to_dict() for i in s.items]}
                for s in self.sections
            ],
            "cut": [item.to_dict() for item in self.cut],
        }


def build_context(
    store,
    message: str,
    slots: Iterable[str] | str | None = None,
    *,
    delimit: bool = False,
    **options,
) -> str:
    """The markdown an agent's prompt gets for ``message`` ('' when nothing is relevant and
    nothing is pinned): see ``build`` for the options. ``delimit``: inside a ``<memory>``
    element that says it holds data, not instructions (slotmem.agents.framing)."""
    text = build(store, message, slots, **options).text
    if not delimit:
        return text
    from .framing import delimited

    return delimited(text)


def build(
    store,
    message: str,
    slots: Iterable[str] | str | None = None,
    *,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    pinned_tokens: int | None = None,
    min_relevance: float | None = None,
    min_share: float | Mapping[str, float] = MIN_SHARE,
    candidates: int = CANDIDATES,
    dates: bool | None = None,
    semantic: bool = True,
    track_access: bool = True,
    explain: bool = False,
    episodes: bool | str | Iterable[str] = False,
    episode_tokens: int | None = None,
    record: bool = False,
    session: str | None = None,
    run: str | None = None,
) -> Context:
    """The context for ``message`` from ``slots`` (in priority order; ``PREFIX.*`` takes every
    slot under PREFIX; None: every slot the file holds, see ``context_slots``). ``min_relevance``
    overrides every slot's floor; ``min_share`` is a share of the budget, or one per slot;
    ``explain`` also lists the best hits below each floor in ``Context.cut``. ``episodes``,
    ``episode_tokens``, ``record``, ``session``, ``run``: see slotmem.agents.episodes."""
    finish = None  # episodes, under their own budget, and the retrieval log: when asked for
    if (
        (episodes is not False and episodes is not None)
        or record is not False
        or (session, run, episode_tokens) != (None, None, None)
    ):
        from .episodes import plan as plan_episodes

        finish = plan_episodes(
            episodes, episode_tokens, record, session, run, semantic, track_access, explain
        )
    slots = context_slots(store, slots)
    budget = _tokens(budget_tokens, "budget_tokens")
    pinned_budget = (
        budget // 2 if pinned_tokens is None else _tokens(pinned_tokens, "pinned_tokens")
    )
    shares = _shares(min_share, slots)
    with store.tracking(enabled=track_access) as track:
        pinned = [
            _item(fact, None, dates)
            for slot in slots
            for fact in store.list_facts(slot, limit=None, order="pinned", pinned=True)
        ]
        plan = _Plan()
        cut = plan.take(pinned, min(pinned_budget, budget), "over the pinned budget")
        seen = {item.id for item in pinned}
        found: dict[str, list[Item]] = {}
        for slot in slots:
            floor = store.min_relevance(slot) if min_relevance is None else min_relevance
            hits = store.query_facts(
                message,
                slots=[slot],
                limit=candidates,
                min_relevance=floor,
                track_access=False,
                semantic=semantic,
            )
            found[slot] = sorted(
                (_item(hit.fact, hit.relevance, dates) for hit in hits if hit.fact.id not in seen),
                key=lambda item: (-(item.relevance or 0.0), item.key),
            )
            if explain:
                cut += _below(store, message, slot, floor, candidates, semantic, dates)
        left = budget - plan.used
        for slot in slots:  # each slot's share first, in priority order
            plan.take(found[slot], plan.used + int(shares[slot] * left), None, stop=True)
        rest = sorted(
            (item for slot in slots for item in found[slot] if item not in plan.chosen),
            key=lambda item: (-(item.relevance or 0.0), slots.index(item.slot), item.key),
        )
        cut += plan.take(rest, budget, "over budget")
        present = track([item.id for item in plan.chosen])
    chosen = [item for item in plan.chosen if item.id in present]
    sections = []
    for slot in slots:  # pinned facts in the order pinned, then the others by relevance
        items = [item for item in pinned if item in chosen and item.slot == slot]
        items += sorted(
            (item for item in chosen if item.slot == slot and not item.pinned),
            key=lambda item: (-(item.relevance or 0.0), item.key),
        )
        if items:
            sections.append(Section(slot, title(slot), tuple(items)))
    built = Context(message, tuple(sections), tuple(cut), budget)
    return built if finish is None else finish(store, built)


def context_slots(store, slots: Iterable[str] | str | None) -> list[str]:
    """The slots a context reads, in priority order: those named, each ``PREFIX.*`` as the
    slots it takes; for None, every slot the file holds, ``DEFAULT_SLOTS`` first, without the
    episodes' slot (``episodes=True`` gives them their own section)."""
    if slots is not None:
        return store.slot_names(slots)
    from ..store.episodes import EPISODES_SLOT

    held = [slot for slot in store.slot_names("*") if slot != EPISODES_SLOT]
    first = {name: rank for rank, name in enumerate(DEFAULT_SLOTS)}
    return sorted(held, key=lambda slot: (first.get(slot.partition(".")[0], len(first)), slot))


def title(slot: str) -> str:
    """A section's heading: ``user`` is "What I know about the user", ``user.maja`` "What I
    know about the user (maja)", ``memories.maja`` "Memories (maja)"."""
    head, _, rest = slot.partition(".")
    named = SLOT_TITLES.get(head, head.replace("_", " ").replace("-", " ").capitalize())
    return f"{named} ({rest.replace('.', ' / ')})" if rest else named


class _Plan:
    """The facts chosen so far and the tokens they take, headings included."""

    def __init__(self):
        self.chosen: list[Item] = []
        self.used = 0
        self._headed: set[str] = set()

    def cost(self, item: Item) -> int:
        heading = 0 if item.slot in self._headed else estimate_tokens(f"## {title(item.slot)}") + 2
        return item.tokens + heading

    def take(self, items: list[Item], limit: int, reason: str | None, stop: bool = False) -> list:
        """Add the items that fit under ``limit`` tokens in all; the others come back with
        ``reason`` (``stop``: the first that does not fit ends the round, and none is cut)."""
        cut = []
        for item in items:
            if item in self.chosen:
                continue
            cost = self.cost(item)
            if self.used + cost <= limit:
                self.chosen.append(item)
                self._headed.add(item.slot)
                self.used += cost
            elif stop:
                break
            elif reason:
                cut.append(dataclasses.replace(item, reason=reason))
        return cut


def _item(fact, relevance: float | None, dates: bool | None) -> Item:
    """The fact as its bullet: ``- **key** (its day, when dated): value``."""
    value = " ".join(fact.value.split())
    dated = dates if dates is not None else about_time(value)
    when = f" ({_day(fact.updated_at)})" if dated else ""
    if OPAQUE_KEY.fullmatch(fact.key):  # an id says nothing to the model reading the prompt
        line = f"- {value}" if not when else f"- ({when.strip()[1:-1]}) {value}"
    else:
        line = f"- **{fact.key}**{when}: {value}"
    return Item(
        fact.id,
        fact.slot,
        fact.key,
        fact.value,
        relevance,
        fact.pinned,
        fact.updated_at,
        line,
        estimate_tokens(line) + 1,  # and its newline
    )


def _below(store, message, slot, floor, candidates, semantic, dates) -> list[Item]:
    hits = store.query_facts(
        message, slots=[slot], limit=candidates, track_access=False, semantic=semantic
    )
    below = [hit for hit in hits if hit.relevance < floor][:EXPLAIN_BELOW]
    reason = f"below the floor {floor:g}"
    return [dataclasses.replace(_item(h.fact, h.relevance, dates), reason=reason) for h in below]


def _day(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d")


def _tokens(number, what: str) -> int:
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise InvalidInput(f"{what} must be a number of tokens >= 0, not {number!r}")
    return number


def _shares(min_share, slots: list[str]) -> dict[str, float]:
    if isinstance(min_share, Mapping):
        shares = {slot: min_share.get(slot, 0.0) for slot in slots}
    else:
        shares = dict.fromkeys(slots, min_share)
    for slot, share in shares.items():
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise InvalidInput(f"min_share for {slot} must be from 0 to 1, not {share!r}")
    return {slot: float(share) for slot, share in shares.items()}
