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
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputError
from .strict_yaml import load_yaml, read_utf8

if TYPE_CHECKING:  # the report module builds on Check, Verdict and Policy: the checks only read its attributes
    from .report import CalibrationReport, Drift, Metric

PASSED, FAILED, WARNING, NOT_MEASURABLE, NOT_APPLICABLE = (
    "passed", "failed", "warning", "not_measurable", "not_applicable")
#: How each status is marked in text (CLI, card) and in the UI.
STATUS_MARK = {PASSED: "PASS", FAILED: "FAIL", WARNING: "WARN", NOT_MEASURABLE: "WARN", NOT_APPLICABLE: " -- "}
STATUS_ICON = {PASSED: "✅", FAILED: "❌", WARNING: "⚠️", NOT_MEASURABLE: "⚠️", NOT_APPLICABLE: "➖"}


@dataclass(frozen=True)
class Policy:
    """Thresholds of the gate; every field can be overridden in rubrics/policy.yaml or a rubric's gate:."""

    min_items: int = 50                    # items with a consensus label and a judge score
    min_raters_per_item: int = 2
    min_multi_rated_share: float = 0.30    # share of those items with >= min_raters_per_item labels
    agreement_metric: str = "krippendorff_alpha_ordinal"
    min_agreement_lower: float = 0.667     # lower bound of the interval
    alt_test_min_raters: int = 3           # raters qualifying for the alternative-annotator test
    human_margin: float = 0.05             # judge-human agreement may trail human-human by this much
    max_self_preference: float = 0.10      # same-model and same-family effects, in both directions
    min_class_items: int = 10              # consensus passes (for TPR) and fails (for TNR) needed
    min_category_items: int = 10           # a category smaller than this gets no agreement interval
    min_tpr_lower: float = 0.5             # lower bounds: the judge is shown to pass most passes ...
    min_tnr_lower: float = 0.5             # ... and to catch most fails
    max_flip_rate: float = 0.10
    max_unscored_share: float = 0.02
    drift_min_p: float = 0.01
    drift_max_agreement_drop: float = 0.05
    max_probe_shift: float = 0.10          # stress probes: mean score shift, in scale units, in either direction
    probe_check: str = "warn"              # "warn" (default), "fail" (part of the gate) or "off"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


POLICY_KEYS = tuple(f.name for f in fields(Policy))
PROBE_CHECK_MODES = ("warn", "fail", "off")


def policy_from_dict(data: dict[str, Any] | None, *, base: Policy | None = None, source: str = "policy") -> Policy:
    """Apply overrides to a base policy, refusing unknown keys and wrong types by name."""
    base = base or Policy()
    if not data:
        return base
    if not isinstance(data, dict):
        raise InputError("the gate policy must be a mapping of overrides", file=source,
                         fix=f"write keys such as min_items: 80 (known: {', '.join(POLICY_KEYS)})")
    changes = {}
    for key, value in data.items():
        if key not in POLICY_KEYS:
            raise InputError(f"unknown gate key '{key}'", file=source, field=key,
                             fix=f"use one of {', '.join(POLICY_KEYS)}")
        default = getattr(base, key)
        if isinstance(default, str):
            ok = isinstance(value, str)
        elif isinstance(default, int) and not isinstance(default, bool):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            raise InputError(f"must be a {type(default).__name__}, got {value!r}", file=source, field=key,
                             fix=f"write e.g. {key}: {default}")
        if key == "probe_check" and value not in PROBE_CHECK_MODES:
            raise InputError(f"must be one of {', '.join(PROBE_CHECK_MODES)}, got {value!r}", file=source, field=key,
                             fix="write e.g. probe_check: fail to make the stress probes part of the gate")
        changes[key] = float(value) if isinstance(default, float) else value
    return replace(base, **changes)


