"""Board (leads): several models' runs per task and category, where to look, and a reviewer's verdict on a cell.

The page opens on one plain sentence per tier (which model leads, and whether its lead over the next best is
more than chance, from the board's own paired test), then a heat map (a row per task, a column per model, cells
coloured by the share of runs that pass, with a legend). The detailed grid is the same HTML as `workbench board
show --format html` (escaped run text, one table per category). A "where to look" entry opens the cell's runs
in the Label page's viewer with each tier's verdict, the judge's rationale and the steps it cited; a verdict
given there is saved as a label through the labeling service (the item joins the bundle's golden set).

"Grade runs" starts `workbench board grade` in a background thread of the server (uploaded run files, the
bundles of the board on screen): progress is read from the job on each rerun, so a lead can leave the page and
come back; every grade is committed as it arrives, so a stopped grading resumes without paying twice.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.features.board import service as svc
from workbench.features.board.records import BoardLead, BoardReport, FamilyCheck, GradingSummary, TierInfo
from workbench.features.board.render import (
    CSS,
    board_grid_html,
    category_flags,
    column_rows,
    heatmap_html,
    lead_sentence,
)
from workbench.ui import auth, glossary, jobs
from workbench.ui.components import code_span, flash, plain, prose, run_action, score_text, show_flash
from workbench.ui.lead import show_table
from workbench.ui.state import db_path, store, workspace
from workbench.ui.views.parts.trajectory import display_step, render_item

ROLES = auth.LEADS
OPEN_KEY = "board-open"  # (board, task_id, model) of the cell in the viewer
SHOWN = 20  # where-to-look entries listed


@st.cache_data(show_spinner="Computing the board…", max_entries=16)
def _report(db: str, version: tuple, name: str) -> BoardReport:
    return svc.board_report(store(), name)


def report(name: str) -> BoardReport:
    return _report(db_path(), svc.board_fingerprint(store(), name), name)


@st.cache_data(show_spinner=False, max_entries=16)
def _leads(db: str, version: tuple, name: str) -> list[BoardLead]:
    return svc.board_leads(store(), name)


def leads(name: str) -> list[BoardLead]:
    return _leads(db_path(), svc.board_fingerprint(store(), name), name)


HELP = {
    "lead": "Each model's share of runs that pass, averaged over tasks; the lead over the next best model is "
            "compared task by task (paired): a 95% t-interval of the difference over tasks and a sign-flip test. "
            "The lead is called real only when the interval excludes zero and the test's p-value is below 0.05; "
            "with few tasks a large gap can still be chance.",
    "heat": "Each cell is one model on one task: the share of its repeated runs that pass (mechanical tier: the "
            "approved Python grader), or the judge's mean score (judged tier). The last row averages over tasks.",
    "tiers": "TPR (true positive rate): the share of runs humans passed that the bundle's judge passed too. TNR "
             "(true negative rate): the share of runs humans failed that the judge failed too. Both come from the "
             "judge's calibration on the golden set; near 1 is good.",
    "columns": "mean@k: the share of a model's k repeats of a task that pass, averaged over tasks. pass^k: the "
               "chance that all k repeats of a task pass, averaged over tasks; it is lower than mean@k when a "
               "model is inconsistent.",
    "outliers": "An outlier is a cell far from what the task and the model usually score, tested with a t-test and "
                "adjusted for testing many cells at once (Benjamini-Hochberg): the adjusted p-value is the chance "
                "of such a gap by luck alone; small is a real gap.",
    "rates": "Rogan-Gladen correction: the raw pass rate adjusted for the judge's known errors (its TPR and TNR "
             "from calibration), with a 95% interval; it estimates what humans would pass.",
}


def render() -> None:
    user = auth.require(ROLES)
    st.title("Board")
    show_flash()
    listed = svc.list_boards(store())
    if not listed:
        st.info("No board yet. Grade several models' runs with approved bundles: "
                "`workbench board grade RUN_FILES... --bundle FILE --name NAME` (`workbench demo` seeds two).")
        return
    boards = [b.name for b in listed]
    newest = max(range(len(listed)), key=lambda i: (listed[i].created_at, listed[i].id))
    name = st.selectbox("Board", boards, index=newest, key="board-name",
                        help="A board holds several models' runs on the same tasks, graded by approved judges.")
    try:
        rep, firsts = report(name), leads(name)
    except WorkbenchError as e:
        st.warning(prose(str(e)))
        return
    for lead in firsts:
        st.markdown(f"**{plain(lead_sentence(lead))}**", help=HELP["lead"])
    st.caption(f"{rep.n_items} runs of {len(rep.models)} models on {len(rep.tasks)} tasks in "
               f"{len(rep.categories)} categories. No summed score: read down a column and across a category.")
    st.html(f"<style>{CSS}</style>")  # a style-only block is page CSS; inside the grid's block it would be dropped
    for t in rep.tiers:
        st.subheader(f"Which model passes which task ({t.name} tier)", help=HELP["heat"])
        st.html(f"<div class='board-wrap'>{heatmap_html(rep, t)}</div>")
    _grading(rep)
    st.markdown("\n".join(f"- **{plain(t.name)}**: {code_span(t.judge)} ({code_span(t.model)}), rubric "
                          f"{code_span(t.rubric)} v{t.rubric_version}, TPR {t.tpr:.2f}, TNR {t.tnr:.2f}"
                          for t in rep.tiers), help=HELP["tiers"])
    for tier, t in rep.outlier_tests.items():
        if t.task.reason:
            st.caption(f"{plain(tier)}: {plain(t.task.reason)}.")
    opened = st.session_state.get(OPEN_KEY)
    if opened and opened[0] == name:
        _viewer(rep, opened[1], opened[2], user.name)
    _where_to_look(rep, name)
    st.subheader("Per task and category", help=HELP["outliers"])
    st.caption("M: mechanical tier, passes of the repeats; J: judged tier, mean score and its +1s. ▲ ▼ an outlier "
               "against the task's other models (adjusted p-value at most "
               f"{rep.settings.q}); † the judged tier's judge shares the model's family.")
    st.html(f"<div class='board-wrap'>{board_grid_html(rep)}</div>")
    st.subheader("Down each column", help=HELP["columns"])
    st.caption(f"mean@k, {glossary.label('mean_k')}: the share of a model's repeats of a task that pass; pass^k, "
               f"{glossary.label('pass_k')}: the chance that all k repeats of a task pass; each averaged over tasks.")
    head, rows = column_rows(rep)
    show_table(pd.DataFrame(rows, columns=head), key="board-columns")
    _rates(rep)
    _family(rep)


# -- grading from the page: `workbench board grade` as a long job of the server --------------------------------

GRADING = "board grading"  # the job's kind (ui.jobs): one grading a database at a time, found again on return


def _grading_job() -> jobs.Job | None:
    return jobs.find(GRADING, db_path())


def _start_grading(like: str, env: dict[str, str]) -> None:
    uploads = st.session_state.get("board-grade-files") or []
    target = (st.session_state.get("board-grade-name") or "").strip() or like
    if not uploads:
        flash("error", "Choose one or more run files (.jsonl or .csv) to grade first.")
        return
    if (current := _grading_job()) is not None and current.running:
        flash("error", "A board grading is already running on this database; wait for it or stop it.")
        return
    folder = tempfile.mkdtemp(prefix="workbench-board-runs-")
    files = []
    for n, up in enumerate(uploads):
        path = Path(folder) / f"{n}-{Path(up.name).name}"  # the uploaded name, in error messages too
        path.write_bytes(up.getvalue())
        files.append(str(path))
    ws = workspace()

    def work(s, job: jobs.Job) -> GradingSummary:
        def progress(tier: str, done: int, total: int) -> None:
            job.part = f"board {target}, {tier} tier"
            job.progress(done, total, 0.0)

        try:
            return svc.grade_board(s, target, files, [], like=like, workspace=ws, env=env, progress=progress,
                                   should_stop=job.stop.is_set)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    jobs.launch(GRADING, db_path(), (), work)


def _grading_cost(board: str, uploads: list) -> jobs.Cost:
    """The estimate of grading the uploaded files with the board's bundles (``board.grading_estimate``)."""
    if not uploads:
        return jobs.Cost("0 grades (choose run files above)", 0.0, 0.0)
    with tempfile.TemporaryDirectory(prefix="workbench-board-estimate-") as folder:
        files = []
        for n, up in enumerate(uploads):
            path = Path(folder) / f"{n}-{Path(up.name).name}"
            path.write_bytes(up.getvalue())
            files.append(str(path))
        tiers = svc.grading_estimate(store(), board, files)
    n = sum(e.n_to_run for _, e in tiers)
    unknown = any(e.cost_usd is None and e.n_to_run for _, e in tiers)
    expected = None if unknown else sum(e.cost_usd or 0.0 for _, e in tiers)
    worst = None if unknown else sum(e.max_cost_usd or 0.0 for _, e in tiers)
    return jobs.Cost(f"{n:,} grade{'s' * (n != 1)}", expected, worst)


