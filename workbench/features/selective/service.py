"""Calibrating a judge's confidence threshold (and a cascade of judges) against the human consensus.

Agreement is exact agreement, the report's ``exact_agreement``: the judge's verdict (repeat 0 of the calibrated
run, as ``calibrate`` reads it) equals the item's consensus label (``calibration.golden_sets.consensus``: the
adjudicated label, else the strict majority; unresolved items are left out). An item's confidence is the one
stored with that judgment; where none is stored and the run has two or more repeats of the item, the share of
its repeats that give the verdict's score. An item with neither is never kept (the judge abstains on it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from workbench.calibration.gate import with_selective_check
from workbench.calibration.report import CalibrationReport
from workbench.calibration.versions import Context
from workbench.core.errors import InputError, NotFound
from workbench.core.policy import Policy, SelectivePolicy
from workbench.features.selective.records import (
    CascadeMethod,
    CascadeStage,
    SelectiveResult,
    SingleJudge,
)
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
    cost: dict[str, float | None]  # repeat 0's, the verdict's
    source: str  # 'stored', 'repeats', 'stored and repeats' or 'none'
    # what grading an item as calibrated costs: the verdict's judgment, and every repeat where the confidence is
    # the share of the repeats that agree (None where one of them has no recorded cost)
    grading_cost: dict[str, float | None] = field(default_factory=dict)
    repeats: int = 1  # the most repeats of an item in the run


def _missing(x: float | None) -> bool:
    """None, or NaN (pandas' empty cell)."""
    return x is None or math.isnan(x)


def judge_items(store: Store, golden_set: str, rubric: str, judge: str, run: str | None = None) -> JudgeItems:
    """The judge's verdicts on the golden set with a confidence for each (see the module's docstring)."""
    return items_of(Context.of(store, golden_set, rubric, run), judge, run)


def items_of(ctx: Context, judge: str, run: str | None = None) -> JudgeItems:
    """:func:`judge_items` on the command's context (its scope and judge data, read once)."""
    # numpy and scipy: loaded when computing
    from workbench.stats.selective import confidence_from_repeats

    scope = ctx.scope(judge, run)  # NAME, or NAME@vN as export pins it
    frame = ctx.judge_data(scope).judgments
    frame = frame[(frame["run_id"] == scope.chosen.id) & frame["score"].notna()]
    by_item: dict[str, list[int]] = {}
    verdict: dict[str, int] = {}
    stated: dict[str, float] = {}
    cost: dict[str, float | None] = {}
    spent: dict[str, list[float | None]] = {}
    for item, repeat, score, conf, usd in zip(frame["item_id"].tolist(), frame["repeat"].tolist(),
                                              frame["score"].tolist(), frame["confidence"].tolist(),
                                              frame["cost_usd"].tolist()):
        by_item.setdefault(item, []).append(int(score))
        spent.setdefault(item, []).append(None if _missing(usd) else float(usd))
        if repeat == 0:
            verdict[item] = int(score)
            cost[item] = None if _missing(usd) else float(usd)
            if not _missing(conf):
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
    grading = {i: cost[i] if i in stated or len(spent[i]) < 2 else
               (None if any(c is None for c in spent[i]) else sum(spent[i])) for i in verdict}
    return JudgeItems(judge, verdict, confidence, cost, source, grading,
                      max((len(r) for r in by_item.values()), default=1))


def calibrate_selective(store: Store, golden_set: str, rubric: str, judges: list[str], *, target: float | None,
                        risk: float | None, run: str | None = None) -> SelectiveResult:
    """The threshold of one judge, or the thresholds of a cascade chosen jointly (``stats.selective.cascade``),
    so that agreement on the kept items is >= ``target`` with probability >= 1 - ``risk``: a cascade's combined
    verdicts (each item graded by the first judge confident enough, the rest abstained), the risk held over the
    whole choice among its configurations and its judges alone."""
    return selective_of(Context.of(store, golden_set, rubric, run), judges, target=target, risk=risk)


def selective_of(ctx: Context, judges: list[str], *, target: float | None, risk: float | None) -> SelectiveResult:
    """:func:`calibrate_selective` on the command's context: ``ctx.run`` is the first judge's run."""
    target, risk = check_target_and_risk(target, risk)
    if not judges:
        raise InputError("no judge given", fix="name the judge with --judge J, or a cascade with --cascade J1,J2")
    run = ctx.run
    rv = ctx.scope(judges[0], run).rubric
    resolved = ctx.consensus(rv.name).resolved
    per_judge = [items_of(ctx, j, run if i == 0 else None) for i, j in enumerate(judges)]
    first = per_judge[0]
    ids = [i for i in first.verdict if i in resolved]  # the cascade sees every item its first judge graded
    if not ids:
        raise NotFound(f"judge '{judges[0]}' has no verdict on an item with a human consensus in golden set "
                       f"'{ctx.golden_set.name}'; label (or adjudicate) items it judged first")
    if all(math.isnan(first.confidence[i]) for i in ids) and len(judges) == 1:
        raise NoConfidence(f"judge '{judges[0]}' has no confidence on any item: a threshold needs one",
                         fix="import its judgments with a 'confidence' field (0..1), or run it with --repeats 2 "
                             "or more so the share of agreeing repeats serves as its confidence")
    if len(judges) == 1:
        return _single(first, ids, resolved, target, risk)
    costs, cost_source = _costs(ctx, per_judge, ids)
    return _cascade(per_judge, ids, resolved, target, risk, costs, cost_source)


def _single(ji: JudgeItems, ids: list[str], resolved: dict, target: float, risk: float) -> SelectiveResult:
    """One judge: fixed-sequence testing of its thresholds from high to low on every labeled item."""
    import numpy as np

    from workbench.stats.selective import choose_threshold

    conf = np.array([ji.confidence.get(i, math.nan) for i in ids], dtype=float)
    choice = choose_threshold(conf, np.array([ji.verdict.get(i) == resolved[i] for i in ids], dtype=bool),
                              target=target, risk=risk)
    keep = tuple(i for i, c in zip(ids, conf) if choice.threshold is not None and c >= choice.threshold)
    more = None if choice.guaranteed else choice.more_labels()
    result = SelectiveResult(
        threshold=choice.threshold, coverage=len(keep) / len(ids), agreement=choice.agreement,
        agreement_lower_bound=choice.lower_bound, target=target, risk=risk, n_calibration=len(ids),
        guaranteed=choice.guaranteed, sentence="", confidence_source=f"{ji.judge}: {ji.source}",
        n_without_confidence=int(np.isnan(conf).sum()), more_labels=more[0] if more else None,
        steps=tuple({"judge": ji.judge, "threshold": s.threshold, "n_kept": s.n_kept, "n_agree": s.n_agree,
                     "lower_bound": s.lower_bound, "passed": s.passed} for s in choice.steps),
        kept_by_judge=(keep,), more_labels_about=more[1] if more else None,
        openings=((choice.steps[0].n_kept, choice.steps[0].n_agree) if choice.steps else (0, 0),))
    opening = next((s for s in choice.steps if s.n_kept), None)
    return replace(result, sentence=selective_sentence(result, [ji.judge], more, opening))


def _costs(ctx: Context, per_judge: list[JudgeItems], ids: list[str]) -> tuple[list[float | None], str | None]:
    """Each judge's cost per item graded as calibrated (every repeat where its confidence comes from repeats): the
    mean recorded cost where every item has one, else the price table's estimate for its model on these items,
    else None (a cost is never guessed); and where they came from (None unless every judge has one)."""
    out: list[float | None] = []
    sources = []
    for n, ji in enumerate(per_judge):
        recorded = [ji.grading_cost.get(i) for i in ids if i in ji.verdict]
        if recorded and all(c is not None for c in recorded):
            out.append(sum(recorded) / len(recorded))
            sources.append("recorded")
            continue
        out.append(_estimated_cost(ctx, ji, ids, ctx.run if n == 0 else None))
        sources.append("estimated")
    if any(c is None for c in out):
        return out, None
    return out, (sources[0] if len(set(sources)) == 1 else
                 ", ".join(f"{ji.judge}: {s}" for ji, s in zip(per_judge, sources)))


def _estimated_cost(ctx: Context, ji: JudgeItems, ids: list[str], run: str | None) -> float | None:
    """The price table's estimate of one item's grading (``judge run --dry-run``'s, on these items, with the
    repeats its confidence needs), or None where the model has no price."""
    from workbench.judges.runner import estimate_run

    scope = ctx.scope(ji.judge, run)
    wanted = set(ids)
    items = [it for it in ctx.items() if it.id in wanted]
    if not items:
        return None
    repeats = ji.repeats if "repeats" in ji.source else 1
    e = estimate_run(items, scope.rubric.rubric, scope.rubric.rubric.judge(ji.judge), repeats=repeats)
    return None if e.cost_usd is None else e.cost_usd / len(items)


def _cascade(per_judge: list[JudgeItems], ids: list[str], resolved: dict, target: float, risk: float,
             costs: list[float | None], cost_source: str | None) -> SelectiveResult:
    """A cascade's thresholds chosen jointly (learn then test), its judges' shares, the guarantee and the cost."""
    import numpy as np

    from workbench.stats.selective import choose_cascade, choose_threshold, route

    judges = [ji.judge for ji in per_judge]
    conf = np.array([[ji.confidence.get(i, math.nan) for ji in per_judge] for i in ids], dtype=float)
    agree = np.array([[ji.verdict.get(i) == resolved[i] for ji in per_judge] for i in ids], dtype=bool)
    known = cost_source is not None  # every judge has a cost: the pick weighs them
    choice = choose_cascade(conf, agree, target=target, risk=risk, cost=np.array(costs) if known else None,
                            seed=CASCADE_SEED)
    alone = [choose_threshold(conf[:, j], agree[:, j], target=target, risk=risk) for j in range(len(judges))]
    n = len(ids)
    stage = route(conf, choice.thresholds) if choice.guaranteed else np.full(n, -1)
    kept_by_judge = tuple(tuple(i for i, s in zip(ids, stage) if s == j) for j in range(len(judges)))
    stages = []
    for j, ji in enumerate(per_judge):
        graded, reached = len(kept_by_judge[j]), choice.reached_by[j] if choice.guaranteed else 0
        agreeing = choice.agree_by[j] if choice.guaranteed else 0
        stages.append(CascadeStage(ji.judge, choice.thresholds[j] if choice.guaranteed else None,
                                   graded / reached if reached else 0.0, graded / n, graded,
                                   agreeing / graded if graded else None, costs[j]))
    more = None if choice.guaranteed else choice.more_labels()
    interval = choice.interval()
    spent = choice.cost_per_item if choice.guaranteed else None
    single = choice.single_judge
    result = SelectiveResult(
        threshold=choice.thresholds[0] if choice.guaranteed else None, coverage=choice.coverage,
        agreement=choice.agreement, agreement_lower_bound=choice.lower_bound, target=target, risk=risk,
        n_calibration=n, guaranteed=choice.guaranteed, sentence="",
        confidence_source=", ".join(f"{ji.judge}: {ji.source}" for ji in per_judge),
        n_without_confidence=int(np.isnan(conf[:, 0]).sum()), more_labels=more[0] if more else None,
        cascade=tuple(stages),
        cost_per_graded_item=(spent / choice.coverage) if spent is not None and choice.coverage else None,
        cost_last_judge_alone=costs[-1],
        steps=tuple({"thresholds": list(s.thresholds), "n_kept": s.n_kept, "n_agree": s.n_agree,
                     "lower_bound": s.lower_bound, "passed": s.passed} for s in choice.steps),
        abstained_share=1 - choice.coverage,
        agreement_interval=None if interval is None else {
            "low": interval[0], "high": interval[1], "level": 1 - 2 * risk, "n_kept": choice.n_test_kept,
            "n_agree": choice.n_test_agree, "on": "testing items"},
        cost_per_1000_items=None if spent is None else 1000 * spent, cost_source=cost_source,
        single_judges=tuple(SingleJudge(ji.judge, a.threshold, a.coverage, a.guaranteed)
                            for ji, a in zip(per_judge, alone)),
        recommended_judge=judges[single] if single is not None else None,
        method=CascadeMethod(choice.n_order, choice.n_test, choice.n_candidates, choice.n_path, len(choice.steps),
                             CASCADE_SEED),
        kept_by_judge=kept_by_judge, more_labels_about=more[1] if more else None,
        openings=tuple((a.steps[0].n_kept, a.steps[0].n_agree) if a.steps else (0, 0) for a in alone))
    first = choice.steps[0] if choice.steps and choice.steps[0].n_kept else None
    return replace(result, sentence=cascade_sentence(result, judges, more, first))


#: The seed of the split of a cascade's labeled items into ordering and testing parts (fixed: the same labels
#: always give the same thresholds).
CASCADE_SEED = 0


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


def _usd(x: float) -> str:
    return f"${x:,.2f}" if x >= 0.1 else f"${x:.2g}"


def cascade_sentence(r: SelectiveResult, judges: list[str], more: tuple[int, int | None] | None,
                     first=None) -> str:
    """The one sentence the text output and the card say of a cascade: what each judge grades, the abstained
    share, the agreement and its bound, the cost of 1,000 items; or the judge alone no cascade beats; or the labels
    still needed."""
    who = "the cascade " + " -> ".join(f"'{j}'" for j in judges)
    conf = _pct(1 - r.risk)
    per_1000 = (f", at {_usd(r.cost_per_1000_items)} per 1,000 items ({r.cost_source})"
                if r.cost_per_1000_items is not None else "")
    on_test = f" on the {r.agreement_interval['n_kept']} testing items it keeps" if r.agreement_interval else ""
    beaten = [s for s in r.single_judges if s.guaranteed and s.coverage > r.coverage + 1e-12]
    aside = (f"; tested alone, '{beaten[0].judge}' keeps more ({beaten[0].coverage:.0%}), since the cascade's test "
             f"holds the risk over its whole choice on {r.method.n_test} of the {r.n_calibration} items"
             if beaten and r.method else "")
    if r.guaranteed and r.recommended_judge is not None:
        stage = next(s for s in r.cascade if s.judge == r.recommended_judge)
        return (f"No cascade of {who[12:]} covers more than judge '{stage.judge}' alone at {_pct(r.target)} "
                f"agreement with {conf} confidence: grade with '{stage.judge}' alone (confidence >= "
                f"{stage.threshold:.3g}), which keeps {r.coverage:.0%} of the {r.n_calibration} labeled items and "
                f"agrees with the human consensus on {r.agreement:.1%} of them (lower bound "
                f"{r.agreement_lower_bound:.3f}{on_test}){per_1000}{aside}.")
    if r.guaranteed:
        shares = ", ".join(f"'{s.judge}' {s.share_of_items:.0%}" for s in r.cascade if s.threshold is not None)
        alone = (f", against {_usd(1000 * r.cost_last_judge_alone)} for '{judges[-1]}' alone"
                 if per_1000 and r.cost_last_judge_alone is not None else "")
        return (f"{who[:1].upper() + who[1:]} (thresholds "
                + ", ".join("skipped" if s.threshold is None else f"{s.threshold:.3g}" for s in r.cascade)
                + f") grades {r.coverage:.0%} of the {r.n_calibration} labeled items ({shares}; "
                f"{r.abstained_share:.0%} abstained) and agrees with the human consensus on {r.agreement:.1%} of "
                f"them; with {conf} confidence its agreement there is at least {_pct(r.target)} (lower bound "
                f"{r.agreement_lower_bound:.3f}{on_test}){per_1000}{alone}{aside}.")
    at_least, about = more or (1, None)
    head = (f"No thresholds of {who} reach {_pct(r.target)} agreement with the human consensus with {conf} "
            f"confidence on these {r.n_calibration} labeled items")
    if about is None and first is not None:
        return (f"{head}: on the {first.n_kept} testing items of the first configuration tested it agrees on "
                f"{first.n_agree} ({first.n_agree / first.n_kept:.0%}), not above the target, so more labels alone "
                f"will not give the guarantee.")
    return (f"{head}: at least {at_least} more labeled items would be needed, about {about} if its agreement on "
            f"the first configuration tested holds.")


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
    twice = next((j for n, j in enumerate(judges) if j and j in judges[:n]), None)
    if twice is not None:
        raise InputError(f"--cascade names judge '{twice}' twice ('{cascade}')",
                         fix="give two or three different judges, in order, e.g. --cascade cheap-judge,strong-judge")
    if not 2 <= len(judges) <= 3 or not all(judges):
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


def with_guarantee(ctx: Context, report: CalibrationReport,
                   request: SelectivePolicy) -> tuple[CalibrationReport, SelectiveResult]:
    """The report whose verdict also holds the gate's "selective guarantee" check (``gate.selective_check``), and
    the threshold chosen: what ``calibrate`` shows and ``export`` decides by when a guarantee is asked for. The
    threshold is chosen on the command's context, the consensus and judge data the report was computed on."""
    judges = judges_of_request(request, report.judge.id)
    try:
        chosen = selective_of(ctx, judges, target=request.target_agreement, risk=request.risk)
    except (NoConfidence, NotFound) as e:  # no threshold to test: the check waits for confidences or labels
        chosen = SelectiveResult(None, 0.0, None, None, request.target_agreement, request.risk, 0, False,
                                 f"No selective guarantee yet: {e}", "none")
    return report.but(verdict=with_selective_check(report.verdict, chosen)), chosen


def bundle_section(ctx: Context, judge: str, chosen: SelectiveResult) -> dict:
    """The bundle's ``selective`` section for a guarantee that holds: the threshold and its guarantee, the confusion
    on the items the (first) judge keeps, and for a cascade each judge's threshold, coverage and share of items."""
    section = {"threshold": chosen.threshold, "target": chosen.target, "risk": chosen.risk,
               "coverage": chosen.coverage, "agreement": chosen.agreement,
               "agreement_lower_bound": chosen.agreement_lower_bound, "n_calibration": chosen.n_calibration,
               "confidence_source": chosen.confidence_source, "sentence": chosen.sentence,
               "confusion": kept_confusion(ctx, judge, chosen.kept_by_judge[0], ctx.run)}
    if chosen.cascade:  # each judge's confusion on the items it keeps: grade corrects a cascade with their sum
        section["cascade"] = [{**s.to_json(), "confusion": kept_confusion(ctx, s.judge, kept,
                                                                          ctx.run if n == 0 else None)}
                              for n, (s, kept) in enumerate(zip(chosen.cascade, chosen.kept_by_judge))]
        section["cost_per_graded_item"] = chosen.cost_per_graded_item
        section["cost_last_judge_alone"] = chosen.cost_last_judge_alone
        section["cost_per_1000_items"] = chosen.cost_per_1000_items
        section["abstained_share"] = chosen.abstained_share
        section["recommended_judge"] = chosen.recommended_judge
    return section


def gate_and_section(ctx: Context, report: CalibrationReport,
                     request: SelectivePolicy) -> tuple[CalibrationReport, dict | None]:
    """``export_bundle``'s ``guarantee``: (context, report, request) -> (the report with the selective check, the
    bundle's section or None)."""
    report, chosen = with_guarantee(ctx, report, request)
    return report, bundle_section(ctx, report.judge.id, chosen) if chosen.guaranteed else None


def card_guarantee(ctx: Context, *, selective: bool = False, target: float | None = None,
                   risk: float | None = None, cascade: str | None = None):
    """``write_card``'s ``guarantee``: report -> (the report with the selective check, the guarantee's sentence), or
    (the report, None) when no guarantee is asked for (no flags, no policy section)."""
    def guarantee(report: CalibrationReport) -> tuple[CalibrationReport, str | None]:
        request = selective_request(report.policy, report.judge.id, selective=selective, target=target, risk=risk,
                                    cascade=cascade)
        if request is None:
            return report, None
        report, chosen = with_guarantee(ctx, report, request)
        return report, chosen.sentence
    return guarantee


def policy_guarantee(ctx: Context):
    """report -> the report whose verdict also holds the check of the guarantee its policy asks for (unchanged
    without a selective section): what ``compare`` and the pages complete each verdict with, as ``calibrate``
    does."""
    card = card_guarantee(ctx)
    return lambda report: card(report)[0]


def kept_confusion(ctx: Context, judge: str, kept: tuple[str, ...], run: str | None = None) -> dict:
    """The confusion matrix (rows consensus, columns judge, in scale order) on the kept calibration items: what
    ``grade`` corrects a selective bundle's pass rate with, since the judge's TPR and TNR on the items it keeps
    are not those on all items."""
    scope = ctx.scope(judge, run)
    values = list(scope.rubric.rubric.scale.values)
    resolved = ctx.consensus(scope.rubric.name).resolved
    verdict = items_of(ctx, judge, run).verdict
    matrix = [[0] * len(values) for _ in values]
    for i in kept:
        matrix[values.index(resolved[i])][values.index(verdict[i])] += 1
    return {"labels": values, "matrix": matrix}
