"""Export and import on PostgreSQL, in the file's JSONL format (slotmem.storage.transfer).

An export is the file's: a header, the facts (every column, their tags), their history and
feedback, the end marker with its count, checksum and HMAC under this memory's export key. An
import is read
and checked by the file's own reader (``transfer.read``: the write scan, the end marker, one bad
line refuses the file) and applied here with the file's rules (``transfer.apply``'s merge,
replace and skip-existing; protected facts kept from a file that is not the memory's own).
Slot policies (and the default policy), the flusher's cursors and links go both ways, with the
file's rules (slotmem.storage.transfer._set_policies, transfer_episodes' cursors,
transfer_links.apply), and so do episodes and their provenance (transfer_episodes.apply's
rules), and, with a whole-memory export, the retrieval log (transfer_episodes' retrievals: one
logged the same is not added again, in every mode)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from collections.abc import Iterator

from .. import validation
from ..errors import InvalidInput
from ..records import FACT_COLUMNS, Fact, SlotPolicy
from ..reports import Change, ChangeReport
from ..storage import retention, transfer_episodes, transfer_links
from ..storage import transfer as file_transfer
from . import tags as fact_tags
from . import tokens
from .writes import INSERT_SQL, jsonb

HISTORY_FIELDS = file_transfer.rows.HISTORY_FIELDS
FEEDBACK_FIELDS = file_transfer.FEEDBACK_FIELDS
KEPT = ", ".join(name for name in FACT_COLUMNS if name != "id")
POLICY_FIELDS = file_transfer.POLICY_FIELDS
CURSOR_FIELDS = ("source", "messages", "prefix_hash", "flushed_at")
LINK_FIELDS = transfer_links.FIELDS
EPISODE_FIELDS = transfer_episodes.EPISODE_FIELDS
PROVENANCE_FIELDS = transfer_episodes.LINK_FIELDS
RETRIEVAL_FIELDS = transfer_episodes.RETRIEVAL_FIELDS
ITEM_FIELDS = transfer_episodes.ITEM_FIELDS


def export_key(conn) -> bytes:
    """This memory's secret that signs its exports (made on first use)."""
    conn.execute(
        "INSERT INTO memory_settings (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
        (file_transfer.KEY_SETTING, secrets.token_hex(32)),
    )
    row = conn.execute(
        "SELECT value FROM memory_settings WHERE name = %s", (file_transfer.KEY_SETTING,)
    ).fetchone()
    return bytes.fromhex(row["value"])


def export(conn, slot: str | None, now: int) -> Iterator[dict]:
    header = {"slotmem": "export", "format": file_transfer.FORMAT, "slot": slot, "exported_at": now}
    digest, count = hashlib.sha256(file_transfer.canonical(header)), 0
    yield header
    for record in _records(conn, slot):
        digest.update(file_transfer.canonical(record))
        count += 1
        yield record
    yield file_transfer.end_marker(count, digest.hexdigest(), export_key(conn))


