"""The malformed replies real models send: each recovers exactly the facts it holds, and the
report counts them; what cannot be read fails the flush with a line saying how many."""

import html
import json
import re

import pytest

from slotmem import ModelError
from slotmem.ingest.flusher import CUT_OFF, MAX_CONTINUATIONS, flush
from slotmem.ingest.reply import parse_reply

pytest_plugins = ["llm_mock"]

TZ = {"slot": "user", "key": "timezone", "value": "Lives in Stockholm.", "confidence": 0.9}
DB = {"slot": "project", "key": "db.engine", "value": "Uses Postgres 16.", "confidence": 0.8}
CI = {
    "slot": "agent",
    "key": "ci.first",
    "value": "Runs the tests before pushing.",
    "confidence": 0.7,
}
LOW = {"slot": "user", "key": "mood", "value": "Seemed tired.", "confidence": 0.2}
TEAM = {"slot": "team", "key": "size", "value": "Has five people.", "confidence": 0.9}
LAPTOP = {"slot": "user", "key": "laptop_model", "value": "Uses a ThinkPad_X1.", "confidence": 0.9}
STYLE = {
    "slot": "project",
    "key": "style",
    "value": "Wraps lists in [brackets] and maps in {braces}.",
    "confidence": 0.9,
}
TRIP = {"slot": "user", "key": "trip", "value": "Is travelling in Rome.", "confidence": 0.9}


def js(fact):
    return json.dumps(fact)


def py(fact):  # the same fact as a Python dict literal (single quotes, None, True)
    return repr(fact)


def many(*facts, sep=", "):
    return sep.join(js(f) for f in facts)


TZ_ROW = ("created", "user", "timezone", "Lives in Stockholm.")
DB_ROW = ("created", "project", "db.engine", "Uses Postgres 16.")
CI_ROW = ("created", "agent", "ci.first", "Runs the tests before pushing.")
LOW_ROW = ("rejected", "user", "mood", "Seemed tired.")
TEAM_ROW = ("rejected", "team", "size", "Has five people.")
THREE = [TZ_ROW, DB_ROW, CI_ROW]
LAPTOP_ROW = ("created", "user", "laptop_model", "Uses a ThinkPad_X1.")
STYLE_ROW = ("created", "project", "style", STYLE["value"])
TRIP_ROW = ("created", "user", "trip", "Is travelling in Rome.")

# What reasoning models write before their answer: a draft, the instructions' example (whose
# facts must not be written), JSON they talk about.
THINK_DRAFTS = (
    "<think>\nThe user lives in Stockholm. The shape is "
    '{"facts": [{"slot": "user", "key": "timezone", "value": "Lives in Stockholm.", '
    '"confidence": 0.9}, {"slot": "user", "key": "location", "value": "Is at the airport.", '
    '"confidence": 0.8, "ttl": "6h"}]}. Draft: {"slot": "user", "key": "city", "value": '
    '"Stockholm", "confidence": 0.9}. Hmm, each needs {"value": ...}. Also {"slot": ..., '
    '"key": ..., "value": "Postg\nOK, final answer.\n</think>\n\n'
)


def CURLY(text):  # every double quote typographic, opening and closing
    quotes = iter(["\u201c", "\u201d"] * text.count('"'))
    return "".join(next(quotes) if char == '"' else char for char in text)


SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"slot": {"type": "string"}, "value": {"type": "string"}},
                },
            }
        },
    }
)

