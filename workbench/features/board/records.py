"""Typed records of the results board: the rows it stores, the bundles that grade it, and the report it shows.

The report's records hold JSON-ready values (NaN already None, numpy scalars
already Python numbers): the renderers read them as they are, and each
``to_json`` builds the dict ``workbench board show --format json`` has always
printed, key for key and in the same order.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from workbench.core.models import Item, Producer
from workbench.stats import jsonable

# -- what the store holds -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Board:
    id: int
    name: str
    created_at: str


@dataclass(frozen=True, slots=True)
class BoardSummary:
    """A board as `workbench board list` shows it."""

    id: int
    name: str
    created_at: str
    n_items: int
    n_models: int
    n_tasks: int
    n_bundles: int


@dataclass(frozen=True, slots=True)
class BoardItem:
    """A run on the board: one repeat of a task by a model, with the item's content (a JSON document)."""

    item_id: str
    task_id: str
    category: str
    model: str
    family: str | None
    repeat: int
    content: dict[str, Any]
    content_hash: str
    source: str

    def to_item(self) -> Item:
        c = Content.from_json(self.content)
        return Item(id=self.item_id, input=c.input, task_id=c.task_id, category=c.category, output=c.output,
                    trajectory=c.trajectory, producer=c.producer, reference=c.reference, metadata=c.metadata)


@dataclass(frozen=True, slots=True)
class Content:
    """The stored content of a board item, as ``Item.content()`` wrote it."""

    input: Any
    task_id: str | None = None
    category: str = "default"
    output: Any = None
    trajectory: Any = None
    producer: Producer | None = None
    reference: Any = None
    metadata: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Content:
        known = {k: v for k, v in doc.items() if k in cls.__dataclass_fields__}
        producer = known.pop("producer", None)
        return cls(**{**known, "metadata": known.get("metadata") or {},
                      "producer": Producer(**producer) if producer else None})


@dataclass(frozen=True, slots=True)
class BoardGrade:
    """A grade of a board item under one of its bundles (``sha256``): the judge's verdict of one judge repeat."""

    item_id: str
    sha256: str
    judge_repeat: int
    score: int | None
    unscored_reason: str | None
    rationale: str | None
    evidence_steps: list
    cost_usd: float | None
    model_version: str | None
    trace: list | None = None


@dataclass(frozen=True, slots=True)
class Calibration:
    """What the board reads of a bundle's calibration: the judge's TPR and TNR, its confusion matrix on the golden
    set and its measured same-family effect (None when the bundle recorded none); ``document`` is the section as
    stored, for the grading service's design effects."""

    tpr: float
    tnr: float
    confusion_matrix: Any
    same_family: dict[str, Any] | None
    document: dict[str, Any]

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Calibration:
        preference = doc.get("self_preference") or {}
        return cls(tpr=doc["tpr"], tnr=doc["tnr"], confusion_matrix=doc["confusion"]["matrix"],
                   same_family=preference.get("same_family"), document=doc)


@dataclass(frozen=True, slots=True)
class ApprovedBundle:
    """An approved bundle read once from its JSON document; ``document`` is kept as stored on the board."""

    sha256: str
    rubric_name: str
    rubric_version: int
    rubric_content: dict[str, Any]
    judge_id: str
    golden_set: str
    calibration: Calibration
    document: dict[str, Any]

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ApprovedBundle:
        rubric = doc["rubric"]
        return cls(sha256=doc["sha256"], rubric_name=rubric["name"], rubric_version=rubric["version"],
                   rubric_content=rubric["content"], judge_id=doc["judge"]["id"], golden_set=doc["golden_set"]["name"],
                   calibration=Calibration.from_json(doc["calibration"]), document=doc)


@dataclass(frozen=True, slots=True)
class StoredBundle:
    """A bundle attached to a board: its tier, the config hash its grades are keyed by, the file it came from."""

    sha256: str
    tier: str
    config_hash: str
    path: str
    bundle: ApprovedBundle


# -- grading ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TierGrading:
    """What grading one tier did: planned, recorded, skipped (graded before), unscored, failed, and its cost."""

    tier: str
    judge: str
    n_planned: int
    n_recorded: int
    n_skipped: int
    n_unscored: int
    n_failed: int
    n_requests: int
    cost_usd: float
    cost_unknown: bool
    stopped: bool
    failures: list[str]


@dataclass(frozen=True, slots=True)
class GradingSummary:
    board: str
    items_added: int
    n_items: int
    tiers: list[TierGrading]


@dataclass(frozen=True, slots=True)
class SavedVerdict:
    """A reviewer's verdict on a board item, saved as a label in a golden set."""

    golden_set: str
    rubric: str
    item_id: str
    changed: bool


# -- the report ---------------------------------------------------------------------------------------


def _json(record: Any) -> dict[str, Any]:
    return asdict(record)


