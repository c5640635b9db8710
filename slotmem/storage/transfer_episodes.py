"""The records of an export beside facts (slotmem.storage.transfer): episodes, their provenance,
the retrieval log and the flusher's cursors, each a record of its own ``type``.

- ``episode``: the ``memory_episodes`` row of a fact (its text is the fact, exported as one):
  ``fact_id``, ``happened_at``, ``session``, ``run``, ``title``, ``task``, ``outcome``,
  ``score``, ``data`` (a JSON object).
- ``provenance``: a link, ``fact_id``, ``episode_id``, ``linked_at``.
- ``retrieval``: a recorded context build, ``id``, ``at``, ``query``, ``session``, ``run``,
  ``tokens``, and its ``items`` (``position``, ``fact_id``, ``kind``, ``slot``, ``key``,
  ``value``, ``relevance``, ``included``, ``reason``) in the order of the prompt.
- ``cursor``: how far the flusher read a conversation, ``source``, ``messages``,
  ``prefix_hash``, ``flushed_at``.

Facts are referred to by id, as history and feedback are: an imported fact keeps its id, or
takes the id of the fact of the same slot and key here (``ids``), and the links, episode rows
and log items follow it. An export of one slot holds the episode rows and links of its facts;
the retrieval log and the cursors belong to the whole file and go with a whole-file export.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .. import validation
from ..errors import InvalidInput

KINDS = ("episode", "provenance", "retrieval", "cursor")
EPISODE_FIELDS = (
    "fact_id", "happened_at", "session", "run", "title", "task", "outcome", "score", "data",
)  # fmt: skip
LINK_FIELDS = ("fact_id", "episode_id", "linked_at")
RETRIEVAL_FIELDS = ("id", "at", "query", "session", "run", "tokens", "items")
ITEM_FIELDS = (
    "position", "fact_id", "kind", "slot", "key", "value", "relevance", "included", "reason",
)  # fmt: skip
CURSOR_FIELDS = ("source", "messages", "prefix_hash", "flushed_at")
MAX_LABEL_CHARS = 200  # as slotmem.store.episodes checks a title, session, run, outcome
MAX_TASK_CHARS = 4000
MAX_DATA_CHARS = 10_000
MAX_ITEM_CHARS = 20_000
MAX_MS = 253_402_300_799_999
MAX_INTEGER = 2**63 - 1


@dataclass
class Records:
    """What a file holds of these kinds, checked, each with its line number."""

    episodes: list[tuple[int, tuple]] = field(default_factory=list)
    links: list[tuple[int, tuple]] = field(default_factory=list)
    retrievals: list[tuple[int, tuple, list[tuple]]] = field(default_factory=list)
    cursors: list[tuple[int, tuple]] = field(default_factory=list)


# -- export ------------------------------------------------------------------------------------
def export(conn, slot: str | None) -> Iterator[dict]:
    """The records of ``slot`` (None: of the whole file), oldest first."""
    ids = ""
    params: tuple = ()
    if slot:
        ids = (
            "(SELECT id FROM memory_facts WHERE slot = ?"
            " UNION SELECT fact_id FROM memory_fact_history WHERE slot = ?)"
        )
        params = (slot, slot)
    where = f"WHERE fact_id IN {ids}" if slot else ""
    for row in conn.execute(
        f"SELECT {', '.join(EPISODE_FIELDS)} FROM memory_episodes {where} ORDER BY happened_at, "
        "fact_id",
        params,
    ):
        record = dict(zip(EPISODE_FIELDS, row))
        record["data"] = None if record["data"] is None else json.loads(record["data"])
        yield {"type": "episode", **record}
    where = f"WHERE fact_id IN {ids} OR episode_id IN {ids}" if slot else ""
    for row in conn.execute(
        f"SELECT {', '.join(LINK_FIELDS)} FROM memory_provenance {where} "
        "ORDER BY linked_at, episode_id, fact_id",
        params * 2,
    ):
        yield {"type": "provenance", **dict(zip(LINK_FIELDS, row))}
    if slot:
        return
    names = ", ".join(RETRIEVAL_FIELDS[:-1])
    for row in conn.execute(f"SELECT {names} FROM memory_retrievals ORDER BY id").fetchall():
        items = [
            dict(zip(ITEM_FIELDS, item))
            for item in conn.execute(
                f"SELECT {', '.join(ITEM_FIELDS)} FROM memory_retrieval_items "
                "WHERE retrieval_id = ? ORDER BY position",
                (row[0],),
            )
        ]
        for item in items:
            item["included"] = bool(item["included"])
        yield {"type": "retrieval", **dict(zip(RETRIEVAL_FIELDS, row)), "items": items}
    for row in conn.execute(
        f"SELECT {', '.join(CURSOR_FIELDS)} FROM memory_flush_cursors ORDER BY source"
    ):
        yield {"type": "cursor", **dict(zip(CURSOR_FIELDS, row))}


# -- reading -----------------------------------------------------------------------------------
def parse(kind: str, record: dict, number: int, into: Records) -> dict[str, str | None]:
    """Check a record of ``kind`` (one of KINDS) and keep it in ``into``; raises InvalidInput
    naming the field. Returns the texts an agent can read, by field, for the write scan."""
    if kind == "episode":
        check_fields(record, EPISODE_FIELDS, ("fact_id", "happened_at"))
        data = _data(record.get("data"))
        episode = (
            _id(record["fact_id"], "fact_id"),
            _ms(record, "happened_at"),
            _label(record.get("session"), "session"),
            _label(record.get("run"), "run"),
            _label(record.get("title"), "title"),
            _optional_text(record.get("task"), "task", MAX_TASK_CHARS),
            _label(record.get("outcome"), "outcome"),
            _score(record.get("score")),
            data,
        )
        into.episodes.append((number, episode))
        names = ("session", "run", "title", "task", "outcome")
        return dict(zip(names, episode[2:7])) | {"data": data}
    if kind == "provenance":
        check_fields(record, LINK_FIELDS, LINK_FIELDS)
        link = (
            _id(record["fact_id"], "fact_id"),
            _id(record["episode_id"], "episode_id"),
            _ms(record, "linked_at"),
        )
        into.links.append((number, link))
        return {}
    if kind == "retrieval":
        check_fields(record, RETRIEVAL_FIELDS, ("at", "query", "tokens", "items"))
        retrieval_id = record.get("id")
        retrieval = (
            None if retrieval_id is None else _integer(retrieval_id, "id", 1),
            _ms(record, "at"),
            validation.text(record["query"], "query", MAX_TASK_CHARS),
            _label(record.get("session"), "session"),
            _label(record.get("run"), "run"),
            _integer(record["tokens"], "tokens", 0),
        )
        items = _items(record["items"])
        into.retrievals.append((number, retrieval, items))
        texts: dict[str, str | None] = {
            "query": retrieval[2], "session": retrieval[3], "run": retrieval[4],
        }  # fmt: skip
        for item in items:
            position = item[0]
            texts |= {
                f"item {position} key": item[4],
                f"item {position} value": item[5],
                f"item {position} reason": item[8],
            }
        return texts
    check_fields(record, CURSOR_FIELDS, CURSOR_FIELDS)
    prefix_hash = record["prefix_hash"]
    if not isinstance(prefix_hash, str) or not re.fullmatch(r"[0-9a-f]{64}", prefix_hash):
        raise InvalidInput(f"prefix_hash must be 64 hex digits (a SHA-256), not {prefix_hash!r}")
    cursor = (
        _source(record["source"]),
        _integer(record["messages"], "messages", 0),
        prefix_hash,
        _ms(record, "flushed_at"),
    )
    into.cursors.append((number, cursor))
    return {"source": cursor[0]}


def _items(items) -> list[tuple]:
    if not isinstance(items, list):
        raise InvalidInput(f"items must be a list, not {type(items).__name__}")
    checked, positions = [], set()
    for number, item in enumerate(items, 1):
        try:
            if not isinstance(item, dict):
                raise InvalidInput("must be an object")
            check_fields(item, ITEM_FIELDS, ITEM_FIELDS[:6] + ("included",))
            kind, included, reason = item["kind"], item["included"], item.get("reason")
            if kind not in ("fact", "episode"):
                raise InvalidInput(f"kind must be fact or episode, not {kind!r}")
            if not isinstance(included, bool):
                raise InvalidInput(f"included must be true or false, not {included!r}")
            position = _integer(item["position"], "position", 1)
            if position in positions:
                raise InvalidInput(f"position {position} is also an earlier item's")
            positions.add(position)
            checked.append(
                (
                    position,
                    _id(item["fact_id"], "fact_id"),
                    kind,
                    validation.slot(item["slot"]),
                    validation.key(item["key"]),
                    validation.text(item["value"], "value", MAX_ITEM_CHARS),
                    validation.relevance(item.get("relevance"), "relevance"),
                    included,
                    _label(reason, "reason"),
                )
            )
        except InvalidInput as e:
            raise InvalidInput(f"item {number}: {e}") from None
    return checked


def _source(value) -> str:
    """A cursor's source as Store.advance_flush_cursor takes it (not stripped): a name, not
    empty."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"source must be a non-empty name, not {_shown(value)}")
    return value