def load_policy(path: str | Path | None, rubric_gate: dict[str, Any] | None = None) -> Policy:
    """Defaults, then rubrics/policy.yaml (if present), then the rubric's own gate: overrides."""
    policy = Policy()
    if path is not None and Path(path).exists():
        data, _ = load_yaml(read_utf8(path), file=Path(path).name)  # no aliases, duplicate keys or .nan
        policy = policy_from_dict(data, base=policy, source=Path(path).name)
    return policy_from_dict(rubric_gate, base=policy, source="rubric gate:")


@dataclass(frozen=True)
class Check:
    id: str
    name: str
    status: str
    value: Any
    threshold: Any
    message: str

    @property
    def passed(self) -> bool:
        return self.status != FAILED

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}


@dataclass(frozen=True)
class Verdict:
    checks: tuple[Check, ...]

    @property
    def calibrated(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == FAILED]

    def to_dict(self) -> dict[str, Any]:
        return {"calibrated": self.calibrated, "checks": [c.to_dict() for c in self.checks]}


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
                   + _probes(report, policy))


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


def _evidence(r: CalibrationReport, p: Policy) -> Check:
    n, need_items, need_multi, share = evidence_needs(r, p)
    ok = need_items == 0 and need_multi == 0
    if ok:
        msg = (f"{n} items have a consensus label and a judge score, {share:.0%} of them with "
               f"{p.min_raters_per_item}+ raters.")
    else:
        parts = []
        if need_items:
            parts.append(f"label {need_items} more item{'s' * (need_items != 1)} to reach {p.min_items} with a "
                         f"consensus and a judge score")
        if need_multi:
            parts.append(f"get {need_multi} more item{'s' * (need_multi != 1)} labeled by {p.min_raters_per_item} "
                         f"raters to reach {p.min_multi_rated_share:.0%}")
        msg = "Not enough evidence: " + " and ".join(parts) + "."
    return Check("evidence", "enough evidence", PASSED if ok else FAILED,
                 {"n_items": n, "multi_rated_share": round(share, 4)},
                 {"min_items": p.min_items, "min_multi_rated_share": p.min_multi_rated_share}, msg)


def _agreement(r: CalibrationReport, p: Policy) -> Check:
    m = r.metric(p.agreement_metric)
    value, low = _num(m.value), _num(m.ci_low)
    name = p.agreement_metric
    if low is None:
        return Check("agreement", "agreement", FAILED, value, p.min_agreement_lower,
                     f"{name} has no interval ({m.reason or 'too few items or a single label'}); "
                     f"add labeled items with varied scores.")
    ok = low >= p.min_agreement_lower
    caveat = r.metric_reasons.get(name)
    msg = (f"{name} is {_f(value)} (interval {_f(low)} to {_f(_num(m.ci_high))}); its lower bound "
           + (f"clears {p.min_agreement_lower}." if ok else
              f"is below {p.min_agreement_lower}: the judge does not agree with the consensus reliably enough."))
    if not ok:
        mse = r.metric("mean_signed_error")
        direction = leniency(mse)
        if direction:
            msg += (f" It scores {abs(_num(mse.value) or 0):.2f} {'higher' if direction == 'lenient' else 'lower'}"
                    f" than the humans on average ({direction}): tighten the rubric's level descriptions.")
    if caveat:  # e.g. undefined in many resamples: the interval is conditional, and the lead should know
        msg += f" Note: {caveat}."
    return Check("agreement", "agreement", PASSED if ok else FAILED, {"value": value, "ci_low": low},
                 p.min_agreement_lower, msg)


