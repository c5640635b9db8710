"""LangGraph's long-term memory store over a slotmem file: ``SlotmemStore``, a ``BaseStore``.

    from slotmem.integrations.langgraph import SlotmemStore
    graph = builder.compile(store=SlotmemStore("agent.db", create=True))

Needs the langgraph extra: pip install 'slotmem[langgraph]'.

**Namespaces are slots.** A namespace's labels, joined with dots, name its slot: ``("user",)``
is the slot ``user``, ``("memories", "maja")`` the slot ``memories.maja``; a slot's name read
back splits at its dots (``list_namespaces`` lists every slot of the file that holds facts, the
ones other agents and the command line wrote too). A label that is not lower-case letters,
digits, ``_`` and ``-`` (``"Maja"``, ``"maja@home"``) is kept as ``-`` and its UTF-8 in
lower-case base32 (``-jvqwuyi``), so every label comes back as it was; the first label must
start with a lower-case letter and the slot be at most 64 characters, else the namespace is
refused (InvalidNamespaceError).

**Values are facts.** ``{"content": "text"}`` (LangMem's shape) is stored as the text itself,
so the command line, contexts and other agents read it as any fact; any other dict is stored as
its JSON. Items come back as the dicts they were; a fact written elsewhere reads as
``{"content": value}``. A value must fit in a fact (4,000 characters) and passes the same
injection and secret scan as other agents' writes.

**Search** with a ``query`` is slotmem's own (full text, hybrid when the file has semantic
search on), best first, ``SearchItem.score`` being ``Hit.relevance`` (0 to 1); without one,
newest first. ``filter`` keeps items whose value fields match (``{"kind": "note"}``, or the
operators ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``).

**Limits** as for other agents: ``slots`` (the slots it may touch), ``read_only``, and facts a
person protected stay unchanged unless ``allow_protected``. ``index`` (slotmem indexes the whole
fact) and TTLs (``supports_ttl`` is False) are not supported. The async methods run the sync
ones in worker threads (``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from .. import validation
from ..agents.tools import scope
from ..errors import InvalidInput, NotPermitted
from ..records import EPOCH, Fact
from ..safety import injection_reason, secret_reason
from ..store import Store

SOURCE = "langgraph"
PLAIN_LABEL = re.compile(r"[a-z0-9_][a-z0-9_-]*")
MAX_CANDIDATES = 10_000  # facts a filtered search reads at most


def slot_of(namespace: tuple[str, ...]) -> str:
    """The slot a namespace maps to (InvalidNamespaceError when it cannot)."""
    if not namespace:
        raise InvalidNamespaceError("a namespace needs at least one label")
    labels = []
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label:
            raise InvalidNamespaceError(f"invalid namespace label {label!r} in {namespace}")
        if PLAIN_LABEL.fullmatch(label):
            labels.append(label)
        else:
            labels.append("-" + base64.b32encode(label.encode()).decode().lower().rstrip("="))
    slot = ".".join(labels)
    if not validation.SLOT_RE.fullmatch(slot):
        raise InvalidNamespaceError(
            f"namespace {namespace} cannot be a slot ({slot!r}): its first label must start "
            "with a lower-case letter, and the labels joined by dots be at most 64 characters"
        )
    return slot


def namespace_of(slot: str) -> tuple[str, ...]:
    """The namespace of a slot: its dot-separated labels, the encoded ones decoded."""
    return tuple(_label(part) for part in slot.split("."))


def _label(part: str) -> str:
    if not part.startswith("-"):
        return part
    code = part[1:].upper()
    try:
        return base64.b32decode(code + "=" * (-len(code) % 8)).decode()
    except (binascii.Error, ValueError):  # a slot named so by someone else: keep it
        return part


def encode_value(value: Mapping[str, Any]) -> str:
    """A LangGraph value as a fact's text: its content alone when that is all it is."""
    if not isinstance(value, Mapping):
        raise InvalidInput(f"a value must be a dict, not {type(value).__name__}")
    content = value.get("content")
    if set(value) == {"content"} and isinstance(content, str) and _plain(content):
        return content
    try:
        return json.dumps(dict(value), ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise InvalidInput(f"a value must be JSON: {e}") from None


def _plain(text: str) -> bool:
    """Text a fact holds unchanged, and that reads back as text, not JSON."""
    try:
        return validation.value(text) == text and not text.startswith("{")
    except InvalidInput:
        return False


def decode_value(text: str) -> dict[str, Any]:
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"content": text}


def _time(ms: int) -> datetime.datetime:
    return EPOCH + datetime.timedelta(milliseconds=ms)


