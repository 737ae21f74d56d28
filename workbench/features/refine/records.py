"""The refinement loop's rows and stored documents as typed records.

Rows of the refine_* tables become frozen dataclasses where queries.py reads them. A round's JSON columns, the optimizer's edit and the held-out decision's results, are read into
:class:`~workbench.calibration.report.Record` classes: ``from_json`` keeps the keys a stored document was written
with, so ``to_json`` gives it back key for key, whatever version of the loop wrote it, and
``workbench refine --json`` prints what it printed when rounds travelled as dicts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Iterable

from workbench.calibration.report import Metric, Record, record
from workbench.stats import jsonable
from workbench.store.mapping import from_json

PARTS = ("development", "held_out")


def _columns(obj: Any) -> dict[str, Any]:
    """A row record's columns in table order (shallow: stored documents stay records)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def _document(cls: type[Record], text: Any) -> Any:
    value = from_json(text)
    return None if value is None else cls.from_json(value)


def from_row(cls: type, row: dict[str, Any]) -> Any:
    """The record of a query row that holds (at least) the record's fields."""
    return cls(**{f.name: row[f.name] for f in fields(cls)})


# -- the split ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SplitItem:
    """One item of a split, in golden-set order."""

    item_id: str
    item_pk: int
    task_id: str | None
    category: str
    part: str  # development | held_out
    consensus: int


@dataclass(frozen=True, slots=True)
class SplitParts:
    development: tuple[str, ...]
    held_out: tuple[str, ...]

    @classmethod
    def of(cls, items: Iterable[SplitItem]) -> SplitParts:
        items = list(items)
        return cls(*(tuple(i.item_id for i in items if i.part == p) for p in PARTS))

    def to_json(self) -> dict[str, list[str]]:
        return {"development": list(self.development), "held_out": list(self.held_out)}


@dataclass(frozen=True, slots=True)
class RefineSplit:
    """A drawn split with the golden-set version it was drawn from and its item ids per part."""

    id: int
    golden_set_id: int
    golden_set_version_id: int
    rubric_name: str
    seed: int
    held_out_fraction: float
    strata: str
    n_unresolved: int
    created_at: str
    golden_set_version_hash: str
    golden_set_version: int
    golden_set: str
    items: SplitParts

    def to_json(self) -> dict[str, Any]:
        return {**_columns(self), "items": self.items.to_json()}


# -- sessions and rounds ------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RefineSession:
    id: int
    split_id: int
    base_rubric_id: int
    judge_id: str
    strategy: str  # optimizer | few-shot
    optimizer: str | None
    max_examples: int
    budget_usd: float | None
    status: str  # open | accepted | closed
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@record
class LevelText(Record):
    value: int | None = None
    description: str | None = None


@record
class CriterionText(Record):
    id: str | None = None
    description: str | None = None


@record
class ExampleText(Record):
    item_id: str | None = None
    score: int | None = None
    rationale: str | None = None


@record
class StoredEdit(Record):
    """A round's edit column: the edit (``RubricEdit.to_dict``), or only ``problem`` when the reply was unusable."""

    summary: str = ""
    levels: tuple[LevelText, ...] = ()
    criteria: tuple[CriterionText, ...] = ()
    instructions: str | None = None
    examples: tuple[ExampleText, ...] = ()
    problem: str | None = None


@record
class CheckStatus(Record):
    id: str = ""
    name: str = ""
    status: str = ""
    message: str = ""


@record
class ReportSummary(Record):
    """What a round records of a calibration report on one part."""

    n_items: int = 0
    n_unscored: int = 0
    metrics: dict[str, Metric] = field(default_factory=dict)
    calibrated: bool = False
    checks: tuple[CheckStatus, ...] = ()


@record
class CheckChange(Record):
    """A gate check on the parent and on the child; ``worse`` when the child's status ranks lower."""

    id: str = ""
    name: str = ""
    parent: str = ""
    child: str = ""
    worse: bool = False
    message: str = ""


