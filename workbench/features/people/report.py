"""The raters report: each reviewer measured against the other reviewers, as a judge is against them all.

For each rater with labels of a golden set under a rubric: labels given; agreement with the consensus of the
others (leave-one-out: the item's consensus by the workbench's rule, adjudicated else strict majority, computed
without this rater's label; an adjudication this rater made is left out too), as exact agreement and
Krippendorff's ordinal alpha with 95% intervals; their share of fails against the others' on the same items; how
often they skip or flag an item. Time per label is not measured: the store records when a label was saved, not
when its item was shown. Reviewers whose alpha lies wholly below the policy's ``min_rater_agreement`` (default the
gate's ``min_agreement_lower``) are named in one sentence with what to do (``workbench.stats.reviewers`` holds the
statistics).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.calibration.calibrate import policy_for
from workbench.calibration.golden_sets import consensus, item_index
from workbench.calibration.rubric_versions import get_rubric_ref
from workbench.core.consensus import consensus_label
from workbench.core.errors import NotFound
from workbench.core.policy import DEFAULT_GOLD_ACCURACY
from workbench.core.scale import fmt
from workbench.core.workspace import Workspace
from workbench.features.people.raters import list_raters
from workbench.stats.intervals.proportion import proportion_intervals
from workbench.stats.intervals.records import MetricInterval
from workbench.stats.reviewers import (
    FailShareDifference,
    ReviewerAgreement,
    fail_share_difference,
    reviewer_agreement,
)
from workbench.stats.reviewers.over_time import AgreementOverTime, agreement_over_time
from workbench.store import Store

#: A reviewer is called harsh (or lenient) when the interval of their fail-share difference lies wholly beyond this.
FAIL_SHARE_MARGIN = 0.10
TIME_NOT_RECORDED = ("time per label is not measured: the store records when a label was saved, not when its item "
                     "was shown")
#: The validity alarm's level (features/monitoring): a false alarm on a reviewer at most this often, ever.
OVER_TIME_ALPHA = 0.05
SKIP_KINDS = ("skip",)
FLAG_KINDS = ("broken item", "unsure")


@dataclass(slots=True)
class ReviewerMeasures:
    """One rater's row of the raters report."""

    name: str
    role: str | None  # None: a name that labels made and no admin gave a role
    removed: bool
    n_labels: int
    agreement: ReviewerAgreement
    fail_share: FailShareDifference
    n_seen: int  # items labeled or set aside (skipped or flagged)
    skip_rate: MetricInterval
    flag_rate: MetricInterval
    below_bound: bool = False
    harshness: str | None = None  # "harsher" or "more lenient" than the others, beyond FAIL_SHARE_MARGIN
    over_time: AgreementOverTime | None = None  # the validity alarm's test on their labels in the order given
    alarm_since: str | None = None  # when the label at which the alarm went off was given
    gold: MetricInterval | None = None  # exact accuracy on gold items labeled after their marking (None: none)
    below_gold: bool = False

    def to_json(self) -> dict[str, Any]:
        a, f = self.agreement, self.fail_share
        return {"name": self.name, "role": self.role, "removed": self.removed, "n_labels": self.n_labels,
                "n_compared": a.n_items, "exact_agreement": a.exact_agreement.to_json(),
                "krippendorff_alpha_ordinal": a.krippendorff_alpha_ordinal.to_json(),
                "fail_share": {"n": f.n_items, "reviewer": f.reviewer_share, "others": f.others_share,
                               "difference": f.difference.to_json()},
                "n_seen": self.n_seen, "skip_rate": self.skip_rate.to_json(), "flag_rate": self.flag_rate.to_json(),
                "time_per_label": None, "below_bound": self.below_bound, "harshness": self.harshness,
                "over_time": None if (o := self.over_time) is None else {
                    "n": o.n_labels, "alarm": o.alarm, "alarm_at_label": None if o.alarm_at is None else o.alarm_at + 1,
                    "alarm_since": self.alarm_since, "wealth": o.wealth, "alpha": o.alpha, "floor": o.floor,
                    "recent_agreement": o.recent_agreement},
                "gold": None if self.gold is None else {"n": self.gold.n, "accuracy": self.gold.to_json()},
                "below_gold_bound": self.below_gold, "reasons": a.reasons}