def _as_good_as_human(r: CalibrationReport, p: Policy) -> Check:
    alt = r.alt_test
    qualified = len(alt.raters) if alt else 0
    if alt and qualified >= p.alt_test_min_raters and alt.winning_rate is not None:
        ok = bool(alt.passed)
        wr, adv = _num(alt.winning_rate), _num(alt.advantage_probability)
        msg = (f"Alternative-annotator test over {qualified} raters: winning rate {_f(wr)} "
               f"(advantage probability {_f(adv)}, epsilon {alt.epsilon}); "
               + ("the judge can stand in for a reviewer." if ok else
                  "below 0.5: the judge cannot yet replace a reviewer."))
        return Check("as_good_as_human", "as good as a human", PASSED if ok else FAILED,
                     {"winning_rate": wr, "advantage_probability": adv}, {"winning_rate": 0.5}, msg)
    hc = r.human_ceiling
    hh, jh = _num(hc.human_pairwise_agreement), _num(hc.judge_human_pairwise_agreement)
    if hh is None or jh is None:
        return Check("as_good_as_human", "as good as a human", FAILED, None, None,
                     f"Cannot compare the judge with the humans: {qualified} rater(s) qualify for the alternative-"
                     f"annotator test and no item has two human labels; have at least two reviewers label the same items.")
    ok = jh >= hh - p.human_margin
    msg = (f"Judge-human pairwise agreement {_f(jh)} against human-human {_f(hh)} (only {qualified} rater(s) "
           f"qualify for the alternative-annotator test, {p.alt_test_min_raters} needed); "
           + ("within the margin." if ok else f"more than {p.human_margin} below the humans' own agreement."))
    return Check("as_good_as_human", "as good as a human", PASSED if ok else FAILED,
                 {"judge_human": jh, "human_human": hh}, {"margin": p.human_margin}, msg)


def _self_preference(r: CalibrationReport, p: Policy) -> Check:
    """Both effects, both directions: the worst of the two decides; inconclusive is a warning."""
    sp = r.self_preference
    family = r.judge.family or "its"
    t = p.max_self_preference
    states, sentences, values = [], [], {}
    for name, who in (("same_family", f"its own family ({family})"), ("same_model", "its own model")):
        e = getattr(sp, name)
        value, low, high = (_num(e.value), _num(e.ci_low), _num(e.ci_high)) if e else (None, None, None)
        values[name] = {"value": value, "ci_low": low, "ci_high": high, "n": e.n if e else None}
        if value is None or low is None or high is None:
            if name == "same_family":
                states.append(NOT_MEASURABLE)
                why = ((e.reason if e else None) or f"no items produced by the {family} family").rstrip(".")
                sentences.append(f"Not measurable: {why}; this is a warning, not evidence of no bias.")
            continue
        direction = "higher" if value >= 0 else "lower"
        said = (f"The judge scores {who} {abs(value):.2f} {direction} than humans do, relative to other families "
                f"(interval {_f(low)} to {_f(high)}, {e.n} items)")
        if low > t or high < -t:
            states.append(FAILED)
            side = f"above +{t}" if low > t else f"below -{t}"
            kind = "favours" if low > t else "is harsh on"
            sentences.append(f"{said}: the whole interval is {side}, so it {kind} {who}; do not use it on those "
                             "outputs.")
        elif low >= -t and high <= t:
            states.append(PASSED)
            sentences.append(f"{said}: within +/-{t}.")
        else:
            states.append(WARNING)
            more = _items_to_settle(value, low, high, int(e.n or 0), t)
            sentences.append(f"{said}: inconclusive, the interval crosses {'+' if value >= 0 else '-'}{t}"
                             + (f"; about {more} more {'same-family' if name == 'same_family' else 'same-model'} "
                                "items would settle it." if more else
                                "; the effect sits at the threshold, so more items will hardly settle it."))
    order = (FAILED, WARNING, NOT_MEASURABLE, PASSED)
    status = next((s for s in order if s in states), NOT_MEASURABLE)
    return Check("self_preference", "no material self-preference", status, values, t, " ".join(sentences))


def _items_to_settle(value: float, low: float, high: float, n: int, t: float) -> int | None:
    """More same-X items that would shrink the interval to clear the nearest threshold (half-width ~ 1/sqrt(n))."""
    half = (high - low) / 2
    if abs(value) > t:
        needed = abs(value) - t          # to lie wholly beyond the threshold
    else:
        needed = t - abs(value)          # to lie wholly within
    if needed < 0.01 or half <= 0 or n <= 0:
        return None
    return max(1, math.ceil(n * (half / needed) ** 2) - n)


