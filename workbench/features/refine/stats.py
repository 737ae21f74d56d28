"""The development / held-out split of the refinement loop, and the rule that accepts a refined rubric.

The split is stratified by consensus label and category (scikit-learn's
``train_test_split``), so both parts hold every kind of item in about the same
proportions; strata too small to be split are pooled by label first, then
together, and the strata actually used are named in the result. Items of one
task (several models' answers to the same prompt) stay on one side
(``StratifiedGroupKFold``): a few-shot example or an optimizer's edit drawn from
a development item must not have seen its held-out twin.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from workbench.features.refine.records import PairedDelta


@dataclass(frozen=True)
class Split:
    development: list[str]
    held_out: list[str]
    strata: str  # how the items were stratified, in words


def _coarsen(keys: list[str], fallback: list[str]) -> list[str]:
    """Replace each key held by a single item with its fallback key."""
    counts = Counter(keys)
    return [k if counts[k] >= 2 else f for k, f in zip(keys, fallback)]


def _pool(keys: list[str], by_label: list[str]) -> list[str]:
    """Lone strata pooled by label, then together; a last lone item joins the largest stratum."""
    keys = _coarsen(_coarsen(keys, by_label), ["small strata"] * len(keys))
    counts = Counter(keys)
    largest = counts.most_common(1)[0][0]
    return [k if counts[k] >= 2 else largest for k in keys]


def stratified_split(item_ids: Sequence[str], labels: Sequence[int], categories: Sequence[str], *,
                     held_out_fraction: float = 0.5, seed: int = 0, groups: Sequence[str] | None = None) -> Split:
    """Split items into development and held-out parts, stratified by (consensus label, category).

    Parameters
    ----------
    item_ids, labels, categories : aligned, one entry per item with a consensus label.
    held_out_fraction : share of items held out, in (0, 1).
    seed : the random state; the same inputs and seed give the same split.
    groups : aligned task ids, optional. When a task has several items, whole tasks go to one side: the
        held-out part is one of ``round(1 / held_out_fraction)`` folds of ``StratifiedGroupKFold``, so its
        share is near the fraction rather than exact.

    >>> s = stratified_split([f"i{k}" for k in range(8)], [0, 0, 1, 1, 0, 0, 1, 1], ["a"] * 8, seed=1)
    >>> len(s.development), len(s.held_out), sorted(s.development + s.held_out) == sorted(f"i{k}" for k in range(8))
    (4, 4, True)
    """
    from sklearn.model_selection import train_test_split

    if not 0 < held_out_fraction < 1:
        raise ValueError(f"held_out_fraction must be between 0 and 1, got {held_out_fraction}")
    ids = list(item_ids)
    if not len(ids) == len(labels) == len(categories):
        raise ValueError("item_ids, labels and categories must have the same length")
    if len(ids) < 4:
        raise ValueError(f"{len(ids)} items with a consensus label are too few to split; label at least 4")
    fine = [f"label {lab} / {cat}" for lab, cat in zip(labels, categories)]
    by_label = [f"label {lab}" for lab in labels]
    n_held = int(np.ceil(held_out_fraction * len(ids)))
    order = {i: k for k, i in enumerate(ids)}
    if groups is not None:
        if len(groups) != len(ids):
            raise ValueError("groups must have one task id per item")
        if len(set(groups)) < len(ids):
            return _grouped_split(ids, _pool(fine, by_label), list(groups), held_out_fraction, seed, order)
    for name, strata in (("consensus label x category", _pool(fine, by_label)),
                         ("consensus label", _pool(by_label, by_label))):
        n_classes = len(set(strata))
        if n_classes < 2 or n_held < n_classes or len(ids) - n_held < n_classes:
            continue  # too small to stratify this finely
        dev, held = train_test_split(ids, test_size=held_out_fraction, random_state=seed, stratify=strata)
        first = fine if name.endswith("category") else by_label
        pooled = sum(s != f for s, f in zip(strata, first))
        detail = f" ({n_classes} strata" + (f", {pooled} item{'s' * (pooled != 1)} of small strata pooled)"
                                             if pooled else ")")
        return Split(sorted(dev, key=order.get), sorted(held, key=order.get), name + detail)
    dev, held = train_test_split(ids, test_size=held_out_fraction, random_state=seed)
    return Split(sorted(dev, key=order.get), sorted(held, key=order.get), "none (too few items per label)")


def _grouped_split(ids: list[str], strata: list[str], groups: list[str], fraction: float, seed: int,
                   order: dict[str, int]) -> Split:
    from sklearn.model_selection import StratifiedGroupKFold

    folds = max(2, round(1 / fraction))
    n_groups = len(set(groups))
    if n_groups < folds:
        raise ValueError(f"{n_groups} tasks are too few to hold whole tasks out; label items of more tasks")
    cv = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    with warnings.catch_warnings():  # a stratum smaller than the folds is split as well as it can be
        warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
        tests = [test for _, test in cv.split(ids, strata, groups)]
    held = set(min(tests, key=lambda t: (abs(len(t) - fraction * len(ids)), t.tolist())).tolist())
    dev = [i for k, i in enumerate(ids) if k not in held]
    out = [i for k, i in enumerate(ids) if k in held]
    detail = f"consensus label x category ({len(set(strata))} strata), whole tasks on one side ({n_groups} tasks)"
    return Split(sorted(dev, key=order.get), sorted(out, key=order.get), detail)


def paired_gain(delta: PairedDelta, metric: str) -> tuple[bool, str]:
    """Whether a paired-bootstrap difference (candidate - baseline) of ``metric`` is above 0 with its interval.

    ``delta`` is what ``paired_bootstrap_delta`` returns, read by ``PairedDelta.of``; the sentence gives the
    numbers either way.
    """
    m = delta.metrics[metric]
    value, low, high = (None if v is None or np.isnan(v) else float(v) for v in (m.value, m.ci_low, m.ci_high))
    if value is None or low is None or high is None:
        return False, f"the change in {metric} has no interval ({delta.n_items} paired items)"
    said = f"{metric} changes by {value:+.3f} (95% interval {low:+.3f} to {high:+.3f}, {delta.n_items} items)"
    return low > 0, said + (": above 0" if low > 0 else ": the interval does not lie above 0")
