"""Episodes and their provenance: the SQL of ``memory_episodes`` and ``memory_provenance``
(migration 0011) and the records read from them.

An episode is a row of ``memory_facts`` (its text is the fact's value: the word index, the
semantic leg, history, feedback and the slot's prune policy serve it as any fact) joined to
its ``memory_episodes`` row, keyed by the fact's id: when it happened, session, run, title,
task, outcome, score and other data. ``memory_provenance`` links facts to the episodes they
were written from. Rows of facts that are gone (pruned, deleted) are kept, as history is: a
restored episode or fact comes back with its id, so with its metadata and links.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from ..records import Fact
from . import rows

_COLUMNS = (
    "f.id, f.slot, f.key, f.value, e.happened_at, e.session, e.run, e.title, e.task, "
    "e.outcome, e.score, e.data, f.quality, f.confidence, f.source, f.created_at, "
    "f.updated_at, f.last_accessed, f.access_count"
)
_SELECT = f"SELECT {_COLUMNS} FROM memory_episodes e JOIN memory_facts f ON f.id = e.fact_id"
_LIVE = "(f.expires_at IS NULL OR f.expires_at > ?)"


@dataclass(frozen=True)
class Episode:
    """What happened (a run, an exchange): its text (the fact's value, what both search legs
    find), when, in which session and run, and how it went. ``quality`` is people's feedback
    (``Store.rate`` on its slot and key), ``score`` the run's own (any scale: a judge's 0-10,
    a reward)."""

    id: str
    slot: str
    key: str
    text: str
    happened_at: int
    session: str | None = None
    run: str | None = None
    title: str | None = None
    task: str | None = None
    outcome: str | None = None
    score: float | None = None
    data: dict | None = None
    quality: int = 0
    confidence: float = 1.0
    source: str | None = None
    created_at: int = 0
    updated_at: int = 0
    last_accessed: int = 0
    access_count: int = 0

    @property
    def label(self) -> str:
        """Its title, else its key."""
        return self.title or self.key

    @classmethod
    def from_row(cls, row) -> Episode:
        values = list(row)
        values[11] = None if values[11] is None else json.loads(values[11])
        return cls(*values)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class EpisodeHit:
    """An episode found by a search: its relevance (``Hit.relevance``'s scale, in [0, 1]) and
    the search's score (the order of one search's hits; not the episode's own ``score``)."""

    episode: Episode
    relevance: float
    search_score: float

    def to_dict(self) -> dict:
        return {**self.episode.to_dict(), "relevance": self.relevance}


def write(conn, fact_id: str, happened_at: int, fields: dict) -> None:
    """Inside the caller's transaction: the episode row of the fact ``fact_id`` (replaced)."""
    data = fields.get("data")
    conn.execute(
        """INSERT INTO memory_episodes
               (fact_id, happened_at, session, run, title, task, outcome, score, data)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (fact_id) DO UPDATE SET
               happened_at = excluded.happened_at, session = excluded.session,
               run = excluded.run, title = excluded.title, task = excluded.task,
               outcome = excluded.outcome, score = excluded.score, data = excluded.data""",
        (
            fact_id,
            happened_at,
            *(fields.get(name) for name in ("session", "run", "title", "task", "outcome")),
            fields.get("score"),
            None if data is None else json.dumps(data, ensure_ascii=False),
        ),
    )


def get(conn, episode_id: str, now: int) -> Episode | None:
    row = conn.execute(f"{_SELECT} WHERE f.id = ? AND {_LIVE}", (episode_id, now)).fetchone()
    return None if row is None else Episode.from_row(row)


def by_ids(conn, ids: Iterable[str], now: int) -> dict[str, Episode]:
    """The live episodes among ``ids`` (facts that are not episodes are left out)."""
    ids = list(dict.fromkeys(ids))
    found: dict[str, Episode] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        sql = f"{_SELECT} WHERE f.id IN ({', '.join('?' * len(part))}) AND {_LIVE}"
        for row in conn.execute(sql, [*part, now]):
            found[row[0]] = Episode.from_row(row)
    return found


def listed(
    conn,
    *,
    now: int,
    slots: list[str] | None = None,
    session: str | None = None,
    run: str | None = None,
    since: int | None = None,
    until: int | None = None,
    limit: int | None = None,
) -> list[Episode]:
    """Live episodes, latest first (by when they happened)."""
    tests: list[str] = [_LIVE]
    params: list = [now]
    if slots:
        tests.append(f"f.slot IN ({', '.join('?' * len(slots))})")
        params.extend(slots)
    for test, value in (
        ("e.session = ?", session),
        ("e.run = ?", run),
        ("e.happened_at >= ?", since),
        ("e.happened_at < ?", until),
    ):
        if value is not None:
            tests.append(test)
            params.append(value)
    sql = f"{_SELECT} WHERE {' AND '.join(tests)} ORDER BY e.happened_at DESC, f.seq DESC"
    if limit is not None:
        sql += " LIMIT +?"
        params.append(limit)
    return [Episode.from_row(row) for row in conn.execute(sql, params)]


def slots(conn, now: int) -> list[str]:
    """The slots that hold live episodes."""
    found = conn.execute(
        f"SELECT DISTINCT f.slot FROM memory_episodes e JOIN memory_facts f ON f.id = e.fact_id "
        f"WHERE {_LIVE} ORDER BY f.slot",
        (now,),
    )
    return [slot for (slot,) in found]


def is_episode(conn, fact_id: str) -> bool:
    found = conn.execute("SELECT 1 FROM memory_episodes WHERE fact_id = ?", (fact_id,))
    return found.fetchone() is not None


def link(conn, fact_ids: Iterable[str], episode_id: str, now: int) -> None:
    """Inside the caller's transaction: each fact came from the episode (a link kept once)."""
    conn.executemany(
        "INSERT INTO memory_provenance (fact_id, episode_id, linked_at) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        [(fact_id, episode_id, now) for fact_id in dict.fromkeys(fact_ids)],
    )


def facts_of(conn, episode_id: str, now: int) -> list[Fact]:
    """The live facts written from the episode, in the order they were linked."""
    sql = f"""SELECT f.* FROM memory_provenance p JOIN memory_facts f ON f.id = p.fact_id
              WHERE p.episode_id = ? AND {rows.live("?")} ORDER BY p.linked_at, f.seq"""
    return [Fact.from_row(row) for row in conn.execute(sql, (episode_id, now))]


def episodes_of(conn, fact_id: str, now: int) -> list[Episode]:
    """The live episodes the fact was written from, latest first."""
    sql = f"""{_SELECT} JOIN memory_provenance p ON p.episode_id = f.id
              WHERE p.fact_id = ? AND {_LIVE} ORDER BY e.happened_at DESC, f.seq DESC"""
    return [Episode.from_row(row) for row in conn.execute(sql, (fact_id, now))]
