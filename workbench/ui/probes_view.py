"""The Robustness tab of the Calibration page: what the stress probes found, read from the calibration report.

Numbers and the "moves the judge" rule come from the report and ``workbench.calibration.gate`` (the same the CLI and the
card print); nothing is recomputed here.
"""

from __future__ import annotations


import pandas as pd
import streamlit as st

from workbench.calibration.probes import PROBES
from workbench.calibration.report import CalibrationReport
from workbench.ui.components import code_span
from workbench.ui.lead import NUMBER, SIGNED, show_table

_EXPECTATION = {p.name: p.expectation for p in PROBES}
_MOVES = {"raises": "raises scores", "lowers": "lowers scores", None: "no"}


def render(rep: CalibrationReport, picked: tuple[str, str, str]) -> None:
    golden_set, rubric, judge = picked
    probes = rep.probes
    if not probes:
        st.info("No stress probe has been run on this judge. Estimate the cost first, then run them:\n\n"
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
