"""The gate: a policy turns a calibration report into a verdict with reasons (DESIGN section 6).

Pure: it reads the typed report's numbers (``report.CalibrationReport``, by
attribute) and the policy, and writes sentences a lead can act on. A check is *passed*, *failed*, a *warning* (inconclusive
evidence, or a category where the judge is worse: it does not block, and says
what would settle it), *not measurable* (a warning that does not block, said
plainly) or *not applicable* (e.g. no repeats to judge stability by).

The rules that front ends also show (is the judge lenient or harsh? did a run
drift?) are decided here, once: :func:`leniency`, :func:`drift_problems`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

from workbench.calibration.verdict import (  # noqa: F401 - the gate's vocabulary, read by every front end
    DECIDING, FAILED, HEADLINE, NOT_APPLICABLE, NOT_MEASURABLE, PASSED, STATUS_ICON, STATUS_MARK, UNDECIDED, WARNING,
    Check, Verdict)
from workbench.core.policy import (  # noqa: F401 - the policy the gate applies
    AGREEMENT_METRICS, POLICY_KEYS, POLICY_RANGES, PROBE_CHECK_MODES, Policy, load_policy, policy_from_dict)

if TYPE_CHECKING:  # the report module builds on Check, Verdict and Policy: the checks only read its attributes
    from workbench.calibration.report import CalibrationReport, Drift, Metric


def _num(x: Any) -> float | None:
    if x is None:
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def evaluate(report: CalibrationReport, policy: Policy) -> Verdict:
    """Every check of DESIGN section 6, in order, each with a sentence a lead can act on."""
    return Verdict((_evidence(report, policy), _agreement(report, policy), _pass_fail(report, policy),
                    _as_good_as_human(report, policy), _self_preference(report, policy), _categories(report, policy),
                    _stable(report, policy), _complete(report, policy), _no_drift(report, policy))
                   + _probes(report, policy) + _locates_failures(report, policy))


def _direction(low: Any, high: Any) -> str | None:
    low, high = _num(low), _num(high)
    if low is not None and low > 0:
        return "lenient"
    if high is not None and high < 0:
        return "harsh"
    return None


def leniency(mean_signed_error: Metric | None) -> str | None:
    """'lenient' or 'harsh' when the interval of the mean signed error excludes 0, else None.

    The one rule for calling a judge lenient or harsh, shown by the gate, the pages and the card.
    """
    m = mean_signed_error
    return None if m is None else _direction(m.ci_low, m.ci_high)


def drift_problems(drift: Drift | None, policy: Policy) -> list[str]:
    """Why a run moved from the one before (empty: it did not): the one drift rule, for the gate and the timeline."""
    if not drift:
        return []
    pval = _num(drift.stuart_maxwell.p_value if drift.stuart_maxwell else None)
    delta = _num(_value(drift.deltas.get(policy.agreement_metric)))
    problems = []
    if pval is not None and pval < policy.drift_min_p:
        problems.append(f"its score distribution changed (Stuart-Maxwell p = {fmt_p(pval)})")
    if delta is not None and delta < -policy.drift_max_agreement_drop:
        problems.append(f"{policy.agreement_metric} fell by {-delta:.2f}")
    return problems


def probe_moves(effect: dict[str, Any] | None) -> str | None:
    """'raises' or 'lowers' when the interval of a probe's mean shift excludes 0, else None.

    The one rule for "this perturbation moves the judge", shown by the gate, the Robustness tab and the card;
    ``effect`` is ``stats.probe_effect``'s result, read before the report exists.
    """
    shift = (effect or {}).get("mean_shift") or {}
    return {"lenient": "raises", "harsh": "lowers"}.get(_direction(shift.get("ci_low"), shift.get("ci_high")))


def _value(m: Metric | None) -> Any:
    return None if m is None else m.value


def fmt_p(p: float | None) -> str:
    """A p-value for people: two significant digits, scientific below 0.001 ('3.4e-14'), 'n/a' when missing."""
    p = _num(p)
    if p is None:
        return "n/a"
    if p == 0:
        return "< 1e-300"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}".rstrip("0").rstrip(".") if p < 1 else "1"


def evidence_needs(r: CalibrationReport, p: Policy) -> tuple[int, int, int, float]:
    """(items with a consensus, more such items needed, more multi-rated items needed, multi-rated share)."""
    ev = r.evidence
    n = int((ev.n_items if ev is not None else r.n_items) or 0)
    multi = int((ev.n_multi_rated if ev is not None else 0) or 0)
    need_items = max(0, p.min_items - n)
    # multi-rated items needed so that multi / max(n, min_items) reaches the share
    need_multi = max(0, math.ceil(p.min_multi_rated_share * max(n, p.min_items) - 1e-9) - multi)
    return n, need_items, need_multi, (multi / n if n else 0.0)


# -- the interval rule, once ------------------------------------------------------------------------------------------
# A check passes when its 95% interval clears the bound. Leads read the gate after every batch of labels, so a
# failure is decided only at the interim boundary (Haybittle-Peto: the interval widened to 99.9%); in between the
# check is undecided. The plan reads these same states (``services.planning``).

def _iv(low: float | None, high: float | None, signed: bool = False) -> str:
    f = (lambda x: "n/a" if x is None else f"{x:+.2f}") if signed else _f
    return f"[{f(low)}, {f(high)}]"


def _decide_lower_bound(value: float | None, low: float | None, high: float | None, bound: float) -> str:
    from workbench.stats.planning import threshold_decision

    state = threshold_decision(value, low, high, bound)
    return UNDECIDED if state is None else PASSED if state else FAILED


def _wide(value: float, low: float, high: float) -> tuple[float, float]:
    from workbench.stats.planning import widened_interval

    return widened_interval(value, low, high)


# -- labels to a decision: what "about N more labeled items would decide it" predicts -------------------------------
# The model (the truth an undecided estimate implies, and the path the estimate takes toward it) is pure statistics:
# ``stats.planning.items_to_decide``.

def _facing(value: float, low: float | None, high: float | None, bound: float) -> float | None:
    """The half-width of an interval on the side that faces ``bound`` (the side a decision moves past)."""
    if low is None or high is None:
        return None
    half = value - low if value >= bound else high - value
    return half if half > 0 else None


def _more_to_clear(value: float | None, se: float | None, n: int, bound: float, *,
                   failing: bool | None = None, half: float | None = None, selected: bool = True) -> int | None:
    """More items (of the check's kind) until the interval clears ``bound`` on the side the estimate is on: at 95%
    on the passing side, at the interim boundary on the failing one (``failing``: below ``bound`` unless said; said
    for a check that passes below its bound, such as an effect within +/-t).

    ``half`` is the interval's half-width on the side facing the bound (default 1.96 ``se``), so that the estimate's
    z-score is the one the gate decides on; ``selected``: the check is undecided because of that interval (then the
    truth is estimated as undecided estimates imply: ``stats.planning.items_to_decide``), not because of a count."""
    from workbench.stats.planning import INTERIM_LEVEL, items_to_decide, z_value

    if value is None or n <= 0 or not (half or se):
        return None
    z_pass, z_fail = z_value(0.95), z_value(INTERIM_LEVEL)
    above = True if failing is None else (value >= bound) != failing  # which side of the bound passes
    unit = (half / z_pass) if half else se
    z_now = (value - bound) / unit * (1 if above else -1)
    total = items_to_decide(z_now, n, z_pass, z_fail, selected=selected)
    return None if total is None else max(1, total - n)


def _more_for_proportion(value: float | None, low: float | None, high: float | None, n: int, bound: float,
                         min_items: int, deff: float) -> int | None:
    """More items of a proportion's denominator (consensus passes for TPR, fails for TNR) until the report's
    interval (Wilson on the effective count, ``deff`` included) clears ``bound``, and at least ``min_items`` in all;
    None when the estimate sits on the bound (more labels will hardly decide it)."""
    floor = max(min_items - n, 1)
    half = None if value is None else _facing(value, low, high, bound)
    if half is None:
        return floor
    more = _more_to_clear(value, None, max(n, 1), bound, half=half, selected=n >= min_items)
    return None if more is None else max(floor, more)


def se_from_interval(low: float | None, high: float | None) -> float | None:
    """The standard error a 95% interval implies under the normal approximation (None without an interval)."""
    from workbench.stats.planning import z_value

    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return None
    return (high - low) / (2 * z_value(0.95))


def metric_se(r: CalibrationReport, name: str) -> float | None:
    """The metric's standard error as the noise floor estimated it, else as its interval implies."""
    floor = r.noise_floor.metrics.get(name) if r.noise_floor else None
    if floor is not None and floor.se:
        return float(floor.se)
    m = r.metric(name)
    return se_from_interval(_num(m.ci_low), _num(m.ci_high))


def _decides(more: int | None) -> str:
    return (f"about {more} more labeled item{'s' * (more != 1)} would decide it" if more else
            "it sits on its bound, so more labels will hardly decide it")


def _below_sentence(what: str, value: float, low: float, high: float, bound: float, state: str,
                    more: int | None) -> str:
    """The sentence of a lower-bound check: number, interval, bound and what decides it."""
    head = f"{what} {_f(value)} {_iv(low, high)}"
    if state == PASSED:
        return f"{head} clears {bound} with 95% confidence."
    if state == FAILED:
        wide_high = _wide(value, low, high)[1]
        return f"{head} is below {bound} beyond doubt (even its 99.9% interval ends at {_f(wide_high)})."
    if value >= bound:
        return f"{head} does not yet clear {bound} with 95% confidence; {_decides(more)}."
    wide_high = _wide(value, low, high)[1]
    return (f"{head} is below {bound}, but not beyond doubt yet (a failure needs the 99.9% interval, now up to "
            f"{_f(wide_high)}, wholly below); {_decides(more)}.")


def _evidence(r: CalibrationReport, p: Policy) -> Check:
    n, need_items, need_multi, share = evidence_needs(r, p)
    ok = need_items == 0 and need_multi == 0
    reason = (f"{n} items have a consensus label and a judge score ({p.min_items} needed), {share:.0%} of them with "
              f"{p.min_raters_per_item}+ raters ({p.min_multi_rated_share:.0%} needed)"
              + ("." if ok else ": not enough evidence yet."))
    parts = []
    if need_items:
        parts.append(f"label {need_items} more item{'s' * (need_items != 1)} to reach {p.min_items} with a "
                     f"consensus and a judge score")
    if need_multi:
        parts.append(f"get {need_multi} more item{'s' * (need_multi != 1)} labeled by {p.min_raters_per_item} "
                     f"raters to reach {p.min_multi_rated_share:.0%}")
    if r.evidence and r.evidence.excluded_raters:  # the verdict says whose labels it was reached without
        left = ", ".join(f"'{name}' ({n} label{'s' * (n != 1)})" for name, n in r.evidence.excluded_raters.items())
        reason += f" The labels of {left} are left out of the consensus and the human comparisons (--exclude-rater)."
    msg = reason + (" " + " and ".join(parts).capitalize() + "." if parts else "")
    return Check("evidence", "enough evidence", PASSED if ok else UNDECIDED,
                 {"n_items": n, "multi_rated_share": round(share, 4)},
                 {"min_items": p.min_items, "min_multi_rated_share": p.min_multi_rated_share}, msg, reason,
                 None if ok else need_items + need_multi)


def _agreement(r: CalibrationReport, p: Policy) -> Check:
    m = r.metric(p.agreement_metric)
    value, low, high = _num(m.value), _num(m.ci_low), _num(m.ci_high)
    name, bound = p.agreement_metric, p.min_agreement_lower
    if value is None or low is None or high is None:
        reason = (f"{name} has no interval ({m.reason or 'too few items or a single label'}), so it cannot be "
                  f"compared with {bound} yet.")
        return Check("agreement", "agreement", UNDECIDED, value, bound,
                     reason + " Add labeled items with varied scores.", reason)
    state = _decide_lower_bound(value, low, high, bound)
    more = (_more_to_clear(value, metric_se(r, name), int(r.n_items or 0), bound, half=_facing(value, low, high, bound))
            if state == UNDECIDED else None)
    reason = _below_sentence(name, value, low, high, bound, state, more)
    msg = reason
    if state != PASSED:
        mse = r.metric("mean_signed_error")
        direction = leniency(mse)
        if direction:
            msg += (f" It scores {abs(_num(mse.value) or 0):.2f} {'higher' if direction == 'lenient' else 'lower'}"
                    f" than the humans on average ({direction}): tighten the rubric's level descriptions.")
    if caveat := r.metric_reasons.get(name):  # e.g. undefined in many resamples: the interval is conditional
        msg += f" Note: {caveat}."
    return Check("agreement", "agreement", state, {"value": value, "ci_low": low, "ci_high": high}, bound, msg,
                 reason, more)


def _as_good_as_human(r: CalibrationReport, p: Policy) -> Check:
    """Passed by the alternative-annotator test (where it runs and passes); otherwise decided by the paired
    interval of judge-human minus human-human pairwise agreement plus the margin, against 0."""
    alt = r.alt_test
    qualified = len(alt.raters) if alt else 0
    name = "as good as a human"
    if alt and qualified >= p.alt_test_min_raters and alt.winning_rate is not None and alt.passed:
        wr, adv = _num(alt.winning_rate), _num(alt.advantage_probability)
        reason = (f"Alternative-annotator test over {qualified} raters: winning rate {_f(wr)} (0.5 needed, "
                  f"advantage probability {_f(adv)}, epsilon {alt.epsilon}): the judge can stand in for a reviewer.")
        return Check("as_good_as_human", name, PASSED, {"winning_rate": wr, "advantage_probability": adv},
                     {"winning_rate": 0.5}, reason, reason)
    alt_said = (f"the alternative-annotator test over {qualified} raters is not passed (winning rate "
                f"{_f(_num(alt.winning_rate))}, 0.5 needed)" if alt and alt.winning_rate is not None else
                f"only {qualified} rater(s) qualify for the alternative-annotator test ({p.alt_test_min_raters} "
                "needed)")
    hc = r.human_ceiling
    hh, jh = _num(hc.human_pairwise_agreement), _num(hc.judge_human_pairwise_agreement)
    se = _num(hc.judge_minus_human_se)
    n_pairs = int(hc.n_items_pairwise or 0)
    if hh is None or jh is None or not se:
        more = max(2, p.min_class_items - n_pairs)
        reason = (f"Cannot compare the judge with the humans yet: {alt_said}, and judge-human against human-human "
                  f"agreement has no interval ({n_pairs} items with two human labels).")
        return Check("as_good_as_human", name, UNDECIDED, {"judge_human": jh, "human_human": hh},
                     {"margin": p.human_margin}, reason + " Have at least two reviewers label the same items.",
                     reason, more)
    from workbench.stats.planning import z_value

    gap = jh - hh + p.human_margin  # >= 0: as good as the humans, within the gate's margin
    low, high = gap - z_value(0.95) * se, gap + z_value(0.95) * se
    state = _decide_lower_bound(gap, low, high, 0.0)
    more = _more_to_clear(gap, se, n_pairs, 0.0) if state == UNDECIDED else None
    head = (f"Judge-human agreement {_f(jh)} against human-human {_f(hh)} on {n_pairs} items with 2+ reviewers: "
            f"the difference plus the margin {p.human_margin} is {gap:+.2f} {_iv(low, high, signed=True)}")
    if state == PASSED:
        reason = f"{head}, which clears 0 with 95% confidence ({alt_said})."
    elif state == FAILED:
        reason = (f"{head}, below 0 beyond doubt (99.9% interval up to {_wide(gap, low, high)[1]:+.2f}): the judge "
                  "agrees with the reviewers less than they agree with each other.")
    else:
        reason = f"{head}, which does not yet clear 0 with 95% confidence; {_decides(more)} (two labels each)."
    return Check("as_good_as_human", name, state, {"judge_human": jh, "human_human": hh, "difference": gap,
                                                   "ci_low": low, "ci_high": high},
                 {"margin": p.human_margin}, reason, reason, more)


def _self_preference(r: CalibrationReport, p: Policy) -> Check:
    """Both effects, both directions: the worst of the two decides; a check this data cannot measure warns."""
    from workbench.stats.planning import band_decision, z_value

    sp = r.self_preference
    family = r.judge.family or "its"
    t = p.max_self_preference
    states, sentences, values, more_total = [], [], {}, 0
    for name, who in (("same_family", f"its own family ({family})"), ("same_model", "its own model")):
        e = getattr(sp, name)
        value, low, high = (_num(e.value), _num(e.ci_low), _num(e.ci_high)) if e else (None, None, None)
        values[name] = {"value": value, "ci_low": low, "ci_high": high, "n": e.n if e else None}
        if value is None or low is None or high is None:
            if name == "same_family" and sp.measurable_in_pool:  # the set holds both kinds: labels will measure it
                states.append(UNDECIDED)
                why = ((e.reason if e else None) or "too few labeled items of each kind").rstrip(".")
                sentences.append(f"Not measurable yet ({why}), though the golden set holds items of {who} and of "
                                 "others: label items of both kinds to decide it.")
            elif name == "same_family":
                states.append(NOT_MEASURABLE)
                why = ((e.reason if e else None) or f"no items produced by the {family} family").rstrip(".")
                sentences.append(f"Not measurable: {why}; this is a warning, not evidence of no bias.")
            continue
        direction = "higher" if value >= 0 else "lower"
        said = (f"The judge scores {who} {abs(value):.2f} {direction} than humans do, relative to other families "
                f"({value:+.2f} {_iv(low, high, signed=True)}, {e.n} items, bound +/-{t})")
        decision = band_decision(value, low, high, t)
        values[name]["state"] = {True: PASSED, False: FAILED, None: UNDECIDED}[decision]
        if decision is False:
            states.append(FAILED)
            wide = _wide(value, low, high)
            side, kind = (f"above +{t}", "favours") if wide[0] > t else (f"below -{t}", "is harsh on")
            sentences.append(f"{said}: beyond doubt {side} (99.9% interval {_iv(*wide, signed=True)}), so it {kind} "
                             f"{who}; do not use it on those outputs.")
        elif decision is True:
            states.append(PASSED)
            sentences.append(f"{said}: within +/-{t} with 95% confidence.")
        else:
            states.append(UNDECIDED)
            se = (high - low) / (2 * z_value(0.95)) if high > low else None
            more = _more_to_clear(abs(value), se, int(e.n or 0), t, failing=abs(value) > t,
                                  half=(high - value) if value >= 0 else (value - low))  # the side facing +/-t
            more_total += more or 0
            values[name]["more_items"] = more
            what = "same-family" if name == "same_family" else "same-model"
            sentences.append(f"{said}: not decided yet, the interval crosses {'+' if value >= 0 else '-'}{t}; "
                             + (f"about {more} more labeled {what} items would decide it." if more else
                                "the effect sits at the bound, so more labels will hardly decide it."))
    order = (FAILED, UNDECIDED, NOT_MEASURABLE, PASSED)
    status = next((s for s in order if s in states), NOT_MEASURABLE)
    text = " ".join(sentences)
    return Check("self_preference", "no material self-preference", status, values, t, text, text,
                 (more_total or None) if status == UNDECIDED else None)


def _pass_fail(r: CalibrationReport, p: Policy) -> Check:
    """Enough consensus passes and fails to judge TPR and TNR, and both shown to be high enough."""
    den = r.denominators
    n_pos, n_neg = (int(den.n_pos or 0), int(den.n_neg or 0)) if den else (0, 0)
    states, sentences, more_total, parts = [], [], 0, {}
    for name, n, kind, bound in (("TPR", n_pos, "pass", p.min_tpr_lower), ("TNR", n_neg, "fail", p.min_tnr_lower)):
        m = r.metric(name.lower())
        value, low, high = _num(m.value), _num(m.ci_low), _num(m.ci_high)
        if n < p.min_class_items or value is None or low is None or high is None:
            state, more = UNDECIDED, _more_for_proportion(value, low, high, n, bound, p.min_class_items,
                                                          _num(m.design_effect) or 1.0)
            sentence = (f"{name} cannot be judged yet: {n} item{'s' * (n != 1)} {'has' if n == 1 else 'have'} a "
                        f"consensus {kind} ({p.min_class_items} needed); label about {p.min_class_items - n} more "
                        f"items that humans would {kind}" if n < p.min_class_items else
                        f"{name} has no interval yet (n = {n})")
        else:
            state = _decide_lower_bound(value, low, high, bound)
            more = (_more_for_proportion(value, low, high, n, bound, p.min_class_items, _num(m.design_effect) or 1.0)
                    if state == UNDECIDED else None)
            sentence = _below_sentence(f"{name} (n = {n} consensus {kind}{'es' if kind == 'pass' else 's'})", value,
                                       low, high, bound, state, more).rstrip(".")
        states.append(state)
        sentences.append(sentence)
        more_total += more or 0
        parts[name.lower()] = {"value": value, "ci_low": low, "ci_high": high, "n": n, "state": state,
                               "more_items": more}
    status = FAILED if FAILED in states else UNDECIDED if UNDECIDED in states else PASSED
    rank = {FAILED: 0, UNDECIDED: 1, PASSED: 2}  # what keeps the pair from 'calibrated' is read first
    text = "; ".join(sentence for _, sentence in sorted(zip(states, sentences), key=lambda x: rank[x[0]])) + "."
    return Check("pass_fail", "passes and fails", status,
                 {"n_pos": n_pos, "n_neg": n_neg, "tpr_ci_low": _num(r.metric("tpr").ci_low),
                  "tnr_ci_low": _num(r.metric("tnr").ci_low), **parts},
                 {"min_class_items": p.min_class_items, "min_tpr_lower": p.min_tpr_lower,
                  "min_tnr_lower": p.min_tnr_lower}, text, text, (more_total or None) if status == UNDECIDED else None)


def _categories(r: CalibrationReport, p: Policy) -> Check:
    """A warning for each category where the judge agrees significantly less than on the rest (never blocks)."""
    cats = r.per_category
    worse = {name: c for name, c in cats.items() if c.weaker}
    if len(cats) < 2:
        text = "Only one category, so there is nothing to compare it with."
        return Check("categories", "no weak category", NOT_APPLICABLE, None, None, text, text)
    if not worse:
        text = f"No category of {len(cats)} is significantly worse than the rest."
        return Check("categories", "no weak category", PASSED, [], None, text, text)
    parts = [f"'{name}' (exact agreement {_f(_num(_value(c.exact_agreement)))}, n = {c.n_items}, "
             f"{abs(c.worse_than_rest.difference):.2f} below the rest "
             f"{_iv(c.worse_than_rest.ci_low, c.worse_than_rest.ci_high, signed=True)})" for name, c in worse.items()]
    reason = f"The judge is significantly worse on {', '.join(parts)}; a warning, which does not block."
    return Check("categories", "no weak category", WARNING, sorted(worse), None,
                 reason + " Read its disagreements there before trusting it on that category.", reason)


def _stable(r: CalibrationReport, p: Policy) -> Check:
    flip = _num(r.noise.flip_rate if r.noise else None)
    limit = p.max_flip_rate
    if flip is None:
        text = "No repeats recorded; run the judge with --repeats 2 or more to measure its noise."
        return Check("stable", "stable", NOT_APPLICABLE, None, limit, text, text)
    n = int(r.noise.n_items or 0)
    if n:
        from workbench.stats.intervals.proportion import proportion_interval

        low, high = proportion_interval(flip, n)
        # an upper-bound check is a lower-bound check on the share of items that keep their score
        state = _decide_lower_bound(1 - flip, 1 - high, 1 - low, 1 - limit)
        more = (_more_to_clear(1 - flip, se_from_interval(low, high), n, 1 - limit,
                               half=_facing(1 - flip, 1 - high, 1 - low, 1 - limit)) if state == UNDECIDED else None)
        head = f"flip rate {flip:.2f} {_iv(low, high)} on {n} items with repeats"
        reason = {PASSED: f"{head} is below {limit} with 95% confidence.",
                  FAILED: f"{head} is above {limit} beyond doubt.",
                  UNDECIDED: f"{head} is not yet shown to be below {limit} with 95% confidence; {_decides(more)}"
                             " (with repeats)."}[state]
    else:  # a report from before the count was kept: the point estimate
        state, more = (PASSED if flip <= limit else FAILED), None
        reason = f"flip rate {flip:.2f} ({'within' if state == PASSED else 'above'} the limit {limit})."
    msg = reason + ("" if state == PASSED else " Lower the temperature or average several repeats.")
    return Check("stable", "stable", state, flip, limit, msg, reason, more)


def _complete(r: CalibrationReport, p: Policy) -> Check:
    n_unscored = int(r.n_unscored or 0)
    total = n_unscored + int(r.n_scored or (r.evidence.n_items if r.evidence else 0) or 0)
    share = n_unscored / total if total else 0.0
    ok = share <= p.max_unscored_share
    # counted on this run, not estimated: no interval
    reason = (f"{n_unscored} of {total} judgments are unscored ({share:.1%}, counted on this run; limit "
              f"{p.max_unscored_share:.0%}).")
    msg = reason + ("" if ok else " Read their reasons and fix the prompt or budget.")
    return Check("complete", "complete", PASSED if ok else FAILED, round(share, 4), p.max_unscored_share, msg, reason)


def _no_drift(r: CalibrationReport, p: Policy) -> Check:
    d = r.drift
    if not d:
        text = "No earlier run of this judge config to compare with."
        return Check("no_drift", "no drift", NOT_APPLICABLE, None, None, text, text)
    pval = _num(d.stuart_maxwell.p_value if d.stuart_maxwell else None)
    delta_m = d.deltas.get(p.agreement_metric)
    delta = _num(_value(delta_m))
    problems = drift_problems(d, p)
    versions = d.model_versions
    seen = (" -> ".join(", ".join(v or ["unknown"]) for v in (versions.baseline, versions.candidate))
            if versions else "")
    runs = f"run '{d.baseline_run}' to run '{d.run}'"
    numbers = (f"Stuart-Maxwell p = {fmt_p(pval)} (at least {p.drift_min_p} needed), {p.agreement_metric} change "
               + ("n/a" if delta is None else f"{delta:+.2f}")
               + (f" {_iv(_num(delta_m.ci_low), _num(delta_m.ci_high), signed=True)}" if delta_m is not None
                  and _num(delta_m.ci_low) is not None else "")
               + f" (a drop of at most {p.drift_max_agreement_drop} allowed)")
    if problems:
        reason = f"From {runs}: " + " and ".join(problems) + f"; {numbers}" + (f", model versions {seen}" if seen
                                                                               else "") + "."
        msg = reason + " Recalibrate before trusting the new run."
    else:
        reason = msg = f"No drift from {runs}: {numbers}" + (f", model versions {seen}." if seen else ".")
    return Check("no_drift", "no drift", FAILED if problems else PASSED,
                 {"stuart_maxwell_p": pval, "agreement_delta": delta},
                 {"min_p": p.drift_min_p, "max_drop": p.drift_max_agreement_drop}, msg, reason)


def _probes(r: CalibrationReport, p: Policy) -> tuple[Check, ...]:
    """Stress probes (``workbench probe``): a warning by default; part of the gate with ``probe_check: fail``.

    Like self-preference: a probe whose shift interval lies wholly beyond +-max_probe_shift is material; all
    intervals wholly within pass; anything else is inconclusive (undecided where probes are part of the gate, a
    warning otherwise). No probes run: no check, unless the policy makes probes part of the gate.
    """
    if p.probe_check == "off":
        return ()
    probes = [e for e in (r.probes.probes if r.probes else ()) if e.n_items]
    blocking = p.probe_check == "fail"
    name = "robust to stress probes"
    if not probes:
        if not blocking:
            return ()
        text = ("The policy makes stress probes part of the gate but none has been run: run 'workbench probe' on "
                "this judge.")
        return (Check("probes", name, UNDECIDED, None, p.max_probe_shift, text, text),)
    limit = p.max_probe_shift
    material, unsettled = [], []
    for e in probes:
        shift = e.mean_shift
        low, high, value = (_num(shift.ci_low), _num(shift.ci_high), _num(shift.value)) if shift else (None,) * 3
        said = f"{e.probe} ({'n/a' if value is None else f'{value:+.2f}'} {_iv(low, high, signed=True)})"
        if low is None or high is None:
            unsettled.append(said)
        elif low > limit or high < -limit:
            material.append(said)
        elif not (-limit <= low and high <= limit):
            unsettled.append(said)
    worst = max((abs(_num(_value(e.mean_shift)) or 0.0) for e in probes), default=None)
    if material:
        reason = (f"Perturbations that should not matter move the judge's mean score by more than {limit:.2f}: "
                  f"{', '.join(material)}" + ("." if blocking else "; a warning, which does not block."))
        return (Check("probes", name, FAILED if blocking else WARNING, worst, limit,
                      reason + " Tell the judge to ignore such text in the rubric's instructions, or pick a judge "
                      "these probes do not move.", reason),)
    if unsettled:
        reason = (f"Not decided for {', '.join(unsettled)}: the shift's interval crosses +/-{limit:.2f}"
                  + ("." if blocking else "; a warning, which does not block."))
        return (Check("probes", name, UNDECIDED if blocking else WARNING, worst, limit,
                      reason + " Probe more items (workbench probe without --limit) to settle it.", reason),)
    text = f"No probe moves the judge's mean score by more than {limit:.2f} ({len(probes)} probes)."
    return (Check("probes", name, PASSED, worst, limit, text, text),)


# -- the selective guarantee (docs/selective.md) -----------------------------------------------------------------------

class SelectiveGuarantee(Protocol):
    """What the selective check reads (``features.selective``'s ``SelectiveResult``): whether a confidence threshold
    qualified, its sentence, and for each judge the first test of its sequence (kept items, agreeing ones)."""

    guaranteed: bool
    sentence: str
    target: float
    risk: float
    more_labels: int | None
    more_labels_about: int | None
    openings: tuple[tuple[int, int], ...]


SELECTIVE_CHECK = "selective guarantee"


def selective_check(s: SelectiveGuarantee) -> Check:
    """Passed when a threshold qualified (fixed-sequence testing already holds the risk); failed when, for every
    judge, agreement on the items the sequence starts with (those it is surest of) is below the target beyond doubt
    (its 99.9% Clopper-Pearson interval wholly below, as the gate's other failures): labels will not give the
    guarantee at these confidences; undecided otherwise, with the labeled items still needed."""
    from workbench.stats.planning import INTERIM_LEVEL
    from workbench.stats.selective import clopper_pearson_upper

    threshold = {"target_agreement": s.target, "risk": s.risk}
    value = {"guaranteed": s.guaranteed, "threshold": getattr(s, "threshold", None),
             "coverage": getattr(s, "coverage", None), "agreement": getattr(s, "agreement", None),
             "agreement_lower_bound": getattr(s, "agreement_lower_bound", None)}
    if s.guaranteed:
        return Check("selective", SELECTIVE_CHECK, PASSED, value, threshold, s.sentence, s.sentence)
    tail = (1 - INTERIM_LEVEL) / 2  # the upper end of the two-sided 99.9% interval
    uppers = [clopper_pearson_upper(k, n, tail) for n, k in s.openings if n]
    if uppers and len(uppers) == len(s.openings) and max(uppers) < s.target:
        reason = (f"{s.sentence} There, agreement is below {s.target:g} beyond doubt (99.9% upper bound "
                  f"{max(uppers):.3f}), so more labels will not give the guarantee at these confidences.")
        return Check("selective", SELECTIVE_CHECK, FAILED, value, threshold,
                     reason + " Lower the target, or give the judge a sharper confidence (log-probabilities, more "
                              "repeats).", reason)
    more = s.more_labels_about or s.more_labels
    reason = s.sentence
    if s.more_labels_about is None and uppers:
        reason += (f" That is not below {s.target:g} beyond doubt (99.9% upper bound {max(uppers):.3f}), so the check"
                   " is not decided yet.")
    return Check("selective", SELECTIVE_CHECK, UNDECIDED, value, threshold, reason, reason, more)


def with_selective_check(verdict: Verdict | None, s: SelectiveGuarantee) -> Verdict:
    """The verdict with the selective check added (replacing an earlier one): the pair's verdict when its policy
    has a ``selective`` section or a selective export was asked for."""
    checks = tuple(c for c in (verdict.checks if verdict else ()) if c.id != "selective")
    return Verdict(checks + (selective_check(s),))


def step_measure_name(within: int) -> str:
    """The name of the step accuracy within ``within`` steps in the report's ``steps`` section."""
    return "exact" if within == 0 else f"within_{within}"


def _locates_failures(r: CalibrationReport, p: Policy) -> tuple[Check, ...]:
    """Only where the policy has a ``locates_failures`` section: the lower bound of the judge's step accuracy
    within k steps of the people's (all failing items with both steps) against the policy's bound."""
    lf = p.locates_failures
    if lf is None:
        return ()
    name, bound = f"step accuracy within {lf.within}", lf.min_lower_bound
    group = ((((r.steps or {}).get("judge") or {}).get("groups") or {}).get("all") or {})
    m = (group.get("judge") or {}).get(step_measure_name(lf.within)) or {}
    value, low, high, n = _num(m.get("value")), _num(m.get("ci_low")), _num(m.get("ci_high")), int(m.get("n") or 0)
    threshold = {"within": lf.within, "min_lower_bound": bound}
    if value is None or low is None or high is None:
        text = (f"{name} cannot be measured yet: no failing item has both the people's decisive step and the "
                "judge's. Label steps on failing trajectories (docs/steps.md) and have the judge name steps.")
        return (Check("locates_failures", "locates failures", UNDECIDED, None, threshold, text, text),)
    state = _decide_lower_bound(value, low, high, bound)
    head = f"{name} {value:.2f} {_iv(low, high)} on {n} failing items"
    more = (_more_to_clear(value, se_from_interval(low, high), n, bound, half=_facing(value, low, high, bound))
            if state == UNDECIDED else None)
    reason = {PASSED: f"{head} clears {bound:g} with 95% confidence.",
              FAILED: f"{head} is below {bound:g} beyond doubt.",
              UNDECIDED: f"{head} is not yet shown to clear {bound:g}; {_decides(more)} (failing, with steps)."}[state]
    msg = reason + ("" if state == PASSED else " Read where the judge and the people disagree on the step.")
    return (Check("locates_failures", "locates failures", state, value, threshold, msg, reason, more),)
