"""Selective judging's typed results: a calibrated threshold (one judge, or each judge of a cascade)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CascadeStage:
    """One judge of a cascade: its threshold, and what it keeps of the items the judges before it left."""

    judge: str
    threshold: float | None
    coverage: float  # share of the items that reached this judge that it keeps
    share_of_items: float  # share of all calibration items this judge grades

    def to_json(self) -> dict[str, Any]:
        return {"judge": self.judge, "threshold": self.threshold, "coverage": self.coverage,
                "share_of_items": self.share_of_items}


@dataclass(frozen=True)
class SelectiveResult:
    """The ``selective`` object of ``calibrate --selective --json``.

    ``agreement`` is exact agreement (judge verdict == human consensus) on the kept items; ``agreement_lower_bound``
    its exact one-sided Clopper-Pearson bound at level 1 - risk; ``confidence_source`` says where each item's
    confidence came from (stored with the judgment, or the share of its repeats that agree).
    """

    threshold: float | None
    coverage: float
    agreement: float | None
    agreement_lower_bound: float | None
    target: float
    risk: float
    n_calibration: int
    guaranteed: bool
    sentence: str
    confidence_source: str
    n_without_confidence: int = 0
    more_labels: int | None = None  # at least this many more labeled items when not guaranteed
    cascade: tuple[CascadeStage, ...] = ()
    cost_per_graded_item: float | None = None
    cost_last_judge_alone: float | None = None
    steps: tuple[dict, ...] = field(default=(), compare=False)
    # not in the JSON: the calibration items each judge kept (in cascade order), what the gate's check reads (the
    # labels needed if the first test's agreement holds; each judge's first test: kept items, agreeing ones)
    kept_by_judge: tuple[tuple[str, ...], ...] = field(default=(), compare=False)
    more_labels_about: int | None = field(default=None, compare=False)
    openings: tuple[tuple[int, int], ...] = field(default=(), compare=False)

    @property
    def kept_ids(self) -> tuple[str, ...]:
        """Every calibration item the judge (or the cascade) kept."""
        return tuple(i for kept in self.kept_by_judge for i in kept)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "threshold": self.threshold, "coverage": self.coverage, "agreement": self.agreement,
            "agreement_lower_bound": self.agreement_lower_bound, "target": self.target, "risk": self.risk,
            "n_calibration": self.n_calibration, "guaranteed": self.guaranteed, "sentence": self.sentence,
            "confidence_source": self.confidence_source, "n_without_confidence": self.n_without_confidence,
            "more_labels": self.more_labels, "steps": list(self.steps)}
        if self.cascade:
            out["cascade"] = [s.to_json() for s in self.cascade]
            out["cost_per_graded_item"] = self.cost_per_graded_item
            out["cost_last_judge_alone"] = self.cost_last_judge_alone
        return out
