"""Planning labels: for each gate check not yet decided, and for the verdict, how many more labels decide it.

Reads the current calibration report (cached) and the gate policy, and the judge's scores on the items nobody has
labeled yet. The labels a decision needs depend on labels nobody has given yet, so the plan gives them as
predictive ranges over simulated futures of the golden set (``forecast``: the gate's own rules re-read on each),
in the order the plan recommends (the active queue for the undecided checks) and in random order, with the share
of futures that the unlabeled pool can decide. The sentences and the assumptions they rest on are written here,
once, for the CLI and the Calibration page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

from workbench import stats
from workbench.calibration.calibrate import Options, calibrate, judge_data, policy_for
from workbench.calibration.design_weights import active_design
from workbench.calibration.gate import (FAILED, PASSED, UNDECIDED, Check, Policy, Verdict, evaluate, evidence_needs,
    metric_se)
from workbench.calibration.golden_sets import consensus, item_index
from workbench.calibration.report import CalibrationReport, Metric
from workbench.core.errors import InputError
from workbench.core.models import GoldenSetRecord
from workbench.core.workspace import Workspace
from workbench.features.planning.design import first_scores, recommended_order
from workbench.features.planning.forecast import LABEL_CHECKS, Simulation, arrays_from, simulate
from workbench.features.planning.records import Forecast, MeasurementState
from workbench.stats import planning as sp
from workbench.stats.plans.paths import PATHS, Range
from workbench.store import Store

DEFAULT_CATEGORY_WIDTH = 0.2
# The plan is read again after every batch of labels: a failure counts as decided only at the interim boundary
# (stats.planning.threshold_decision and band_decision); a pass needs every check and is read at the report's 95%.


@dataclass(frozen=True)
class PartPlan:
    """One measurement behind a gate check (TPR and TNR behind 'passes and fails', each self-preference effect,
    a category's width): what the active queue serves, and the labels that would decide it."""

    check: str                 # evidence, agreement, tpr, tnr, same_family, same_model, category:<name>
    decided: bool
    kind: str                  # which items to label: "any", "judge fails", "judge passes", "same family", ...
    sentence: str
    failed: bool = False       # decided on the failing side: more labels will not change the verdict
    recommended: Forecast | None = None   # simulated: labeling in the order the plan recommends (the active queue)
    random: Forecast | None = None        # simulated: labeling in random order
    more_labels: int | None = None        # a category's width goal only: labels to narrow its interval
    advice: str = ""                      # what to label, without the numbers

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "decided": self.decided, "kind": self.kind, "sentence": self.sentence,
                "failed": self.failed, **_forecast_json(self.recommended, self.random),
                **({"more_labels": self.more_labels} if self.check.startswith("category:") else {})}


def _forecast_json(recommended: Forecast | None, random: Forecast | None) -> dict[str, Any]:
    """The two orders' forecasts under the plan's keys: ``more_labels`` / ``more_items`` / ``pool_decides`` /
    ``add_items`` for the recommended order, the same with ``_random`` for random order."""
    out: dict[str, Any] = {}
    for suffix, f in (("", recommended), ("_random", random)):
        j = f.to_json() if f else {}
        out.update({f"more_labels{suffix}": j.get("labels"), f"more_items{suffix}": j.get("items"),
                    f"pool_decides{suffix}": j.get("pool_decides"), f"add_items{suffix}": j.get("add_items")})
    return out


@dataclass(frozen=True)
class CheckPlan:
    """One gate check as the plan sees it: its ``state`` is the gate's own (``gate.evaluate`` on the same report);
    for an undecided check, the labels that would decide it as predictive ranges over simulated futures, in the
    recommended order and in random order."""

    check: str                 # the gate's check id
    name: str
    state: str                 # passed / failed / undecided (warning, not_applicable: notes that never block)
    reason: str                # the gate's sentence: number, interval, bound
    recommended: Forecast | None = None
    random: Forecast | None = None
    pool_cannot_decide: bool = False       # in most simulated futures the unlabeled pool runs out first
    sentence: str = ""                     # what to label, in words, with the ranges
    parts: tuple[str, ...] = ()            # the PartPlan names behind it

    @property
    def decided(self) -> bool:
        return self.state != UNDECIDED

    @property
    def failed(self) -> bool:
        return self.state == FAILED

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "name": self.name, "state": self.state, "reason": self.reason,
                **_forecast_json(self.recommended, self.random), "pool_cannot_decide": self.pool_cannot_decide,
                "sentence": self.sentence, "parts": list(self.parts)}


