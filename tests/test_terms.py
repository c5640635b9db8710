"""User text -> terms: never raises, keeps what carries meaning, drops what does not."""

import importlib.util
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slotmem import InvalidInput, Store
from slotmem.search import terms as query
from slotmem.storage import db, migrate

ANY_CHAR = st.characters(exclude_categories=())  # surrogates, controls, unassigned included
NASTY = st.sampled_from(
    [
        '"',
        "'",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        "*",
        "^",
        ":",
        "-",
        "+",
        "\\",
        "\x00",
        "\x1b",
        "\ud800",
        "\udfff",
        " AND ",
        " OR ",
        " NOT ",
        " NEAR ",
        "’",
        "咖啡",
        "デプロイ",
        "🚀",
        "\u200b",
        "e\u0301",
        "ﬁ",
        "Ⅻ",
    ]
)


# unicode61's tables are Unicode 6.1: it tokenizes and folds characters added later differently.
NEWER_THAN_UNICODE_6_1 = "\u037f\u0605\u061c\u061d\u0978\u2066\u2067\u2068\u2069"
# Latin, Greek, Cyrillic, Hebrew, Arabic, Devanagari, punctuation, kana, CJK, Hangul: assigned
# characters of scripts unicode61's tables know.
BLOCKS = [
    (0x20, 0x24F),
    (0x370, 0x4FF),
    (0x590, 0x6FF),
    (0x900, 0x97F),
    (0x2000, 0x206F),
    (0x3040, 0x30FF),
    (0x4E00, 0x4FFF),
    (0xAC00, 0xAD00),
]
SCRIPTS = st.one_of(
    *(
        st.characters(
            min_codepoint=lo,
            max_codepoint=hi,
            exclude_categories=["Cn"],
            exclude_characters=NEWER_THAN_UNICODE_6_1,
        )
        for lo, hi in BLOCKS
    )
)


def nested(depth):
    return "(" * depth + "deploy" + ")" * depth


TEXTS = st.one_of(
    st.text(ANY_CHAR, max_size=200),
    st.lists(st.one_of(NASTY, st.text(ANY_CHAR, max_size=8)), max_size=40).map("".join),
    st.integers(0, 3000).map(nested),
    st.tuples(st.text(ANY_CHAR, min_size=1, max_size=3), st.integers(30_000, 100_000)).map(
        lambda pair: (pair[0] * pair[1])[:100_000]
    ),
)


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.integers(-5, 40))
def test_parse_never_raises_and_yields_plain_terms(text, max_terms):
    terms = query.parse(text, max_terms)
    assert len(terms.words) + len(terms.grams) <= max(0, max_terms)
    for word in terms.words:
        assert re.fullmatch(r"[^\W_]+", word) and word == query.fold(word)
        assert word not in query.STOPWORDS and len(word) <= query.MAX_TOKEN_CHARS
    for gram in terms.grams:
        assert 1 <= len(gram) <= 2 and query._cjk_run().fullmatch(gram)


@pytest.fixture(scope="module")
def unicode_store():
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "m.db", create=True) as store:
        store.upsert_many(
            [
                {"slot": "user", "key": "drink", "value": "我喜欢喝咖啡, Joanna's café"},
                {
                    "slot": "project",
                    "key": "deploy",
                    "value": "デプロイは金曜日です (deploy on Friday)",
                },
                {
                    "slot": "user",
                    "key": "odd",
                    "value": "naïve résumé ﬁle Ⅻ e\u0301 c# c++ 42 Go AI",
                },
                {
                    "slot": "user",
                    "key": "repeat",
                    "value": "咖啡咖啡店咖啡馆 茶 ❤️ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 İstanbul ß",
                },
            ]
        )
        yield store


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(TEXTS)
def test_search_never_raises(unicode_store, text):
    hits = unicode_store.query_facts(text, track_access=False, explain=True)
    assert all(hit.score > 0 and hit.explanation["terms"] for hit in hits)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(SCRIPTS, min_size=1, max_size=60))