def _records(conn, slot: str | None) -> Iterator[dict]:
    where, params = ("WHERE slot = %s", (slot,)) if slot else ("", ())
    columns = ", ".join(FACT_COLUMNS)
    facts = f"""SELECT {columns}, (SELECT string_agg(tag, ' ' ORDER BY tag) FROM memory_fact_tags t
                                  WHERE t.fact_seq = memory_facts.seq) AS tag_list
                FROM memory_facts {where} ORDER BY seq"""
    for row in conn.execute(facts, params):
        record = {"type": "fact", **{name: row[name] for name in FACT_COLUMNS}}
        if row["tag_list"]:  # only then, as the file's export
            record["tags"] = row["tag_list"].split(" ")
        yield record
    names = ", ".join(HISTORY_FIELDS)
    for row in conn.execute(
        f"SELECT {names} FROM memory_fact_history {where} ORDER BY hid", params
    ):
        yield {"type": "history", **{name: row[name] for name in HISTORY_FIELDS}}
    feedback_where = ""
    if slot:
        feedback_where = (
            "WHERE fact_id IN (SELECT id FROM memory_facts WHERE slot = %s"
            " UNION SELECT fact_id FROM memory_fact_history WHERE slot = %s)"
        )
    for row in conn.execute(
        f"SELECT {', '.join(FEEDBACK_FIELDS)} FROM memory_feedback {feedback_where} ORDER BY id",
        (slot, slot) if slot else (),
    ):
        yield {"type": "feedback", **{name: row[name] for name in FEEDBACK_FIELDS}}
    policy_names = ", ".join(POLICY_FIELDS)
    for row in conn.execute(
        f"SELECT {policy_names} FROM memory_slots {where} ORDER BY slot", params
    ):
        yield {"type": "policy", **{name: row[name] for name in POLICY_FIELDS}}
    if not slot:
        saved = conn.execute(
            "SELECT value FROM memory_settings WHERE name = %s", (retention.DEFAULT_SETTING,)
        ).fetchone()
        if saved is not None:
            yield {"type": "default_policy", **json.loads(saved["value"])}
    yield from _episode_records(conn, slot)
    if not slot:
        yield from _retrieval_records(conn)
        for row in conn.execute(
            f"SELECT {', '.join(CURSOR_FIELDS)} FROM memory_flush_cursors ORDER BY source"
        ):
            yield {"type": "cursor", **{name: row[name] for name in CURSOR_FIELDS}}
    link_where = "WHERE f.slot = %s AND t.slot = %s" if slot else ""
    for row in conn.execute(
        f"""SELECT f.slot AS from_slot, f.key AS from_key, l.rel, t.slot AS to_slot,
                   t.key AS to_key, l.created_at, l.source
            FROM memory_fact_links l
            JOIN memory_facts f ON f.seq = l.from_seq
            JOIN memory_facts t ON t.seq = l.to_seq
            {link_where} ORDER BY l.created_at, f.seq, l.rel, t.seq""",
        (slot, slot) if slot else (),
    ):
        yield {"type": "link", **{name: row[name] for name in LINK_FIELDS}}


def apply(conn, parsed: file_transfer.Parsed, mode: str, *, now: int) -> ChangeReport:
    """Import ``parsed`` inside the caller's transaction (which holds the memory's lock)."""
    report = ChangeReport()
    ids: dict[str, str] = {}
    won: set[str] = set()  # the imported fact ids whose fact was written
    for _, fact in parsed.facts:
        change = _import_fact(conn, fact, mode, now, ids, parsed.keeps_protected)
        report.changes.append(change)
        if change.action in ("added", "updated"):
            won.add(fact.id)
    if mode == "replace":
        report.changes += _remove_others(conn, parsed, now)
    report.records = {
        "history rows": _add_history(conn, parsed, ids),
        "feedback rows": _add_feedback(conn, parsed, ids),
        "policies": _set_policies(conn, parsed, mode),
        "episodes": _set_episodes(conn, parsed, mode, ids, won),
        "provenance links": _add_provenance(conn, parsed, ids),
        "retrievals": _add_retrievals(conn, parsed, ids),
        "flush cursors": _set_cursors(conn, parsed, mode),
        "links": _add_links(conn, parsed),
    }
    return report


def _set_policies(conn, parsed: file_transfer.Parsed, mode: str) -> int:
    """transfer._set_policies' rules: ``merge`` and ``replace`` set the file's policies;
    ``skip-existing`` only where this memory has none of its own (none, or a built-in one)."""
    from . import policies

    done = 0
    for _, policy in parsed.policies:
        row = conn.execute(
            f"SELECT {', '.join(POLICY_FIELDS)} FROM memory_slots WHERE slot = %s", (policy.slot,)
        ).fetchone()
        there = None if row is None else SlotPolicy(**row)
        built_in = there is None or file_transfer.BUILT_IN.get(there.slot) == there
        if there == policy or (mode == "skip-existing" and not built_in):
            continue
        done += 1
        policies.save(conn, policy)
    default = parsed.default
    if default is not None:
        saved = conn.execute(
            "SELECT value FROM memory_settings WHERE name = %s", (retention.DEFAULT_SETTING,)
        ).fetchone()
        current = retention.DEFAULT_POLICY
        if saved is not None:
            current = dataclasses.replace(current, **json.loads(saved["value"]))
        if current != default and (mode != "skip-existing" or saved is None):
            done += 1
            policies.save_default(conn, default)
    return done


