"""The calibration report as typed objects, and its ``workbench.calibration/1`` JSON (DESIGN section 8).

Every front end (the CLI, the pages, the card through ``presentation``) reads a :class:`CalibrationReport` through
attributes; the JSON is written only at the edges (``calibrate --json``, the report cache, the bundle, a refinement
round's record) by :meth:`Record.to_json` and read back by
:meth:`Record.from_json`. Reading and writing are exact: ``X.from_json(d).to_json() == d``, because each object
remembers which keys it was read with and keeps keys it does not name in ``extra`` (a section that gains a key in
``stats`` round-trips before it gains a field here). One exception: the gate's ``policy`` is read as today's
``gate.Policy``, so a report written before a policy key existed reads with that key's default (the report cache
never serves such a report: its key holds the report revision and the policy).

Typed deeply: the resolved names and ids, the metrics (value, interval, denominator), the verdict (``gate.Verdict``
with its checks and ``failed``), the human ceiling, the alternative-annotator test, self-preference, evidence,
cost, per-category agreement and the drift test the gate reads. Typed shallowly (the fields the front ends read;
the rest of the inner shape, owned by ``workbench.stats``, kept as plain JSON): ``noise``, ``noise_floor``,
``probes`` entries beyond their intervals, ``sampling_design``, the drift ``bootstrap``.

Stdlib only, like the other data classes: a cached report is read without numpy or pandas.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from workbench.calibration.verdict import Check, Verdict
from workbench.core.policy import Policy

SCHEMA = "workbench.calibration/1"
COMPARE_SCHEMA = "workbench.compare/1"

R = TypeVar("R", bound="Record")


@dataclass(frozen=True, repr=False, eq=False)
class Record:
    """A frozen dataclass read from and written to JSON, field name = key (subclasses are made by :func:`record`).

    ``extra`` holds the keys the class does not name; ``present`` the keys it was read with (None when built in
    code: then every field is written except ``None`` ones marked :func:`optional`).
    """

    extra: dict[str, Any] = field(default_factory=dict, repr=False, kw_only=True)
    present: frozenset[str] | None = field(default=None, repr=False, compare=False, kw_only=True)

    # One equality and one repr for every record, instead of code generated for each class: thirty generated
    # classes cost 50 ms at import, on the path that reads a cached report.
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self) if f.compare)

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"{type(self).__name__}({shown})"

    @classmethod
    def from_json(cls: type[R], data: dict[str, Any]) -> R:
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        hints = _hints(cls)
        known = {k: _decode(hints[k], v) for k, v in data.items() if k in hints}
        return cls(**known, extra={k: v for k, v in data.items() if k not in hints}, present=frozenset(data))

    def to_json(self) -> dict[str, Any]:
        out = {}
        for f in fields(self):
            if f.name in ("extra", "present"):
                continue
            value = getattr(self, f.name)
            if self.present is not None:
                if f.name not in self.present:
                    continue
            elif value is None and f.metadata.get("optional"):
                continue
            out[f.name] = _encode(value)
        out.update(_encode(self.extra))
        return out

    def but(self: R, **changes: Any) -> R:
        """A copy with ``changes``; a changed field is written even if the original was read without it."""
        present = None if self.present is None else self.present | changes.keys()
        return dataclasses.replace(self, **changes, present=present)


def record(cls: type[R]) -> type[R]:
    """Make a :class:`Record` subclass a frozen dataclass (its equality and repr are Record's)."""
    return dataclass(frozen=True, repr=False, eq=False)(cls)


def optional(default: Any = None) -> Any:
    """A field that a report built in code leaves out of its JSON when it is None (a key some reports lack)."""
    return field(default=default, metadata={"optional": True})


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    names = {f.name for f in fields(cls)} - {"extra", "present"}
    return {k: v for k, v in typing.get_type_hints(cls).items() if k in names}


def _decode(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _decode(inner[0], value) if len(inner) == 1 else value
    if isinstance(tp, type) and issubclass(tp, Record):
        return tp.from_json(value)
    if tp is Verdict:
        names = {f.name for f in fields(Check)}  # state, blocking and passed are derived
        return Verdict(tuple(Check(**{k: v for k, v in c.items() if k in names}) for c in value["checks"]))
    if tp is Policy:
        return Policy(**value)
    if origin is dict and len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], Record):
        return {k: args[1].from_json(v) for k, v in value.items()}
    if origin is tuple and args and isinstance(args[0], type) and issubclass(args[0], Record):
        return tuple(args[0].from_json(v) for v in value)
    return value


def _encode(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, (Verdict, Policy)):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


# -- what was calibrated --------------------------------------------------------------------------------------------

@record
class GoldenSetRef(Record):
    """The golden set and the version its current items and consensus have (or would get when frozen)."""

    name: str = ""
    version: int | None = None
    version_hash: str = ""


@record
class RubricRef(Record):
    name: str = ""
    version: int = 0
    hash: str = ""


@record
class JudgeRef(Record):
    id: str = ""
    model: str = ""
    family: str | None = None
    mode: str = ""
    config_hash: str = ""


