"""Export and import: a memory as JSON Lines (every column of every fact, its history, the
feedback behind its quality, the slots' policies), and as Markdown a person can read.

The first line of an export is a header, ``{"slotmem": "export", "format": 2, "slot": ...,
"exported_at": ...}``; then one record per line with its ``type``: ``fact``, ``history``,
``feedback``, ``policy``, ``default_policy``, and ``episode``, ``provenance``, ``retrieval`` and
``cursor`` (slotmem.storage.transfer_episodes), ``link`` (slotmem.storage.transfer_links); the last line is the end marker,
``{"slotmem": "end", "records": N, "sha256": ..., "mac": ...}``: how many records, the SHA-256
of the header and records (each as canonical JSON: sorted keys, no spaces, one per line), and an
HMAC-SHA256 of that checksum under the file's export key (migration 0014). Vectors are not
exported: a file with semantic search on embeds what it imports. A file written by hand may hold
fact lines alone, without ``type`` and without header or end marker.

Import reads the whole file first: a line that is not JSON, not a record slotmem knows, or not
valid (the checks of any write) is an error naming the line, and nothing is written. An export
whose end marker is missing (cut short, or written by a slotmem before format 2) or does not
match what precedes it (edited, damaged) is refused unless ``partial``. An export of this very
memory, unchanged (its marker's HMAC verifies under this file's key), is the owner's own data and
is taken as the owner wrote it, as ``upsert`` takes it; any other file (another memory's export,
a seed written by hand, an edited export) passes the write scan of the flusher and the agent
tools (an instruction aimed at an AI, a secret) in every text an agent can read: keys, values,
sources, history reasons and authors, policy descriptions, feedback comments. ``trusted`` says
the person vouches for the file: it is then taken as their own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import validation
from ..errors import InvalidInput
from ..records import FACT_COLUMNS, Fact, SlotPolicy
from ..reports import Change, ChangeReport, HistoryEntry
from . import retention, rows, transfer_episodes, transfer_links
from . import tags as fact_tags
from .db import translate_os

FORMAT = 2  # 2: the end marker
FORMATS = (1, 2)  # what import reads (1: no end marker, only with partial)
END = "end"
KEY_SETTING = "export_key"  # in memory_settings (migration 0014)
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z: the last moment a date can show
MAX_INTEGER = 2**63 - 1  # SQLite's INTEGER
MODES = ("merge", "replace", "skip-existing")
FEEDBACK_FIELDS = ("fact_id", "rating", "comment", "at")
POLICY_FIELDS = tuple(f.name for f in dataclasses.fields(SlotPolicy))
DEFAULT_FIELDS = ("cap", "min_age_days", "min_access_count")


# -- export ------------------------------------------------------------------------------------
def export(conn, slot: str | None, now: int) -> Iterator[dict]:
    """The header, every record of ``slot`` (None: of the whole file), oldest first, and the end
    marker (the count, checksum and HMAC of what precedes it)."""
    header = {"slotmem": "export", "format": FORMAT, "slot": slot, "exported_at": now}
    digest, count = hashlib.sha256(canonical(header)), 0
    yield header
    for record in _records(conn, slot):
        digest.update(canonical(record))
        count += 1
        yield record
    yield end_marker(count, digest.hexdigest(), export_key(conn))


def canonical(record: dict) -> bytes:
    """A record as the checksum reads it: JSON with sorted keys, no spaces, then a newline."""
    text = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass") + b"\n"


def end_marker(count: int, sha256: str, key: bytes | None) -> dict:
    return {"slotmem": END, "records": count, "sha256": sha256, "mac": _mac(key, sha256)}


def _mac(key: bytes | None, sha256: str) -> str | None:
    return None if key is None else hmac.new(key, sha256.encode(), hashlib.sha256).hexdigest()


def export_key(conn) -> bytes | None:
    """This file's secret that signs its exports (None: a file without one)."""
    row = conn.execute("SELECT value FROM memory_settings WHERE name = ?", (KEY_SETTING,))
    found = row.fetchone()
    return None if found is None else bytes.fromhex(found[0])


