"""Consensus label of an item: adjudicated, else strict majority, else unresolved (DESIGN 2)."""

from __future__ import annotations

from collections import Counter
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
    if not scores:
        return None
    value, count = Counter(scores).most_common(1)[0]
    return value if count * 2 > len(scores) else None
