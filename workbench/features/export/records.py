"""The approved bundle as typed records (``workbench.bundle/1``), the exports the database recorded, and the
grading result `workbench grade` prints.

A bundle is built from a calibration report, or read once from its verified YAML by :meth:`Bundle.from_json`;
:meth:`Bundle.to_json` writes the same keys in the same order as the bundle always had, so its sha256 and its
signature do not move. Report sections the bundle copies whole are the report's own records; the sections it
trims (the human ceiling, the alternative-annotator test, self-preference, noise, drift, probes) have records of
the fields they keep. The gate's verdict and policy stay the JSON they were approved with: an old bundle must read
even when the policy has gained or lost a key since.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.calibration.report import (Bootstrap, CalibrationReport, CategoryAgreement, Confusion, Denominators,
                                          Effect, Metric, ModelVersions, Record, RunRef, StuartMaxwell, optional,
                                          record)

BUNDLE_SCHEMA = "workbench.bundle/1"


@record
class BundleRubric(Record):
    name: str = ""
    version: int = 0
    hash: str = ""
    content: dict[str, Any] = field(default_factory=dict)  # the rubric's own document, as rubric_from_dict reads it


@record
class BundleJudge(Record):
    id: str = ""
    model: str = ""
    family: str | None = None
    mode: str | None = None
    config: dict[str, Any] = field(default_factory=dict)  # JudgeSpec's fields
    config_hash: str = ""


@record
class BundleGoldenSet(Record):
    name: str = ""
    version: int = 0
    version_hash: str = ""


@record
class ApprovedHumanCeiling(Record):
    krippendorff_alpha_ordinal: float | None = None
    human_pairwise_agreement: float | None = None
    judge_human_pairwise_agreement: float | None = None
    n_items: int | None = None
    n_raters: int | None = None


@record
class ApprovedAltTest(Record):
    epsilon: float | None = None
    metric: str | None = None
    q: float | None = None
    winning_rate: float | None = None
    advantage_probability: float | None = None
    passed: bool | None = None


@record
class ApprovedEffect(Record):
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    p_value: float | None = None
    measurable: bool | None = None

    @classmethod
    def of(cls, e: Effect) -> ApprovedEffect:
        return cls(e.value, e.ci_low, e.ci_high, e.n, e.p_value, e.measurable)


@record
class ApprovedNoise(Record):
    flip_rate: float | None = None
    krippendorff_alpha_ordinal: float | None = None
    pass_hat_k: float | None = None
    repeats: int | None = None


@record
class ApprovedDrift(Record):
    baseline_run: str | None = None
    flip_rate: float | None = None
    stuart_maxwell: StuartMaxwell | None = None
    model_versions: ModelVersions | None = None


@record
class ApprovedProbe(Record):
    probe: str = ""
    n_items: int = 0
    mean_shift: Metric | None = None
    flip_rate: Metric | None = None
    robustness_rate: Metric | None = None
    consensus_shift: Metric | None = None
    moves: str | None = None


@record
class BundleCalibration(Record):
    """The evidence the pair was approved on: the report's sections, some trimmed to what an approval needs."""

    n_items: int = 0
    n_unresolved: int = 0
    n_unscored: int = 0
    run: RunRef = field(default_factory=RunRef)
    bootstrap: Bootstrap = field(default_factory=Bootstrap)
    metrics: dict[str, Metric] = field(default_factory=dict)
    confusion: Confusion = field(default_factory=Confusion)
    tpr: float | None = None
    tnr: float | None = None
    denominators: Denominators | None = None
    per_category: dict[str, CategoryAgreement] = field(default_factory=dict)
    human_ceiling: ApprovedHumanCeiling = field(default_factory=ApprovedHumanCeiling)
    alt_test: ApprovedAltTest | None = None
    self_preference: dict[str, ApprovedEffect] = field(default_factory=dict)  # same_model, same_family
    noise: ApprovedNoise | None = None
    drift: ApprovedDrift | None = None
    probes: tuple[ApprovedProbe, ...] | None = None

    @classmethod
    def of(cls, r: CalibrationReport) -> BundleCalibration:
        hc, alt, noise, drift, sp = r.human_ceiling, r.alt_test, r.noise, r.drift, r.self_preference
        return cls(
            r.n_items, r.n_unresolved, r.n_unscored, r.run, r.bootstrap, r.metrics, r.confusion,
            r.metric("tpr").value, r.metric("tnr").value, r.denominators, r.per_category,
            ApprovedHumanCeiling(hc.krippendorff_alpha_ordinal, hc.human_pairwise_agreement,
                                 hc.judge_human_pairwise_agreement, hc.n_items, hc.n_raters),
            ApprovedAltTest(alt.epsilon, alt.metric, alt.q, alt.winning_rate, alt.advantage_probability, alt.passed)
            if alt else None,
            {name: ApprovedEffect.of(e) for name, e in (("same_model", sp.same_model), ("same_family", sp.same_family))
             if e is not None},
            ApprovedNoise(noise.flip_rate, noise.krippendorff_alpha_ordinal, noise.pass_hat_k, noise.repeats)
            if noise else None,
            ApprovedDrift(drift.baseline_run, drift.flip_rate, drift.stuart_maxwell, drift.model_versions)
            if drift else None,
            tuple(ApprovedProbe(p.probe, p.n_items, p.mean_shift, p.flip_rate, p.robustness_rate, p.consensus_shift,
                                p.moves) for p in r.probes.probes) if r.probes else None)


