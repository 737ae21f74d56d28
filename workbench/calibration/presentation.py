"""How a calibration report reads: rows, sentences and text of a :class:`~workbench.calibration.report.CalibrationReport`.

The one place that renders the typed report. The CLI prints :func:`report_text` and :func:`compare_text`, the
card writes :func:`card_sections`, and the pages lay the same rows out as dataframes (charts: ``charts.py``, over
the same rows), so the numbers, denominators and words of the three front ends never disagree.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from workbench.calibration.gate import FAILED, HEADLINE, PASSED, STATUS_MARK, UNDECIDED, fmt_p, leniency
from workbench.calibration.report import CalibrationReport, Comparison, Drift, Probes
from workbench.core.scale import fmt, fmt_usd

#: Metrics in the order people read them.
METRIC_ORDER = ("krippendorff_alpha_ordinal", "cohen_kappa_quadratic", "cohen_kappa_linear", "cohen_kappa",
                "gwet_ac2_linear", "exact_agreement", "spearman", "mean_signed_error", "tpr", "tnr")
#: Who counts in each proportion's denominator.
DENOMINATOR_WORDS = {"exact_agreement": "items", "tpr": "consensus passes", "tnr": "consensus fails"}
INTERVAL_WORDS = {"wilson": "Wilson score", "wilson_jeffreys": "Wilson and Jeffreys score",
                  "bca": "BCa bootstrap", "percentile": "percentile bootstrap", "studentized": "studentized bootstrap"}
#: Interval methods computed in closed form on a proportion's effective count: no resamples to report.
CLOSED_FORM = frozenset({"wilson", "wilson_jeffreys"})


@dataclass(frozen=True, slots=True)
class MetricRow:
    """A metric with its 95% interval; ``n`` is a proportion's denominator, ``note`` why the value is undefined."""

    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    note: str | None


def metric_table(report: CalibrationReport) -> list[MetricRow]:
    """One row per metric, in :data:`METRIC_ORDER` and then the report's own order."""
    metrics = report.metrics
    rows = []
    for name in METRIC_ORDER + tuple(k for k in metrics if k not in METRIC_ORDER):
        m = metrics.get(name)
        if m is None:
            continue
        rows.append(MetricRow(name, m.value, m.ci_low, m.ci_high, m.n, report.metric_reasons.get(name)))
    return rows


def metric_rows(report: CalibrationReport) -> list[dict[str, Any]]:
    """:func:`metric_table` as dicts (metric, value, ci_low, ci_high, n, note), for dataframes and charts."""
    return [asdict(r) for r in metric_table(report)]


def interval_method(report: CalibrationReport, metric: str) -> str | None:
    """'wilson, n = consensus passes', 'bca', ...: how the metric's interval was made (None if not recorded)."""
    method = report.bootstrap.intervals.get(metric)
    if method is None:
        return None
    return f"{method}, n = {DENOMINATOR_WORDS[metric]}" if metric in DENOMINATOR_WORDS else method


def interval_sentence(report: CalibrationReport) -> str:
    """How the intervals were made, in one sentence."""
    b = report.bootstrap
    methods = b.intervals
    other = next((methods[k] for k in methods if k not in DENOMINATOR_WORDS), "percentile")
    proportion = methods.get("tpr", "wilson")
    return (f"95% intervals: proportions (exact agreement, TPR, TNR) by the {INTERVAL_WORDS.get(proportion, proportion)} interval "
            f"on their effective number of items (the count over the cluster design effect, the level widened to "
            f"Student's t over the task clusters where several items share one); the other metrics by "
            f"the {INTERVAL_WORDS.get(other, other)} interval from {b.resamples} resamples of task clusters, "
            f"seed {b.seed}. n is the denominator: items for exact agreement, consensus passes for TPR, "
            "consensus fails for TNR.")


@dataclass(frozen=True, slots=True)
class CategoryRow:
    """A category: n, exact agreement with its interval, alpha, mean signed error, and whether it is weak.

    ``reason`` is None, or the sentence saying why the category has no interval (fewer items than the policy's
    ``min_category_items``).
    """

    category: str
    n: int
    exact_agreement: float | None
    ci_low: float | None
    ci_high: float | None
    alpha: float | None
    mean_signed_error: float | None
    vs_rest: float | None
    weaker: bool
    reason: str | None