@dataclass(frozen=True)
class VerdictPlan:
    """The verdict as a whole: the labels to a decision of every undecided check at once (the first failure, or the
    last check to pass, on each simulated future). ``labels_alone`` False: a check labels do not decide (stability,
    drift, stress probes) also waits, and these ranges are of the checks labels decide."""

    recommended: Forecast | None = None
    random: Forecast | None = None
    labels_alone: bool = True
    pool_cannot_decide: bool = False
    sentence: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**_forecast_json(self.recommended, self.random), "labels_alone": self.labels_alone,
                "pool_cannot_decide": self.pool_cannot_decide, "sentence": self.sentence}


@dataclass
class Plan:
    golden_set: str
    rubric: str
    judge: str
    n_items: int
    n_unlabeled: int
    overlap: int
    checks: list[CheckPlan]            # one per gate check, in the gate's order, with the gate's state
    parts: list[PartPlan]              # the measurements behind them
    target_width: float | None
    verdict: str = ""                  # the gate's: passed / failed / undecided
    overall: VerdictPlan | None = None  # the verdict's forecast, while it is undecided
    paths: int = 0                     # simulated futures behind the ranges
    widths: dict[str, dict[str, Any]] = field(default_factory=dict)   # metric -> {"now", "items_needed", ...}
    budget: int | None = None
    budget_widths: dict[str, float | None] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    queue_advice: str | None = None  # the active queue serves other checks than those now undecided
    class_counts: dict[str, int] = field(default_factory=dict)  # n_pos, n_neg and the gate's min_class_items

    @property
    def decided_failures(self) -> list[CheckPlan]:
        """Gate checks the evidence has decided against the judge: the verdict is 'not calibrated' whatever comes."""
        return [c for c in self.checks if c.failed]

    @property
    def undecided(self) -> list[CheckPlan]:
        """Gate checks not decided yet (the gate's own states)."""
        return [c for c in self.checks if c.state == UNDECIDED]

    @property
    def undecided_parts(self) -> list[PartPlan]:
        """The measurements still open behind the undecided checks (per-category widths are a goal, not a check)."""
        open_checks = {c.check for c in self.undecided}
        return [p for p in self.parts if not p.decided and PART_OF.get(p.check) in open_checks]

    def summary(self) -> str:
        """One sentence per undecided check, and the verdict's, for the Calibration page."""
        if self.decided_failures:
            return ("The judge fails the gate on " + ", ".join(c.name for c in self.decided_failures)
                    + ", which more labels will not change: the verdict is decided (not calibrated).")
        if not self.undecided:
            return "Every gate check is decided by the labels so far; more labels will not change the verdict's checks."
        return " ".join([c.sentence for c in self.undecided] + ([self.overall.sentence] if self.overall else []))

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update(checks=[c.to_dict() for c in self.checks], parts=[p.to_dict() for p in self.parts],
                   overall=self.overall.to_dict() if self.overall else None)
        return {**out, "schema": "workbench.plan/3"}


#: The gate check each part belongs to (categories are a width goal, not a check).
PART_OF = {"evidence": "evidence", "agreement": "agreement", "tpr": "pass_fail", "tnr": "pass_fail",
           "as_good_as_human": "as_good_as_human", "same_family": "self_preference",
           "same_model": "self_preference"}
#: Which items the active queue serves first for each part.
KINDS = {"evidence": "any", "agreement": "any", "tpr": "judge passes", "tnr": "judge fails",
         "as_good_as_human": "multi-rated", "same_family": "same-family", "same_model": "same-model"}


