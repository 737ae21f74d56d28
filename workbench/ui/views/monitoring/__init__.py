"""Monitoring (leads): one stream of production traffic an approved judge grades. Plain sentences first (the open
alarms, or that there is none), then the corrected pass rate over time with its band and the agreement over time
with the policy's bound, then the windows as a table.

A package rather than a module of ``views/``: that folder holds its limit of modules; the page is registered in
``app.py`` by its ``render`` function.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from workbench.features.monitoring.report import list_streams, monitor_report
from workbench.ui import auth
from workbench.ui.components import code_span, prose
from workbench.ui.state import store

ROLES = auth.LEADS


def render() -> None:
    auth.require(ROLES)
    st.title("Monitoring")
    s = store()
    names = list_streams(s)
    if not names:
        st.info("No stream is monitored yet. Ingest production traces with `workbench monitor ingest --stream NAME "
                "--bundle BUNDLE --from jsonl FILE` (see docs/monitoring.md).")
        return
    stream = st.selectbox("Stream", names, key="monitor_stream")
    window = st.radio("Window", ["day", "week"], horizontal=True, key="monitor_window")
    report = monitor_report(s, stream, window=window)
    last = report.windows[-1] if report.windows else None
    st.markdown(f"Stream {code_span(stream)} is graded by {code_span(report.bundle)}; "
                f"{sum(w.n_items for w in report.windows):,} traces, "
                f"{last.labels_since_approval if last else 0:,} labeled since approval.")
    for alarm in report.open_alarms:
        st.error(prose(alarm.sentence), icon="🚨")
    if not report.open_alarms:
        st.success("No open alarm: the judge agrees with the reviewers as the gate requires, the traffic looks like "
                   "the approval golden set, and the approval has not expired.")
    rows = pd.DataFrame([{
        "window": w.start[:10], "traces": w.n_items, "labeled": w.n_labeled, "raw pass rate": w.raw_pass_rate,
        "corrected": w.corrected_pass_rate.value, "low": w.corrected_pass_rate.ci_low,
        "high": w.corrected_pass_rate.ci_high, "agreement": w.agreement.value, "agreement low": w.agreement.ci_low,
        "agreement high": w.agreement.ci_high, "alarms": ", ".join(a.kind for a in w.alarms) or "-",
    } for w in report.windows])
    st.subheader("Pass rate, corrected for the judge's errors (95% band)")
    base = alt.Chart(rows).encode(x=alt.X("window:T", title=None))
    st.altair_chart(base.mark_area(opacity=0.25).encode(y=alt.Y("low:Q", title="pass rate"), y2="high:Q")
                    + base.mark_line(point=True).encode(y="corrected:Q")
                    + base.mark_line(strokeDash=[4, 4], color="gray").encode(y="raw pass rate:Q"),
                    use_container_width=True)
    st.caption("Solid: prediction-powered estimate from the window's labels; dashed: the judge's raw pass rate.")
    st.subheader(f"Agreement with the reviewers ({report.agreement_metric}) and the policy's bound")
    bound = alt.Chart(pd.DataFrame({"bound": [report.agreement_bound]})).mark_rule(color="red").encode(y="bound:Q")
    st.altair_chart(base.mark_errorbar().encode(y=alt.Y("agreement low:Q", title="agreement"), y2="agreement high:Q")
                    + base.mark_point(filled=True).encode(y="agreement:Q") + bound, use_container_width=True)
    st.dataframe(rows, hide_index=True, use_container_width=True)
