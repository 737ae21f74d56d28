"""Adjudicate (leads): items without consensus, every rater's label and rationale side by side, the final label.

The final label goes through ``services.golden_sets.adjudicate``; the item
then has a consensus and leaves the list, and the counts above update.
"""

from __future__ import annotations

import streamlit as st

from workbench.features.labeling import service as svc
from workbench.calibration.golden_sets import adjudicate
from workbench.calibration.rubric_versions import get_rubric
from workbench.ui import auth
from workbench.ui.components import (code_span, flash, golden_set_and_rubric, plain, prose, run_action, score_text,
    show_flash)
from workbench.ui.state import store
from workbench.ui.views.parts.trajectory import render_item

ROLES = auth.LEADS


def render() -> None:
    user = auth.require(ROLES)
    golden_set, rubric = golden_set_and_rubric()
    st.title("Adjudicate")
    if golden_set is None or rubric is None:
        st.info("No golden set or rubric yet; import them on the Import page.")
        return
    s = store()
    scale = get_rubric(s, rubric).rubric.scale
    show_flash()
    status = svc.adjudication_status(s, golden_set, rubric)
    a, b, c, d = st.columns(4)
    # "without consensus" beside "adjudicated" read as the same items; say what each count is for
    a.metric("Labeled items", status.labeled, help="Items of this golden set that at least one reviewer labeled.")
    b.metric("With a consensus label", status.resolved,
             help="A strict majority of the raters agree, or a lead gave the final label.")
    c.metric("Waiting for a final label", len(status.unresolved),
             help="The raters disagree and no lead has decided yet: the list below.")
    d.metric("Final labels given so far", status.adjudicated,
             help="Items a lead settled; they count among those with a consensus label.")
    st.progress(status.resolved / status.labeled if status.labeled else 1.0,
                text=f"{status.resolved} of {status.labeled} labeled items have a consensus label")
    if not status.unresolved:
        st.success("Every labeled item has a consensus label.", icon="✅")
        return
    ids = [x.item_id for x in status.unresolved]
    if st.session_state.get("adjudicate_item") not in ids:
        st.session_state["adjudicate_item"] = ids[0]
    item_id = st.selectbox(f"Item waiting for a final label ({len(ids)})", ids, key="adjudicate_item")
    case = status.unresolved[ids.index(item_id)]

    st.markdown("##### The raters' labels")
    cols = st.columns(max(len(case.labels), 1))
    for col, lab in zip(cols, case.labels):
        with col.container(border=True):
            st.markdown(f"**{plain(lab['rater'])}**: {score_text(scale, lab['score'])}")
            st.markdown(prose(lab["rationale"]) if lab["rationale"] else "_no rationale_")
    for f in case.flags:
        st.warning(f"{plain(f['rater'])} flagged this item as **{plain(f['kind'])}**"
                   + (f": {plain(f['note'])}" if f["note"] else "."))

    st.markdown("##### Final label")
    options = list(scale.values)
    st.radio("Final label", options, index=None, key=f"adjudicate-score:{item_id}", horizontal=True,
             format_func=lambda v: score_text(scale, v), label_visibility="collapsed")
    st.text_area("Note", key=f"adjudicate-note:{item_id}", height=80,
                 placeholder="Why this is the final label (kept with the adjudication).")
    st.button("Save final label", type="primary", key=f"adjudicate:{item_id}", on_click=_save,
              args=(golden_set, rubric, item_id, user.name))
    with st.expander("The item", expanded=True):
        render_item(svc.open_item(s, golden_set, item_id), key=f"adj:{item_id}")


def _save(golden_set: str, rubric: str, item_id: str, lead: str) -> None:
    score = st.session_state.get(f"adjudicate-score:{item_id}")
    note = (st.session_state.get(f"adjudicate-note:{item_id}") or "").strip()
    if score is None:
        flash("error", f"Choose the final label of {code_span(item_id)} first.")
        return
    if not note:
        flash("error", f"Write a note saying why {code_span(item_id)} gets this final label.")
        return
    scale = get_rubric(store(), rubric).rubric.scale
    run_action(adjudicate, store(), golden_set, rubric, item_id, score, lead=lead, note=note,
               ok=f"Final label of {code_span(item_id)}: {score_text(scale, score)}.")


if __name__ == "__main__":  # run by Streamlit as the page script
    render()
