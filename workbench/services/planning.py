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
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import stats
from ..errors import InputError
from ..gate import PASSED, Policy, evaluate, evidence_needs
from ..report import CalibrationReport, Metric
from ..stats import planning as sp
from ..store import Store
from ..workspace import Workspace
from .calibration import Options, calibrate, judge_data, policy_for
from .golden_sets import consensus

DEFAULT_CATEGORY_WIDTH = 0.2
# The plan is read again after every batch of labels: a failure counts as decided only at the interim boundary
# (stats.planning.threshold_decision and band_decision); a pass needs every check and is read at the report's 95%.


@dataclass(frozen=True)
class CheckPlan:
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


@dataclass
class Plan:
    golden_set: str
    rubric: str
    judge: str
    n_items: int
    n_unlabeled: int
    overlap: int
    checks: list[CheckPlan]
    target_width: float | None
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
        """Gate checks not yet decided (per-category widths are a measurement goal, not a gate check)."""
        return [c for c in self.checks if not c.decided and not c.check.startswith("category:")]

    def summary(self) -> str:
        """One sentence per undecided check, for the Calibration page."""
        if self.decided_failures:
            return ("The judge fails the gate on " + ", ".join(c.check.replace("_", " ") for c in self.decided_failures)
                    + ", which more labels will not change: the verdict is decided (not calibrated).")
        if not self.undecided:
            return "Every gate check is decided by the labels so far; more labels will not change the verdict's checks."
        return " ".join(c.sentence for c in self.undecided)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["schema"] = "workbench.plan/1"
        return d


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
    overlap = int(gs["overlap"])
    cons = consensus(store, golden_set, rv.name)
    index = {r["item_id"]: r for r in store.item_index(gs["id"])}
    frame = data.judgments
    first = frame[(frame["run_id"] == data.run["id"]) & (frame["repeat"] == 0)].dropna(subset=["score"])
    scores = {i: int(s) for i, s in zip(first["item_id"], first["score"])}
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
    n_family_pool = sum((index[i]["producer_family"] or "").casefold() == family for i in unlabeled) if family else 0

    def labels(items: int | None, yield_: float = 1.0) -> int | None:
        return None if items is None else math.ceil(items / max(yield_, 1e-3) * per_item)

    checks: list[CheckPlan] = []
    n = int(report.n_items)
    _, need, need_multi, share = evidence_needs(report, policy)
    # a second opinion on an item one reviewer labeled is one label (the Label page serves such items first)
    more_labels = (labels(need) or 0) + need_multi
    parts = ([f"reach {policy.min_items} items with a consensus"] if need else []) + (
        [f"bring the items with {policy.min_raters_per_item}+ raters from {share:.0%} to "
         f"{policy.min_multi_rated_share:.0%}"] if need_multi else [])
    checks.append(CheckPlan("evidence", not parts, "any", need + need_multi, more_labels, more_labels,
                            f"About {more_labels} more labels would {' and '.join(parts)}." if parts
                            else "Enough items are labeled."))
    checks.append(_as_good_as_human(report, policy))
    name = policy.agreement_metric
    m = report.metric(name)
    se = _floor_se(report, name)
    low, high, value = m.ci_low, m.ci_high, m.value
    thr = policy.min_agreement_lower
    failing = value is not None and value < thr  # a failure is decided at the interim boundary
    state = sp.threshold_decision(value, low, high, thr)
    if state is not None:
        checks.append(CheckPlan("agreement", True, "any", 0, 0, 0, f"{name} is decided.", failed=state is False))
    else:
        total = (sp.items_to_clear(value, se, n, thr, level=sp.INTERIM_LEVEL if failing else 0.95)
                 if value is not None and se else None)
        more = None if total is None else max(1, total - n)
        checks.append(CheckPlan(
            "agreement", False, "any", more, labels(more), labels(more),
            f"About {labels(more)} more labels would decide {name} (now {value:.2f}, threshold "
            f"{policy.min_agreement_lower})." if more else
            f"{name} sits on its threshold {policy.min_agreement_lower}: more labels will hardly decide it."))
    n_pos, n_neg = _class_counts(report)
    for check, kind, n_k, bound, yld, share in (
            ("tpr", "judge passes", n_pos, policy.min_tpr_lower, pass_given_jp, 1 - fail_share),
            ("tnr", "judge fails", n_neg, policy.min_tnr_lower, fail_given_jf, fail_share)):
        mm = report.metric(check)
        need_p = sp.plan_proportion(mm.value, n_k, bound, min_items=policy.min_class_items,
                                    deff=float(mm.design_effect or 1.0))
        what = "fails" if check == "tnr" else "passes"
        more = need_p["more"]
        # decided as the gate reads it: by the report's own interval (under the active design a Wilson interval
        # at an expanded level, which the formula's does not reproduce)
        high = mm.ci_high
        state = sp.threshold_decision(mm.value, mm.ci_low, high, bound) if n_k >= policy.min_class_items else None
        if state is None and (need_p["decided"] or (high is not None and high < bound)):
            se = _se_from_interval(mm)
            level = sp.INTERIM_LEVEL if mm.value is not None and mm.value < bound else 0.95
            total = (sp.items_to_clear(mm.value, se, max(n_k, 1), bound, level=level)
                     if se and mm.value is not None else None)
            more = max(1, policy.min_class_items - n_k, 0 if total is None else total - n_k)
        if state is not None:
            checks.append(CheckPlan(check, True, kind, 0, 0, 0, f"{check.upper()} is decided.",
                                    failed=state is False))
        else:
            checks.append(CheckPlan(
                check, False, kind, more, labels(more, yld), labels(more, share),
                f"About {labels(more, yld)} more labels on items the {kind} would decide {check.upper()} "
                f"({more} more consensus {what}; {labels(more, share)} in random order)." if more else
                f"{check.upper()} sits on its bound {bound}: more labels will hardly decide it."))
    for effect in ("same_family", "same_model"):
        e = getattr(report.self_preference, effect)
        v, lo, hi, n_e = (e.value, e.ci_low, e.ci_high, int(e.n or 0)) if e else (None, None, None, 0)
        t = policy.max_self_preference
        who = "same-family" if effect == "same_family" else "same-model"
        if v is None or lo is None or hi is None:
            fams = {(r["producer_family"] or "").casefold() == family for r in index.values()} if family else set()
            if effect == "same_family" and fams == {True, False}:  # both kinds in the set: labels will measure it
                checks.append(CheckPlan(effect, False, who, None, None, None,
                                        f"Self-preference is not measurable yet: label items the judge's family "
                                        f"produced ({n_family_pool} unlabeled)."))
            elif effect == "same_family":  # the gate warns; no label can change that
                checks.append(CheckPlan(effect, True, who, 0, 0, 0,
                                        "Self-preference is not measurable: the golden set needs items of the "
                                        f"judge's family ({family or 'none given'}) and of others, so no label will "
                                        "settle it; add such items to measure it."))
            continue
        state = sp.band_decision(v, lo, hi, t)
        if state is not None:
            checks.append(CheckPlan(effect, True, who, 0, 0, 0, f"The {who} effect is decided.",
                                    failed=state is False))
            continue
        z = sp.z_value(0.95)
        total = sp.items_to_clear(abs(v), (hi - lo) / (2 * z) if hi > lo else 0.0, max(n_e, 1), t,
                                  level=sp.INTERIM_LEVEL if abs(v) > t else 0.95)
        more = None if total is None else max(1, total - n_e)
        pool_ids = unlabeled or list(index)
        share_same = max(sum((index[i]["producer_family"] or "").casefold() == family for i in pool_ids)
                         / max(len(pool_ids), 1), 1e-3)
        checks.append(CheckPlan(
            effect, False, who, more, labels(more), labels(more, share_same),
            f"About {labels(more)} more labels on {who} items would settle the {who} effect "
            f"({labels(more, share_same)} in random order)." if more else
            f"The {who} effect sits at +/-{t}: more labels will hardly settle it."))
    cat_width = target_width or DEFAULT_CATEGORY_WIDTH
    for cat, c in sorted(report.per_category.items()):
        ea = c.exact_agreement
        n_c = int(c.n_items or 0)
        if ea is None or ea.value is None or ea.ci_low is None:
            continue
        width = ea.ci_high - ea.ci_low
        needed = sp.items_for_proportion_width(ea.value, cat_width)
        more = 0 if width <= cat_width or needed is None else max(1, needed - n_c)
        checks.append(CheckPlan(f"category:{cat}", more == 0, f"category {cat}", more, labels(more), labels(more),
                                f"About {labels(more)} more labels in category '{cat}' would narrow its agreement "
                                f"interval to {cat_width}." if more else
                                f"Category '{cat}' is measured to {cat_width}."))

    result = Plan(golden_set, rv.name, judge, len(index), len(unlabeled), overlap, checks, target_width)
    result.widths = _widths(report, target_width, per_item) if target_width else {}
    if budget is not None:
        result.budget = int(budget)
        result.budget_widths = _budget_widths(report, int(budget / per_item), fail_share)
    result.class_counts = {"n_pos": n_pos, "n_neg": n_neg, "min_class_items": policy.min_class_items}
    result.queue_advice = _queue_advice(store, gs, rv.name, judge, result)
    result.assumptions = [
        f"Each item needs {overlap} labels for a consensus (the golden set's overlap), and {resolved_share:.0%} of "
        "labeled items reach one, so labels = items x {:.2f}.".format(per_item),
        "Intervals shrink as 1/sqrt(items), with the estimate staying where it is now; new items come in task "
        "clusters of the current size.",
        f"Yields from the {len(pairs)} labeled items the judge scored: {fail_given_jf:.0%} of items the judge fails "
        f"have a consensus fail, {pass_given_jp:.0%} of items it passes a consensus pass; {fail_share:.0%} of items "
        "are consensus fails overall (random order).",
        "TPR and TNR: Wilson intervals on their effective counts (design effect of the current report); agreement "
        "and self-preference: the normal approximation to their current interval.",
        "Labels on items of the needed kind are what the active queue serves first; random order reaches them "
        "at their share of the pool.",
    ]
    return result


