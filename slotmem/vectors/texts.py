"""What is embedded: a fact's key words and its value, and a question as its model wants it.

A fact's meaning is often in its key (``language`` = ``Elixir``, ``deploy.schedule`` = ``We
deploy on Fridays``), so the embedded text is the key's words, a colon, then the value:
``language: Elixir``, ``deploy schedule: We deploy on Fridays``. The key comes first so that
a model that cuts long text keeps it. A key word with a digit in it is an identifier, not a
topic (``D1:3``, ``note.12``, ``2026-05-01``, ``ticket-4711``), and is left out: embedded, such
words move a fact's vector by nothing it means (on LoCoMo, whose keys are turn ids, they cost
the hybrid leg 1.4 points of recall@10).

Asymmetric models embed questions and passages differently and were trained with a prefix on
each (``PREFIXES``: e5, bge, nomic); a model of one of those families, chosen with
``slotmem reindex -m``, gets its prefixes. Symmetric models (the default all-MiniLM-L6-v2)
get none.

A stored vector's content hash is the hash of this text, so a change to it (a new key form, a
model with prefixes) marks the vector stale, and ``slotmem reindex`` re-embeds exactly those.
"""

from __future__ import annotations

import re

# model family (a pattern of its id) -> (question prefix, passage prefix)
PREFIXES = (
    (re.compile(r"(?:^|[/_-])(?:multilingual-)?e5(?:[_-]|$)"), "query: ", "passage: "),
    (
        re.compile(r"(?:^|[/_-])bge-(?!m3)"),
        "Represent this sentence for searching relevant passages: ",
        "",
    ),
    (re.compile(r"nomic-embed"), "search_query: ", "search_document: "),
)
_SEPARATORS = re.compile(r"[._/:#\-\s]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def prefixes(model_id: str | None) -> tuple[str, str]:
    """(question prefix, passage prefix) of the model's family; ('', '') for the others."""
    name = (model_id or "").lower()
    for pattern, question, passage in PREFIXES:
        if pattern.search(name):
            return question, passage
    return "", ""


def key_words(key: str) -> str:
    """The key as words: ``deploy.schedule`` -> ``deploy schedule``, ``homeCity`` -> ``home City``,
    ``note.12`` -> ``note`` (a word with a digit is an identifier)."""
    words = _SEPARATORS.sub(" ", _CAMEL.sub(" ", key)).split()
    return " ".join(word for word in words if not any(ch.isdigit() for ch in word))


def document(model_id: str | None, key: str, value: str) -> str:
    """What is embedded for a fact: ``key words: value``, with the model's passage prefix."""
    words = key_words(key)
    text = f"{words}: {value}" if words else value
    return prefixes(model_id)[1] + text


def question(model_id: str | None, text: str) -> str:
    """What is embedded for a question: the text, with the model's question prefix."""
    return prefixes(model_id)[0] + text