def plan(store: Store, golden_set: str, rubric: str, judge: str, *, target_width: float | None = None,
         budget: int | None = None, workspace: Workspace | None = None,
         report: CalibrationReport | None = None, forecast: bool = True, paths: int = PATHS) -> Plan:
    """The label plan of a (golden set, rubric, judge) from its current calibration report: the gate's states, and
    for each undecided check and the verdict the labels to a decision as predictive ranges over ``paths``
    simulated futures (``forecast=False``: the states and what to label only, as the active queue needs them)."""
    if target_width is not None and not 0 < target_width < 2:
        raise InputError(f"--target-width {target_width} is not a usable interval width",
                         fix="give a width between 0 and 2 such as 0.1")
    data = judge_data(store, golden_set, rubric, judge)
    rv = data.rubric
    policy: Policy = policy_for(rv, workspace)
    report = report or calibrate(store, golden_set, rubric, judge, Options(), data=data, workspace=workspace)
    gs = store.golden_set(golden_set)
    overlap = int(gs.overlap)
    cons = consensus(store, golden_set, rv.name)
    index = {r.item_id: r for r in item_index(store, gs.id)}
    scores = first_scores(data)
    threshold = rv.rubric.pass_threshold
    unlabeled = [i for i in index if i not in cons.labels and i in scores]
    pairs = [(scores[i], s) for i, s in cons.resolved.items() if i in scores]
    fail_share = _rate(sum(h < threshold for _, h in pairs), len(pairs))
    resolved_share = len(cons.resolved) / len(cons.labels) if cons.labels else 1.0
    per_item = overlap / max(resolved_share, 0.5)  # labels per item with a consensus (the width goals' unit)
    family = (data.spec.family or "").casefold()

    verdict: Verdict = report.verdict or evaluate(report, policy)  # the gate's states, as `calibrate` prints them
    gate = {c.id: c for c in verdict.checks}
    parts = _parts(report, policy, gate, family, sum(_same(index[i].producer_family, family) for i in unlabeled))
    cat_width = target_width or DEFAULT_CATEGORY_WIDTH
    for cat, c in sorted(report.per_category.items()):
        ea = c.exact_agreement
        if ea is None or ea.value is None or ea.ci_low is None:
            continue
        needed = sp.items_for_proportion_width(ea.value, cat_width)
        more = 0 if ea.ci_high - ea.ci_low <= cat_width or needed is None else max(1, needed - int(c.n_items or 0))
        labels_more = math.ceil(more * per_item)
        parts.append(PartPlan(f"category:{cat}", more == 0, f"category {cat}",
                              f"About {labels_more} more labels in category '{cat}' would narrow its agreement "
                              f"interval to {cat_width}." if more else f"Category '{cat}' is measured to {cat_width}.",
                              more_labels=labels_more))
    result = Plan(golden_set, rv.name, judge, len(index), len(unlabeled), overlap, [], parts, target_width,
                  verdict.state)
    sim = Simulation()
    if forecast and any(c.status == UNDECIDED and c.id in LABEL_CHECKS for c in verdict.checks):
        names = undecided_checks(replace(result, checks=[CheckPlan(c.id, c.name, c.state, c.reason)
                                                          for c in verdict.checks]))
        order = _recommended_order(store, golden_set, rubric, judge, names) if unlabeled else None
        arrays = arrays_from(scale=list(rv.rubric.scale.values), pass_threshold=threshold, overlap=overlap,
                             index=index, scores=scores, human=cons.human, consensus=cons.labels,
                             judge_model=data.spec.model_name, judge_family=data.spec.family, order=order)
        sim = simulate(arrays, report, verdict, policy, paths=paths)
    result.parts = [_with_forecast(p, sim) for p in parts]
    result.checks = [_check_plan(c, [p for p in result.parts if PART_OF.get(p.check) == c.id], sim, len(unlabeled))
                     for c in verdict.checks]
    result.paths = sim.paths
    if "verdict" in sim.forecasts:
        result.overall = _verdict_plan(sim, len(unlabeled))
    result.widths = _widths(report, target_width, per_item) if target_width else {}
    if budget is not None:
        result.budget = int(budget)
        result.budget_widths = _budget_widths(report, int(budget / per_item), fail_share)
    n_pos, n_neg = _class_counts(report)
    result.class_counts = {"n_pos": n_pos, "n_neg": n_neg, "min_class_items": policy.min_class_items}
    result.queue_advice = _queue_advice(store, gs, rv.name, judge, result)
    result.assumptions = _assumptions(sim, overlap, len(unlabeled), bool(unlabeled))
    return result


def _recommended_order(store: Store, golden_set: str, rubric: str, judge: str, checks: list[str]):
    """The active queue for the undecided checks (None where it cannot be designed: then the recommended order is
    random)."""
    try:
        return recommended_order(store, golden_set, rubric, judge, checks)
    except InputError:
        return None