def _set_cursors(conn, parsed: file_transfer.Parsed, mode: str) -> int:
    """transfer_episodes' rules: ``replace`` sets the file's cursor; ``merge`` where there is
    none here or the file's is newer; ``skip-existing`` where there is none."""
    from .cursors import write_cursor

    done = 0
    for _, cursor in parsed.more.cursors:
        row = conn.execute(
            f"SELECT {', '.join(CURSOR_FIELDS)} FROM memory_flush_cursors WHERE source = %s",
            (cursor[0],),
        ).fetchone()
        there = None if row is None else tuple(row[name] for name in CURSOR_FIELDS)
        if there == tuple(cursor):
            continue
        if there is not None and (
            mode == "skip-existing" or mode == "merge" and cursor[3] <= there[3]
        ):
            continue
        done += 1
        write_cursor(conn, tuple(cursor))
    return done


def _add_links(conn, parsed: file_transfer.Parsed) -> int:
    """transfer_links.apply's rules: both facts in the file or here (else the line is refused,
    nothing imported); a link already here is left as it is; a file that is not this
    memory's own adds no link from a protected fact."""
    added = 0
    for number, (from_slot, from_key, rel, to_slot, to_key, created, source) in parsed.links:
        ends = []
        for slot, key in ((from_slot, from_key), (to_slot, to_key)):
            row = conn.execute(
                "SELECT seq, protected_at FROM memory_facts WHERE slot = %s AND key = %s",
                (slot, key),
            ).fetchone()
            if row is None:
                raise InvalidInput(
                    f"line {number}: no fact {slot}/{key} to link; nothing was imported"
                )
            ends.append(row)
        start, end = ends
        if parsed.keeps_protected and start["protected_at"] is not None:
            continue
        made = conn.execute(
            """INSERT INTO memory_fact_links (from_seq, rel, to_seq, created_at, source)
               VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING 1""",
            (start["seq"], rel, end["seq"], created, source),
        ).fetchone()
        added += made is not None
    return added


def insert(conn, fact: Fact) -> None:
    """A whole fact row (rows.insert's rules: a look-alike of another key is refused)."""
    clash = conn.execute(
        "SELECT key FROM memory_facts WHERE slot = %s AND key_form = %s ORDER BY seq LIMIT 1",
        (fact.slot, validation.key_form(fact.key)),
    ).fetchone()
    if clash is not None and clash["key"] != fact.key:
        raise InvalidInput(file_transfer.rows.look_alike(fact.slot, fact.key, clash["key"]))
    (doc,) = tokens.documents([(fact.slot, fact.key, fact.value)])
    values = [getattr(fact, name) for name in FACT_COLUMNS]
    seq = conn.execute(
        INSERT_SQL + " RETURNING seq",
        [*values, validation.key_form(fact.key), doc.terms, jsonb(doc.freqs), doc.length],
    ).fetchone()["seq"]
    if fact.tags:
        fact_tags.replace(conn, seq, fact.tags)


def overwrite(conn, seq: int, fact: Fact) -> None:
    (doc,) = tokens.documents([(fact.slot, fact.key, fact.value)])
    sets = ", ".join(f"{name} = %s" for name in FACT_COLUMNS)
    conn.execute(
        f"UPDATE memory_facts SET {sets}, key_form = %s, terms = %s, freqs = %s, length = %s "
        "WHERE seq = %s",
        [*(getattr(fact, name) for name in FACT_COLUMNS), validation.key_form(fact.key),
         doc.terms, jsonb(doc.freqs), doc.length, seq],
    )  # fmt: skip
    fact_tags.replace(conn, seq, fact.tags)


