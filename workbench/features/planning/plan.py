"""Planning labels: for each gate check not yet decided, how many more labels it needs, and of which kind.

Reads the current calibration report (cached) and the gate policy, and the
judge's scores on the items nobody has labeled yet: the judge's verdicts say
where the needed kind of item is likely to be (consensus fails among the items
the judge fails). Every number comes from ``workbench.stats.planning``; the
sentences and the assumptions they rest on are written here, once, for the
CLI and the Calibration page.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from workbench import stats
from workbench.core.models import GoldenSetRecord
from workbench.core.errors import InputError
from workbench.calibration.gate import (FAILED, PASSED, UNDECIDED, Check, Policy, Verdict, evaluate, evidence_needs,
    metric_se)
from workbench.calibration.report import CalibrationReport, Metric
from workbench.stats import planning as sp
from workbench.store import Store
from workbench.core.workspace import Workspace
from workbench.calibration.calibrate import Options, calibrate, judge_data, policy_for
from workbench.calibration.design_weights import active_design
from workbench.calibration.golden_sets import ItemIndexRow, RunRow, consensus, item_index
from workbench.features.planning.records import MeasurementState

DEFAULT_CATEGORY_WIDTH = 0.2
# The plan is read again after every batch of labels: a failure counts as decided only at the interim boundary
# (stats.planning.threshold_decision and band_decision); a pass needs every check and is read at the report's 95%.


@dataclass(frozen=True)
class PartPlan:
    """One measurement behind a gate check (TPR and TNR behind 'passes and fails', each self-preference effect,
    a category's width): what the active queue serves and the labels it needs."""

    check: str                 # evidence, agreement, tpr, tnr, same_family, same_model, category:<name>
    decided: bool
    kind: str                  # which items to label: "any", "judge fails", "judge passes", "same family", ...
    more_items: int | None     # more items with a consensus of the needed kind (None: cannot be told)
    more_labels: int | None    # labels to get there, in the order that fits (overlap and yield included)
    more_labels_random: int | None  # the same in random order
    sentence: str
    failed: bool = False       # decided on the failing side: more labels will not change the verdict

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CheckPlan:
    """One gate check as the plan sees it: its ``state`` is the gate's own (``gate.evaluate`` on the same report);
    for an undecided check, the labels that would decide it."""

    check: str                 # the gate's check id
    name: str
    state: str                 # passed / failed / undecided (warning, not_applicable: notes that never block)
    reason: str                # the gate's sentence: number, interval, bound
    more_items: int | None = None          # items with a consensus label, of the kinds the check needs
    more_labels: int | None = None         # labels to a decision, in the order that fits (the active queue)
    more_labels_random: int | None = None  # labels to a decision if they are drawn at random
    pool_cannot_decide: bool = False       # the prediction exceeds what the unlabeled pool can supply
    sentence: str = ""                     # what to label, in words
    parts: tuple[str, ...] = ()            # the PartPlan names behind it

    @property
    def decided(self) -> bool:
        return self.state != UNDECIDED

    @property
    def failed(self) -> bool:
        return self.state == FAILED

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
        """One sentence per undecided check, for the Calibration page."""
        if self.decided_failures:
            return ("The judge fails the gate on " + ", ".join(c.name for c in self.decided_failures)
                    + ", which more labels will not change: the verdict is decided (not calibrated).")
        if not self.undecided:
            return "Every gate check is decided by the labels so far; more labels will not change the verdict's checks."
        return " ".join(c.sentence for c in self.undecided)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "schema": "workbench.plan/2"}


#: The gate check each part belongs to (categories are a width goal, not a check).
PART_OF = {"evidence": "evidence", "agreement": "agreement", "tpr": "pass_fail", "tnr": "pass_fail",
           "as_good_as_human": "as_good_as_human", "same_family": "self_preference",
           "same_model": "self_preference"}


def _rate(hits: int, n: int) -> float:
    """A yield with Jeffreys smoothing, so an empty stratum still gives a usable guess."""
    return (hits + 0.5) / (n + 1.0)