def _parts(report: CalibrationReport, policy: Policy, gate: dict[str, Check], family: str,
           n_family_pool: int) -> list[PartPlan]:
    """The measurements behind the checks labels decide, with the gate's states and what to label for each."""
    parts: list[PartPlan] = []
    _, need, need_multi, share = evidence_needs(report, policy)
    words = ([f"reach {policy.min_items} items with a consensus"] if need else []) + (
        [f"bring the items with {policy.min_raters_per_item}+ raters from {share:.0%} to "
         f"{policy.min_multi_rated_share:.0%}"] if need_multi else [])
    parts.append(PartPlan("evidence", not words, "any", "Label items to " + " and ".join(words) + "." if words
                          else "Enough items are labeled."))
    as_good = gate.get("as_good_as_human")
    if as_good is not None:
        parts.append(PartPlan("as_good_as_human", as_good.status != UNDECIDED, "multi-rated",
                              "Have two or more reviewers label the same items "
                              + ("to settle the comparison with the reviewers." if "difference" in (as_good.value or {})
                                 else "to compare the judge with the reviewers.")
                              if as_good.status == UNDECIDED else "The comparison with the reviewers is decided.",
                              failed=as_good.status == FAILED))
    name = policy.agreement_metric
    agreement = gate["agreement"]
    parts.append(PartPlan("agreement", agreement.status != UNDECIDED, "any",
                          f"Any labeled item narrows {name} (now {_fmt(report.metric(name).value)}, threshold "
                          f"{policy.min_agreement_lower})." if agreement.status == UNDECIDED else f"{name} is decided.",
                          failed=agreement.status == FAILED))
    pf = gate["pass_fail"].value or {}
    for check in ("tpr", "tnr"):
        state = MeasurementState.from_json(pf.get(check) or {}).state or PASSED
        kind = KINDS[check]
        parts.append(PartPlan(check, state != UNDECIDED, kind,
                              f"{check.upper()} needs labels on items the {kind.replace('judge ', 'judge ')}, where "
                              f"consensus {'fails' if check == 'tnr' else 'passes'} are found."
                              if state == UNDECIDED else f"{check.upper()} is decided.", failed=state == FAILED))
    sp_values = gate["self_preference"].value or {}
    for effect in ("same_family", "same_model"):
        e = MeasurementState.from_json(sp_values.get(effect) or {})
        who = KINDS[effect]
        if e.state is None:  # not measurable yet: undecided where labels can measure it, else the gate warns
            if effect == "same_family":
                if gate["self_preference"].status == UNDECIDED:
                    parts.append(PartPlan(effect, False, who, f"Self-preference is not measurable yet: label items "
                                          f"the judge's family produced ({n_family_pool} unlabeled)."))
                else:
                    parts.append(PartPlan(effect, True, who,
                                          "Self-preference is not measurable: the golden set needs items of the "
                                          f"judge's family ({family or 'none given'}) and of others, so no label "
                                          "will settle it; add such items to measure it."))
            continue
        if e.state != UNDECIDED:
            parts.append(PartPlan(effect, True, who, f"The {who} effect is decided.", failed=e.state == FAILED))
            continue
        parts.append(PartPlan(effect, False, who, f"The {who} effect needs labels on {who} items and on others."))
    return parts


def _with_forecast(p: PartPlan, sim: Simulation) -> PartPlan:
    """A part with its simulated ranges and its sentence saying them."""
    by = sim.forecasts.get(p.check)
    if p.decided or not by:
        return p
    rec, ran = by.get("recommended"), by.get("random")
    said = _ranges_said(rec, ran)
    return replace(p, recommended=rec, random=ran, advice=p.sentence,
                   sentence=f"{p.sentence} {said[0].upper()}{said[1:]}.")


def _n(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.0f}"


def _range_said(r: Range, unit: str) -> str:
    """'about 420 more labels (80% range 150 to 1,300)'; a range past the simulated horizon says 'more than'."""
    if r.median is None:
        return f"more than {_n(r.horizon)} more {unit} (in most simulated futures not even these decide it)"
    high = _n(r.high) if r.high is not None else f"more than {_n(r.horizon)}"
    return f"about {_n(r.median)} more {unit} (80% range {_n(r.low)} to {high})"


def _ranges_said(rec: Forecast | None, ran: Forecast | None) -> str:
    """Both orders in one clause: the recommended order's labels, then random order's."""
    if rec is None or ran is None:
        return "labels to a decision cannot be simulated yet"
    same = rec.labels == ran.labels
    first = _range_said(rec.labels, "labels")
    if same:
        return f"{first} in either order"
    second = _range_said(ran.labels, "labels").removeprefix("about ")
    return f"{first} in the recommended order, {second} in random order"