def _grading(rep: BoardReport) -> None:
    name = rep.board
    with st.expander("Grade runs onto a board", expanded=_grading_job() is not None):
        st.caption(f"Run files are the item format with `task_id`, `category`, `producer` and `repeat`; they are "
                   f"graded with the approved bundles of board {code_span(name)}, as `workbench board grade` does. "
                   "A run already graded with the same bundle is not graded again.")
        st.file_uploader("Run files", type=["jsonl", "csv"], accept_multiple_files=True, key="board-grade-files")
        st.text_input("Board to grade onto", value=name, key="board-grade-name",
                      help="The board on screen, or a new name: a new board gets this board's bundles.")
        uploads = st.session_state.get("board-grade-files") or []
        try:
            cost = _grading_cost(name, uploads)
        except WorkbenchError as e:
            st.error(prose(str(e)))
            return
        running = (current := _grading_job()) is not None and current.running
        # a judged tier's judge is a model: its provider's key, typed here if the server has none
        jobs.paid_start("board-grade", "Start grading", cost, [t.model for t in rep.tiers],
                        lambda env: _start_grading(name, env), disabled=not uploads or running,
                        help=None if uploads else "Choose one or more run files to grade first.")
        job = _grading_job()
        if job is not None:  # polled each second while it runs; a page without a grading polls nothing
            st.fragment(_grading_progress, run_every=1.0 if job.running else None)()


