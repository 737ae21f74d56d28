"""Judges (leads): estimate, start, watch, stop and resume a judge's run on a golden set.

Money is explicit: the estimated cost of the run Start would make sits beside the recorded cost of the judge's
last run, and Start asks for confirmation with the same figures (``jobs.paid_start``, as every page that starts paid work). A key
the provider needs is typed on the page (``ui/keys.py``); while it is missing Start is off and says which.

The estimate and the run table describe the same run: the judge's current run (its latest, run here or
imported), so a finished or imported run shows nothing left to do, and a new run is a deliberate choice.
"""

from __future__ import annotations

import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.features.judging import service as judging
from workbench.calibration.rubric_versions import get_rubric
from workbench.ui import auth, jobs
from workbench.ui.components import code_span, plain
from workbench.ui.lead import page_header, show_table
from workbench.ui.state import db_path, store

ROLES = auth.LEADS


UNPRICED = jobs.UNPRICED


def render() -> None:
    picked = page_header("Judges", "judges", ROLES)
    if picked is None:
        return
    golden_set, rubric, judge = picked
    spec = get_rubric(store(), rubric).rubric.judge(judge)
    a, b, c = st.columns(3)
    repeats = a.number_input("Repeats", min_value=1, max_value=10, value=spec.repeats, key=f"judges-repeats-{judge}")
    concurrency = b.number_input("Concurrency", min_value=1, max_value=64, value=8, key="judges-conc")
    budget = c.number_input("Budget (USD, 0 = none)", min_value=0.0, value=0.0, step=1.0, key="judges-budget")
    new_run = st.checkbox("Start a new run (to measure drift) instead of resuming the current one", key="judges-new",
                          help="Off by default: a new run pays again for every judgment, and asks you to confirm.")
    try:
        e = judging.estimate(store(), golden_set, rubric, judge, repeats=int(repeats), new_run=new_run)
        status = judging.run_status(store(), golden_set, rubric, judge)
        money = judging.cost_check(store(), golden_set, rubric, judge)
    except WorkbenchError as err:
        st.error(plain(str(err)))
        return
    db = db_path()
    current = jobs.job(db, golden_set, rubric, judge)
    running = bool(current and current.running)
    nothing_left = e.n_to_run == 0 and not new_run
    fresh = e
    if nothing_left:
        how = "imported" if status.get("current_source") == "import" else "run here"
        fresh = judging.estimate(store(), golden_set, rubric, judge, repeats=int(repeats), new_run=True)
        st.success(f"**Nothing left to run**: the current run {code_span(status['current'])} ({how}) holds all "
                   f"{e.n_planned} judgments. To measure drift, tick “Start a new run”: "
                   f"{plain(jobs.run_cost(fresh).sentence())}.", icon="✅")
    else:
        target = "a new run" if new_run or not status.get("runs") else f"run {code_span(status['current'])}"
        st.info(f"**Estimate** for {code_span(e.model)} ({target}): {e.n_to_run} of {e.n_planned} judgments to run "
                f"({e.n_done} already done); about {e.input_tokens:,} input and {e.output_tokens:,} output tokens"
                f"{' at batch prices' if e.batch else ''}.")
    _money(fresh, money, new=nothing_left)
    elsewhere = None if running else judging.run_holder(store(), golden_set, rubric, judge)
    if elsewhere:  # the lease the CLI and every server share: starting here would pay for the same requests twice
        st.warning(f"Run {code_span(elsewhere['run'])} is running in {plain(elsewhere['description'])}; Start is "
                   "available again when it finishes or stops.")
    options = dict(repeats=int(repeats), concurrency=int(concurrency), budget_usd=budget or None, new_run=new_run)
    # a new run beside a recorded one pays again for every judgment: even a free judge's is confirmed first
    again = (f"Run {status.get('current')} is {status.get('current_status') or 'recorded'}; a new run judges every "
             "item again." if new_run and status.get("runs") else None)
    label = "Start the new run" if new_run else "Resume run" if e.n_done else "Start run"
    jobs.paid_start("judges", label, jobs.run_cost(e), [spec.model],
                    lambda env: jobs.start(db, golden_set, rubric, judge, env=env, **options), ask=again,
                    disabled=running or bool(elsewhere) or nothing_left,
                    help="Nothing left to run in the current run." if nothing_left else None)
    if st.button("Stop", disabled=not running, key="judges-stop"):
        current.stop.set()
    # a live view only while a run of this page is going: an idle page does not rerun every second
    if running:
        _live_progress(db, golden_set, rubric, judge)
    else:
        _progress(db, golden_set, rubric, judge, status)


