"""Home: what is in this workbench (golden sets, rubrics, counts)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from workbench.calibration.golden_sets import list_golden_sets
from workbench.calibration.rubric_versions import list_rubrics
from workbench.ui.auth import LEADS, current_user
from workbench.ui.state import store


def render() -> None:
    st.title("Judge Workbench")
    st.caption("Decide which LLM judges you may trust: label a golden set, score judges against the humans, "
               "export only calibrated rubrics.")
    s = store()
    user = current_user()
    lead = user is not None and user.role in LEADS  # reviewers stay blind to judges, even to their counts
    sets = list_golden_sets(s)
    if any(g["is_demo"] for g in sets):
        st.warning("Synthetic data: this database holds the **synthetic demo**. The items, reviewers and judges are "
                   "simulated, with planted properties, to show what the workbench finds; none of it is real data.")
    st.subheader("Golden sets")
    if not sets:
        st.info("No golden sets yet. Run `workbench demo` or `workbench import items FILE --golden-set NAME`.")
    else:
        st.dataframe(pd.DataFrame([{
            "golden set": g["name"], "items": g["n_items"], "labels": g["n_labels"], "raters": g["n_raters"],
            **({"judgments": g["n_judgments"]} if lead else {}), "frozen version": g["latest_version"],
            "synthetic": "yes" if g["is_demo"] else "",
        } for g in sets]), hide_index=True, width="stretch", placeholder="–")
    st.subheader("Rubrics")
    rubrics = list_rubrics(s)
    if not rubrics:
        st.info("No rubrics yet. Add one with `workbench rubric add rubrics/NAME.yaml`.")
    else:
        st.dataframe(pd.DataFrame([{"rubric": r["name"], "latest version": r["latest_version"],
                                    "versions": r["n_versions"]} for r in rubrics]),
                     hide_index=True, width="stretch")
