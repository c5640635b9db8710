"""PostgresStore's retrieval log (``memory_retrievals`` and ``memory_retrieval_items``,
migrations/0007_retrievals.sql): record_retrieval, retrievals, get_retrieval and
prune_retrievals with slotmem.store.episodes' validation and records
(slotmem.storage.retrievals.Retrieval); an item is an ``episode`` when its fact is one.
The log moves with an export of the whole memory only on a file for now."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .. import validation
from ..storage import episode_checks as checks
from . import server
from .core import Core

if TYPE_CHECKING:
    from ..storage.retrievals import Retrieval

USED = "id IN (SELECT retrieval_id FROM memory_retrieval_items WHERE fact_id = %s AND included)"
ITEM_COLUMNS = "position, fact_id, kind, slot, key, value, relevance, included, reason"


class Retrievals(Core):
    """What recorded context builds put into prompts."""

    @server.translated
    def record_retrieval(
        self,
        query: str,
        items: Iterable[Mapping],
        *,
        session: str | None = None,
        run: str | None = None,
        tokens: int = 0,
    ) -> Retrieval:
        """As Store.record_retrieval: log what a context for ``query`` considered, ``items``
        in the order of the prompt (``id``, ``slot``, ``key``, ``value``, ``included``, and
        optionally ``relevance`` and ``reason``)."""
        self._writable()
        query = validation.text(query, "query", 4000)
        checked = [checks.retrieval_item(number, item) for number, item in enumerate(items)]
        tokens = validation.count(tokens, "tokens")
        session, run = checks.label(session, "session"), checks.label(run, "run")
        with self.conn.transaction():
            retrieval_id = self.conn.execute(
                "INSERT INTO memory_retrievals (at, query, session, run, tokens) "
                "VALUES (%s, %s, %s, %s, %s) RETURNING id",
                (self.clock(), query, session, run, tokens),
            ).fetchone()["id"]
            episodes = {
                row["fact_id"]
                for row in self.conn.execute(
                    "SELECT fact_id FROM memory_episodes WHERE fact_id = ANY(%s)",
                    ([item[0] for item in checked],),
                )
            }  # an item is an ``episode`` when its fact is one, as on the file
            rows = [
                (retrieval_id, position, item[0], "episode" if item[0] in episodes else "fact",
                 *item[1:])
                for position, item in enumerate(checked, 1)
            ]  # fmt: skip
            with self.conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO memory_retrieval_items (retrieval_id, {ITEM_COLUMNS}) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    rows,
                )
            [retrieval] = self._listed(ids=[retrieval_id])
        return retrieval

    @server.translated
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
        """As Store.retrievals: recorded context builds, latest first."""
        start, stop = validation.window(since, until, self.clock())
        return self._listed(
            session=checks.label(session, "session"),
            run=checks.label(run, "run"),
            fact_id=None if fact_id is None else checks.episode_id(fact_id),
            since=start,
            until=stop,
            limit=None if limit is None else validation.count(limit, "limit"),
        )

    @server.translated
    def get_retrieval(self, retrieval_id: int) -> Retrieval | None:
        """The recorded context build with this id, or None."""
        found = self._listed(ids=[validation.positive_int(retrieval_id, "retrieval id")])
        return found[0] if found else None

    @server.translated
    def prune_retrievals(self, before) -> int:
        """As Store.prune_retrievals: forget the recorded builds made before ``before``."""
        self._writable()
        moment = validation.moment(before, self.clock(), "before")
        with self.conn.transaction():
            gone = self.conn.execute("DELETE FROM memory_retrievals WHERE at < %s", (moment,))
            return gone.rowcount

    def _listed(self, *, ids=None, session=None, run=None, fact_id=None, since=None,
                until=None, limit=None) -> list[Retrieval]:  # fmt: skip
        from ..storage.retrievals import Retrieval, RetrievalItem

        tests: list[str] = []
        params: list = []
        for test, value in (
            ("id = ANY(%s)", None if ids is None else list(ids)),
            ("session = %s", session),
            ("run = %s", run),
            ("at >= %s", since),
            ("at < %s", until),
            (USED, fact_id),
        ):  # fmt: skip
            if value is not None:
                tests.append(test)
                params.append(value)
        where = f"WHERE {' AND '.join(tests)}" if tests else ""
        sql = f"SELECT id, at, query, session, run, tokens FROM memory_retrievals {where} "
        sql += "ORDER BY at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        found = self.conn.execute(sql, params).fetchall()
        items: dict[int, list] = {row["id"]: [] for row in found}
        if found:
            rows = self.conn.execute(
                f"SELECT retrieval_id, {ITEM_COLUMNS} FROM memory_retrieval_items "
                "WHERE retrieval_id = ANY(%s) ORDER BY retrieval_id, position",
                (list(items),),
            )
            for row in rows:
                items[row.pop("retrieval_id")].append(RetrievalItem(**row))
        return [
            Retrieval(r["id"], r["at"], r["query"], r["session"], r["run"], r["tokens"],
                      tuple(items[r["id"]]))
            for r in found
        ]  # fmt: skip