def plan(store: Store, golden_set: str, rubric: str, judge: str, *, target_width: float | None = None,
         budget: int | None = None, workspace: Workspace | None = None,
         report: CalibrationReport | None = None) -> Plan:
    """The label plan of a (golden set, rubric, judge) from its current calibration report."""
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
    labeled = set(cons.labels)
    unlabeled = [i for i in index if i not in labeled and i in scores]
    # yields: P(consensus fail | judge fails), P(consensus pass | judge passes), from the labeled items
    pairs = [(scores[i], s) for i, s in cons.resolved.items() if i in scores]
    jf = [h for j, h in pairs if j < threshold]
    jp = [h for j, h in pairs if j >= threshold]
    fail_given_jf = _rate(sum(h < threshold for h in jf), len(jf))
    pass_given_jp = _rate(sum(h >= threshold for h in jp), len(jp))
    fail_share = _rate(sum(h < threshold for _, h in pairs), len(pairs))
    resolved_share = len(cons.resolved) / len(cons.labels) if cons.labels else 1.0
    per_item = overlap / max(resolved_share, 0.5)  # labels per item with a consensus
    family = (data.spec.family or "").casefold()
    n_family_pool = sum(_same(index[i].producer_family, family) for i in unlabeled) if family else 0

    def labels(items: int | None, yield_: float = 1.0) -> int | None:
        return None if items is None else math.ceil(items / max(yield_, 1e-3) * per_item)

    verdict: Verdict = report.verdict or evaluate(report, policy)  # the gate's states, as `calibrate` prints them
    gate = {c.id: c for c in verdict.checks}
    parts: list[PartPlan] = []

    def state_of(check: str) -> str:
        return gate[check].status if check in gate else PASSED

    # -- the measurements behind each check, numbers from the gate's own check ----------------------------------
    n_pos, n_neg = _class_counts(report)
    _, need, need_multi, share = evidence_needs(report, policy)
    # a second opinion on an item one reviewer labeled is one label (the Label page serves such items first)
    more_labels = (labels(need) or 0) + need_multi
    words = ([f"reach {policy.min_items} items with a consensus"] if need else []) + (
        [f"bring the items with {policy.min_raters_per_item}+ raters from {share:.0%} to "
         f"{policy.min_multi_rated_share:.0%}"] if need_multi else [])
    parts.append(PartPlan("evidence", not words, "any", need + need_multi, more_labels, more_labels,
                          f"About {more_labels} more labels would {' and '.join(words)}." if words
                          else "Enough items are labeled."))
    as_good = gate.get("as_good_as_human")
    if as_good is not None:
        more = as_good.more_items if as_good.status == UNDECIDED else 0
        # each item compared needs two reviewers' labels, and gets as many as the golden set's overlap asks for
        two = None if more is None else max(2, overlap) * more
        parts.append(PartPlan("as_good_as_human", as_good.status != UNDECIDED, "multi-rated", more, two, two,
                              f"About {two} more labels ({more} items labeled by two reviewers) would "
                              + ("settle the comparison with the reviewers." if "difference" in (as_good.value or {})
                                 else "compare the judge with the reviewers.")
                              if as_good.status == UNDECIDED and more else
                              "The comparison with the reviewers sits on its margin: more labels will hardly settle "
                              "it." if as_good.status == UNDECIDED else
                              "The comparison with the reviewers is decided.", failed=as_good.status == FAILED))
    name = policy.agreement_metric
    agreement = gate["agreement"]
    more = agreement.more_items if agreement.status == UNDECIDED else 0
    parts.append(PartPlan("agreement", agreement.status != UNDECIDED, "any", more, labels(more), labels(more),
                          f"About {labels(more)} more labels would decide {name} (now "
                          f"{_fmt(report.metric(name).value)}, threshold {policy.min_agreement_lower})."
                          if agreement.status == UNDECIDED and more else
                          f"{name} sits on its threshold {policy.min_agreement_lower}: more labels will hardly "
                          "decide it." if agreement.status == UNDECIDED else f"{name} is decided.",
                          failed=agreement.status == FAILED))
    pf = gate["pass_fail"].value or {}
    for check, kind, yld, share_k in (("tpr", "judge passes", pass_given_jp, 1 - fail_share),
                                      ("tnr", "judge fails", fail_given_jf, fail_share)):
        part = MeasurementState.from_json(pf.get(check) or {})
        state, more = part.state or PASSED, part.more_items
        what = "fails" if check == "tnr" else "passes"
        parts.append(PartPlan(
            check, state != UNDECIDED, kind, more if state == UNDECIDED else 0,
            labels(more, yld) if state == UNDECIDED else 0, labels(more, share_k) if state == UNDECIDED else 0,
            f"About {labels(more, yld)} more labels on items the {kind} would decide {check.upper()} "
            f"({more} more consensus {what}; {labels(more, share_k)} in random order)." if state == UNDECIDED and more
            else f"{check.upper()} sits on its bound: more labels will hardly decide it." if state == UNDECIDED else
            f"{check.upper()} is decided.", failed=state == FAILED))
    sp_values = gate["self_preference"].value or {}
    pool_ids = unlabeled or list(index)
    share_same = _share(index, pool_ids, lambda r: _same(r.producer_family, family)) if family else 1e-3
    # the same-model effect grows with items of the judge's own model, a smaller share than its family's
    model = (data.spec.model_name or "").casefold()
    n_model_pool = sum(_same(index[i].producer_model, model) for i in unlabeled) if family else 0
    share_model = _share(index, pool_ids, lambda r: _same(r.producer_model, model)) if family else 1e-3
    for effect in ("same_family", "same_model"):
        e = MeasurementState.from_json(sp_values.get(effect) or {})
        who = "same-family" if effect == "same_family" else "same-model"
        if e.state is None:  # not measurable yet: undecided where labels can measure it, else the gate warns
            if effect == "same_family":
                if gate["self_preference"].status == UNDECIDED:
                    parts.append(PartPlan(effect, False, who, None, None, None,
                                          f"Self-preference is not measurable yet: label items the judge's family "
                                          f"produced ({n_family_pool} unlabeled)."))
                else:
                    parts.append(PartPlan(effect, True, who, 0, 0, 0,
                                          "Self-preference is not measurable: the golden set needs items of the "
                                          f"judge's family ({family or 'none given'}) and of others, so no label "
                                          "will settle it; add such items to measure it."))
            continue
        state, more = e.state, e.more_items
        if state != UNDECIDED:
            parts.append(PartPlan(effect, True, who, 0, 0, 0, f"The {who} effect is decided.",
                                  failed=state == FAILED))
            continue
        share = share_same if effect == "same_family" else share_model
        parts.append(PartPlan(
            effect, False, who, more, labels(more), labels(more, share),
            f"About {labels(more)} more labels on {who} items would settle the {who} effect "
            f"({labels(more, share)} in random order)." if more else
            f"The {who} effect sits at its bound: more labels will hardly settle it."))
    cat_width = target_width or DEFAULT_CATEGORY_WIDTH
    for cat, c in sorted(report.per_category.items()):
        ea = c.exact_agreement
        n_c = int(c.n_items or 0)
        if ea is None or ea.value is None or ea.ci_low is None:
            continue
        width = ea.ci_high - ea.ci_low
        needed = sp.items_for_proportion_width(ea.value, cat_width)
        more = 0 if width <= cat_width or needed is None else max(1, needed - n_c)
        parts.append(PartPlan(f"category:{cat}", more == 0, f"category {cat}", more, labels(more), labels(more),
                              f"About {labels(more)} more labels in category '{cat}' would narrow its agreement "
                              f"interval to {cat_width}." if more else
                              f"Category '{cat}' is measured to {cat_width}."))

    # -- what the unlabeled pool can supply, by kind: consensus items expected among the unlabeled -------------
    judge_fails = sum(scores[i] < threshold for i in unlabeled)
    supply = {"any": len(unlabeled), "multi-rated": len(unlabeled) + sum(len(v) == 1 for v in cons.human.values()),
              "judge fails": judge_fails * fail_given_jf + (len(unlabeled) - judge_fails) * (1 - pass_given_jp),
              "judge passes": (len(unlabeled) - judge_fails) * pass_given_jp + judge_fails * (1 - fail_given_jf),
              "same-family": n_family_pool, "same-model": n_model_pool}
    checks = [_check_plan(c, [p for p in parts if PART_OF.get(p.check) == c.id], supply) for c in verdict.checks]

    result = Plan(golden_set, rv.name, judge, len(index), len(unlabeled), overlap, checks, parts, target_width,
                  verdict.state)
    result.widths = _widths(report, target_width, per_item) if target_width else {}
    if budget is not None:
        result.budget = int(budget)
        result.budget_widths = _budget_widths(report, int(budget / per_item), fail_share)
    result.class_counts = {"n_pos": n_pos, "n_neg": n_neg, "min_class_items": policy.min_class_items}
    result.queue_advice = _queue_advice(store, gs, rv.name, judge, result)
    result.assumptions = [
        f"Each item needs {overlap} labels for a consensus (the golden set's overlap), and {resolved_share:.0%} of "
        "labeled items reach one, so labels = items x {:.2f}.".format(per_item),
        "Intervals shrink as 1/sqrt(items); an undecided estimate sits nearer its bound than the truth does, so the "
        "estimate is taken to move toward the truth it implies (median-unbiased given that it is undecided); new "
        "items come in task clusters of the current size.",
        f"Yields from the {len(pairs)} labeled items the judge scored: {fail_given_jf:.0%} of items the judge fails "
        f"have a consensus fail, {pass_given_jp:.0%} of items it passes a consensus pass; {fail_share:.0%} of items "
        "are consensus fails overall (random order).",
        "Each check's current interval (TPR and TNR: Wilson on their effective counts, with the current design "
        "effect), by the normal approximation to its side facing the bound.",
        "Labels on items of the needed kind are what the active queue serves first; random order reaches them "
        "at their share of the pool, and decides a check when its slowest part is decided.",
    ]
    return result


