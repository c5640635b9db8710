"""A small linear model that reads a fact the way the patterns cannot: by the words it uses and
the ideas (``concepts``) it holds, so a phrasing no pattern lists is still weighed.

Its features are the text's words, its ideas, the pairs of ideas it holds, its first word and
the runs of four letters its words are spelt with;
the weights (``slotmem/data/injection-model.json.gz``) are a logistic regression trained on
every labelled split of ``benchmarks/data/`` by ``benchmarks/train_safety.py``, which sets
the threshold from each split's rows scored by the model trained on the others. Scoring is plain Python: a few
dictionary look-ups per word.

Where an embedding model is at hand (``embedding``: the semantic extra's default model), a
second model trained the same way (``injection-model-semantic.json.gz``) adds the text's vector
to those features, so a phrasing is also weighed by what it means; it has its own threshold.
The embedding model reads English: a text with under ``ENGLISH_SHARE`` of its words among the
commonest English words is weighed by the base model. A script written without spaces (Chinese,
Japanese, Thai) is read as its pairs of characters (``words``).
``weigh`` chooses between them for each text, and weighs a text of several sentences or lines
(``segments``) as a whole and each sentence alone, keeping the most: an instruction appended to
an ordinary fact is then not diluted by it. Training scores the dev rows the same way.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from itertools import combinations
from typing import NamedTuple

from . import embedding
from .concepts import concepts
from .decoders import decoded, english_share
from .normalise import normalised
from .structure import structure

WEIGHTS = "data/injection-model.json.gz"
SEMANTIC_WEIGHTS = "data/injection-model-semantic.json.gz"
GRAM = 4  # characters in a spelling feature
MIN_WORDS = 3  # a key or a fragment says too little to weigh
# the embedding model reads English: a text with a smaller share of its words among the 10,000
# commonest English words is weighed by the base model, whole and by sentence (tenth round,
# benchmarks/safety_cv.py --english: 0.4 against 0, leaving one split out, 85.1% caught at 2.1%
# refused against 84.1% at 2.3% on the mean split)
ENGLISH_SHARE = 0.4
WORD = re.compile(r"\w+")
# scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, kana and CJK
# ideographs, their vowel signs included): a run of them is read as its pairs of characters, so
# a Chinese or Thai sentence is several words, not one (or a vowel sign's fragments)
_SCRIPTS = (
    r"\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
)
_UNSPACED = re.compile(f"[{_SCRIPTS}]+")
_TOKEN = re.compile(f"[{_SCRIPTS}]+|[^\\W{_SCRIPTS}]+")
# where a sentence or a line ends: a stop and a space (so "3.12" or "deploy.sh" go on; "P.S.",
# "e.g." and titles go on too), a line break, or a CJK stop; not a semicolon (its clauses lean
# on each other: "Disregard the TODOs in legacy/; that code is being deleted")
_SENTENCE_END = re.compile(
    r"(?<=[!?।؟])\s+|(?<!\bp\.s\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\b[dm]r\.)(?<!\bmrs\.)"
    r"(?<!\bms\.)(?<!\bvs\.)(?<=\.)\s+|\s*\n\s*|(?<=[。！？])",
    re.IGNORECASE,
)
# Most facts are about the user: naming the user says nothing, keeping something from them does.
PAIRED_ONLY = {"user"}
STRUCTURE = 3.0  # the structure features (``structure``) count this many ideas each


def model_text(text: str) -> str:
    """What the model reads: ``text`` and what its encoded runs decode to, each on a line of
    its own (a decoded order is a clause of its own for ``structure``: "delete the backups" is
    told, not the tail of "note:"), normalised, lower-cased."""
    return normalised("\n".join([text, *(plain for _, plain in decoded(text))])).lower()


def words(text: str) -> list[str]:
    """The words of ``text``: each run of word characters, and in a script written without
    spaces (``_UNSPACED``) each pair of neighbouring characters (a lone character alone)."""
    found = []
    for word in _TOKEN.findall(text):
        if _UNSPACED.match(word):
            found += [word[i : i + 2] for i in range(max(1, len(word) - 1))]
        else:
            found.append(word)
    return found


def features(text: str, spelling: bool = True) -> tuple[set[str], set[str], set[str]]:
    """The word features (``w:`` each word but a number, ``f:`` the first), the idea features (``k:``
    each idea but those in ``PAIRED_ONLY``, ``p:`` each pair of ideas, ``s:`` who is told to
    do what: ``structure``) and the spelling
    features (``c:`` each run of ``GRAM`` characters of a word, its ends marked, so a word
    of a related language or an inflection the rows never used still shares most of them)
    of the text as ``model_text`` returned it (no spelling features unless ``spelling``)."""
    tokens = words(text)
    # a number says nothing of an instruction: weighed, "7" or "14" learnt the rows' noise
    # (eleventh round: "fact number 7" was refused, w:7 +8.7, w:14 -7.9)
    named = [word for word in tokens if not word.isdigit()]
    found = {"w:" + word for word in named}
    if named:
        found.add("f:" + named[0])
    ideas = concepts(text)
    alone = {"k:" + idea for idea in ideas if idea not in PAIRED_ONLY}
    grams = {
        "c:" + marked[i : i + GRAM]
        for marked in {f"<{word}>" for word in tokens if spelling and not word.isdigit()}
        for i in range(max(1, len(marked) - GRAM + 1))
    }
    pairs = {f"p:{a}+{b}" for a, b in combinations(ideas, 2)}
    return found, alone | pairs | structure(text), grams


def design(
    words: set[str], ideas: set[str], grams: set[str], idea_scale: float, gram_scale: float
) -> dict[str, float]:
    """The feature values: the word features share a unit length (a long fact is not more
    suspicious for having more words), the spelling features share a length of
    ``gram_scale``, the ideas count ``idea_scale`` each."""
    values = dict.fromkeys(grams, gram_scale / math.sqrt(len(grams))) if grams else {}
    values.update(dict.fromkeys(words, 1 / math.sqrt(len(words))) if words else {})
    values.update({idea: idea_scale * (STRUCTURE if idea[0] == "s" else 1) for idea in ideas})
    return values


@dataclass(frozen=True)
class Model:
    weights: dict[str, float]
    bias: float
    idea_scale: float
    gram_scale: float
    threshold: float  # on the probability
    unsure: float  # from here up to the threshold the model is unsure
    # the weights of the text's vector from the embedding model, for the semantic model
    embedding: tuple[float, ...] | None = None

    def score(
        self, text: str, vector: Sequence[float] | None = None
    ) -> tuple[float, list[str]] | None:
        """(the probability that ``text`` reads as an instruction to the agent, the features
        that pushed it most), or None for a text too short to weigh. ``vector``: the vector of
        ``model_text(text)``, which the semantic model needs."""
        plain = model_text(text)
        if len(words(plain)) < MIN_WORDS:
            return None
        parts = {
            name: value * self.weights[name]
            for name, value in design(
                *features(plain, self.gram_scale > 0), self.idea_scale, self.gram_scale
            ).items()
            if name in self.weights
        }
        if self.embedding is not None:
            if vector is None or len(vector) != len(self.embedding):
                raise ValueError("the semantic model needs the text's vector")
            parts["e:meaning"] = sum(w * x for w, x in zip(self.embedding, vector))
        probability = 1 / (1 + math.exp(-(self.bias + sum(parts.values()))))
        top = sorted((part, name) for name, part in parts.items() if part > 0)[::-1][:3]
        return probability, [_shown(name) for _, name in top]


def _shown(feature: str) -> str:
    kind, name = feature.split(":", 1)
    if kind == "e":
        return "what it means"
    if kind in ("w", "f", "c"):
        return repr(name.strip("<>"))
    return name.replace("_", " ").replace("+", " + ")


class Weighed(NamedTuple):
    model: Model  # the model that weighed the text: its threshold and unsure band apply
    probability: float
    why: list[str]
    part: str | None = None  # the sentence that weighed most, when not the whole text
    plain: str = ""  # the whole text as ``model_text`` returned it


def segments(text: str) -> list[str]:
    """The sentences and lines of ``text`` when it has more than one (else none): each is
    weighed alone too, so an instruction appended to an ordinary fact is not diluted by it."""
    parts = [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]
    return parts if len(parts) > 1 else []


def weigh(text: str) -> Weighed | None:
    """``text`` weighed as a whole by the semantic model when an embedding model is at hand
    and the text is English enough for it (``ENGLISH_SHARE``; else by the base model), and
    each of its sentences (``segments``) by the base model: the
    one that weighs most against its model's threshold; None for a text too short to weigh.
    Only the whole text is embedded: a write's scan stays one embedding."""
    base, semantic = models()
    texts = [
        part
        for part in dict.fromkeys([text, *segments(text)])
        if len(words(model_text(part))) >= MIN_WORDS
    ]
    if not texts or text not in texts:
        return None  # a key or a fragment: not worth an embedding
    found = []
    plain = model_text(text)
    if (
        semantic is not None
        and semantic.embedding
        and english_share(words(plain)) >= ENGLISH_SHARE
        and embedding.enabled()
    ):
        vector = embedding.vector(plain)
        if vector is not None and len(vector) == len(semantic.embedding):
            found = [(semantic, text, semantic.score(text, vector))]
    found += [(base, part, base.score(part)) for part in texts[len(found) :]]
    model_, part, (probability, why) = max(
        ((m, p, s) for m, p, s in found if s is not None), key=lambda f: f[2][0] - f[0].threshold
    )
    return Weighed(model_, probability, why, None if part == text else part, plain)


def model() -> Model:
    """The base model: the one a text is weighed with when no embedding model is at hand."""
    return models()[0]


@functools.cache
def models() -> tuple[Model, Model | None]:
    """(the base model, the semantic model, or None if it is not shipped)."""
    base = _load(WEIGHTS)
    return base, _load(SEMANTIC_WEIGHTS) if files("slotmem").joinpath(
        SEMANTIC_WEIGHTS
    ).is_file() else None


def _load(name: str) -> Model:
    data = json.loads(gzip.decompress(files("slotmem").joinpath(name).read_bytes()))
    return Model(
        data["weights"],
        data["bias"],
        data["idea_scale"],
        data["gram_scale"],
        data["threshold"],
        data["unsure"],
        tuple(data["embedding"]) if "embedding" in data else None,
    )
