"""PostgresStore's links between facts (``memory_fact_links`` and ``memory_link_history``,
migrations/0006_links.sql): link, unlink, links, link_history and ``about``, with
slotmem.store.links' rules. A link and its facts are read and written in one transaction that
locks both facts' rows (``FOR SHARE``: a writer changing or deleting either waits)."""

from __future__ import annotations

import dataclasses

from .. import validation
from ..errors import InvalidInput, protected_error
from ..records import FACT_COLUMNS, Fact
from ..reports import About, Link, LinkHistoryEntry
from . import server
from . import tags as fact_tags
from .policies import Policies

ABOUT_LIMIT = 20  # facts that name the subject, at most (each with its links)
_F = ", ".join(f"f.{name} AS f_{name}" for name in FACT_COLUMNS)
_T = ", ".join(f"t.{name} AS t_{name}" for name in FACT_COLUMNS)
LINKS_SQL = f"""
SELECT l.rel, l.created_at AS l_created_at, l.source AS l_source, {_F}, {_T}
FROM memory_fact_links l
JOIN memory_facts f ON f.seq = l.from_seq
JOIN memory_facts t ON t.seq = l.to_seq
WHERE l.{{column}} = ANY(%(seqs)s)
  AND (f.expires_at IS NULL OR f.expires_at > %(now)s)
  AND (t.expires_at IS NULL OR t.expires_at > %(now)s)
ORDER BY l.created_at, l.rel, f.seq, t.seq"""
HISTORY_NAMES = ", ".join(f.name for f in dataclasses.fields(LinkHistoryEntry))