def _records(conn, slot: str | None) -> Iterator[dict]:
    where, params = ("WHERE slot = ?", (slot,)) if slot else ("", ())
    facts = f"""SELECT *, (SELECT group_concat(tag, ' ') FROM memory_fact_tags t
                           WHERE t.fact_seq = memory_facts.seq) AS tag_list
                FROM memory_facts {where} ORDER BY seq"""
    for row in conn.execute(facts, params):
        record = {"type": "fact", **{name: row[name] for name in FACT_COLUMNS}}
        if row["tag_list"]:  # only then: an untagged fact's record is as before tags
            record["tags"] = sorted(row["tag_list"].split(" "))
        yield record
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
    yield from transfer_episodes.export(conn, slot)
    yield from transfer_links.export(conn, slot)


def markdown(records: Iterable[dict], title: str = "Memory") -> str:
    """The facts of an export as Markdown: a section per slot, a bullet per fact, with what a
    person checking them wants beside the value (confidence, dates, source, pin, expiry)."""
    header, facts, policies = {}, [], {}
    for record in records:
        kind = record.get("type")
        if record.get("slotmem") == "export":
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
    if fact.get("tags"):
        parts.append("tags " + ", ".join(fact["tags"]))
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
    more: transfer_episodes.Records = field(default_factory=transfer_episodes.Records)
    links: list[tuple[int, tuple]] = field(default_factory=list)  # slotmem.storage.transfer_links
    own: bool = False  # this memory's own export, unchanged: taken as the owner wrote it
    trusted: bool = False  # the person vouches for the file (``--trusted``)

    @property
    def keeps_protected(self) -> bool:
        """Does importing it leave the facts a person protected as they are? Yes unless the
        file is the owner's own export or vouched for: any other file may be an agent's."""
        return not (self.own or self.trusted)


@dataclass
class _Reading:
    """What ``read`` gathers besides the records: the header, the end marker, the checksum,
    and every text an agent can read, with its line, for the write scan."""

    format: int | None = None
    end: tuple[int, dict] | None = None
    records: int = 0
    digest: Any = field(default_factory=hashlib.sha256)
    texts: list[tuple[int, str, str]] = field(default_factory=list)


def read(
    lines: Iterable[str],
    name: str,
    now: int,
    *,
    key: bytes | None = None,
    partial: bool = False,
    trusted: bool = False,
) -> Parsed:
    """Every record of the file, checked; the first bad line raises InvalidInput naming it.

    ``key``: this memory's export key (``export_key``): an export whose end marker it verifies
    is the owner's own (``Parsed.own``). ``partial``: accept an export whose end marker is
    missing or does not match. ``trusted``: the person vouches for the file; without it, a file
    that is not the owner's own passes the write scan in every text an agent can read."""
    parsed, reading = Parsed(), _Reading()
    where: dict[tuple[str, str], int] = {}
    ids: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = _json(line)
            if reading.end is not None:
                raise InvalidInput(f"a record after the end marker (line {reading.end[0]})")
            if record.get("slotmem") == END:
                reading.end = (number, record)
                continue
            reading.digest.update(canonical(record))
            if "slotmem" in record:
                parsed.slot, reading.format = _header(record, number)
                continue
            reading.records += 1
            _in_range(record)
            kind = record.pop("type", "fact")
            if kind == "fact":
                fact = _fact(record, now)
                first = where.setdefault((fact.slot, fact.key), number)
                if first != number:
                    raise InvalidInput(f"{fact.slot}/{fact.key} is also on line {first}")
                if ids.setdefault(fact.id, number) != number:
                    raise InvalidInput(f"fact id {fact.id!r} is also on line {ids[fact.id]}")
                parsed.facts.append((number, fact))
                _texts(reading, number, key=fact.key, value=fact.value, source=fact.source)
            elif kind == "history":
                entry = _history(record)
                parsed.history.append((number, entry))
                _texts(
                    reading,
                    number,
                    key=entry.key,
                    value=entry.value,
                    source=entry.source,
                    reason=entry.reason,
                    changed_by=entry.changed_by,
                )
            elif kind == "feedback":
                parsed.feedback.append((number, _feedback(record)))
                _texts(reading, number, comment=parsed.feedback[-1][1][2])
            elif kind == "policy":
                parsed.policies.append((number, _policy(record)))
                _texts(reading, number, description=parsed.policies[-1][1].description)
            elif kind == "default_policy":
                parsed.default = _default(record)
            elif kind == transfer_links.KIND:
                parsed.links.append((number, transfer_links.parse(record, now)))
                _texts(reading, number, source=parsed.links[-1][1][-1])
            elif kind in transfer_episodes.KINDS:
                _texts(
                    reading, number, **transfer_episodes.parse(kind, record, number, parsed.more)
                )
            else:
                raise InvalidInput(
                    f"unknown record type {kind!r} (expected fact, history, feedback, policy, "
                    "default_policy, episode, provenance, retrieval, cursor or link)"
                )
        except InvalidInput as e:
            raise InvalidInput(f"{name} line {number}: {e}; nothing was imported") from None
    try:
        parsed.own = _whole(reading, key, partial)
    except InvalidInput as e:
        raise InvalidInput(f"{name}: {e}; nothing was imported") from None
    parsed.trusted = bool(trusted)
    if parsed.keeps_protected:
        _scan(reading.texts, name)
    return parsed