def first_scores(data: Any) -> dict[str, int]:
    """item_id -> the judge's score in its current run (repeat 0), for the items it scored."""
    frame = data.judgments
    first = frame[(frame["run_id"] == RunRow(**data.run).id) & (frame["repeat"] == 0)].dropna(subset=["score"])
    return {i: int(s) for i, s in zip(first["item_id"], first["score"])}


def _same(name: str | None, judges: str) -> bool:
    """A producer's family or model is the judge's (compared without case)."""
    return (name or "").casefold() == judges


def _share(index: dict[str, ItemIndexRow], ids: list[str], kind: Callable[[ItemIndexRow], bool]) -> float:
    """The share of the items of a kind, at least 0.001."""
    return max(sum(kind(index[i]) for i in ids) / max(len(ids), 1), 1e-3)


def _check_plan(check: Check, parts: list[PartPlan], supply: dict[str, float]) -> CheckPlan:
    """A gate check with the labels that would decide it (over its open parts: in random order the slowest part's,
    in the order that fits their sum), or 'this pool cannot decide it' where a part needs more consensus items of
    its kind than the unlabeled pool is expected to hold."""
    base = CheckPlan(check.id, check.name, check.state, check.reason, parts=tuple(p.check for p in parts))
    if check.status != UNDECIDED:
        return replace(base, sentence=check.reason)
    open_parts = [p for p in parts if not p.decided]
    if not open_parts:  # stability, stress probes: decided by judge runs, not by labels
        return replace(base, more_items=check.more_items,
                       sentence=f"More labels will not decide {check.name}: {check.message}")
    short = [p for p in open_parts if p.more_items is not None and p.more_items > supply.get(p.kind, 0)]
    if short:
        said = "; ".join(f"{p.check.replace('_', ' ')} needs about {p.more_items} more consensus items "
                         f"({p.kind}) and about {int(supply.get(p.kind, 0))} are left unlabeled" for p in short)
        return replace(base, more_items=check.more_items, pool_cannot_decide=True,
                       sentence=f"This pool cannot decide {check.name}: {said}. Add items to the golden set.")

    def total(key: str) -> int | None:
        values = [getattr(p, key) for p in open_parts]
        if any(v is None for v in values):
            return None
        # labels drawn at random serve every open part at once: the check is decided when its slowest part is;
        # labels of the kinds the parts need are served one kind after another, so they add up
        return max(values) if key == "more_labels_random" else sum(values)

    return replace(base, more_items=check.more_items, more_labels=total("more_labels"),
                   more_labels_random=total("more_labels_random"), sentence=" ".join(p.sentence for p in open_parts))


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

