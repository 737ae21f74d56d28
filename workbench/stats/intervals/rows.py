"""Distinct rows of a table of counts, fast: the bookkeeping shared by the cluster bootstrap and the posterior."""

from __future__ import annotations

import numpy as np


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows in lexicographic order and how often each occurs: ``np.unique(rows, axis=0,
    return_counts=True)``, ten times faster for rows of whole numbers (counts, sums of integer residuals).

    Such a row, less the column minima, is read as one integer in a mixed radix (digit i below the range of
    column i plus one), which orders rows as the lexicographic comparison does; other rows (fractions, NaN,
    -0.0, keys beyond 2**62) take ``np.unique`` itself. The order matters: it fixes the multinomial draws of
    :func:`workbench.stats.intervals.bootstrap.resample_sums`.

    >>> kinds, counts = unique_rows(np.array([[1, 0], [0, 2], [1, 0]]))
    >>> kinds.tolist(), counts.tolist()
    ([[0, 2], [1, 0]], [1, 2])
    """
    rows = np.asarray(rows)
    if rows.ndim != 2 or rows.size == 0 or rows.dtype.kind not in "iuf":
        return np.unique(rows, axis=0, return_counts=True)
    if rows.dtype.kind == "f" and not (np.isfinite(rows).all() and (rows == np.round(rows)).all()
                                       and np.abs(rows).max() < 2**52 and not np.signbit(rows[rows == 0]).any()):
        return np.unique(rows, axis=0, return_counts=True)
    low = rows.min(axis=0)
    radix = [int(high) - int(lo) + 1 for high, lo in zip(rows.max(axis=0), low)]  # Python ints: no overflow
    place, places = 1, []
    for r in reversed(radix):  # the last column is the least significant digit
        places.append(place)
        place *= r
    if place >= 2**62:
        return np.unique(rows, axis=0, return_counts=True)
    shifted = rows - low if rows.dtype.kind == "f" else rows.astype(np.int64) - low.astype(np.int64)
    keys = shifted.astype(np.int64) @ np.array(places[::-1], dtype=np.int64)
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    return rows[first], counts
