"""The record every interval of the statistics is reported as."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class MetricInterval:
    """A value and its interval; a proportion also carries its denominator ``n`` and the cluster design effect
    of its interval (absent from the JSON where not given)."""

    value: float
    ci_low: float
    ci_high: float
    n: int | None = None
    design_effect: float | None = None

    @classmethod
    def nan(cls) -> MetricInterval:
        return cls(float("nan"), float("nan"), float("nan"))

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high,
                **({"n": self.n} if self.n is not None else {}),
                **({"design_effect": self.design_effect} if self.design_effect is not None else {})}
