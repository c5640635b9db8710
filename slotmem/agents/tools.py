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
  ``remember_many`` writes up to MAX_BATCH facts all or nothing, each checked as one is;
- reads take a ``since``/``until`` window (ISO-8601, or ``7d``: that long ago) and an
  ``offset`` for paging; ``search``/``fetch`` are a connector's view (ids, titles, uris);
- ``flush`` runs the flusher over the conversation so far, into the slots in scope, under the
  source ``<source>:<conversation id>`` (the flusher's cursor then reads only what is new).
- **contexts are marked as data**: inside a ``<memory>`` element (``delimit=False``: plain).

Every method returns plain JSON-ready data (times as ISO-8601 strings, UTC, milliseconds).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import quote

from .. import validation
from ..errors import InvalidInput, NotPermitted, SlotmemError
from ..records import Fact, iso_time
from ..safety import injection_reason, secret_reason
from .context import DEFAULT_BUDGET_TOKENS, DEFAULT_SLOTS, build_context

WRITES = ("remember", "remember_many", "forget", "rate", "flush", "link")
LIST_ORDERS = ("updated", "accessed", "used", "created", "key", "pinned")
MAX_BATCH = 100  # facts in one remember_many
MAX_OFFSET = 10_000  # how deep recall pages: each page searches for every hit before it
TITLE_CHARS = 80  # of a value, in a search result's title


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
        "expires_at": iso_time(fact.expires_at),
        "tags": list(fact.tags),
    }


def link_view(link, me: Fact) -> dict:
    """A link as an agent sees it from the fact ``me``: its direction (``out``: from ``me``;
    ``in``: to it), type, the fact at the other end, when and by whom it was made."""
    out = link.from_fact.id == me.id
    return {
        "direction": "out" if out else "in",
        "rel": link.rel,
        "fact": fact_view(link.to_fact if out else link.from_fact),
        "created_at": iso_time(link.created_at),
        "source": link.source,
    }


def fact_id(slot: str, key: str) -> str:
    """A fact's id for search/fetch: ``slot/key`` (a slot never holds a ``/``)."""
    return f"{slot}/{key}"


