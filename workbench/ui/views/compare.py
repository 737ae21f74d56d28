"""Compare (leads): every judge of a rubric side by side, cost against agreement, significant differences."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.calibration.presentation import compare_table
from workbench.calibration.report import Comparison
from workbench.core.scale import fmt_usd
from workbench.ui import auth
from workbench.ui.components import code_span, plain, prose
from workbench.ui.lead import NUMBER, SIGNED, comparison, cost_chart, page_header, show_table

ROLES = auth.LEADS


def table(result: Comparison) -> pd.DataFrame:
    """One row per judge, narrow enough for the page at 1400 px; the columns a lead decides on (verdict,
    agreement, cost) come first. Models and failed checks are listed under it (:func:`judge_lines`)."""
    return pd.DataFrame([{
        "judge": r.judge,
        "verdict": {"passed": "calibrated", "undecided": "not decided yet"}.get(r.state, "not calibrated"),
        "alpha": r.alpha,
        "alpha 95%": (f"{r.alpha_low:.2f} – {r.alpha_high:.2f}"
                      if r.alpha_low is not None and r.alpha_high is not None else None),
        "cost / 100 items": fmt_usd(r.cost_per_100_usd),
        "exact": r.exact, "mean signed error": r.mean_signed_error, "TPR": r.tpr, "TNR": r.tnr,
        "same-family effect": r.same_family, "flip rate": r.flip_rate,
    } for r in compare_table(result)])


def judge_lines(result: Comparison) -> str:
    """'- `lenient-mini` (`openai/gpt-4o-mini`, single, median latency 1.1 s): fails agreement, ...' per judge."""
    lines = []
    for r in result.judges:
        latency = r.cost.median_latency_ms
        lines.append(f"- {code_span(r.judge.id)} ({code_span(r.judge.model)}, {r.judge.mode}"
                     + (f", median latency {latency / 1000:.1f} s" if latency is not None else "") + "): "
                     + plain(r.verdict.summary()))
    return "\n".join(lines)


def render() -> None:
    picked = page_header("Compare judges", "cmp", ROLES, with_judge=False)
    if picked is None:
        return
    golden_set, rubric, _ = picked
    try:
        result = comparison(golden_set, rubric)
    except WorkbenchError as e:
        st.warning(prose(str(e)))
        return
    df = table(result)
    right = st.column_config.TextColumn(alignment="right")
    show_table(df, {"alpha": NUMBER, "exact": NUMBER, "mean signed error": "%+.2f", "TPR": "%.2f", "TNR": "%.2f",
                    "same-family effect": "%+.2f", "flip rate": "%.2f"},
               key="cmp-table",
               column_config={"judge": st.column_config.TextColumn(pinned=True),
                              "alpha 95%": right, "cost / 100 items": right,
                              "mean signed error": st.column_config.NumberColumn(
                                  format="%+.2f", help="mean(judge − consensus): above 0 the judge is lenient")})
    st.markdown(judge_lines(result))
    calibrated = df[df["verdict"] == "calibrated"]["judge"].tolist()
    if calibrated:
        st.success("Calibrated: " + ", ".join(code_span(j) for j in calibrated) + ".")
    else:
        st.error("No judge of this rubric passes the gate yet.")
    cost_chart(golden_set, rubric)
    unknown = [r.judge.id for r in result.judges if r.cost.per_100_items_usd is None]
    if unknown:
        st.caption("Cost unknown (no price recorded), so not plotted: " + ", ".join(code_span(j) for j in unknown)
                   + ".")
    st.subheader("Which differences are real")
    st.caption(f"Paired bootstrap of each judge against the best ({code_span(result.best)}) on the same items: "
               "a difference is significant when its 95% interval excludes 0.")
    show_table(pd.DataFrame([{"judge": d.judge, "vs": d.baseline, "alpha difference": d.value,
                              "95% low": d.ci_low, "95% high": d.ci_high,
                              "significant": "yes" if d.significant else "no"} for d in result.differences]),
               {"alpha difference": SIGNED, "95% low": SIGNED, "95% high": SIGNED}, key="cmp-diffs")


if __name__ == "__main__":
    render()
