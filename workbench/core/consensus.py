"""Consensus label of an item: adjudicated, else strict majority, else unresolved (DESIGN 2)."""

from __future__ import annotations

from typing import Iterable


def consensus_label(scores: Iterable[int], adjudicated: int | None = None) -> int | None:
    """The lead's label if set; else the label more than half the raters gave; else None.

    >>> consensus_label([1, 1, 0])
    1
    >>> consensus_label([1, 0]) is None
    True
    >>> consensus_label([1, 0], adjudicated=0)
    0
    """
    if adjudicated is not None:
        return adjudicated
    scores = list(scores)
    # an item has a handful of labels: counting each distinct value beats building a Counter (10,000 items a report)
    for value in set(scores):
        if scores.count(value) * 2 > len(scores):
            return value
    return None