@dataclass(slots=True)
class RatersReport:
    """``workbench rater report``: every rater of a golden set under a rubric, and what a lead should do."""

    golden_set: str
    rubric: str
    rubric_version: int
    bound: float
    bound_source: str  # the policy key the bound came from
    resamples: int
    seed: int
    reviewers: list[ReviewerMeasures]
    findings: list[str] = field(default_factory=list)  # one sentence each, naming reviewers and what to do
    time_per_label: str = TIME_NOT_RECORDED
    gold_bound: float = DEFAULT_GOLD_ACCURACY
    gold_bound_source: str = "default"  # "min_gold_accuracy" when the policy sets it
    n_gold: int = 0  # gold items of the golden set under the rubric (with an answer)

    def to_json(self) -> dict[str, Any]:
        return {"schema": "workbench.raters/1", "golden_set": self.golden_set,
                "rubric": {"name": self.rubric, "version": self.rubric_version},
                "bound": {"metric": "krippendorff_alpha_ordinal", "value": self.bound, "policy_key": self.bound_source},
                "fail_share_margin": FAIL_SHARE_MARGIN,
                "bootstrap": {"resamples": self.resamples, "seed": self.seed, "cluster": "task_id"},
                "gold": {"n_items": self.n_gold, "bound": self.gold_bound, "policy_key": self.gold_bound_source},
                "reviewers": [r.to_json() for r in self.reviewers], "findings": self.findings,
                "time_per_label": self.time_per_label}


def raters_report(store: Store, golden_set: str, rubric: str, *, workspace: Workspace | None = None,
                  resamples: int = 2000, seed: int = 0) -> RatersReport:
    """Each rater's labels measured against the leave-one-out consensus of the others (see the module)."""
    rv = get_rubric_ref(store, rubric)
    gs = store.golden_set(golden_set)
    policy = policy_for(rv, workspace)
    bound, source = ((policy.min_rater_agreement, "min_rater_agreement") if policy.min_rater_agreement is not None
                     else (policy.min_agreement_lower, "min_agreement_lower"))
    c = consensus(store, golden_set, rv.name, gs=gs)
    if not c.human:
        raise NotFound(f"golden set '{golden_set}' has no labels under rubric '{rv.name}'; import or label some first")
    task_of = {r.item_id: r.task_id or r.item_id for r in item_index(store, gs.id)}
    adjudicator = {r["item_id"]: r["lead"] for r in store.adjudications(gs.id, rv.name)}
    scale, threshold = rv.rubric.scale.values, rv.rubric.pass_threshold
    known = {r.name: r for r in list_raters(store, include_removed=True)}
    set_aside = _set_aside(store, gs.id, rv.name)

    # each rater's items in the order their labels were given (the item's position among equal times: an import)
    given = {(r["item_id"], r["rater"]): (r["created_at"] or r["updated_at"] or "", k)
             for k, r in enumerate(store.labels(gs.id, rv.name))}
    by_rater: dict[str, list[str]] = {}
    for item_id, labels in c.human.items():
        for rater in labels:
            by_rater.setdefault(rater, []).append(item_id)
    for rater, items in by_rater.items():
        items.sort(key=lambda i, r=rater: given.get((i, r), ("", 0)))
    rows = []
    pairs: dict[str, tuple[list[int], list[int | None]]] = {}
    for rater in sorted(by_rater):
        items = by_rater[rater]
        mine, loo, others_fail, paired = [], [], [], []
        for item_id in items:
            others = [s for r, s in c.human[item_id].items() if r != rater]
            adjudicated = c.adjudicated.get(item_id) if adjudicator.get(item_id) != rater else None
            mine.append(c.human[item_id][rater])
            loo.append(consensus_label(others, adjudicated))
            if others:
                paired.append(len(mine) - 1)
                others_fail.append(sum(s < threshold for s in others) / len(others))
        clusters = [task_of.get(i, i) for i in items]
        pairs[rater] = (mine, loo)
        agreement = reviewer_agreement(mine, loo, clusters, scale=scale, pass_threshold=threshold,
                                       resamples=resamples, seed=seed)
        fails = fail_share_difference([mine[k] for k in paired], others_fail, [clusters[k] for k in paired],
                                      scale=scale, pass_threshold=threshold, resamples=resamples, seed=seed)
        skipped, flagged = set_aside.get(rater, (set(), set()))
        seen = len(set(items) | skipped | flagged)
        info = known.get(rater)
        rows.append(ReviewerMeasures(
            rater, info.role if info else None, bool(info and info.removed_at), len(items), agreement, fails, seen,
            _rate(len(skipped), seen), _rate(len(flagged), seen),
            below_bound=bool(agreement.krippendorff_alpha_ordinal.ci_high < bound),
            harshness=_harshness(fails.difference)))
    _watch_over_time(rows, pairs, by_rater, given, scale, bound)
    gold_bound, gold_source = ((policy.min_gold_accuracy, "min_gold_accuracy") if policy.min_gold_accuracy is not None
                               else (DEFAULT_GOLD_ACCURACY, "default"))
    gold = store.labeling.gold_items(gs.id, rv.name)
    _score_gold(rows, gold, c.human, given, adjudicator, gold_bound)
    return RatersReport(golden_set, rv.name, rv.version, bound, source, resamples, seed, rows,
                        _findings(rows, bound, source) + _gold_findings(rows, gold_bound, gold_source),
                        gold_bound=gold_bound, gold_bound_source=gold_source, n_gold=len(gold))


