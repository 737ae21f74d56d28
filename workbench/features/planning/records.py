"""The plan's records: the gate's per-measurement states it reads (a check's value holds one for TPR and TNR,
``pass_fail``, and one per self-preference effect, written by the gate as JSON), and its simulated forecasts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.calibration.report import Record, record
from workbench.stats.plans.paths import Range


@record
class MeasurementState(Record):
    """One measurement behind a gate check: its state (None while it cannot be measured) and the consensus items
    that would decide it."""

    state: str | None = None
    more_items: int | None = None


@dataclass(frozen=True)
class Forecast:
    """Labels to a decision as a predictive range: the median and the 80% range, over the simulated futures, of the
    labels (and labeled items) by the look at which the gate decides; the share of futures whose decision comes
    before the unlabeled pool runs out; the items to add to the golden set beyond the pool (0 on the futures the
    pool decides)."""

    labels: Range
    items: Range
    pool_decides: float
    add_items: Range

    def to_json(self) -> dict[str, Any]:
        return {"labels": self.labels.to_json(), "items": self.items.to_json(),
                "pool_decides": round(self.pool_decides, 3), "add_items": self.add_items.to_json()}