def _grading_progress() -> None:
    job = _grading_job()
    if job is None:
        return
    if not job.running and st.session_state.get("board-grade-seen") is not job:
        st.session_state["board-grade-seen"] = job
        st.rerun()  # finished since the page was drawn: redraw all of it, with the new grades
    if job.total:
        st.progress(job.done / job.total, text=f"Grading {plain(job.part)}: {job.done} of {job.total} runs")
    if job.running:
        if not job.total:
            st.caption("Grading: reading the run files…")
        st.button("Stop grading", key="board-grade-stop", on_click=job.stop.set)
    elif job.error:
        st.error(prose(job.error))
    elif isinstance(job.result, GradingSummary):
        r = job.result
        graded = sum(t.n_recorded for t in r.tiers)
        st.success(f"Board {plain(r.board)}: {r.items_added} new runs added, {graded} grades recorded "
                   f"({r.n_items} runs on the board)." + (" Stopped before the end: start again to resume."
                                                          if any(t.stopped for t in r.tiers) else ""))


def _where_to_look(rep: BoardReport, name: str) -> None:
    st.subheader("Where to look")
    rows = rep.where_to_look[:SHOWN]
    if not rows:
        st.caption("Nothing stands out: no outlier, no disagreement between the tiers, nothing unscored.")
        return
    for w in rows:
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(f"**{w.rank}.** {code_span(w.task_id)} × {code_span(w.model)} "
                        f"({plain(w.category)}): " + plain("; ".join(r.text for r in w.reasons)),
                        width="stretch")
            st.button("Open", key=f"look:{w.task_id}:{w.model}", width="content",
                      on_click=_open, args=(name, w.task_id, w.model))


def _open(name: str, task: str, model: str) -> None:
    st.session_state[OPEN_KEY] = (name, task, model)


def _close() -> None:
    st.session_state.pop(OPEN_KEY, None)


def _viewer(rep: BoardReport, task: str, model: str, rater: str) -> None:
    name = rep.board
    items = svc.cell_items(store(), name, task, model)
    with st.container(border=True):
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(f"#### {code_span(task)} × {code_span(model)}", width="stretch")
            st.button("Close", key="board-close", on_click=_close, width="content")
        tabs = st.tabs([f"repeat {c.repeat}" for c in items])
        judged = next((t for t in rep.tiers if t.kind == "judged"), rep.tiers[0] if rep.tiers else None)
        for tab, cell in zip(tabs, items):
            with tab:
                cited = {display_step(s) for g in (cell.grades.get(judged.name, []) if judged else [])
                         for s in g.evidence_steps}
                left, right = st.columns([3, 2], gap="large")
                with right:
                    _verdicts(rep, cell)
                    if judged:
                        _verdict_form(name, judged, cell.item.id, rater)
                with left:
                    render_item(cell.item, key=f"board:{cell.item.id}", cited=sorted(cited))