def category_table(report: CalibrationReport) -> list[CategoryRow]:
    """One row per category of the report."""
    rows = []
    for name, c in report.per_category.items():
        ea, w = c.exact_agreement, c.worse_than_rest
        rows.append(CategoryRow(name, c.n_items, ea.value if ea else None, ea.ci_low if ea else None,
                                ea.ci_high if ea else None,
                                c.krippendorff_alpha_ordinal.value if c.krippendorff_alpha_ordinal else None,
                                c.mean_signed_error.value if c.mean_signed_error else None,
                                w.difference if w else None, c.weaker, c.reason))
    return rows


def category_rows(report: CalibrationReport) -> list[dict[str, Any]]:
    """:func:`category_table` as dicts keyed by the field names, for dataframes and charts."""
    return [asdict(r) for r in category_table(report)]


@dataclass(frozen=True, slots=True)
class SelfPreferenceRow:
    """A self-preference effect with its interval, items and OLS p-value; ``note`` says why it is not measurable."""

    effect: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    ols_p: str | None
    note: str | None


def self_preference_rows(report: CalibrationReport) -> list[SelfPreferenceRow]:
    return [SelfPreferenceRow(name, e.value, e.ci_low, e.ci_high, e.n,
                              fmt_p(e.p_value) if e.p_value is not None else None,
                              None if e.value is not None else e.reason)
            for name, e in report.self_preference.effects().items()]


def leniency_sentence(report: CalibrationReport) -> str | None:
    """'the judge is lenient: it scores 0.34 higher ...' when the signed error's interval excludes 0 (gate.leniency)."""
    m = report.metric("mean_signed_error")
    direction = leniency(m)
    if direction is None:
        return None
    return (f"the judge is **{direction}**: it scores {abs(m.value):.2f} {'higher' if direction == 'lenient' else 'lower'} "
            f"than the consensus on average (interval {fmt(m.ci_low, 2)} to {fmt(m.ci_high, 2)})")


def drift_sentence(drift: Drift | None) -> str | None:
    if not drift:
        return None
    versions = drift.model_versions
    baseline, candidate = (versions.baseline, versions.candidate) if versions else (None, None)
    return (f"Drift from run `{drift.baseline_run}` to `{drift.run}`: flip rate "
            f"{fmt(drift.flip_rate, 2)}, Stuart-Maxwell p = "
            f"{fmt_p(drift.stuart_maxwell.p_value if drift.stuart_maxwell else None)}"
            f", model versions {', '.join(baseline or ['unknown'])} -> {', '.join(candidate or ['unknown'])}.")


@dataclass(frozen=True, slots=True)
class DriftRow:
    """A metric's change from the run before, with its interval."""

    metric: str
    change: float | None
    ci_low: float | None
    ci_high: float | None


def drift_rows(drift: Drift) -> list[DriftRow]:
    return [DriftRow(k, m.value, m.ci_low, m.ci_high) for k, m in drift.deltas.items()]


@dataclass(frozen=True, slots=True)
class AltTestRow:
    """A rater of the alternative-annotator test: items, the one-sided p-value, and whether the judge is at least
    as good as this rater (the test's null hypothesis rejected after the Benjamini-Yekutieli correction).

    'rejected' reads as a failure to most people; the row says what it means for the judge instead.
    """

    rater: str
    n: int
    p: str | None
    judge_as_good: bool
    advantage_probability: float | None


def alt_test_rows(report: CalibrationReport) -> list[AltTestRow]:
    alt = report.alt_test
    return [AltTestRow(r.rater, r.n_items, fmt_p(r.p_value) if r.p_value is not None else None, bool(r.rejected),
                       r.advantage_probability)
            for r in (alt.raters if alt else ())]


def noise_floor_sentence(report: CalibrationReport) -> str | None:
    """'With 141 items a difference in alpha smaller than 0.06 cannot be told apart; ...' (None if undefined)."""
    floor = report.noise_floor
    nf = floor.metrics.get("krippendorff_alpha_ordinal") if floor else None
    if nf is None or nf.min_detectable_difference is None:
        return None
    more = nf.additional_items
    return (f"With {report.n_items} items a difference in alpha smaller than {nf.min_detectable_difference:.2f} "
            "cannot be told apart"
            + (f"; about {more} more labeled items would narrow its interval to {floor.target_width}." if more else "."))


def failed_names(report: CalibrationReport) -> list[str]:
    """The names of the gate's checks the judge failed."""
    return [c.name for c in report.verdict.failed] if report.verdict else []


