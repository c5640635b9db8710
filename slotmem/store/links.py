"""Links between facts: link, unlink, links (both directions), link_history, and ``about``
("what do we know about Marta": the facts that name it and the facts linked to those)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .. import validation
from ..errors import InvalidInput, protected_error
from ..storage import tags as fact_tags
from .core import _translated
from .reads import Reads

if TYPE_CHECKING:
    from ..reports import About, Link, LinkHistoryEntry

ABOUT_LIMIT = 20  # facts that name the subject, at most (each with its links)


class Links(Reads):
    """Typed, directed links between live facts, and their history."""

    @_translated
    def link(
        self,
        from_slot: str,
        from_key: str,
        rel: str,
        to_slot: str,
        to_key: str,
        *,
        source: str | None = None,
        allow_protected: bool = True,
    ) -> Link:
        """Link the fact from_slot/from_key to to_slot/to_key with the type ``rel`` (the
        syntax of a tag: ``lives_in``). Linking again is no error (the link keeps its time and
        source). ``allow_protected=False`` (what agents pass) refuses a link from a protected
        fact (ProtectedFact); one to a protected fact is allowed (it does not change it)."""
        ends, rel = self._ends(from_slot, from_key, rel, to_slot, to_key), validation.rel(rel)
        source = validation.source(source)
        with self.transaction():
            now = self.clock()
            start, end = self._live_rows(ends, now, "link")
            if not allow_protected and start["protected_at"] is not None:
                raise protected_error(start["slot"], start["key"], "link from")
            _fact_links().add(self.conn, start["seq"], rel, end["seq"], now, source)
            [made] = [
                link
                for link in _fact_links().of_seqs(self.conn, [start["seq"]], now)
                if link.rel == rel
                and link.from_fact.id == start["id"]
                and link.to_fact.id == end["id"]
            ]
        return made

    @_translated
    def unlink(
        self,
        from_slot: str,
        from_key: str,
        rel: str,
        to_slot: str,
        to_key: str,
        *,
        source: str | None = None,
        allow_protected: bool = True,
    ) -> bool:
        """Remove the link (into ``link_history``, reason ``unlink``, by ``source``); False
        when there was none. ``allow_protected=False`` refuses when either fact is protected:
        a link that touches a person's fact is theirs to remove."""
        ends, rel = self._ends(from_slot, from_key, rel, to_slot, to_key), validation.rel(rel)
        source = validation.source(source)
        with self.transaction():
            now = self.clock()
            start, end = self._live_rows(ends, now, "unlink")
            if not allow_protected:
                for row in (start, end):
                    if row["protected_at"] is not None:
                        raise protected_error(row["slot"], row["key"], "unlink")
            return _fact_links().remove(self.conn, start["seq"], rel, end["seq"], now, source)

    @_translated
    def links(self, slot: str, key: str) -> list[Link]:
        """The live links of slot/key: outgoing (``link.from_fact`` is it) then incoming
        (``link.to_fact`` is it), each with the fact at the other end. [] when there is no
        such fact."""
        now = self.clock()
        row = self._row(validation.slot(slot), validation.key(key), now)
        if row is None:
            return []
        return self._tagged_links(_fact_links().of_seqs(self.conn, [row["seq"]], now))

    @_translated
    def link_history(
        self, slot: str | None = None, key: str | None = None
    ) -> list[LinkHistoryEntry]:
        """Removed links, oldest first: every one, or those from or to slot/key (by name: the
        facts may be gone). ``reason``: ``unlink``, or ``deleted`` when a fact of it left
        (deleted, pruned, expired, replaced)."""
        if (slot is None) != (key is None):
            raise InvalidInput("give both slot and key, or neither")
        if slot is not None:
            slot, key = validation.slot(slot), validation.key(key)
        return _fact_links().history(self.conn, slot, key)

    @_translated
    def about(self, name: str, *, slots=None, limit: int = ABOUT_LIMIT) -> About:
        """What the memory holds about ``name`` ("Marta"): the facts whose key or value names
        it (a lexical search, best first, at most ``limit``, no access counted) and every link
        of those facts, one hop (``About.linked``: the facts at their other ends)."""
        name = validation.text(name, "name", 200, single_line=True)
        hits = self.query_facts(name, slots=slots, limit=limit, semantic=False, track_access=False)
        facts = [hit.fact for hit in hits]
        now = self.clock()
        seqs = self._seqs([fact.id for fact in facts])
        found = self._tagged_links(_fact_links().of_seqs(self.conn, seqs, now) if seqs else [])
        from ..reports import About

        return About(name, tuple(facts), tuple(found))

    # -- helpers ---------------------------------------------------------------------------
    def _tagged_links(self, found: list[Link]) -> list[Link]:
        """``found`` with the facts at both ends carrying their tags (one query)."""
        ends = fact_tags.attach(
            self.conn, [end for link in found for end in (link.from_fact, link.to_fact)]
        )
        tagged = {fact.id: fact for fact in ends}
        return [
            dataclasses.replace(
                link, from_fact=tagged[link.from_fact.id], to_fact=tagged[link.to_fact.id]
            )
            for link in found
        ]

    def _seqs(self, ids: list[str]) -> list[int]:
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        found = dict(
            self.conn.execute(f"SELECT id, seq FROM memory_facts WHERE id IN ({marks})", ids)
        )
        return [found[fact_id] for fact_id in ids if fact_id in found]

    @staticmethod
    def _ends(from_slot, from_key, rel, to_slot, to_key) -> tuple[tuple[str, str], ...]:
        validation.rel(rel)
        return (
            (validation.slot(from_slot), validation.key(from_key)),
            (validation.slot(to_slot), validation.key(to_key)),
        )

    def _live_rows(self, ends, now: int, verb: str):
        found = []
        for slot, key in ends:
            row = self._row(slot, key, now)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to {verb}")
            found.append(row)
        return found


def _fact_links():
    """storage/links.py, imported when a method first needs it (a read loads none of it)."""
    from ..storage import links

    return links