def _verdicts(rep: BoardReport, cell: svc.CellItem) -> None:
    for t in rep.tiers:
        for g in cell.grades.get(t.name, []):
            score = "unscored: " + plain(g.unscored_reason) if g.score is None else f"**{g.score:+d}**"
            steps = ", ".join(str(display_step(s)) for s in g.evidence_steps)
            st.markdown(f"**{plain(t.name)}** ({code_span(t.judge)}): {score}"
                        + (f" · cites steps {steps}" if steps else ""))
            if g.rationale:
                st.markdown(prose(g.rationale))
            if g.trace:
                with st.expander("The judge's tool calls"):
                    st.code(json.dumps(g.trace, indent=2, ensure_ascii=False)[:20000], language="json")
    if not cell.grades:
        st.caption("Not graded yet.")


def _verdict_form(name: str, tier: TierInfo, item_id: str, rater: str) -> None:
    from workbench.calibration.rubric_versions import get_rubric

    scale = get_rubric(store(), tier.rubric).rubric.scale
    st.markdown(f"**Your verdict** (saved as your label in golden set {code_span(tier.golden_set)})")
    st.radio("Score", scale.values, key=f"board-score:{item_id}", horizontal=True,
             format_func=lambda v: score_text(scale, v))
    st.text_area("Rationale", key=f"board-why:{item_id}", height=80,
                 placeholder="Why this score? Required for the lowest and highest values.")
    st.button("Save as label", key=f"board-save:{item_id}", type="primary", on_click=_save,
              args=(name, tier.name, item_id, rater))


def _save(name: str, tier: str, item_id: str, rater: str) -> None:
    score = st.session_state.get(f"board-score:{item_id}")
    run_action(svc.save_verdict, store(), name, item_id, rater, score, st.session_state.get(f"board-why:{item_id}"),
               tier=tier, ok=lambda r: f"Saved {code_span(item_id)} as {plain(rater)}'s label in golden set "
                                       f"{code_span(r.golden_set)}.")


def _rates(rep: BoardReport) -> None:
    st.subheader("Corrected pass rate per model", help=HELP["rates"])
    st.caption("Rogan-Gladen corrected with each bundle's TPR and TNR; the repeats of a task count together.")
    for t in rep.tiers:
        rows = [r for r in rep.rates if r.tier == t.name]
        if not rows:
            continue
        df = pd.DataFrame(rows)
        df["rate"] = [("raw " + f"{r.raw:.0%}" + " (not corrected)") if r.refused or r.corrected is None
                      else f"{r.corrected:.0%} ({r.ci_low:.0%}–{r.ci_high:.0%})" for r in rows]
        st.markdown(f"**{plain(t.name)}**")
        show_table(df.pivot(index="model", columns="category", values="rate").reset_index(), key=f"rates:{t.name}")
    for category in rep.categories:
        for line in category_flags(rep, category):
            st.markdown(f"- {plain(category)}: {plain(line)}")


def _family(rep: BoardReport) -> None:
    for f in rep.family:
        _family_check(f)


def _family_check(f: FamilyCheck) -> None:
    st.subheader(f"The judge's family ({f.judge_family or 'none'})",
                 help="A judge may score models of its own family (same maker) higher than humans would. The "
                      "same-family effect is that excess, measured at calibration; each difference below (a paired "
                      "t-interval over tasks) is shown as measured and net of it, the two intervals combined "
                      "(MOVER). An adjusted interval that excludes zero is a real difference.")
    if not f.marked_models:
        st.caption("No model on the board shares the judge's family.")
        return
    e = f.effect
    effect = ("not measurable at calibration" if e.value is None else
              f"{e.value:+.2f} ({e.ci_low:+.2f} to {e.ci_high:+.2f})")
    st.markdown(f"Marked: {', '.join(code_span(m) for m in f.marked_models)}. Same-family effect of "
                f"{code_span(f.judge)} measured at calibration: {effect}. Each difference is shown as "
                "measured and net of that effect.")
    show_table(pd.DataFrame(f.comparison).drop(columns=["reason"]),
               {"difference": "%+.2f", "ci_low": "%+.2f", "ci_high": "%+.2f", "adjusted": "%+.2f",
                "adjusted_low": "%+.2f", "adjusted_high": "%+.2f"}, key=f"family:{f.tier}")


if __name__ == "__main__":
    render()
