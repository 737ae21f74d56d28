"""Grading, typed: one graded item as the results file holds it, and the corrected pass rate as the statistics
hand it back (``stats.corrected_pass_rate``, read once into a record)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.calibration.report import Record, record


@dataclass(frozen=True, slots=True)
class GradedItem:
    """A new item with the judge's score, whether it passes, and the human consensus where one was given."""

    item_id: str
    score: int | None
    passed: bool | None
    unscored_reason: str | None = None
    rationale: str | None = None
    human_score: int | None = None
    labeled: bool = False  # a human label was given (its consensus may still be None: a tie)
    judge: str | None = None  # a cascade bundle's: the judge that graded the item

    def to_json(self) -> dict[str, Any]:
        """The results file's line: the reason only when unscored, the rationale and the human score when there."""
        out: dict[str, Any] = {"item_id": self.item_id, "score": self.score, "pass": self.passed}
        if self.score is None:
            out["unscored_reason"] = self.unscored_reason
        if self.rationale:
            out["rationale"] = self.rationale
        if self.labeled:
            out["human_score"] = self.human_score
        if self.judge is not None:
            out["judge"] = self.judge
        return out


@record
class CorrectionBootstrap(Record):
    """How the correction's intervals were drawn."""

    resamples: int = 0
    seed: int = 0
    cluster: bool = False
    level: float = 0.95
    method: str = ""


@record
class PassRateCorrection(Record):
    """Raw and Rogan-Gladen corrected pass rates with their intervals ({value, ci_low, ci_high} each), the judge's
    TPR and TNR on the golden set, and why a correction was refused."""

    raw: dict[str, Any] = field(default_factory=dict)
    corrected: dict[str, Any] = field(default_factory=dict)
    youden: dict[str, Any] = field(default_factory=dict)
    tpr: float | None = None
    tnr: float | None = None
    n_pos: int = 0
    n_neg: int = 0
    design_effect: dict[str, Any] = field(default_factory=dict)
    bootstrap: CorrectionBootstrap = field(default_factory=CorrectionBootstrap)
    undefined_resamples: int = 0
    refused: bool = False
    reason: str | None = None