def estimate_sentence(e: Any) -> str:
    """What a judge run would cost (a ``judging.Estimate``), in the same words on the CLI's dry run and the Judges page."""
    worst = f", at most {fmt_usd(e.max_cost_usd)}" if e.max_cost_usd is not None and e.cost_usd is not None else ""
    return (f"{e.n_to_run} of {e.n_planned} judgments to run ({e.n_done} already done); about "
            f"{e.input_tokens:,} input and {e.output_tokens:,} output tokens; estimated cost "
            f"{fmt_usd(e.cost_usd, unknown='unknown (no price for this model)')}{worst}"
            f"{' at batch prices' if e.batch else ''}")


# -- the verdict in one plain sentence ------------------------------------------------------------------------------

#: Plain names of the agreement metrics a policy may choose (``core.policy.AGREEMENT_METRICS``).
METRIC_WORDS = {"krippendorff_alpha_ordinal": "Krippendorff's alpha", "cohen_kappa": "Cohen's kappa",
                "cohen_kappa_linear": "weighted kappa (linear)", "cohen_kappa_quadratic": "weighted kappa (quadratic)",
                "gwet_ac2_linear": "Gwet's AC2", "exact_agreement": "exact agreement", "spearman": "Spearman correlation"}


def use_sentence(report: CalibrationReport) -> str:
    """The gate's verdict as one sentence a lead reads first: 'Use J to grade R: yes.', '...: no — <the first
    failed check, with its number>.' or '...: not decided yet — <check> needs about N more labels.'

    Decided by the gate only (``report.verdict``, the object ``calibrate --json`` prints): the same state and the
    same check as the CLI and the card, in plainer words."""
    v = report.verdict
    head = f"Use {report.judge.id} to grade {report.rubric.name}:"
    if v is None:
        return f"{head} not decided yet — the gate has not judged it."
    if v.state == PASSED:
        return f"{head} yes."
    if v.state == FAILED:
        return f"{head} no — {_failed_phrase(v.failed[0], report.policy.agreement_metric)}."
    # the check furthest from a decision says when the verdict can be known; a check on its bound says so
    open_checks = sorted(v.undecided, key=lambda c: (c.more_items is None, -(c.more_items or 0)))
    c = open_checks[0]
    if c.more_items:
        return f"{head} not decided yet — {c.name} needs about {c.more_items} more label{'s' * (c.more_items != 1)}."
    return f"{head} not decided yet — {c.name}: {c.reason.rstrip('.')}."


def unavailable_sentence(judge: str, rubric: str, why: str) -> str:
    """The verdict sentence of a judge that cannot be calibrated (never run, nothing labeled): not decided, and why."""
    return f"Use {judge} to grade {rubric}: not decided yet — {why.split(';')[0].rstrip('.')}."


def _failed_phrase(c: Any, agreement_metric: str) -> str:
    """A failed check as a short clause with its number; the gate's own reason where no plainer one is known."""
    v, t = c.value, c.threshold
    try:
        if c.id == "agreement":
            return (f"its agreement with the humans ({METRIC_WORDS.get(agreement_metric, agreement_metric)}) is "
                    f"{v['value']:.2f}, below the {t} needed")
        if c.id == "pass_fail":
            for key, kind in (("tnr", "fail"), ("tpr", "pass")):
                part = v[key]
                if part.get("state") == FAILED:
                    bound = t[f"min_{key}_lower"]
                    return (f"it {kind}s only {part['value']:.0%} of the answers the humans {kind} "
                            f"(at least {bound:.0%} needed)")
        if c.id == "as_good_as_human":
            return (f"it agrees with the reviewers less than they agree with each other ({v['judge_human']:.2f} "
                    f"against {v['human_human']:.2f})")
        if c.id == "self_preference":
            for key, whose in (("same_family", "its own model family"), ("same_model", "its own model")):
                part = v[key]
                if part.get("state") == FAILED:
                    way = "favours" if part["value"] > 0 else "is harsh on"
                    return (f"it {way} {whose} by {abs(part['value']):.2f} points against the humans (at most {t} "
                            "allowed)")
        if c.id == "stable":
            return f"its score changes between repeats on {v:.0%} of items (at most {t:.0%} allowed)"
        if c.id == "complete":
            return f"{v:.0%} of its judgments have no score (at most {t:.0%} allowed)"
        if c.id == "no_drift" and v.get("agreement_delta") is not None:
            return (f"its latest run moved from the run before (agreement changed by "
                    f"{v['agreement_delta']:+.2f})")
    except (KeyError, TypeError, AttributeError, ValueError):  # a check's value of another shape: its own words
        pass
    return f"{c.name}: {c.reason.rstrip('.')}"