def _pass_fail(r: CalibrationReport, p: Policy) -> Check:
    """Enough consensus passes and fails to judge TPR and TNR, and both shown to be high enough."""
    den = r.denominators
    n_pos, n_neg = (int(den.n_pos or 0), int(den.n_neg or 0)) if den else (0, 0)
    problems, fine = [], []
    for name, n, kind, bound in (("TPR", n_pos, "pass", p.min_tpr_lower), ("TNR", n_neg, "fail", p.min_tnr_lower)):
        m = r.metric(name.lower())
        value, low, high = _num(m.value), _num(m.ci_low), _num(m.ci_high)
        if n < p.min_class_items:
            problems.append(f"{name} cannot be judged yet: {n} item{'s' * (n != 1)} {'has' if n == 1 else 'have'} a "
                            f"consensus {kind}; label about {p.min_class_items - n} more items that humans would "
                            f"{kind}")
        elif low is None:
            problems.append(f"{name} has no interval")
        elif low < bound:
            problems.append(f"{name} is {_f(value)} (interval {_f(low)} to {_f(high)}, n = {n}); its lower bound is "
                            f"below {bound}")
        else:
            fine.append(f"{name} {_f(value)} (interval {_f(low)} to {_f(high)}, n = {n})")
    ok = not problems
    msg = ("; ".join(fine) + "." if ok else "; ".join(problems) + "."
           + (f" ({'; '.join(fine)}.)" if fine else ""))
    return Check("pass_fail", "passes and fails", PASSED if ok else FAILED,
                 {"n_pos": n_pos, "n_neg": n_neg, "tpr_ci_low": _num(r.metric("tpr").ci_low),
                  "tnr_ci_low": _num(r.metric("tnr").ci_low)},
                 {"min_class_items": p.min_class_items, "min_tpr_lower": p.min_tpr_lower,
                  "min_tnr_lower": p.min_tnr_lower}, msg)


def _categories(r: CalibrationReport, p: Policy) -> Check:
    """A warning for each category where the judge agrees significantly less than on the rest."""
    cats = r.per_category
    worse = {name: c for name, c in cats.items() if c.weaker}
    if len(cats) < 2:
        return Check("categories", "no weak category", NOT_APPLICABLE, None, None,
                     "Only one category, so there is nothing to compare it with.")
    if not worse:
        return Check("categories", "no weak category", PASSED, [], None,
                     f"No category of {len(cats)} is significantly worse than the rest.")
    parts = [f"'{name}' (exact agreement {_f(_num(_value(c.exact_agreement)))}, n = {c.n_items}, "
             f"{abs(c.worse_than_rest.difference):.2f} below the rest)" for name, c in worse.items()]
    return Check("categories", "no weak category", WARNING, sorted(worse), None,
                 f"The judge is significantly worse on {', '.join(parts)}: read its disagreements there before "
                 "trusting it on that category.")


def _stable(r: CalibrationReport, p: Policy) -> Check:
    flip = _num(r.noise.flip_rate if r.noise else None)
    if flip is None:
        return Check("stable", "stable", NOT_APPLICABLE, None, p.max_flip_rate,
                     "No repeats recorded; run the judge with --repeats 2 or more to measure its noise.")
    ok = flip <= p.max_flip_rate
    msg = (f"{flip:.0%} of items change score between repeats "
           + ("(within the limit)." if ok else
              f"(limit {p.max_flip_rate:.0%}): lower the temperature or average several repeats."))
    return Check("stable", "stable", PASSED if ok else FAILED, flip, p.max_flip_rate, msg)


