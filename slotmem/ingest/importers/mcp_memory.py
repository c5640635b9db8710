"""The MCP reference memory server's file (``memory.json``, ``memory.jsonl`` in newer versions):
JSON Lines of ``{"type": "entity", "name", "entityType", "observations"}`` and ``{"type":
"relation", "from", "to", "relationType"}``. It maps straight to facts, without a model, all
into one slot (``user`` unless told):

- an entity's observations -> one fact, key the entity's name, value its observations joined
  with ``; `` (``John_Smith``: ``Speaks fluent Spanish; Graduated in 2019``), which reads as one
  line wherever a fact is shown;
- its type -> the fact ``<name>.type`` (``John_Smith.type``: ``person``);
- a relation -> the fact ``<from>.<relationType>`` whose value is the other entity's name
  (``John_Smith.works_at``: ``Anthropic``); several relations of one kind from one entity share
  the fact, the names joined with ``; ``;
- and a relation -> a link (``Store.link``) from the entity's fact to the other entity's, its
  type the relationType in link syntax (lower case, other characters as ``_``: ``works at``
  -> ``works_at``). An entity's fact is ``<name>`` (its observations), else ``<name>.type``. A
  relation whose entity is neither in the file nor in the slot, or whose type has no letter or
  digit, makes no link; a link from a protected fact is not made. The report's records count
  the links made (``links``).

A re-import of the same file changes nothing (every fact is ``unchanged``); a changed file
updates the facts it changed, their old values going to history. The file is what agents wrote
through that server: a fact a person protected is ``kept`` as it is, in any spelling of its key. Every fact passes the checks
of any write and the write scan (instructions aimed at an AI, secrets).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ... import validation
from ...errors import InvalidInput, ProtectedFact
from ...reports import Change, ChangeReport
from ...safety import injection_reason, secret_reason
from .common import ImportFileError, text_of

SEPARATOR = "; "
FIELDS = {
    "entity": ("name", "entityType", "observations"),
    "relation": ("from", "to", "relationType"),
}


@dataclass
class Graph:
    """The facts a memory file maps to, in file order, each with the line it came from."""

    facts: dict[str, str] = field(default_factory=dict)  # key -> value
    lines: dict[str, int] = field(default_factory=dict)  # key -> the line that made it
    entities: int = 0
    relations: int = 0
    entity_keys: dict[str, str] = field(default_factory=dict)  # name -> its fact's key
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (from, rel, to) names


def read_memory_json(data: str | bytes, name: str = "memory.json", slot: str = "user") -> Graph:
    """The facts of a memory file, every line checked: a malformed one raises ImportFileError
    naming it."""
    slot = validation.slot(slot)
    graph, targets = Graph(), dict[str, list[str]]()
    for number, line in enumerate(text_of(data, name).splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = _record(line)
            if record["type"] == "entity":
                graph.entities += 1
                observations = SEPARATOR.join(
                    o.strip() for o in record["observations"] if o.strip()
                )
                if observations:
                    _add(graph, record["name"], observations, number)
                _add(graph, f"{record['name']}.type", record["entityType"], number)
                entity = record["name"]
                graph.entity_keys[entity] = entity if observations else f"{entity}.type"
            else:
                graph.relations += 1
                key = f"{record['from']}.{record['relationType']}"
                if key in graph.lines and key not in targets:
                    raise InvalidInput(f"{key!r} is also the key of line {graph.lines[key]}")
                names = targets.setdefault(key, [])
                if record["to"] not in names:
                    names.append(record["to"])
                graph.facts[key] = SEPARATOR.join(names)
                graph.lines.setdefault(key, number)
                rel = link_rel(record["relationType"])
                if rel is not None:
                    graph.links.append((record["from"], rel, record["to"]))
            for key in _keys_of(record):
                _check(slot, key, graph.facts.get(key))
        except InvalidInput as e:
            raise ImportFileError(f"{name} line {number}: {e}; nothing was imported") from None
    return graph


def link_rel(relation_type: str) -> str | None:
    """A relationType as a link's type: lower case, other characters as ``_``, starting with a
    letter or digit, at most 64 characters (None: nothing of it is left)."""
    rel = re.sub(r"[^a-z0-9_.:-]+", "_", relation_type.lower())
    rel = re.sub(r"^[_.:-]+", "", rel)[: validation.MAX_TAG_CHARS]
    return rel or None


def _record(line: str) -> dict:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise InvalidInput(f"not valid JSON ({e.msg}, column {e.colno})") from None
    if not isinstance(record, dict):
        raise InvalidInput("expected a JSON object, one entity or relation per line")
    kind = record.get("type")
    if kind not in FIELDS:
        raise InvalidInput(f"type is {kind!r}, not 'entity' or 'relation'")
    missing = [f for f in FIELDS[kind] if f not in record]
    if missing:
        raise InvalidInput(f"the {kind} has no {', '.join(missing)}")
    for name in FIELDS[kind]:
        value = record[name]
        if name == "observations":
            if not isinstance(value, list) or not all(isinstance(o, str) for o in value):
                raise InvalidInput("observations must be a list of strings")
        elif not isinstance(value, str) or not value.strip():
            raise InvalidInput(f"{name} must be a non-empty string, not {value!r}")
        else:
            record[name] = value.strip()
    return record


def _keys_of(record: dict) -> list[str]:
    if record["type"] == "entity":
        return [record["name"], f"{record['name']}.type"]
    return [f"{record['from']}.{record['relationType']}"]


def _add(graph: Graph, key: str, value: str, number: int) -> None:
    if key in graph.lines:
        raise InvalidInput(f"{key!r} is also the key of line {graph.lines[key]}")
    graph.facts[key] = value
    graph.lines[key] = number


def _check(slot: str, key: str, value: str | None) -> None:
    if value is None:
        return
    validation.fact(slot, key, value, 1.0, None)
    reason = injection_reason(key, value) or secret_reason(key, value)
    if reason:
        raise InvalidInput(f"refused by the write scan: {reason}")


def import_memory_json(
    store,
    data: str | bytes,
    name: str = "memory.json",
    *,
    slot: str = "user",
    dry_run: bool = False,
) -> ChangeReport:
    """Import a memory file into ``slot`` of ``store`` (see the module's docstring for the
    mapping), in one transaction, or say what would change (``dry_run``)."""
    graph = read_memory_json(data, name, slot)
    source = validation.source(f"mcp-memory:{name}"[: validation.MAX_SOURCE_CHARS])
    report = ChangeReport(dry_run=dry_run)
    report.records = {"entities": graph.entities, "relations": graph.relations, "links": 0}
    if dry_run:
        for key, value in graph.facts.items():
            old = store.get(slot, key)
            action = "added" if old is None else "unchanged" if old.value == value else "updated"
            if action == "updated" and old.protected:
                report.changes.append(_kept(slot, old.key, old.value))
                continue
            report.changes.append(_change(action, slot, key, value, old and old.value))
        report.records["links"] = len(_new_links(store, graph, slot, set(graph.facts)))
        return report
    rows = [{"slot": slot, "key": k, "value": v, "source": source} for k, v in graph.facts.items()]
    with store.transaction():  # facts and links: all or nothing
        for result in store.upsert_many(rows, skip_protected=True):
            fact, old = result.fact, result.previous
            if result.action == "protected":
                report.changes.append(_kept(slot, fact.key, fact.value))
                continue
            action = "added" if result.action == "created" else result.action
            report.changes.append(_change(action, slot, fact.key, fact.value, old and old.value))
        for start, rel, end in _new_links(store, graph, slot, set()):
            try:
                store.link(slot, start, rel, slot, end, source=source, allow_protected=False)
            except ProtectedFact:
                continue
            report.records["links"] += 1
    return report


def _new_links(store, graph: Graph, slot: str, written: set[str]) -> list[tuple[str, str, str]]:
    """The links ``graph``'s relations make that ``slot`` lacks, as (from key, rel, to key):
    each entity's fact in ``written`` (the keys a dry run would write) or in the store; a
    relation whose entity has no fact makes none."""
    found: list[tuple[str, str, str]] = []
    for start, rel, end in graph.links:
        keys = []
        for name in (start, end):
            key = None
            for candidate in (graph.entity_keys.get(name), name, f"{name}.type"):
                if candidate and (candidate in written or store.get(slot, candidate)):
                    key = candidate
                    break
            keys.append(key)
        if keys[0] is None or keys[1] is None:
            continue
        link = (keys[0], rel, keys[1])
        there = {
            (lk.from_fact.key, lk.rel, lk.to_fact.key)
            for lk in store.links(slot, keys[0])
            if lk.from_fact.slot == slot and lk.to_fact.slot == slot
        }
        if link not in there and link not in found:
            found.append(link)
    return found


def _kept(slot: str, key: str, value: str) -> Change:
    return Change("kept", slot, key, value, None, "protected: a person wrote it")


def _change(action: str, slot: str, key: str, value: str, old: str | None) -> Change:
    return Change(action, slot, key, value, old if action == "updated" else None)
