"""Selective judging's typed results: a calibrated threshold (one judge, or each judge of a cascade)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CascadeStage:
    """One judge of a cascade: its threshold (None: skipped, it keeps nothing and is not run), and what it keeps of
    the items the judges before it left."""

    judge: str
    threshold: float | None
    coverage: float  # share of the items that reached this judge that it keeps
    share_of_items: float  # share of all calibration items this judge grades
    n_graded: int = 0  # calibration items it grades
    agreement: float | None = None  # exact agreement with the consensus on them
    cost_per_item: float | None = None  # USD per item it is run on (recorded, else estimated)

    def to_json(self) -> dict[str, Any]:
        return {"judge": self.judge, "threshold": self.threshold, "coverage": self.coverage,
                "share_of_items": self.share_of_items, "n_graded": self.n_graded, "agreement": self.agreement,
                "cost_per_item": self.cost_per_item}


@dataclass(frozen=True)
class SingleJudge:
    """A judge of the cascade alone, tested on its own at the same target and risk (``calibrate -j J
    --selective``): what the cascade's coverage is compared with."""

    judge: str
    threshold: float | None
    coverage: float
    guaranteed: bool

    def to_json(self) -> dict[str, Any]:
        return {"judge": self.judge, "threshold": self.threshold, "coverage": self.coverage,
                "guaranteed": self.guaranteed}


@dataclass(frozen=True)
class CascadeMethod:
    """How a cascade's thresholds were chosen: the split of the calibration items and the family tested."""

    n_order: int  # labeled items that ordered the configurations
    n_test: int  # labeled items that tested them
    n_candidates: int  # configurations in the family (single judges included)
    n_path: int  # configurations on the path the ordering part learned
    n_tested: int  # tests the fixed sequence ran (it stops at the first failure)
    seed: int

    def to_json(self) -> dict[str, Any]:
        return {"name": "learn then test: the path ordered on one part of the labeled items, fixed-sequence "
                        "tested on the rest", "n_order": self.n_order, "n_test": self.n_test,
                "n_candidates": self.n_candidates, "n_path": self.n_path, "n_tested": self.n_tested,
                "seed": self.seed}


@dataclass(frozen=True)
class SelectiveResult:
    """The ``selective`` object of ``calibrate --selective --json``.

    ``agreement`` is exact agreement (judge verdict == human consensus) on the kept items; ``agreement_lower_bound``
    its exact one-sided Clopper-Pearson bound at level 1 - risk (for a cascade, on the testing part's kept items,
    the guarantee over the whole choice); ``confidence_source`` says where each item's confidence came from
    (stored with the judgment, or the share of its repeats that agree).
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
    # a cascade's: the abstained share, the agreement's interval on the testing items, the cost of 1,000 items
    # and where the costs came from, each judge alone, the judge recommended when no cascade beats it, the method
    abstained_share: float | None = None
    agreement_interval: dict | None = None
    cost_per_1000_items: float | None = None
    cost_source: str | None = None
    single_judges: tuple[SingleJudge, ...] = ()
    recommended_judge: str | None = None
    method: CascadeMethod | None = None
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
            out["abstained_share"] = self.abstained_share
            out["agreement_interval"] = self.agreement_interval
            out["cost_per_1000_items"] = self.cost_per_1000_items
            out["cost_source"] = self.cost_source
            out["single_judges"] = [s.to_json() for s in self.single_judges]
            out["recommended_judge"] = self.recommended_judge
            out["method"] = self.method.to_json() if self.method else None
        return out
