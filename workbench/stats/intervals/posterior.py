"""Intervals from a Dirichlet-process posterior over task clusters: small, lopsided or clustered samples.

Where the bootstrap fails
-------------------------
A percentile or BCa bootstrap can only resample what the sample holds. On a category of 30 items from a golden
set where 90% of the consensus labels are the top score, Krippendorff's alpha is decided by the two or three
items off that score; a sample that happens to hold none of the rare agreements gives an alpha near 0 whose every
resample is near 0 too, and the interval, narrow and confident, misses the truth. On real data with categories of
12 to 200 items (``benchmarks/coverage_categories.py``, ``benchmarks/README.md``) the cluster bootstrap's 95%
intervals covered the value of the whole category in 42% to 88% of golden sets for alpha and 61% to 97% for the
mean signed error (Play Favorites, 12 to 200 items), and the self-preference effects' expanded percentile
intervals covered in 75% to 91% of golden sets of 50 items: the same failure, on the rare non-zero residuals.

The method
----------
The posterior of a Dirichlet process (Ferguson 1973) whose data are the task clusters, sampled as the posterior
bootstrap of Lyddon, Walker and Holmes (2018, "Nonparametric learning from Bayesian models with randomized
objective functions", NeurIPS) and Fong, Lyddon and Holmes (2019, "Scalable nonparametric sampling from
multimodal posteriors with the posterior bootstrap", ICML). Each draw

* weighs the G observed clusters by Dirichlet(1, ..., 1) weights: Rubin's (1981) Bayesian bootstrap of clusters,
  whose spread is that of the cluster bootstrap;
* adds prior clusters drawn from the base measure, which puts a cluster of the sample's mean size in one cell of
  the K x K confusion table chosen uniformly (every pair of labels possible), with a total concentration of
  :data:`PRIOR_ITEMS` item, split into K * K atoms of equal concentration (the finite Dirichlet approximation of
  the process, Ishwaran and Zarepour 2002, "Exact and approximate sum representations for the Dirichlet
  process", Canadian Journal of Statistics 30(2));
* computes the statistic on the weighted table.

The interval is the equal-tailed quantiles of the draws, widened where needed to contain the point estimate (the
prior pulls the draws towards chance, and the interval is reported around the sample's own value). The prior's
weight is one item against the sample's n: at 200 items the interval is within a few percent of the cluster
bootstrap's, at 12 items it is as wide as 12 items warrant, and an interval never has zero width, because the
prior's atoms differ from draw to draw. Measured coverage: ``benchmarks/README.md``.

Draws are made per kind of cluster (identical clusters pooled), as in
:func:`workbench.stats.intervals.bootstrap.resample_sums`: the summed Dirichlet(1) weight of m identical clusters is a
Gamma(m) variable, so pooling changes nothing but the bookkeeping.
"""

from __future__ import annotations

import numpy as np

from workbench.stats.intervals.rows import unique_rows

#: Total concentration of the prior, in items: the posterior's prior weighs as much as one item of the sample.
#: Chosen by coverage on real data (150 golden sets per cell, two pools, two designs): half an item left the mean
#: signed error at 0.89 on Play Favorites categories of 50 items drawn by prompt and alpha at 0.91 on SummEval's of
#: 30; two items widened every interval (alpha at 200 items by about 10%) where coverage was already above 0.95.
PRIOR_ITEMS = 1.0
#: The name of the method, as the report's interval choices record it.
METHOD = "posterior"


def cluster_weights(per_cluster: np.ndarray, *, draws: int, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                                                np.ndarray]:
    """Bayesian-bootstrap weights of the distinct cluster rows: (kinds, weights of shape (draws, n_kinds)).

    ``weights[b] @ kinds`` is ``sum_g w[b, g] * per_cluster[g]`` for ``w[b] ~ Gamma(1)`` per cluster (the
    unnormalised Dirichlet(1, ..., 1) weights of Rubin's Bayesian bootstrap).
    """
    kinds, counts = unique_rows(per_cluster)
    return kinds.astype(np.float64), rng.gamma(counts.astype(np.float64), size=(draws, len(counts)))


def prior_atoms(*, draws: int, cells: int, concentration: float, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                                                  np.ndarray]:
    """Unnormalised weights and cells of the prior's atoms: arrays of shape (draws, cells).

    ``cells`` atoms per draw, each at a cell drawn uniformly from ``range(cells)`` with a Gamma(concentration /
    cells) weight (in units of one cluster).
    """
    weights = rng.gamma(concentration / cells, size=(draws, cells))
    where = rng.integers(cells, size=(draws, cells))
    return weights, where


def confusion_draws(per_cluster: np.ndarray, *, draws: int, seed: int,
                    prior_items: float = PRIOR_ITEMS) -> np.ndarray:
    """Posterior draws of a K x K confusion table from per-cluster counts.

    Parameters
    ----------
    per_cluster : ndarray, shape (G, K * K)
        Row g: the confusion counts of cluster g (rows = consensus, columns = judge, flattened), G >= 1.
    draws, seed : int
        Number of draws and the seed of ``numpy.random.default_rng``.
    prior_items : float
        Total concentration of the prior, in items.

    Returns
    -------
    ndarray of float64, shape (draws, K, K)
        Weighted tables, each scaled to the sample's number of items.
    """
    per_cluster = np.asarray(per_cluster, dtype=np.float64)
    n_clusters, cells = per_cluster.shape
    k = int(round(np.sqrt(cells)))
    n_items = float(per_cluster.sum())
    mean_size = n_items / n_clusters
    rng = np.random.default_rng(seed)
    kinds, w = cluster_weights(per_cluster, draws=draws, rng=rng)
    a, where = prior_atoms(draws=draws, cells=cells, concentration=prior_items / mean_size, rng=rng)
    prior = np.bincount((np.arange(draws)[:, None] * cells + where).ravel(), weights=(a * mean_size).ravel(),
                        minlength=draws * cells).reshape(draws, cells)
    total = w.sum(axis=1) + a.sum(axis=1)
    tables = (w @ kinds + prior) / total[:, None] * n_clusters
    return tables.reshape(draws, k, k)


def posterior_interval(samples: np.ndarray, point: float, level: float) -> tuple[float, float, int]:
    """Equal-tailed interval of the finite draws, widened to contain ``point``; and how many draws were NaN."""
    samples = np.asarray(samples, dtype=np.float64)
    finite = samples[np.isfinite(samples)]
    undefined = int(samples.size - finite.size)
    if finite.size == 0 or not np.isfinite(point):
        return float("nan"), float("nan"), undefined
    tail = (1 - level) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return float(min(low, point)), float(max(high, point)), undefined