@dataclass(frozen=True, slots=True)
class TierInfo:
    """A tier as the report describes it: the bundle, its judge, rubric and calibration."""

    name: str
    kind: str
    sha256: str
    judge: str
    model: str
    family: str | None
    rubric: str
    rubric_version: int
    golden_set: str
    pass_threshold: float
    scale: list[int]
    tpr: float
    tnr: float
    same_family: dict[str, Any] | None

    to_json = _json


@dataclass(frozen=True, slots=True)
class ModelRow:
    model: str
    family: str | None
    marked_by: list[str]  # the tiers whose judge shares the model's family

    to_json = _json


@dataclass(frozen=True, slots=True)
class TaskRow:
    task_id: str
    category: str

    to_json = _json


@dataclass(frozen=True, slots=True)
class OutlierStats:
    """A cell's outlier test: its mean with an interval, the contrast with the other models, and the flag."""

    mean_low: float | None
    mean_high: float | None
    vs_others: float | None
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    flagged: bool
    direction: str  # "above", "below" or ""

    to_json = _json


@dataclass(frozen=True, slots=True)
class CellTier:
    """One tier of a (task, model) cell over its repeats; ``test`` is None when no repeat is scored."""

    n: int
    mean_score: float | None
    n_pass: int
    n_top: int
    n_unscored: int
    mean_at_k: float | None
    pass_hat_k: float | None
    test: OutlierStats | None = None

    @property
    def flagged(self) -> bool:
        return self.test is not None and self.test.flagged

    @property
    def direction(self) -> str | None:
        return None if self.test is None else self.test.direction

    def to_json(self) -> dict[str, Any]:
        out = {"n": self.n, "mean_score": self.mean_score, "n_pass": self.n_pass, "n_top": self.n_top,
               "n_unscored": self.n_unscored, "mean_at_k": self.mean_at_k, "pass_hat_k": self.pass_hat_k}
        return out if self.test is None else {**out, **self.test.to_json()}


@dataclass(frozen=True, slots=True)
class Cell:
    task_id: str
    category: str
    model: str
    tiers: dict[str, CellTier]

    def to_json(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "category": self.category, "model": self.model,
                "tiers": {name: t.to_json() for name, t in self.tiers.items()}}


@dataclass(frozen=True, slots=True)
class ColumnRow:
    """A model's column under one tier: mean@k and pass^k over its tasks (None when no task is scored)."""

    tier: str
    model: str
    n_tasks: int
    k: int
    mean_at_k: float | None
    pass_hat_k: float | None
    mean_score: float | None

    to_json = _json


@dataclass(frozen=True, slots=True)
class RateRow:
    """A model's raw and corrected pass rate on a category (or "(all)") under one tier."""

    tier: str
    model: str
    category: str
    n: int
    n_tasks: int
    raw: float | None
    raw_low: float | None
    raw_high: float | None
    corrected: float | None
    ci_low: float | None
    ci_high: float | None
    refused: bool
    reason: str | None

    to_json = _json


@dataclass(frozen=True, slots=True)
class CategoryOutlier:
    """A model on a whole category against the category's other models, under one tier."""

    tier: str
    category: str
    model: str
    n: int
    mean_score: float | None
    test: OutlierStats

    def to_json(self) -> dict[str, Any]:
        return {"tier": self.tier, "category": self.category, "model": self.model, "n": self.n,
                "mean_score": self.mean_score, **self.test.to_json()}


@dataclass(frozen=True, slots=True)
class LookReason:
    """Why a cell is worth a look; ``tier`` only for an outlier."""

    kind: str
    strength: float
    text: str
    tier: str | None = None

    def to_json(self) -> dict[str, Any]:
        tier = {} if self.tier is None else {"tier": self.tier}
        return {"kind": self.kind, **tier, "strength": self.strength, "text": self.text}


@dataclass(frozen=True, slots=True)
class LookEntry:
    """A cell on the "where to look" list, with the repeat to open first and its reasons, strongest first."""

    rank: int
    task_id: str
    category: str
    model: str
    item_id: str | None
    reasons: list[LookReason]

    @property
    def kind(self) -> str:
        return self.reasons[0].kind

    @property
    def strength(self) -> float:
        return self.reasons[0].strength

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "task_id": self.task_id, "category": self.category, "model": self.model,
                "item_id": self.item_id, "reasons": [r.to_json() for r in self.reasons], "kind": self.kind,
                "strength": self.strength}


@dataclass(frozen=True, slots=True)
class FamilyEffect:
    """The bundle's same-family effect measured at calibration (None where it was not measurable)."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    measurable: bool | None = None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None) -> FamilyEffect:
        return cls(**{k: v for k, v in (doc or {}).items() if k in cls.__dataclass_fields__})

    @property
    def known(self) -> bool:
        """Whether the effect and its interval were measured (and are finite)."""
        return all(v is not None and math.isfinite(v) for v in (self.value, self.ci_low, self.ci_high))

    to_json = _json


@dataclass(frozen=True, slots=True)
class FamilyComparisonRow:
    """A model of the judge's family against another model on a category: measured, and net of the effect."""

    model: str
    other: str
    category: str
    n_tasks: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    adjusted: float | None
    adjusted_low: float | None
    adjusted_high: float | None
    reason: str | None

    to_json = _json


