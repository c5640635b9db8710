"""What the MCP tools answer: their output types, from which the SDK makes each tool's output
schema (slotmem.agents.mcp_server)."""

from typing import Any

from typing_extensions import TypedDict


class FactOut(TypedDict):
    slot: str
    key: str
    value: str
    confidence: float
    quality: int
    source: str | None
    created_at: str
    updated_at: str
    pinned: bool
    protected: bool
    expires_at: str | None
    tags: list[str]


class HitOut(FactOut):
    relevance: float
    match: str  # strong, good or weak (slotmem.agents.tools.match)
    rank: int


class Recalled(TypedDict):
    facts: list[HitOut]
    next_offset: int | None  # the offset of the next page; None: this was the last


class Listed(TypedDict):
    facts: list[FactOut]
    next_offset: int | None


class Result(TypedDict):
    id: str  # slot/key: what fetch takes
    title: str
    url: str  # the fact's resource, slotmem://fact/{slot}/{key}


class Results(TypedDict):
    results: list[Result]


class Document(TypedDict):
    id: str
    title: str
    text: str
    url: str
    metadata: dict[str, Any]


class Entry(TypedDict):
    value: str
    confidence: float
    source: str | None
    reason: str
    changed_at: str
    changed_by: str | None


class History(TypedDict):
    entries: list[Entry]


class Written(FactOut, total=False):
    action: str
    previous_value: str


class Remembered(TypedDict):
    facts: list[Written]


class Forgotten(TypedDict):
    action: str
    slot: str
    key: str


class LinkOut(TypedDict):
    direction: str  # out: from the fact asked about; in: to it
    rel: str
    fact: FactOut  # the fact at the other end
    created_at: str
    source: str | None


class Links(TypedDict):
    links: list[LinkOut]


class Linked(TypedDict):
    action: str  # linked, unlinked or not found
    from_slot: str
    from_key: str
    rel: str
    to_slot: str
    to_key: str


class Message(TypedDict):
    role: str
    content: str


Messages = list[Message]  # named here: inside _tools, ``list`` is the list tool


class FlushedFact(TypedDict):
    action: str
    slot: str
    key: str
    value: str
    reason: str | None


class Flushed(TypedDict):
    source: str
    model: str
    counts: dict[str, int]
    facts: list[FlushedFact]
