"""Scans of text headed for memory: instructions aimed at the agent, hidden characters, secrets.

The flusher rejects proposed facts that trip them; the llm tools and the MCP server check writes
the same way, because a memory is read back into a prompt later.

A fact is scanned as written and as normalised: NFKC (full-width and mathematical letters),
look-alike letters of other scripts folded to Latin, leetspeak digits read as letters, and
spaced-out letters joined; runs hidden in base64, hex, URL encoding, escapes, ROT13 or written
backwards are decoded (``decoders``) and scanned too. The patterns (``rules``, ``languages``)
cover English and other languages, instructions phrased as facts ("the assistant must ..."),
chat roles and tool results written into a fact, and standing orders phrased as preferences; a
small linear model (``model``, over the words and the ideas of ``concepts``) weighs what they
let through, and names the band just below its threshold where it is unsure, for which a caller
with a language model may ask it for a second opinion (``review``). Where an embedding model is
at hand (``embedding``: the semantic extra's default model, registered by ``slotmem.vectors``),
a second model also weighs the text's vector, its meaning. Both are measured by ``benchmarks/safety.py`` on a
labelled set (its figures are a floor in the tests). A patient attacker finds phrasings they
miss, so what the scan lets through must still be read back as data, never as instructions, by
the agent that uses it.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .injection import injection_reason
    from .normalise import normalised, one_line
    from .secrets import redact, secret_reason

# Loaded on first use: slotmem.vectors hands ``embedding`` its model on every Store's path, and
# a read (an agent's `slotmem context`) must not pay for the patterns and the model.
_HOMES = {
    "injection_reason": "injection",
    "normalised": "normalise",
    "one_line": "normalise",
    "redact": "secrets",
    "secret_reason": "secrets",
}


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_HOMES[name]}", __name__), name)


__all__ = ["injection_reason", "normalised", "one_line", "redact", "secret_reason"]