def archive(conn, seq: int, reason: str, now: int, by: str | None) -> None:
    conn.execute(
        f"INSERT INTO memory_fact_history (fact_id, {KEPT}, reason, changed_at, changed_by) "
        f"SELECT id, {KEPT}, %s, %s, %s FROM memory_facts WHERE seq = %s",
        (reason, now, by, seq),
    )


def _import_fact(conn, fact: Fact, mode: str, now: int, ids: dict, keep_protected: bool):
    """transfer._import_fact's rules."""
    row = conn.execute(
        "SELECT * FROM memory_facts WHERE slot = %s AND key = %s FOR UPDATE", (fact.slot, fact.key)
    ).fetchone()
    if row is None:
        taken = conn.execute("SELECT 1 FROM memory_facts WHERE id = %s", (fact.id,)).fetchone()
        if taken:
            ids[fact.id] = secrets.token_hex(8)
            fact = dataclasses.replace(fact, id=ids[fact.id])
        insert(conn, fact)
        return Change("added", fact.slot, fact.key, fact.value)
    old = dataclasses.replace(Fact.from_row(row), tags=fact_tags.of_seq(conn, row["seq"]))
    ids[fact.id] = old.id
    fact = dataclasses.replace(fact, id=old.id)
    if _content(fact) == _content(old):
        return Change("unchanged", fact.slot, fact.key, fact.value)
    if mode == "skip-existing":
        return Change("skipped", fact.slot, fact.key, old.value, None, "already here")
    if keep_protected and old.protected:
        return Change("kept", fact.slot, fact.key, old.value, None, file_transfer.KEPT_PROTECTED)
    if mode == "merge" and fact.updated_at <= old.updated_at:
        if fact.value != old.value:
            _insert_history(conn, [file_transfer.rows.entry(fact, "import", now, "import")])
        note = "the value here is newer; the file's went to history"
        return Change("kept", fact.slot, fact.key, old.value, None, note)
    archive(conn, row["seq"], "import", now, "import")
    overwrite(conn, row["seq"], fact)
    return Change("updated", fact.slot, fact.key, fact.value, old.value)


def _content(fact: Fact) -> tuple:
    return dataclasses.astuple(
        dataclasses.replace(fact, created_at=0, updated_at=0, last_accessed=0, access_count=0)
    )


def _remove_others(conn, parsed: file_transfer.Parsed, now: int) -> list[Change]:
    keep = {(fact.slot, fact.key) for _, fact in parsed.facts}
    where, params = ("WHERE slot = %s", (parsed.slot,)) if parsed.slot else ("", ())
    others = [
        row
        for row in conn.execute(f"SELECT * FROM memory_facts {where} ORDER BY seq", params)
        if (row["slot"], row["key"]) not in keep
    ]
    kept = [r for r in others if parsed.keeps_protected and r["protected_at"] is not None]
    gone = [r for r in others if r not in kept]
    for row in gone:
        archive(conn, row["seq"], "import", now, "import")
    conn.execute("DELETE FROM memory_facts WHERE seq = ANY(%s)", ([r["seq"] for r in gone],))
    note = "not in the file (replace)"
    return [
        *(Change("removed", r["slot"], r["key"], None, r["value"], note) for r in gone),
        *(Change("kept", r["slot"], r["key"], r["value"], None, file_transfer.KEPT_PROTECTED)
          for r in kept),
    ]  # fmt: skip


def _insert_history(conn, entries) -> None:
    names = ", ".join(HISTORY_FIELDS)
    marks = ", ".join(["%s"] * len(HISTORY_FIELDS))
    with conn.cursor() as cur:
        cur.executemany(
            f"INSERT INTO memory_fact_history ({names}) VALUES ({marks})",
            [[getattr(e, name) for name in HISTORY_FIELDS] for e in entries],
        )


