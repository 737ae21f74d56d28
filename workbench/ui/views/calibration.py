"""Calibration (leads): the verdict, every measurement with its interval, charts, and the disagreement browser.

Numbers, denominators and sentences come from ``workbench.calibration.presentation`` and the gate (the same rows the CLI
and the card print), never recomputed here. Only the open tab is computed and sent to the browser.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.calibration.presentation import (alt_test_rows, category_table, drift_rows, drift_sentence,
    interval_method, interval_sentence, leniency_sentence, metric_table, noise_floor_sentence, self_preference_rows)
from workbench.calibration.report import CalibrationReport
from workbench.core.scale import fmt as _fmt
from workbench.calibration.insights import item_evidence
from workbench.ui import auth, probes_view
from workbench.ui.components import code_span, plain, prose
from workbench.ui.lead import (NUMBER, RIGHT, SIGNED, disagreement_table, page_header, report, report_chart,
    show_table, verdict_box)
from workbench.ui.state import store
from workbench.ui.trajectory import display_step, render_item
from workbench.ui.planning_view import render_plan

ROLES = auth.LEADS
TABS = ("Agreement", "Humans", "Self-preference", "Noise & drift", "Robustness", "Disagreements")
TAB_KEY = "cal-tab"


def render() -> None:
    picked = page_header("Calibration", "cal", ROLES)
    if picked is None:
        return
    golden_set, rubric, judge = picked
    try:
        rep = report(golden_set, rubric, judge)
    except WorkbenchError as e:
        st.warning(prose(str(e)))
        return
    st.caption(f"Golden set {code_span(golden_set)} v{rep.golden_set.version} · rubric "
               f"{code_span(rep.rubric.name)} v{rep.rubric.version} · {code_span(rep.judge.model)} "
               f"({rep.judge.mode}) · run {code_span(rep.run.name)} · {rep.n_items} items with "
               f"consensus and judge score, {rep.n_unresolved} unresolved, {rep.n_unscored} unscored")
    verdict_box(rep)
    render_plan(store(), golden_set, rubric, judge, rep)  # labels to a decision, in words (ui/planning_view.py)
    # on_change="rerun": only the open tab runs, so a lead does not wait for four tabs they are not reading
    sections = (_agreement, _humans, _self_preference, _noise_and_drift, probes_view.render, _disagreements)
    picked = (golden_set, rubric, judge)
    for tab, section in zip(st.tabs(TABS, key=TAB_KEY, on_change="rerun"), sections):
        if tab.open:
            with tab:
                section(rep, picked)


def _agreement(rep: CalibrationReport, picked: tuple[str, str, str]) -> None:
    left, right = st.columns([3, 2])
    report_chart("metric_intervals", *picked, threshold=rep.policy.min_agreement_lower, container=left)
    report_chart("confusion_heatmap", *picked, container=right)
    if d := rep.denominators:
        st.markdown(f"**{d.n_items}** items with a consensus label and a judge score: **{d.n_pos}** consensus "
                    f"passes (the denominator of TPR) and **{d.n_neg}** consensus fails (the denominator of TNR).")
    rows = metric_table(rep)
    show_table(pd.DataFrame([{"metric": r.metric, "value": r.value, "95% low": r.ci_low,
                              "95% high": r.ci_high, "n": r.n, "interval": interval_method(rep, r.metric)}
                             for r in rows]),
               {"value": NUMBER, "95% low": NUMBER, "95% high": NUMBER, "n": "%d"}, key="cal-metrics")
    _notes({r.metric: r.note for r in rows})
    st.caption(interval_sentence(rep))
    mse = rep.metric("mean_signed_error")
    lean = leniency_sentence(rep)
    st.markdown("Mean signed error: " + (lean + "." if lean else
                                        f"{_fmt(mse.value, 2)} (interval {_fmt(mse.ci_low, 2)} to "
                                        f"{_fmt(mse.ci_high, 2)}): the interval includes 0, no systematic lean."))
    st.subheader("Per category")
    cats = category_table(rep)
    report_chart("per_category", *picked)
    show_table(pd.DataFrame([{"category": c.category, "n": c.n, "exact agreement": c.exact_agreement,
                              "95% low": c.ci_low, "95% high": c.ci_high, "alpha": c.alpha,
                              "mean signed error": c.mean_signed_error, "vs the rest": c.vs_rest,
                              "weaker than the rest": "⚠️ yes" if c.weaker else "no"} for c in cats]),
               {"n": "%d", "exact agreement": NUMBER, "95% low": NUMBER, "95% high": NUMBER, "alpha": NUMBER,
                "mean signed error": SIGNED, "vs the rest": SIGNED}, key="cal-categories")
    _notes({c.category: c.reason for c in cats})  # a category too small for an interval says why
    weak = [c.category for c in cats if c.weaker]
    if weak:
        st.warning("The judge is significantly worse than on the rest in " + ", ".join(code_span(c) for c in weak)
                   + ": look at its disagreements there before trusting it on such items.", icon="⚠️")
    else:
        st.caption("No category is significantly worse than the rest (each category's exact agreement against "
                   "every other item, paired, with the level corrected for the number of categories).")
    if floor := noise_floor_sentence(rep):
        st.info(f"Noise floor: {floor}")


def _notes(notes: dict[str, str | None]) -> None:
    """Why a row of the table above has no value, or what to keep in mind: below the table, never clipped."""
    lines = [f"- {code_span(name)}: {plain(note)}" for name, note in notes.items() if note]
    if lines:
        st.markdown("\n".join(lines))


def _humans(rep: CalibrationReport, picked: tuple[str, str, str]) -> None:
    hc = rep.human_ceiling
    a, b, c = st.columns(3)
    a.metric("Humans' alpha (all raters)", _fmt(hc.krippendorff_alpha_ordinal))
    b.metric("Human-human pairwise agreement", _fmt(hc.human_pairwise_agreement))
    c.metric("Judge-human pairwise agreement", _fmt(hc.judge_human_pairwise_agreement))
    report_chart("human_ceiling", *picked)
    alt = rep.alt_test
    if not alt:
        st.info(f"Alternative-annotator test not run: {plain(rep.alt_test_reason)}")
        return
    st.markdown(f"**Alternative-annotator test** (epsilon {alt.epsilon}, {alt.metric}, "
                f"Benjamini-Yekutieli q = {alt.q}): winning rate **{_fmt(alt.winning_rate, 2)}** (the share of "
                f"raters the judge is at least as good as; it passes at 0.5), advantage probability "
                f"**{_fmt(alt.advantage_probability, 2)}**: " + ("passed." if alt.passed else "not passed."))
    show_table(pd.DataFrame([{"rater": r.rater, "items": r.n, "p (one-sided)": r.p,
                              "judge at least as good as this rater": "yes" if r.judge_as_good else "no",
                              "advantage probability": r.advantage_probability} for r in alt_test_rows(rep)]),
               {"items": "%d", "p (one-sided)": RIGHT, "advantage probability": NUMBER}, key="cal-alt")


def _self_preference(rep: CalibrationReport, picked: tuple[str, str, str]) -> None:
    report_chart("self_preference_forest", *picked, threshold=rep.policy.max_self_preference)
    rows = self_preference_rows(rep)
    show_table(pd.DataFrame([{"effect": r.effect.replace("_", " "), "value": r.value, "95% low": r.ci_low,
                              "95% high": r.ci_high, "items": r.n, "OLS p": r.ols_p} for r in rows]),
               {"value": SIGNED, "95% low": SIGNED, "95% high": SIGNED, "items": "%d", "OLS p": RIGHT},
               key="cal-self")
    _notes({r.effect.replace("_", " "): r.note for r in rows})


def _noise_and_drift(rep: CalibrationReport, picked: tuple[str, str, str]) -> None:
    noise = rep.noise
    if noise:
        a, b, c = st.columns(3)
        a.metric("Flip rate between repeats", f"{noise.flip_rate:.0%}")
        b.metric("Alpha across repeats", _fmt(noise.krippendorff_alpha_ordinal))
        c.metric(f"pass^k, k = {noise.repeats}", _fmt(noise.pass_hat_k),
                 help="Share of items whose every one of the k repeats agrees with the consensus.")
    else:
        st.info("No repeats recorded: run the judge with `--repeats 2` or more to measure its noise.")
    d = rep.drift
    if not d:
        st.info("No earlier run of this judge to compare with.")
        return
    # the sentence the CLI and the card print; run names and model versions come from imports and providers
    st.markdown(prose(drift_sentence(d)))
    show_table(pd.DataFrame([{"metric": r.metric, "change": r.change, "95% low": r.ci_low,
                              "95% high": r.ci_high} for r in drift_rows(d)]),
               {"change": SIGNED, "95% low": SIGNED, "95% high": SIGNED}, key="cal-drift")


def _disagreements(rep: CalibrationReport, picked: tuple[str, str, str]) -> None:
    golden_set, rubric, judge = picked
    df = disagreement_table(golden_set, rubric, judge)
    if df.empty:
        st.success("The judge agrees with the consensus on every item.")
        return
    a, b = st.columns(2)
    cats = a.multiselect("Categories", sorted(df["category"].unique()), key="dis-cats")
    order = b.radio("Sort by", ["size of the gap", "category"], horizontal=True, key="dis-sort")
    view = df[df["category"].isin(cats)] if cats else df
    view = view.sort_values(["abs_gap", "category"] if order == "size of the gap" else ["category", "abs_gap"],
                            ascending=[order != "size of the gap", order == "size of the gap"])
    st.caption(f"{len(view)} items where the judge and the consensus differ (gap = judge − consensus).")
    picked = st.dataframe(view.drop(columns=["abs_gap"]), hide_index=True, on_select="rerun",
                          selection_mode="single-row", key="dis-table", placeholder="–")
    rows = picked.selection.rows if picked and picked.selection else []
    item_id = view.iloc[rows[0]]["item_id"] if rows else st.selectbox("Open item", view["item_id"], key="dis-open")
    if item_id:
        _evidence(golden_set, rubric, judge, str(item_id))


def _evidence(golden_set: str, rubric: str, judge: str, item_id: str) -> None:
    ev = item_evidence(store(), golden_set, rubric, judge, item_id)
    item = ev["item"]
    st.subheader(f"Item {code_span(item_id)}")
    st.caption(f"category {plain(item.category)} · task {plain(item.cluster)} · producer "
               + plain(f"{item.producer.model} ({item.producer.family})" if item.producer else "unknown"))
    left, right = st.columns([3, 2])
    cited: set[int] = set()
    with right:
        st.markdown(f"**Consensus**: {ev['consensus']}")
        for l in ev["labels"]:
            st.markdown(f"- **{plain(l.rater)}**: {l.score}" + (f" — {plain(l.rationale)}" if l.rationale else ""))
        if a := ev["adjudication"]:
            st.markdown(f"- **adjudicated by {plain(a.lead)}**: {a.score}" + (f" — {plain(a.note)}" if a.note else ""))
        for j in ev["judgments"]:
            st.markdown(f"**Judge, repeat {j['repeat']}**: "
                        + (str(j["score"]) if j["score"] is not None else f"unscored ({plain(j['unscored_reason'])})")
                        + (f" — {plain(j['rationale'])}" if j["rationale"] else ""))
            cited |= {display_step(s) for s in j["evidence_steps"] or []}
            if j["trace"]:
                with st.expander(f"Agentic judge's tool transcript (repeat {j['repeat']})"):
                    _trace(j["trace"])
        if cited:
            st.markdown("Evidence steps cited: " + ", ".join(f"**{s}**" for s in sorted(cited)))
    with left:
        render_item(item, key=f"dis:{item_id}", cited=cited)


def _trace(trace: list[dict]) -> None:
    """The agentic judge's tool calls, one line each; step ranges shown as numbered in the viewer (from 1)."""
    lines = []
    for n, t in enumerate(trace, 1):
        args = t.get("arguments") or {}
        call = f"{t.get('tool')}({', '.join(f'{k}={json.dumps(v, ensure_ascii=False)}' for k, v in args.items())})"
        line = f"{n}. {code_span(call[:300])}"
        if t.get("tool") == "read_steps" and isinstance(args.get("start"), int) and isinstance(args.get("end"), int):
            line += f" (steps {display_step(args['start'])}–{display_step(args['end'])} in the viewer)"
        result = str(t.get("result") or "")
        if result:
            line += f" → {plain(' '.join(result.split())[:300])}"
        lines.append(line)
    st.markdown("\n".join(lines))
    st.caption("The judge's tools number steps from 0; the viewer numbers them from 1.")


if __name__ == "__main__":
    render()
