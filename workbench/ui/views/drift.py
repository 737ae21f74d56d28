"""Drift (leads): each judge's agreement run after run, with its interval and model versions.

Whether a run moved, and its p-value, come from the timeline rows (the gate's drift rule) and ``gate.fmt_p``:
the same words and numbers as the Calibration page, the CLI and the card.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.calibration.gate import fmt_p
from workbench.calibration.insights import TimelineRow
from workbench.ui import auth, glossary
from workbench.ui.components import code_span, plain, prose
from workbench.ui.lead import (NUMBER, RIGHT, SIGNED, drift_chart, in_words, page_header, run_counts, show_table,
    timeline, verdict_sentences)

ROLES = auth.LEADS


def judge_with_runs(golden_set: str, rubric: str) -> str | None:
    """The judge the page opens on: the first with two or more runs (something to compare)."""
    return next((j for j, n in run_counts(golden_set, rubric).items() if n >= 2), None)


def render() -> None:
    picked = page_header("Drift", "drift", ROLES, default_judge=judge_with_runs)
    if picked is None:
        return
    golden_set, rubric, judge = picked
    verdict_sentences(golden_set, rubric, [judge])  # the verdict first: drift is one of its checks
    try:
        rows = [TimelineRow.from_json(r) for r in timeline(golden_set, rubric, judge)]
    except WorkbenchError as e:
        st.warning(prose(str(e)))
        _others(golden_set, rubric, judge)
        return
    if len(rows) < 2:
        st.info(f"{code_span(judge)} has one run so far ({code_span(rows[0].run)}, agreement (alpha) "
                f"{rows[0].alpha:.2f}): drift compares a run with the one before it, so run the judge again "
                "(after a model update, or with “Start a new run” on the Judges page) to see it.")
        _others(golden_set, rubric, judge)
        return
    drift_chart(golden_set, rubric, judge)
    moved = [r for r in rows if r.significant]
    for r in moved:
        st.error(f"Moved: run {code_span(r.run)} (model version {plain(r.model_version)}) differs from the run "
                 f"before: {plain(in_words(r.drift))}; agreement (alpha) changed by {r.alpha_change:+.2f}. "
                 "Recalibrate before trusting it.")
    if not moved:
        st.success("No run moved from the run before it (neither the mix of its scores nor its agreement, by the "
                   "gate's rule).")
    show_table(pd.DataFrame([{
        "run": r.run, "started": str(r.started_at or "")[:16].replace("T", " ") or None, "items": r.n_items,
        "agreement (alpha)": r.alpha, "95% low": r.low, "95% high": r.high, "model version": r.model_version,
        "change in agreement": r.alpha_change,
        "score mix changed (p)": fmt_p(r.stuart_maxwell_p) if r.stuart_maxwell_p is not None else None,
        "moved": "yes" if r.significant else ("no" if r.stuart_maxwell_p is not None else None),
    } for r in rows]), {"items": "%d", "95% high": NUMBER, "change in agreement": SIGNED}, key="drift-table",
        column_config={
            "agreement (alpha)": st.column_config.NumberColumn(format=NUMBER, help=glossary.help("alpha")),
            "95% low": st.column_config.NumberColumn(format=NUMBER, help=glossary.help("ci")),
            "score mix changed (p)": st.column_config.TextColumn(alignment=RIGHT, help=glossary.help("stuart_maxwell"))})


def _others(golden_set: str, rubric: str, judge: str) -> None:
    several = [j for j, n in run_counts(golden_set, rubric).items() if n >= 2 and j != judge]
    if several:
        st.caption("Judges with two or more runs: " + ", ".join(code_span(j) for j in several) + ".")
    else:
        st.caption("No judge of this rubric has two runs yet, so there is no drift to show.")


if __name__ == "__main__":
    render()