@record
class Bundle(Record):
    """An approved (rubric version, judge) pair with its evidence; ``sha256`` covers every field but itself and
    ``signature`` (Ed25519 over the same content, with the key's id)."""

    schema: str = BUNDLE_SCHEMA
    rubric: BundleRubric = field(default_factory=BundleRubric)
    judge: BundleJudge = field(default_factory=BundleJudge)
    golden_set: BundleGoldenSet = field(default_factory=BundleGoldenSet)
    calibration: BundleCalibration = field(default_factory=BundleCalibration)
    verdict: dict[str, Any] | None = None  # the gate's verdict as approved
    policy: dict[str, Any] = field(default_factory=dict)  # the gate's policy as approved
    created_at: str = ""
    # selective judging (features/selective): the confidence threshold and its guarantee; absent in other bundles
    selective: dict[str, Any] | None = optional()
    sha256: str | None = optional()
    signature: dict[str, Any] | None = optional()

    def content(self) -> dict[str, Any]:
        """What the sha256 and the signature cover: every field but those two."""
        return bundle_content(self.to_json())


def bundle_content(bundle: dict) -> dict:
    """A bundle's JSON without ``sha256`` and ``signature``."""
    return {k: v for k, v in bundle.items() if k not in ("sha256", "signature")}


# -- a grading result, as `workbench grade` prints it: grading's ``workbench.grade/1`` JSON, read once ----------------

@record
class GradedWith(Record):
    """The approved bundle the items were graded with."""

    file: str = ""
    sha256: str = ""
    rubric: str = ""
    rubric_version: int = 0
    judge: str = ""


@record
class PredictionPowered(Record):
    """The prediction-powered pass rate on the human-labeled new items (``stats.ppi_mean``)."""

    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n_labeled: int = 0
    n_unlabeled: int = 0
    level: float | None = None
    refused: bool = False
    reason: str | None = None

    @property
    def weight(self) -> float | None:
        """λ, how much the judge's predictions count (``lambda`` in the JSON: a Python keyword, so kept in extra)."""
        return self.extra["lambda"]


@record
class GradeResult(Record):
    """Raw and bias-corrected pass rates of new items graded by an approved judge."""

    schema: str = ""
    bundle: GradedWith = field(default_factory=GradedWith)
    n_items: int = 0
    n_scored: int = 0
    n_unscored: int = 0
    pass_threshold: float | None = None
    raw_pass_rate: Metric = field(default_factory=Metric)
    corrected_pass_rate: Metric = field(default_factory=Metric)
    tpr: float | None = None
    tnr: float | None = None
    youden_index: Metric | None = None
    correction_reason: str | None = None
    correction: dict[str, Any] = field(default_factory=dict)
    ppi: PredictionPowered | None = None
    results_file: str | None = None
    # a selective bundle's abstentions (grading/service.py): absent for other bundles
    selective: dict[str, Any] | None = optional()
    n_abstained: int | None = optional()
    abstained_ids: list[str] | None = optional()
    share_abstained: float | None = optional()
    queue: str | None = optional()


@dataclass(frozen=True, slots=True)
class ExportedBundle:
    """An export the database recorded (``Store.exports``): where the bundle was written, and what it approved."""

    id: int
    path: str
    sha256: str
    rubric_id: int
    judge_pk: int
    golden_set_version_id: int
    created_at: str
    rubric_name: str
    rubric_version: int
    judge_id: str
    golden_set: str = ""  # the golden set the bundle was calibrated on (its version's)
