"""slotmem.search.stemmer against FTS5's own porter tokenizer: the index's vocabulary is the oracle."""

import random

from slotmem.storage import db
from slotmem.search.stemmer import stem

SUFFIXES = [
    "s", "es", "ies", "sses", "ss", "ed", "eed", "ing", "at", "bl", "iz", "y", "ational",
    "tional", "enci", "anci", "izer", "logi", "bli", "alli", "entli", "eli", "ousli", "ization",
    "ation", "ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti", "biliti",
    "ical", "ness", "icate", "iciti", "ful", "ative", "alize", "al", "ance", "ence", "er", "ic",
    "able", "ible", "ant", "ement", "ment", "ent", "ion", "sion", "tion", "ou", "ism", "ate",
    "iti", "ous", "ive", "ize", "e", "ll", "l", "ying", "ated", "ized", "ings", "edly"
]  # fmt: skip
WORDS = [
    "caresses", "ponies", "ties", "caress", "cats", "feed", "agreed", "plastered", "bled",
    "motoring", "sing", "conflated", "troubled", "sized", "hopping", "tanned", "falling",
    "hissing", "fizzed", "failing", "filing", "happy", "sky", "relational", "conditional",
    "rational", "valenci", "hesitanci", "digitizer", "conformabli", "radicalli", "differentli",
    "vileli", "analogousli", "vietnamization", "predication", "operator", "feudalism",
    "decisiveness", "hopefulness", "callousness", "formaliti", "sensitiviti", "sensibiliti",
    "triplicate", "formative", "formalize", "electriciti", "electrical", "hopeful", "goodness",
    "revival", "allowance", "inference", "airliner", "gyroscopic", "adjustable", "defensible",
    "irritant", "replacement", "adjustment", "dependent", "adoption", "homologou", "communism",
    "activate", "angulariti", "homologous", "effective", "bowdlerize", "probate", "rate",
    "cease", "controll", "roll", "generalizations", "oscillators", "running", "meeting",
    "playing", "plays", "played", "player", "joanna", "caroline", "yesterday", "adopting",
    "adoption", "guitars", "painting", "paintings", "pottery", "hiking", "camping", "mentoring",
    "counseling", "relationships", "supportive", "yy", "ay", "eed", "ied", "ies", "sses", "ing",
    "ed", "xyz", "by", "go", "ai", "c", "42", "2026", "deploying"
]  # fmt: skip


def synthetic_words(n=20_000, seed=5):
    rng = random.Random(seed)
    letters = "bcdfghjklmnpqrstvwxyzaeiouy"
    return {
        "".join(rng.choice(letters) for _ in range(rng.randint(0, 7)))
        + "".join(rng.choice(SUFFIXES) for _ in range(rng.randint(1, 2)))
        for _ in range(n)
    }


def fts5_stems(words):
    conn = db.driver.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(words, 1))
    stems = dict(conn.execute("SELECT doc, term FROM v"))
    conn.close()
    return [stems.get(i) for i in range(1, len(words) + 1)]


def test_stem_matches_fts5_porter():
    words = sorted(set(WORDS) | synthetic_words() | {"x" * 64 + "ing", "y" * 63 + "ies"})
    expected = fts5_stems(words)
    wrong = [(w, e, stem(w)) for w, e in zip(words, expected) if stem(w) != e]
    assert len(words) > 15_000 and not wrong, wrong[:20]


def test_stem_examples():
    assert [stem(w) for w in ["playing", "ponies", "generalizations", "go", "ai", "caresses"]] == [
        "plai", "poni", "gener", "go", "ai", "caress",
    ]  # fmt: skip
