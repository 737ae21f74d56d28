"""The coverage-agreement curve of a judge with confidence: for each threshold, the share of items it keeps and
its agreement with the human consensus on them (the trade the selective guarantee picks one point of).

The curve is descriptive (each point's agreement is what was seen, no bound); the guarantee is
``features.selective``'s, which this module only calls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.calibration.golden_sets import consensus
from workbench.core.errors import WorkbenchError
from workbench.features.selective.records import SelectiveResult
from workbench.features.selective.service import calibrate_selective, judge_items
from workbench.store import Store


@dataclass(frozen=True)
class CurvePoint:
    threshold: float  # keep items with confidence >= this
    coverage: float  # share of the labeled items kept
    agreement: float  # exact agreement with the consensus on the kept items
    n_kept: int


@dataclass(frozen=True)
class SelectiveCurve:
    judge: str
    n_items: int  # labeled items with a judge verdict (the curve's denominator)
    n_with_confidence: int
    source: str  # where the confidence came from: 'stored', 'repeats', 'stored and repeats' or 'none'
    points: tuple[CurvePoint, ...]  # highest threshold first
    chosen: SelectiveResult | None  # the guaranteed threshold (None: no confidence, or it could not be computed)
    why_not: str | None = None  # why there is no ``chosen``


def coverage_agreement(confidence: list[float], agree: list[bool]) -> list[CurvePoint]:
    """One point per distinct confidence value, highest first: keeping items at or above it, the share kept of
    all items and the agreement on the kept ones. Items without confidence (NaN) are never kept."""
    if len(confidence) != len(agree):
        raise ValueError("confidence and agree must be aligned, one entry per item")
    n = len(confidence)
    pairs = sorted(((c, a) for c, a in zip(confidence, agree) if not math.isnan(c)), key=lambda p: -p[0])
    points, kept, agreeing, i = [], 0, 0, 0
    while i < len(pairs):
        threshold = pairs[i][0]
        while i < len(pairs) and pairs[i][0] == threshold:  # ties are kept or dropped together
            kept += 1
            agreeing += bool(pairs[i][1])
            i += 1
        points.append(CurvePoint(threshold, kept / n, agreeing / kept, kept))
    return points


def selective_curve(store: Store, golden_set: str, rubric: str, judge: str, *, target: float,
                    risk: float) -> SelectiveCurve:
    """The judge's curve on the labeled items, and the threshold ``calibrate --selective`` would choose."""
    items = judge_items(store, golden_set, rubric, judge)
    resolved = consensus(store, golden_set, rubric.split("@")[0]).resolved
    ids = [i for i in items.verdict if i in resolved]
    conf = [items.confidence.get(i, math.nan) for i in ids]
    points = coverage_agreement(conf, [items.verdict[i] == resolved[i] for i in ids])
    with_conf = sum(1 for c in conf if not math.isnan(c))
    chosen, why_not = None, None
    if with_conf:
        try:
            chosen = calibrate_selective(store, golden_set, rubric, [judge], target=target, risk=risk)
        except WorkbenchError as e:
            why_not = str(e)
    return SelectiveCurve(judge, len(ids), with_conf, items.source, tuple(points), chosen, why_not)
