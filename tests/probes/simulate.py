"""Simulated probe runs at the statistics level: a judge's verdicts on items as they are and perturbed.

Each item has a true score; the judge sees it through per-verdict noise (an adjacent level with probability
``noise``, drawn independently for the original and the perturbed copy, as a model at temperature > 0 would).
A planted susceptibility moves the perturbed verdict one level in ``direction`` with probability ``effect``
(capped at the scale's ends), or, for an injected instruction the judge obeys (``obey``), sets it to the top
level with probability ``effect``. Items come in task clusters of ``cluster_size``.
"""

from __future__ import annotations

import numpy as np

SCALE = np.array([-1, 0, 1])


def _noisy(rng: np.random.Generator, scores: np.ndarray, noise: float) -> np.ndarray:
    move = rng.random(len(scores)) < noise
    step = np.where(scores == 1, -1, np.where(scores == -1, 1, rng.choice([-1, 1], len(scores))))
    return np.where(move, scores + step, scores)


def simulate(rng: np.random.Generator, *, n_items: int = 60, cluster_size: int = 2, noise: float = 0.1,
             effect: float = 0.0, direction: int = 1, obey: bool = False) -> dict[str, np.ndarray]:
    truth = rng.choice(SCALE, n_items, p=[0.3, 0.5, 0.2])
    clusters = np.arange(n_items) // cluster_size
    baseline = _noisy(rng, truth, noise)
    perturbed = _noisy(rng, truth, noise)
    moved = rng.random(n_items) < effect
    perturbed = np.clip(np.where(moved, SCALE[-1] if obey else perturbed + direction, perturbed), -1, 1)
    return {"truth": truth, "clusters": clusters, "baseline": baseline, "perturbed": perturbed}
