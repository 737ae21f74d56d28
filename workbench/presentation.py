"""Rows and sentences of a calibration report, shared by the CLI, the Calibration page and the card.

Each front end lays these out its own way (a text table, a dataframe, a
Markdown table), but the numbers, denominators and words come from here, so
the three never disagree.
"""

from __future__ import annotations

from typing import Any

from .gate import fmt_p, leniency
from .scale import fmt, fmt_usd

#: Metrics in the order people read them.
METRIC_ORDER = ("krippendorff_alpha_ordinal", "cohen_kappa_quadratic", "cohen_kappa_linear", "cohen_kappa",
                "gwet_ac2_linear", "exact_agreement", "spearman", "mean_signed_error", "tpr", "tnr")
#: Who counts in each proportion's denominator.
DENOMINATOR_WORDS = {"exact_agreement": "items", "tpr": "consensus passes", "tnr": "consensus fails"}
INTERVAL_WORDS = {"wilson": "Wilson score", "bca": "BCa bootstrap", "percentile": "percentile bootstrap",
                  "studentized": "studentized bootstrap"}


def metric_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per metric: name, value, interval, denominator (proportions only) and a note when undefined."""
    reasons = report.get("metric_reasons") or {}
    metrics = report.get("metrics") or {}
    rows = []
    for name in METRIC_ORDER + tuple(k for k in metrics if k not in METRIC_ORDER):
        m = metrics.get(name)
        if m is None:
            continue
        rows.append({"metric": name, "value": m.get("value"), "ci_low": m.get("ci_low"), "ci_high": m.get("ci_high"),
                     "n": m.get("n"), "note": reasons.get(name)})
    return rows


def interval_sentence(report: dict[str, Any]) -> str:
    """How the intervals were made, in one sentence."""
    b = report.get("bootstrap") or {}
    methods = b.get("intervals") or {}
    other = next((methods[k] for k in methods if k not in DENOMINATOR_WORDS), "percentile")
    proportion = methods.get("tpr", "wilson")
    return (f"95% intervals: proportions (exact agreement, TPR, TNR) by the {INTERVAL_WORDS.get(proportion, proportion)} interval "
            f"on their effective number of items (the count over the cluster design effect); the other metrics by "
            f"the {INTERVAL_WORDS.get(other, other)} interval from {b.get('resamples')} resamples of task clusters, "
            f"seed {b.get('seed')}. n is the denominator: items for exact agreement, consensus passes for TPR, "
            "consensus fails for TNR.")


def category_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Per category: n, exact agreement with its interval, alpha, mean signed error, and whether it is weak."""
    rows = []
    for name, c in (report.get("per_category") or {}).items():
        ea = c.get("exact_agreement") or {}
        w = c.get("worse_than_rest") or {}
        rows.append({"category": name, "n": c.get("n_items"), "exact_agreement": ea.get("value"),
                     "ci_low": ea.get("ci_low"), "ci_high": ea.get("ci_high"),
                     "alpha": (c.get("krippendorff_alpha_ordinal") or {}).get("value"),
                     "mean_signed_error": (c.get("mean_signed_error") or {}).get("value"),
                     "vs_rest": w.get("difference"), "weaker": bool(w.get("significant"))})
    return rows


def self_preference_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name, e in (report.get("self_preference") or {}).items():
        rows.append({"effect": name, "value": e.get("value"), "ci_low": e.get("ci_low"), "ci_high": e.get("ci_high"),
                     "n": e.get("n"), "ols_p": fmt_p(e.get("p_value")) if e.get("p_value") is not None else None,
                     "note": None if e.get("value") is not None else e.get("reason")})
    return rows


def leniency_sentence(report: dict[str, Any]) -> str | None:
    """'the judge is lenient: it scores 0.34 higher ...' when the signed error's interval excludes 0 (gate.leniency)."""
    m = (report.get("metrics") or {}).get("mean_signed_error") or {}
    direction = leniency(m)
    if direction is None:
        return None
    return (f"the judge is **{direction}**: it scores {abs(m['value']):.2f} {'higher' if direction == 'lenient' else 'lower'} "
            f"than the consensus on average (interval {fmt(m.get('ci_low'), 2)} to {fmt(m.get('ci_high'), 2)})")


def drift_sentence(drift: dict[str, Any] | None) -> str | None:
    if not drift:
        return None
    versions = drift.get("model_versions") or {}
    return (f"Drift from run `{drift.get('baseline_run')}` to `{drift.get('run')}`: flip rate "
            f"{fmt(drift.get('flip_rate'), 2)}, Stuart-Maxwell p = {fmt_p((drift.get('stuart_maxwell') or {}).get('p_value'))}"
            f", model versions {', '.join(versions.get('baseline') or ['unknown'])} -> "
            f"{', '.join(versions.get('candidate') or ['unknown'])}.")


def alt_test_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Per rater of the alternative-annotator test: items, the one-sided p-value, and whether the judge is at least
    as good as this rater (the test's null hypothesis rejected after the Benjamini-Yekutieli correction).

    'rejected' reads as a failure to most people; the row says what it means for the judge instead.
    """
    alt = report.get("alt_test") or {}
    return [{"rater": r.get("rater"), "n": r.get("n_items"),
             "p": fmt_p(r.get("p_value")) if r.get("p_value") is not None else None,
             "judge_as_good": bool(r.get("rejected")), "advantage_probability": r.get("advantage_probability")}
            for r in alt.get("raters") or []]


def estimate_sentence(e: Any) -> str:
    """What a judge run would cost (a ``judging.Estimate``), in the same words on the CLI's dry run and the Judges page."""
    worst = f", at most {fmt_usd(e.max_cost_usd)}" if e.max_cost_usd is not None and e.cost_usd is not None else ""
    return (f"{e.n_to_run} of {e.n_planned} judgments to run ({e.n_done} already done); about "
            f"{e.input_tokens:,} input and {e.output_tokens:,} output tokens; estimated cost "
            f"{fmt_usd(e.cost_usd, unknown='unknown (no price for this model)')}{worst}"
            f"{' at batch prices' if e.batch else ''}")