def _pool_said(f: Forecast, n_unlabeled: int) -> str:
    return (f"the {n_unlabeled:,} unlabeled items decide it in {f.pool_decides:.0%} of simulated futures"
            if n_unlabeled else "no item is left unlabeled")


def _check_plan(check: Check, parts: list[PartPlan], sim: Simulation, n_unlabeled: int) -> CheckPlan:
    """A gate check with the labels that would decide it, simulated, or 'this pool cannot decide it' (with the items
    to add) where most simulated futures run out of unlabeled items first."""
    base = CheckPlan(check.id, check.name, check.state, check.reason, parts=tuple(p.check for p in parts))
    if check.status != UNDECIDED:
        return replace(base, sentence=check.reason)
    if check.id not in LABEL_CHECKS:  # stability, stress probes: decided by judge runs, not by labels
        return replace(base, sentence=f"More labels will not decide {check.name}: {check.message}")
    by = sim.forecasts.get(check.id)
    if not by:
        return replace(base, sentence=f"Labels to decide {check.name} cannot be simulated yet: label a few items "
                                      "with a consensus first.")
    rec, ran = by["recommended"], by["random"]
    what = " ".join(p.advice or p.sentence for p in parts if not p.decided)
    cannot = rec.pool_decides < 0.5
    if cannot:
        sentence = (f"This pool cannot decide {check.name}: {_pool_said(rec, n_unlabeled)}; add "
                    f"{_range_said(rec.add_items, 'items').replace(' more items', ' items')} to the golden set, "
                    f"{_ranges_said(rec, ran)}.")
    else:
        said = _ranges_said(rec, ran)
        sentence = f"{check.name.capitalize()}: {said}; {_pool_said(rec, n_unlabeled)}."
    return replace(base, recommended=rec, random=ran, pool_cannot_decide=cannot,
                   sentence=(sentence + (" " + what if what else "")).strip())


def _verdict_plan(sim: Simulation, n_unlabeled: int) -> VerdictPlan:
    by = sim.forecasts["verdict"]
    rec, ran = by["recommended"], by["random"]
    cannot = rec.pool_decides < 0.5
    scope = "the verdict" if sim.labels_alone else "the checks labels decide (others wait on judge runs)"
    sentence = (f"For {scope}: {_ranges_said(rec, ran)}; {_pool_said(rec, n_unlabeled)}"
                + (f", so add {_range_said(rec.add_items, 'items').replace(' more items', ' items')} to the golden set."
                   if cannot else "."))
    return VerdictPlan(rec, ran, sim.labels_alone, cannot, sentence)


def _assumptions(sim: Simulation, overlap: int, n_unlabeled: int, has_pool: bool) -> list[str]:
    """What the ranges rest on, in words (the method: docs/statistics.md, 'Fewer labels to a verdict')."""
    if not sim.paths:
        return [f"Each item gets {overlap} labels (the golden set's overlap); no check labels decide is open, so "
                "nothing is simulated."]
    return [
        f"{sim.paths} simulated futures: on each, the human labels of the {n_unlabeled:,} unlabeled items and of "
        f"up to {sim.horizon_items - sim.pool_items:,} new ones like them are drawn from the labels so far (a "
        "Dirichlet process over task clusters, within the judge's score, producer group and category), so each "
        "future has its own judge-human agreement; a range is the median and the 10th to 90th percentile over them.",
        "The gate is read after every batch (5 items, or 5% of those labeled), with its own rules; a check counts as "
        "decided at the first batch that decides it, and a check decided now stays decided.",
        "Intervals on a simulated future: TPR and TNR by the report's interval of a share (Wilson and Jeffreys) on "
        "their effective counts and the comparison with the reviewers by its paired interval, as the report computes "
        "them; agreement and self-preference carry their "
        "current interval, scaled by the standard error's ratio (effective items); the clustering's design effect "
        "stays as it is now.",
        ("The recommended order is the active queue for the undecided checks (estimates weighted by 1 / inclusion "
         "probability, as calibrate weighs them); random order is a fresh permutation on each future. New items "
         "come after the pool in either order." if has_pool else
         "No item is left unlabeled: every future labels new items like the golden set's own, in random order."),
        "The alternative-annotator test is not re-run on the futures: the comparison with the reviewers is read by "
        "its paired interval alone, which can only decide later than the test would.",
        "Each check's first line is the gate's own sentence; its 'about N more labeled items would decide it' is the "
        "gate's quick point estimate, not this simulation: budget with the range under it (single numbers were 4x "
        "to 15x off on held-out data; the ranges held the labels needed in 89% of campaigns).",
    ]


