"""Drift (leads): each judge's agreement run after run, with its interval and model versions."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from workbench import charts
from workbench.errors import WorkbenchError
from workbench.ui import auth
from workbench.ui.components import code_span, plain, prose
from workbench.ui.lead import page_header, show_chart, timeline

ROLES = auth.LEADS


def render() -> None:
    picked = page_header("Drift", "drift", ROLES)
    if picked is None:
        return
    golden_set, rubric, judge = picked
    try:
        rows = timeline(golden_set, rubric, judge)
    except WorkbenchError as e:
        st.warning(prose(str(e)))
        return
    show_chart(charts.drift_timeline(rows).properties(title=f"{judge}: agreement per run"))
    moved = [r for r in rows if r["significant"]]
    if moved:
        for r in moved:
            st.error(f"Run {code_span(r['run'])} (model version {plain(r['model_version'])}) moved from the run before: alpha "
                     f"changed by {r['alpha_change']:+.2f}, Stuart-Maxwell p = {r['stuart_maxwell_p']:.2g}. "
                     "Recalibrate before trusting it.", icon="📉")
    elif len(rows) > 1:
        st.success("No run differs significantly from the run before it.")
    else:
        st.info("Only one run so far: run the judge again (or after a model update) to see drift.")
    st.dataframe(pd.DataFrame(rows), hide_index=True)


if __name__ == "__main__":
    render()