def check_fields(record: dict, allowed: Iterable[str], required: Iterable[str]) -> None:
    """No field but ``allowed``, every one of ``required`` (transfer.py's records too)."""
    extra = set(record) - set(allowed)
    if extra:
        raise InvalidInput(f"unknown field(s) {', '.join(sorted(extra))}")
    missing = [name for name in required if name not in record]
    if missing:
        raise InvalidInput(f"missing field(s) {', '.join(missing)}")


def _id(value, what: str) -> str:
    return validation.text(value, what, 64, single_line=True)


def _label(value, what: str) -> str | None:
    return (
        None if value is None else validation.text(value, what, MAX_LABEL_CHARS, single_line=True)
    )


def _optional_text(value, what: str, limit: int) -> str | None:
    return None if value is None else validation.text(value, what, limit)


def _integer(value, what: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_INTEGER:
        raise InvalidInput(f"{what} must be an integer from {least}, not {_shown(value)}")
    return value


def _ms(record: dict, name: str) -> int:
    value = record.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MS:
        raise InvalidInput(
            f"{name} must be milliseconds since the epoch, up to the year 9999, not {_shown(value)}"
        )
    return value


def _score(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(f"score must be a finite number, not {_shown(value)}")
    return float(value)


def _data(value) -> str | None:
    """The data as stored: JSON text of an object (as slotmem.storage.episodes writes it)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput(f"data must be a JSON object, not {type(value).__name__}")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError as e:
        raise InvalidInput(f"data must be a JSON object: {e}") from None
    if len(text) > MAX_DATA_CHARS:
        raise InvalidInput(f"data is {len(text)} characters as JSON; the limit is {MAX_DATA_CHARS}")
    return text


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


# -- importing ---------------------------------------------------------------------------------
def apply(conn, records: Records, mode: str, ids: dict, won: set, dry_run: bool) -> dict[str, int]:
    """Import ``records`` inside the caller's transaction; ``ids`` maps an imported fact id to
    the id it has here, ``won`` holds the imported fact ids whose fact the import wrote (added
    or updated). Returns how many rows of each kind were written (``dry_run``: would be).

    - An episode row: ``replace`` sets the file's; ``merge`` sets it where there is none here
      or where the file's fact won (it is the episode as the file has it); ``skip-existing``
      only where there is none here.
    - Links and retrievals are added unless the same is there, in every mode (as history):
      they record what happened, and ``replace`` removes none.
    - A cursor: ``replace`` sets the file's; ``merge`` sets it where there is none here or the
      file's was flushed later; ``skip-existing`` only where there is none here.
    """
    return {
        "episodes": _episodes(conn, records, mode, ids, won, dry_run),
        "provenance links": _links(conn, records, ids, dry_run),
        "retrievals": _retrievals(conn, records, ids, dry_run),
        "flush cursors": _cursors(conn, records, mode, dry_run),
    }


def _episodes(conn, records: Records, mode: str, ids: dict, won: set, dry_run: bool) -> int:
    done = 0
    for _, (fact_id, *fields) in records.episodes:
        here_id = ids.get(fact_id, fact_id)
        row = conn.execute(
            f"SELECT {', '.join(EPISODE_FIELDS[1:])} FROM memory_episodes WHERE fact_id = ?",
            (here_id,),
        ).fetchone()
        there = None if row is None else tuple(row)
        if there == tuple(fields):
            continue
        if there is not None and (
            mode == "skip-existing" or mode == "merge" and fact_id not in won
        ):
            continue
        done += 1
        if not dry_run:
            conn.execute(
                "INSERT OR REPLACE INTO memory_episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (here_id, *fields),
            )
    return done


def _links(conn, records: Records, ids: dict, dry_run: bool) -> int:
    new: dict[tuple[str, str], int] = {}
    for _, (fact_id, episode_id, linked_at) in records.links:
        pair = (ids.get(fact_id, fact_id), ids.get(episode_id, episode_id))
        there = conn.execute(
            "SELECT 1 FROM memory_provenance WHERE fact_id = ? AND episode_id = ?", pair
        ).fetchone()
        if there is None:
            new.setdefault(pair, linked_at)
    if not dry_run:
        conn.executemany(
            "INSERT INTO memory_provenance (fact_id, episode_id, linked_at) VALUES (?, ?, ?)",
            [(*pair, linked_at) for pair, linked_at in new.items()],
        )
    return len(new)


def _retrievals(conn, records: Records, ids: dict, dry_run: bool) -> int:
    done = 0
    for _, (retrieval_id, *fields), items in records.retrievals:
        items = [(i[0], ids.get(i[1], i[1]), *i[2:]) for i in items]
        if _logged(conn, fields, items):
            continue
        done += 1
        if dry_run:
            continue
        taken = (
            retrieval_id is None
            or conn.execute(
                "SELECT 1 FROM memory_retrievals WHERE id = ?", (retrieval_id,)
            ).fetchone()
        )
        cursor = conn.execute(
            "INSERT INTO memory_retrievals (id, at, query, session, run, tokens) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (None if taken else retrieval_id, *fields),
        )
        conn.executemany(
            f"INSERT INTO memory_retrieval_items (retrieval_id, {', '.join(ITEM_FIELDS)}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(cursor.lastrowid, *item[:7], int(item[7]), item[8]) for item in items],
        )
    return done


def _logged(conn, fields: list, items: list[tuple]) -> bool:
    """Is this retrieval (the same moment, query, session, run, tokens and items) logged here?"""
    for (found,) in conn.execute(
        "SELECT id FROM memory_retrievals WHERE at = ? AND query = ? AND session IS ? "
        "AND run IS ? AND tokens = ?",
        fields,
    ).fetchall():
        here = [
            (*row[:7], bool(row[7]), row[8])
            for row in conn.execute(
                f"SELECT {', '.join(ITEM_FIELDS)} FROM memory_retrieval_items "
                "WHERE retrieval_id = ? ORDER BY position",
                (found,),
            )
        ]
        if here == sorted(items):
            return True
    return False


def _cursors(conn, records: Records, mode: str, dry_run: bool) -> int:
    done = 0
    for _, cursor in records.cursors:
        row = conn.execute(
            f"SELECT {', '.join(CURSOR_FIELDS)} FROM memory_flush_cursors WHERE source = ?",
            (cursor[0],),
        ).fetchone()
        there = None if row is None else tuple(row)
        if there == cursor:
            continue
        if there is not None and (
            mode == "skip-existing" or mode == "merge" and cursor[3] <= there[3]
        ):
            continue
        done += 1
        if not dry_run:
            conn.execute(
                "INSERT OR REPLACE INTO memory_flush_cursors "
                f"({', '.join(CURSOR_FIELDS)}) VALUES (?, ?, ?, ?)",
                cursor,
            )
    return done