# (name, reply, the report's rows (action, slot, key, value), its counts (created, rejected))
CORPUS = [
    # trailing commas, with real multi-object lists (the case: 4 objects, 2 rejected)
    ("trailing comma", f"[{many(TZ, DB, LOW, TEAM)},]", [TZ_ROW, DB_ROW, LOW_ROW, TEAM_ROW]),
    (
        "trailing commas everywhere",
        '{"facts": [' + ", ".join(js(f)[:-1] + ",}" for f in (TZ, DB, CI)) + ",],}",
        THREE,
    ),
    (
        "trailing comma in a fence",
        f'```json\n{{"facts": [{many(TZ, DB)},\n]}}\n```',
        [TZ_ROW, DB_ROW],
    ),
    # single quotes and Python literals
    ("single quotes", f"[{py(TZ)}, {py(DB)}]", [TZ_ROW, DB_ROW]),
    (
        "single quotes, escaped apostrophe",
        "[{'slot': 'user', 'key': 'laptop', 'value': 'Uses Bob\\'s laptop.', 'confidence': 0.9}]",
        [("created", "user", "laptop", "Uses Bob's laptop.")],
    ),
    (
        "Python literals",
        "{'facts': [" + py({**TZ, "ttl": None}) + ", " + py(DB) + "], 'complete': True}",
        [TZ_ROW, DB_ROW],
    ),
    (
        "Python None ttl and False flag",
        (
            '{"facts": [{"slot": "user", "key": "timezone", "value": "Lives in Stockholm.", '
            '"confidence": 0.9, "ttl": None, "inferred": False}]}'
        ),
        [TZ_ROW],
    ),
    # comments
    (
        "line comments",
        '{"facts": [ // the user\n' + js(TZ) + ", // the project\n" + js(DB) + "]}",
        [TZ_ROW, DB_ROW],
    ),
    ("block comments", "/* facts */ [" + js(TZ) + ", /* and */ " + js(CI) + "]", [TZ_ROW, CI_ROW]),
    ("hash comments", '{"facts": [' + js(TZ) + ", # the db\n" + js(DB) + "]}", [TZ_ROW, DB_ROW]),
    (
        "a URL in a value is not a comment",
        (
            '[{"slot": "project", "key": "docs", "value": "Docs are at https://docs.example.com/api.", '
            '"confidence": 0.9}]'
        ),
        [("created", "project", "docs", "Docs are at https://docs.example.com/api.")],
    ),
    # markdown fences and prose
    ("json fence", f'```json\n{{"facts": [{many(TZ, DB, CI)}]}}\n```', THREE),
    ("bare fence", f"```\n[{many(TZ, DB)}]\n```", [TZ_ROW, DB_ROW]),
    ("JSON fence, capitals", f"```JSON\n[{js(TZ)}]\n```", [TZ_ROW]),
    (
        "prose around",
        f'Here are the facts I found:\n\n{{"facts": [{many(TZ, CI)}]}}\n\nLet me know!',
        [TZ_ROW, CI_ROW],
    ),
    (
        "prose with brackets before",
        f'I found [3] facts (see {{below}}):\n{{"facts": [{many(TZ, DB, CI)}]}}',
        THREE,
    ),
    ("prose and fence", f"Sure! ```json\n[{js(DB)}]\n``` Hope that helps.", [DB_ROW]),
    ("xml-ish wrapper", f'<json>{{"facts": [{js(TZ)}]}}</json>', [TZ_ROW]),
    # several JSON blocks
    (
        "two fenced blocks",
        f"User facts:\n```json\n[{js(TZ)}]\n```\nProject facts:\n```json\n[{many(DB, CI)}]\n```",
        THREE,
    ),
    (
        "a draft, then the same answer",
        f'Draft: [{js(TZ)}]\nFinal: {{"facts": [{js(TZ)}]}}',
        [TZ_ROW],
    ),
    ("one fact per line", f"{js(TZ)}\n{js(DB)}\n{js(CI)}", THREE),
    ("a list of lists", f"[[{js(TZ)}], [{js(DB)}]]", [TZ_ROW, DB_ROW]),
    # facts nested under other keys
    ("memories", f'{{"memories": [{many(TZ, DB)}]}}', [TZ_ROW, DB_ROW]),
    ("result.facts", f'{{"result": {{"facts": [{js(CI)}]}}}}', [CI_ROW]),
    ("data.memories.items", f'{{"data": {{"memories": {{"items": [{js(TZ)}]}}}}}}', [TZ_ROW]),
    (
        "lists under slot names",
        (
            '{"user": [{"key": "timezone", "value": "Lives in Stockholm.", "confidence": 0.9}], '
            '"project": [{"key": "db.engine", "value": "Uses Postgres 16.", "confidence": 0.8}]}'
        ),
        [TZ_ROW, DB_ROW],
    ),
    ("one fact under 'fact'", f'{{"fact": {js(TZ)}}}', [TZ_ROW]),
    ("facts as a JSON string", json.dumps({"facts": json.dumps([TZ, DB])}), [TZ_ROW, DB_ROW]),
    ("facts beside notes", f'{{"facts": [{js(TZ)}], "notes": "Nothing else."}}', [TZ_ROW]),
    (
        "capitalised field names",
        '{"Facts": [{"Slot": "user", "Key": "timezone", "Value": "Lives in Stockholm.", "Confidence": 0.9}]}',
        [TZ_ROW],
    ),
    # a schema echoed back
    ("schema, then facts", f'The schema:\n{SCHEMA}\nThe facts:\n{{"facts": [{js(TZ)}]}}', [TZ_ROW]),
    ("facts, then schema", f"[{js(DB)}]\n(as required by {SCHEMA})", [DB_ROW]),
    # other damage json-repair undoes
    ("missing commas between facts", f'{{"facts": [{js(TZ)} {js(DB)}]}}', [TZ_ROW, DB_ROW]),
    (
        "unquoted keys and values",
        "{facts: [{slot: user, key: timezone, value: Lives in Stockholm., confidence: 0.9}]}",
        [TZ_ROW],
    ),
    ("a missing closing brace", "[" + js(TZ)[:-1] + ", " + js(DB) + "]", [TZ_ROW, DB_ROW]),
    ("an ellipsis for more", f"[{many(TZ, DB)}, ...]", [TZ_ROW, DB_ROW]),
    (
        "unescaped quotes in a value",
        '[{"slot": "user", "key": "greeting", "value": "Says "hej" to everyone.", "confidence": 0.9}]',
        [("created", "user", "greeting", 'Says "hej" to everyone.')],
    ),
    (
        "a number as a string",
        '[{"slot": "user", "key": "timezone", "value": "Lives in Stockholm.", "confidence": "0.9"}]',
        [TZ_ROW],
    ),
    ("a bare fact object", js(TZ), [TZ_ROW]),
    (
        "a value that says value:",
        json.dumps(
            [{**TZ, "key": "motto", "value": 'Her motto is "value": first, and value: second.'}]
        ),
        [("created", "user", "motto", 'Her motto is "value": first, and value: second.')],
    ),
    ("extra fields", json.dumps([{**TZ, "reason": "said so", "source": "turn 1"}]), [TZ_ROW]),
    # malformed items are rejected with the reason, the others kept
    (
        "a string among facts",
        f'{{"facts": [{js(TZ)}, "Prefers tea."]}}',
        [TZ_ROW, ("rejected", "", "", "Prefers tea.")],
    ),
    (
        "a fact without a confidence",
        '{"facts": [{"slot": "user", "key": "drink", "value": "Prefers tea."}, ' + js(DB) + "]}",
        [("created", "user", "drink", "Prefers tea."), DB_ROW],
    ),
    (
        "no fact with a confidence",  # small local models leave out what looks optional
        json.dumps(
            {"facts": [{k: v for k, v in f.items() if k != "confidence"} for f in (TZ, DB)]}
        ),
        [TZ_ROW, DB_ROW],
    ),
    (
        "other names for the fields",
        json.dumps(
            [
                {
                    "category": "user",
                    "name": "timezone",
                    "fact": "Lives in Stockholm.",
                    "confidence": 0.9,
                },
                {
                    "slot": "project",
                    "topic": "db.engine",
                    "text": "Uses Postgres 16.",
                    "confidence": 0.9,
                },
                {
                    "type": "preference",
                    "key": "drink",
                    "content": "Prefers tea.",
                    "confidence": 0.9,
                },
            ]
        ),
        [TZ_ROW, DB_ROW, ("rejected", "", "drink", "")],
    ),
    (
        "strings only",
        '{"facts": ["Prefers tea.", "Lives in Oslo."]}',
        [("rejected", "", "", "Prefers tea."), ("rejected", "", "", "Lives in Oslo.")],
    ),
    # nothing to remember
    ("empty list in a fence with prose", 'Nothing worth keeping.\n```json\n{"facts": []}\n```', []),
    ("empty top-level list", "[]", []),
    # reasoning before the answer (DeepSeek-R1, Qwen3, ...): drafts, braces and the prompt's
    # example in it are not facts, and do not count as facts the reply failed to give
    ("a think block with drafts", f"{THINK_DRAFTS}\n```json\n[{many(TZ, DB, CI)}]\n```", THREE),
    (
        "a think block with braces",
        f"<think>\nThe {{user}} said [this].\n</think>\n[{js(DB)}]",
        [DB_ROW],
    ),
    (
        "a think block with an unclosed draft",
        '<think>\nDraft: {"facts": [{"slot": "user", "value": "Stock\nno, redo.\n</think>\n'
        + f"[{many(TZ, DB)}]",
        [TZ_ROW, DB_ROW],
    ),
    (
        "a think block naming the value field",
        '<think>Each fact is {"value": a sentence, "confidence": a number}.</think>\n'
        + f"[{many(TZ, CI)}]",
        [TZ_ROW, CI_ROW],
    ),
    (
        "reasoning whose opening tag was in the prompt",
        f'Okay, the format is {{"facts": [{{"slot": ...\nSo:\n</think>\n\n[{many(TZ, DB)}]',
        [TZ_ROW, DB_ROW],
    ),
    (
        "a thinking block, then a fence",
        f'<thinking>\nDraft {{"slot": "user", "value": "x"}}\n</thinking>\n```json\n[{js(CI)}]\n```',
        [CI_ROW],
    ),
    # quotes the model did not escape, and other broken strings
    (
        "a bare quote in a value",
        (
            f'[{js(TZ)}, {{"slot": "user", "key": "monitor", "value": "Has a 27" monitor.", '
            f'"confidence": 0.9}}, {many(DB, CI)}]'
        ),
        [TZ_ROW, ("created", "user", "monitor", 'Has a 27" monitor.'), DB_ROW, CI_ROW],
    ),
    (
        "a bare quote in the last value",
        (
            f'[{many(TZ, DB)}, {{"slot": "user", "key": "monitor", "value": "Has a 27" monitor.", '
            '"confidence": 0.9}]'
        ),
        [TZ_ROW, DB_ROW, ("created", "user", "monitor", 'Has a 27" monitor.')],
    ),
    (
        "a bare quote, then brackets in a value",
        (
            f'[{js(TZ)}, {{"slot": "user", "key": "monitor", "value": "Has a 27" monitor.", '
            f'"confidence": 0.9}}, {js(STYLE)}]'
        ),
        [TZ_ROW, ("created", "user", "monitor", 'Has a 27" monitor.'), STYLE_ROW],
    ),
    (
        "a bare quote in a fence, then prose with brackets",
        (
            '```json\n[{"slot": "user", "key": "monitor", "value": "Has a 27" monitor.", '
            f'"confidence": 0.9}}, {js(DB)}]\n```\nI hope these [facts] help {{you}}.'
        ),
        [("created", "user", "monitor", 'Has a 27" monitor.'), DB_ROW],
    ),
    (
        "a bare apostrophe in single quotes",
        (
            "[{'slot': 'user', 'key': 'laptop', 'value': 'Uses Bob's laptop.', 'confidence': 0.9}, "
            f"{py(DB)}]"
        ),
        [("created", "user", "laptop", "Uses Bob's laptop."), DB_ROW],
    ),
    (
        "bare quotes around a word",
        (
            '{"facts": [{"slot": "user", "key": "java", "value": "She said "no" to Java.", '
            f'"confidence": 0.9}}, {js(DB)}]}}'
        ),
        [("created", "user", "java", 'She said "no" to Java.'), DB_ROW],
    ),
    (
        "bare quotes and a comma in a value",
        (
            f'[{{"slot": "user", "key": "greeting", "value": "Says "hi", then "bye".", '
            f'"confidence": 0.9}}, {js(TZ)}]'
        ),
        [("created", "user", "greeting", 'Says "hi", then "bye".'), TZ_ROW],
    ),
    (
        "raw newlines in values",
        json.dumps({"facts": [TZ, DB]}, indent=2).replace("Lives in ", "Lives in\n"),
        [TZ_ROW, DB_ROW],
    ),
    (
        "markdown's escaped underscores",
        f"[{js(DB)}, {js(LAPTOP)}]".replace("_", "\\_"),
        [DB_ROW, LAPTOP_ROW],
    ),
    # the reply's JSON dressed up
    (
        "a JSON string holding the JSON",
        json.dumps(json.dumps({"facts": [TZ, DB]})),
        [TZ_ROW, DB_ROW],
    ),
    (
        "a fenced JSON string holding the JSON",
        "```json\n" + json.dumps(json.dumps([CI])) + "\n```",
        [CI_ROW],
    ),
    ("HTML-escaped", html.escape(f'{{"facts": [{many(TZ, DB)}]}}'), [TZ_ROW, DB_ROW]),
    ("typographic quotes", CURLY(f"[{many(TZ, DB, CI)}]"), THREE),
    (
        "one typographic pair",
        f"[{js(TZ)}, {js(DB)}]".replace('"slot"', "\u201cslot\u201d", 1),
        [TZ_ROW, DB_ROW],
    ),
    (
        "a fence for each fact",
        "\n".join(f"Fact:\n```json\n{js(f)}\n```" for f in (TZ, DB, CI)),
        THREE,
    ),
    ("facts holding one fact", f'{{"facts": {js(TZ)}}}', [TZ_ROW]),
    ("a list holding the answer", f'[{{"facts": [{many(TZ, DB)}]}}]', [TZ_ROW, DB_ROW]),
    (
        "a tool call, arguments as a string",
        json.dumps({"name": "save_facts", "arguments": json.dumps({"facts": [TZ, CI]})}),
        [TZ_ROW, CI_ROW],
    ),
    (
        "JSON in the prose that is not a fact",
        f'The user\'s config has {{"name": "retries", "value": 3}} in it.\n[{many(TZ, DB)}]',
        [TZ_ROW, DB_ROW],
    ),
    (
        "a summary object after the facts",
        f'{{"facts": [{many(TZ, DB)}]}}\nSummary: {{"count": 2, "value": "two facts"}}',
        [TZ_ROW, DB_ROW],
    ),
    (
        "prose with JSON-looking braces",
        f'Using {{slot}}/{{key}}, I found {{"n": 3}} facts, e.g. {{user: timezone}}.\n[{many(TZ, DB, CI)}]',
        THREE,
    ),
    # fields in another shape: read when the meaning is plain, else rejected with the reason
    (
        "ttl none on durable facts",
        json.dumps(
            [{**f, "ttl": ttl} for f, ttl in zip((TZ, DB, CI), ("none", "permanent", "N/A"))]
        ),
        THREE,
    ),
    (
        "ttl zero, false, null and empty",
        json.dumps(
            [{**f, "ttl": ttl} for f, ttl in zip((TZ, DB, CI, LAPTOP), (0, False, None, ""))]
        ),
        [*THREE, LAPTOP_ROW],
    ),
    (
        "ttl in ISO 8601 and in words",
        json.dumps([{**TRIP, "ttl": "P3D"}, {**TRIP, "key": "flight", "ttl": "a week"}]),
        [TRIP_ROW, ("created", "user", "flight", TRIP["value"])],
    ),
    (
        "ttl a bare number",
        json.dumps([{**TRIP, "ttl": 3600}, TZ]),
        [("rejected", "user", "trip", TRIP["value"]), TZ_ROW],
    ),
    (
        "confidence as a percentage",
        json.dumps([{**TZ, "confidence": "90%"}, {**DB, "confidence": "80 %"}]),
        [TZ_ROW, DB_ROW],
    ),
    (
        "confidence as a word",
        json.dumps(
            [
                {**TZ, "confidence": "high"},
                {**DB, "confidence": "low"},
                {**CI, "confidence": "sure"},
            ]
        ),
        [
            TZ_ROW,
            ("rejected", "project", "db.engine", "Uses Postgres 16."),
            ("rejected", "agent", "ci.first", "Runs the tests before pushing."),
        ],
    ),
    (
        "confidence out of 100",
        json.dumps([{**TZ, "confidence": 90}, {**DB, "confidence": 250}]),
        [TZ_ROW, ("rejected", "project", "db.engine", "Uses Postgres 16.")],
    ),
    (
        "confidence NaN and Infinity",
        f"[{js(TZ)[:-5]} NaN}}, {js(DB)[:-5]} Infinity}}, {js(CI)}]",
        [
            ("rejected", "user", "timezone", "Lives in Stockholm."),
            ("rejected", "project", "db.engine", "Uses Postgres 16."),
            CI_ROW,
        ],
    ),
    (
        "a slot in capitals, a key with spaces",
        json.dumps([{**TZ, "slot": "USER", "key": "Time Zone"}, DB]),
        [("created", "user", "time_zone", "Lives in Stockholm."), DB_ROW],
    ),
    (
        "a slot that is not one of the slots",
        json.dumps([{**TZ, "slot": "preferences"}, DB]),
        [("rejected", "preferences", "timezone", "Lives in Stockholm."), DB_ROW],
    ),
    (
        "a number as the value",
        json.dumps([{"slot": "user", "key": "age", "value": 34, "confidence": 0.9}, TZ]),
        [("created", "user", "age", "34"), TZ_ROW],
    ),
    (
        "a list, an object and null as the value",
        json.dumps(
            [
                {**TZ, "value": ["Go", "Rust"]},
                {**DB, "value": {"name": "Postgres"}},
                {**CI, "value": None},
                LAPTOP,
            ]
        ),
        [
            ("rejected", "user", "timezone", "['Go', 'Rust']"),
            ("rejected", "project", "db.engine", "{'name': 'Postgres'}"),
            ("rejected", "agent", "ci.first", "None"),
            LAPTOP_ROW,
        ],
    ),
    (
        "an answer tag after reasoning",
        f"<think>Two facts.</think>\n<answer>\n[{many(TZ, DB)}]\n</answer>",
        [TZ_ROW, DB_ROW],
    ),
    (
        "a value that mentions the think tags",
        (
            '[{"slot": "agent", "key": "r1.output", "value": "R1 replies start with <think>, end '
            f'with </think>\n", "confidence": 0.9}}, {js(TZ)}]'
        ),
        [
            ("created", "agent", "r1.output", "R1 replies start with <think>, end with </think>"),
            TZ_ROW,
        ],
    ),
    (
        "an escaped apostrophe in double quotes",
        '[{"slot": "user", "key": "laptop", "value": "Uses Bob\\\'s laptop.", "confidence": 0.9}]',
        [("created", "user", "laptop", "Uses Bob's laptop.")],
    ),
    (
        "a Windows path in a value",
        (
            f'[{{"slot": "project", "key": "repo.path", "value": "The repo is in C:\\Users\\bob\\new.", '
            f'"confidence": 0.9}}, {js(TZ)}]'
        ),
        [("created", "project", "repo.path", "The repo is in C:\\Users\\bob\\new."), TZ_ROW],
    ),
    (
        "a regular expression in a value",
        (
            '[{"slot": "project", "key": "version.pattern", "value": "Versions match \\d+\\.\\d+.", '
            '"confidence": 0.9}]'
        ),
        [("created", "project", "version.pattern", "Versions match \\d+\\.\\d+.")],
    ),
    (
        "typographic quotes either way round",
        "".join(
            ("\u201c" if i % 2 else "\u201d") if char == '"' else char
            for i, char in enumerate(f"[{many(TZ, DB)}]")
        ),
        [TZ_ROW, DB_ROW],
    ),
    ("an empty think block", f'<think>\n\n</think>\n\n{{"facts": [{js(TZ)}]}}', [TZ_ROW]),
    (
        "a fact without a key",
        json.dumps([{"slot": "user", "value": "Prefers tea.", "confidence": 0.9}, DB]),
        [("rejected", "user", "", "Prefers tea."), DB_ROW],
    ),
]