def _whole(reading: _Reading, key: bytes | None, partial: bool) -> bool:
    """Is the file whole (its end marker matches), and this memory's own export? Raises
    InvalidInput for an export that is not whole, unless ``partial``."""
    fix = "--partial (partial=True) imports what it holds"
    if reading.end is None:
        if reading.format is None or partial:
            return False  # a file written by hand: nothing to check it against
        if reading.format < FORMAT:
            raise InvalidInput(
                f"an export of an older slotmem (format {reading.format}) has no end marker, "
                f"so it cannot be checked for being whole: if it is, {fix}"
            )
        raise InvalidInput(
            f"cut short: the export's end marker is missing after {reading.records} records "
            f"(a copy or download stopped early?); if that is what you want, {fix}"
        )
    number, end = reading.end
    if reading.format is None:
        if partial:
            return False
        raise InvalidInput(f"line {number}: an end marker without a header on line 1")
    sha256 = reading.digest.hexdigest()
    if end.get("records") != reading.records or end.get("sha256") != sha256:
        if partial:
            return False
        raise InvalidInput(
            f"the file does not match its end marker (line {number}: {end.get('records')!r} "
            f"records, read {reading.records}): it was edited or damaged after export; to "
            f"import it as it is, {fix}"
        )
    mac = end.get("mac")
    return (
        key is not None
        and isinstance(mac, str)
        and hmac.compare_digest(mac, _mac(key, sha256) or "")
    )


def _texts(reading: _Reading, number: int, **texts: str | None) -> None:
    reading.texts += [(number, name, text) for name, text in texts.items() if text]


def _scan(texts: list[tuple[int, str, str]], name: str) -> None:
    """The write scan over every text an agent can read, for a file not the owner's own."""
    from ..safety import injection_reason, secret_reason  # only an import pays for its patterns

    for number, what, text in texts:
        reason = injection_reason(text) or secret_reason(text)
        if reason:
            raise InvalidInput(
                f"{name} line {number}: refused by the write scan: {reason} (in its {what}). "
                "The file is not an unchanged export of this memory: if it is your own data, "
                "import it with --trusted (trusted=True); nothing was imported"
            )


def _json(line: str) -> dict:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise InvalidInput(f"not valid JSON ({e.msg}, column {e.colno})") from None
    except RecursionError:
        raise InvalidInput("not a record: nested too deeply") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise InvalidInput(f"a number with too many digits ({str(e).split(':')[0]})") from None
    if not isinstance(record, dict):
        raise InvalidInput("expected a JSON object, one record per line")
    return record


def _in_range(record: dict) -> None:
    """Every integer of a record fits SQLite's INTEGER (what the checks below let pass)."""
    for name, part in record.items():
        if isinstance(part, int) and not -MAX_INTEGER <= part <= MAX_INTEGER:
            raise InvalidInput(f"{name} is out of range ({len(str(abs(part)))} digits)")


def _header(record: dict, number: int) -> tuple[str | None, int]:
    if record.get("slotmem") != "export" or record.get("format") not in FORMATS:
        raise InvalidInput(
            f"a header of format {record.get('format')!r}; this slotmem reads "
            f"{' and '.join(map(str, FORMATS))}"
        )
    if number != 1:
        raise InvalidInput("the header must be the first line")
    slot = record.get("slot")
    return (None if slot is None else validation.slot(slot)), record["format"]


def _fact(record: dict, now: int) -> Fact:
    transfer_episodes.check_fields(record, (*FACT_COLUMNS, "tags"), ("slot", "key", "value"))
    slot, key, value, confidence, source = validation.fact(
        record["slot"],
        record["key"],
        record["value"],
        record.get("confidence", 1.0),
        record.get("source", "import"),
    )
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
        tags=tuple(sorted(validation.tags(record.get("tags", ())))),
    )