def _as_good_as_human(report: CalibrationReport, policy: Policy) -> CheckPlan:
    """The gate's comparison with the reviewers, decided by the paired interval of judge-human minus human-human
    agreement plus the gate's margin: wholly above 0, the judge is as good; wholly below, it is not, and more
    labels will not change that. A passed alternative-annotator test (a significance test already) is decided.
    """
    check = next(c for c in evaluate(report, policy).checks if c.id == "as_good_as_human")
    hc = report.human_ceiling
    alt_passed = check.status == PASSED and isinstance(check.value, dict) and "winning_rate" in check.value
    hh, jh, se = ((hc.human_pairwise_agreement, hc.judge_human_pairwise_agreement, hc.judge_minus_human_se)
                  if hc else (None, None, None))
    n_pairs = int(hc.n_items_pairwise or 0) if hc else 0
    if alt_passed:
        return CheckPlan("as_good_as_human", True, "multi-rated", 0, 0, 0,
                         "The alternative-annotator test is passed: the judge can stand in for a reviewer.")
    if hh is None or jh is None or se is None or not (math.isfinite(hh) and math.isfinite(jh)):
        more = max(2, policy.min_class_items - n_pairs)
        return CheckPlan("as_good_as_human", False, "multi-rated", more, 2 * more, 2 * more,
                         f"About {2 * more} more labels ({more} items labeled by two reviewers) would compare the "
                         "judge with the reviewers.")
    z = sp.z_value(0.95)
    gap = jh - hh + policy.human_margin  # >= 0: as good as the humans, within the gate's margin
    low, high = gap - z * se, gap + z * se
    words = (f"judge-human {jh:.2f} against human-human {hh:.2f} on {n_pairs} items labeled by 2+ reviewers "
             f"(difference plus the margin {policy.human_margin}: {gap:+.2f}, interval {low:+.2f} to {high:+.2f})")
    state = sp.threshold_decision(gap, low, high, 0.0)
    if state is not None:
        return CheckPlan("as_good_as_human", True, "multi-rated", 0, 0, 0,
                         f"The comparison with the reviewers is decided: {words}.", failed=state is False)
    total = (sp.items_to_clear(abs(gap), se, n_pairs, 0.0, level=sp.INTERIM_LEVEL if gap < 0 else 0.95)
             if se > 0 and gap else None)
    more = None if total is None else max(1, total - n_pairs)
    return CheckPlan("as_good_as_human", False, "multi-rated", more, None if more is None else 2 * more,
                     None if more is None else 2 * more,
                     f"About {2 * more} more labels ({more} items labeled by two reviewers) would settle the "
                     f"comparison with the reviewers: {words}." if more else
                     f"The comparison with the reviewers sits on its margin: {words}.")