@record
class ChangedItem(Record):
    """An item whose score differs between parent and child."""

    item_id: str = ""
    category: str = ""
    consensus: int | None = None
    parent: int | None = None
    child: int | None = None


@record
class PartResult(Record):
    """Parent against child on one part of the split."""

    parent: ReportSummary = field(default_factory=ReportSummary)
    child: ReportSummary = field(default_factory=ReportSummary)
    delta: Metric = field(default_factory=Metric)  # child - parent of the gate's agreement metric
    n_paired: int = 0
    gain: bool = False
    sentence: str = ""
    checks: tuple[CheckChange, ...] = ()
    changed: tuple[ChangedItem, ...] = ()


@record
class RoundResults(Record):
    metric: str = ""
    development: PartResult = field(default_factory=PartResult)
    held_out: PartResult = field(default_factory=PartResult)


@record
class PairedDelta(Record):
    """``paired_bootstrap_delta``'s result (NaN as None): the per-metric change, child minus parent."""

    metrics: dict[str, Metric] = field(default_factory=dict)
    n_items: int = 0

    @classmethod
    def of(cls, raw: dict[str, Any]) -> PairedDelta:
        return cls.from_json(jsonable(raw))


@dataclass(frozen=True, slots=True)
class RefineRound:
    id: int
    session_id: int
    number: int
    parent_rubric_id: int
    child_rubric_id: int | None
    edit: StoredEdit | None
    optimizer_cost_usd: float | None
    optimizer_tokens_in: int | None
    optimizer_tokens_out: int | None
    status: str  # proposing | evaluating | proposed | rejected | accepted | discarded | failed
    results: RoundResults | None
    reason: str | None
    decided_by: str | None
    decided_at: str | None
    accepted_rubric_id: int | None
    created_at: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RefineRound:
        """The round of a refine_rounds row, its JSON columns (text as stored) read into records."""
        raw = from_row(cls, row)
        return replace(raw, edit=_document(StoredEdit, raw.edit), results=_document(RoundResults, raw.results))

    def to_json(self) -> dict[str, Any]:
        return {**_columns(self), "edit": None if self.edit is None else self.edit.to_json(),
                "results": None if self.results is None else self.results.to_json()}


@dataclass(frozen=True, slots=True)
class Lineage:
    """The parent and diff of a rubric version the loop made, with its round, session and split when it has one."""

    rubric_id: int
    parent_rubric_id: int
    diff: str
    round_id: int | None
    created_at: str
    session_id: int | None
    round_number: int | None
    split_id: int | None


# -- what the page and the CLI read --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SessionHistory:
    """A session with its split, rounds and each round's rubric diff: what the Refine page shows."""

    session: RefineSession
    split: RefineSplit
    rounds: list[RefineRound]
    diffs: dict[int, str | None]  # round id -> its child's diff
    base_version: int


@dataclass(frozen=True, slots=True)
class RefineEstimate:
    """The --dry-run: what the rounds still to run would send and cost at most."""

    rounds: int
    n_development: int
    n_held_out: int
    judge_requests: int
    judge_cost_usd: float | None
    judge_max_cost_usd: float | None
    optimizer_requests: int = 0
    optimizer_max_cost_usd: float | None = 0.0

    @property
    def max_cost_usd(self) -> float | None:
        known = (self.judge_max_cost_usd, self.optimizer_max_cost_usd)
        return None if None in known else sum(known)

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "items": {"development": self.n_development, "held_out": self.n_held_out},
                "judge_requests": self.judge_requests, "judge_cost_usd": self.judge_cost_usd,
                "judge_max_cost_usd": self.judge_max_cost_usd, "optimizer_requests": self.optimizer_requests,
                "optimizer_max_cost_usd": self.optimizer_max_cost_usd, "max_cost_usd": self.max_cost_usd}