class Links(Policies):
    """Typed, directed links between live facts, and their history."""

    @server.translated
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
        """As Store.link: linking again is no error (the link keeps its time and source);
        ``allow_protected=False`` refuses a link from a protected fact."""
        self._writable()
        ends, rel = _ends(from_slot, from_key, rel, to_slot, to_key), validation.rel(rel)
        source = validation.source(source)
        with self.conn.transaction():
            now = self.clock()
            start, end = self._live_rows(ends, now, "link")
            if not allow_protected and start["protected_at"] is not None:
                raise protected_error(start["slot"], start["key"], "link from")
            self.conn.execute(
                """INSERT INTO memory_fact_links (from_seq, rel, to_seq, created_at, source)
                   VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING""",
                (start["seq"], rel, end["seq"], now, source),
            )
            [made] = [
                link
                for link in self._of_seqs([start["seq"]], now)
                if link.rel == rel
                and link.from_fact.id == start["id"]
                and link.to_fact.id == end["id"]
            ]
        return made

    @server.translated
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
        """As Store.unlink: the link into ``link_history`` (reason ``unlink``, by
        ``source``); False when there was none. ``allow_protected=False`` refuses when either
        fact is protected."""
        self._writable()
        ends, rel = _ends(from_slot, from_key, rel, to_slot, to_key), validation.rel(rel)
        source = validation.source(source)
        with self.conn.transaction():
            now = self.clock()
            start, end = self._live_rows(ends, now, "unlink")
            if not allow_protected:
                for row in (start, end):
                    if row["protected_at"] is not None:
                        raise protected_error(row["slot"], row["key"], "unlink")
            gone = self.conn.execute(
                """DELETE FROM memory_fact_links WHERE from_seq = %s AND rel = %s AND to_seq = %s
                   RETURNING created_at, source""",
                (start["seq"], rel, end["seq"]),
            ).fetchone()
            if gone is None:
                return False
            self.conn.execute(
                f"INSERT INTO memory_link_history ({HISTORY_NAMES}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 'unlink', %s)",
                (start["slot"], start["key"], rel, end["slot"], end["key"], gone["created_at"],
                 gone["source"], now, source),
            )  # fmt: skip
            return True

    @server.translated
    def links(self, slot: str, key: str) -> list[Link]:
        """As Store.links: outgoing then incoming live links of slot/key ([] when there is no
        such fact)."""
        now = self.clock()
        row = self._row(validation.slot(slot), validation.key(key), now)
        if row is None:
            return []
        return self._tagged(self._of_seqs([row["seq"]], now))

    @server.translated
    def link_history(
        self, slot: str | None = None, key: str | None = None
    ) -> list[LinkHistoryEntry]:
        """As Store.link_history: removed links, oldest first, all or those of slot/key."""
        if (slot is None) != (key is None):
            raise InvalidInput("give both slot and key, or neither")
        where = ""
        params: tuple = ()
        if slot is not None:
            slot, key = validation.slot(slot), validation.key(key)
            where = "WHERE (from_slot = %s AND from_key = %s) OR (to_slot = %s AND to_key = %s)"
            params = (slot, key, slot, key)
        rows = self.conn.execute(
            f"SELECT {HISTORY_NAMES} FROM memory_link_history {where} ORDER BY hid", params
        )
        return [LinkHistoryEntry(**row) for row in rows]

    @server.translated
    def about(self, name: str, *, slots=None, limit: int = ABOUT_LIMIT) -> About:
        """As Store.about: the facts that name ``name`` (a lexical search, no access counted)
        and every link of those facts, one hop."""
        name = validation.text(name, "name", 200, single_line=True)
        hits = self.query_facts(name, slots=slots, limit=limit, semantic=False, track_access=False)
        facts = [hit.fact for hit in hits]
        now = self.clock()
        found = self.conn.execute(
            "SELECT id, seq FROM memory_facts WHERE id = ANY(%s)", ([f.id for f in facts],)
        ).fetchall()
        seq_of = {row["id"]: row["seq"] for row in found}
        seqs = [seq_of[fact.id] for fact in facts if fact.id in seq_of]
        return About(name, tuple(facts), tuple(self._tagged(self._of_seqs(seqs, now))))

    # -- helpers ---------------------------------------------------------------------------
    def _of_seqs(self, seqs: list[int], now: int) -> list[Link]:
        """The live links from or to ``seqs``: outgoing first, then incoming, each once."""
        found: dict[tuple, Link] = {}
        if not seqs:
            return []
        for column in ("from_seq", "to_seq"):
            sql = LINKS_SQL.format(column=column)
            for row in self.conn.execute(sql, {"seqs": seqs, "now": now}):
                link = _link(row)
                found.setdefault((link.from_fact.id, link.rel, link.to_fact.id), link)
        return list(found.values())

    def _tagged(self, found: list[Link]) -> list[Link]:
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

    def _live_rows(self, ends, now: int, verb: str):
        """Both facts' live rows, locked FOR SHARE in seq order (as upsert_many locks its
        rows): a writer changing or deleting either waits for this transaction."""
        found = []
        for slot, key in ends:
            row = self._row(slot, key, now)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to {verb}")
            found.append(row["seq"])
        locked = self.conn.execute(
            "SELECT * FROM memory_facts WHERE seq = ANY(%s) ORDER BY seq FOR SHARE", (found,)
        ).fetchall()
        rows = {row["seq"]: row for row in locked}
        for (slot, key), seq in zip(ends, found):
            row = rows.get(seq)
            if row is None or (row["expires_at"] is not None and row["expires_at"] <= now):
                raise InvalidInput(f"no fact {slot}/{key} to {verb}")
        return [rows[seq] for seq in found]


def _ends(from_slot, from_key, rel, to_slot, to_key) -> tuple[tuple[str, str], ...]:
    validation.rel(rel)
    return (
        (validation.slot(from_slot), validation.key(from_key)),
        (validation.slot(to_slot), validation.key(to_key)),
    )


def _link(row) -> Link:
    def fact(prefix: str) -> Fact:
        return Fact(*(row[f"{prefix}_{name}"] for name in FACT_COLUMNS))

    return Link(fact("f"), row["rel"], fact("t"), row["l_created_at"], row["l_source"])