def _floor_se(report: CalibrationReport, name: str) -> float | None:
    """The metric's standard error as the noise floor estimated it (None where it could not)."""
    floor = report.noise_floor.metrics.get(name) if report.noise_floor else None
    return floor.se if floor else None


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
        se = _floor_se(report, name) or _se_from_interval(m)
        needed = sp.items_for_width(se, n, width) if se else None
        out[name] = _width_entry(m, needed, n, per_item)
    n_pos, n_neg = _class_counts(report)
    for name, n_k in (("exact_agreement", n), ("tpr", n_pos), ("tnr", n_neg)):
        m = report.metric(name)
        needed = (sp.items_for_proportion_width(m.value, width, deff=float(m.design_effect or 1.0))
                  if m.value is not None else None)
        out[name] = _width_entry(m, needed, n_k, per_item)
    return out


def _se_from_interval(m: Metric) -> float | None:
    if not m.has_interval:
        return None
    return (m.ci_high - m.ci_low) / (2 * sp.z_value(0.95))


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
        se = _floor_se(report, name) or _se_from_interval(report.metric(name))
        out[name] = sp.expected_width_after(se, n, more_items) if se else None
    n_pos, n_neg = _class_counts(report)
    for name, n_k, share in (("exact_agreement", n, 1.0), ("tpr", n_pos, 1 - fail_share), ("tnr", n_neg, fail_share)):
        mm = report.metric(name)
        if mm.value is None:
            out[name] = None
            continue
        low, high = stats.proportion.proportion_interval(mm.value, n_k + more_items * share,
                                                         deff=float(mm.design_effect or 1.0))
        out[name] = high - low
    return out


