"""The label plan in words, beside the verdict on the Calibration page: for every undecided check the labels to a
decision as a range (the median and the 80% range over simulated futures, in the recommended and in random order,
and the odds that the unlabeled pool decides it); with a budget slider, the interval widths that many more labels
would give and the items the active queue would serve for them, each with why."""

from __future__ import annotations

import streamlit as st

from workbench.calibration.report import CalibrationReport
from workbench.core.errors import WorkbenchError
from workbench.features.planning.active_queue import next_items
from workbench.features.planning.plan import plan
from workbench.ui import glossary
from workbench.ui.components import code_span, plain
from workbench.ui.lead import NUMBER, show_table

#: The plan's measures in plain words (the glossary's labels; the entries explain them on the Glossary page).
MEASURE_TERMS = {"krippendorff_alpha_ordinal": "alpha", "cohen_kappa": "kappa", "cohen_kappa_linear": "kappa",
                 "cohen_kappa_quadratic": "kappa", "gwet_ac2_linear": "ac2", "exact_agreement": "exact",
                 "spearman": "spearman", "tpr": "tpr", "tnr": "tnr"}


def _measure(name: str) -> str:
    return glossary.label(MEASURE_TERMS[name]) if name in MEASURE_TERMS else name.replace("_", " ")


def render_plan(store, golden_set: str, rubric: str, judge: str, report: CalibrationReport) -> None:
    """'Passes and fails: about 420 more labels (80% range 150 to 1,300) ...' One sentence per undecided check, and
    a table of the ranges."""
    try:
        p = plan(store, golden_set, rubric, judge, report=report)
    except Exception as e:  # a plan is advice: its failure must not hide the verdict
        st.caption(f"No label plan: {plain(str(e))}")
        return
    if design := report.sampling_design:
        st.caption(f"Labels came from the active queue: estimates weighted by 1 / inclusion probability "
                   f"(effective {design.kish_effective_n:.0f} items).")
    st.markdown("**Labels to a decision.** " + plain(p.summary()))
    _ranges(p)
    _queue_order(store, golden_set, rubric, judge)
    if p.queue_advice:
        st.info(plain(p.queue_advice), icon="🧭")
        st.button("Re-plan the active queue", key=f"replan:{golden_set}:{judge}", on_click=_replan,
                  args=(golden_set, rubric, judge))
    # computed only when asked for: the Calibration page's visits stay as quick as they are
    if st.toggle("Plan a labeling budget: which items, and why", key=f"plan-open:{golden_set}:{judge}"):
        _budget(store, golden_set, rubric, judge, report, p.n_items)


def _count(r) -> str:
    """A range's end in words: a number, or 'more than N' past the simulated horizon."""
    return f"{r:,.0f}" if isinstance(r, (int, float)) else ""


def _range_cell(r) -> str:
    """'420 (150 to 1,300)': the median labels and the 80% range; past the simulated horizon 'more than N'."""
    if r is None:
        return "–"
    beyond = f"more than {r.horizon:,.0f}" if r.horizon is not None else "beyond"
    median, low, high = (_count(x) if x is not None else beyond for x in (r.median, r.low, r.high))
    return f"{median} ({low} to {high})"


def _ranges(p) -> None:
    """The ranges of every undecided check (and of the verdict), never a single number: labels in the recommended
    order, in random order, and the share of simulated futures that the unlabeled pool decides."""
    rows = [(c.name, c.recommended, c.random) for c in p.undecided if c.random is not None]
    if p.overall and p.overall.random is not None:
        rows.append(("the verdict" if p.overall.labels_alone else "the checks labels decide", p.overall.recommended,
                     p.overall.random))
    if not rows:
        return
    show_table([{"check": name, "labels, recommended order": _range_cell(rec.labels),
                 "labels, random order": _range_cell(ran.labels), "the pool decides it": f"{rec.pool_decides:.0%}"}
                for name, rec, ran in rows], key=f"plan-ranges:{p.golden_set}:{p.judge}",
               column_config={
                   "labels, recommended order": st.column_config.TextColumn(
                       help="More labels to a decision if reviewers follow the active queue: the median over "
                            f"{p.paths} simulated futures, and in brackets the range that holds 80% of them."),
                   "labels, random order": st.column_config.TextColumn(
                       help="The same if items are labeled in random order."),
                   "the pool decides it": st.column_config.TextColumn(
                       help="Share of simulated futures in which the items not labeled yet are enough; below 50% "
                            "the plan says to add items to the golden set.")})
    st.caption(f"Each range is the median and the 80% range over {p.paths} simulated futures of the golden set "
               "(the labels nobody has given yet, drawn from those so far); the gate is re-read after every batch.")