def _score_gold(rows: list[ReviewerMeasures], gold: list[dict], human: dict, given: dict, adjudicator: dict,
                bound: float) -> None:
    """Each rater's exact accuracy on the gold items they labeled after the marking (labels given before it were
    ordinary work, and may have made the adjudication); the item's adjudicator is not scored on it."""
    for row in rows:
        hits = n = 0
        for g in gold:
            label = human.get(g["item_id"], {}).get(row.name)
            if label is None or adjudicator.get(g["item_id"]) == row.name:
                continue
            if given.get((g["item_id"], row.name), ("", 0))[0] <= g["marked_at"]:
                continue
            n += 1
            hits += label == g["score"]
        if n:
            row.gold = _rate(hits, n)
            row.below_gold = bool(row.gold.ci_high < bound)


def _gold_findings(rows: list[ReviewerMeasures], bound: float, source: str) -> list[str]:
    low = [r for r in rows if r.below_gold and r.gold is not None]
    if not low:
        return []
    who = "; ".join(f"'{r.name}' ({_num(r.gold.value)}, 95% {_num(r.gold.ci_low)} to {_num(r.gold.ci_high)}, on "
                    f"{r.gold.n} gold items)" for r in low)
    return [f"Below the gold bound ({source} {bound:g}) in exact accuracy on gold items: {who}; go over their gold "
            f"items with them, and until they label gold right again calibrate without them ('workbench calibrate "
            "... " + " ".join(f"--exclude-rater {r.name}" for r in low) + "')."]


def _watch_over_time(rows: list[ReviewerMeasures], pairs: dict, by_rater: dict[str, list[str]], given: dict,
                     scale: tuple[int, ...], bound: float) -> None:
    """Each rater's labels in the order given, under the monitoring's validity test; the chance disagreement from
    every rater's labels against the others' consensus."""
    k = len(scale)
    code = {v: n for n, v in enumerate(scale)}
    reference = np.zeros((k, k))
    for mine, loo in pairs.values():
        for s, c in zip(mine, loo):
            if c is not None:
                reference[code[c], code[s]] += 1
    if reference.sum() == 0 or not 0 < bound < 1:
        return
    rows_by = {r.name: r for r in rows}
    for rater, (mine, loo) in pairs.items():
        try:
            test = agreement_over_time(mine, loo, reference, scale=scale, bound=bound, alpha=OVER_TIME_ALPHA)
        except ValueError:  # one value only in every pair: no chance disagreement, nothing to test against
            return
        row = rows_by[rater]
        row.over_time = test
        if test.alarm_at is not None:
            compared = [i for i, c in zip(by_rater[rater], loo) if c is not None]
            row.alarm_since = given.get((compared[test.alarm_at], rater), ("", 0))[0] or None


def render_text(report: RatersReport) -> str:
    """The report as the command line prints it: one line per rater, then the findings."""
    def num(x: float) -> str:
        return fmt(x if math.isfinite(x) else None, 2)  # NaN: n/a

    def iv(m: MetricInterval) -> str:
        return f"{num(m.value)} [{num(m.ci_low)}, {num(m.ci_high)}]" if math.isfinite(m.value) else "n/a"

    title = (f"Raters of '{report.golden_set}' under {report.rubric}@v{report.rubric_version}, each against the "
             "consensus of the others (95% intervals):")
    lines = [title,
             "rater\tlabels\tcompared\texact agreement\talpha (ordinal)\tfails - others'\tskipped\tflagged\tover time"
             + ("\tgold accuracy" if report.n_gold else "")]
    for r in report.reviewers:
        a = r.agreement
        name = r.name + (" (removed)" if r.removed else "")
        lines.append(f"{name}\t{r.n_labels}\t{a.n_items}\t{iv(a.exact_agreement)}\t"
                     f"{iv(a.krippendorff_alpha_ordinal)}\t{iv(r.fail_share.difference)}\t"
                     f"{num(r.skip_rate.value)}\t{num(r.flag_rate.value)}\t{_over_time_cell(r.over_time)}"
                     + (f"\t{_gold_cell(r.gold)}" if report.n_gold else ""))
    lines.append(f"Not shown: {report.time_per_label}.")
    nobody = (f"No reviewer is below the agreement bound ({report.bound_source} {report.bound:g}) or marks fails "
              "differently from the others beyond doubt.")
    lines += report.findings or [nobody]
    return "\n".join(lines)


