"""The write policy: what a proposed fact must be to be stored, and how it is normalized."""

from __future__ import annotations

import datetime
import re
import unicodedata

from pydantic import ValidationError

from .. import validation
from ..errors import InvalidInput
from ..safety import injection_reason, one_line, redact, secret_reason
from .dates import anchor, to_ms
from .defaults import DEFAULT_MIN_CONFIDENCE
from .reply import ProposedFact
from .report import FlushItem

KEY_MAX_CHARS = 100
VALUE_MAX_CHARS = 500


class Policy:
    "Turns one raw proposed fact into a FlushItem: accepted (classified against the store later) or rejected with a reason."

    def __init__(
        self, slots, min_confidence=DEFAULT_MIN_CONFIDENCE, value_max=VALUE_MAX_CHARS, review=None
    ):
        """``review(key, value)``: a second opinion (``safety.review``) on what the scan let
        through, returning a reason to refuse or None."""
        self.slots = tuple(slots)
        self.review = review
        self.min_confidence = min_confidence
        self.value_max = value_max

    def check(self, raw, said: datetime.datetime | None = None) -> FlushItem:
        """``said``: when the chunk the fact comes from was said. A value that still holds a
        relative date gets that day appended; a ttl counts from then."""
        try:
            fact = ProposedFact.model_validate(_known_fields(raw))
        except ValidationError as ex:
            return rejected(raw, "malformed fact: " + _pydantic_reason(ex))
        slot = fact.slot.strip().lower()
        key = normalize_key(fact.key)
        value = cap_value(fact.value, self.value_max)
        if said is not None and value:
            value = anchor(value, said)
        item = FlushItem(slot, key or fact.key, value, fact.confidence, "created", ttl=fact.ttl)
        reason = self._reason(item, key, fact) or self._expiry(item, said)
        if reason:
            item.action, item.reason = "rejected", reason
            item.key, item.value = redact(item.key), redact(item.value)  # reports show no secret
        return item

    def _reason(self, item: FlushItem, key: str, fact: ProposedFact) -> str | None:
        suspicious = injection_reason(fact.key, fact.value) or secret_reason(fact.key, fact.value)
        if suspicious:
            return suspicious
        if item.slot not in self.slots:
            return f"unknown slot {item.slot!r} (expected one of: {', '.join(self.slots)})"
        if not key:
            return f"key {fact.key!r} is empty after normalizing"
        if len(key) > KEY_MAX_CHARS:
            return f"key is longer than {KEY_MAX_CHARS} characters"
        if not item.value:
            return "value is empty"
        if not 0.0 <= fact.confidence <= 1.0:
            return f"confidence {fact.confidence} is outside [0, 1]"
        if fact.confidence < self.min_confidence:
            return f"confidence {fact.confidence:g} is below the floor {self.min_confidence:g}"
        return self.review(fact.key, fact.value) if self.review is not None else None

    @staticmethod
    def _expiry(item: FlushItem, said: datetime.datetime | None) -> str | None:
        if item.ttl is None or not item.ttl.strip():
            item.ttl = None
            return None
        try:
            length = validation.duration(item.ttl)
        except InvalidInput as ex:
            return str(ex)
        start = to_ms(said or datetime.datetime.now(datetime.timezone.utc))
        item.expires_at = start + length
        return None


def _known_fields(raw):
    if not isinstance(raw, dict):
        return raw
    return {name: raw[name] for name in ProposedFact.model_fields if name in raw}


def _pydantic_reason(ex: ValidationError) -> str:
    error = ex.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def rejected(raw, reason: str) -> FlushItem:
    "A proposed fact (whatever it is) rejected for ``reason``, secrets redacted."
    raw = raw if isinstance(raw, dict) else {"value": raw}
    confidence = raw.get("confidence")
    return FlushItem(
        slot=str(raw.get("slot", "")),
        key=redact(str(raw.get("key", ""))),
        value=redact(one_line(str(raw.get("value", "")), VALUE_MAX_CHARS)),
        confidence=confidence if isinstance(confidence, (int, float)) else None,
        action="rejected",
        reason=reason,
    )


def normalize_key(raw: str) -> str:
    """``"Home City"`` -> ``"home_city"``: ASCII, lower case, ``[a-z0-9_.-]``, trimmed."""
    key = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", raw.strip())  # homeCity -> home_City
    key = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode().lower()
    key = re.sub(r"[^a-z0-9_.-]+", "_", key)
    key = re.sub(r"_{2,}", "_", key)
    return key.strip("_.-")


def cap_value(value: str, limit: int = VALUE_MAX_CHARS) -> str:
    "One line, at most ``limit`` characters, cut at a word boundary."
    value = " ".join(value.split())
    if len(value) <= limit:
        return value
    cut = value.rfind(" ", 0, limit)
    return value[: cut if cut > limit // 2 else limit - 1].rstrip() + "…"


def restates(old: str, new: str) -> bool:
    """Is ``new`` the stored value said again (case, spacing and a final period aside)? Such a
    proposal is reported unchanged and not written: a rewrite would only churn history."""

    def norm(text):
        return " ".join(text.split()).rstrip(".!").casefold()

    return norm(old) == norm(new)
