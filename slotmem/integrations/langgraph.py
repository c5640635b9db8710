"""LangGraph's long-term memory store over a slotmem file: ``SlotmemStore``, a ``BaseStore``.

    from slotmem.integrations.langgraph import SlotmemStore
    graph = builder.compile(store=SlotmemStore("agent.db", create=True))

Needs the langgraph extra: pip install 'slotmem[langgraph]'.

**A drop-in for LangGraph's own stores**: tests/test_langgraph_parity.py runs 31 operations on
SqliteStore and on this store side by side and they answer alike (docs/agents.md#langgraph).

**Namespaces are slots.** A namespace's labels, joined with dots, name its slot: ``("user",)``
is the slot ``user``, ``("memories", "maja")`` the slot ``memories.maja``; a slot's name read
back splits at its dots (``list_namespaces`` lists every slot of the file that holds facts, the
ones other agents and the command line wrote too). Any other label (``"Maja"``, ``"1st"``,
``"maja@home"``) is kept in base32 (langgraph_codec), so it comes back as it was; a namespace
whose slot would pass 64 characters is refused (InvalidNamespaceError).

**Values are facts.** ``{"content": "text"}`` (LangMem's shape) is stored as the text itself,
so the command line, contexts and other agents read it as any fact; any other dict is stored as
its JSON. Items come back as the dicts they were; a fact written elsewhere reads as
``{"content": value}``. Keys slotmem would change (case, spaces, over 200 characters) and
values over a fact's 4,000 characters are stored losslessly as langgraph_codec describes.

**Search** with a ``query`` is slotmem's own (full text, hybrid when the file has semantic
search on), a ranked top-k as LangGraph's stores return: the hits best first,
``SearchItem.score`` being ``Hit.relevance`` (0 to 1), then the other items newest first
(score 0); no relevance floor (that is for prompts). Without a query, newest first. ``filter``
keeps items whose value fields match (``{"kind": "note"}``, a dotted path, or the operators
``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``, as SqliteStore's SQL reads them).

**Tags**: ``put(..., tags=["work"])`` gives the item's fact slotmem's tags (they replace its
tags; None, the default, keeps them), and the filter key ``"$tags"`` (a tag or a list: every
one) keeps the items whose facts have them, read from slotmem's tag index, not from the value:
``search(("memories",), filter={"$tags": ["work"], "kind": "note"})``. A value field named
``tags`` is filtered as any other field, as LangGraph's stores do.

**TTL** (``supports_ttl``): ``put(..., ttl=minutes)`` is the fact's expiry (expired items are
gone at once for every reader); ``get``/``search`` with ``refresh_ttl`` (the default unless
the TTLConfig says ``refresh_on_read: False``) move it to that many minutes from now, the
value and its history unchanged (``Store.renew``).

**Limits** as for other agents: ``slots`` (the slots it may touch), ``read_only``, and facts a
person protected stay unchanged unless ``allow_protected``. The developer's own puts are
trusted; ``scan=True`` passes every put through the injection and secret scan other agents'
writes get (for a store whose puts carry what a model wrote). ``index`` is accepted and
ignored (slotmem indexes the whole fact). The async methods run the sync ones in worker
threads (``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import datetime
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from .. import validation
from ..agents.tools import scope
from ..errors import InvalidInput, NotPermitted, ProtectedFact
from ..records import EPOCH, Fact
from ..safety import injection_reason, secret_reason
from ..store import Store
from .langgraph_codec import (
    decode_item,
    decode_value,
    encode_value,
    is_part,
    is_whole,
    item_text,
    namespace_of,
    part_key,
    pieces,
    slot_of,
    stored_key,
)

__all__ = ["SlotmemStore", "decode_value", "encode_value", "namespace_of", "slot_of"]

SOURCE = "langgraph"
TTL_SOURCE = re.compile(r"langgraph ttl=([0-9.e+-]+)m")  # the source of a put with a ttl
MAX_CANDIDATES = 10_000  # facts a filtered search reads at most
TAGS_FILTER = "$tags"  # the filter key that keeps items by slotmem's tags, not a value field


def _time(ms: int) -> datetime.datetime:
    return EPOCH + datetime.timedelta(milliseconds=ms)


class SlotmemStore(BaseStore):
    """LangGraph's BaseStore over one slotmem file (see the module's description)."""

    supports_ttl = True

    def __init__(
        self,
        path_or_store,
        *,
        slots: Iterable[str] | str | None = None,
        read_only: bool = False,
        allow_protected: bool = False,
        scan: bool = False,
        ttl: TTLConfig | None = None,
        **options,
    ):
        """``path_or_store``: a file or a ``postgresql://`` URL (opened as ``Store(path,
        **options)``) or an open Store.
        ``slots``: the only slots it may read and write; ``read_only``: puts and deletes are
        refused; ``allow_protected``: it may overwrite and delete facts a person protected;
        ``scan``: puts pass slotmem's injection and secret scan (for a store whose puts carry
        what an agent or a model wrote; the developer's own puts are trusted by default);
        ``ttl``: LangGraph's TTLConfig (``default_ttl`` in minutes, ``refresh_on_read``)."""
        opened = isinstance(path_or_store, (str, os.PathLike))  # a file, or a postgresql:// URL
        self.store = Store(path_or_store, **options) if opened else path_or_store
        self.slots = scope(slots)
        self.read_only = bool(read_only)
        self.allow_protected = bool(allow_protected)
        self.scan = bool(scan)
        self.ttl_config = ttl

    # -- BaseStore ---------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Reads in order, then the puts (the last for each namespace and key) in one
        transaction: LangGraph's order, where a batch's reads see the store as it was."""
        results: list[Result] = []
        puts: dict[tuple[str, str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                puts[(self._slot(op.namespace), op.key)] = op
                results.append(None)
            else:
                raise TypeError(f"unknown operation {type(op).__name__}")
        if puts:
            self._put(puts)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def put(self, namespace, key, value, index=None, *, ttl=NOT_PROVIDED, tags=None) -> None:
        """BaseStore.put, and ``tags``: slotmem's tags of the item's fact (a list; they replace
        its tags; None keeps them), which ``search(filter={"$tags": [...]})`` keeps to."""
        if tags is None:
            return super().put(namespace, key, value, index, ttl=ttl)
        wanted = validation.tags(tags)
        if value is None:
            raise InvalidInput("tags need a value: a put of None deletes the item")
        with self.store.transaction():  # the item and its tags: both or neither
            super().put(namespace, key, value, index, ttl=ttl)
            self._retag(self._slot(namespace), stored_key(key), wanted)
        return None

    async def aput(self, namespace, key, value, index=None, *, ttl=NOT_PROVIDED, tags=None):
        return await asyncio.to_thread(self.put, namespace, key, value, index, ttl=ttl, tags=tags)

    def _retag(self, slot: str, stored: str, wanted: tuple[str, ...]) -> None:
        fact = self.store.get(slot, stored)
        if fact is None:
            return
        gone = set(fact.tags) - set(wanted)
        if gone:
            self.store.untag(slot, stored, *sorted(gone), allow_protected=self.allow_protected)
        if set(wanted) - set(fact.tags):
            self.store.tag(slot, stored, *wanted, allow_protected=self.allow_protected)

    def close(self) -> None:
        self.store.close()

    # -- the operations ----------------------------------------------------------------------
    def _slot(self, namespace: tuple[str, ...]) -> str:
        slot = slot_of(tuple(namespace))
        if self.slots is not None and not validation.selects(self.slots, slot):
            raise NotPermitted(
                f"namespace {tuple(namespace)} (slot {slot!r}) is outside this store's scope "
                f"({', '.join(self.slots)})"
            )
        return slot

    def _get(self, op: GetOp) -> Item | None:
        fact = self._find(self._slot(op.namespace), op.key)
        if fact is None:
            return None
        if op.refresh_ttl:
            self._refresh([fact])
        return self._item(fact, Item)

    def _find(self, slot: str, key: str) -> Fact | None:
        """The fact of an item: under its stored key, else (a key slotmem would change) under
        the key itself, as an older SlotmemStore or another writer left it."""
        stored = stored_key(key)
        fact = self.store.get(slot, stored)
        if fact is not None and fact.key == stored:
            return fact
        legacy = self._legacy(slot, key) if stored != key else None
        return legacy

    def _legacy(self, slot: str, key: str) -> Fact | None:
        try:
            fact = self.store.get(slot, key)
        except InvalidInput:  # a key no fact can have
            return None
        return fact if fact is not None and fact.key == key else None

    def _put(self, puts: dict[tuple[str, str], PutOp]) -> None:
        if self.read_only:
            raise NotPermitted("this store is read-only: it cannot put or delete items")
        writes = []
        for (slot, key), op in puts.items():
            text = None if op.value is None else item_text(key, op.value)
            if text is not None and self.scan:
                reason = injection_reason(key, text) or secret_reason(key, text)
                if reason:
                    raise InvalidInput(f"refused to store {op.namespace}/{key}: {reason}")
            if op.ttl is not None and not op.ttl > 0:
                raise InvalidInput(f"ttl must be a number of minutes above 0, not {op.ttl!r}")
            stored = stored_key(key)
            if stored != key:
                self._no_look_alike(slot, key)
            writes.append((slot, key, stored, text, op.ttl))
        with self.store.transaction():
            for slot, key, stored, text, ttl in writes:
                if stored != key and self._legacy(slot, key) is not None:  # now under ``stored``
                    self.store.delete(
                        slot, key, source=SOURCE, allow_protected=self.allow_protected
                    )
                if text is None:
                    self.store.delete(
                        slot, stored, source=SOURCE, allow_protected=self.allow_protected
                    )
                    self._drop_parts(slot, stored, 1)
                else:
                    self._write(slot, stored, pieces(text), ttl)

    def _no_look_alike(self, slot: str, key: str) -> None:
        """A key slotmem reads as a protected fact's (``Owner`` for ``owner``: its key form)
        is refused, as on every surface agents reach: an item beside it would shadow it."""
        try:
            twin = self.store.get(slot, key)
        except InvalidInput:  # a key no fact can have: none is its twin
            return
        if twin is not None and twin.key != key and twin.protected and not self.allow_protected:
            raise ProtectedFact(
                f"{slot}/{twin.key} is protected (a person wrote it): an agent cannot put "
                f"{key!r}, a key slotmem reads as the same one, beside it"
            )

    def _write(self, slot: str, stored: str, texts: list[str], ttl: float | None) -> None:
        source = SOURCE if ttl is None else f"{SOURCE} ttl={ttl:g}m"
        seconds = None if ttl is None else ttl * 60
        self.store.upsert(
            slot,
            stored,
            texts[0],
            source=source,
            ttl=seconds,
            allow_protected=self.allow_protected,
        )
        for number, text in enumerate(texts[1:], 1):  # the pieces: see langgraph_codec
            self.store.upsert(
                slot, part_key(stored, number), text, source=source, ttl=seconds, protect=True
            )
        self._drop_parts(slot, stored, len(texts))

    def _drop_parts(self, slot: str, stored: str, first: int) -> None:
        """Delete the pieces ``first``, ``first + 1``, ... a longer text left."""
        while self.store.delete(slot, part_key(stored, first), source=SOURCE):
            first += 1

    def _text(self, fact: Fact) -> str:
        """A fact's whole text: its own, then its pieces' (a long value: langgraph_codec)."""
        if is_whole(fact.value):
            return fact.value
        texts, number = [fact.value], 1
        while (part := self.store.get(fact.slot, part_key(fact.key, number))) is not None:
            texts.append(part.value)
            number += 1
        return "".join(texts)

    def _item(self, fact: Fact, kind, **extra):
        key, value = decode_item(fact.key, self._text(fact))
        return kind(
            namespace=namespace_of(fact.slot),
            key=key,
            value=value,
            created_at=_time(fact.created_at),
            updated_at=_time(fact.updated_at),
            **extra,
        )

    def _refresh(self, facts: Iterable[Fact]) -> None:
        """Push the expiry of facts put with a ttl that far from now (LangGraph's refresh_ttl),
        unless the TTLConfig says ``refresh_on_read: False``."""
        if self.read_only or (self.ttl_config or {}).get("refresh_on_read", True) is False:
            return
        for fact in facts:
            found = TTL_SOURCE.fullmatch(fact.source or "")
            if fact.expires_at is None or found is None:
                continue
            if fact.protected and not self.allow_protected:
                continue
            seconds = float(found.group(1)) * 60
            with self.store.transaction():
                self.store.renew(fact.slot, fact.key, seconds)
                number = 1
                while self.store.renew(fact.slot, part_key(fact.key, number), seconds):
                    number += 1

    def _prefixed_slots(self, prefix: tuple[str, ...]) -> list[str]:
        names = self.store.slot_names(self.slots or "*") or []
        return [s for s in names if namespace_of(s)[: len(prefix)] == tuple(prefix)]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        """With a query: slotmem's hits best first, then the other items newest first (score
        0), so a search returns as many items as LangGraph's stores do; without: newest first."""
        slots = self._prefixed_slots(op.namespace_prefix)
        wanted = op.offset + op.limit
        value_filter, tags = _split_filter(op.filter)
        if not slots or op.limit <= 0:
            return []
        found: list[tuple[Fact, float | None]] = []
        if op.query:
            query = op.query
            hits = self._collect(
                lambda n: [
                    (hit.fact, hit.relevance)
                    for hit in self.store.query_facts(query, slots=slots, limit=n, tags=tags)
                ],
                value_filter,
                wanted,
            )
            found.extend(hits)
        if len(found) < wanted:
            seen = {fact.id for fact, _ in found}
            score = 0.0 if op.query else None
            rest = self._collect(
                lambda n: [
                    (fact, score)
                    for fact in self.store.list_facts(slots, limit=n, order="updated", tags=tags)
                ],
                value_filter,
                wanted + len(seen),
            )
            found.extend(pair for pair in rest if pair[0].id not in seen)
        chosen = found[op.offset : wanted]
        if op.refresh_ttl:
            self._refresh(fact for fact, _ in chosen)
        return [self._item(fact, SearchItem, score=score) for fact, score in chosen]

    def _collect(
        self,
        fetch: Callable[[int], list[tuple[Fact, float | None]]],
        wanted_filter: dict[str, Any] | None,
        wanted: int,
    ) -> list[tuple[Fact, float | None]]:
        """The first ``wanted`` of what ``fetch(n)`` finds that are items (not pieces) and
        match the filter, asking for more while there may be more."""
        count = max(wanted, 1) if not wanted_filter else 4 * max(wanted, 1)
        while True:
            found = fetch(count)
            kept = [
                (fact, score)
                for fact, score in found
                if not is_part(fact.key)
                and (not wanted_filter or _matches(self._item(fact, Item).value, wanted_filter))
            ]
            if len(kept) >= wanted or len(found) < count or count >= MAX_CANDIDATES:
                return kept[:wanted]
            count = min(4 * count, MAX_CANDIDATES)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        present = self.store.slots()  # the slots that hold facts
        names = [s for s in present if self.slots is None or validation.selects(self.slots, s)]
        namespaces = [namespace_of(slot) for slot in names]
        conditions = op.match_conditions or ()
        namespaces = [ns for ns in namespaces if all(_fits(c, ns) for c in conditions)]
        if op.max_depth is not None:
            namespaces = [ns[: op.max_depth] for ns in namespaces]
        return sorted(set(namespaces))[op.offset : op.offset + op.limit]