@pytest.mark.parametrize("name,text,rows", CORPUS, ids=[case[0] for case in CORPUS])
def test_the_corpus(store, mock_models, name, text, rows):
    mock_models.plain.enqueue(text)
    report = flush(store, "I live in Stockholm.", "mock")
    assert [(i.action, i.slot, i.key, i.value) for i in report.items] == rows
    created = sum(row[0] == "created" for row in rows)
    assert report.counts() == {
        "created": created,
        "updated": 0,
        "unchanged": 0,
        "rejected": len(rows) - created,
    }
    assert all(i.reason for i in report.rejected)
    assert report.continuations == 0 and report.notes == []
    assert len(store.list_facts()) == created


REASONS = {  # the reason each rejected fact of these replies gives, in order
    "ttl a bare number": ["ttl '3600' is not a duration: use a number and a unit"],
    "confidence as a word": [
        "confidence 0.3 is below the floor 0.4",
        "malformed fact: confidence 'sure' is not a number",
    ],
    "confidence out of 100": ["confidence 250.0 is outside [0, 1]"],
    "other names for the fields": ["malformed fact: slot: Field required"],
    "confidence NaN and Infinity": ["confidence nan is outside", "confidence inf is outside"],
    "a slot that is not one of the slots": ["unknown slot 'preferences'"],
    "a list, an object and null as the value": [
        "malformed fact: value is a list, not a sentence",
        "malformed fact: value is an object, not a sentence",
        "malformed fact: value is null, not a sentence",
    ],
    "a fact without a key": ["malformed fact: key: Field required"],
}