def _add_history(conn, parsed: file_transfer.Parsed, ids: dict) -> int:
    new = []
    for _, entry in parsed.history:
        entry = dataclasses.replace(entry, fact_id=ids.get(entry.fact_id, entry.fact_id))
        there = conn.execute(
            """SELECT 1 FROM memory_fact_history WHERE slot = %s AND key = %s AND fact_id = %s
               AND changed_at = %s AND reason = %s AND value = %s""",
            (entry.slot, entry.key, entry.fact_id, entry.changed_at, entry.reason, entry.value),
        ).fetchone()
        if there is None:
            new.append(entry)
    if new:
        _insert_history(conn, new)
    return len(new)


def _add_feedback(conn, parsed: file_transfer.Parsed, ids: dict) -> int:
    new = []
    for _, (fact_id, rating, comment, at) in parsed.feedback:
        item = (ids.get(fact_id, fact_id), rating, comment, at)
        if parsed.keeps_protected:
            row = conn.execute(
                "SELECT protected_at FROM memory_facts WHERE id = %s", (item[0],)
            ).fetchone()
            if row is not None and row["protected_at"] is not None:
                continue
        there = conn.execute(
            "SELECT 1 FROM memory_feedback WHERE fact_id = %s AND rating = %s "
            "AND comment IS NOT DISTINCT FROM %s AND at = %s",
            item,
        ).fetchone()
        if there is None:
            new.append(item)
    if new:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO memory_feedback (fact_id, rating, comment, at) "
                "VALUES (%s, %s, %s, %s)",
                new,
            )
    return len(new)


def _episode_records(conn, slot: str | None) -> Iterator[dict]:
    """transfer_episodes.export's episode and provenance records (of ``slot``'s facts)."""
    ids = ""
    params: tuple = ()
    if slot:
        ids = (
            "(SELECT id FROM memory_facts WHERE slot = %s"
            " UNION SELECT fact_id FROM memory_fact_history WHERE slot = %s)"
        )
        params = (slot, slot)
    where = f"WHERE fact_id IN {ids}" if slot else ""
    for row in conn.execute(
        f"SELECT {', '.join(EPISODE_FIELDS)} FROM memory_episodes {where} "
        "ORDER BY happened_at, fact_id",
        params,
    ):
        record = {name: row[name] for name in EPISODE_FIELDS}
        record["data"] = None if record["data"] is None else json.loads(record["data"])
        yield {"type": "episode", **record}
    where = f"WHERE fact_id IN {ids} OR episode_id IN {ids}" if slot else ""
    for row in conn.execute(
        f"SELECT {', '.join(PROVENANCE_FIELDS)} FROM memory_provenance {where} "
        "ORDER BY linked_at, episode_id, fact_id",
        params * 2,
    ):
        yield {"type": "provenance", **{name: row[name] for name in PROVENANCE_FIELDS}}


def _set_episodes(conn, parsed: file_transfer.Parsed, mode: str, ids: dict, won: set) -> int:
    """transfer_episodes' rules: ``replace`` sets the file's row; ``merge`` where there is
    none here or the file's fact won; ``skip-existing`` only where there is none here."""
    done = 0
    for _, (fact_id, *fields) in parsed.more.episodes:
        here_id = ids.get(fact_id, fact_id)
        row = conn.execute(
            f"SELECT {', '.join(EPISODE_FIELDS[1:])} FROM memory_episodes WHERE fact_id = %s",
            (here_id,),
        ).fetchone()
        there = None if row is None else tuple(row[name] for name in EPISODE_FIELDS[1:])
        if there == tuple(fields):
            continue
        if there is not None and (
            mode == "skip-existing" or mode == "merge" and fact_id not in won
        ):
            continue
        done += 1
        updates = ", ".join(f"{name} = excluded.{name}" for name in EPISODE_FIELDS[1:])
        conn.execute(
            f"INSERT INTO memory_episodes ({', '.join(EPISODE_FIELDS)}) "
            f"VALUES ({', '.join(['%s'] * len(EPISODE_FIELDS))}) "
            f"ON CONFLICT (fact_id) DO UPDATE SET {updates}",
            (here_id, *fields),
        )
    return done


