"""The gate's per-measurement states the plan reads, typed: a check's value holds one for TPR and TNR
(``pass_fail``) and one per self-preference effect, written by the gate as JSON."""

from __future__ import annotations

from workbench.calibration.report import Record, record


@record
class MeasurementState(Record):
    """One measurement behind a gate check: its state (None while it cannot be measured) and the consensus items
    that would decide it."""

    state: str | None = None
    more_items: int | None = None
