"""A small linear model that reads a fact the way the patterns cannot: by the words it uses and
the ideas (``concepts``) it holds, so a phrasing no pattern lists is still weighed.

Its features are the text's words, its ideas, the pairs of ideas it holds, its first word and
the runs of four letters its words are spelt with;
the weights (``slotmem/data/injection-model.json.gz``) are a logistic regression trained on the
``dev`` rows of ``benchmarks/data/safety.json`` by ``benchmarks/train_safety.py``, which also
chooses the threshold by cross-validation inside those rows. Scoring is plain Python: a few
dictionary look-ups per word.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import re
from dataclasses import dataclass
from importlib.resources import files
from itertools import combinations

from .concepts import concepts
from .decoders import decoded
from .normalise import normalised

WEIGHTS = "data/injection-model.json.gz"
GRAM = 4  # characters in a spelling feature
MIN_WORDS = 3  # a key or a fragment says too little to weigh
_WORD = re.compile(r"\w+")
# Most facts are about the user: naming the user says nothing, keeping something from them does.
PAIRED_ONLY = {"user"}


def model_text(text: str) -> str:
    """What the model reads: ``text`` and what its encoded runs decode to, normalised,
    lower-cased."""
    return normalised(" ".join([text, *(plain for _, plain in decoded(text))])).lower()


def features(text: str, spelling: bool = True) -> tuple[set[str], set[str], set[str]]:
    """The word features (``w:`` each word, ``f:`` the first), the idea features (``k:``
    each idea but those in ``PAIRED_ONLY``, ``p:`` each pair of ideas) and the spelling
    features (``c:`` each run of ``GRAM`` characters of a word, its ends marked, so a word
    of a related language or an inflection the rows never used still shares most of them)
    of the text as ``model_text`` returned it (no spelling features unless ``spelling``)."""
    words = _WORD.findall(text)
    found = {"w:" + word for word in words}
    if words:
        found.add("f:" + words[0])
    ideas = concepts(text)
    alone = {"k:" + idea for idea in ideas if idea not in PAIRED_ONLY}
    grams = {
        "c:" + marked[i : i + GRAM]
        for marked in {f"<{word}>" for word in words if spelling and not word.isdigit()}
        for i in range(max(1, len(marked) - GRAM + 1))
    }
    return found, alone | {f"p:{a}+{b}" for a, b in combinations(ideas, 2)}, grams


def design(
    words: set[str], ideas: set[str], grams: set[str], idea_scale: float, gram_scale: float
) -> dict[str, float]:
    """The feature values: the word features share a unit length (a long fact is not more
    suspicious for having more words), the spelling features share a length of
    ``gram_scale``, the ideas count ``idea_scale`` each."""
    values = dict.fromkeys(grams, gram_scale / math.sqrt(len(grams))) if grams else {}
    values.update(dict.fromkeys(words, 1 / math.sqrt(len(words))) if words else {})
    values.update(dict.fromkeys(ideas, idea_scale))
    return values


@dataclass(frozen=True)
class Model:
    weights: dict[str, float]
    bias: float
    idea_scale: float
    gram_scale: float
    threshold: float  # on the probability
    unsure: float  # from here up to the threshold the model is unsure

    def score(self, text: str) -> tuple[float, list[str]] | None:
        """(the probability that ``text`` reads as an instruction to the agent, the features
        that pushed it most), or None for a text too short to weigh."""
        plain = model_text(text)
        if len(_WORD.findall(plain)) < MIN_WORDS:
            return None
        parts = {
            name: value * self.weights[name]
            for name, value in design(
                *features(plain, self.gram_scale > 0), self.idea_scale, self.gram_scale
            ).items()
            if name in self.weights
        }
        probability = 1 / (1 + math.exp(-(self.bias + sum(parts.values()))))
        top = sorted((part, name) for name, part in parts.items() if part > 0)[::-1][:3]
        return probability, [_shown(name) for _, name in top]

    def verdict(self, text: str) -> tuple[float, list[str]] | None:
        """``score`` when ``text`` reads as an instruction to the agent, else None."""
        scored = self.score(text)
        return scored if scored is not None and scored[0] >= self.threshold else None


def _shown(feature: str) -> str:
    kind, name = feature.split(":", 1)
    if kind in ("w", "f", "c"):
        return repr(name.strip("<>"))
    return name.replace("_", " ").replace("+", " + ")


@functools.cache
def model() -> Model:
    data = json.loads(gzip.decompress(files("slotmem").joinpath(WEIGHTS).read_bytes()))
    return Model(
        data["weights"],
        data["bias"],
        data["idea_scale"],
        data["gram_scale"],
        data["threshold"],
        data["unsure"],
    )
