"""The checks of an episode's input, shared by the file (slotmem.store.episodes) and
PostgreSQL (slotmem.pg.episodes): labels, score, data, the new key, the facts written with it,
the facts to link, and a retrieval log's items. Pure: no SQL, one-line InvalidInput errors."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

from .. import validation
from ..errors import InvalidInput

EPISODES_SLOT = "episodes"  # where record_episode writes unless told
MAX_LABEL_CHARS = 200  # a title, session, run or outcome: one line
MAX_DATA_CHARS = 10_000  # an episode's other data, as JSON
EXPIRY = ("ttl", "expires_at")
FACT_FIELDS = {"slot", "key", "value", "confidence", "source", *EXPIRY}


def label(value, what: str) -> str | None:
    return (
        None if value is None else validation.text(value, what, MAX_LABEL_CHARS, single_line=True)
    )


def episode_id(value) -> str:
    return validation.text(value, "id", MAX_LABEL_CHARS, single_line=True)


def score(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(f"score must be a finite number, not {value!r}")
    return float(value)


def data(value) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidInput(f"data must be a JSON object (a dict), not {type(value).__name__}")
    import json  # here: a read needs none of it

    try:
        text = json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise InvalidInput(f"data must be a JSON object: {e}") from None
    if len(text) > MAX_DATA_CHARS:
        raise InvalidInput(f"data is {len(text)} characters as JSON; the limit is {MAX_DATA_CHARS}")
    return json.loads(text)


def fields(title, task, session, run, outcome, score_, data_) -> dict:
    """record_episode's metadata, checked (the title already checked by ``label``)."""
    return {
        "title": title,
        "task": None if task is None else validation.text(task, "task", 4000),
        "session": label(session, "session"),
        "run": label(run, "run"),
        "outcome": label(outcome, "outcome"),
        "score": score(score_),
        "data": data(data_),
    }


def new_key(title: str | None) -> str:
    """A key no other episode has: words of the title (found by the word index too), then
    random hex."""
    words = re.sub(r"[^\w]+", "-", (title or "episode").lower()).strip("-")[:60].strip("-")
    import secrets

    return f"{words or 'episode'}.{secrets.token_hex(4)}"


def pair(fact) -> tuple[str, str]:
    if isinstance(fact, str) and "/" in fact:
        slot, _, key = fact.partition("/")
        return slot, key
    if isinstance(fact, (tuple, list)) and len(fact) == 2:
        return fact[0], fact[1]
    raise InvalidInput(f"give each fact as a Fact, a (slot, key) pair or 'slot/key', not {fact!r}")


def fact_items(items: Iterable[Mapping], now: int) -> list[tuple]:
    """``facts`` of record_episode, each checked as ``upsert_many`` checks its items."""
    if isinstance(items, (str, bytes, Mapping)):
        raise InvalidInput("facts must be a list of items (slot, key, value, ...)")
    checked = []
    for number, item in enumerate(items):
        try:
            if not isinstance(item, Mapping):
                raise InvalidInput(f"needs slot, key and value, not {item!r}")
            extra = set(item) - FACT_FIELDS
            if extra:
                raise InvalidInput(f"unknown field(s) {sorted(extra)}")
            fact = validation.fact(
                item["slot"],
                item["key"],
                item["value"],
                item.get("confidence", 1.0),
                item.get("source"),
            )
            expires = validation.expiry(item.get("ttl"), item.get("expires_at"), now)
            checked.append((*fact, expires))
        except KeyError as e:
            raise InvalidInput(f"fact {number}: needs slot, key and value (no {e})") from None
        except InvalidInput as e:
            raise InvalidInput(f"fact {number}: {e}") from None
    return checked


def retrieval_item(number: int, item) -> tuple:
    """An item of record_retrieval, checked: (fact_id, slot, key, value, relevance,
    included, reason)."""
    if not isinstance(item, Mapping):
        raise InvalidInput(f"item {number}: must be a mapping (id, slot, key, value, included)")
    try:
        relevance = item.get("relevance")
        reason = item.get("reason")
        return (
            episode_id(item["id"]),
            validation.slot(item["slot"]),
            validation.key(item["key"]),
            validation.text(item["value"], "value", 20_000),
            None if relevance is None else validation.relevance(relevance, "relevance"),
            bool(item["included"]),
            None if reason is None else label(reason, "reason"),
        )
    except KeyError as e:
        raise InvalidInput(
            f"item {number}: needs id, slot, key, value and included (no {e})"
        ) from None
    except InvalidInput as e:
        raise InvalidInput(f"item {number}: {e}") from None