def fact_uri(slot: str, key: str) -> str:
    """The fact's MCP resource: ``slotmem://fact/{slot}/{key}``, the key percent-encoded."""
    return f"slotmem://fact/{slot}/{quote(key, safe='')}"


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
        if self.slots is not None and not validation.selects(self.slots, name):
            raise NotPermitted(
                f"slot {name!r} is outside this agent's scope ({', '.join(self.slots)})"
            )
        return name

    def flush_slots(self) -> list[str]:
        """The slots a flush may write: the flusher's defaults, or those in scope (a prefix's
        as the file holds them)."""
        if self.slots is None:
            return list(DEFAULT_SLOTS)
        slots = self.store.slot_names(self.slots) or []
        if not slots:
            raise InvalidInput(
                f"no slot in this agent's scope ({', '.join(self.slots)}) holds facts yet to "
                "flush into: scope it to a slot by name"
            )
        return slots

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
        *,
        since=None,
        until=None,
        offset: int = 0,
        tags: Sequence[str] | None = None,
    ) -> list[dict]:
        """The facts relevant to ``query``, best first: hits below the floor stay out (the
        call's ``min_relevance``, else each slot's, else the default), so a query about nothing
        remembered gets an empty list, not the nearest facts. ``since``/``until``: only facts
        last updated in that window (validation.window); ``offset``: skip that many of the best
        first (at most MAX_OFFSET), ranks counting on from there; ``tags``: only facts with
        every one of these tags."""
        store = self.store
        slots = self.slots_or_scope(slot)
        limit = validation.positive_int(limit, "limit")
        offset = validation.count(offset, "offset")
        if offset > MAX_OFFSET:
            raise InvalidInput(f"offset must be at most {MAX_OFFSET}, not {offset}")
        default = store.min_relevance()
        if min_relevance is not None:
            floors: dict[str, float] = {}
            default = lowest = validation.relevance(min_relevance) or 0.0
        else:
            names = (
                store.slot_names(slots) if slots is not None else [p.slot for p in store.policies()]
            )
            floors = {name: store.min_relevance(name) for name in names}
            lowest = min([default, *floors.values()])
        wanted = offset + limit
        with store.tracking() as track:
            hits = store.query_facts(
                query,
                slots=slots,
                limit=wanted if not floors else 3 * wanted,
                min_relevance=lowest,
                track_access=False,
                since=since,
                until=until,
                tags=tags,
            )
            hits = [h for h in hits if h.relevance >= floors.get(h.fact.slot, default)]
            hits = hits[offset:wanted]
            present = track([h.fact.id for h in hits])
        return [
            {**fact_view(h.fact), **shown(h, rank)}
            for rank, h in enumerate((h for h in hits if h.fact.id in present), offset + 1)
        ]

    def get(self, slot: str, key: str) -> dict:
        fact = self.store.get(self.slot(slot), key)
        if fact is None:
            raise NoSuchFact(f"no fact {slot}/{key} (recall finds facts by what they say)")
        return fact_view(fact)

    def list_facts(
        self,
        slot: str | None = None,
        limit: int = 20,
        order: str = "updated",
        *,
        since=None,
        until=None,
        offset: int = 0,
        tags: Sequence[str] | None = None,
    ) -> list[dict]:
        """Facts of one slot, or of every slot in scope, most recently updated first (or by
        ``order``); ``since``/``until``: last updated in that window; ``offset``: skip that
        many first; ``tags``: only facts with every one of these tags."""
        if order not in LIST_ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(LIST_ORDERS)}, not {order!r}")
        limit = validation.positive_int(limit, "limit")
        facts = self.store.list_facts(
            self.slots_or_scope(slot),
            limit=limit,
            order=order,
            since=since,
            until=until,
            offset=offset,
            tags=tags,
        )
        return [fact_view(fact) for fact in facts]

    def search(self, query: str, limit: int = 10) -> list[dict]:
        """A connector's search (ChatGPT's ``search``): the facts relevant to ``query`` in the
        scope, best first, each as ``{id, title, url}``; ``fetch(id)`` gives the whole fact."""
        return [
            {
                "id": fact_id(hit["slot"], hit["key"]),
                "title": _title(hit),
                "url": fact_uri(hit["slot"], hit["key"]),
            }
            for hit in self.recall(query, limit=limit)
        ]

    def fetch(self, id: str) -> dict:
        """A connector's fetch: the fact ``slot/key`` (an id ``search`` gave) as a document,
        ``{id, title, text, url, metadata}``."""
        text = validation.text(id, "id", 64 + 1 + validation.MAX_KEY_CHARS, single_line=True)
        slot, slash, key = text.partition("/")
        if not slash or not key:
            raise InvalidInput(f"id must be slot/key, as search returns it, not {id!r}")
        fact = self.get(slot, key)
        return {
            "id": fact_id(fact["slot"], fact["key"]),
            "title": _title(fact),
            "text": fact["value"],
            "url": fact_uri(fact["slot"], fact["key"]),
            "metadata": {k: v for k, v in fact.items() if k != "value"},
        }

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
        return build_context(
            self.store, message, self.slots, budget_tokens=budget_tokens, delimit=self.delimit
        )

    # -- writes ------------------------------------------------------------------------------
    def remember(
        self,
        slot: str,
        key: str,
        value: str,
        confidence: float = 0.8,
        ttl=None,
        tags: Sequence[str] | None = None,
    ) -> dict:
        """Upsert after the same injection and secret scan the flusher applies; ``ttl`` (a
        duration: ``2h``, ``3d``, as ``slotmem remember --ttl``) makes the fact expire;
        ``tags`` (a list) become its tags (None: it keeps those it has)."""
        self._writing("remember")
        item = self._checked(slot, key, value, confidence, ttl, tags)
        return self._done(self.store.upsert(**item, allow_protected=self.allow_protected))

    def remember_many(self, facts: Sequence[Mapping]) -> list[dict]:
        """Up to MAX_BATCH facts (each ``{slot, key, value}``, optionally ``confidence``,
        ``ttl`` and ``tags``), all or nothing: each is checked as ``remember`` checks one (scope, scan,
        protection), and one refused leaves the file as it was."""
        self._writing("remember")
        if isinstance(facts, (str, bytes, Mapping)) or not isinstance(facts, Sequence):
            raise InvalidInput("facts must be a list of {slot, key, value} objects")
        if not 1 <= len(facts) <= MAX_BATCH:
            raise InvalidInput(f"facts must hold 1 to {MAX_BATCH} facts, not {len(facts)}")
        items = []
        for number, fact in enumerate(facts):
            with _numbered(number):
                if not isinstance(fact, Mapping):
                    raise InvalidInput("needs slot, key and value")
                extra = set(fact) - {"slot", "key", "value", "confidence", "ttl", "tags"}
                if extra:
                    raise InvalidInput(f"unknown field(s) {', '.join(sorted(extra))}")
                if not {"slot", "key", "value"} <= set(fact):
                    raise InvalidInput("needs slot, key and value")
                items.append(
                    self._checked(
                        fact["slot"],
                        fact["key"],
                        fact["value"],
                        fact.get("confidence", 0.8),
                        fact.get("ttl"),
                        fact.get("tags"),
                    )
                )
        results = []
        with self.store.transaction():  # one refused (a protected fact): none written
            for number, item in enumerate(items):
                with _numbered(number):
                    results.append(self.store.upsert(**item, allow_protected=self.allow_protected))
        return [self._done(result) for result in results]

    def _checked(self, slot, key, value, confidence, ttl, tags=None) -> dict:
        """One fact's write, checked: in scope, past the scan, valid (the ttl: by upsert)."""
        slot = self.slot(slot)
        if isinstance(key, str) and isinstance(value, str):  # the scan reads them as sent
            reason = injection_reason(key, value) or secret_reason(key, value)
            if reason:
                raise InvalidInput(f"refused to store {slot}/{key}: {reason}")
        slot, key, value, confidence, _ = validation.fact(slot, key, value, confidence, None)
        item = {"slot": slot, "key": key, "value": value, "confidence": confidence}
        checked = None if tags is None else validation.tags(tags)
        return {**item, "source": self.source, "ttl": ttl, "tags": checked}

    @staticmethod
    def _done(result) -> dict:
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

    def link(
        self,
        from_slot: str,
        from_key: str,
        rel: str,
        to_slot: str,
        to_key: str,
        remove: bool = False,
    ) -> dict:
        """Link the fact from_slot/from_key to to_slot/to_key with the type ``rel``
        (``lives_in``), or with ``remove`` take that link away (kept in the links' history).
        Both facts must be in scope; a link from a protected fact cannot be made, nor one
        touching a protected fact removed (unless ``allow_protected``)."""
        self._writing("unlink" if remove else "link")
        ends = (self.slot(from_slot), from_key, rel, self.slot(to_slot), to_key)
        options = {"source": self.source, "allow_protected": self.allow_protected}
        if remove:
            gone = self.store.unlink(*ends, **options)
            action = "unlinked" if gone else "not found"
        else:
            made = self.store.link(*ends, **options)
            action, from_key, to_key = "linked", made.from_fact.key, made.to_fact.key
        return {
            "action": action,
            "from_slot": ends[0],
            "from_key": from_key,
            "rel": rel,
            "to_slot": ends[3],
            "to_key": to_key,
        }

    def links(self, slot: str, key: str) -> list[dict]:
        """The links of slot/key (in scope), outgoing then incoming, each with the fact at
        its other end; a link whose other fact is outside the scope is not shown."""
        slot = self.slot(slot)
        me = self.store.get(slot, key)
        if me is None:
            raise NoSuchFact(f"no fact {slot}/{key} (recall finds facts by what they say)")
        shown = []
        for found in self.store.links(slot, key):
            other = found.to_fact if found.from_fact.id == me.id else found.from_fact
            if self.slots is None or validation.selects(self.slots, other.slot):
                shown.append(link_view(found, me))
        return shown

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
            slots=self.flush_slots(),
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


def _title(fact: dict) -> str:
    """A search result's title: ``slot/key: the value's start``."""
    value = " ".join(fact["value"].split())
    if len(value) > TITLE_CHARS:
        value = value[: TITLE_CHARS - 1].rstrip() + "…"
    return f"{fact['slot']}/{fact['key']}: {value}"


class _numbered:
    """Prefixes a SlotmemError raised inside with the batch item it is about."""

    def __init__(self, number: int):
        self.number = number

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if not isinstance(error, SlotmemError):
            return False
        try:
            numbered = type(error)(f"fact {self.number}: {error}")
        except TypeError:  # an error made of more than a message: as it is
            return False
        raise numbered from error


def scope(slots: Iterable[str] | str | None) -> tuple[str, ...] | None:
    """A scope: None (every slot), or the slots named, ``PREFIX.*`` for every slot under
    PREFIX (a string may list them with commas)."""
    if slots is None:
        return None
    names = tuple(validation.selectors(slots) or ())
    if not names:
        raise InvalidInput("a scope needs at least one slot")
    return names
