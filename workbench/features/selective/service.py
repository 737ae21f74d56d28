"""Calibrating a judge's confidence threshold (and a cascade of judges) against the human consensus.

Agreement is exact agreement, the report's ``exact_agreement``: the judge's verdict (repeat 0 of the calibrated
run, as ``calibrate`` reads it) equals the item's consensus label (``calibration.golden_sets.consensus``: the
adjudicated label, else the strict majority; unresolved items are left out). An item's confidence is the one
stored with that judgment; where none is stored and the run has two or more repeats of the item, the share of
its repeats that give the verdict's score. An item with neither is never kept (the judge abstains on it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from workbench.calibration.calibrate import judge_data
from workbench.calibration.gate import with_selective_check
from workbench.calibration.golden_sets import consensus
from workbench.calibration.versions import resolve_ref
from workbench.calibration.report import CalibrationReport
from workbench.core.errors import InputError, NotFound
from workbench.core.policy import Policy, SelectivePolicy
from workbench.features.selective.records import CascadeStage, SelectiveResult
from workbench.store import Store

if TYPE_CHECKING:  # numpy and scipy: loaded only when a threshold is computed
    from workbench.stats.selective import SelectiveStep


def check_target_and_risk(target: float | None, risk: float | None) -> tuple[float, float]:
    """The target agreement in (0, 1) and the risk in (0, 0.5], or a sentence naming the value."""
    if target is None or not (math.isfinite(target) and 0 < target < 1):
        raise InputError(f"--target-agreement is {target}, not a share strictly between 0 and 1",
                         fix="give the agreement wanted on kept items, e.g. --target-agreement 0.9")
    if risk is None or not (math.isfinite(risk) and 0 < risk <= 0.5):
        raise InputError(f"--risk is {risk}, not a probability in (0, 0.5]",
                         fix="give the chance you accept that the guarantee fails, e.g. --risk 0.05")
    return target, risk


class NoConfidence(InputError):
    """A judge none of whose verdicts on labeled items carries a confidence (stored, or from repeats)."""


@dataclass(frozen=True)
class JudgeItems:
    """One judge on the calibration items: verdict, confidence (NaN: none) and cost of each item, by item id."""

    judge: str
    verdict: dict[str, int]
    confidence: dict[str, float]
    cost: dict[str, float | None]
    source: str  # 'stored', 'repeats', 'stored and repeats' or 'none'


def judge_items(store: Store, golden_set: str, rubric: str, judge: str, run: str | None = None) -> JudgeItems:
    """The judge's verdicts on the golden set with a confidence for each (see the module's docstring)."""
    from workbench.stats.selective import confidence_from_repeats  # numpy and scipy: loaded when computing

    scope = resolve_ref(store, golden_set, rubric, judge, run)  # NAME, or NAME@vN as export pins it
    frame = judge_data(store, golden_set, rubric, judge, run, scope=scope).judgments
    frame = frame[(frame["run_id"] == scope.chosen.id) & frame["score"].notna()]
    by_item: dict[str, list[int]] = {}
    verdict: dict[str, int] = {}
    stated: dict[str, float] = {}
    cost: dict[str, float | None] = {}
    for item, repeat, score, conf, usd in zip(frame["item_id"].tolist(), frame["repeat"].tolist(),
                                              frame["score"].tolist(), frame["confidence"].tolist(),
                                              frame["cost_usd"].tolist()):
        by_item.setdefault(item, []).append(int(score))
        if repeat == 0:
            verdict[item] = int(score)
            cost[item] = None if usd is None or usd != usd else float(usd)
            if conf is not None and conf == conf:
                stated[item] = float(conf)
    confidence, sources = {}, set()
    for item, v in verdict.items():
        from_repeats = None if item in stated else confidence_from_repeats(v, by_item[item])
        if item in stated:
            sources.add("stored")
        elif from_repeats is not None:
            sources.add("repeats")
        confidence[item] = stated.get(item, math.nan if from_repeats is None else from_repeats)
    source = " and ".join(s for s in ("stored", "repeats") if s in sources) or "none"
    return JudgeItems(judge, verdict, confidence, cost, source)


def calibrate_selective(store: Store, golden_set: str, rubric: str, judges: list[str], *, target: float | None,
                        risk: float | None, run: str | None = None) -> SelectiveResult:
    """The threshold of one judge, or of each judge of a cascade (items the first abstains on go to the second,
    ...), so that agreement on kept items is >= ``target`` with probability >= 1 - ``risk``.

    A cascade of k judges tests each at risk / k on the items the judges before it left (a union bound: all k
    guarantees hold together with probability >= 1 - risk, and then so does the cascade's, a mixture of them).
    """
    import numpy as np

    from workbench.stats.selective import choose_threshold

    target, risk = check_target_and_risk(target, risk)
    if not judges:
        raise InputError("no judge given", fix="name the judge with --judge J, or a cascade with --cascade J1,J2")
    rv = resolve_ref(store, golden_set, rubric, judges[0], run).rubric
    resolved = consensus(store, golden_set, rv.name).resolved
    per_judge = [judge_items(store, golden_set, rubric, j, run if i == 0 else None) for i, j in enumerate(judges)]
    first = per_judge[0]
    ids = [i for i in first.verdict if i in resolved]  # the cascade sees every item its first judge graded
    if not ids:
        raise NotFound(f"judge '{judges[0]}' has no verdict on an item with a human consensus in golden set "
                       f"'{golden_set}'; label (or adjudicate) items it judged first")
    if all(math.isnan(first.confidence[i]) for i in ids) and len(judges) == 1:
        raise NoConfidence(f"judge '{judges[0]}' has no confidence on any item: a threshold needs one",
                         fix="import its judgments with a 'confidence' field (0..1), or run it with --repeats 2 "
                             "or more so the share of agreeing repeats serves as its confidence")
    stage_risk = risk / len(judges)
    left = list(ids)
    stages, choices, kept_agree, kept_n, spent, kept_by_judge = [], [], 0, 0, 0.0, []
    costs_known = True
    for ji in per_judge:
        conf = np.array([ji.confidence.get(i, math.nan) for i in left], dtype=float)
        agree = np.array([ji.verdict.get(i) == resolved[i] for i in left], dtype=bool)
        choice = choose_threshold(conf, agree, target=target, risk=stage_risk)
        choices.append(choice)
        keep = [i for i, c in zip(left, conf) if choice.threshold is not None and c >= choice.threshold]
        item_costs = [ji.cost.get(i) for i in left]
        if any(c is None for c in item_costs):
            costs_known = False
        else:
            spent += sum(item_costs)
        stages.append(CascadeStage(ji.judge, choice.threshold, len(keep) / len(left) if left else 0.0,
                                   len(keep) / len(ids)))
        kept_agree += choice.n_agree
        kept_n += len(keep)
        kept_by_judge.append(tuple(keep))
        kept_set = set(keep)
        left = [i for i in left if i not in kept_set]
        if not left:
            break
    n = len(ids)
    guaranteed = kept_n > 0
    agreement = kept_agree / kept_n if kept_n else None
    bound = (sum(c.lower_bound * c.n_kept for c in choices if c.guaranteed) / kept_n) if kept_n else None
    more = None if guaranteed else choices[0].more_labels()
    last_costs = [per_judge[-1].cost.get(i) for i in ids]
    alone = (sum(last_costs) / n) if len(judges) > 1 and all(c is not None for c in last_costs) else None
    result = SelectiveResult(
        threshold=choices[0].threshold, coverage=kept_n / n, agreement=agreement, agreement_lower_bound=bound,
        target=target, risk=risk, n_calibration=n, guaranteed=guaranteed, sentence="",
        confidence_source=", ".join(f"{ji.judge}: {ji.source}" for ji in per_judge),
        n_without_confidence=sum(1 for i in ids if math.isnan(first.confidence[i])),
        more_labels=more[0] if more else None,
        cascade=tuple(stages) if len(judges) > 1 else (),
        cost_per_graded_item=(spent / kept_n) if len(judges) > 1 and costs_known and kept_n else None,
        cost_last_judge_alone=alone,
        steps=tuple({"judge": ji.judge, "threshold": s.threshold, "n_kept": s.n_kept, "n_agree": s.n_agree,
                     "lower_bound": s.lower_bound, "passed": s.passed}
                    for ji, c in zip(per_judge, choices) for s in c.steps),
        kept_by_judge=tuple(kept_by_judge), more_labels_about=more[1] if more else None,
        openings=tuple((c.steps[0].n_kept, c.steps[0].n_agree) if c.steps else (0, 0) for c in choices))
    first = next((s for s in choices[0].steps if s.n_kept), None)
    return replace(result, sentence=selective_sentence(result, judges, more, first))


def _pct(x: float) -> str:
    """A share as a percentage, with a decimal only where it is needed (0.995 is 99.5%, not 100%)."""
    return f"{x:.0%}" if abs(x * 100 - round(x * 100)) < 1e-9 else f"{x:.1%}"


def selective_sentence(r: SelectiveResult, judges: list[str], more: tuple[int, int | None] | None,
                       first: SelectiveStep | None = None) -> str:
    """The one sentence the text output and the card say."""
    who = f"judge '{judges[0]}'" if len(judges) == 1 else "the cascade " + " -> ".join(f"'{j}'" for j in judges)
    cap = who[:1].upper() + who[1:]
    conf = _pct(1 - r.risk)
    if r.guaranteed:
        start = (f"Keeping items with confidence >= {r.threshold:.3g}, {who}" if len(judges) == 1 else
                 cap + " (thresholds " + ", ".join("none" if s.threshold is None else f"{s.threshold:.3g}"
                                                   for s in r.cascade) + ")")
        return (f"{start} grades {r.coverage:.0%} of the "
                f"{r.n_calibration} labeled items and agrees with the human consensus on {r.agreement:.1%} of "
                f"them; with {conf} confidence its agreement there is at least {_pct(r.target)} (lower bound "
                f"{r.agreement_lower_bound:.3f}).")
    at_least, about = more or (1, None)
    head = (f"No confidence threshold of {who} reaches {_pct(r.target)} agreement with the human consensus with "
            f"{conf} confidence on these {r.n_calibration} labeled items")
    if about is None and first is not None:
        return (f"{head}: on the {first.n_kept} items it is surest of it agrees on {first.n_agree} "
                f"({first.n_agree / first.n_kept:.0%}), not above the target, so more labels alone will not "
                f"give the guarantee.")
    return (f"{head}: at least {at_least} more labeled items would be needed, about {about} if its agreement on "
            f"the items it is surest of holds.")


def judges_of_cascade(judge: str | None, cascade: str | None, selective: bool, target: float | None = None,
                      risk: float | None = None) -> list[str]:
    """The judges ``calibrate`` reads: ``--judge J``, or ``--cascade J1,J2[,J3]`` (with --judge, it must be J1).
    With ``selective``, the target and risk are checked first, before anything is computed or cached."""
    if selective:
        check_target_and_risk(target, risk)
    if cascade is None:
        if judge is None:
            raise InputError("no judge given", fix="name it with --judge J (or a cascade with --selective --cascade "
                                                   "J1,J2)")
        return [judge]
    if not selective:
        raise InputError("--cascade works with --selective", fix="add --selective --target-agreement A --risk D")
    judges = [j.strip() for j in cascade.split(",")]
    if not 2 <= len(judges) <= 3 or not all(judges) or len(set(judges)) != len(judges):
        raise InputError(f"--cascade is '{cascade}', not two or three different judges",
                         fix="give them in order, e.g. --cascade cheap-judge,strong-judge")
    if judge is not None and judge != judges[0]:
        raise InputError(f"--judge is '{judge}' but the cascade starts with '{judges[0]}'",
                         fix="leave out --judge, or name the cascade's first judge")
    return judges


def selective_request(policy: Policy | None, judge: str | None, *, selective: bool = False,
                      target: float | None = None, risk: float | None = None,
                      cascade: str | None = None) -> SelectivePolicy | None:
    """The guarantee asked for: ``--selective --target-agreement A --risk D [--cascade J1,J2]`` when given (checked
    first, naming the flag), else the policy's ``selective`` section, else None (the verdict as without one)."""
    if not selective:
        judges_of_cascade(judge, cascade, False)  # --cascade without --selective: refused by name
        return policy.selective if policy is not None else None
    judges = judges_of_cascade(judge, cascade, True, target, risk)
    return SelectivePolicy(float(target), float(risk), tuple(judges) if len(judges) > 1 else ())


def judges_of_request(request: SelectivePolicy, judge: str) -> list[str]:
    """The judges a guarantee is calibrated for: the request's cascade when it starts with ``judge``, else the judge
    alone (a rubric's policy names one cascade; its other judges are held to the guarantee on their own)."""
    return list(request.cascade) if request.cascade and request.cascade[0] == judge else [judge]


def with_guarantee(store: Store, golden_set: str, rubric: str, report: CalibrationReport, request: SelectivePolicy,
                   *, run: str | None = None) -> tuple[CalibrationReport, SelectiveResult]:
    """The report whose verdict also holds the gate's "selective guarantee" check (``gate.selective_check``), and
    the threshold chosen: what ``calibrate`` shows and ``export`` decides by when a guarantee is asked for."""
    judges = judges_of_request(request, report.judge.id)
    try:
        chosen = calibrate_selective(store, golden_set, rubric, judges, target=request.target_agreement,
                                     risk=request.risk, run=run)
    except (NoConfidence, NotFound) as e:  # no threshold to test: the check waits for confidences or labels
        chosen = SelectiveResult(None, 0.0, None, None, request.target_agreement, request.risk, 0, False,
                                 f"No selective guarantee yet: {e}", "none")
    return report.but(verdict=with_selective_check(report.verdict, chosen)), chosen


def bundle_section(store: Store, golden_set: str, rubric: str, judge: str, chosen: SelectiveResult, *,
                   run: str | None = None) -> dict:
    """The bundle's ``selective`` section for a guarantee that holds: the threshold and its guarantee, the confusion
    on the items the (first) judge keeps, and for a cascade each judge's threshold, coverage and share of items."""
    section = {"threshold": chosen.threshold, "target": chosen.target, "risk": chosen.risk,
               "coverage": chosen.coverage, "agreement": chosen.agreement,
               "agreement_lower_bound": chosen.agreement_lower_bound, "n_calibration": chosen.n_calibration,
               "confidence_source": chosen.confidence_source, "sentence": chosen.sentence,
               "confusion": kept_confusion(store, golden_set, rubric, judge, chosen.kept_by_judge[0], run)}
    if chosen.cascade:  # each judge's confusion on the items it keeps: grade corrects a cascade with their sum
        section["cascade"] = [{**s.to_json(), "confusion": kept_confusion(store, golden_set, rubric, s.judge, kept,
                                                                          run if n == 0 else None)}
                              for n, (s, kept) in enumerate(zip(chosen.cascade, chosen.kept_by_judge))]
        section["cost_per_graded_item"] = chosen.cost_per_graded_item
        section["cost_last_judge_alone"] = chosen.cost_last_judge_alone
    return section


def gate_and_section(store: Store, golden_set: str, rubric: str, *, run: str | None = None):
    """``export_bundle``'s ``guarantee``: (report, request) -> (the report with the selective check, the bundle's
    section or None)."""
    def guarantee(report: CalibrationReport, request: SelectivePolicy) -> tuple[CalibrationReport, dict | None]:
        report, chosen = with_guarantee(store, golden_set, rubric, report, request, run=run)
        section = (bundle_section(store, golden_set, rubric, report.judge.id, chosen, run=run) if chosen.guaranteed
                   else None)
        return report, section
    return guarantee


def card_guarantee(store: Store, golden_set: str, rubric: str, *, selective: bool = False,
                   target: float | None = None, risk: float | None = None, cascade: str | None = None,
                   run: str | None = None):
    """``write_card``'s ``guarantee``: report -> (the report with the selective check, the guarantee's sentence), or
    (the report, None) when no guarantee is asked for (no flags, no policy section)."""
    def guarantee(report: CalibrationReport) -> tuple[CalibrationReport, str | None]:
        request = selective_request(report.policy, report.judge.id, selective=selective, target=target, risk=risk,
                                    cascade=cascade)
        if request is None:
            return report, None
        report, chosen = with_guarantee(store, golden_set, rubric, report, request, run=run)
        return report, chosen.sentence
    return guarantee


def policy_guarantee(store: Store, golden_set: str, rubric: str, *, run: str | None = None):
    """report -> the report whose verdict also holds the check of the guarantee its policy asks for (unchanged
    without a selective section): what ``compare`` and the pages complete each verdict with, as ``calibrate``
    does."""
    card = card_guarantee(store, golden_set, rubric, run=run)
    return lambda report: card(report)[0]


def kept_confusion(store: Store, golden_set: str, rubric: str, judge: str, kept: tuple[str, ...],
                   run: str | None = None) -> dict:
    """The confusion matrix (rows consensus, columns judge, in scale order) on the kept calibration items: what
    ``grade`` corrects a selective bundle's pass rate with, since the judge's TPR and TNR on the items it keeps
    are not those on all items."""
    scope = resolve_ref(store, golden_set, rubric, judge, run)
    values = list(scope.rubric.rubric.scale.values)
    resolved = consensus(store, golden_set, scope.rubric.name).resolved
    verdict = judge_items(store, golden_set, rubric, judge, run).verdict
    matrix = [[0] * len(values) for _ in values]
    for i in kept:
        matrix[values.index(resolved[i])][values.index(verdict[i])] += 1
    return {"labels": values, "matrix": matrix}