def undecided_checks(p: Plan) -> list[str]:
    """The stats-level check names the active queue should serve (see ``stats.planning.CHECK_TARGETS``)."""
    names = {c.check for c in p.undecided}
    out = [t for t, keys in (("agreement", {"agreement", "evidence", "as_good_as_human"}), ("tpr", {"tpr"}),
                             ("tnr", {"tnr"}),
                             ("self_preference", {"same_family", "same_model"})) if names & keys]
    counts = p.class_counts
    out += [name for name, n in (("find_fails", counts.get("n_neg", 0)), ("find_passes", counts.get("n_pos", 0)))
            if n < counts.get("min_class_items", 0)]
    return out or list(sp.CHECK_TARGETS)


def _queue_advice(store: Store, gs: dict, rubric: str, judge: str, p: Plan) -> str | None:
    """A re-plan suggestion when the active queue of this rubric and judge serves checks that are now decided."""
    from ..store import active_queue as q

    d = q.design(store, gs["id"])
    if q.queue_order(store, gs["id"]) != "active" or not d or (d["rubric_name"], d["judge_id"]) != (rubric, judge):
        return None
    now = undecided_checks(p) if p.undecided else []
    if not now or set(now) == set(d["checks"]):
        return None
    return (f"The active queue serves {', '.join(d['checks'])}; the undecided checks are now {', '.join(now)}. "
            f"Re-plan it to serve them: workbench golden-set queue {gs['name']} --order active --rubric {rubric} "
            f"--judge {judge}.")