def _money(e, money, *, new: bool) -> None:
    """The estimated cost of the run Start would make (a new run's when nothing is left in the current one), the
    recorded cost of the judge's last run, and whether an estimate for that run's own judgments comes within a
    quarter of what it recorded (else why not). A free judge's cost is "free", never $0.0000."""
    what = "a new run" if new else "this run"
    cost = jobs.run_cost(e).words()
    if money.run is None:
        st.markdown(f"**Cost** of {what} ({e.n_to_run} judgments): {cost} · recorded: none yet (no run of this "
                    "judge has judgments).")
        return
    recorded = jobs.usd(money.recorded_usd, "unknown (no price recorded)")
    unpriced = f", {money.n_unpriced} of them without a price" if money.recorded_usd is not None and \
        money.n_unpriced else ""
    st.markdown(f"**Cost** of {what} ({e.n_to_run} judgments): {cost} · recorded {recorded} for the last run, "
                f"{code_span(money.run)} ({money.n_judgments} judgments{unpriced}).")
    same = jobs.usd(money.estimated_usd)
    pct = int(money.TOLERANCE * 100)
    if money.within and money.recorded_usd == 0:
        st.caption(f"The same {money.n_judgments} judgments again: free, as they were.")
    elif money.within:
        st.caption(f"Estimated for the same {money.n_judgments} judgments: {same}, within {pct}% of the recorded "
                   f"{recorded}.")
    elif money.comparable:
        ratio = money.estimated_usd / money.recorded_usd if money.recorded_usd else float("inf")
        st.caption(f"Estimated for the same {money.n_judgments} judgments: {same}, {ratio:.1f} times the recorded "
                   f"{recorded}, not within {pct}%: {plain(money.why)}.")
    else:
        st.caption(f"Estimated and recorded cost cannot be compared: {plain(money.why)}.")


@st.fragment(run_every=1.0)
def _live_progress(db: str, golden_set: str, rubric: str, judge: str) -> None:
    current = jobs.job(db, golden_set, rubric, judge)
    if current and current.running and current.total:
        st.progress(min(1.0, current.done / current.total),
                    text=f"{current.done} of {current.total} judgments · ${current.cost:,.2f} of known cost so far")
    elif current and not current.running:
        st.rerun()  # finished: show the result and the run table once, then stop polling
    _progress(db, golden_set, rubric, judge, judging.run_status(store(), golden_set, rubric, judge), live=True)


def _progress(db: str, golden_set: str, rubric: str, judge: str, status: dict, *, live: bool = False) -> None:
    current = jobs.job(db, golden_set, rubric, judge)
    if not live and current and current.error:
        st.error(plain(current.error))
    elif not live and current and current.result:
        r = current.result
        skipped = r.get("n_skipped", 0)  # "0 already done" says nothing: only a resumed run names them
        st.success(f"Run {code_span(r['run'])}: {r.get('n_recorded', 0)} judgments recorded"
                   + (f" ({skipped} were done before and not paid again)" if skipped else "")
                   + f", cost {jobs.usd(None if r.get('cost_unknown') and not r.get('cost_usd') else r.get('cost_usd'))}"
                   + (f"; stopped ({plain(r['stopped'])})" if r.get("stopped") else ""))
    if not status["runs"]:
        st.caption("No runs yet.")
        return
    show_table([{"run": r["name"], "source": "imported" if r["source"] == "import" else "run here",
                 "status": r["status"], "judgments": r["judgments"]} for r in status["runs"]],
               {"judgments": "%d"}, key="judges-runs" + ("-live" if live else ""))
    cost = jobs.usd(status["cost_usd"], "unknown (no price recorded)")
    if status["cost_usd"] is not None and status.get("n_unpriced"):
        cost += f" (and {status['n_unpriced']} judgments without a price)"
    st.caption(f"Current run {code_span(status['current'])}: {status['done']} judgments, {status['unscored']} "
               f"unscored, {cost} recorded cost.")


if __name__ == "__main__":
    render()
