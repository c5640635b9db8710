"""The injection scan: hidden characters, then the patterns on the text as written, as
normalised and as decoded (base64, hex, URL encoding, escapes, ROT13, backwards), then the model for what they let through."""

from __future__ import annotations

import re

from . import multilingual
from .decoders import decoded, english_share
from .model import ENGLISH_SHARE, weigh, words
from .normalise import hidden_character, normalised, one_line
from .rules import PATTERNS, SQUEEZED

# A quotation (opened after a space, a bracket or a colon, closed before a space or a stop) that
# a naming word introduces: "a talk titled '...'", "messages like '...'", "the phrase "..."".
# What it holds is named, not said, so a pattern it alone matches does not count (the model
# still weighs the whole text). "says", "reads" and "tells" do not introduce one.
_QUOTATION = re.compile(
    r"(?:^|(?<=[\s(\[:]))(?P<open>['\"“‘«„「])(?P<said>[^\n]{3,200}?)['\"”’»“」]"
    r"(?=[\s.,;:!?)\]]|$)"
    r"|(?P<cjk_open>[“「『])(?P<cjk_said>[^\n]{2,100}?)[”」』]"
)
_NAMING = re.compile(
    r"\b(?:called|titled|entitled|named|like|such\s+as|e\.g\.|phrases?|strings?|slogan|"
    r"examples?|labell?ed|keywords?|headline|(?:the|a|an)\s+prompts?|injects?|injected|"
    r"attacks?|jailbreaks?|payloads?|wie|comme|como|come|jak|как|такие\s+как|на\s+кшталт|"
    r"zoals|som|gibi|kiểu\s+như|seperti)\s*[:,]?\s*$",
    re.IGNORECASE,
)
# What an attempt or a test is reported to have tried on a model ("the red team tried to get the
# chatbot to leak its system prompt", "checks whether the assistant refuses to reveal ...",
# "test cases that try to override system prompts", "notes that tell the agent to"): what follows, to the end of its sentence, is
# reported, not said, so a pattern it alone matches does not count (the model still weighs it)
_REPORTED = re.compile(
    r"\b(?:tried|try|tries|trying|attempts?|attempted|attempting)\s+to\s+(?:get|make|trick|"
    r"convince|coax|push|lure)\s+(?:the|a|an|our|their|her|his|its)\s+(?:\w+\s+)?(?:chatbot|model|"
    r"assistant|agent|bot|llm|summari[sz]er)\s+(?:in)?to\b|\bwhether\s+(?:the|a|an|our)\s+(?:\w+\s+)?"
    r"(?:chatbot|model|assistant|agent|bot|llm)\s+(?:refuses|would|will|can\s+be)\b|"
    r"\b(?:test\s+cases|attacks|prompts|payloads)\s+that\s+(?:try|tries|attempt)\s+to\b|"
    r"\b(?:notes|prompts|readmes?|documents|e-?mails|pages|payloads|tickets|comments|messages|"
    r"test\s+cases)\s+(?:that|which)\s+(?:tell|ask|instruct|order)\s+(?:the|an?|our|its)\s+(?:\w+\s+)?"
    r"(?:chatbot|model|assistant|agent|bot|llm)\s+to\b"
)
# in Chinese, Japanese and Korean the naming word follows the quotation: “...”这类攻击
_NAMED_AFTER = re.compile(
    r"\s*(?:这类|這類|之类|之類|等|という|といった|などの|같은|라는|와\s*같은)"
)


def injection_reason(*texts: str) -> str | None:
    """Why these texts look like instructions aimed at the agent (or carry hidden
    characters), or None if they look like plain facts."""
    for text in texts:
        reason = pattern_reason(text) or model_reason(text)
        if reason:
            return reason
    return None


def pattern_reason(text: str) -> str | None:
    """The scan without the model: hidden characters and the patterns."""
    hidden = hidden_character(text)
    if hidden:
        return f"possible prompt injection: hidden character {hidden}"
    reason = _scan(text, "")
    for how, plain in decoded(text):
        reason = reason or _scan(plain, f" in {how}")
    return reason


