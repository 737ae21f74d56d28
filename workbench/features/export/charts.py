"""Altair charts of a calibration report, shared by the UI pages and the calibration card.

Each builder takes a typed :class:`~workbench.calibration.report.CalibrationReport` (or the
rows of ``presentation``; no storage, no Streamlit) and returns an ``alt.Chart``;
pages show it with ``st.altair_chart`` and the card saves it as an image.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from workbench.calibration.gate import fmt_p
from workbench.calibration.insights import TimelineRow
from workbench.calibration.presentation import category_table
from workbench.calibration.report import CalibrationReport

Width = int | str  # "container" fills the page's column; a number of pixels for exported images

HEADLINE = ("krippendorff_alpha_ordinal", "cohen_kappa_quadratic", "cohen_kappa", "gwet_ac2_linear", "exact_agreement",
            "spearman", "tpr", "tnr", "mean_signed_error")


def _ok(x: Any) -> bool:
    return isinstance(x, (int, float)) and x == x  # not None, not NaN


# Names on a category axis are never cut short or thinned out (Vega drops overlapping labels by default).
FULL_LABELS = alt.Axis(labelLimit=0, labelOverlap=False, title=None)
# Rows of a chart with one row per metric, category or effect are sized by step (pixels per row): a fixed
# height is squeezed by the page's layout until the labels overlap.
ROW = alt.Step(28)


def metric_intervals(report: CalibrationReport, *, threshold: float | None = None,
                     width: Width = "container") -> alt.Chart:
    """Each agreement metric as a point with its 95% interval, with the gate's threshold marked."""
    rows = [{"metric": k, "value": m.value, "low": m.ci_low, "high": m.ci_high}
            for k in HEADLINE if (m := report.metrics.get(k)) and _ok(m.value)]
    df = pd.DataFrame(rows, columns=["metric", "value", "low", "high"])  # columns even when nothing is defined
    base = alt.Chart(df).encode(y=alt.Y("metric:N", sort=list(HEADLINE), axis=FULL_LABELS))
    chart = (base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title="value with 95% interval",
                                                          scale=alt.Scale(domain=[-0.5, 1], nice=False)), x2="high:Q")
             + base.mark_point(filled=True, size=70).encode(
                 x="value:Q", tooltip=["metric", alt.Tooltip("value:Q", format=".3f"),
                                       alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f")]))
    if threshold is not None:
        chart += alt.Chart(pd.DataFrame({"x": [threshold]})).mark_rule(strokeDash=[4, 4], color="firebrick").encode(x="x:Q")
    return chart.properties(title="Agreement with the consensus", width=width, height=ROW)


def confusion_heatmap(report: CalibrationReport, labels: dict[int, str] | None = None, *,
                      width: Width = "container") -> alt.Chart:
    """Counts of (consensus, judge) pairs: the diagonal is agreement; right of it the judge is lenient."""
    conf = report.confusion
    names = [f"{v} {labels.get(v, '')}".strip() if labels else str(v) for v in conf.labels]
    rows = [{"consensus": names[i], "judge": names[j], "count": conf.matrix[i][j]}
            for i in range(len(names)) for j in range(len(names))]
    df = pd.DataFrame(rows)
    base = alt.Chart(df).encode(x=alt.X("judge:N", sort=names, title="judge"),
                                y=alt.Y("consensus:N", sort=names, title="human consensus"))
    heat = base.mark_rect().encode(color=alt.Color("count:Q", scale=alt.Scale(scheme="blues"), legend=None),
                                   tooltip=["consensus", "judge", "count"])
    text = base.mark_text(fontSize=14).encode(text="count:Q",
                                              color=alt.condition(alt.datum.count > max(1, df["count"].max()) / 2,
                                                                  alt.value("white"), alt.value("black")))
    return (heat + text).properties(title="Confusion matrix", width=width, height=220)


def per_category(report: CalibrationReport, *, width: Width = "container") -> alt.Chart:
    """Exact agreement per category with its 95% interval; every category labelled with its n, weak ones in red."""
    rows = [{"category": f"{r.category} (n = {r.n})", "exact agreement": r.exact_agreement,
             "low": r.ci_low, "high": r.ci_high, "n": r.n, "mean signed error": r.mean_signed_error,
             "weaker than the rest": "yes" if r.weaker else "no"}
            for r in category_table(report) if _ok(r.exact_agreement)]
    df = pd.DataFrame(rows, columns=["category", "exact agreement", "low", "high", "n", "mean signed error",
                                     "weaker than the rest"])
    colour = alt.Color("weaker than the rest:N", legend=None,
                       scale=alt.Scale(domain=["no", "yes"], range=["#1f77b4", "firebrick"]))
    base = alt.Chart(df).encode(y=alt.Y("category:N", axis=FULL_LABELS, sort=None), color=colour)
    tooltip = ["category", "n", alt.Tooltip("exact agreement:Q", format=".2f"), alt.Tooltip("low:Q", format=".2f"),
               alt.Tooltip("high:Q", format=".2f"), alt.Tooltip("mean signed error:Q", format="+.2f"),
               "weaker than the rest"]
    chart = (base.mark_rule(strokeWidth=2).encode(
                 x=alt.X("low:Q", scale=alt.Scale(domain=[0, 1]), title="exact agreement with 95% interval"),
                 x2="high:Q")
             + base.mark_point(filled=True, size=70).encode(x="exact agreement:Q", tooltip=tooltip))
    return chart.properties(title="Exact agreement per category", width=width, height=ROW)


def human_ceiling(report: CalibrationReport, *, width: Width = "container") -> alt.Chart:
    """Pairwise exact agreement: human with human against judge with human, on the same items."""
    hc = report.human_ceiling
    pairs = [("human - human", hc.human_pairwise_agreement), ("judge - human", hc.judge_human_pairwise_agreement)]
    df = pd.DataFrame([{"pair": pair, "agreement": a} for pair, a in pairs if _ok(a)], columns=["pair", "agreement"])
    return (alt.Chart(df).mark_bar().encode(
        x=alt.X("agreement:Q", scale=alt.Scale(domain=[0, 1]), title="pairwise exact agreement"),
        y=alt.Y("pair:N", title=None),
        color=alt.Color("pair:N", legend=None, scale=alt.Scale(range=["#999999", "#1f77b4"])),
        tooltip=["pair", alt.Tooltip("agreement:Q", format=".3f")])
            .properties(title="Judge against the humans' own agreement", width=width, height=alt.Step(36)))


def self_preference_forest(report: CalibrationReport, *, threshold: float = 0.1, width: Width = "container") -> alt.Chart:
    """Same-model and same-family effects with intervals; beyond either dashed line is material bias.

    The gate looks both ways (favouring its own outputs, or harsh on them), so both -threshold and +threshold
    are drawn.
    """
    rows = []
    for name, e in report.self_preference.effects().items():
        if _ok(e.value):
            rows.append({"effect": f"{name.replace('_', ' ')} (n = {e.n})", "value": e.value,
                         "low": e.ci_low, "high": e.ci_high, "n": e.n})
    if not rows:
        rows = [{"effect": "not measurable", "value": 0.0, "low": 0.0, "high": 0.0, "n": 0}]
    df = pd.DataFrame(rows)
    base = alt.Chart(df).encode(y=alt.Y("effect:N", axis=FULL_LABELS, sort=None))
    chart = (base.mark_rule(strokeWidth=3).encode(x=alt.X("low:Q", title="mean residual difference (scale units)"),
                                                  x2="high:Q")
             + base.mark_point(filled=True, size=120, shape="diamond").encode(
                 x="value:Q", tooltip=["effect", "n", alt.Tooltip("value:Q", format="+.3f"),
                                       alt.Tooltip("low:Q", format="+.3f"), alt.Tooltip("high:Q", format="+.3f")]))
    rules = pd.DataFrame({"x": [0.0, -threshold, threshold], "kind": ["no effect", "gate", "gate"]})
    chart += alt.Chart(rules).mark_rule(strokeDash=[4, 4]).encode(
        x="x:Q", color=alt.Color("kind:N", scale=alt.Scale(domain=["no effect", "gate"], range=["#888888", "firebrick"]),
                        legend=None))
    return chart.properties(title="Self-preference", width=width, height=alt.Step(48))


def cost_vs_agreement(rows: list[dict], *, width: Width = "container") -> alt.Chart:
    """One point per judge whose cost is known: cost per 100 items against agreement, coloured by verdict.

    A judge whose cost is unknown (None) is left out, never drawn at $0; the page says which ones.
    """
    df = pd.DataFrame([r for r in rows if _ok(r.get("cost per 100 items (USD)"))],
                      columns=["judge", "alpha", "cost per 100 items (USD)", "verdict"])
    return (alt.Chart(df).mark_circle(size=140).encode(
        x=alt.X("cost per 100 items (USD):Q"), y=alt.Y("alpha:Q", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("verdict:N", scale=alt.Scale(domain=["calibrated", "not calibrated"],
                                                     range=["#2ca02c", "#d62728"])),
        tooltip=["judge", alt.Tooltip("alpha:Q", format=".3f"),
                 alt.Tooltip("cost per 100 items (USD):Q", format="$.2f"), "verdict"])
            + alt.Chart(df).mark_text(dy=-12).encode(x="cost per 100 items (USD):Q", y="alpha:Q", text="judge:N")
            ).properties(title="Cost against agreement", width=width, height=260)


def drift_timeline(rows: list[dict], *, width: Width = "container") -> alt.Chart:
    """Agreement of each run with its interval band; runs that moved (the gate's drift rule) are ringed.

    ``rows``: ``insights.drift_timeline``'s, each a :class:`TimelineRow`'s JSON."""
    runs = [TimelineRow.from_json(r) for r in rows]
    df = pd.DataFrame([{"run": r.run, "alpha": r.alpha, "low": r.low, "high": r.high,
                        "n items": r.n_items, "model version": r.model_version,
                        "Stuart-Maxwell p": fmt_p(r.stuart_maxwell_p) if r.stuart_maxwell_p is not None else "–",
                        "moved": "yes" if r.significant else "no"} for r in runs],
                      columns=["run", "alpha", "low", "high", "n items", "model version", "Stuart-Maxwell p", "moved"])
    base = alt.Chart(df).encode(x=alt.X("run:N", sort=None, title="run (oldest first)", axis=alt.Axis(labelAngle=0)))
    band = base.mark_area(opacity=0.2).encode(y=alt.Y("low:Q", title="krippendorff_alpha_ordinal",
                                                      scale=alt.Scale(domain=[0, 1])), y2="high:Q")
    line = base.mark_line(point=True).encode(y="alpha:Q", tooltip=[
        "run", alt.Tooltip("alpha:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
        alt.Tooltip("high:Q", format=".3f"), "n items", "model version", "Stuart-Maxwell p", "moved"])
    flagged = base.transform_filter(alt.datum.moved == "yes").mark_point(size=300, color="firebrick",
                                                                         strokeWidth=2).encode(y="alpha:Q")
    text = base.mark_text(dy=18, fontSize=10).encode(y="alpha:Q", text="model version:N")
    return (band + line + flagged + text).properties(width=width, height=260)