@pytest.mark.parametrize("name", list(REASONS))
def test_each_rejected_fact_says_why(store, mock_models, name):
    [text] = [text for case, text, _ in CORPUS if case == name]
    mock_models.plain.enqueue(text)
    report = flush(store, "I live in Stockholm.", "mock")
    reasons = [item.reason for item in report.rejected]
    assert len(reasons) == len(REASONS[name])
    for reason, expected in zip(reasons, REASONS[name]):
        assert reason.startswith(expected), reason


def test_a_fact_without_a_slot_goes_to_the_one_slot_flushed(store, mock_models):
    facts = [{k: v for k, v in f.items() if k != "slot"} for f in (TZ, DB)]
    mock_models.plain.enqueue(json.dumps(facts), json.dumps(facts))
    report = flush(store, "I live in Stockholm.", "mock", slots=["project"])
    assert [(i.action, i.slot, i.key) for i in report.items] == [
        ("created", "project", "timezone"),
        ("created", "project", "db.engine"),
    ]
    report = flush(store, "I live in Stockholm.", "mock", dry_run=True)  # three slots: which?
    assert [(i.action, i.reason) for i in report.items] == [
        ("rejected", "malformed fact: slot: Field required")
    ] * 2


def test_a_ttl_in_other_words_is_read(store, mock_models, clock):
    [text] = [text for case, text, _ in CORPUS if case == "ttl in ISO 8601 and in words"]
    mock_models.plain.enqueue(text)
    report = flush(store, "I am in Rome.", "mock", now=clock())
    day = 86_400_000
    assert [(i.ttl, i.expires_at) for i in report.created] == [
        ("3d", clock() + 3 * day),
        ("1 week", clock() + 7 * day),
    ]
    [text] = [text for case, text, _ in CORPUS if case == "ttl none on durable facts"]
    mock_models.plain.enqueue(text)
    report = flush(store, "I live in Stockholm.", "mock")
    assert [(i.ttl, i.expires_at) for i in report.created] == [(None, None)] * 3


