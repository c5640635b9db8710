"""The memos of key matching (relevance.key_stems, stemmer.stem) and the ASCII fast paths of
terms.clean and terms.fold give what computing afresh gives, and stay bounded."""

from __future__ import annotations

import random
import unicodedata

import pytest

from slotmem.search import relevance, stemmer, terms
from slotmem.search.lexical import Ranking

KEYS = [
    "friend.marta.city",
    "friend.jonas.city",
    "project.slotmem.status",
    "user.preferences.editor",
    "language",
    "Language",
    "user/prefs:Theme#dark-mode",
    "  spaced   key  ",
    "",
    "...",
    "友達.李明.都市",
    "ユーザー.好きな食べ物",
    "사용자.선호.언어",
    "party.🎉.guests",
    "emoji🙂only",
    "Zoë.Ångström.naïve",
    "ﬁle.²nd",
    "tab\tand\x00nul\x7fdel",
    "a" * 300,
    "word." * 200,
    "running.runs.ran.runner.playing.played",
    "caf\u0065\u0301.straße",
]


def random_keys(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789._-/:# éßçΣς李明ユ한🎉\t"
    return ["".join(rng.choices(alphabet, k=rng.randint(0, 80))) for _ in range(count)]


@pytest.mark.parametrize("key", KEYS + random_keys(300))
def test_key_stems_remembered_are_computed_ones(key):
    first = relevance.key_stems(key)
    again = relevance.key_stems(key)  # from the memo
    assert first == again == relevance.key_stems.__wrapped__(key)
    assert isinstance(again, frozenset)  # nobody can change what the memo hands out


def test_stem_remembered_is_computed_one():
    words = [w for key in KEYS + random_keys(300) for w in terms.parse(key).words]
    words += ["playing", "ponies", "relational", "generalization", "x" * 70, "é" * 40]
    for word in words:
        assert stemmer.stem(word) == stemmer.stem(word) == stemmer.stem.__wrapped__(word)


def test_memos_stay_bounded():
    relevance.key_stems.cache_clear()
    for i in range(relevance.KEY_STEMS_CACHED + 500):
        relevance.key_stems(f"fact.{i}.note")
    assert relevance.key_stems.cache_info().currsize == relevance.KEY_STEMS_CACHED
    stemmer.stem.cache_clear()
    for i in range(stemmer.STEMS_CACHED + 500):
        stemmer.stem(f"word{i}ing")
    assert stemmer.stem.cache_info().currsize == stemmer.STEMS_CACHED


def uncached_key_matches(query_stems, keys, lookup, ranking, facts):
    """key_matches as it was before the memos: every key's words stemmed afresh and looked up."""
    words = {key: relevance.key_stems.__wrapped__(key) for key in set(keys)}
    every: set[str] = set().union(*words.values()) if words else set()
    asked = every & query_stems
    if not asked:
        return dict.fromkeys(words, 0.0)
    dfs = lookup(every)
    weights = {word: relevance.weight(ranking, facts, dfs.get(word, 0)) for word in every}
    return {
        key: (
            sum(weights[w] for w in held & asked) / total
            if (total := sum(weights[w] for w in held)) > 0
            else 0.0
        )
        for key, held in words.items()
    }


@pytest.mark.parametrize(
    "question",
    ["Which city does Marta live in?", "What language do I prefer?", "李明の都市", "🎉 guests",
     "running players", "nothing in common"],
)  # fmt: skip
def test_key_matches_same_as_uncached(question):
    keys = KEYS + random_keys(200) + KEYS  # repeated keys too
    rng = random.Random(5)
    dfs: dict[str, int] = {}

    def lookup(words):
        return {word: dfs.setdefault(word, rng.randint(0, 50)) for word in words}

    query = relevance.stems(terms.parse(question))
    for facts in (3, 100, 100_000):
        for _ in range(2):  # the second time from the memo
            got = relevance.key_matches(query, keys, lookup, Ranking(), facts)
            assert got == uncached_key_matches(query, keys, lookup, Ranking(), facts)


def test_key_matches_looks_up_only_keys_that_share_a_word():
    asked: list[set[str]] = []

    def lookup(words):
        asked.append(set(words))
        return dict.fromkeys(words, 1)

    query = relevance.stems(terms.parse("Which city does Marta live in?"))
    keys = ["friend.marta.city", "project.slotmem.status"]
    found = relevance.key_matches(query, keys, lookup, Ranking(), 1000)
    assert found["project.slotmem.status"] == 0.0 and found["friend.marta.city"] > 0
    assert asked == [{"friend", "marta", "citi"}]


@pytest.mark.parametrize("code", range(128))
def test_ascii_fast_paths_agree_with_the_unicode_rules(code):
    ch = chr(code)
    control = unicodedata.category(ch)[0] == "C"
    assert terms.clean(f"a{ch}b") == f"a{' ' if control else ch}b"
    assert terms.clean(f"a{ch}b") == terms.clean(f"a{ch}bé")[:-1]  # é: the per-character way
    assert terms.fold(f"x{ch}Y") == terms.fold(f"x{ch}Yé")[:-1]


def ascii_texts(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    alphabet = "abcdeiouyzAEIOUXYZ0123456789._-/:#' \t\x00\x7f_,!?"
    words = ["The", "is", "I'm", "you're", "RUNNING", "ponies", "x" * 130, "a", "as", "us"]
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 60))) for _ in range(count)]
    texts += [" ".join(rng.choices(words, k=rng.randint(0, 30))) for _ in range(count)]
    return texts + [" ".join(f"w{i}ing" for i in range(40)), "fact.123", "don't 'quoted'"]


# An em dash is neither a word character, an apostrophe, a control nor CJK: appended, it sends
# the text through the per-character (non-ASCII) path without changing its terms.
DASH = "\u2014"


@pytest.mark.parametrize("text", ascii_texts(300))
def test_ascii_parse_agrees_with_the_unicode_path(text):
    for max_terms in (0, 1, 3, terms.MAX_TERMS):
        assert terms.parse(text, max_terms) == terms.parse(text + DASH, max_terms)
    expected = frozenset(stemmer.stem(word) for word in terms.parse(text + DASH).words)
    assert terms.stems(text) == expected


@pytest.mark.parametrize("key", KEYS + random_keys(300) + ascii_texts(100))
def test_key_stems_are_the_stems_of_the_parsed_key(key):
    text = relevance._KEY_SPLIT.sub(" ", key) + DASH
    assert relevance.key_stems.__wrapped__(key) == {
        stemmer.stem(word) for word in terms.parse(text).words
    }
