"""Secrets in text headed for memory: API keys, tokens, private keys, passwords."""

from __future__ import annotations

import re

_SECRET_RES = [
    re.compile(p, re.IGNORECASE)
    for p in (
        (
            r"\b(?:sk-[A-Za-z0-9_-]{20,}|sk_live_[A-Za-z0-9]{16,}|rk_live_[A-Za-z0-9]{16,}"
            r"|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})"
        ),
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*",
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # a JWT
        r"\bBearer\s+(?P<secret>[A-Za-z0-9_\-.=+/]{20,})",
        r"\b[a-z][a-z0-9+.-]*://[^\s/:@]*:(?P<secret>[^\s/@]+)@",  # scheme://user:password@
        # `password: ...` and the like, in a few languages: the value is the secret
        (
            r"\b(?:password|passwort|passwd|pwd|passphrase|mot\s+de\s+passe|contrase[ñn]a|senha"
            r"|пароль|api[_-]?key|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token)"
            r"\s*[:=]\s*(?P<secret>[^\s,;]{4,})"
        ),
    )
]


def secret_reason(*texts: str) -> str | None:
    for text in texts:
        if _secrets(text):
            return "looks like a secret (an API key, token, private key or password)"
    return None


def _secrets(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are secrets, in order, not overlapping."""
    spans = sorted(
        match.span("secret" if "secret" in pattern.groupindex else 0)
        for pattern in _SECRET_RES
        for match in pattern.finditer(text)
    )
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def redact(text: str) -> str:
    """``text`` with every secret it holds replaced by ``[redacted]``."""
    for start, end in reversed(_secrets(text)):
        text = text[:start] + "[redacted]" + text[end:]
    return text
