"""The noise floor: what the current number of labeled items can and cannot tell apart.

Both functions work from a bootstrap standard error ``se`` measured on
``n`` items, and assume, as the bootstrap does, that the standard error
shrinks as ``1 / sqrt(n)``: with ``n_new`` items it would be
``se * sqrt(n / n_new)``. New items are assumed to come in task clusters of
the same average size as the current ones.

* Smallest detectable difference between two judges (or runs), each measured
  on ``n`` items: ``(z_{1 - (1 - level) / 2} + z_{power}) * sqrt(2) * se``.
  With the default ``power=0.5`` this is ``1.96 * sqrt(2) * se``: the
  difference at which a 95% interval of the difference of two independent
  estimates just excludes zero (half the time). Paired comparisons on the
  same items usually do better, since errors on shared items cancel; this
  is the conservative figure. ``power=0.8`` gives the usual planning
  figure, ``(1.96 + 0.84) * sqrt(2) * se``.
* Items needed for an interval of width ``w``: the percentile interval is
  about ``2 * z * se`` wide, so ``n_new = ceil(n * (2 * z * se / w) ** 2)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any


from workbench.stats._common import check_level, special_functions

NOISE_FLOOR_METRICS = ("krippendorff_alpha_ordinal", "exact_agreement")


def min_detectable_difference(se: float, *, level: float = 0.95, power: float = 0.5) -> float:
    """Smallest difference in a metric that ``n`` items can detect, ``(z_level + z_power) * sqrt(2) * se``.

    Examples
    --------
    >>> round(min_detectable_difference(0.05), 4)
    0.1386
    """
    check_level(level)
    if not 0 < power < 1:
        raise ValueError(f"power must be strictly between 0 and 1 such as 0.5 or 0.8, got {power!r}")
    if not se >= 0:
        return float("nan")
    ndtri = special_functions().ndtri  # scipy.stats' norm.ppf, without the 0.5 s of importing scipy.stats
    return float((ndtri(1 - (1 - level) / 2) + ndtri(power)) * math.sqrt(2) * se)


def items_for_interval_width(se: float, n_items: int, *, width: float, level: float = 0.95) -> int:
    """Items needed for a ``level`` interval of the given width, from ``se`` on ``n_items`` items.

    Examples
    --------
    >>> items_for_interval_width(0.05, 100, width=0.1)
    385
    """
    check_level(level)
    if not width > 0:
        raise ValueError(f"width must be a positive interval width such as 0.1, got {width!r}")
    if n_items < 1:
        raise ValueError(f"n_items must be at least 1, got {n_items!r}")
    z = special_functions().ndtri(1 - (1 - level) / 2)
    # Round before ceil so that float noise does not add an item.
    return int(math.ceil(round(n_items * (2 * z * se / width) ** 2, 9)))


def noise_floor(
    agreement: Mapping[str, Any],
    *,
    target_width: float | None = None,
    power: float = 0.5,
    metrics: Iterable[str] = NOISE_FLOOR_METRICS,
) -> dict[str, Any]:
    """Noise floor of the agreement report of :func:`~workbench.stats.intervals.bootstrap.agreement_with_intervals`.

    Parameters
    ----------
    agreement : dict
        The result of ``agreement_with_intervals``; its ``standard_errors``,
        ``n_items`` and ``bootstrap.level`` are used.
    target_width : float, optional
        Interval width wanted; adds the items needed for it.
    power : float, default 0.5
        See :func:`min_detectable_difference`.
    metrics : iterable of str
        Metrics to report; alpha and exact agreement by default.

    Returns
    -------
    dict
        ``n_items``, ``level``, ``power``, ``target_width`` and ``metrics``:
        {name: {"se", "min_detectable_difference", "items_needed",
        "additional_items"}} (the last two None without ``target_width``,
        all NaN/None where the standard error is undefined).
    """
    level = float(agreement["bootstrap"]["level"])
    n = int(agreement["n_items"])
    out: dict[str, Any] = {"n_items": n, "level": level, "power": power, "target_width": target_width, "metrics": {}}
    for name in metrics:
        se = float(agreement["standard_errors"][name])
        entry: dict[str, Any] = {"se": se, "min_detectable_difference": min_detectable_difference(se, level=level,
                                                                                                  power=power),
                                 "items_needed": None, "additional_items": None}
        if target_width is not None and math.isfinite(se) and n >= 1:
            needed = items_for_interval_width(se, n, width=target_width, level=level)
            entry.update(items_needed=needed, additional_items=max(0, needed - n))
        out["metrics"][name] = entry
    return out
