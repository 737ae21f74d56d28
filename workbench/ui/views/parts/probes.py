"""The Robustness tab of the Calibration page: what the stress probes found, read from the calibration report,
and the button that runs them (``probes.service.run`` in a background job, as ``workbench probe`` does).

Numbers and the "moves the judge" rule come from the report and ``workbench.calibration.gate`` (the same the CLI and the
card print); nothing is recomputed here.
"""

from __future__ import annotations


import pandas as pd
import streamlit as st

from workbench.calibration.probes import PROBES
from workbench.calibration.report import CalibrationReport
from workbench.core.errors import WorkbenchError
from workbench.features.probes import service as probe_service
from workbench.store import Store
from workbench.ui import jobs
from workbench.ui.components import code_span, plain
from workbench.ui.lead import NUMBER, SIGNED, show_table
from workbench.ui.state import db_path, store

_EXPECTATION = {p.name: p.expectation for p in PROBES}
_MOVES = {"raises": "raises scores", "lowers": "lowers scores", None: "no"}


def render(rep: CalibrationReport, picked: tuple[str, str, str]) -> None:
    golden_set, rubric, judge = picked
    probes = rep.probes
    _start(golden_set, rubric, judge, ran=bool(probes))
    if not probes:
        st.info("No stress probe has been run on this judge yet. The button above runs them; from a shell, "
                "estimate first, then drop `--dry-run`:\n\n"
                f"`workbench probe --golden-set {golden_set} --rubric {rubric} --judge {judge} --dry-run`")
        return
    st.markdown(f"Each probe perturbs the items in a way that should not change their grade; the judge's verdicts "
                f"on the perturbed items are compared with its verdicts in run {code_span(probes.baseline_run)} "
                "(95% paired cluster-bootstrap intervals). A probe **moves** the judge when the interval of its "
                "mean shift excludes 0; robustness is the share of verdicts it left unchanged.")
    moved = [e for e in probes.probes if e.moves]
    if moved:
        st.warning("Moved by " + ", ".join(f"{e.probe} ({_MOVES[e.moves]}, {e.mean_shift.value:+.2f})"
                                             for e in moved))
    rows = [{"probe": e.probe, "n": e.n_items, "mean shift": e.mean_shift.value,
             "shift low": e.mean_shift.ci_low, "shift high": e.mean_shift.ci_high,
             "flip rate": e.flip_rate.value, "robustness": e.robustness_rate.value,
             "robustness low": e.robustness_rate.ci_low, "shift vs consensus": e.consensus_shift.value,
             "agreement change": e.agreement_change.value, "moves the judge": _MOVES[e.moves],
             "expectation": _EXPECTATION.get(e.probe, "")} for e in probes.probes]
    show_table(pd.DataFrame(rows), {"n": "%d", "mean shift": SIGNED, "shift low": SIGNED, "shift high": SIGNED,
                                    "flip rate": NUMBER, "robustness": NUMBER, "robustness low": NUMBER,
                                    "shift vs consensus": SIGNED, "agreement change": SIGNED}, key="cal-probes")
    check = next((c for c in rep.verdict.checks if c.id == "probes"), None)
    if check is not None:
        st.caption(f"Gate ({check.status}): {check.message} Set `probe_check: fail` in rubrics/policy.yaml "
                   "to make the probes part of the gate.")


def _start(golden_set: str, rubric: str, judge: str, *, ran: bool) -> None:
    """The estimate of what is left to probe, the key the judge needs, and Start (or Resume) with live progress."""
    db = db_path()
    job = jobs.find(jobs.PROBES, db, golden_set, rubric, judge)
    running = bool(job and job.running)
    try:
        e = probe_service.estimate(store(), golden_set, rubric, judge)
    except WorkbenchError as err:
        st.caption(f"The probes cannot run yet: {plain(str(err))}")
        return
    if e.not_applicable:
        st.caption(f"Not applicable here: {plain(', '.join(e.not_applicable))}.")
    label = "Resume the stress probes" if ran and e.n_to_run else "Run the stress probes"

    def start(env: dict[str, str]) -> None:
        def work(s: Store, j: jobs.Job):
            def progress(part: str, done: int, total: int, cost: float) -> None:
                j.part = part
                j.progress(done, total, cost)
            return probe_service.run(s, golden_set, rubric, judge, progress=progress, should_stop=j.stop.is_set,
                                     provider_options={"env": env})

        jobs.launch(jobs.PROBES, db, (golden_set, rubric, judge), work)

    cost = jobs.run_cost(e)
    cost = jobs.Cost(f"{cost.sends} over {len(e.probes)} probes", cost.expected_usd, cost.max_usd)
    jobs.paid_start("probes", label, cost, [e.model], start, disabled=running or not e.n_to_run,
                    help=None if e.n_to_run else "Every probe has run on this judge's current run.")
    if st.button("Stop the probes", key="probes-stop", disabled=not running):
        job.stop.set()
    if running:
        _live(db, golden_set, rubric, judge)
    elif job and job.error:
        st.error(plain(job.error))
    elif job and job.result:
        r = job.result
        st.success(f"Stress probes {'stopped (' + plain(r.stopped) + ')' if r.stopped else 'finished'}: "
                   f"{len(r.runs)} probe runs, {sum(x.summary.report.n_recorded for x in r.runs)} judgments "
                   f"recorded, {_spent(r.spent_usd)}.")


def _spent(x: float) -> str:
    return "nothing spent" if x == 0 else f"{jobs.usd(x)} spent"


@st.fragment(run_every=1.0)
def _live(db: str, golden_set: str, rubric: str, judge: str) -> None:
    job = jobs.find(jobs.PROBES, db, golden_set, rubric, judge)
    if job and job.running:
        st.progress(min(1.0, job.done / job.total) if job.total else 0.0,
                    text=f"Probe {job.part or '…'}: {job.done} of {job.total} judgments · "
                         f"${job.cost:,.2f} of known cost so far")
    else:
        st.rerun()  # finished: the whole page again, with the new report