@dataclass(frozen=True, slots=True)
class FamilyCheck:
    """A judged tier's family: the models it shares with the judge, the effect and the adjusted comparison."""

    tier: str
    judge: str
    judge_family: str | None
    marked_models: list[str]
    effect: FamilyEffect
    comparison: list[FamilyComparisonRow]

    to_json = _json


@dataclass(frozen=True, slots=True)
class OutlierTest:
    """How one tier's outliers were tested (pooled within-cell sd and its degrees of freedom, the adjustment), or
    ``reason`` why nothing could be."""

    df: int
    sd: float | None
    q: float
    adjustment: str
    level: float
    reason: str | None

    to_json = _json


@dataclass(frozen=True, slots=True)
class TierOutliers:
    task: OutlierTest      # cells against the task's other models
    category: OutlierTest  # models against the category's other models

    def to_json(self) -> dict[str, Any]:
        return {**self.task.to_json(), "category": self.category.to_json()}


@dataclass(frozen=True, slots=True)
class BoardSettings:
    q: float
    adjustment: str
    level: float
    resamples: int
    seed: int

    to_json = _json


# -- two boards ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChangeRow:
    """A model's change from one board to the other on a category (or "(all)"), paired over tasks."""

    model: str
    after_model: str
    category: str
    n_tasks: int
    before: float | None
    after: float | None
    change: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    verdict: str

    to_json = _json


@dataclass(frozen=True, slots=True)
class BoardLead:
    """Which model passes most often on a tier, and whether its lead over the next best is more than chance: the
    two models' pass shares compared task by task (:func:`~.stats.paired_comparison` on the one board)."""

    tier: str
    judge: str
    n_models: int
    leader: str
    leader_share: float            # mean over tasks of the share of its repeats that pass (the column's mean@k)
    runner_up: str | None          # the next best model (None when the board has one model)
    runner_up_share: float | None
    n_tasks: int = 0               # tasks both models ran
    difference: float | None = None  # leader minus runner-up, paired over tasks
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None   # sign-flip test over tasks
    verdict: str = ""              # "gained" (the lead is real), "no clear change", "too few tasks", or "" (one model)
    level: float = 0.95

    to_json = _json


@dataclass(frozen=True, slots=True)
class MovedTask:
    model: str
    task_id: str
    category: str
    before: float
    after: float
    change: float

    to_json = _json


@dataclass(frozen=True, slots=True)
class TierComparison:
    """One tier graded by the same bundle on both boards, compared on pass rates or on mean scores."""

    tier: str
    value: str  # "pass" or "score"
    rows: list[ChangeRow]
    moved: list[MovedTask]
    unpaired: list[str]

    to_json = _json


@dataclass(frozen=True, slots=True)
class BoardComparison:
    before: str
    after: str
    tiers: list[TierComparison]

    SCHEMA = "workbench.board-compare/1"

    def to_json(self) -> dict[str, Any]:
        return jsonable({"schema": self.SCHEMA, "before": self.before, "after": self.after,
                         "tiers": [t.to_json() for t in self.tiers]})


@dataclass(frozen=True, slots=True)
class Interval:
    """An estimate with its interval, as ``workbench.stats`` reports one."""

    value: float
    ci_low: float
    ci_high: float


@dataclass
class BoardReport:
    """Everything the board shows, as JSON-ready records; the renderers and the page lay it out."""

    board: str
    tiers: list[TierInfo]
    models: list[ModelRow]
    categories: list[str]
    tasks: list[TaskRow]
    cells: list[Cell]
    columns: list[ColumnRow]              # per tier, model: mean@k, pass^k over tasks
    rates: list[RateRow]                  # per tier, model, category (and "(all)"): raw and corrected pass rates
    category_outliers: list[CategoryOutlier]
    where_to_look: list[LookEntry]
    family: list[FamilyCheck]             # per judged tier: effect, marked models, comparison rows
    outlier_tests: dict[str, TierOutliers]
    settings: BoardSettings
    n_items: int
    n_ungraded: dict[str, int]

    SCHEMA = "workbench.board/1"

    def to_dict(self) -> dict[str, Any]:
        """The report as `workbench board show --format json` prints it."""
        def rows(records: list) -> list[dict[str, Any]]:
            return [r.to_json() for r in records]

        return jsonable({
            "schema": self.SCHEMA, "board": self.board, "tiers": rows(self.tiers), "models": rows(self.models),
            "categories": self.categories, "tasks": rows(self.tasks), "cells": rows(self.cells),
            "columns": rows(self.columns), "rates": rows(self.rates), "category_outliers": rows(self.category_outliers),
            "where_to_look": rows(self.where_to_look), "family": rows(self.family),
            "outlier_tests": {tier: t.to_json() for tier, t in self.outlier_tests.items()},
            "settings": self.settings.to_json(), "n_items": self.n_items, "n_ungraded": self.n_ungraded})