def test_the_corpus_is_large_enough():
    assert len(CORPUS) >= 80  # 93


# -- what cannot be read fails the flush, with a count ----------------------------------------

FOUND = "Could not find a JSON list of facts"


# (name, reply, what the one-line error says)
FAILING = [
    (
        "two facts keys",
        '{"facts": [' + js(TZ) + '], "facts": [' + js(DB) + "]}",
        "Could not read 1 of the 2 facts",
    ),
    (
        "two value fields in a fact",
        '[{"slot": "user", "key": "a", "value": "A.", "value": "B.", "confidence": 0.9}]',
        "Could not read 1 of the 2 facts",
    ),
    ("only the schema", SCHEMA, "only the JSON schema it was given, echoed back"),
    ("an empty reply", "", "it began: 'an empty reply'"),
    ("prose only", "I could not find any facts.", FOUND),
    ("other JSON", '{"answer": 42}', FOUND),
    ("a list of numbers", "[1, 2]", FOUND),
    ("the prompt echoed", '{"prompt": "hi", "attachments": []}', FOUND),
    # shapes that hold no list of facts: no guess at what the model meant
    (
        "facts keyed by name",
        '{"user.timezone": "Lives in Stockholm.", "project.db": "Uses Postgres 16."}',
        FOUND,
    ),
    ("values keyed by slot and key", '{"user": {"timezone": "Lives in Stockholm."}}', FOUND),
    (
        "markdown bullets",
        "- user/timezone: Lives in Stockholm.\n- project/db.engine: Uses Postgres 16.",
        FOUND,
    ),
    (
        "a markdown table",
        "| slot | key | value |\n|---|---|---|\n| user | timezone | Lives in Stockholm. |",
        FOUND,
    ),
    ("YAML", "facts:\n  - slot: user\n    key: timezone\n    value: Lives in Stockholm.", FOUND),
    (
        "only reasoning",
        f"<think>\n[{js(TZ)}]\n</think>",
        "(only its reasoning, no answer after it)",
    ),
    (
        "two facts keys after reasoning",
        f"<think>Hm.</think>\n{{'facts': [{js(TZ)}], 'facts': [{js(DB)}]}}",
        "Could not read 1 of",
    ),
]


