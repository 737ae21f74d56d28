"""Reviewers (leads): each reviewer measured against the others, as a judge is against them all (the team's room
of the lead pages: ``views/`` holds at most 12 modules).

The raters report (``features/people/report.py``, the same numbers as ``workbench rater report``): what to do
first, in its sentences, then one row per reviewer; then the golden set's gold items and assignments.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.features.labeling.assignment import assignment_status
from workbench.features.labeling.gold import status as gold_status
from workbench.features.people.report import RatersReport
from workbench.stats.intervals.records import MetricInterval
from workbench.ui import auth
from workbench.ui.components import code_span, plain, prose
from workbench.ui.lead import page_header, raters, show_table
from workbench.ui.state import store

ROLES = auth.LEADS


def _iv(m: MetricInterval | None) -> str | None:
    if m is None or not math.isfinite(m.value):
        return None
    return f"{m.value:.2f} [{m.ci_low:.2f}, {m.ci_high:.2f}]"


def _over_time(r) -> str | None:
    o = r.over_time
    if o is None or not o.n_labels:
        return None
    return f"fell at label {o.alarm_at + 1}" if o.alarm_at is not None else "steady"


def table(report: RatersReport) -> pd.DataFrame:
    """One row per reviewer, each measure in plain words with its 95% interval in brackets."""
    return pd.DataFrame([{
        "reviewer": r.name + (" (removed)" if r.removed else ""), "labels": r.n_labels,
        "compared with others": r.agreement.n_items,
        "exact agreement": _iv(r.agreement.exact_agreement),
        "agreement (alpha)": _iv(r.agreement.krippendorff_alpha_ordinal),
        "fail share minus others'": _iv(r.fail_share.difference),
        "skipped": None if not math.isfinite(r.skip_rate.value) else f"{r.skip_rate.value:.0%}",
        "flagged": None if not math.isfinite(r.flag_rate.value) else f"{r.flag_rate.value:.0%}",
        "over time": _over_time(r),
        "gold accuracy": None if r.gold is None else f"{_iv(r.gold)} on {r.gold.n}",
    } for r in report.reviewers])


def render() -> None:
    picked = page_header("Reviewers", "reviewers", ROLES, with_judge=False)
    if picked is None:
        return
    golden_set, rubric, _ = picked
    try:
        report = raters(golden_set, rubric)
    except WorkbenchError as e:
        st.info(prose(str(e)))
        return
    for sentence in report.findings:
        st.warning(prose(sentence))
    if not report.findings:
        st.success(f"No reviewer is below the agreement bound ({plain(report.bound_source)} {report.bound:g}) or marks "
                   "fails differently from the others beyond doubt.")
    st.caption(f"Each reviewer against the consensus of the others on the items they share (leave-one-out), 95% "
               f"intervals in brackets; not shown: {report.time_per_label}. The same numbers as "
               f"{code_span(f'workbench rater report -g {golden_set} -r {rubric}')}.")
    show_table(table(report))
    s = store()
    g = gold_status(s, golden_set, rubric)
    st.markdown(f"**Gold items.** {prose(g.summary())}")
    a = assignment_status(s, golden_set, rubric)
    st.markdown(f"**Assignments.** {prose(a.summary().splitlines()[0])}")
    if a.reviewers:
        show_table(pd.DataFrame([{"reviewer": x.rater, "share": x.share, "items": x.items, "labeled": x.labeled,
                                  "left": x.left} for x in a.reviewers]))
        if (w := a.warning()):
            st.warning(prose(w))

