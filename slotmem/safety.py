"""Scans of text headed for memory: instructions aimed at the agent, hidden characters, secrets.

The flusher rejects proposed facts that trip them; the llm tools and the MCP server check writes
the same way, because a memory is read back into a prompt later.
"""

from __future__ import annotations

import re
import unicodedata

_OVERRIDE_VERB = r"\b(ignore|forget|override|bypass|disregard)\b"
_OVERRIDE_WHICH = r"\b(previous|prior|above|earlier|preceding|all|your|system|original|safety)\b"
_OVERRIDE_WHAT = r"\b(instructions?|prompts?|rules|directions|guidelines|directives)\b"
_CLAUSE_END = r"(\s*[.,;:!]|\s+and\b|\s*$)"
_INJECTION_PATTERNS = [
    (
        "instruction override",
        _OVERRIDE_VERB + r"[\w\s,]{0,30}" + _OVERRIDE_WHICH + r"[\w\s]{0,20}" + _OVERRIDE_WHAT,
    ),
    (
        "instruction override",
        r"\b(ignore|disregard)\s+(everything\s+|all\s+)?(the\s+)?(above|previous)" + _CLAUSE_END,
    ),
    ("instruction to the agent", r"\byou\s+(must|will|should|are)\s+now\b"),
    ("instruction to the agent", r"\bfrom\s+now\s+on,?\s+you\b"),
    ("instruction to the agent", r"\bnew\s+(system\s+)?instructions?\s*:"),
    ("system prompt marker", r"\bsystem\s*(prompt|message|instructions?)\s*:"),
    (
        "prompt extraction",
        r"\b(reveal|print|show|repeat|leak)\s+(your|the)\s+(system\s+prompt|instructions)\b",
    ),
    ("role-play", r"\bpretend\s+(to\s+be|you\s+are|that\s+you)\b|\brole[\s-]?play\b"),
    ("role-play", r"\byou\s+are\s+(now\s+)?(no\s+longer|not)\s+(an?\s+)?(ai|assistant|bound)\b"),
    (
        "jailbreak marker",
        r"\bjailbr(eak|oken)\b|\bDAN\s+mode\b|\bdo\s+anything\s+now\b|\bdeveloper\s+mode\b",
    ),
    (
        "hidden behaviour",
        r"\b(do\s+not|don'?t|never)\s+(tell|inform|mention\s+it\s+to|reveal\s+it\s+to)"
        + r"\s+the\s+user\b",
    ),
    ("hidden behaviour", r"\bwithout\s+(telling|informing|asking)\s+the\s+user\b"),
    ("data exfiltration", r"\b(send|post|upload|forward|exfiltrate)\b.{0,60}\bhttps?://"),
    ("remote image (exfiltration channel)", r"!\[[^\]]*\]\(\s*https?://"),
    (
        "chat-template token",
        r"<\|[a-z_]+\|>|\[/?INST\]|<</?SYS>>|</s>|\bBEGIN_(SYSTEM|INSTRUCTIONS)\b",
    ),
    (
        "hidden markup",
        r"<\s*/?\s*(script|iframe|object|embed|style|meta|link|svg|img|form|system|instructions)\b",
    ),
    ("hidden markup", r"<!--|\bjavascript\s*:|\bdata:text/html"),
]
_INJECTION_RE = [(re.compile(p, re.IGNORECASE), why) for why, p in _INJECTION_PATTERNS]
_VISIBLE_FORMAT_CHARS = {"\u200c", "\u200d"}  # ZWNJ/ZWJ: needed by some scripts and emoji


def injection_reason(*texts: str) -> str | None:
    """Why these texts look like instructions aimed at the agent (or carry hidden
    characters), or None if they look like plain facts."""
    for text in texts:
        for char in text:
            category = unicodedata.category(char)
            if (category == "Cf" and char not in _VISIBLE_FORMAT_CHARS) or (
                category == "Cc" and char not in "\t\n\r"
            ):
                return f"possible prompt injection: hidden character U+{ord(char):04X}"
        for pattern, why in _INJECTION_RE:
            match = pattern.search(text)
            if match:
                return f"possible prompt injection ({why}): {one_line(match.group(), 60)!r}"
    return None


_SECRET_RE = re.compile(
    r"\b(sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)


def secret_reason(text: str) -> str | None:
    return "looks like a secret (API key or private key)" if _SECRET_RE.search(text) else None


def one_line(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
