"""What an agent may do with a memory: the operations the MCP server, the llm toolbox and
LangGraph's store share, and the limits an agent is started with.

``AgentMemory(store, slots=["project"], read_only=True)`` is one agent's view of a Store:

- **scope**: ``slots`` (None: every slot) is all it can read or write; a call naming another
  slot raises NotPermitted, and a call naming none (recall, list, context) covers the scope only;
- **read-only**: ``read_only=True`` refuses remember, forget, rate and flush (NotPermitted);
- **protection**: a fact a person protected (``slotmem remember`` without ``--source``, ``--protect``,
  ``Store.protect``) cannot be overwritten or forgotten unless ``allow_protected=True``
  (ProtectedFact, checked inside the write transaction);
- writes pass the same injection and secret scan as the flusher, and record ``source``;
- ``flush`` runs the flusher over the conversation so far, into the slots in scope, under the
  source ``<source>:<conversation id>`` (the flusher's cursor then reads only what is new).
- **contexts are marked as data**: inside a ``<memory>`` element (``delimit=False``: plain).

Every method returns plain JSON-ready data (times as ISO-8601 strings, UTC, milliseconds).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .. import validation
from ..errors import InvalidInput, NotPermitted
from ..records import Fact, iso_time
from ..safety import injection_reason, secret_reason
from .context import DEFAULT_BUDGET_TOKENS, DEFAULT_SLOTS, build_context

WRITES = ("remember", "forget", "rate", "flush")
LIST_ORDERS = ("updated", "accessed", "used", "created", "key", "pinned")


class NoSuchFact(InvalidInput):
    """There is no fact under that slot and key (the MCP server answers: resource not found)."""


# How recall shows a hit's relevance to a model: the calibrated probability is small wherever
# relevant facts are rare among the candidates, which a model reads as noise, so each hit also
# says in a word how good a match it is, and its rank among the hits returned.
MATCHES = ((0.5, "strong"), (0.1, "good"))  # below the last: "weak" (still above the floor)


def match(relevance: float) -> str:
    """``strong`` (at least an even chance that the fact is what was asked for), ``good`` (at
    least 1 in 10) or ``weak`` (above the floor, below that)."""
    return next((name for lowest, name in MATCHES if relevance >= lowest), "weak")


def shown(hit, rank: int) -> dict:
    """A hit's relevance as recall returns it: ``relevance`` (0 to 1), ``match``, ``rank``."""
    return {"relevance": round(hit.relevance, 4), "match": match(hit.relevance), "rank": rank}


def fact_view(fact: Fact) -> dict:
    """A fact as an agent sees it."""
    return {
        "slot": fact.slot,
        "key": fact.key,
        "value": fact.value,
        "confidence": fact.confidence,
        "quality": fact.quality,
        "source": fact.source,
        "created_at": iso_time(fact.created_at),
        "updated_at": iso_time(fact.updated_at),
        "pinned": fact.pinned,
        "protected": fact.protected,
    }