@record
class RunRef(Record):
    name: str = ""
    source: str = ""
    model_versions: list[str] = field(default_factory=list)


@record
class Ids(Record):
    """The store's rows the report was computed from, so a writer (export) need not look the names up again.

    ``golden_set_version_id`` is None while the golden set's current state has not been frozen.
    """

    golden_set_id: int | None = None
    golden_set_version_id: int | None = None
    rubric_version_id: int | None = None
    judge_pk: int | None = None
    run_id: int | None = None


# -- measurements ---------------------------------------------------------------------------------------------------

@record
class Metric(Record):
    """An estimate with its 95% interval (None where undefined); proportions also carry their denominator ``n``."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = optional()
    design_effect: float | None = optional()
    reason: str | None = optional()

    @property
    def has_interval(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None


@record
class Agreement(Record):
    """``stats.agreement_with_intervals``'s result, typed in the fields read outside a report (the drift timeline);
    the rest of its shape stays JSON in ``extra``."""

    n_items: int = 0
    metrics: dict[str, Metric] = field(default_factory=dict)

    def metric(self, name: str) -> Metric:
        """The metric by name; an empty (undefined) one when it is missing."""
        return self.metrics.get(name) or Metric()


@record
class Bootstrap(Record):
    resamples: int | None = None
    seed: int | None = None
    cluster: bool = True
    level: float = 0.95
    intervals: dict[str, str] = field(default_factory=dict)  # metric -> interval method


@record
class Denominators(Record):
    """Items with a consensus and a judge score, and how many of them the humans pass (TPR's) and fail (TNR's)."""

    n_items: int = 0
    n_pos: int = 0
    n_neg: int = 0


@record
class Confusion(Record):
    labels: list[int] = field(default_factory=list)
    matrix: list[list[int]] = field(default_factory=list)  # [consensus][judge]


@record
class HumanCeiling(Record):
    krippendorff_alpha_ordinal: float | None = None
    human_pairwise_agreement: float | None = None
    judge_human_pairwise_agreement: float | None = None
    judge_minus_human_se: float | None = None  # of judge-human minus human-human agreement, paired by item
    n_items: int | None = None
    n_items_pairwise: int | None = None
    n_labels: int | None = None
    n_raters: int | None = None
    reasons: dict[str, str] = field(default_factory=dict)


@record
class AltRater(Record):
    rater: str | None = None
    n_items: int | None = None
    p_value: float | None = None
    rejected: bool = False  # H0 "the judge is worse than this rater" rejected: the judge is as good
    advantage_probability: float | None = None


@record
class AltTest(Record):
    """The alternative-annotator test (Calderon et al. 2025); the report holds None where it cannot run."""

    epsilon: float | None = None
    metric: str | None = None
    q: float | None = None
    min_items: int | None = None
    n_items: int | None = None
    n_raters: int | None = None
    winning_rate: float | None = None
    advantage_probability: float | None = None
    passed: bool = False
    raters: tuple[AltRater, ...] = ()
    skipped_raters: list[Any] = field(default_factory=list)
    reason: str | None = None


@record
class Effect(Record):
    """A self-preference effect: how much more the judge scores outputs of its own model or family than humans do."""

    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    p_value: float | None = None
    measurable: bool | None = None
    n_other_family: int | None = None
    ols_coefficient: float | None = None
    reason: str | None = None
    undefined_resamples: int | None = None


@record
class SelfPreference(Record):
    same_model: Effect | None = None
    same_family: Effect | None = None
    measurable_in_pool: bool | None = None  # the judge scored items of its family and of others: labels can measure it

    def effects(self) -> dict[str, Effect]:
        """The effects the report holds, same family first (the gate's order, and the cached JSON's)."""
        return {name: e for name, e in (("same_family", self.same_family), ("same_model", self.same_model))
                if e is not None}


@record
class WorseThanRest(Record):
    difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    level: float | None = None
    significant: bool = False
    reason: str | None = None


@record
class CategoryAgreement(Record):
    n_items: int = 0
    exact_agreement: Metric | None = None
    krippendorff_alpha_ordinal: Metric | None = None
    mean_signed_error: Metric | None = None
    worse_than_rest: WorseThanRest | None = None
    reasons: dict[str, str] = field(default_factory=dict)
    reason: str | None = optional()  # why the category has no interval (below the policy's min_category_items)

    @property
    def weaker(self) -> bool:
        """Significantly worse than the rest (the gate's warning)."""
        return bool(self.worse_than_rest and self.worse_than_rest.significant)


@record
class Noise(Record):
    """Repeat noise (``stats.repeat_noise``): the fields the gate and the pages read; the rest kept as JSON."""

    flip_rate: float | None = None
    n_items: int | None = None
    krippendorff_alpha_ordinal: float | None = None
    pass_hat_k: float | None = None
    repeats: int | None = None


@record
class StuartMaxwell(Record):
    statistic: float | None = None
    df: int | None = None
    p_value: float | None = None
    n_items: int | None = None
    table: list[list[int]] | None = None
    reason: str | None = None


@record
class ModelVersions(Record):
    baseline: list[str] = field(default_factory=list)
    candidate: list[str] = field(default_factory=list)
    changed: bool = False


@record
class Drift(Record):
    """From the run before to the calibrated run (``stats.drift``); the bootstrap settings are kept as JSON."""

    baseline_run: str | None = None
    run: str | None = None
    flip_rate: float | None = None
    n_items: int | None = None
    n_items_with_consensus: int | None = None
    stuart_maxwell: StuartMaxwell | None = None
    deltas: dict[str, Metric] = field(default_factory=dict)
    delta_reasons: dict[str, str] = field(default_factory=dict)
    model_versions: ModelVersions | None = None

    def delta(self, name: str) -> Metric:
        """A metric's change from the run before; an empty (undefined) one when it could not be measured."""
        return self.deltas.get(name) or Metric()


@record
class FloorEstimate(Record):
    se: float | None = None
    min_detectable_difference: float | None = None
    items_needed: int | None = None
    additional_items: int | None = None


@record
class NoiseFloor(Record):
    """The smallest difference the evidence can tell apart, and the labels that would narrow it (``stats.noise_floor``)."""

    target_width: float | None = None
    level: float | None = None
    power: float | None = None
    n_items: int | None = None
    metrics: dict[str, FloorEstimate] = field(default_factory=dict)


@record
class Evidence(Record):
    n_items: int = 0
    n_multi_rated: int = 0
    unresolved_items: list[str] = field(default_factory=list)
    excluded_raters: dict[str, int] | None = optional()  # calibrate --exclude-rater: {rater: labels left out}


@record
class Cost(Record):
    """None where unknown (no price recorded), never $0."""

    per_100_items_usd: float | None = None
    total_usd: float | None = None
    median_latency_ms: float | None = None


@record
class ProbeEffect(Record):
    """One stress probe against the calibrated run's verdicts; ``moves`` is ``gate.probe_moves`` ('raises', ...)."""

    probe: str = ""
    n_items: int = 0
    mean_shift: Metric | None = None
    flip_rate: Metric | None = None
    robustness_rate: Metric | None = None
    consensus_shift: Metric | None = None
    agreement_change: Metric | None = None
    moves: str | None = None


@record
class Probes(Record):
    baseline_run: str | None = None
    probes: tuple[ProbeEffect, ...] = ()


@record
class SamplingDesign(Record):
    """Labels served by the active queue: estimates weighted by 1 / inclusion probability (``active_queue``)."""

    design: str | None = None
    kish_effective_n: float | None = None


# -- the report -------------------------------------------------------------------------------------------------------

@record
class CalibrationReport(Record):
    """One judge against the humans on one golden set (DESIGN sections 5, 6 and 8), with the gate's verdict."""

    schema: str = SCHEMA
    golden_set: GoldenSetRef = field(default_factory=GoldenSetRef)
    rubric: RubricRef = field(default_factory=RubricRef)
    judge: JudgeRef = field(default_factory=JudgeRef)
    run: RunRef = field(default_factory=RunRef)
    n_items: int = 0
    n_unresolved: int = 0
    n_unscored: int = 0
    n_scored: int | None = None
    bootstrap: Bootstrap = field(default_factory=Bootstrap)
    metrics: dict[str, Metric] = field(default_factory=dict)
    denominators: Denominators | None = None
    undefined_resamples: dict[str, int] = field(default_factory=dict)
    metric_reasons: dict[str, str] = field(default_factory=dict)
    confusion: Confusion = field(default_factory=Confusion)
    human_ceiling: HumanCeiling = field(default_factory=HumanCeiling)
    alt_test: AltTest | None = None
    alt_test_reason: str | None = None
    self_preference: SelfPreference = field(default_factory=SelfPreference)
    per_category: dict[str, CategoryAgreement] = field(default_factory=dict)
    noise: Noise | None = None
    drift: Drift | None = None
    noise_floor: NoiseFloor | None = None
    evidence: Evidence | None = None
    cost: Cost = field(default_factory=Cost)
    probes: Probes | None = None
    policy: Policy = field(default_factory=Policy)
    computed_at: str = ""
    sampling_design: SamplingDesign | None = optional()
    # failure attribution (calibration/steps.py): present only where labels mark steps
    steps: dict[str, Any] | None = optional()
    verdict: Verdict | None = None
    ids: Ids | None = optional()  # added after schema 1's first shape: absent from older reports

    def metric(self, name: str) -> Metric:
        """The metric by name; an empty (undefined) one when the report lacks it."""
        return self.metrics.get(name) or Metric()

    @property
    def calibrated(self) -> bool:
        return bool(self.verdict and self.verdict.calibrated)


@record
class Difference(Record):
    """A judge's agreement minus the best judge's, paired on the same items (``compare``)."""

    judge: str = ""
    baseline: str = ""
    metric: str = ""
    n_items: int = 0
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    significant: bool = False


@record
class Comparison(Record):
    """Every judge of a rubric on one golden set, and each one's difference from the best (``compare --json``)."""

    schema: str = COMPARE_SCHEMA
    golden_set: str = ""
    rubric: str = ""
    best: str = ""
    judges: tuple[CalibrationReport, ...] = ()
    differences: tuple[Difference, ...] = ()
