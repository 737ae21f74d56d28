"""Judges (leads): estimate, start, watch, stop and resume a judge's run on a golden set.

Money is explicit: the estimated cost of the run Start would make sits beside the recorded cost of the judge's
last run, and a new run beside a recorded one needs a second, confirming click. A key the provider needs can be
typed on the page (``ui/keys.py``).

The estimate and the run table describe the same run: the judge's current run (its latest, run here or
imported), so a finished or imported run shows nothing left to do, and a new run is a deliberate choice.
"""

from __future__ import annotations

import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.calibration.presentation import estimate_sentence
from workbench.core.scale import fmt_usd
from workbench.features.judging import service as judging
from workbench.calibration.rubric_versions import get_rubric
from workbench.ui import auth, jobs, keys
from workbench.ui.components import code_span, plain
from workbench.ui.lead import page_header, show_table
from workbench.ui.state import db_path, store

ROLES = auth.LEADS


UNPRICED = "unknown (no price for this model)"


def render() -> None:
    picked = page_header("Judges", "judges", ROLES)
    if picked is None:
        return
    golden_set, rubric, judge = picked
    spec = get_rubric(store(), rubric).rubric.judge(judge)
    keys.key_field(spec.model, "judges")  # which key the provider needs, and a field for it when it is not set
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
                   f"{fresh.n_to_run} judgments, {fmt_usd(fresh.cost_usd, unknown=UNPRICED)}.", icon="✅")
    else:
        target = "a new run" if new_run or not status.get("runs") else f"run {code_span(status['current'])}"
        st.info(f"**Estimate** for {code_span(e.model)} ({target}): {estimate_sentence(e)}.")
    _money(fresh, money, new=nothing_left)
    elsewhere = None if running else judging.run_holder(store(), golden_set, rubric, judge)
    if elsewhere:  # the lease the CLI and every server share: starting here would pay for the same requests twice
        st.warning(f"Run {code_span(elsewhere['run'])} is running in {plain(elsewhere['description'])}; Start is "
                   "available again when it finishes or stops.")
    options = dict(repeats=int(repeats), concurrency=int(concurrency), budget_usd=budget or None, new_run=new_run)
    # a new run beside a recorded one pays again for every judgment: Start only asks, a second click confirms
    needs_confirmation = new_run and bool(status.get("runs"))
    confirm_key = f"judges-confirm:{golden_set}:{rubric}:{judge}"
    left, right = st.columns(2)
    if left.button("Resume run" if e.n_done and not new_run else "Start run", type="primary",
                   disabled=running or bool(elsewhere) or nothing_left, key="judges-start",
                   help="Nothing left to run in the current run." if nothing_left else None):
        if needs_confirmation:
            st.session_state[confirm_key] = True
        else:
            jobs.start(db, golden_set, rubric, judge, **options)
            st.rerun()
    if right.button("Stop", disabled=not running, key="judges-stop"):
        current.stop.set()
    if needs_confirmation and st.session_state.get(confirm_key) and not running:
        _confirm(db, golden_set, rubric, judge, e, status, options, confirm_key)
    elif not needs_confirmation:
        st.session_state.pop(confirm_key, None)
    # a live view only while a run of this page is going: an idle page does not rerun every second
    if running:
        _live_progress(db, golden_set, rubric, judge)
    else:
        _progress(db, golden_set, rubric, judge, status)


def _usd(x: float | None, unknown: str) -> str:
    """Cents for dollars, a tenth of a cent below a dollar: a cheap judge's cost is not rounded to nothing."""
    return fmt_usd(x, 4 if x is not None and abs(x) < 1 else 2, unknown=unknown)


def _money(e, money, *, new: bool) -> None:
    """The estimated cost of the run Start would make (a new run's when nothing is left in the current one), the
    recorded cost of the judge's last run, and whether an estimate for that run's own judgments comes within a
    quarter of what it recorded (else why not)."""
    what = "a new run" if new else "this run"
    if money.run is None:
        st.markdown(f"**Cost**: estimated {_usd(e.cost_usd, UNPRICED)} for {what} "
                    f"({e.n_to_run} judgments) · recorded: none yet (no run of this judge has judgments).")
        return
    recorded = _usd(money.recorded_usd, "unknown (no price recorded)")
    unpriced = f", {money.n_unpriced} of them without a price" if money.recorded_usd is not None and \
        money.n_unpriced else ""
    st.markdown(f"**Cost**: estimated {_usd(e.cost_usd, UNPRICED)} for {what} "
                f"({e.n_to_run} judgments) · recorded {recorded} for the last run, {code_span(money.run)} "
                f"({money.n_judgments} judgments{unpriced}).")
    same = _usd(money.estimated_usd, UNPRICED)
    pct = int(money.TOLERANCE * 100)
    if money.within:
        st.caption(f"Estimated for the same {money.n_judgments} judgments: {same}, within {pct}% of the recorded "
                   f"{recorded}.")
    elif money.comparable:
        ratio = money.estimated_usd / money.recorded_usd if money.recorded_usd else float("inf")
        st.caption(f"Estimated for the same {money.n_judgments} judgments: {same}, {ratio:.1f} times the recorded "
                   f"{recorded}, not within {pct}%: {plain(money.why)}.")
    else:
        st.caption(f"Estimated and recorded cost cannot be compared: {plain(money.why)}.")


def _confirm(db: str, golden_set: str, rubric: str, judge: str, e, status: dict, options: dict,
             confirm_key: str) -> None:
    st.warning(f"**Confirm a new run**: run {code_span(status.get('current'))} is "
               f"{plain(status.get('current_status') or 'recorded')}. A new run of {code_span(judge)} sends "
               f"{e.n_to_run} judgments again, estimated {_usd(e.cost_usd, UNPRICED)}.", icon="💰")
    yes, no = st.columns(2)
    if yes.button("Confirm: start the new run", type="primary", key="judges-confirm"):
        st.session_state.pop(confirm_key, None)
        jobs.start(db, golden_set, rubric, judge, **options)
        st.rerun()
    if no.button("Cancel", key="judges-cancel"):
        st.session_state.pop(confirm_key, None)
        st.rerun()


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
        st.success(f"Run {code_span(r['run'])}: {r.get('n_recorded', 0)} judgments recorded, {r.get('n_skipped', 0)} "
                   f"already done, cost {fmt_usd(None if r.get('cost_unknown') and not r.get('cost_usd') else r.get('cost_usd'), unknown=UNPRICED)}"
                   + (f"; stopped ({plain(r['stopped'])})" if r.get("stopped") else ""))
    if not status["runs"]:
        st.caption("No runs yet.")
        return
    show_table([{"run": r["name"], "source": "imported" if r["source"] == "import" else "run here",
                 "status": r["status"], "judgments": r["judgments"]} for r in status["runs"]],
               {"judgments": "%d"}, key="judges-runs" + ("-live" if live else ""))
    cost = fmt_usd(status["cost_usd"], unknown="unknown (no price recorded)")
    if status["cost_usd"] is not None and status.get("n_unpriced"):
        cost += f" (and {status['n_unpriced']} judgments without a price)"
    st.caption(f"Current run {code_span(status['current'])}: {status['done']} judgments, {status['unscored']} "
               f"unscored, {cost} recorded cost.")


if __name__ == "__main__":
    render()