class AgentMemory:
    """One agent's view of a Store: its scope, whether it may write, and under what source."""

    def __init__(
        self,
        store,
        *,
        slots: Iterable[str] | str | None = None,
        read_only: bool = False,
        allow_protected: bool = False,
        source: str = "agent",
        delimit: bool = True,
    ):
        self.store = store
        self.delimit = bool(delimit)  # contexts inside <memory>: see slotmem.agents.framing
        self.slots = scope(slots)
        self.read_only = bool(read_only)
        self.allow_protected = bool(allow_protected)
        self.source = validation.source(source)

    # -- the limits --------------------------------------------------------------------------
    def slot(self, name) -> str:
        """``name`` checked, and in scope (NotPermitted otherwise)."""
        name = validation.slot(name)
        if self.slots is not None and name not in self.slots:
            raise NotPermitted(
                f"slot {name!r} is outside this agent's scope ({', '.join(self.slots)})"
            )
        return name

    def slots_or_scope(self, slot: str | None) -> Sequence[str] | None:
        """One slot when given, else the scope (None: every slot)."""
        return [self.slot(slot)] if slot else self.slots

    def _writing(self, what: str) -> None:
        if self.read_only:
            raise NotPermitted(f"this agent's memory is read-only: it cannot {what}")

    # -- reads -------------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        slot: str | None = None,
        limit: int = 10,
        min_relevance: float | None = None,
    ) -> list[dict]:
        """The facts relevant to ``query``, best first: hits below the floor stay out (the
        call's ``min_relevance``, else each slot's, else the default), so a query about nothing
        remembered gets an empty list, not the nearest facts."""
        store = self.store
        slots = self.slots_or_scope(slot)
        limit = validation.positive_int(limit, "limit")
        default = store.min_relevance()
        if min_relevance is not None:
            floors: dict[str, float] = {}
            default = lowest = validation.relevance(min_relevance) or 0.0
        else:
            names = slots if slots is not None else [p.slot for p in store.policies()]
            floors = {name: store.min_relevance(name) for name in names}
            lowest = min([default, *floors.values()])
        with store.tracking() as track:
            hits = store.query_facts(
                query,
                slots=slots,
                limit=limit if not floors else 3 * limit,
                min_relevance=lowest,
                track_access=False,
            )
            hits = [h for h in hits if h.relevance >= floors.get(h.fact.slot, default)][:limit]
            present = track([h.fact.id for h in hits])
        return [
            {**fact_view(h.fact), **shown(h, rank)}
            for rank, h in enumerate((h for h in hits if h.fact.id in present), 1)
        ]

    def get(self, slot: str, key: str) -> dict:
        fact = self.store.get(self.slot(slot), key)
        if fact is None:
            raise NoSuchFact(f"no fact {slot}/{key} (recall finds facts by what they say)")
        return fact_view(fact)

    def list_facts(
        self, slot: str | None = None, limit: int = 20, order: str = "updated"
    ) -> list[dict]:
        """Facts of one slot, or of every slot in scope, most recently updated first."""
        if order not in LIST_ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(LIST_ORDERS)}, not {order!r}")
        limit = validation.positive_int(limit, "limit")
        facts = self.store.list_facts(self.slots_or_scope(slot), limit=limit, order=order)
        return [fact_view(fact) for fact in facts]

    def history(self, slot: str, key: str, limit: int = 10) -> list[dict]:
        """Old values of slot/key, newest first: overwrites, deletes and prunes."""
        entries = self.store.history(self.slot(slot), key, limit=validation.count(limit, "limit"))
        return [
            {
                "value": entry.value,
                "confidence": entry.confidence,
                "source": entry.source,
                "reason": entry.reason,
                "changed_at": iso_time(entry.changed_at),
                "changed_by": entry.changed_by,
            }
            for entry in entries
        ]

    def context(self, message: str, budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> str:
        """The markdown memory sections a prompt gets for ``message`` ('' when nothing is
        relevant and nothing is pinned), from the slots in scope; inside a ``<memory>`` element
        that marks them as data unless the agent was started with ``delimit=False``."""
        slots = self.slots if self.slots is not None else DEFAULT_SLOTS
        return build_context(
            self.store, message, slots, budget_tokens=budget_tokens, delimit=self.delimit
        )

    # -- writes ------------------------------------------------------------------------------
    def remember(self, slot: str, key: str, value: str, confidence: float = 0.8) -> dict:
        """Upsert after the same injection and secret scan the flusher applies."""
        self._writing("remember")
        slot = self.slot(slot)
        reason = injection_reason(key, value) or secret_reason(key, value)
        if reason:
            raise InvalidInput(f"refused to store {slot}/{key}: {reason}")
        result = self.store.upsert(
            slot,
            key,
            value,
            confidence=confidence,
            source=self.source,
            allow_protected=self.allow_protected,
        )
        done = {"action": result.action, **fact_view(result.fact)}
        if result.action == "updated" and result.previous is not None:
            done["previous_value"] = result.previous.value
        return done

    def forget(self, slot: str, key: str) -> dict:
        self._writing("forget")
        slot = self.slot(slot)
        deleted = self.store.delete(
            slot, key, source=self.source, allow_protected=self.allow_protected
        )
        return {"action": "forgot" if deleted else "not found", "slot": slot, "key": key}

    def rate(self, slot: str, key: str, rating: int, comment: str | None = None) -> dict:
        """Feedback on a fact (-3 wrong or harmful .. 3 exactly right); it moves the fact's
        quality, which weighs in its ranking."""
        self._writing("rate")
        fact = self.store.rate(
            self.slot(slot), key, rating, comment, allow_protected=self.allow_protected
        )
        return fact_view(fact)

    def flush(self, conversation, model=None, conversation_id: str | None = None) -> dict:
        """Extract durable facts from ``conversation`` (its text, or a list of ``{role,
        content}`` messages) with ``model`` (an llm model, id or alias; None: llm's default)
        into the slots in scope (every slot: user, project, agent). A fact a person protected
        is left as it is unless ``allow_protected``; the report lists it as rejected."""
        self._writing("flush")
        from ..ingest.flusher import flush

        name = validation.text(
            conversation_id or "conversation", "conversation_id", 200, single_line=True
        )
        report = flush(  # a protected fact is left as it is inside the write transaction
            self.store,
            conversation,
            model,
            slots=self.slots if self.slots is not None else DEFAULT_SLOTS,
            source=f"{self.source}:{name}",
            allow_protected=self.allow_protected,
        )
        return {
            "source": report.source,
            "model": report.model,
            "counts": report.counts(),
            "facts": [
                {
                    "action": i.action,
                    "slot": i.slot,
                    "key": i.key,
                    "value": i.value,
                    "reason": i.reason,
                }
                for i in report.items
            ],
        }


def scope(slots: Iterable[str] | str | None) -> tuple[str, ...] | None:
    """A scope: None (every slot), or the slots named (a string may list them with commas)."""
    if slots is None:
        return None
    if isinstance(slots, str):
        slots = [name.strip() for name in slots.split(",")]
    names = tuple(dict.fromkeys(validation.slot(name) for name in slots))
    if not names:
        raise InvalidInput("a scope needs at least one slot")
    return names
