"""A small linear model that reads a fact the way the patterns cannot: by the words it uses and
the ideas (``concepts``) it holds, so a phrasing no pattern lists is still weighed.

Its features are the text's words, its ideas, the pairs of ideas it holds and its first word;
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
from .normalise import decoded_base64, normalised

WEIGHTS = "data/injection-model.json.gz"
MIN_WORDS = 3  # a key or a fragment says too little to weigh
_WORD = re.compile(r"\w+")
# Most facts are about the user: naming the user says nothing, keeping something from them does.
PAIRED_ONLY = {"user"}


def model_text(text: str) -> str:
    """What the model reads: ``text`` with its base64 runs decoded, normalised, lower-cased."""
    return normalised(" ".join([text, *decoded_base64(text)])).lower()


def features(text: str) -> tuple[set[str], set[str]]:
    """The word features (``w:`` each word, ``f:`` the first) and the idea features (``k:``
    each idea but those in ``PAIRED_ONLY``, ``p:`` each pair of ideas) of the text as
    ``model_text`` returned it."""
    words = _WORD.findall(text)
    found = {"w:" + word for word in words}
    if words:
        found.add("f:" + words[0])
    ideas = concepts(text)
    alone = {"k:" + idea for idea in ideas if idea not in PAIRED_ONLY}
    return found, alone | {f"p:{a}+{b}" for a, b in combinations(ideas, 2)}


def design(words: set[str], ideas: set[str], idea_scale: float) -> dict[str, float]:
    """The feature values: the word features share a unit length (a long fact is not more
    suspicious for having more words), the ideas count ``idea_scale`` each."""
    values = dict.fromkeys(words, 1 / math.sqrt(len(words))) if words else {}
    values.update(dict.fromkeys(ideas, idea_scale))
    return values


@dataclass(frozen=True)
class Model:
    weights: dict[str, float]
    bias: float
    idea_scale: float
    threshold: float  # on the probability

    def verdict(self, text: str) -> tuple[float, list[str]] | None:
        """(probability, the features that pushed it most) when ``text`` reads as an
        instruction to the agent, else None."""
        plain = model_text(text)
        if len(_WORD.findall(plain)) < MIN_WORDS:
            return None
        parts = {
            name: value * self.weights[name]
            for name, value in design(*features(plain), self.idea_scale).items()
            if name in self.weights
        }
        probability = 1 / (1 + math.exp(-(self.bias + sum(parts.values()))))
        if probability < self.threshold:
            return None
        top = sorted((part, name) for name, part in parts.items() if part > 0)[::-1][:3]
        return probability, [_shown(name) for _, name in top]


def _shown(feature: str) -> str:
    kind, name = feature.split(":", 1)
    if kind in ("w", "f"):
        return repr(name)
    return name.replace("_", " ").replace("+", " + ")


@functools.cache
def model() -> Model:
    data = json.loads(gzip.decompress(files("slotmem").joinpath(WEIGHTS).read_bytes()))
    return Model(data["weights"], data["bias"], data["idea_scale"], data["threshold"])