def _rate(hits: int, n: int) -> float:
    """A yield with Jeffreys smoothing, so an empty stratum still gives a usable guess."""
    return (hits + 0.5) / (n + 1.0)


def _same(name: str | None, judges: str) -> bool:
    """A producer's family or model is the judge's (compared without case)."""
    return (name or "").casefold() == judges


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _class_counts(report: CalibrationReport) -> tuple[int, int]:
    """(consensus passes, consensus fails): the denominators of TPR and TNR."""
    den = report.denominators
    return (int(den.n_pos or 0), int(den.n_neg or 0)) if den else (0, 0)


def _widths(report: CalibrationReport, width: float, per_item: float) -> dict[str, dict[str, Any]]:
    """Items (and labels) for each main metric's interval to reach ``width``."""
    out: dict[str, dict[str, Any]] = {}
    n = int(report.n_items)
    for name in ("krippendorff_alpha_ordinal", "cohen_kappa"):
        m = report.metric(name)
        se = metric_se(report, name)
        needed = sp.items_for_width(se, n, width) if se else None
        out[name] = _width_entry(m, needed, n, per_item)
    n_pos, n_neg = _class_counts(report)
    for name, n_k in (("exact_agreement", n), ("tpr", n_pos), ("tnr", n_neg)):
        m = report.metric(name)
        needed = (sp.items_for_proportion_width(m.value, width, deff=float(m.design_effect or 1.0))
                  if m.value is not None else None)
        out[name] = _width_entry(m, needed, n_k, per_item)
    return out


def _width_entry(m: Metric, needed: int | None, n: int, per_item: float) -> dict[str, Any]:
    now = m.ci_high - m.ci_low if m.has_interval else None
    more = None if needed is None else max(0, needed - n)
    return {"now": now, "items_needed": needed, "more_items": more,
            "more_labels": None if more is None else math.ceil(more * per_item)}


def _budget_widths(report: CalibrationReport, more_items: int, fail_share: float) -> dict[str, float | None]:
    """Expected interval widths after ``more_items`` more items with a consensus, in random order."""
    out: dict[str, float | None] = {}
    n = int(report.n_items)
    for name in ("krippendorff_alpha_ordinal", "cohen_kappa"):
        se = metric_se(report, name)
        out[name] = sp.expected_width_after(se, n, more_items) if se else None
    n_pos, n_neg = _class_counts(report)
    for name, n_k, share in (("exact_agreement", n, 1.0), ("tpr", n_pos, 1 - fail_share), ("tnr", n_neg, fail_share)):
        mm = report.metric(name)
        if mm.value is None:
            out[name] = None
            continue
        low, high = stats.intervals.proportion.proportion_interval(mm.value, n_k + more_items * share,
                                                         deff=float(mm.design_effect or 1.0))
        out[name] = high - low
    return out


def undecided_checks(p: Plan) -> list[str]:
    """The stats-level check names the active queue should serve (see ``stats.planning.CHECK_TARGETS``)."""
    names = {c.check for c in p.undecided_parts}
    out = [t for t, keys in (("agreement", {"agreement", "evidence", "as_good_as_human"}), ("tpr", {"tpr"}),
                             ("tnr", {"tnr"}),
                             ("self_preference", {"same_family", "same_model"})) if names & keys]
    counts = p.class_counts
    out += [name for name, n in (("find_fails", counts.get("n_neg", 0)), ("find_passes", counts.get("n_pos", 0)))
            if n < counts.get("min_class_items", 0)]
    return out or list(sp.CHECK_TARGETS)


def _queue_advice(store: Store, gs: GoldenSetRecord, rubric: str, judge: str, p: Plan) -> str | None:
    """A re-plan suggestion when the active queue of this rubric and judge serves checks that are now decided."""
    from workbench.store import active_queue as q

    d = active_design(store, gs.id)
    if q.queue_order(store, gs.id) != "active" or not d or (d.rubric_name, d.judge_id) != (rubric, judge):
        return None
    now = undecided_checks(p) if p.undecided else []
    if not now or set(now) == set(d.checks):
        return None
    return (f"The active queue serves {', '.join(d.checks)}; the undecided checks are now {', '.join(now)}. "
            f"Re-plan it to serve them: workbench golden-set queue {gs.name} --order active --rubric {rubric} "
            f"--judge {judge}.")