def _fits(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(want in ("*", have) for want, have in zip(path, part))


OPERATORS = {  # as SqliteStore's SQL: a missing field matches no operator but $eq None
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a is not None and a != b,
    "$gt": lambda a, b: a is not None and a > b,
    "$gte": lambda a, b: a is not None and a >= b,
    "$lt": lambda a, b: a is not None and a < b,
    "$lte": lambda a, b: a is not None and a <= b,
}


def _split_filter(given: dict[str, Any] | None) -> tuple[dict[str, Any] | None, tuple | None]:
    """A search's filter as (the value fields' part, slotmem's tags under TAGS_FILTER: a tag
    or a list of them, every one wanted)."""
    if not given or TAGS_FILTER not in given:
        return given, None
    rest = {name: value for name, value in given.items() if name != TAGS_FILTER}
    tags = given[TAGS_FILTER]
    checked = validation.tags([tags] if isinstance(tags, str) else tags, TAGS_FILTER)
    return rest or None, checked or None


def _matches(value: Any, wanted: Any) -> bool:
    """Does ``value`` match the filter ``wanted`` (fields, nested dicts, operators)?"""
    if not wanted:
        return True
    if not isinstance(value, dict):
        return False
    for field, condition in wanted.items():
        have = _field(value, field)
        if isinstance(condition, dict) and any(k.startswith("$") for k in condition):
            for operator, operand in condition.items():
                if operator not in OPERATORS:
                    raise InvalidInput(f"unknown filter operator {operator!r}")
                try:
                    if not OPERATORS[operator](have, operand):
                        return False
                except TypeError:  # a string compared with a number: no match
                    return False
        elif isinstance(condition, dict):
            if not _matches(have, condition):
                return False
        elif have != condition:
            return False
    return True


def _field(value: dict, field: str) -> Any:
    """``value[field]``, or along a dotted path (``"user.access-level"``) as LangGraph's are."""
    if field in value or "." not in field:
        return value.get(field)
    found: Any = value
    for part in field.split("."):
        if not isinstance(found, dict):
            return None
        found = found.get(part)
    return found
