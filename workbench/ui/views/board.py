"""Board (leads): several models' runs per task and category, where to look, and a reviewer's verdict on a cell.

The grid is the same HTML as `workbench board show --format html` (escaped run
text, one table per category). A "where to look" entry opens the cell's runs
in the Label page's viewer with each tier's verdict, the judge's rationale and
the steps it cited; a verdict given there is saved as a label through the
labeling service (the item joins the bundle's golden set).
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.features.board import service as svc
from workbench.features.board.records import BoardReport, FamilyCheck, TierInfo
from workbench.features.board.render import CSS, board_grid_html, category_flags, column_rows
from workbench.ui import auth
from workbench.ui.components import code_span, plain, prose, run_action, score_text, show_flash
from workbench.ui.lead import show_table
from workbench.ui.state import db_path, store
from workbench.ui.trajectory import display_step, render_item

ROLES = auth.LEADS
OPEN_KEY = "board-open"  # (board, task_id, model) of the cell in the viewer
SHOWN = 20  # where-to-look entries listed


@st.cache_data(show_spinner="Computing the board…", max_entries=16)
def _report(db: str, version: tuple, name: str) -> BoardReport:
    return svc.board_report(store(), name)


def report(name: str) -> BoardReport:
    return _report(db_path(), svc.board_fingerprint(store(), name), name)


def render() -> None:
    user = auth.require(ROLES)
    st.title("Board")
    show_flash()
    boards = [b.name for b in svc.list_boards(store())]
    if not boards:
        st.info("No board yet. Grade several models' runs with approved bundles: "
                "`workbench board grade RUN_FILES... --bundle FILE --name NAME`.")
        return
    name = st.selectbox("Board", boards, key="board-name")
    try:
        rep = report(name)
    except WorkbenchError as e:
        st.warning(prose(str(e)))
        return
    st.caption(f"{rep.n_items} runs of {len(rep.models)} models on {len(rep.tasks)} tasks in "
               f"{len(rep.categories)} categories. No summed score: read down a column and across a category.")
    st.markdown("\n".join(f"- **{plain(t.name)}**: {code_span(t.judge)} ({code_span(t.model)}), rubric "
                          f"{code_span(t.rubric)} v{t.rubric_version}, TPR {t.tpr:.2f}, TNR {t.tnr:.2f}"
                          for t in rep.tiers))
    for tier, t in rep.outlier_tests.items():
        if t.task.reason:
            st.caption(f"{plain(tier)}: {plain(t.task.reason)}.")
    opened = st.session_state.get(OPEN_KEY)
    if opened and opened[0] == name:
        _viewer(rep, opened[1], opened[2], user.name)
    _where_to_look(rep, name)
    st.subheader("Per task and category")
    st.caption("M: mechanical tier, passes of the repeats; J: judged tier, mean score and its +1s. ▲ ▼ an outlier "
               "against the task's other models (adjusted p-value at most "
               f"{rep.settings.q}); † the judged tier's judge shares the model's family.")
    st.html(f"<style>{CSS}</style>")  # a style-only block is page CSS; inside the grid's block it would be dropped
    st.html(f"<div class='board-wrap'>{board_grid_html(rep)}</div>")
    st.subheader("Down each column")
    st.caption("mean@k: the share of a model's repeats that pass; pass^k: the chance that k repeats of a task all "
               "pass (every repeat, averaged over tasks).")
    head, rows = column_rows(rep)
    show_table(pd.DataFrame(rows, columns=head), key="board-columns")
    _rates(rep)
    _family(rep)


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
    st.subheader("Corrected pass rate per model")
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
    st.subheader(f"The judge's family ({f.judge_family or 'none'})")
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
