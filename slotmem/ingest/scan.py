"""Finding JSON in a model's reply: where each JSON value is, where its strings end, how many
facts its text holds. No parsing here (``reply.py`` reads what this finds).

A string ends at a quote that JSON could continue after (``,`` then another item, ``:``, a
closing bracket, a comment, the end): a quote inside a value that the model did not escape
(``"Has a 27" monitor."``, ``"Said "no" to Java."``) is part of the value, so one such quote
does not turn the rest of the reply inside out."""

from __future__ import annotations

import re
from dataclasses import dataclass

_STARTS = re.compile(r"""[\[{]""")
_LOOKS_LIKE_JSON = re.compile(r"""(?:\{\s*(?:["'}]|[A-Za-z_$][\w$]*\s*:|$)|\[\s*(?:[\[{"'\]]|$))""")
_BARE_KEY = re.compile(r"([A-Za-z_$][\w$]*)\s*:")  # an unquoted key, as in {value: ...}
# What may follow a string's closing quote (a quote followed by anything else is in the string).
_AFTER_CLOSE = re.compile(
    r"""\s*(?: $ | [:}\]"'/\#]  # the end, a colon, a closing bracket, a string, a comment
    | ,\s*(?: $ | ["'{\[\]}/\#\-\d.]  # or a comma, then an item or a key
        | [\w$]+\s*[:,\]}] | (?:true|false|null|True|False|None|NaN|-?Infinity)\b ))""",
    re.VERBOSE,
)
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)", re.DOTALL)  # a backslash and what it escapes
_VALID_ESCAPE = re.compile(r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})')
_KEPT = ('\\"', "\\\\")  # escapes that stay escapes when backslashes are taken as themselves
_BARE_QUOTE = re.compile(r'(?<!\\)((?:\\\\)*)"')  # a quote after an even run of backslashes
FACT_FIELDS = {"key", "slot", "confidence", "ttl"}  # beside "value": an object that is a fact


@dataclass
class Segment:
    "A JSON value found in a reply: text[start:end]; unclosed when the reply ended inside it."

    start: int
    end: int
    closed: bool
    stack: list[tuple[str, int]]  # the brackets still open at the end: (bracket, position)


def segments(text: str) -> list[Segment]:
    """Each JSON-looking value in ``text``, in order: from a bracket that starts one to the
    bracket that closes it (strings in either quote, and comments, skipped), or to the end of
    the text when it never closes."""
    found = []
    position = 0
    while (match := _STARTS.search(text, position)) is not None:
        start = match.start()
        if not _LOOKS_LIKE_JSON.match(text, start):
            position = start + 1
            continue
        segment = _scan(text, start)
        found.append(segment)
        position = segment.end
    return found


def _scan(text: str, start: int) -> Segment:
    stack: list[tuple[str, int]] = []
    i, n = start, len(text)
    last = ""  # the last significant character outside strings
    while i < n:
        char = text[i]
        if opens_string(char, last):
            i = string_end(text, i)
            last = '"'
            continue
        if text.startswith("//", i) and last != ":":
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
            continue
        if text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        if char in "{[":
            stack.append((char, i))
        elif char in "}]":
            opener = "{" if char == "}" else "["
            openers = [bracket for bracket, _ in stack]
            if opener in openers:  # close it, and what a missing bracket left open inside it
                del stack[len(openers) - 1 - openers[::-1].index(opener) :]
            if not stack:
                return Segment(start, i + 1, True, [])
        if not char.isspace():
            last = char
        i += 1
    return Segment(start, n, False, stack)


def opens_string(char: str, last: str) -> bool:
    "Does ``char`` start a string, ``last`` being the last significant character before it?"
    return char == '"' or char == "'" and last in "{[,:"


def string_end(text: str, start: int) -> int:
    """The position after the string that starts at ``start``: its first quote that JSON can
    continue after, else its first quote (the end of the text if there is none)."""
    quote, i, first = text[start], start + 1, None
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            if _AFTER_CLOSE.match(text, i + 1):
                return i + 1
            first = i + 1 if first is None else first
        i += 1
    return len(text) if first is None else first


def repair_strings(piece: str) -> str:
    """``piece`` with its double-quoted strings made valid JSON where a model left them not:
    a double quote inside one escaped (``"Has a 27" monitor."``), markdown's ``\\_`` made ``_``,
    and in a string holding a backslash JSON does not know (``"C:\\Users\\bob"``) every
    backslash taken as itself."""
    out, i, last, n = [], 0, "", len(piece)
    while i < n:
        char = piece[i]
        if opens_string(char, last):
            end = string_end(piece, i)
            closed = end - i >= 2 and piece[end - 1] == char
            if char == '"' and closed:
                out.append('"' + _repair_body(piece[i + 1 : end - 1]) + '"')
            else:
                out.append(piece[i:end])
            i, last = end, '"'
            continue
        out.append(char)
        if not char.isspace():
            last = char
        i += 1
    return "".join(out)


def _repair_body(body: str) -> str:
    escapes = [match.group(0) for match in _ESCAPE.finditer(body)]
    if any(not _VALID_ESCAPE.fullmatch(e) and e[1].isalnum() for e in escapes):  # a path, a regex
        body = _ESCAPE.sub(lambda m: m.group(0) if m.group(0) in _KEPT else "\\" + m.group(0), body)
    else:  # markdown's \_, a needless \'
        body = _ESCAPE.sub(
            lambda m: m.group(0) if _VALID_ESCAPE.fullmatch(m.group(0)) else m.group(0)[1:], body
        )
    return _BARE_QUOTE.sub(r'\1\\"', body)


def value_fields(piece: str) -> int:
    """How many facts a JSON value's text holds, by its ``value`` keys (quoted or not, never the
    word inside a string): those of each object that also has a ``key``, ``slot``,
    ``confidence`` or ``ttl`` (an object such as ``{"name": "retries", "value": 3}`` is not a
    fact). Two ``value`` keys in one fact count twice."""
    objects: list[dict | None] = []  # per open bracket: {"value": n, "other": bool} or None
    count, i, last = 0, 0, ""

    def note(name: str) -> None:
        if objects and objects[-1] is not None:
            name = name.strip().lower()
            objects[-1]["value"] += name == "value"
            objects[-1]["other"] |= name in FACT_FIELDS

    def close(entry) -> int:
        return entry["value"] if entry is not None and entry["other"] else 0

    while i < len(piece):
        char = piece[i]
        if opens_string(char, last):
            end = string_end(piece, i)
            if last in "{," and piece[end:].lstrip().startswith(":"):
                note(piece[i + 1 : end - 1])
            i, last = end, '"'
            continue
        if last in "{," and (bare := _BARE_KEY.match(piece, i)) is not None:
            note(bare.group(1))
            i, last = bare.end(), ":"
            continue
        if char in "{[":
            objects.append({"value": 0, "other": False} if char == "{" else None)
        elif char in "}]" and objects:
            count += close(objects.pop())
        if not char.isspace():
            last = char
        i += 1
    return count + sum(close(entry) for entry in objects)  # the objects a cut left open