# -- text of the CLI -------------------------------------------------------------------------------------------------

#: How a terminal may colour a verdict's headline, by its state.
TONE = {PASSED: "pass", FAILED: "fail", UNDECIDED: "warn"}


class Line(NamedTuple):
    """A line of the CLI's report; ``tone`` ('pass', 'fail', 'warn') is how a terminal may colour it."""

    text: str
    tone: str | None = None
    bold: bool = False


def report_text(r: CalibrationReport) -> list[Line]:
    """``workbench calibrate`` without --json: the headline, the tables and the gate, line by line."""
    v = r.verdict
    state = v.state if v else FAILED
    out = [Line(f"{HEADLINE[state]}: judge {r.judge.id} ({r.judge.model}) on golden "
                f"set {r.golden_set.name} v{r.golden_set.version}, rubric {r.rubric.name} v{r.rubric.version}, run "
                f"{r.run.name}", TONE[state], True)]
    if v:
        out.append(Line(v.summary(), TONE[state]))
    out += [
           Line(f"{r.n_items} items with consensus and judge score; {r.n_unresolved} unresolved; "
                f"{r.n_unscored} unscored" + _excluded_note(r)),
           Line("\nmetric                        value   95% interval        n")]
    for m in metric_table(r):
        out.append(Line(f"  {m.metric:28s}{fmt(m.value):>7}   {fmt(m.ci_low)} to {fmt(m.ci_high):7s}"
                        f"{m.n if m.n is not None else '':>6}"))
    out.append(Line(interval_sentence(r)))
    cats = category_table(r)
    if cats:
        out.append(Line("\ncategory                          n   exact   95% interval"))
        for c in cats:
            out.append(Line(f"  {c.category[:28]:28s}{c.n:>5}   {fmt(c.exact_agreement)}   "
                            + (f"{fmt(c.ci_low)} to {fmt(c.ci_high)}" if c.reason is None else
                               f"no interval: {c.reason}")
                            + ("   weaker than the rest" if c.weaker else "")))
    hc = r.human_ceiling
    out.append(Line(f"\nhumans: alpha {fmt(hc.krippendorff_alpha_ordinal)}, human-human pairwise agreement "
                    f"{fmt(hc.human_pairwise_agreement)}, judge-human {fmt(hc.judge_human_pairwise_agreement)}"))
    if a := r.alt_test:
        out.append(Line(f"alt-test: winning rate {fmt(a.winning_rate)}, advantage probability "
                        f"{fmt(a.advantage_probability)} (epsilon {a.epsilon}, {a.metric})"))
    if floor := noise_floor_sentence(r):
        out.append(Line(f"noise floor: {floor}"))
    for e in self_preference_rows(r):
        name = e.effect.replace("_", "-")
        out.append(Line(f"{name} effect: {fmt(e.value)} ({fmt(e.ci_low)} to {fmt(e.ci_high)}), "
                        f"n = {e.n}, OLS p = {e.ols_p or 'n/a'}" if e.value is not None else
                        f"{name} effect: not measurable ({e.note})"))
    if drift := drift_sentence(r.drift):
        out.append(Line(drift.replace("`", "")))
    out.append(Line("\ngate:"))
    for c in (v.checks if v else ()):
        mark = STATUS_MARK[c.status]
        out.append(Line(f"  [{mark}] {c.name}: {c.message}", {"FAIL": "fail", "WARN": "warn", "UNDECIDED": "warn"}
                        .get(mark)))
    return out


def verdict_cell(report: CalibrationReport) -> str:
    """'calibrated', 'not calibrated: ' and the checks it failed, or 'not decided yet: ' and the open checks."""
    v = report.verdict
    if v is None or v.state == FAILED:
        return "not calibrated: " + ", ".join(failed_names(report))
    if v.state == UNDECIDED:
        return "not decided yet: " + ", ".join(c.name for c in v.undecided)
    return "calibrated"


@dataclass(frozen=True, slots=True)
class CompareRow:
    """A judge of a comparison: verdict, agreement with its interval, cost and the other headline numbers;
    ``reasons`` are its blocking checks as 'check: reason'."""

    judge: str
    calibrated: bool
    state: str | None
    verdict: str
    alpha: float | None
    alpha_low: float | None
    alpha_high: float | None
    exact: float | None
    mean_signed_error: float | None
    tpr: float | None
    tnr: float | None
    same_family: float | None
    flip_rate: float | None
    cost_per_100_usd: float | None
    reasons: list[str]