@pytest.mark.parametrize("name,text,message", FAILING, ids=[case[0] for case in FAILING])
def test_what_cannot_be_read_fails_with_one_line(store, mock_models, name, text, message):
    mock_models.plain.enqueue(text)
    with pytest.raises(ModelError, match=re.escape(message)) as excinfo:
        flush(store, "I live in Stockholm.", "mock")
    assert "\n" not in str(excinfo.value) and "nothing was written" in str(excinfo.value)
    assert store.list_facts() == []


# -- truncation: at every position of a real reply --------------------------------------------

REAL = [
    {
        "slot": "user",
        "key": "home_city",
        "value": "Lives in Berlin (moved from Paris).",
        "confidence": 0.9,
    },
    {
        "slot": "user",
        "key": "timezone",
        "value": "Works on Berlin time.",
        "confidence": 0.9,
        "ttl": None,
    },
    {
        "slot": "project",
        "key": "db.engine",
        "value": "The new service uses PostgreSQL 16.",
        "confidence": 0.95,
    },
    {
        "slot": "project",
        "key": "ci.migrations",
        "value": "Migrations run in CI before merging.",
        "confidence": 0.85,
    },
]
REPLIES = {
    "compact": json.dumps({"facts": REAL}),
    "indented in a fence": "```json\n" + json.dumps({"facts": REAL}, indent=2) + "\n```",
    "a bare list": json.dumps(REAL, indent=1),
}


