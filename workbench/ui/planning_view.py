"""The label plan in words, beside the verdict on the Calibration page."""

from __future__ import annotations

import streamlit as st

from workbench.calibration.report import CalibrationReport
from workbench.features.planning.plan import plan
from workbench.ui.components import code_span, plain


def render_plan(store, golden_set: str, rubric: str, judge: str, report: CalibrationReport) -> None:
    """'About 40 more labels on items the judge fails would decide TNR.' One sentence per undecided check."""
    try:
        p = plan(store, golden_set, rubric, judge, report=report)
    except Exception as e:  # a plan is advice: its failure must not hide the verdict
        st.caption(f"No label plan: {plain(str(e))}")
        return
    if design := report.sampling_design:
        st.caption(f"Labels came from the active queue: estimates weighted by 1 / inclusion probability "
                   f"(effective {design.kish_effective_n:.0f} items).")
    st.markdown("**Labels to a decision.** " + plain(p.summary()))
    _queue_order(store, golden_set, rubric, judge)
    if p.queue_advice:
        st.info(plain(p.queue_advice), icon="🧭")
        st.button("Re-plan the active queue", key=f"replan:{golden_set}:{judge}", on_click=_replan,
                  args=(golden_set, rubric, judge))


def _replan(golden_set: str, rubric: str, judge: str) -> None:
    from workbench.features.planning.active_queue import set_queue_order
    from workbench.ui import auth
    from workbench.ui.components import run_action
    from workbench.ui.state import store

    user = auth.current_user()  # the page is for leads; the callback checks again
    if user is None or user.role not in auth.LEADS:
        return
    run_action(set_queue_order, store(), golden_set, "active", rubric=rubric, judge=judge, lead=user.name,
               ok=f"The active queue of {code_span(golden_set)} now serves the undecided checks.")


def _queue_order(store, golden_set: str, rubric: str, judge: str) -> None:
    """The lead's switch of the Label page's order: each reviewer's random order, or the active queue for this
    rubric and judge (``golden-set queue G --order``)."""
    from workbench.features.planning.active_queue import ORDERS, queue_setting

    current = queue_setting(store, golden_set).order
    st.radio(f"Label queue of {plain(golden_set)}", ORDERS, index=ORDERS.index(current), horizontal=True,
             key=f"queue_order:{golden_set}:{judge}", on_change=_set_order, args=(golden_set, rubric, judge),
             help="Active serves the items whose labels decide this judge's undecided checks soonest; every "
                  "item keeps a chance and the estimates are weighted back to the whole golden set.")


def _set_order(golden_set: str, rubric: str, judge: str) -> None:
    from workbench.features.planning.active_queue import set_queue_order
    from workbench.ui import auth
    from workbench.ui.components import run_action
    from workbench.ui.state import store

    user = auth.current_user()  # the page is for leads; the callback checks again
    if user is None or user.role not in auth.LEADS:
        return
    order = st.session_state[f"queue_order:{golden_set}:{judge}"]
    run_action(set_queue_order, store(), golden_set, order, rubric=rubric, judge=judge, lead=user.name,
               ok=f"The label queue of {code_span(golden_set)} is now in {order} order.")