def compare_table(result: Comparison) -> list[CompareRow]:
    """One row per judge (the CLI's table and the Compare page's)."""
    rows = []
    for r in result.judges:
        a = r.metric("krippendorff_alpha_ordinal")
        family = r.self_preference.same_family
        rows.append(CompareRow(
            r.judge.id, r.calibrated, r.verdict.state if r.verdict else None, verdict_cell(r), a.value, a.ci_low,
            a.ci_high, r.metric("exact_agreement").value, r.metric("mean_signed_error").value, r.metric("tpr").value,
            r.metric("tnr").value, family.value if family else None, r.noise.flip_rate if r.noise else None,
            r.cost.per_100_items_usd,
            [f"{c.name}: {c.reason}" for c in (r.verdict.checks if r.verdict else ()) if c.blocking]))
    return rows


def compare_rows(result: Comparison) -> list[dict[str, Any]]:
    """:func:`compare_table` as dicts keyed by the field names, for the pages' charts."""
    return [asdict(r) for r in compare_table(result)]


def compare_text(result: Comparison) -> list[str]:
    """``workbench compare`` without --json: a row per judge, then each difference from the best."""
    # "signed err" is the mean *signed* error (judge minus consensus; > 0 is lenient), not a squared error.
    lines = [f"{'judge':18s}{'alpha':>7}  {'interval':15s}{'exact':>7}{'signed err':>12}{'TPR':>6}{'TNR':>6}"
             f"{'family':>8}{'flips':>7}{'$/100':>9}  verdict"]
    rows = compare_table(result)
    for r in rows:
        signed = r.mean_signed_error
        lines.append(f"{r.judge:18s}{fmt(r.alpha, 2):>7}  {fmt(r.alpha_low, 2)}-{fmt(r.alpha_high, 2):10s}"
                     f"{fmt(r.exact, 2):>7}{'n/a' if signed is None else f'{signed:+.2f}':>12}"
                     f"{fmt(r.tpr, 2):>6}{fmt(r.tnr, 2):>6}{fmt(r.same_family, 2):>8}"
                     f"{fmt(r.flip_rate, 2):>7}{fmt_usd(r.cost_per_100_usd):>9}  {r.verdict}")
    for r in rows:  # the numbers behind each verdict that is not 'calibrated'
        lines += [f"{r.judge}, {reason}" for reason in r.reasons]
    for d in result.differences:
        lines.append(f"{d.judge} vs {d.baseline}: alpha difference {fmt(d.value)} ({fmt(d.ci_low)} to "
                     f"{fmt(d.ci_high)}) {'significant' if d.significant else 'not significant'}")
    return lines


def probe_text(probes: Probes | None) -> list[str]:
    """``workbench probe``'s table: one row per probe with shift, flip and robustness rates and their intervals."""
    if not probes:
        return ["No probe has been run on this judge yet."]

    def cell(m: Any, signed: bool = False) -> str:
        f = (lambda x: "n/a" if x is None else f"{x:+.2f}" if signed else f"{x:.2f}")
        return f"{f(m.value)} [{f(m.ci_low)}, {f(m.ci_high)}]"

    lines = [f"Compared with the verdicts of run {probes.baseline_run} (95% paired cluster-bootstrap intervals):",
             f"{'probe':20s}{'n':>5}  {'mean shift':24s}{'flip rate':22s}{'robustness':22s}"
             f"{'vs consensus (signed err)':28s}moves?"]
    for e in probes.probes:
        moves = {"raises": "RAISES scores", "lowers": "LOWERS scores"}.get(e.moves, "no")
        lines.append(f"{e.probe:20s}{e.n_items:>5}  {cell(e.mean_shift, True):24s}{cell(e.flip_rate):22s}"
                     f"{cell(e.robustness_rate):22s}{cell(e.consensus_shift, True):28s}{moves}")
    return lines


# -- sections of the card ----------------------------------------------------------------------------------------------

