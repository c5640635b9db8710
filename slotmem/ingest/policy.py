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
from .reply import SYNONYMS, ProposedFact
from .report import FlushItem

KEY_MAX_CHARS = 100
NO_TTL = {
    *("", "-", "0", "no", "none", "null", "nil", "n/a", "na", "never", "false"),
    *("forever", "permanent", "permanently", "indefinite", "indefinitely", "infinite"),
    *("unlimited", "durable", "no ttl", "no expiry", "does not expire"),
}
_ISO_DURATION = re.compile(
    r"p(?:(\d+)y)?(?:(\d+)m)?(?:(\d+)w)?(?:(\d+)d)?(?:t(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?)?"
)
_PERCENT = re.compile(r"\s*(\d{1,3}(?:\.\d+)?)\s*%\s*")
ASSUMED_CONFIDENCE = 0.7  # a fact given without one: above the floor, below a firm statement
WORD_CONFIDENCE = {
    "certain": 1.0, "very high": 0.95, "high": 0.9, "medium": 0.6, "moderate": 0.6,
    "low": 0.3, "very low": 0.1,
}  # fmt: skip
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
        fields = _known_fields(raw, self.slots)
        if isinstance(fields, dict) and "slot" not in fields and len(self.slots) == 1:
            fields["slot"] = self.slots[0]  # flushing into one slot: the model may not name it
        try:
            fact = ProposedFact.model_validate(fields)
        except ValidationError as ex:
            return rejected(
                raw, "malformed fact: " + (_shape_reason(fields) or _pydantic_reason(ex))
            )
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


def _known_fields(raw, slots=()):
    """The fields of a fact: a field missing read from a synonym (``"fact"`` for ``value``,
    ``"category"`` naming one of ``slots`` for ``slot``), a number given as its value made text
    ("34"), a confidence as a percentage ("90%", 90) or a word ("high") made a fraction, and a
    missing one ``ASSUMED_CONFIDENCE`` when the rest is there."""
    if not isinstance(raw, dict):
        return raw
    fields = {name: raw[name] for name in ProposedFact.model_fields if name in raw}
    for name, others in SYNONYMS.items():
        found = [raw[other] for other in others if isinstance(raw.get(other), str)]
        if name == "slot":
            found = [text for text in found if text.strip().lower() in slots]
        if name not in fields and found:
            fields[name] = found[0]
    value, confidence = fields.get("value"), fields.get("confidence")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        fields["value"] = str(value)
    if isinstance(confidence, str) and (percent := _PERCENT.fullmatch(confidence)):
        fields["confidence"] = float(percent.group(1)) / 100
    elif isinstance(confidence, str) and confidence.strip().lower() in WORD_CONFIDENCE:
        fields["confidence"] = WORD_CONFIDENCE[confidence.strip().lower()]
    elif isinstance(confidence, (int, float)) and not isinstance(confidence, bool):
        if 1 < confidence <= 100 and float(confidence).is_integer():
            fields["confidence"] = confidence / 100  # out of 100
    elif "confidence" not in fields and {"key", "value"} <= fields.keys():
        fields["confidence"] = ASSUMED_CONFIDENCE
    if "ttl" in fields:
        fields["ttl"] = _ttl(fields["ttl"])
    return fields


def _ttl(ttl):
    """A fact's ttl as the policy reads it: None for the ways models say a fact has none
    ("none", "permanent", "N/A", 0, false), "3d" for ISO 8601's "P3D", "1 week" for "a week"."""
    if ttl is True:
        return ttl  # rejected: not a duration
    if ttl is False or ttl == 0:
        return None
    if isinstance(ttl, (int, float)):
        return str(ttl)  # a number without a unit: rejected, the reason says so
    if not isinstance(ttl, str):
        return ttl
    text = ttl.strip().lower().rstrip(".")
    if text in NO_TTL:
        return None
    if (iso := _ISO_DURATION.fullmatch(text)) is not None and any(iso.groups()):
        units = ("y", "mo", "w", "d", "h", "m", "s")
        return "".join(f"{n}{unit}" for n, unit in zip(iso.groups(), units) if n)
    return re.sub(r"^an? ", "1 ", text) if re.match(r"an? \w", text) else ttl


def _shape_reason(fields) -> str | None:
    "Why a fact's value or confidence is not one, in words a person reads."
    if not isinstance(fields, dict):
        return None
    value, confidence = fields.get("value"), fields.get("confidence")
    if "value" in fields and not isinstance(value, str):
        kinds = {list: "a list", dict: "an object", bool: "true or false", type(None): "null"}
        kind = kinds.get(type(value), "not text")
        return f"value is {kind}, not a sentence"
    if isinstance(confidence, str):
        try:
            float(confidence)
        except ValueError:
            return f"confidence {one_line(confidence, 40)!r} is not a number"
    return None


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