def _set_aside(store: Store, golden_set_id: int, rubric: str) -> dict[str, tuple[set[str], set[str]]]:
    """Per rater: the items they skipped, and the items they flagged (broken item, unsure)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for row in store.labeling.flags(golden_set_id, rubric):
        skipped, flagged = out.setdefault(row["rater"], (set(), set()))
        (skipped if row["kind"] in SKIP_KINDS else flagged).add(row["item_id"])
    return out


def _rate(count: int, n: int) -> MetricInterval:
    if n == 0:
        return MetricInterval(float("nan"), float("nan"), float("nan"), 0)
    low, high = proportion_intervals(count / n, n)
    return MetricInterval(count / n, float(low), float(high), n)


def _harshness(d: MetricInterval) -> str | None:
    if d.ci_low > FAIL_SHARE_MARGIN:
        return "harsher"
    if d.ci_high < -FAIL_SHARE_MARGIN:
        return "more lenient"
    return None


def _gold_cell(g: MetricInterval | None) -> str:
    if g is None:
        return "none labeled"
    return f"{_num(g.value)} [{_num(g.ci_low)}, {_num(g.ci_high)}] of {g.n}"


def _over_time_cell(o: AgreementOverTime | None) -> str:
    if o is None or not o.n_labels:
        return "n/a"
    return f"fell at label {o.alarm_at + 1}" if o.alarm_at is not None else "steady"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _num(x: float) -> str:
    return fmt(float(x) if np.isfinite(x) else None, 2)


def _findings(rows: list[ReviewerMeasures], bound: float, source: str) -> list[str]:
    """One sentence for the reviewers below the bound, one for those harsher or more lenient than the others."""
    out = []
    low = [r for r in rows if r.below_bound]
    if low:
        who = "; ".join(f"'{r.name}' (alpha {_num(r.agreement.krippendorff_alpha_ordinal.value)}, 95% "
                        f"{_num(r.agreement.krippendorff_alpha_ordinal.ci_low)} to "
                        f"{_num(r.agreement.krippendorff_alpha_ordinal.ci_high)}, on "
                        f"{r.agreement.n_items} items)" for r in low)
        out.append(f"Below the agreement bound ({source} {bound:g}) with the other reviewers' consensus: {who}; go "
                   f"over the items where they differ from the others with them (and adjudicate those that matter), "
                   f"and until they agree again calibrate without them ('workbench calibrate ... "
                   + " ".join(f"--exclude-rater {r.name}" for r in low) + "').")
    fell = [r for r in rows if r.over_time is not None and r.over_time.alarm]
    if fell:
        who = "; ".join(f"'{r.name}' from their {_ordinal(r.over_time.alarm_at + 1)} compared label"
                        + (f" (given {r.alarm_since[:10]})" if r.alarm_since else "") for r in fell)
        out.append(f"Agreement fell below the bound ({bound:g}) over time, by the monitoring's validity test "
                   f"(a false alarm at most {OVER_TIME_ALPHA:.0%} of the time): {who}; look at their labels since "
                   f"then with them, and have those items labeled again.")
    skewed = [r for r in rows if r.harshness]
    if skewed:
        who = "; ".join(f"'{r.name}' is {r.harshness} (fails {_num(r.fail_share.reviewer_share)} of their items, "
                        f"the others {_num(r.fail_share.others_share)} of the same items; difference 95% "
                        f"{_num(r.fail_share.difference.ci_low)} to {_num(r.fail_share.difference.ci_high)})"
                        for r in skewed)
        out.append(f"Fails marked differently from the others by more than {FAIL_SHARE_MARGIN:g}: {who}; show them "
                   f"the rubric's fail level with examples the others agree on.")
    return out