def _complete(r: CalibrationReport, p: Policy) -> Check:
    n_unscored = int(r.n_unscored or 0)
    total = n_unscored + int(r.n_scored or (r.evidence.n_items if r.evidence else 0) or 0)
    share = n_unscored / total if total else 0.0
    ok = share <= p.max_unscored_share
    msg = (f"{n_unscored} of {total} judgments are unscored ({share:.1%})"
           + ("." if ok else f", above {p.max_unscored_share:.0%}: read their reasons and fix the prompt or budget."))
    return Check("complete", "complete", PASSED if ok else FAILED, round(share, 4), p.max_unscored_share, msg)


def _no_drift(r: CalibrationReport, p: Policy) -> Check:
    d = r.drift
    if not d:
        return Check("no_drift", "no drift", NOT_APPLICABLE, None, None,
                     "No earlier run of this judge config to compare with.")
    pval = _num(d.stuart_maxwell.p_value if d.stuart_maxwell else None)
    delta = _num(_value(d.deltas.get(p.agreement_metric)))
    problems = drift_problems(d, p)
    versions = d.model_versions
    seen = (" -> ".join(", ".join(v or ["unknown"]) for v in (versions.baseline, versions.candidate))
            if versions else "")
    runs = f"run '{d.baseline_run}' to run '{d.run}'"
    if problems:
        msg = f"From {runs} " + " and ".join(problems) + (f" (model versions {seen})" if seen else "") + \
              "; recalibrate before trusting the new run."
    else:
        msg = f"No drift from {runs}" + (f" (model versions {seen})." if seen else ".")
    return Check("no_drift", "no drift", FAILED if problems else PASSED,
                 {"stuart_maxwell_p": pval, "agreement_delta": delta},
                 {"min_p": p.drift_min_p, "max_drop": p.drift_max_agreement_drop}, msg)


def _probes(r: CalibrationReport, p: Policy) -> tuple[Check, ...]:
    """Stress probes (``workbench probe``): a warning by default; part of the gate with ``probe_check: fail``.

    Like self-preference: a probe whose shift interval lies wholly beyond +-max_probe_shift is material; all
    intervals wholly within pass; anything else is inconclusive (a warning). No probes run: no check, unless
    the policy makes probes part of the gate.
    """
    if p.probe_check == "off":
        return ()
    probes = [e for e in (r.probes.probes if r.probes else ()) if e.n_items]
    blocking = p.probe_check == "fail"
    if not probes:
        if not blocking:
            return ()
        return (Check("probes", "robust to stress probes", FAILED, None, p.max_probe_shift,
                      "The policy makes stress probes part of the gate but none has been run: run 'workbench probe' "
                      "on this judge."),)
    limit = p.max_probe_shift
    material, unsettled = [], []
    for e in probes:
        shift = e.mean_shift
        low, high, value = (_num(shift.ci_low), _num(shift.ci_high), _num(shift.value)) if shift else (None,) * 3
        if low is None or high is None:
            unsettled.append(e.probe)
        elif low > limit or high < -limit:
            material.append(f"{e.probe} ({value:+.2f}, {low:+.2f} to {high:+.2f})")
        elif not (-limit <= low and high <= limit):
            unsettled.append(e.probe)
    worst = max((abs(_num(_value(e.mean_shift)) or 0.0) for e in probes), default=None)
    if material:
        return (Check("probes", "robust to stress probes", FAILED if blocking else WARNING, worst, limit,
                      f"Perturbations that should not matter move the judge's scores by more than {limit:.2f}: "
                      f"{', '.join(material)}; tell the judge to ignore such text in the rubric's instructions, or "
                      "pick a judge these probes do not move."),)
    if unsettled:
        return (Check("probes", "robust to stress probes", WARNING, worst, limit,
                      f"Inconclusive for {', '.join(unsettled)}: the shift's interval crosses +-{limit:.2f}; probe "
                      "more items (workbench probe without --limit) to settle it."),)
    return (Check("probes", "robust to stress probes", PASSED, worst, limit,
                  f"No probe moves the judge's scores by more than {limit:.2f} ({len(probes)} probes)."),)
