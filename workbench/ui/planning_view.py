"""The label plan in words, beside the verdict on the Calibration page."""

from __future__ import annotations

import streamlit as st

from workbench.services.planning import plan
from workbench.ui.components import plain


def render_plan(store, golden_set: str, rubric: str, judge: str, report: dict) -> None:
    """'About 40 more labels on items the judge fails would decide TNR.' One sentence per undecided check."""
    try:
        p = plan(store, golden_set, rubric, judge, report=report)
    except Exception as e:  # a plan is advice: its failure must not hide the verdict
        st.caption(f"No label plan: {plain(str(e))}")
        return
    design = report.get("sampling_design")
    if design:
        st.caption(f"Labels came from the active queue: estimates weighted by 1 / inclusion probability "
                   f"(effective {design['kish_effective_n']:.0f} items).")
    st.markdown("**Labels to a decision.** " + plain(p.summary()))
