"""Altair charts of a calibration report, shared by the UI pages and the calibration card.

Each builder takes plain report dicts (no storage, no Streamlit) and returns an
``alt.Chart``; pages show it with ``st.altair_chart`` and the card saves it as
an image.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

Width = int | str  # "container" fills the page's column; a number of pixels for exported images

HEADLINE = ("krippendorff_alpha_ordinal", "cohen_kappa_quadratic", "cohen_kappa", "gwet_ac2_linear", "exact_agreement",
            "spearman", "tpr", "tnr", "mean_signed_error")


def _ok(x: Any) -> bool:
    return isinstance(x, (int, float)) and x == x  # not None, not NaN


def metric_intervals(report: dict, *, threshold: float | None = None, width: Width = "container") -> alt.Chart:
    """Each agreement metric as a point with its 95% interval, with the gate's threshold marked."""
    rows = [{"metric": k, "value": m["value"], "low": m["ci_low"], "high": m["ci_high"]}
            for k in HEADLINE if (m := report["metrics"].get(k)) and _ok(m.get("value"))]
    df = pd.DataFrame(rows, columns=["metric", "value", "low", "high"])  # columns even when nothing is defined
    base = alt.Chart(df).encode(y=alt.Y("metric:N", sort=list(HEADLINE), title=None))
    chart = (base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title="value with 95% interval",
                                                          scale=alt.Scale(domain=[-0.5, 1])), x2="high:Q")
             + base.mark_point(filled=True, size=70).encode(
                 x="value:Q", tooltip=["metric", alt.Tooltip("value:Q", format=".3f"),
                                       alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f")]))
    if threshold is not None:
        chart += alt.Chart(pd.DataFrame({"x": [threshold]})).mark_rule(strokeDash=[4, 4], color="firebrick").encode(x="x:Q")
    return chart.properties(title="Agreement with the consensus", width=width, height=26 * max(1, len(rows)))


def confusion_heatmap(report: dict, labels: dict[int, str] | None = None, *, width: Width = "container") -> alt.Chart:
    """Counts of (consensus, judge) pairs: the diagonal is agreement; right of it the judge is lenient."""
    conf = report["confusion"]
    names = [f"{v} {labels.get(v, '')}".strip() if labels else str(v) for v in conf["labels"]]
    rows = [{"consensus": names[i], "judge": names[j], "count": conf["matrix"][i][j]}
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


def per_category(report: dict, *, width: Width = "container") -> alt.Chart:
    rows = [{"category": k, "exact agreement": v["exact_agreement"], "n": v["n_items"],
             "mean signed error": v["mean_signed_error"]}
            for k, v in (report.get("per_category") or {}).items()]
    df = pd.DataFrame(rows, columns=["category", "exact agreement", "n", "mean signed error"])
    return (alt.Chart(df).mark_bar().encode(
        x=alt.X("exact agreement:Q", scale=alt.Scale(domain=[0, 1])), y=alt.Y("category:N", title=None),
        tooltip=["category", "n", alt.Tooltip("exact agreement:Q", format=".2f"),
                 alt.Tooltip("mean signed error:Q", format="+.2f")])
            .properties(title="Exact agreement per category", width=width, height=30 * max(1, len(rows))))


def human_ceiling(report: dict, *, width: Width = "container") -> alt.Chart:
    """Pairwise exact agreement: human with human against judge with human, on the same items."""
    hc = report["human_ceiling"]
    rows = [{"pair": "human - human", "agreement": hc.get("human_pairwise_agreement")},
            {"pair": "judge - human", "agreement": hc.get("judge_human_pairwise_agreement")}]
    df = pd.DataFrame([r for r in rows if _ok(r["agreement"])], columns=["pair", "agreement"])
    return (alt.Chart(df).mark_bar().encode(
        x=alt.X("agreement:Q", scale=alt.Scale(domain=[0, 1]), title="pairwise exact agreement"),
        y=alt.Y("pair:N", title=None),
        color=alt.Color("pair:N", legend=None, scale=alt.Scale(range=["#999999", "#1f77b4"])),
        tooltip=["pair", alt.Tooltip("agreement:Q", format=".3f")])
            .properties(title="Judge against the humans' own agreement", width=width, height=90))


def self_preference_forest(report: dict, *, threshold: float = 0.1, width: Width = "container") -> alt.Chart:
    """Same-model and same-family effects with intervals; right of the dashed line is material favouritism."""
    rows = []
    for name, e in (report.get("self_preference") or {}).items():
        if _ok(e.get("value")):
            rows.append({"effect": name.replace("_", " "), "value": e["value"], "low": e["ci_low"],
                         "high": e["ci_high"], "n": e.get("n")})
    if not rows:
        rows = [{"effect": "not measurable", "value": 0.0, "low": 0.0, "high": 0.0, "n": 0}]
    df = pd.DataFrame(rows)
    base = alt.Chart(df).encode(y=alt.Y("effect:N", title=None))
    chart = (base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title="mean residual difference (scale units)"),
                                                  x2="high:Q")
             + base.mark_point(filled=True, size=80, shape="diamond").encode(
                 x="value:Q", tooltip=["effect", "n", alt.Tooltip("value:Q", format="+.3f"),
                                       alt.Tooltip("low:Q", format="+.3f"), alt.Tooltip("high:Q", format="+.3f")]))
    rules = pd.DataFrame({"x": [0.0, threshold], "kind": ["no effect", "gate"]})
    chart += alt.Chart(rules).mark_rule(strokeDash=[4, 4]).encode(
        x="x:Q", color=alt.Color("kind:N", scale=alt.Scale(domain=["no effect", "gate"], range=["#888888", "firebrick"]),
                        legend=None))
    return chart.properties(title="Self-preference", width=width, height=90)


def cost_vs_agreement(rows: list[dict], *, width: Width = "container") -> alt.Chart:
    """One point per judge: cost per 100 items against agreement, coloured by verdict."""
    df = pd.DataFrame(rows)
    return (alt.Chart(df).mark_circle(size=140).encode(
        x=alt.X("cost per 100 items (USD):Q"), y=alt.Y("alpha:Q", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("verdict:N", scale=alt.Scale(domain=["calibrated", "not calibrated"],
                                                     range=["#2ca02c", "#d62728"])),
        tooltip=list(df.columns))
            + alt.Chart(df).mark_text(dy=-12).encode(x="cost per 100 items (USD):Q", y="alpha:Q", text="judge:N")
            ).properties(title="Cost against agreement", width=width, height=260)


def drift_timeline(rows: list[dict], *, width: Width = "container") -> alt.Chart:
    """Agreement of each run with its interval band; runs whose change is significant are ringed."""
    df = pd.DataFrame(rows)
    base = alt.Chart(df).encode(x=alt.X("run:N", sort=None, title="run (oldest first)"))
    band = base.mark_area(opacity=0.2).encode(y=alt.Y("low:Q", title="krippendorff_alpha_ordinal",
                                                      scale=alt.Scale(domain=[0, 1])), y2="high:Q")
    line = base.mark_line(point=True).encode(y="alpha:Q", tooltip=list(df.columns))
    flagged = base.transform_filter(alt.datum.significant).mark_point(size=300, color="firebrick",
                                                                      strokeWidth=2).encode(y="alpha:Q")
    text = base.mark_text(dy=18, fontSize=10).encode(y="alpha:Q", text="model_version:N")
    return (band + line + flagged + text).properties(width=width, height=260)