def _history(record: dict) -> HistoryEntry:
    transfer_episodes.check_fields(
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
    transfer_episodes.check_fields(record, FEEDBACK_FIELDS, FEEDBACK_FIELDS[:2] + ("at",))
    comment = record.get("comment")
    return (
        _id(record["fact_id"]),
        validation.rating(record["rating"]),
        None if comment is None else validation.value(comment),
        _time_ms(record, "at", 0),
    )


def _policy(record: dict) -> SlotPolicy:
    transfer_episodes.check_fields(record, POLICY_FIELDS, ("slot", "cap"))
    parts = {name: part for name, part in record.items() if name != "slot"}
    return validation.policy(validation.slot(record["slot"]), **parts)


def _default(record: dict) -> SlotPolicy:
    transfer_episodes.check_fields(record, DEFAULT_FIELDS, ("cap",))
    return validation.policy("*", description=retention.DEFAULT_DESCRIPTION, **record)


def _id(value) -> str:
    if value is None:
        return secrets.token_hex(8)
    return validation.text(value, "id", 64, single_line=True)


def _time_ms(record: dict, name: str, default: int) -> int:
    value = record.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MS:
        raise InvalidInput(
            f"{name} must be milliseconds since the epoch, up to the year 9999, not {_shown(value)}"
        )
    return value


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


def _optional_ms(record: dict, name: str) -> int | None:
    return None if record.get(name) is None else _time_ms(record, name, 0)


# -- writing a file ----------------------------------------------------------------------------
def write(records: Iterable[dict], path: str | os.PathLike, text=None) -> None:
    """Write an export (``text``: that text instead of JSON lines) to the new or replaced file
    ``path``: into a temporary file beside it first, which takes its name only once complete,
    so a failure (a full disk) leaves no file half written, and the old one as it was."""
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    partial = os.path.join(directory, f".{os.path.basename(target)}.{os.getpid()}.partial")
    try:
        with open(partial, "w", encoding="utf-8") as out:
            if text is not None:
                out.write(text)
            else:
                out.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, target)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise translate_os(e, target) from None


