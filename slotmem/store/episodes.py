"""Episodes beside facts: record what happened (a run, an exchange) with the facts written from
it, find episodes by meaning, follow provenance both ways, and keep the log of what context
builds put into prompts (slotmem.storage.episodes, slotmem.storage.retrievals)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .. import validation
from ..errors import InvalidInput, protected_error
from ..records import Fact
from ..storage import episode_checks as checks
from .core import _translated
from .reads import Reads
from .writes import Writes, _changed

if TYPE_CHECKING:
    from ..storage.episodes import Episode, EpisodeHit
    from ..storage.retrievals import Retrieval

EPISODES_SLOT = checks.EPISODES_SLOT
MAX_LABEL_CHARS = checks.MAX_LABEL_CHARS
MAX_DATA_CHARS = checks.MAX_DATA_CHARS
FACT_FIELDS = checks.FACT_FIELDS


class Episodes(Writes, Reads):
    """Episodes, their provenance and the retrieval log."""

    @_translated
    def record_episode(
        self,
        text: str,
        *,
        slot: str = EPISODES_SLOT,
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
        """Record what happened: ``text`` (a run's narrative, a question and its answer: what
        both search legs find) in ``slot`` under ``key`` (default: a new key from the title,
        so each call is a new episode; a key given again updates that episode, the old text
        going to history), with when it happened (``happened_at``, default now), its
        ``session``, ``run``, ``title``, ``task``, ``outcome``, ``score`` (any scale) and other
        ``data`` (a JSON object). ``facts`` (items as ``upsert_many`` takes them) are written in
        the same transaction and linked to the episode (their source, unless given, is
        ``episode:<id>``, which ``undo_flush`` takes). Feedback is ``rate(slot, key, ...)``.

        An episode is what an agent's run wrote: neither it nor its facts may change a fact a
        person protected (its value or its expiry: ProtectedFact, nothing written) unless
        ``allow_protected``."""
        now = self.clock()
        title = _label(title, "title")
        fields = checks.fields(title, task, session, run, outcome, score, data)
        when = now if happened_at is None else validation.moment(happened_at, now, "happened_at")
        slot = validation.slot(slot)
        key = validation.key(key) if key is not None else _new_key(title)
        item = (
            *validation.fact(slot, key, validation.text(text, "text", 4000), confidence, source),
            None,
        )
        wanted = _fact_items(facts, now)
        vectors = self.semantic.prepare([item[1:3], *(fact[1:3] for fact in wanted)])
        with self.transaction():
            guard = not allow_protected
            result = self._write(item, now, guard=guard)
            if guard and result.fact.protected:  # the same text: it would become an episode
                raise protected_error(slot, result.fact.key, "record an episode over")
            episode_id = result.fact.id
            _rows().write(self.conn, episode_id, when, fields)
            written = [(*fact[:4], fact[4] or f"episode:{episode_id}", fact[5]) for fact in wanted]
            results = self._write_all(written, now, guard=guard)
            _rows().link(self.conn, [r.fact.id for r in results], episode_id, now)
            self.semantic.write(vectors, _changed([result, *results]))
            episode = _rows().get(self.conn, episode_id, now)
        assert episode is not None
        return episode

    @_translated
    def link_facts(self, episode_id: str, facts: Iterable) -> list[Fact]:
        """Record that ``facts`` (Facts, or (slot, key) pairs) were written from the episode
        (a flush of its transcript, say). Every fact must exist; nothing is linked otherwise."""
        episode_id = _id(episode_id)
        now = self.clock()
        wanted = []
        for fact in facts:
            slot, key = (fact.slot, fact.key) if isinstance(fact, Fact) else _pair(fact)
            wanted.append((validation.slot(slot), validation.key(key)))
        with self.transaction():
            if _rows().get(self.conn, episode_id, now) is None:
                raise InvalidInput(f"no episode {episode_id}")
            found = []
            for slot, key in wanted:
                row = self._row(slot, key, now)
                if row is None:
                    raise InvalidInput(f"no fact {slot}/{key} to link to episode {episode_id}")
                found.append(Fact.from_row(row))
            _rows().link(self.conn, [fact.id for fact in found], episode_id, now)
        return found

    @_translated
    def get_episode(self, episode_id: str) -> Episode | None:
        """The episode with this id (the id of its fact), or None."""
        return _rows().get(self.conn, _id(episode_id), self.clock())

    @_translated
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
        """Episodes, latest first (by when they happened), of one slot or several (None: all);
        ``session``/``run``: only theirs; ``since``/``until``: only those that happened in that
        window (``validation.window``)."""
        now = self.clock()
        start, stop = validation.window(since, until, now)
        return _rows().listed(
            self.conn,
            now=now,
            slots=validation.slots(slot),
            session=_label(session, "session"),
            run=_label(run, "run"),
            since=start,
            until=stop,
            limit=None if limit is None else validation.count(limit, "limit"),
        )

    @_translated
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
        """Episodes matching ``text`` by words and, when the file has semantic search on, by
        meaning (``query_facts`` over the slots that hold episodes, or ``slots``), best
        first; ``session``: only that session's."""
        limit = validation.positive_int(limit, "limit")
        session = _label(session, "session")
        names = validation.slots(slots) or _rows().slots(self.conn, self.clock())
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
        found = _rows().by_ids(self.conn, [hit.fact.id for hit in hits], self.clock())
        result = [
            _rows().EpisodeHit(found[hit.fact.id], hit.relevance, hit.score)
            for hit in hits
            if hit.fact.id in found and (session is None or found[hit.fact.id].session == session)
        ]
        return result[:limit]

    @_translated
    def episode_facts(self, episode_id: str) -> list[Fact]:
        """The facts written from the episode ("which facts came from this run?")."""
        return _rows().facts_of(self.conn, _id(episode_id), self.clock())

    @_translated
    def fact_episodes(self, slot: str, key: str) -> list[Episode]:
        """The episodes slot/key was written from, latest first ("which run did this fact
        come from?")."""
        slot, key = validation.slot(slot), validation.key(key)
        now = self.clock()
        row = self._row(slot, key, now)
        if row is None:
            raise InvalidInput(f"no fact {slot}/{key}")
        return _rows().episodes_of(self.conn, row["id"], now)

    # -- the retrieval log ----------------------------------------------------------------------
    @_translated
    def record_retrieval(
        self,
        query: str,
        items: Iterable[Mapping],
        *,
        session: str | None = None,
        run: str | None = None,
        tokens: int = 0,
    ) -> Retrieval:
        """Log what a context for ``query`` considered: ``items`` in the order of the prompt,
        each a mapping with ``id`` (the fact's), ``slot``, ``key``, ``value`` (as the prompt had
        it), ``included`` and optionally ``relevance`` and ``reason`` (why it was cut).
        ``slotmem.agents.context.build(..., record=True)`` calls this."""
        query = validation.text(query, "query", 4000)
        checked = [_item(number, item) for number, item in enumerate(items)]
        tokens = validation.count(tokens, "tokens")
        session, run = _label(session, "session"), _label(run, "run")
        with self.transaction():
            retrieval_id = _log().record(
                self.conn, query, checked, now=self.clock(), session=session, run=run, tokens=tokens
            )
            [retrieval] = _log().listed(self.conn, ids=[retrieval_id])
        return retrieval

    @_translated
    def retrievals(
        self,
        *,
        session: str | None = None,
        run: str | None = None,
        fact_id: str | None = None,
        since=None,
        until=None,
        limit: int | None = 20,
    ) -> list[Retrieval]:
        """Recorded context builds, latest first, each with what it put into the prompt and
        what it cut: of a ``session`` or ``run``, those whose prompt had the fact or episode
        ``fact_id``, those made ``since``/``until``."""
        start, stop = validation.window(since, until, self.clock())
        return _log().listed(
            self.conn,
            session=_label(session, "session"),
            run=_label(run, "run"),
            fact_id=None if fact_id is None else _id(fact_id),
            since=start,
            until=stop,
            limit=None if limit is None else validation.count(limit, "limit"),
        )

    @_translated
    def get_retrieval(self, retrieval_id: int) -> Retrieval | None:
        """The recorded context build with this id, or None."""
        found = _log().listed(
            self.conn, ids=[validation.positive_int(retrieval_id, "retrieval id")]
        )
        return found[0] if found else None

    @_translated
    def prune_retrievals(self, before) -> int:
        """Forget the recorded context builds made before ``before`` (a moment, or a duration
        before now: ``"30d"``). Returns how many. The facts and episodes are left alone."""
        moment = validation.moment(before, self.clock(), "before")
        with self.transaction():
            return _log().forget(self.conn, moment)


def _rows():
    """slotmem.storage.episodes, imported on first use (a search or a context needs none of it)."""
    from ..storage import episodes

    return episodes


def _log():
    """slotmem.storage.retrievals (the retrieval log), imported on first use."""
    from ..storage import retrievals

    return retrievals


_label = checks.label
_id = checks.episode_id
_new_key = checks.new_key
_pair = checks.pair
_fact_items = checks.fact_items
_item = checks.retrieval_item
