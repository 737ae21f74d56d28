"""Refine (leads): the refinement rounds of a judge, each with its rubric diff, development and held-out results
side by side, the items that changed verdict, and the lead's accept or discard.

Rounds are run from the command line (``workbench refine``); this page reads them and records the decision.
The optimizer's summary comes from a model and is shown as plain text.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from workbench.calibration.gate import STATUS_ICON
from workbench.features.refine import service as svc
from workbench.features.refine.records import RefineRound, RoundResults
from workbench.ui import auth
from workbench.ui.components import code_span, plain, run_action, show_flash
from workbench.ui.lead import NUMBER, page_header, show_table
from workbench.ui.state import store

ROLES = auth.LEADS
STATUS_WORD = {"proposed": "✅ proposed for acceptance", "rejected": "❌ rejected by the held-out check",
               "accepted": "🏁 accepted", "discarded": "🗑️ discarded", "failed": "⚠️ no edit",
               "proposing": "⏳ unfinished (asking for an edit)", "evaluating": "⏳ unfinished (judging)"}
METRIC_LABEL = {"krippendorff_alpha_ordinal": "Krippendorff's alpha", "exact_agreement": "exact agreement",
                "mean_signed_error": "mean signed error", "tpr": "TPR", "tnr": "TNR"}


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"


def _side_by_side(results: RoundResults) -> pd.DataFrame:
    rows = []
    for metric, label in METRIC_LABEL.items():
        row = {"metric": label}
        for part, name in ((results.development, "development"), (results.held_out, "held-out")):
            for who, summary in (("parent", part.parent), ("child", part.child)):
                m = summary.metrics.get(metric)
                row[f"{name} {who}"] = None if m is None else m.value
        rows.append(row)
    return pd.DataFrame(rows)


def _changed(results: RoundResults) -> pd.DataFrame:
    return pd.DataFrame([{"part": name, "item": c.item_id, "category": c.category, "consensus": c.consensus,
                          "parent": c.parent, "child": c.child}
                         for name, part in (("held-out", results.held_out), ("development", results.development))
                         for c in part.changed])


def _numbers(res: RoundResults, r: RefineRound) -> None:
    """Both parts' change of the metric, the table of metrics, the held-out gate checks, the changed items."""
    for part, name in ((res.development, "Development"), (res.held_out, "Held-out")):
        d = part.delta
        st.markdown(f"**{name}** ({part.n_paired} items): {code_span(res.metric)} changes by "
                    f"{_signed(d.value)} (95% interval {_signed(d.ci_low)} to {_signed(d.ci_high)})"
                    + (" — the held-out part decides." if part is res.held_out else "."))
    show_table(_side_by_side(res), {c: NUMBER for c in ("development parent", "development child",
                                                        "held-out parent", "held-out child")},
               key=f"refine-{r.id}-metrics")
    checks = pd.DataFrame([{"check": c.name, "parent": STATUS_ICON[c.parent], "child": STATUS_ICON[c.child],
                            "worse": "yes" if c.worse else "no"} for c in res.held_out.checks])
    st.markdown("Gate checks on the held-out items")
    show_table(checks, key=f"refine-{r.id}-checks")
    changed = _changed(res)
    st.markdown(f"Items that changed verdict: {len(changed)}" if len(changed) else
                "No item changed verdict.")
    if len(changed):
        show_table(changed, key=f"refine-{r.id}-changed")


def _round(r: RefineRound, diff: str | None, lead: str) -> None:
    title = f"Round {r.number}: {STATUS_WORD.get(r.status, r.status)}"
    with st.expander(title, expanded=r.status == "proposed"):
        if r.reason:
            st.markdown(plain(r.reason))
        if r.edit and r.edit.summary:
            st.caption("The edit's own explanation: " + plain(r.edit.summary))
        if diff:
            st.code(diff, language="diff")
        if r.results:
            _numbers(r.results, r)
        if r.status == "accepted":
            st.success(f"Accepted by {plain(r.decided_by)}: now a version of the rubric; judge and calibrate it "
                       "on the whole golden set, then export it through the gate.")
        a, b = st.columns(2)
        if r.status == "proposed":
            a.button("Accept as the rubric's next version", key=f"accept-{r.id}", type="primary",
                     on_click=run_action, args=(svc.accept_round, store(), r.id), kwargs={
                         "lead": lead, "ok": lambda rv: f"Rubric {code_span(rv.name)} version {rv.version} added: "
                                                        "judge it on the Judges page, then calibrate it."})
        if r.status in ("proposed", "rejected", "failed"):
            b.button("Discard", key=f"discard-{r.id}", on_click=run_action,
                     args=(svc.discard_round, store(), r.id), kwargs={"lead": lead, "ok": "Round discarded."})


def render() -> None:
    picked = page_header("Refine", "refine", ROLES)
    if picked is None:
        return
    golden_set, rubric, judge = picked
    show_flash()
    lead = auth.current_user().name
    sessions = [h for h in svc.rounds_of(store(), golden_set, rubric) if h.session.judge_id == judge]
    if not sessions:
        st.info(f"No refinement session of {code_span(judge)} yet. Start one from the command line: "
                f"`workbench refine -g {golden_set} -r {rubric} -j {judge} --optimizer MODEL --budget USD` "
                "(or `--strategy few-shot`, which needs no optimizer).")
        return
    labels = {f"Session {h.session.id} ({h.session.status}, {len(h.rounds)} rounds)": h for h in sessions}
    h = labels[st.selectbox("Session", list(labels), key="refine-session")]
    s, sp = h.session, h.split
    st.markdown(f"Refining rubric {code_span(rubric)} v{h.base_version} for {code_span(judge)} with "
                + (f"optimizer {code_span(s.optimizer)}" if s.optimizer else "few-shot examples")
                + f". Split of golden set version {sp.golden_set_version} (seed {sp.seed}, stratified by "
                f"{plain(sp.strata)}): **{len(sp.items.development)} development** items, which the loop "
                f"reads, and **{len(sp.items.held_out)} held-out** items, which decide."
                + (f" Budget ${s.budget_usd:.2f}." if s.budget_usd else ""))
    if not h.rounds:
        st.info("No round finished yet; run the same `workbench refine` command to continue.")
    for r in h.rounds:
        _round(r, h.diffs.get(r.id), lead)


if __name__ == "__main__":
    render()
