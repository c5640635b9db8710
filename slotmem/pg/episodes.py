"""PostgresStore's episodes and their provenance (``memory_episodes``, ``memory_provenance``:
migrations/0008_episodes.sql): record_episode, link_facts, get_episode, list_episodes,
search_episodes, episode_facts and fact_episodes with the file's checks
(slotmem.storage.episode_checks), records (slotmem.storage.episodes) and protection rule. An
episode is a fact, so search_episodes is this store's query_facts over the episodes' slots:
the same scoring as any PostgreSQL search."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .. import validation
from ..errors import InvalidInput, protected_error
from ..records import Fact
from ..storage import episode_checks as checks
from . import server
from .reads import Reads
from .writes import Writes, _changed

if TYPE_CHECKING:
    from ..storage.episodes import Episode, EpisodeHit

COLUMNS = (
    "f.id, f.slot, f.key, f.value, e.happened_at, e.session, e.run, e.title, e.task, "
    "e.outcome, e.score, e.data, f.quality, f.confidence, f.source, f.created_at, "
    "f.updated_at, f.last_accessed, f.access_count"
)
SELECT = f"SELECT {COLUMNS} FROM memory_episodes e JOIN memory_facts f ON f.id = e.fact_id"
LIVE = "(f.expires_at IS NULL OR f.expires_at > %s)"
LATEST = "ORDER BY e.happened_at DESC, f.seq DESC"


class Episodes(Reads, Writes):
    """Episodes beside facts, and which facts were written from which episode."""

    @server.translated
    def record_episode(
        self,
        text: str,
        *,
        slot: str = checks.EPISODES_SLOT,
        key: str | None = None,
        title: str | None = None,
        task: str | None = None,
        session: str | None = None,
        run: str | None = None,
        outcome: str | None = None,
        score: float | None = None,
        happened_at=None,
        data: Mapping | None = None,
        facts: Iterable[Mapping] = (),
        confidence: float = 1.0,
        source: str | None = None,
        allow_protected: bool = False,
    ) -> Episode:
        """As Store.record_episode: ``text`` in ``slot`` under ``key`` (default: a new key
        from the title) with its metadata; ``facts`` written in the same transaction and
        linked to it (source ``episode:<id>`` unless given). Neither it nor its facts change a
        protected fact unless ``allow_protected``."""
        self._writable()
        now = self.clock()
        title = checks.label(title, "title")
        fields = checks.fields(title, task, session, run, outcome, score, data)
        when = now if happened_at is None else validation.moment(happened_at, now, "happened_at")
        slot = validation.slot(slot)
        key = validation.key(key) if key is not None else checks.new_key(title)
        item = (
            *validation.fact(slot, key, validation.text(text, "text", 4000), confidence, source),
            None,
        )
        wanted = checks.fact_items(facts, now)
        vectors = self.semantic.prepare([item[1:3], *(fact[1:3] for fact in wanted)])
        guard = not allow_protected
        with self.conn.transaction():
            result = self._write(item, now, guard=guard)
            if guard and result.fact.protected:  # the same text: it would become an episode
                raise protected_error(slot, result.fact.key, "record an episode over")
            episode_id = result.fact.id
            self._episode_row(episode_id, when, fields)
            written = [(*fact[:4], fact[4] or f"episode:{episode_id}", fact[5]) for fact in wanted]
            results = self._write_all(written, now, guard=guard) if written else []
            self._link([r.fact.id for r in results], episode_id, now)
            self.semantic.write(vectors, _changed([result, *results]))
            episode = self._episode(episode_id, now)
        assert episode is not None
        return episode

    @server.translated
    def link_facts(self, episode_id: str, facts: Iterable) -> list[Fact]:
        """As Store.link_facts: every fact must exist; nothing is linked otherwise."""
        self._writable()
        episode_id = checks.episode_id(episode_id)
        now = self.clock()
        wanted = []
        for fact in facts:
            slot, key = (fact.slot, fact.key) if isinstance(fact, Fact) else checks.pair(fact)
            wanted.append((validation.slot(slot), validation.key(key)))
        with self.conn.transaction():
            if self._episode(episode_id, now) is None:
                raise InvalidInput(f"no episode {episode_id}")
            found = []
            for slot, key in wanted:
                row = self._row(slot, key, now)
                if row is None:
                    raise InvalidInput(f"no fact {slot}/{key} to link to episode {episode_id}")
                found.append(Fact.from_row(row))
            self._link([fact.id for fact in found], episode_id, now)
        return found

    @server.translated
    def get_episode(self, episode_id: str) -> Episode | None:
        """The episode with this id (the id of its fact), or None."""
        return self._episode(checks.episode_id(episode_id), self.clock())

    @server.translated
    def list_episodes(
        self,
        slot: str | Iterable[str] | None = None,
        *,
        session: str | None = None,
        run: str | None = None,
        since=None,
        until=None,
        limit: int | None = 50,
    ) -> list[Episode]:
        """As Store.list_episodes: latest first (by when they happened)."""
        now = self.clock()
        start, stop = validation.window(since, until, now)
        slots = validation.slots(slot)
        limit = None if limit is None else validation.count(limit, "limit")
        tests: list[str] = [LIVE]
        params: list = [now]
        for test, value in (
            ("f.slot = ANY(%s)", slots or None),
            ("e.session = %s", checks.label(session, "session")),
            ("e.run = %s", checks.label(run, "run")),
            ("e.happened_at >= %s", start),
            ("e.happened_at < %s", stop),
        ):
            if value is not None:
                tests.append(test)
                params.append(value)
        sql = f"{SELECT} WHERE {' AND '.join(tests)} {LATEST}"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return [_episode_of(row) for row in self.conn.execute(sql, params)]

    @server.translated
    def search_episodes(
        self,
        text: str,
        *,
        slots: str | Iterable[str] | None = None,
        limit: int = 5,
        session: str | None = None,
        min_relevance: float | None = None,
        semantic: bool = True,
        track_access: bool = True,
    ) -> list[EpisodeHit]:
        """As Store.search_episodes: query_facts over the slots that hold episodes (or
        ``slots``), best first; ``session``: only that session's."""
        from ..storage.episodes import EpisodeHit

        limit = validation.positive_int(limit, "limit")
        session = checks.label(session, "session")
        names = validation.slots(slots) or self._episode_slots(self.clock())
        if not names:
            return []
        hits = self.query_facts(
            text,
            slots=names,
            limit=limit * 4 if session else limit,  # other sessions' are dropped after
            min_relevance=min_relevance,
            semantic=semantic,
            track_access=track_access,
        )
        found = self._episodes_by_id([hit.fact.id for hit in hits], self.clock())
        result = [
            EpisodeHit(found[hit.fact.id], hit.relevance, hit.score)
            for hit in hits
            if hit.fact.id in found and (session is None or found[hit.fact.id].session == session)
        ]
        return result[:limit]

    @server.translated
    def episode_facts(self, episode_id: str) -> list[Fact]:
        """The live facts written from the episode, in the order they were linked."""
        sql = """SELECT f.* FROM memory_provenance p JOIN memory_facts f ON f.id = p.fact_id
                 WHERE p.episode_id = %s AND (f.expires_at IS NULL OR f.expires_at > %s)
                 ORDER BY p.linked_at, f.seq"""
        found = self.conn.execute(sql, (checks.episode_id(episode_id), self.clock()))
        return [Fact.from_row(row) for row in found]

    @server.translated
    def fact_episodes(self, slot: str, key: str) -> list[Episode]:
        """The live episodes slot/key was written from, latest first."""
        slot, key = validation.slot(slot), validation.key(key)
        now = self.clock()
        row = self._row(slot, key, now)
        if row is None:
            raise InvalidInput(f"no fact {slot}/{key}")
        sql = f"""{SELECT} JOIN memory_provenance p ON p.episode_id = f.id
                  WHERE p.fact_id = %s AND {LIVE} {LATEST}"""
        return [_episode_of(found) for found in self.conn.execute(sql, (row["id"], now))]

    # -- rows -------------------------------------------------------------------------------
    def _episode(self, episode_id: str, now: int) -> Episode | None:
        row = self.conn.execute(f"{SELECT} WHERE f.id = %s AND {LIVE}", (episode_id, now))
        found = row.fetchone()
        return None if found is None else _episode_of(found)

    def _episodes_by_id(self, ids: list[str], now: int) -> dict[str, Episode]:
        """The live episodes among ``ids`` (facts that are not episodes are left out)."""
        if not ids:
            return {}
        rows = self.conn.execute(f"{SELECT} WHERE f.id = ANY(%s) AND {LIVE}", (ids, now))
        return {row["id"]: _episode_of(row) for row in rows}

    def _episode_slots(self, now: int) -> list[str]:
        found = self.conn.execute(
            "SELECT DISTINCT f.slot FROM memory_episodes e JOIN memory_facts f "
            f"ON f.id = e.fact_id WHERE {LIVE} ORDER BY f.slot",
            (now,),
        )
        return [row["slot"] for row in found]

    def _episode_row(self, fact_id: str, happened_at: int, fields: dict) -> None:
        data = fields.get("data")
        self.conn.execute(
            """INSERT INTO memory_episodes
                   (fact_id, happened_at, session, run, title, task, outcome, score, data)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
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

    def _link(self, fact_ids: list[str], episode_id: str, now: int) -> None:
        """Inside the caller's transaction: each fact came from the episode (kept once)."""
        ids = list(dict.fromkeys(fact_ids))
        if ids:
            self.conn.execute(
                "INSERT INTO memory_provenance (fact_id, episode_id, linked_at) "
                "SELECT unnest(%s::text[]), %s, %s ON CONFLICT DO NOTHING",
                (ids, episode_id, now),
            )


def _episode_of(row) -> Episode:
    from ..storage.episodes import Episode

    return Episode.from_row(list(row.values()))
