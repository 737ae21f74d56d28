"""The label plan in words, beside the verdict on the Calibration page."""

from __future__ import annotations

import streamlit as st

from workbench.services.planning import plan
from workbench.ui.components import code_span, plain


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
    if p.queue_advice:
        st.info(plain(p.queue_advice), icon="🧭")
        st.button("Re-plan the active queue", key=f"replan:{golden_set}:{judge}", on_click=_replan,
                  args=(golden_set, rubric, judge))


def _replan(golden_set: str, rubric: str, judge: str) -> None:
    from workbench.services.active_queue import set_queue_order
    from workbench.ui import auth
    from workbench.ui.components import run_action
    from workbench.ui.state import store

    user = auth.current_user()  # the page is for leads; the callback checks again
    if user is None or user.role not in auth.LEADS:
        return
    run_action(set_queue_order, store(), golden_set, "active", rubric=rubric, judge=judge, lead=user.name,
               ok=f"The active queue of {code_span(golden_set)} now serves the undecided checks.")