# -- importing it ------------------------------------------------------------------------------
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
    slots without one (``replace``: set). Episodes, links, the retrieval log and cursors:
    slotmem.storage.transfer_episodes.apply.

    A file that is neither this memory's own export nor vouched for (``Parsed.keeps_protected``)
    changes no protected fact in any mode: not its value, expiry, quality or protection, and
    ``replace`` does not remove it (each is ``kept``); nor does its feedback rate one."""
    report, written = ChangeReport(dry_run=dry_run), []
    ids: dict[str, str] = {}  # an imported fact id -> the id it has in this file
    won: set[str] = set()  # the imported fact ids whose fact was written
    for _, fact in parsed.facts:
        change, fact_written = _import_fact(
            conn, fact, mode, now, dry_run, ids, parsed.keeps_protected
        )
        report.changes.append(change)
        if change.action in ("added", "updated"):
            won.add(fact.id)
        if fact_written is not None:
            written.append(fact_written)
    if mode == "replace":
        report.changes += _remove_others(conn, parsed, now, dry_run, forget)
    report.records = {
        "history rows": _add_history(conn, parsed, ids, dry_run),
        "feedback rows": _add_feedback(conn, parsed, ids, dry_run, parsed.keeps_protected),
        "policies": _set_policies(conn, parsed, mode, dry_run),
        **transfer_episodes.apply(conn, parsed.more, mode, ids, won, dry_run),
        "links": transfer_links.apply(
            conn,
            parsed.links,
            {(fact.slot, fact.key) for _, fact in parsed.facts},
            dry_run,
            parsed.keeps_protected,
        ),
    }
    return report, written


KEPT_PROTECTED = "protected: a person wrote it (the file is not this memory's own export)"


def _import_fact(
    conn, fact: Fact, mode: str, now: int, dry_run: bool, ids: dict, keep_protected: bool
):
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
            if fact.tags:
                seq = conn.execute("SELECT seq FROM memory_facts WHERE id = ?", (fact.id,))
                fact_tags.replace(conn, seq.fetchone()[0], fact.tags)
        return Change("added", fact.slot, fact.key, fact.value), fact
    old = dataclasses.replace(Fact.from_row(row), tags=fact_tags.of_seq(conn, row["seq"]))
    ids[fact.id] = old.id
    fact = dataclasses.replace(fact, id=old.id)
    if _content(fact) == _content(old):  # what it says is the same: this file's times stay
        return Change("unchanged", fact.slot, fact.key, fact.value), None
    if mode == "skip-existing":
        return Change("skipped", fact.slot, fact.key, old.value, None, "already here"), None
    if keep_protected and old.protected:
        return Change("kept", fact.slot, fact.key, old.value, None, KEPT_PROTECTED), None
    if mode == "merge" and fact.updated_at <= old.updated_at:
        if not dry_run and fact.value != old.value:  # kept in history, so it can be restored
            rows.insert_history(conn, [rows.entry(fact, "import", now, "import")])
        note = "the value here is newer; the file's went to history"
        return Change("kept", fact.slot, fact.key, old.value, None, note), None
    if not dry_run:
        rows.archive(conn, row["seq"], "import", now, "import")
        rows.overwrite(conn, row["seq"], fact)
        fact_tags.replace(conn, row["seq"], fact.tags)
    written = fact if fact.value != old.value else None
    return Change("updated", fact.slot, fact.key, fact.value, old.value), written


def _content(fact: Fact) -> tuple:
    return dataclasses.astuple(
        dataclasses.replace(fact, created_at=0, updated_at=0, last_accessed=0, access_count=0)
    )


def _remove_others(conn, parsed: Parsed, now: int, dry_run: bool, forget) -> list[Change]:
    keep = {(fact.slot, fact.key) for _, fact in parsed.facts}
    where, params = ("WHERE slot = ?", (parsed.slot,)) if parsed.slot else ("", ())
    others = [
        row
        for row in conn.execute(f"SELECT * FROM memory_facts {where} ORDER BY seq", params)
        if (row["slot"], row["key"]) not in keep
    ]
    kept = [r for r in others if parsed.keeps_protected and r["protected_at"] is not None]
    gone = [r for r in others if r not in kept]
    if not dry_run:
        rows.remove(conn, [row["seq"] for row in gone], "import", now, "import", forget)
    note = "not in the file (replace)"
    return [
        *(Change("removed", r["slot"], r["key"], None, r["value"], note) for r in gone),
        *(Change("kept", r["slot"], r["key"], r["value"], None, KEPT_PROTECTED) for r in kept),
    ]


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


def _add_feedback(conn, parsed: Parsed, ids: dict, dry_run: bool, keep_protected: bool) -> int:
    new = []
    for _, (fact_id, rating, comment, at) in parsed.feedback:
        item = (ids.get(fact_id, fact_id), rating, comment, at)
        if keep_protected and _protected(conn, item[0]):
            continue
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


def _protected(conn, fact_id: str) -> bool:
    row = conn.execute("SELECT protected_at FROM memory_facts WHERE id = ?", (fact_id,)).fetchone()
    return row is not None and row[0] is not None


def _set_policies(conn, parsed: Parsed, mode: str, dry_run: bool) -> int:
    """``merge`` and ``replace`` set the file's policies; ``skip-existing`` sets one only where
    this memory has none of its own: no policy, or the one a new file starts with."""
    settings = "DO UPDATE SET " + ", ".join(
        f"{name} = excluded.{name}" for name in POLICY_FIELDS[1:]
    )
    done = 0
    for _, policy in parsed.policies:
        found = conn.execute("SELECT * FROM memory_slots WHERE slot = ?", (policy.slot,))
        row = found.fetchone()
        there = None if row is None else SlotPolicy(*row)
        if there == policy or (mode == "skip-existing" and not _built_in(there)):
            continue
        done += 1
        if not dry_run:
            conn.execute(
                f"INSERT INTO memory_slots VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (slot) {settings}",
                dataclasses.astuple(policy),
            )
    default = parsed.default
    if (
        default is not None
        and retention.default_policy(conn) != default
        and (mode != "skip-existing" or not retention.has_default(conn))
    ):
        done += 1
        if not dry_run:
            retention.set_default(conn, default)
    return done


BUILT_IN = {  # the policies a new file starts with (migration 0002)
    policy.slot: policy
    for policy in (
        SlotPolicy("user", 500, 30, 3, "Preferences and personal facts about the user"),
        SlotPolicy(
            "project", 1000, 30, 3, "Decisions, stack, constraints and deadlines of the project"
        ),
        SlotPolicy("agent", 300, 30, 3, "Lessons the agent learned about doing its work"),
    )
}


def _built_in(policy: SlotPolicy | None) -> bool:
    """No policy, or the one a new file starts with: a person here set none."""
    return policy is None or BUILT_IN.get(policy.slot) == policy