def card_sections(r: CalibrationReport) -> list[tuple[str, list[str]]]:
    """(heading, Markdown lines) of the calibration card; shared by its Markdown and HTML formats."""
    v, gs = r.verdict, r.golden_set
    out = [("Verdict", [f"**{HEADLINE[v.state if v else FAILED]}**: judge `{r.judge.id}` "
                        f"(`{r.judge.model}`, {r.judge.mode}) on golden set `{gs.name}` version {gs.version} "
                        f"(`{gs.version_hash[:16]}`), rubric `{r.rubric.name}` v{r.rubric.version}, run "
                        f"`{r.run.name}`.", "", v.summary() if v else "", "", "| check | state | reason |",
                        "|---|---|---|"]
            + [f"| {c.name} | {c.state.replace('_', ' ')} | {c.message} |"
               for c in (v.checks if v else ())])]
    lines = [f"{r.n_items} items with a consensus label and a judge score ({r.n_unresolved} unresolved, "
             f"{r.n_unscored} unscored). {interval_sentence(r)}", "",
             "| metric | value | 95% interval | n |", "|---|---|---|---|"]
    lines += [f"| {m.metric} | {fmt(m.value)} | {fmt(m.ci_low)} to {fmt(m.ci_high)} | {m.n or ''} |"
              for m in metric_table(r)]
    out.append(("Agreement with the consensus", lines))
    lines = ["| category | n | exact agreement | 95% interval | alpha | mean signed error | weaker than the rest |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {c.category} | {c.n} | {fmt(c.exact_agreement)} | "
              + (f"{fmt(c.ci_low)} to {fmt(c.ci_high)}" if c.reason is None else f"none: {c.reason}")
              + f" | {fmt(c.alpha)} | {fmt(c.mean_signed_error)} | "
              f"{'yes' if c.weaker else 'no'} |" for c in category_table(r)]
    out.append(("Per category", lines))
    hc = r.human_ceiling
    lines = [f"Humans among themselves: Krippendorff's alpha {fmt(hc.krippendorff_alpha_ordinal)}, pairwise exact "
             f"agreement {fmt(hc.human_pairwise_agreement)}; judge with each human "
             f"{fmt(hc.judge_human_pairwise_agreement)} on the same items."]
    a = r.alt_test
    lines.append(f"Alternative-annotator test: winning rate {fmt(a.winning_rate)}, advantage probability "
                 f"{fmt(a.advantage_probability)} (epsilon {a.epsilon}, {a.metric}, {len(a.raters)} raters)"
                 if a else f"Alternative-annotator test: not run ({r.alt_test_reason}).")
    out.append(("Against the humans", lines))
    lines = [f"- {e.effect.replace('_', ' ')}: " + (f"{fmt(e.value)} ({fmt(e.ci_low)} to {fmt(e.ci_high)}), "
                                                    f"n = {e.n}, OLS p = {e.ols_p or 'n/a'}"
                                                    if e.value is not None else f"not measurable ({e.note})")
             for e in self_preference_rows(r)]
    out.append(("Self-preference", lines))
    lines = [noise_floor_sentence(r) or "The noise floor is undefined: the alpha interval could not be computed."]
    if r.noise:
        lines.append(f"Repeats: {r.noise.flip_rate:.0%} of items change score; pass^k {fmt(r.noise.pass_hat_k)}.")
    if sentence := drift_sentence(r.drift):
        lines.append(sentence)
    out.append(("Noise, drift and the noise floor", lines))
    if r.probes:
        out.append(("Stress probes", probe_card_lines(r.probes)))
    return out


def probe_card_lines(probes: Probes) -> list[str]:
    """Each probe against the calibrated run's verdicts: shift, flip rate, robustness, change against the humans."""
    lines = [f"Verdicts on perturbed items compared with run `{probes.baseline_run}` (paired cluster-bootstrap "
             "95% intervals); every probe should leave the human label unchanged.", "",
             "| probe | n | mean shift | flip rate | robustness | shift vs consensus | moves the judge |",
             "|---|---|---|---|---|---|---|"]
    for e in probes.probes:
        cells = [f"{fmt(m.value)} ({fmt(m.ci_low)} to {fmt(m.ci_high)})"
                 for m in (e.mean_shift, e.flip_rate, e.robustness_rate, e.consensus_shift)]
        lines.append(f"| {e.probe} | {e.n_items} | " + " | ".join(cells) + f" | {e.moves or 'no'} |")
    return lines


def _excluded_note(r: CalibrationReport) -> str:
    """'; without the labels of 'carl' (50)' when calibrate --exclude-rater left raters out."""
    left = r.evidence.excluded_raters if r.evidence else None
    if not left:
        return ""
    return "; without the labels of " + ", ".join(f"'{name}' ({n})" for name, n in left.items()) + " (--exclude-rater)"