def _budget(store, golden_set: str, rubric: str, judge: str, report: CalibrationReport, n_items: int) -> None:
    """The slider of more labels, the interval widths they would give (random order), and the items the active
    queue would serve first for them (``active_queue.next_items``; nothing is saved until the queue is switched)."""
    top = max(10, 2 * n_items)
    labels = st.slider("More labels you can pay for", min_value=0, max_value=top, value=min(40, top), step=5, key=f"plan-budget:{golden_set}:{judge}",
                       help="Labels, not items: each item needs the golden set's overlap of labels for a consensus.")
    try:
        p = plan(store, golden_set, rubric, judge, report=report, budget=labels)
        items = next_items(store, golden_set, rubric, judge, labels)
    except WorkbenchError as e:
        st.caption(f"No budget plan: {plain(str(e))}")
        return
    if p.budget_widths:
        st.markdown(f"With **{labels} more labels** (random order), the 95% intervals would be about this wide:")
        show_table([{"measure": _measure(name), "expected width": w} for name, w in p.budget_widths.items()],
                   {"expected width": NUMBER}, key=f"plan-widths:{judge}",
                   column_config={"expected width": st.column_config.NumberColumn(
                       format=NUMBER, help="Width of the 95% interval: the range the true value is likely in.")})
    if not items:
        st.caption("Every item already has a consensus label: more labels would add items to the golden set first.")
        return
    st.markdown(f"**Which items**: the active queue would serve these {len(items)} items without a consensus label "
                "first (in its order), drawn more often where the undecided checks need them:")
    show_table([{"item": x.item_id, "why": x.why, "chance vs random": x.vs_random} for x in items],
               {"chance vs random": "%.1fx"}, key=f"plan-items:{judge}",
               column_config={"why": st.column_config.TextColumn(width="large"),
                              "chance vs random": st.column_config.NumberColumn(
                                  format="%.1fx", help="How much more often the active queue draws this kind of item "
                                                       "than a random order would: 2.0x is twice as often.")})


def _replan(golden_set: str, rubric: str, judge: str) -> None:
    from workbench.features.planning.active_queue import set_queue_order
    from workbench.ui import auth
    from workbench.ui.components import run_action
    from workbench.ui.state import store

    user = auth.current_user()  # the page is for leads; the callback checks again
    if user is None or user.role not in auth.LEADS:
        return
    run_action(set_queue_order, store(), golden_set, "active", rubric=rubric, judge=judge, lead=user.name,
               ok=f"The active queue of {code_span(golden_set)} now serves the undecided checks.")


def _queue_order(store, golden_set: str, rubric: str, judge: str) -> None:
    """The lead's switch of the Label page's order: each reviewer's random order, or the active queue for this
    rubric and judge (``golden-set queue G --order``)."""
    from workbench.features.planning.active_queue import ORDERS, queue_setting

    current = queue_setting(store, golden_set).order
    st.radio(f"Label queue of {plain(golden_set)}", ORDERS, index=ORDERS.index(current), horizontal=True,
             key=f"queue_order:{golden_set}:{judge}", on_change=_set_order, args=(golden_set, rubric, judge),
             help="Active serves the items whose labels decide this judge's undecided checks soonest; every "
                  "item keeps a chance and the estimates are weighted back to the whole golden set.")


def _set_order(golden_set: str, rubric: str, judge: str) -> None:
    from workbench.features.planning.active_queue import set_queue_order
    from workbench.ui import auth
    from workbench.ui.components import run_action
    from workbench.ui.state import store

    user = auth.current_user()  # the page is for leads; the callback checks again
    if user is None or user.role not in auth.LEADS:
        return
    order = st.session_state[f"queue_order:{golden_set}:{judge}"]
    run_action(set_queue_order, store(), golden_set, order, rubric=rubric, judge=judge, lead=user.name,
               ok=f"The label queue of {code_span(golden_set)} is now in {order} order.")
