"""A judge's confidence in a verdict from its repeats: the share of repeats that give the same score."""

from __future__ import annotations

from collections.abc import Sequence


def confidence_from_repeats(verdict: int, repeats: Sequence[int]) -> float | None:
    """Share of ``repeats`` (every scored repeat of the item, the verdict's own included) equal to ``verdict``.

    None with fewer than two repeats: one sample says nothing about how sure the judge is.

    >>> confidence_from_repeats(1, [1, 1, 0, 1])
    0.75
    >>> confidence_from_repeats(1, [1]) is None
    True
    """
    if len(repeats) < 2:
        return None
    return sum(1 for r in repeats if r == verdict) / len(repeats)
