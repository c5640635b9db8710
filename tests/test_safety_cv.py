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
