"""Judges (leads): estimate, start, watch, stop and resume a judge's run on a golden set."""

from __future__ import annotations

import streamlit as st

from workbench.errors import WorkbenchError
from workbench.services import judging
from workbench.services.rubrics import get_rubric
from workbench.ui import auth, jobs
from workbench.ui.lead import page_header
from workbench.ui.state import db_path, store

ROLES = auth.LEADS


def render() -> None:
    picked = page_header("Judges", "judges", ROLES)
    if picked is None:
        return
    golden_set, rubric, judge = picked
    a, b, c = st.columns(3)
    declared = get_rubric(store(), rubric).rubric.judge(judge).repeats
    repeats = a.number_input("Repeats", min_value=1, max_value=10, value=declared, key=f"judges-repeats-{judge}")
    concurrency = b.number_input("Concurrency", min_value=1, max_value=64, value=8, key="judges-conc")
    budget = c.number_input("Budget (USD, 0 = none)", min_value=0.0, value=0.0, step=1.0, key="judges-budget")
    new_run = st.checkbox("Start a new run (to measure drift) instead of resuming the current one", key="judges-new")
    try:
        e = judging.estimate(store(), golden_set, rubric, judge, repeats=int(repeats), new_run=new_run)
    except WorkbenchError as err:
        st.error(str(err))
        return
    cost = "unknown (no price for this model)" if e.cost_usd is None else f"${e.cost_usd:.2f}"
    st.info(f"**Estimate** for `{e.model}`: {e.n_to_run} of {e.n_planned} judgments to run ({e.n_done} already "
            f"done), about {e.input_tokens:,} input and {e.output_tokens:,} output tokens, {cost}"
            + (f" (at most ${e.max_cost_usd:.2f})" if e.max_cost_usd is not None else "") + ".")
    db = db_path()
    current = jobs.job(db, golden_set, rubric, judge)
    running = bool(current and current.running)
    elsewhere = None if running else judging.run_holder(store(), golden_set, rubric, judge)
    if elsewhere:  # the lease the CLI and every server share: starting here would pay for the same requests twice
        st.warning(f"Run {elsewhere['run']} is running in {elsewhere['description']}; Start is available again "
                   "when it finishes or stops.")
    left, right = st.columns(2)
    if left.button("Resume run" if e.n_done and not new_run else "Start run", type="primary",
                   disabled=running or bool(elsewhere), key="judges-start"):
        jobs.start(db, golden_set, rubric, judge, repeats=int(repeats), concurrency=int(concurrency),
                   budget_usd=budget or None, new_run=new_run)
        st.rerun()
    if right.button("Stop", disabled=not running, key="judges-stop"):
        current.stop.set()
    _progress(db, golden_set, rubric, judge)


@st.fragment(run_every=1.0)
def _progress(db: str, golden_set: str, rubric: str, judge: str) -> None:
    current = jobs.job(db, golden_set, rubric, judge)
    status = judging.run_status(store(), golden_set, rubric, judge)
    if current and current.running and current.total:
        st.progress(min(1.0, current.done / current.total),
                    text=f"{current.done} of {current.total} judgments · ${current.cost:.4f} so far")
    elif current and current.error:
        st.error(current.error)
    elif current and current.result:
        r = current.result
        st.success(f"Run {r['run']}: {r.get('n_recorded', 0)} judgments recorded, {r.get('n_skipped', 0)} already "
                   f"done, cost ${r.get('cost_usd', 0):.4f}" + (f"; stopped ({r['stopped']})" if r.get("stopped")
                                                                else ""))
    if status["runs"]:
        st.dataframe(status["runs"], hide_index=True)
        st.caption(f"Current run {status['current']}: {status['done']} judgments, {status['unscored']} unscored, "
                   f"${status['cost_usd']:.4f} recorded cost.")
    else:
        st.caption("No runs yet.")


if __name__ == "__main__":
    render()