def _add_provenance(conn, parsed: file_transfer.Parsed, ids: dict) -> int:
    """transfer_episodes' rule: a link is added unless it is here, in every mode."""
    new: dict[tuple[str, str], int] = {}
    for _, (fact_id, episode_id, linked_at) in parsed.more.links:
        pair = (ids.get(fact_id, fact_id), ids.get(episode_id, episode_id))
        there = conn.execute(
            "SELECT 1 FROM memory_provenance WHERE fact_id = %s AND episode_id = %s", pair
        ).fetchone()
        if there is None:
            new.setdefault(pair, linked_at)
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO memory_provenance (fact_id, episode_id, linked_at) VALUES (%s, %s, %s)",
            [(*pair, linked_at) for pair, linked_at in new.items()],
        )
    return len(new)


def _retrieval_records(conn) -> Iterator[dict]:
    """The retrieval log as transfer_episodes.export writes it, oldest first."""
    items: dict[int, list[dict]] = {}
    for row in conn.execute(
        f"SELECT retrieval_id, {', '.join(ITEM_FIELDS)} FROM memory_retrieval_items "
        "ORDER BY retrieval_id, position"
    ):
        items.setdefault(row["retrieval_id"], []).append({n: row[n] for n in ITEM_FIELDS})
    names = ", ".join(RETRIEVAL_FIELDS[:-1])
    for row in conn.execute(f"SELECT {names} FROM memory_retrievals ORDER BY id").fetchall():
        record = {name: row[name] for name in RETRIEVAL_FIELDS[:-1]}
        yield {"type": "retrieval", **record, "items": items.get(row["id"], [])}


def _add_retrievals(conn, parsed: file_transfer.Parsed, ids: dict) -> int:
    """transfer_episodes' rules: a retrieval is added unless the same (moment, query, session,
    run, tokens and items) is logged here, in every mode; under its own id when that is free."""
    done = 0
    for _, (retrieval_id, *fields), items in parsed.more.retrievals:
        items = [(i[0], ids.get(i[1], i[1]), *i[2:]) for i in items]
        if _logged(conn, fields, items):
            continue
        done += 1
        taken = (
            retrieval_id is None
            or conn.execute(
                "SELECT 1 FROM memory_retrievals WHERE id = %s", (retrieval_id,)
            ).fetchone()
            is not None
        )
        columns = "at, query, session, run, tokens"
        if taken:
            sql = f"INSERT INTO memory_retrievals ({columns}) VALUES (%s, %s, %s, %s, %s)"
            params = tuple(fields)
        else:
            sql = f"INSERT INTO memory_retrievals (id, {columns}) VALUES (%s, %s, %s, %s, %s, %s)"
            params = (retrieval_id, *fields)
        new_id = conn.execute(sql + " RETURNING id", params).fetchone()["id"]
        with conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO memory_retrieval_items (retrieval_id, {', '.join(ITEM_FIELDS)}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [(new_id, *item[:7], bool(item[7]), item[8]) for item in items],
            )
    if done:  # ids given explicitly do not move the identity: the next logged one follows them
        conn.execute(
            "SELECT setval(pg_get_serial_sequence('memory_retrievals', 'id'), "
            "(SELECT max(id) FROM memory_retrievals))"
        )
    return done


def _logged(conn, fields: list, items: list[tuple]) -> bool:
    """Is this retrieval (the same moment, query, session, run, tokens and items) logged here?"""
    for found in conn.execute(
        "SELECT id FROM memory_retrievals WHERE at = %s AND query = %s "
        "AND session IS NOT DISTINCT FROM %s AND run IS NOT DISTINCT FROM %s AND tokens = %s",
        tuple(fields),
    ).fetchall():
        here = [
            tuple(row[name] for name in ITEM_FIELDS)
            for row in conn.execute(
                f"SELECT {', '.join(ITEM_FIELDS)} FROM memory_retrieval_items "
                "WHERE retrieval_id = %s ORDER BY position",
                (found["id"],),
            )
        ]
        if here == sorted(items):
            return True
    return False
