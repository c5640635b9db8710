"""A search request as one value: the text, the terms parsed from it, and the options."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import terms as text_terms


@dataclass(frozen=True)
class Query:
    """What ``search.run`` answers. Build it with ``Query.parse``, which never raises on any text.

    ``slots``: None searches every slot, an empty tuple none. ``semantic=False`` keeps a search
    on the lexical leg even when the file has vectors. Facts expired by the search's ``now``
    are never hits.
    """

    text: str
    terms: text_terms.Terms = field(default_factory=text_terms.Terms)
    slots: tuple[str, ...] | None = None
    limit: int = 10
    min_score: float | None = None
    min_relevance: float | None = None  # drop hits less likely than this to be relevant
    explain: bool = False
    semantic: bool = True
    since: int | None = None  # only facts updated at or after (epoch milliseconds)
    until: int | None = None  # only facts updated before
    tags: tuple[str, ...] = ()  # only facts that have every one of these tags

    @classmethod
    def parse(cls, text, **options) -> Query:
        cleaned = text_terms.clean(text)
        return cls(cleaned, text_terms.parse(cleaned), **options)
