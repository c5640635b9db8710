"""Scans of text headed for memory: instructions aimed at the agent, hidden characters, secrets.

The flusher rejects proposed facts that trip them; the llm tools and the MCP server check writes
the same way, because a memory is read back into a prompt later.

A fact is scanned as written and as normalised: NFKC (full-width and mathematical letters),
look-alike letters of other scripts folded to Latin, leetspeak digits read as letters, and
spaced-out letters joined; base64 runs are decoded and scanned too. The patterns (``rules``,
``languages``) cover English and other languages, and instructions phrased as facts ("the
assistant must ..."); a small linear model (``model``, over the words and the ideas of
``concepts``) weighs what they let through. Both are measured by ``benchmarks/safety.py`` on a
labelled set (its figures are a floor in the tests). A patient attacker finds phrasings they
miss, so what the scan lets through must still be read back as data, never as instructions, by
the agent that uses it.
"""

from .injection import injection_reason
from .normalise import normalised, one_line
from .secrets import redact, secret_reason

__all__ = ["injection_reason", "normalised", "one_line", "redact", "secret_reason"]
