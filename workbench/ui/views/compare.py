"""Compare (leads): each judge's verdict in one sentence, then every judge side by side in plain words, cost
against agreement, and which differences are real."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.calibration.presentation import compare_table
from workbench.calibration.report import Comparison
from workbench.core.scale import fmt_usd
from workbench.ui import auth, glossary
from workbench.ui.components import code_span, plain, prose
from workbench.ui.lead import NUMBER, SIGNED, comparison, cost_chart, page_header, show_table, verdict_sentences

ROLES = auth.LEADS


def table(result: Comparison) -> pd.DataFrame:
    """One row per judge, narrow enough for the page at 1400 px; the columns a lead decides on (verdict,
    agreement, cost) come first. Models and failed checks are listed under it (:func:`judge_lines`)."""
    return pd.DataFrame([{
        "judge": r.judge,
        "verdict": {"passed": "calibrated", "undecided": "not decided yet"}.get(r.state, "not calibrated"),
        "agreement": r.alpha,
        "95% interval": (f"{r.alpha_low:.2f} – {r.alpha_high:.2f}"
                         if r.alpha_low is not None and r.alpha_high is not None else None),
        "cost / 100 items": fmt_usd(r.cost_per_100_usd),
        "exact": r.exact, "lean": r.mean_signed_error, "passes caught": r.tpr,
        "fails caught": r.tnr, "own-family bias": r.same_family, "flip rate": r.flip_rate,
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
    verdict_sentences(golden_set, rubric)  # the verdict first, one sentence a judge
    try:
        result = comparison(golden_set, rubric)
    except WorkbenchError as e:
        st.warning(prose(str(e)))
        return
    df = table(result)
    right = st.column_config.TextColumn(alignment="right")

    def number(fmt: str, term: str) -> st.column_config.NumberColumn:
        return st.column_config.NumberColumn(format=fmt, help=glossary.help(term))

    show_table(df, key="cmp-table",
               column_config={"judge": st.column_config.TextColumn(pinned=True),
                              "95% interval": st.column_config.TextColumn(alignment="right", help=glossary.help("ci")),
                              "cost / 100 items": right,
                              "agreement": number("%.2f", "alpha"), "exact": number("%.2f", "exact"),
                              "lean": number("%+.2f", "mse"), "passes caught": number("%.2f", "tpr"),
                              "fails caught": number("%.2f", "tnr"),
                              "own-family bias": number("%+.2f", "self_preference"),
                              "flip rate": number("%.2f", "flip_rate")})
    with st.expander("Why each judge has its verdict (the gate's words)"):
        st.markdown(judge_lines(result))
    cost_chart(golden_set, rubric)
    unknown = [r.judge.id for r in result.judges if r.cost.per_100_items_usd is None]
    if unknown:
        st.caption("Cost unknown (no price recorded), so not plotted: " + ", ".join(code_span(j) for j in unknown)
                   + ".")
    st.subheader("Which differences are real")
    st.caption(f"Each judge against the best ({code_span(result.best)}) on the same items, by resampling them "
               "(paired bootstrap): a difference is real when its 95% interval does not include 0.")
    show_table(pd.DataFrame([{"judge": d.judge, "vs": d.baseline, "agreement (alpha) difference": d.value,
                              "95% low": d.ci_low, "95% high": d.ci_high,
                              "significant": "yes" if d.significant else "no"} for d in result.differences]),
               {"agreement (alpha) difference": SIGNED, "95% low": SIGNED, "95% high": SIGNED}, key="cmp-diffs")


if __name__ == "__main__":
    render()
