"""benchmarks/safety_cv.py's standardised vectors (--embedder e5): a fold's weights, folded
back onto the vectors as they come, score a held-out text as the model fitted on the vectors
standardised by that fold's training texts does (what a shipped model would hold)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

np = pytest.importorskip("numpy")
ROOT = Path(__file__).resolve().parent.parent


def test_standardised_weights_fold_back_onto_the_vectors(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import safety_cv

    rng = np.random.default_rng(1)
    n, width = 120, 16
    vectors = rng.normal(size=(n, width)) * 0.05 + 0.7  # all alike, as e5's are (cosine ~0.77)
    data = SimpleNamespace(
        plain=[({"w:a"} if rng.random() < 0.5 else {"w:b"}, set(), set()) for _ in range(n)],
        vectors=vectors,
        attack=rng.random(n) < 0.4,
        owner=np.arange(n),
        standardised=np.ones(width, dtype=bool),
    )
    fitted = safety_cv.Fitted(data, (300.0, 0.3, 1.0, 2.0))
    train, held = np.arange(80), np.arange(80, n)
    theta = fitted.fit(train)

    centre = vectors[train].mean(axis=0)
    spread = vectors[train].std(axis=0) * np.sqrt(safety_cv.WIDTH)
    standard = 2.0 * (vectors - centre) / spread
    direct = safety_cv.fit(fitted.x.take(train), standard[train], fitted.y[train], 300.0, 2)
    logit = fitted.x.take(held).dot(direct[:2]) + standard[held] @ direct[2:-1] + direct[-1]
    assert np.allclose(fitted.score(theta, held), 1 / (1 + np.exp(-logit)), atol=1e-9)
    assert np.ptp(fitted.score(theta, held)) > 0.01  # the vectors weigh: not a constant


def test_the_english_reading_sums_log_odds_and_asks_the_reader_as_the_scan_does(monkeypatch):
    """--reader-english sum: each split's cut from the other splits' English ordinary rows; a
    row whose semantic log-odds are under the cut less the fold's ceiling and the margin is not
    read (the scan does not ask the reader there), however high the reader's own score."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import safety_cv
    import train_multilingual as reader

    sigmoid = lambda x: 1 / (1 + np.exp(-np.asarray(x, dtype=float)))
    # split 0: an attack (semantic log-odds 0, the reader's 5) and an ordinary row (-3 + 1);
    # splits 1 and 2: an ordinary row each (1 + 1), so every cut (at share 0) is just over 2
    data = SimpleNamespace(
        names=["a", "b", "c"],
        rows=[{}] * 4,
        split=np.array([0, 0, 1, 2]),
        attack=np.array([True, False, False, False]),
    )
    semantic = sigmoid([0.0, -3.0, 1.0, 1.0])
    read = sigmoid([5.0, 1.0, 1.0, 1.0])
    for ceiling, flagged in ((10.0, True), (1.0, False)):  # 0 < cut - 1 - margin (1)
        found = safety_cv.english_flags(
            data, "sum:0", (read, np.full(4, ceiling)), semantic, weight=1.0
        )
        assert found.tolist() == [flagged, False, False, False], ceiling
    assert reader.summed(semantic, np.array([-np.inf, *read[1:]]))[0] == -np.inf
    same = safety_cv.english_flags(data, "same:0", (read, np.full(4, 1.0)), semantic, 1.0)
    assert same.tolist() == [True, False, False, False]  # the reader alone: no semantic gate