def unsure_reason(*texts: str) -> str | None:
    """For texts the scan lets through: why it is unsure of one of them (the model weighs it
    in the band just below its threshold), or None. A caller with a language model at hand
    may ask it for a second opinion on such a text (``review``)."""
    for text in texts:
        weighed = weigh(text)
        if (
            weighed is not None
            and weighed.model.unsure <= weighed.probability < weighed.model.threshold
        ):
            return f"the scan is unsure ({weighed.probability:.0%}: {', '.join(weighed.why)})"
    return None


def model_reason(text: str) -> str | None:
    weighed = weigh(text)
    if weighed is None:
        return None
    if weighed.probability < weighed.model.threshold:
        return multilingual_reason(weighed.plain, text)
    where = "" if weighed.part is None else f" in {one_line(weighed.part, 60)!r}"
    return (
        f"possible prompt injection (reads as an instruction to the agent{where},"
        f" {weighed.probability:.0%}: {', '.join(weighed.why)})"
    )


def multilingual_reason(plain: str, text: str) -> str | None:
    """The multilingual reader's verdict (``multilingual``, an optional extra) on ``text``
    (``plain``: as ``model_text`` returned it) when the models let it through: alone on a text
    the English models do not read (under ``ENGLISH_SHARE`` common English words), beside the
    semantic model on one they do; None where the reader is not available."""
    if multilingual.unavailable():
        return None
    if english_share(words(plain)) >= ENGLISH_SHARE:
        score = multilingual.english_score(text, plain)
        threshold = multilingual.model().english_threshold
        if score is None or threshold is None or score < threshold:
            return None
        return (
            "possible prompt injection (reads as an instruction to the agent: what it means,"
            " read by the semantic model and the multilingual reader together)"
        )
    probability = multilingual.probability(plain)
    if probability is None or probability < multilingual.model().threshold:
        return None
    return (
        "possible prompt injection (reads as an instruction to the agent,"
        f" {probability:.0%}: what it means, read by the multilingual reader)"
    )


def _scan(text: str, how: str) -> str | None:
    variants = [(text, how)]
    for one in "il":
        plain = normalised(text, one)
        if all(plain != seen for seen, _ in variants):
            variants.append((plain, how or " after normalising"))
    for variant, note in variants:
        lowered = variant.lower()
        for pattern, lower, why in PATTERNS:
            target = lowered if lower else variant
            for match in pattern.finditer(target):
                if not _named(target, match.start(), match.end()) and not _reported(
                    target, match.start()
                ):
                    return (
                        f"possible prompt injection ({why}{note}): {one_line(match.group(), 60)!r}"
                    )
    squeezed = SQUEEZED.search(re.sub(r"[^a-z]", "", normalised(text).lower()))
    if squeezed:  # read again without what naming words quote
        unnamed = normalised(_QUOTATION.sub(_unnamed, text)).lower()
        squeezed = SQUEEZED.search(re.sub(r"[^a-z]", "", unnamed))
    if squeezed:
        return f"possible prompt injection (instruction override, spaced out): {squeezed.group()!r}"
    return None


def _named(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] lies inside a quotation a naming word introduces (``_NAMING``)."""
    return any(
        quote.start(said) <= start <= end <= quote.end(said) and _naming(quote)
        for quote in _QUOTATION.finditer(text)
        for said in ("said", "cjk_said")
        if quote.group(said) is not None
    )


def _reported(text: str, start: int) -> bool:
    """Whether ``text[start:]`` follows, in the same sentence, a report of what was tried on a
    model (``_REPORTED``)."""
    return any(
        found.end() <= start and not re.search(r"[.!?;\n]", text[found.end() : start])
        for found in _REPORTED.finditer(text, 0, start)
    )


def _naming(quote: re.Match) -> bool:
    """Whether a naming word introduces the quotation (or, in CJK, follows it)."""
    if quote.group("cjk_said") is not None:
        return bool(_NAMED_AFTER.match(quote.string, quote.end()))
    return bool(_NAMING.search(quote.string, max(0, quote.start() - 30), quote.start()))


def _unnamed(quote: re.Match) -> str:
    """A quotation without what it holds when a naming word introduces it, else as written."""
    return " " if _naming(quote) else quote.group()
