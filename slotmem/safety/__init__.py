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

from .injection import injection_reason
from .normalise import normalised, one_line
from .secrets import redact, secret_reason

__all__ = ["injection_reason", "normalised", "one_line", "redact", "secret_reason"]