def spans(reply: str) -> list[tuple[int, int]]:
    "Where each fact of REAL is in ``reply``: the positions of its braces."
    found = []
    for fact in REAL:
        at = reply.index(f'"key": "{fact["key"]}"')
        found.append((reply.rindex("{", 0, at), reply.index("}", at)))
    return found


@pytest.mark.parametrize("shape", list(REPLIES))
def test_a_reply_cut_at_every_position(shape):
    reply = REPLIES[shape]
    facts = spans(reply)
    list_end = reply.rindex("]")
    for cut in range(1, len(reply)):
        text = reply[:cut]
        parsed = parse_reply(text, "m", empty_ok=True)
        complete = [REAL[i]["key"] for i, (_, end) in enumerate(facts) if end < cut]
        assert [f["key"] for f in parsed.facts] == complete, text
        inside = [i for i, (start, end) in enumerate(facts) if start < cut <= end]
        assert (parsed.cut is not None) == bool(inside), text
        if inside:  # what the cut fact shows is what was said, never more
            real = REAL[inside[0]]
            for name, value in parsed.cut.items():
                if isinstance(value, str) and name in real and isinstance(real[name], str):
                    assert real[name].startswith(value), (text, name, value)
        assert parsed.truncated == (cut <= list_end), text


def test_every_cut_of_a_reply_is_completed_by_asking_for_the_rest(store, mock_models):
    reply = REPLIES["compact"]
    facts = spans(reply)
    for cut in range(1, len(reply), 3):
        complete = [i for i, (_, end) in enumerate(facts) if end < cut]
        truncated = cut <= reply.rindex("]")
        rest = {"facts": [f for i, f in enumerate(REAL) if i not in complete]}
        mock_models.plain.enqueue(reply[:cut], *([rest] if truncated else []))
        report = flush(store, "We moved to Berlin.", "mock", dry_run=True)
        assert sorted(i.key for i in report.created) == sorted(f["key"] for f in REAL), cut
        inside = any(start < cut <= end for start, end in facts)
        assert len(report.rejected) == int(inside), cut
        assert all(i.reason == CUT_OFF for i in report.rejected)
        assert report.continuations == int(truncated) and report.notes == []
        assert mock_models.plain.replies == []
        if truncated:
            asked = mock_models.plain.prompts[-1].prompt
            assert f"cut off at your output limit after {len(complete)} complete facts" in asked


def test_a_reply_cut_off_every_time_is_said_in_the_report(store, mock_models):
    first = '{"facts": [' + js(TZ) + ", " + js(DB)[:45]  # cut after its key
    again = '{"facts": [' + js(CI) + ", {"
    mock_models.plain.enqueue(first, *[again] * MAX_CONTINUATIONS)
    report = flush(store, "I live in Stockholm.", "mock")
    assert [(i.action, i.key) for i in report.items] == [
        ("created", "timezone"),
        ("created", "ci.first"),
        ("rejected", "db.engine"),
        ("rejected", ""),
        ("rejected", ""),
    ]
    assert report.continuations == MAX_CONTINUATIONS
    [note] = report.notes
    assert "cut off at its output limit" in note and f"asking {MAX_CONTINUATIONS} times" in note
    assert "facts after the 2 read may be missing" in note
    assert {f.key for f in store.list_facts()} == {"timezone", "ci.first"}