class SlotmemStore(BaseStore):
    """LangGraph's BaseStore over one slotmem file (see the module's description)."""

    supports_ttl = False

    def __init__(
        self,
        path_or_store,
        *,
        slots: Iterable[str] | str | None = None,
        read_only: bool = False,
        allow_protected: bool = False,
        **options,
    ):
        """``path_or_store``: a file (opened as ``Store(path, **options)``) or an open Store.
        ``slots``: the only slots it may read and write; ``read_only``: puts and deletes are
        refused; ``allow_protected``: it may overwrite and delete facts a person protected."""
        self.store = (
            path_or_store if isinstance(path_or_store, Store) else Store(path_or_store, **options)
        )
        self.slots = scope(slots)
        self.read_only = bool(read_only)
        self.allow_protected = bool(allow_protected)

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

    def close(self) -> None:
        self.store.close()

    # -- the operations ----------------------------------------------------------------------
    def _slot(self, namespace: tuple[str, ...]) -> str:
        slot = slot_of(tuple(namespace))
        if self.slots is not None and slot not in self.slots:
            raise NotPermitted(
                f"namespace {tuple(namespace)} (slot {slot!r}) is outside this store's scope "
                f"({', '.join(self.slots)})"
            )
        return slot

    def _get(self, op: GetOp) -> Item | None:
        fact = self.store.get(self._slot(op.namespace), op.key)
        return None if fact is None else _item(fact, Item)

    def _put(self, puts: dict[tuple[str, str], PutOp]) -> None:
        if self.read_only:
            raise NotPermitted("this store is read-only: it cannot put or delete items")
        writes = []
        for (slot, key), op in puts.items():
            text = None if op.value is None else encode_value(op.value)
            if text is not None:
                reason = injection_reason(key, text) or secret_reason(key, text)
                if reason:
                    raise InvalidInput(f"refused to store {op.namespace}/{key}: {reason}")
            writes.append((slot, key, text))
        with self.store.transaction():
            for slot, key, text in writes:
                if text is None:
                    self.store.delete(
                        slot, key, source=SOURCE, allow_protected=self.allow_protected
                    )
                else:
                    self.store.upsert(
                        slot, key, text, source=SOURCE, allow_protected=self.allow_protected
                    )

    def _prefixed_slots(self, prefix: tuple[str, ...]) -> list[str]:
        names = self.slots if self.slots is not None else self.store.slots()
        return [s for s in names if namespace_of(s)[: len(prefix)] == tuple(prefix)]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        slots = self._prefixed_slots(op.namespace_prefix)
        wanted = op.offset + op.limit
        if not slots or op.limit <= 0:
            return []
        count = wanted if not op.filter else 4 * wanted
        while True:
            if op.query:
                hits = self.store.query_facts(op.query, slots=slots, limit=count)
                found = [(hit.fact, hit.relevance) for hit in hits]
            else:
                facts = self.store.list_facts(slots, limit=count, order="updated")
                found = [(fact, None) for fact in facts]
            items = [
                _item(fact, SearchItem, score=score)
                for fact, score in found
                if _matches(decode_value(fact.value), op.filter)
            ]
            if len(items) >= wanted or len(found) < count or count >= MAX_CANDIDATES:
                return items[op.offset : wanted]
            count = min(4 * count, MAX_CANDIDATES)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        present = self.store.slots()  # the slots that hold facts
        names = [slot for slot in (self.slots or present) if slot in present]
        namespaces = [namespace_of(slot) for slot in names]
        conditions = op.match_conditions or ()
        namespaces = [ns for ns in namespaces if all(_fits(c, ns) for c in conditions)]
        if op.max_depth is not None:
            namespaces = [ns[: op.max_depth] for ns in namespaces]
        return sorted(set(namespaces))[op.offset : op.offset + op.limit]


def _item(fact: Fact, kind, **extra):
    return kind(
        namespace=namespace_of(fact.slot),
        key=fact.key,
        value=decode_value(fact.value),
        created_at=_time(fact.created_at),
        updated_at=_time(fact.updated_at),
        **extra,
    )


def _fits(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(want in ("*", have) for want, have in zip(path, part))


OPERATORS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a is not None and a > b,
    "$gte": lambda a, b: a is not None and a >= b,
    "$lt": lambda a, b: a is not None and a < b,
    "$lte": lambda a, b: a is not None and a <= b,
}


def _matches(value: Any, wanted: Any) -> bool:
    """Does ``value`` match the filter ``wanted`` (fields, nested dicts, operators)?"""
    if not wanted:
        return True
    if not isinstance(value, dict):
        return False
    for field, condition in wanted.items():
        have = value.get(field)
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
