"""The synthetic demo in memory, typed: what the simulations draw (a reviewer's label, a judge's verdict) and the
files' records the generators hand to the writers (JSON lines, written with sorted keys)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SimLabel:
    """A simulated reviewer's label (``simulate_labels``)."""

    item_id: str
    rater: str
    score: int


@dataclass(frozen=True, slots=True)
class SimVerdict:
    """A simulated judge's verdict (``simulate_judge``): run and repeat count from 0."""

    run: int
    repeat: int
    item_id: str
    score: int


@dataclass(frozen=True, slots=True)
class DemoData:
    """The demo golden set's files: items, labels, adjudications, each judge's judgments, and the rubric."""

    items: list[dict[str, Any]]
    labels: list[dict[str, Any]]
    adjudications: list[dict[str, Any]]
    judgments: dict[str, list[dict[str, Any]]]
    rubric: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AuditData:
    """The eval-awareness audit's golden set: items and their labels."""

    items: list[dict[str, Any]]
    labels: list[dict[str, Any]]
