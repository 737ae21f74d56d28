"""What `workbench probe` hands back, typed: the dry run's estimate per probe, and the probe runs with their report.

``to_json`` builds the JSON `probe --json` has always printed, key for key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.features.judging.records import RunSummary
from workbench.judges.runner import RunEstimate


@dataclass(frozen=True, slots=True)
class ProbeEstimate:
    """One probe's dry run: the judgments it would still send and their estimated cost."""

    probe: str
    kind: str
    estimate: RunEstimate

    def to_json(self) -> dict[str, Any]:
        return {"probe": self.probe, "kind": self.kind, **self.estimate.to_dict()}


@dataclass(frozen=True, slots=True)
class ProbesEstimate:
    """The dry run of every applicable probe, with the total."""

    judge: str
    model: str
    baseline_run: str
    probes: list[ProbeEstimate]
    not_applicable: list[str]

    @property
    def n_to_run(self) -> int:
        return sum(p.estimate.n_to_run for p in self.probes)

    @property
    def cost_unknown(self) -> bool:
        return any(p.estimate.cost_usd is None and p.estimate.n_to_run > 0 for p in self.probes)

    @property
    def cost_usd(self) -> float | None:
        return None if self.cost_unknown else sum((p.estimate.cost_usd or 0.0 for p in self.probes), 0.0)

    @property
    def max_cost_usd(self) -> float | None:
        return None if self.cost_unknown else sum(p.estimate.max_cost_usd or 0.0 for p in self.probes)

    def to_json(self) -> dict[str, Any]:
        return {"judge": self.judge, "model": self.model, "baseline_run": self.baseline_run,
                "probes": [p.to_json() for p in self.probes], "not_applicable": self.not_applicable,
                "n_to_run": self.n_to_run, "cost_usd": self.cost_usd, "max_cost_usd": self.max_cost_usd}


@dataclass(frozen=True, slots=True)
class ProbeRun:
    """One probe's run: the judge run's summary under the probe's name."""

    probe: str
    summary: RunSummary

    def to_json(self) -> dict[str, Any]:
        s, r = self.summary, self.summary.report
        return {"probe": self.probe, "run": s.run, "n_planned": r.n_planned, "n_skipped": r.n_skipped,
                "n_recorded": r.n_recorded, "n_unscored": r.n_unscored, "n_failed": r.n_failed,
                "n_requests": r.n_requests, "cost_usd": r.cost_usd, "cost_unknown": r.cost_unknown,
                "stopped": r.stopped, "complete": s.complete}


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    """The probe runs of one `workbench probe`, what they spent, and the report of every probe run so far."""

    judge: str
    model: str
    baseline_run: str
    runs: list[ProbeRun]
    not_applicable: list[str]
    spent_usd: float
    stopped: str | None
    report: dict[str, Any] | None  # the calibration report's probe section, as it writes it

    def to_json(self) -> dict[str, Any]:
        return {"judge": self.judge, "model": self.model, "baseline_run": self.baseline_run,
                "runs": [r.to_json() for r in self.runs], "not_applicable": self.not_applicable,
                "spent_usd": self.spent_usd, "stopped": self.stopped,
                "report": self.report}