def test_a_stored_text_finds_itself(unicode_store, text):
    """Arbitrary Unicode stored, then searched: every term the index knows runs through MATCH."""
    try:
        unicode_store.upsert("user", f"t{abs(hash(text))}", text)
    except InvalidInput:
        return  # control characters, blank, ...: refused at the door, nothing to search
    hits = unicode_store.query_facts(text, track_access=False, limit=100)
    assert hits or not query.parse(text)  # the same words as the index saw, so some match


@pytest.mark.parametrize(
    "text, words",
    [
        ("Joanna's hobbies", ["joanna", "hobbies"]),
        ("What is Caroline’s job?", ["caroline", "job"]),
        ("Do you know Go or AI?", ["know", "go", "ai"]),
        ("c# and c++ in 42 days", ["c", "42", "days"]),
        ("the and of was would could", []),
        ("deploy deploying deployed Deploys", ["deploy"]),
        ("Café NAÏVE résumé", ["cafe", "naive", "resume"]),
        ("key:deploy value:friday NOT x", ["key", "deploy", "value", "friday", "x"]),
        ("ﬁle Ⅻ ² ΣΊΣΥΦΟΣ", ["ﬁle", "ⅻ", "²", "σίσυφοσ"]),  # as unicode61 folds them
        ("snake_case-word", ["snake", "case", "word"]),
    ],
)
def test_words(text, words):
    assert list(query.parse(text).words) == words


def test_fold_is_what_unicode61_does():
    ranges = [(0x41, 0x5A), (0xC0, 0x24F), (0x370, 0x4FF), (0x1E00, 0x1EFF), (0xFB00, 0xFB06)]
    chars = [chr(i) for lo, hi in ranges for i in range(lo, hi + 1) if chr(i).isalpha()]
    chars = [c for c in chars if c not in NEWER_THAN_UNICODE_6_1]
    conn = db.driver.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    conn.executemany(
        "INSERT INTO t (rowid, x) VALUES (?, ?)", [(i, "q" + c) for i, c in enumerate(chars)]
    )
    indexed = dict(conn.execute("SELECT doc, term FROM v"))
    wrong = [(c, indexed[i]) for i, c in enumerate(chars) if indexed[i] != "q" + query.fold(c)]
    assert len(chars) > 900 and not wrong


def test_cap_keeps_the_first_terms():
    text = " ".join(f"word{i}" for i in range(40))
    assert list(query.parse(text).words) == [f"word{i}" for i in range(query.MAX_TERMS)]
    assert list(query.parse(text, 3).words) == ["word0", "word1", "word2"]
    assert list(query.parse(text, 0).words) == [] and list(query.parse(text, -1).words) == []


def test_cjk_runs_become_bigrams():
    assert query.parse("我喜欢喝咖啡").grams == ("我喜", "喜欢", "欢喝", "喝咖", "咖啡")
    assert query.parse("茶").grams == ("茶",)
    terms = query.parse("Python で デプロイ")
    assert terms.words == ("python",) and terms.grams == ("で", "デプ", "プロ", "ロイ")
    assert query.parse("커피를").grams == ("커피", "피를")


def test_non_text_input():
    assert (
        not query.parse(None)
        and not query.parse(b"\x00\xff")
        and list(query.parse(42).words) == ["42"]
    )
    assert list(query.parse("Café".encode()).words) == ["cafe"]


@pytest.mark.parametrize(
    ("name", "constant"), [("0003_search_indexes", "CJK_TEST"), ("0019_cjk_ascii_test", "CJK_GLOB")]
)
def test_cjk_ranges_agree_with_the_migration(name, constant):
    path = migrate.migrations_dir() / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"m_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    glob = re.search(r"\[(.*)\]", getattr(module, constant)).group(1)
    pairs = re.findall(r"(.)-(.)", glob)
    assert [(ord(lo), ord(hi)) for lo, hi in pairs] == list(query.CJK_RANGES)
