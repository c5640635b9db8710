"""Export and import: a memory as JSON Lines (every column of every fact, its history, the
feedback behind its quality, the slots' policies), and as Markdown a person can read.

The first line of an export is a header, ``{"slotmem": "export", "format": 1, "slot": ...,
"exported_at": ...}``; every other line is one record with its ``type``: ``fact``, ``history``,
``feedback``, ``policy`` or ``default_policy``. Vectors are not exported: a file with semantic
search on embeds what it imports. A file written by hand may hold fact lines alone, without
``type``: ``{"slot": ..., "key": ..., "value": ...}`` and any other column of a fact.

Import reads the whole file first: a line that is not JSON, not a record slotmem knows, or not
valid (the checks of any write, and the write scan of the flusher and the agent tools: an
instruction aimed at an AI or a secret) is an error naming the line, and nothing is written.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from .. import validation
from ..errors import InvalidInput
from ..records import FACT_COLUMNS, Change, ChangeReport, Fact, HistoryEntry, SlotPolicy
from . import retention, rows

FORMAT = 1
MODES = ("merge", "replace", "skip-existing")
FEEDBACK_FIELDS = ("fact_id", "rating", "comment", "at")
POLICY_FIELDS = tuple(f.name for f in dataclasses.fields(SlotPolicy))
DEFAULT_FIELDS = ("cap", "min_age_days", "min_access_count")


# -- export ------------------------------------------------------------------------------------
def export(conn, slot: str | None, now: int) -> Iterator[dict]:
    """The header, then every record of ``slot`` (None: of the whole file), oldest first."""
    yield {"slotmem": "export", "format": FORMAT, "slot": slot, "exported_at": now}
    where, params = ("WHERE slot = ?", (slot,)) if slot else ("", ())
    for row in conn.execute(f"SELECT * FROM memory_facts {where} ORDER BY seq", params):
        yield {"type": "fact", **{name: row[name] for name in FACT_COLUMNS}}
    names = ", ".join(rows.HISTORY_FIELDS)
    for row in conn.execute(
        f"SELECT {names} FROM memory_fact_history {where} ORDER BY hid", params
    ):
        yield {"type": "history", **dict(zip(rows.HISTORY_FIELDS, row))}
    feedback_where = ""
    if slot:
        feedback_where = (
            "WHERE fact_id IN (SELECT id FROM memory_facts WHERE slot = ?"
            " UNION SELECT fact_id FROM memory_fact_history WHERE slot = ?)"
        )
    for row in conn.execute(
        f"SELECT {', '.join(FEEDBACK_FIELDS)} FROM memory_feedback {feedback_where} ORDER BY id",
        (slot, slot) if slot else (),
    ):
        yield {"type": "feedback", **dict(zip(FEEDBACK_FIELDS, row))}
    for row in conn.execute(f"SELECT * FROM memory_slots {where} ORDER BY slot", params):
        yield {"type": "policy", **dict(zip(POLICY_FIELDS, row))}
    if not slot and retention.has_default(conn):
        default = retention.default_policy(conn)
        yield {
            "type": "default_policy",
            **{name: getattr(default, name) for name in DEFAULT_FIELDS},
        }


def markdown(records: Iterable[dict], title: str = "Memory") -> str:
    """The facts of an export as Markdown: a section per slot, a bullet per fact, with what a
    person checking them wants beside the value (confidence, dates, source, pin, expiry)."""
    header, facts, policies = {}, [], {}
    for record in records:
        kind = record.get("type")
        if "slotmem" in record:
            header = record
        elif kind == "fact":
            facts.append(record)
        elif kind == "policy":
            policies[record["slot"]] = record
    lines = [f"# {title}", ""]
    if header.get("exported_at"):
        lines += [f"Exported {_time(header['exported_at'])} UTC, {len(facts)} facts.", ""]
    for slot in sorted({fact["slot"] for fact in facts}):
        in_slot = sorted((f for f in facts if f["slot"] == slot), key=lambda f: f["key"])
        lines.append(f"## {slot} ({len(in_slot)} facts)")
        description = (policies.get(slot) or {}).get("description")
        lines += ["", f"_{description}_"] if description else []
        lines.append("")
        for fact in in_slot:
            value = " ".join(str(fact["value"]).split())
            lines.append(f"- **{fact['key']}**: {value}")
            lines.append(f"  <sub>{_details(fact)}</sub>")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _details(fact: dict) -> str:
    parts = [f"confidence {fact['confidence']:g}", f"updated {_time(fact['updated_at'])}"]
    if fact.get("quality"):
        parts.append(f"quality {fact['quality']:+d}")
    if fact.get("source"):
        parts.append(f"from {fact['source']}")
    if fact.get("pinned_at"):
        parts.append("pinned")
    if fact.get("protected_at"):
        parts.append("protected")
    if fact.get("expires_at"):
        parts.append(f"expires {_time(fact['expires_at'])}")
    return " · ".join(parts)


def _time(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M")


# -- reading a file ----------------------------------------------------------------------------
@dataclass
class Parsed:
    """What a file holds, checked; each record with its line number."""

    slot: str | None = None  # the export's slot (None: the whole file, or no header)
    facts: list[tuple[int, Fact]] = field(default_factory=list)
    history: list[tuple[int, HistoryEntry]] = field(default_factory=list)
    feedback: list[tuple[int, tuple]] = field(default_factory=list)
    policies: list[tuple[int, SlotPolicy]] = field(default_factory=list)
    default: SlotPolicy | None = None


def read(lines: Iterable[str], name: str, now: int) -> Parsed:
    """Every record of the file, checked; the first bad line raises InvalidInput naming it."""
    parsed = Parsed()
    where: dict[tuple[str, str], int] = {}
    ids: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = _json(line)
            if "slotmem" in record:
                parsed.slot = _header(record, number)
                continue
            kind = record.pop("type", "fact")
            if kind == "fact":
                fact = _fact(record, now)
                first = where.setdefault((fact.slot, fact.key), number)
                if first != number:
                    raise InvalidInput(f"{fact.slot}/{fact.key} is also on line {first}")
                if ids.setdefault(fact.id, number) != number:
                    raise InvalidInput(f"fact id {fact.id!r} is also on line {ids[fact.id]}")
                parsed.facts.append((number, fact))
            elif kind == "history":
                parsed.history.append((number, _history(record)))
            elif kind == "feedback":
                parsed.feedback.append((number, _feedback(record)))
            elif kind == "policy":
                parsed.policies.append((number, _policy(record)))
            elif kind == "default_policy":
                parsed.default = _default(record)
            else:
                raise InvalidInput(
                    f"unknown record type {kind!r} (expected fact, history, feedback, policy "
                    "or default_policy)"
                )
        except InvalidInput as e:
            raise InvalidInput(f"{name} line {number}: {e}; nothing was imported") from None
    return parsed


def _json(line: str) -> dict:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise InvalidInput(f"not valid JSON ({e.msg}, column {e.colno})") from None
    if not isinstance(record, dict):
        raise InvalidInput("expected a JSON object, one record per line")
    return record


def _header(record: dict, number: int) -> str | None:
    if record.get("slotmem") != "export" or record.get("format") != FORMAT:
        raise InvalidInput(
            f"a header of format {record.get('format')!r}; this slotmem reads {FORMAT}"
        )
    if number != 1:
        raise InvalidInput("the header must be the first line")
    slot = record.get("slot")
    return None if slot is None else validation.slot(slot)


def _fields(record: dict, allowed: Iterable[str], required: Iterable[str]) -> None:
    extra = set(record) - set(allowed)
    if extra:
        raise InvalidInput(f"unknown field(s) {', '.join(sorted(extra))}")
    missing = [name for name in required if name not in record]
    if missing:
        raise InvalidInput(f"missing field(s) {', '.join(missing)}")


def _scan(key: str, value: str) -> None:
    from ..safety import injection_reason, secret_reason  # only an import pays for its patterns

    reason = injection_reason(key, value) or secret_reason(key, value)
    if reason:
        raise InvalidInput(f"refused by the write scan: {reason}")


def _fact(record: dict, now: int) -> Fact:
    _fields(record, FACT_COLUMNS, ("slot", "key", "value"))
    slot, key, value, confidence, source = validation.fact(
        record["slot"],
        record["key"],
        record["value"],
        record.get("confidence", 1.0),
        record.get("source", "import"),
    )
    _scan(key, value)
    created = _time_ms(record, "created_at", now)
    return Fact(
        _id(record.get("id")),
        slot,
        key,
        value,
        confidence,
        validation.rating(record.get("quality", 0), "quality"),
        source,
        created,
        _time_ms(record, "updated_at", created),
        _time_ms(record, "last_accessed", created),
        validation.count(record.get("access_count", 0), "access_count"),
        pinned_at=_optional_ms(record, "pinned_at"),
        protected_at=_optional_ms(record, "protected_at"),
        expires_at=_optional_ms(record, "expires_at"),
    )


def _history(record: dict) -> HistoryEntry:
    _fields(
        record, rows.HISTORY_FIELDS, ("fact_id", "slot", "key", "value", "reason", "changed_at")
    )
    fact = _fact(
        {k: v for k, v in record.items() if k in FACT_COLUMNS} | {"id": record["fact_id"]}, 0
    )
    reason, by = record["reason"], record.get("changed_by")
    validation.text(reason, "reason", 40, single_line=True)
    changed_at = _time_ms(record, "changed_at", 0)
    return rows.entry(fact, reason, changed_at, None if by is None else validation.source(by))


def _feedback(record: dict) -> tuple:
    _fields(record, FEEDBACK_FIELDS, FEEDBACK_FIELDS[:2] + ("at",))
    comment = record.get("comment")
    return (
        _id(record["fact_id"]),
        validation.rating(record["rating"]),
        None if comment is None else validation.value(comment),
        _time_ms(record, "at", 0),
    )


def _policy(record: dict) -> SlotPolicy:
    _fields(record, POLICY_FIELDS, ("slot", "cap"))
    parts = {name: part for name, part in record.items() if name != "slot"}
    return validation.policy(validation.slot(record["slot"]), **parts)


def _default(record: dict) -> SlotPolicy:
    _fields(record, DEFAULT_FIELDS, ("cap",))
    return validation.policy("*", description=retention.DEFAULT_DESCRIPTION, **record)


def _id(value) -> str:
    if value is None:
        return secrets.token_hex(8)
    return validation.text(value, "id", 64, single_line=True)


def _time_ms(record: dict, name: str, default: int) -> int:
    value = record.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{name} must be milliseconds since the epoch, not {value!r}")
    return value


def _optional_ms(record: dict, name: str) -> int | None:
    return None if record.get(name) is None else _time_ms(record, name, 0)


# -- writing it --------------------------------------------------------------------------------
def apply(
    conn,
    parsed: Parsed,
    mode: str,
    *,
    now: int,
    dry_run: bool,
    forget: Callable[[list[int]], None],
) -> tuple[ChangeReport, list[Fact]]:
    """Import ``parsed`` inside the caller's transaction (``dry_run``: read only), ``mode``
    being one of MODES (the Store checks it before reading the file). Returns the report and
    the facts whose value was written (to embed).

    - ``merge``: a new key is added; for a key in both, the later ``updated_at`` wins and the
      other value goes to history (reason ``import``), so either can be restored.
    - ``replace``: the file wins: its facts overwrite, and the facts of the slots it covers (the
      export's slot, else every slot) that it does not hold are removed into history.
    - ``skip-existing``: only keys not in the memory are added.

    History and feedback rows are added unless the same row is there; policies are added for
    slots without one (``replace``: set)."""
    report, written = ChangeReport(dry_run=dry_run), []
    ids: dict[str, str] = {}  # an imported fact id -> the id it has in this file
    for _, fact in parsed.facts:
        change, fact_written = _import_fact(conn, fact, mode, now, dry_run, ids)
        report.changes.append(change)
        if fact_written is not None:
            written.append(fact_written)
    if mode == "replace":
        report.changes += _remove_others(conn, parsed, now, dry_run, forget)
    report.records = {
        "history rows": _add_history(conn, parsed, ids, dry_run),
        "feedback rows": _add_feedback(conn, parsed, ids, dry_run),
        "policies": _set_policies(conn, parsed, mode, dry_run),
    }
    return report, written


def _import_fact(conn, fact: Fact, mode: str, now: int, dry_run: bool, ids: dict):
    row = conn.execute(
        "SELECT * FROM memory_facts WHERE slot = ? AND key = ?", (fact.slot, fact.key)
    ).fetchone()
    if row is None:
        taken = conn.execute("SELECT 1 FROM memory_facts WHERE id = ?", (fact.id,)).fetchone()
        if taken:
            ids[fact.id] = secrets.token_hex(8)
            fact = dataclasses.replace(fact, id=ids[fact.id])
        if not dry_run:
            rows.insert(conn, fact)
        return Change("added", fact.slot, fact.key, fact.value), fact
    old = Fact.from_row(row)
    ids[fact.id] = old.id
    fact = dataclasses.replace(fact, id=old.id)
    if _content(fact) == _content(old):  # what it says is the same: this file's times stay
        return Change("unchanged", fact.slot, fact.key, fact.value), None
    if mode == "skip-existing":
        return Change("skipped", fact.slot, fact.key, old.value, None, "already here"), None
    if mode == "merge" and fact.updated_at <= old.updated_at:
        if not dry_run and fact.value != old.value:  # kept in history, so it can be restored
            rows.insert_history(conn, [rows.entry(fact, "import", now, "import")])
        note = "the value here is newer; the file's went to history"
        return Change("kept", fact.slot, fact.key, old.value, None, note), None
    if not dry_run:
        rows.archive(conn, row["seq"], "import", now, "import")
        rows.overwrite(conn, row["seq"], fact)
    written = fact if fact.value != old.value else None
    return Change("updated", fact.slot, fact.key, fact.value, old.value), written


def _content(fact: Fact) -> tuple:
    return dataclasses.astuple(
        dataclasses.replace(fact, created_at=0, updated_at=0, last_accessed=0, access_count=0)
    )


def _remove_others(conn, parsed: Parsed, now: int, dry_run: bool, forget) -> list[Change]:
    keep = {(fact.slot, fact.key) for _, fact in parsed.facts}
    where, params = ("WHERE slot = ?", (parsed.slot,)) if parsed.slot else ("", ())
    gone = [
        row
        for row in conn.execute(f"SELECT * FROM memory_facts {where} ORDER BY seq", params)
        if (row["slot"], row["key"]) not in keep
    ]
    if not dry_run:
        rows.remove(conn, [row["seq"] for row in gone], "import", now, "import", forget)
    note = "not in the file (replace)"
    return [Change("removed", r["slot"], r["key"], None, r["value"], note) for r in gone]


def _add_history(conn, parsed: Parsed, ids: dict, dry_run: bool) -> int:
    new = []
    for _, entry in parsed.history:
        entry = dataclasses.replace(entry, fact_id=ids.get(entry.fact_id, entry.fact_id))
        there = conn.execute(
            """SELECT 1 FROM memory_fact_history WHERE slot = ? AND key = ? AND fact_id = ?
               AND changed_at = ? AND reason = ? AND value = ?""",
            (entry.slot, entry.key, entry.fact_id, entry.changed_at, entry.reason, entry.value),
        ).fetchone()
        if there is None:
            new.append(entry)
    if not dry_run:
        rows.insert_history(conn, new)
    return len(new)


def _add_feedback(conn, parsed: Parsed, ids: dict, dry_run: bool) -> int:
    new = []
    for _, (fact_id, rating, comment, at) in parsed.feedback:
        item = (ids.get(fact_id, fact_id), rating, comment, at)
        there = conn.execute(
            "SELECT 1 FROM memory_feedback WHERE fact_id = ? AND rating = ? AND comment IS ? "
            "AND at = ?",
            item,
        ).fetchone()
        if there is None:
            new.append(item)
    if not dry_run:
        conn.executemany(
            "INSERT INTO memory_feedback (fact_id, rating, comment, at) VALUES (?, ?, ?, ?)", new
        )
    return len(new)


def _set_policies(conn, parsed: Parsed, mode: str, dry_run: bool) -> int:
    conflict = "DO UPDATE SET " + ", ".join(
        f"{name} = excluded.{name}" for name in POLICY_FIELDS[1:]
    )
    if mode != "replace":
        conflict = "DO NOTHING"
    done = 0
    for _, policy in parsed.policies:
        there = conn.execute("SELECT * FROM memory_slots WHERE slot = ?", (policy.slot,)).fetchone()
        if there is None or (mode == "replace" and SlotPolicy(*there) != policy):
            done += 1
            if not dry_run:
                conn.execute(
                    f"INSERT INTO memory_slots VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (slot) {conflict}",
                    dataclasses.astuple(policy),
                )
    default = parsed.default
    if default is not None and (
        not retention.has_default(conn)
        or (mode == "replace" and retention.default_policy(conn) != default)
    ):
        done += 1
        if not dry_run:
            retention.set_default(conn, default)
    return done
