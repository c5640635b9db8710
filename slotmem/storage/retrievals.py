"""The retrieval log: what a context build put into a prompt (migration 0011's
``memory_retrievals`` and ``memory_retrieval_items``) and the records read from it.

A build asked to be recorded writes one retrieval (its query, when, session, run, the tokens
of its text) and one item per fact or episode it considered, in the order of the prompt, then
those it cut: the value as the prompt had it (a fact may change later; the log says what the
agent knew then), its relevance, whether it was included, and why not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

_USED = "id IN (SELECT retrieval_id FROM memory_retrieval_items WHERE fact_id = ? AND included = 1)"
_ITEM_COLUMNS = "position, fact_id, kind, slot, key, value, relevance, included, reason"


@dataclass(frozen=True)
class RetrievalItem:
    position: int  # 1, 2, ... in the order of the prompt; the cut ones after
    fact_id: str
    kind: str  # "fact" or "episode"
    slot: str
    key: str
    value: str  # as the prompt had it
    relevance: float | None  # None: a pinned fact (in whatever the query)
    included: bool
    reason: str | None = None  # why it was cut

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Retrieval:
    """One recorded context build: "what did the agent know when it answered?"."""

    id: int
    at: int
    query: str
    session: str | None
    run: str | None
    tokens: int
    items: tuple[RetrievalItem, ...] = ()

    def used(self, kind: str | None = None) -> list[RetrievalItem]:
        """What went into the prompt (of one kind: "fact" or "episode"), in its order."""
        return [i for i in self.items if i.included and (kind is None or i.kind == kind)]

    def cut(self) -> list[RetrievalItem]:
        return [item for item in self.items if not item.included]

    def to_dict(self) -> dict:
        return {**asdict(self), "items": [item.to_dict() for item in self.items]}


def record(
    conn,
    query: str,
    items: list[tuple],
    *,
    now: int,
    session: str | None,
    run: str | None,
    tokens: int,
) -> int:
    """Inside the caller's transaction: a retrieval and its items, each (fact_id, slot, key,
    value, relevance, included, reason) in the order given; an item is an ``episode`` when
    its fact is one. Returns the retrieval's id."""
    cursor = conn.execute(
        "INSERT INTO memory_retrievals (at, query, session, run, tokens) VALUES (?, ?, ?, ?, ?)",
        (now, query, session, run, tokens),
    )
    retrieval_id = cursor.lastrowid
    ids = [item[0] for item in items]
    episodes: set[str] = set()
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        sql = f"SELECT fact_id FROM memory_episodes WHERE fact_id IN ({', '.join('?' * len(part))})"
        episodes.update(fact_id for (fact_id,) in conn.execute(sql, part))
    conn.executemany(
        f"INSERT INTO memory_retrieval_items (retrieval_id, {_ITEM_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                retrieval_id,
                position,
                fact_id,
                "episode" if fact_id in episodes else "fact",
                slot,
                key,
                value,
                relevance,
                int(included),
                reason,
            )
            for position, (fact_id, slot, key, value, relevance, included, reason) in enumerate(
                items, 1
            )
        ],
    )
    return retrieval_id


def listed(
    conn,
    *,
    ids: Iterable[int] | None = None,
    session: str | None = None,
    run: str | None = None,
    fact_id: str | None = None,
    since: int | None = None,
    until: int | None = None,
    limit: int | None = None,
) -> list[Retrieval]:
    """Retrievals with their items, latest first; ``fact_id``: those whose prompt had it."""
    tests: list[str] = []
    params: list = []
    if ids is not None:
        ids = list(ids)
        tests.append(f"id IN ({', '.join('?' * len(ids))})")
        params.extend(ids)
    for test, value in (
        ("session = ?", session),
        ("run = ?", run),
        ("at >= ?", since),
        ("at < ?", until),
        (_USED, fact_id),
    ):
        if value is not None:
            tests.append(test)
            params.append(value)
    where = f"WHERE {' AND '.join(tests)}" if tests else ""
    sql = f"SELECT id, at, query, session, run, tokens FROM memory_retrievals {where} "
    sql += "ORDER BY at DESC, id DESC"
    if limit is not None:
        sql += " LIMIT +?"
        params.append(limit)
    found = [tuple(row) for row in conn.execute(sql, params)]
    items: dict[int, list[RetrievalItem]] = {row[0]: [] for row in found}
    for start in range(0, len(found), 500):
        part = [row[0] for row in found[start : start + 500]]
        sql = (
            f"SELECT retrieval_id, {_ITEM_COLUMNS} FROM memory_retrieval_items "
            f"WHERE retrieval_id IN ({', '.join('?' * len(part))}) ORDER BY retrieval_id, position"
        )
        for retrieval_id, *item in conn.execute(sql, part):
            item[7] = bool(item[7])
            items[retrieval_id].append(RetrievalItem(*item))
    return [
        Retrieval(row[0], row[1], row[2], row[3], row[4], row[5], tuple(items[row[0]]))
        for row in found
    ]


def forget(conn, before: int) -> int:
    """Inside the caller's transaction: retrievals made before ``before`` and their items.
    Returns how many retrievals."""
    conn.execute(
        "DELETE FROM memory_retrieval_items WHERE retrieval_id IN "
        "(SELECT id FROM memory_retrievals WHERE at < ?)",
        (before,),
    )
    return conn.execute("DELETE FROM memory_retrievals WHERE at < ?", (before,)).rowcount