def test_the_command_line_says_what_was_cut_off(tmp_path, mock_models):
    from click.testing import CliRunner

    from slotmem.cli.flush import flush as flush_command

    (tmp_path / "chat.txt").write_text("I live in Stockholm.")
    first = '{"facts": [' + js(TZ) + ", " + js(DB)[:45]
    mock_models.plain.enqueue(first, *['{"facts": [' + js(CI) + ", {"] * MAX_CONTINUATIONS)
    args = [str(tmp_path / "chat.txt"), "-m", "mock", "-d", str(tmp_path / "m.db")]
    result = CliRunner().invoke(flush_command, args)
    assert result.exit_code == 0, result.output
    assert "the reply was cut off inside this fact" in result.output
    assert f"asked {MAX_CONTINUATIONS} times for the rest of a cut-off reply" in result.output
    assert "Note: the model's reply was cut off at its output limit" in result.output


def test_a_continuation_that_repeats_facts_adds_them_once(store, mock_models):
    mock_models.plain.enqueue(f"[{js(TZ)}, {js(DB)[:20]}", f"[{many(TZ, DB)}]")
    report = flush(store, "I live in Stockholm.", "mock")
    assert [(i.action, i.key) for i in report.items] == [
        ("created", "timezone"),
        ("created", "db.engine"),
        ("rejected", ""),  # cut before its key: its slot is all it said
    ]
    assert report.rejected[0].reason == CUT_OFF and report.rejected[0].slot == "project"


def test_a_continuation_without_json_ends_the_reply(store, mock_models):
    mock_models.plain.enqueue(f"[{js(TZ)}, {js(DB)[:20]}", "Sorry, that was all.")
    report = flush(store, "I live in Stockholm.", "mock")
    assert [(i.action, i.key) for i in report.items] == [("created", "timezone"), ("rejected", "")]
    assert report.continuations == 1 and report.notes == []


def test_a_reply_that_ends_inside_its_reasoning_is_asked_for_the_rest(store, mock_models):
    mock_models.plain.enqueue('<think>\nThe user said {"value": "Stockh', f"[{many(TZ, DB)}]")
    report = flush(store, "I live in Stockholm.", "mock")
    assert [(i.action, i.key) for i in report.items] == [
        ("created", "timezone"),
        ("created", "db.engine"),
    ]
    assert report.continuations == 1 and report.notes == []
    assert (
        "cut off at your output limit after 0 complete facts"
        in mock_models.plain.prompts[-1].prompt
    )


def test_an_unreadable_continuation_fails_the_flush(store, mock_models):
    mock_models.plain.enqueue(
        f"[{js(TZ)}, {js(DB)[:20]}", '[{"slot": "user", "value": "A.", "value": "B."}]'
    )
    with pytest.raises(ModelError, match="Could not read 1 of the 2 facts"):
        flush(store, "I live in Oslo.", "mock")
    assert store.list_facts() == []


def test_the_command_line_writes_every_fact_of_a_reasoning_models_reply(tmp_path, mock_models):
    """The common reply of a reasoning model run locally (Qwen3, DeepSeek-R1 through Ollama):
    its reasoning, drafts and the prompt's example in it, then the facts, each durable one
    with "ttl": "none", one whose confidence is a word, one with none."""
    from click.testing import CliRunner

    from slotmem import Store
    from slotmem.cli.flush import flush as flush_command

    facts = [{**TZ, "ttl": "none"}, {**DB, "ttl": "permanent"}, {**CI, "ttl": None}, TRIP]
    facts.append({**LAPTOP, "confidence": "unsure"})
    facts[2] = {k: v for k, v in CI.items() if k != "confidence"}
    reply = THINK_DRAFTS + "```json\n" + json.dumps({"facts": facts}, indent=2) + "\n```"
    (tmp_path / "chat.txt").write_text("I live in Stockholm and I am in Rome.")
    mock_models.plain.enqueue(reply)
    args = [str(tmp_path / "chat.txt"), "-m", "mock", "-d", str(tmp_path / "m.db")]
    result = CliRunner().invoke(flush_command, args)
    assert result.exit_code == 0, result.output
    assert "4 created, 0 updated, 0 unchanged, 1 rejected (model mock" in result.output
    assert "confidence 'unsure' is not a number" in result.output
    assert "Is at the airport." not in result.output  # the prompt's example, in the reasoning
    with Store(tmp_path / "m.db") as store:
        assert sorted((f.slot, f.key, f.value) for f in store.list_facts()) == [
            ("agent", "ci.first", "Runs the tests before pushing."),
            ("project", "db.engine", "Uses Postgres 16."),
            ("user", "timezone", "Lives in Stockholm."),
            ("user", "trip", "Is travelling in Rome."),
        ]


def test_every_shape_the_docs_name_is_in_the_corpus():
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "flusher.md").read_text()
    section = doc.split("## Reading the reply")[1].split("\n## ")[0]
    named = re.findall(r"\*([^*\n]+)\*", re.sub(r"`[^`\n]*`", "", section))  # *a case*
    cases = {case[0] for case in CORPUS} | {case[0] for case in FAILING}
    assert len(named) > 80 and sorted(set(named) - cases) == []
    tests = re.findall(r"`(test_\w+)`", section)
    assert tests and all(name in globals() for name in tests)
    assert f"holds {len(CORPUS)} replies" in section
    assert f"and {len(FAILING)} that fail with one line" in section
