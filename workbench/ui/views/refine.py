"""Refine (leads): the refinement rounds of a judge, each with its rubric diff, development and held-out results
side by side, the items that changed verdict, and the lead's accept or discard.

A round is started here (``refine.service.refine`` in a background job, as ``workbench refine`` runs it) or from
the command line; this page reads the rounds and records the lead's decision: accept adds the proposed rubric as
the rubric's next version, reject (discard) records the decision and changes no rubric.
The optimizer's summary comes from a model and is shown as plain text.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from workbench.features.refine import service as svc
from workbench.features.refine.records import RefineEstimate, RefineRound, RoundResults
from workbench.calibration.rubric_versions import get_rubric
from workbench.core.errors import WorkbenchError
from workbench.features.refine.records import SessionHistory
from workbench.store import Store
from workbench.ui import auth, glossary, jobs
from workbench.ui.components import code_span, plain, run_action, show_flash, status_mark
from workbench.ui.lead import NUMBER, page_header, show_table
from workbench.ui.state import db_path, store

ROLES = auth.LEADS
STATUS_WORD = {"proposed": "✅ proposed for acceptance", "rejected": "❌ rejected by the held-out check",
               "accepted": "🏁 accepted", "discarded": "🗑️ discarded", "failed": "⚠️ no edit",
               "proposing": "⏳ unfinished (asking for an edit)", "evaluating": "⏳ unfinished (judging)"}
METRIC_LABEL = {"krippendorff_alpha_ordinal": "Krippendorff's alpha", "exact_agreement": "exact agreement",
                "mean_signed_error": "mean signed error", "tpr": "TPR", "tnr": "TNR"}
#: Each metric's glossary entry: its plain label is shown under the table, its entry is on the Glossary page.
METRIC_TERM = {"krippendorff_alpha_ordinal": "alpha", "exact_agreement": "exact", "mean_signed_error": "mse",
               "tpr": "tpr", "tnr": "tnr"}


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
               key=f"refine-{r.id}-metrics", column_config={"metric": st.column_config.TextColumn(
                   help="What each name measures is under the table and on the Glossary page.")})
    words = {METRIC_LABEL[m]: glossary.label(t).split(" (")[0] for m, t in METRIC_TERM.items()}
    st.caption("In plain words: " + "; ".join(f"{name}: {w}" for name, w in words.items() if w != name) + ".")
    checks = pd.DataFrame([{"check": c.name, "parent": status_mark(c.parent), "child": status_mark(c.child),
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
            b.button("Reject (discard this round)", key=f"discard-{r.id}", on_click=run_action,
                     args=(svc.discard_round, store(), r.id), kwargs={"lead": lead, "ok": "Round discarded: the rubric is unchanged."})


def render() -> None:
    picked = page_header("Refine", "refine", ROLES)
    if picked is None:
        return
    golden_set, rubric, judge = picked
    show_flash()
    lead = auth.current_user().name
    sessions = [h for h in svc.rounds_of(store(), golden_set, rubric) if h.session.judge_id == judge]
    _start(golden_set, rubric, judge, sessions)
    if not sessions:
        st.info(f"No refinement session of {code_span(judge)} yet: start a round above, or from the command line "
                f"`workbench refine -g {golden_set} -r {rubric} -j {judge} --strategy few-shot`.")
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
        st.info("No round finished yet; start a round above (it resumes this session) to continue.")
    for r in h.rounds:
        _round(r, h.diffs.get(r.id), lead)


def _rounds_wanted(sessions: list[SessionHistory], version: int) -> int:
    """``refine``'s ``rounds`` for one more round: the open session of the newest rubric version resumes."""
    open_ = next((h for h in sessions if h.session.status == "open" and h.base_version == version), None)
    return 1 + (len([r for r in open_.rounds if r.status != "failed"]) if open_ else 0)


def round_cost(e: RefineEstimate) -> jobs.Cost:
    """A round's estimate as the confirmation shows it: the judge's requests at their expected cost, the
    optimizer's (whose reply length is not known in advance) at its bound."""
    sends = f"{e.judge_requests:,} judge requests" + (
        f" and {e.optimizer_requests} optimizer request{'s' * (e.optimizer_requests != 1)}"
        if e.optimizer_requests else "")
    expected = None if e.judge_cost_usd is None or e.optimizer_max_cost_usd is None else \
        e.judge_cost_usd + e.optimizer_max_cost_usd
    return jobs.Cost(sends, expected, e.max_cost_usd)


def _start(golden_set: str, rubric: str, judge: str, sessions: list[SessionHistory]) -> None:
    """Start one refinement round (few-shot needs no optimizer; an optimizer needs its model and key) in a job."""
    db = db_path()
    job = jobs.find(jobs.REFINE, db, golden_set, rubric, judge)
    running = bool(job and job.running)
    rv = get_rubric(store(), rubric)
    with st.container(border=True):
        st.markdown("**Start a refinement round**")
        a, b, c = st.columns(3)
        strategy = a.radio("Strategy", ("few-shot", "optimizer"), key="refine-strategy", horizontal=True,
                           help="few-shot adds graded examples from the development items (no optimizer model); "
                                "optimizer asks a model to edit the rubric from the disagreements.")
        optimizer = (b.text_input("Optimizer model", value="openai/gpt-4o", key="refine-optimizer")
                     if strategy == "optimizer" else None)
        budget = c.number_input("Budget (USD, 0 = none)", min_value=0.0, value=0.0, step=1.0, key="refine-budget")
        rounds = _rounds_wanted(sessions, rv.version)
        args = dict(strategy=strategy, optimizer=optimizer or None, rounds=rounds)
        try:
            e = svc.estimate(store(), golden_set, rubric, judge, **args)
        except WorkbenchError as err:
            st.error(plain(str(err)))
            return
        st.markdown(f"Round {rounds} of {code_span(judge)} on {e.n_development} development and {e.n_held_out} "
                    "held-out items.")

        def start(env: dict[str, str]) -> None:
            def work(s: Store, j: jobs.Job):
                def say(message: str) -> None:
                    j.part = message
                return svc.refine(s, golden_set, rubric, judge, budget_usd=budget or None, progress=say,
                                  provider_options={"env": env}, optimizer_options={"env": env}, **args)

            jobs.launch(jobs.REFINE, db, (golden_set, rubric, judge), work)

        # the judge and the optimizer share a field when they share a provider: one key per provider on the page
        models = [rv.rubric.judge(judge).model] + ([optimizer] if optimizer else [])
        jobs.paid_start("refine", "Start the round", round_cost(e), models, start, disabled=running)
        if running:
            _live(db, golden_set, rubric, judge)
        elif job and job.error:
            st.error(plain(job.error))
        elif job and job.result:
            last = job.result.rounds[-1] if job.result.rounds else None
            spent = job.result.spent_usd
            st.success(f"Session {job.result.session_id}: "
                       + ("nothing spent" if spent == 0 else f"spent {jobs.usd(spent)}")
                       + (f"; round {last.number} is {STATUS_WORD.get(last.status, last.status)}." if last else ".")
                       + (" Stopped by the budget." if job.result.stopped else ""))


@st.fragment(run_every=1.0)
def _live(db: str, golden_set: str, rubric: str, judge: str) -> None:
    job = jobs.find(jobs.REFINE, db, golden_set, rubric, judge)
    if job and job.running:
        st.info(f"Refining… {plain(job.part) if job.part else 'judging the parent rubric'}", icon="⏳")
    else:
        st.rerun()  # finished: the page again, with the new round


if __name__ == "__main__":
    render()
