"""Calibration (leads): the verdict in one sentence, every measurement with its interval in plain words, charts,
the coverage-agreement curve of a judge with confidence, and the disagreement browser.

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
from workbench.ui import auth, glossary
from workbench.ui.components import code_span, metric, plain, prose
from workbench.ui.lead import (DEFAULT_RISK, DEFAULT_TARGET, NUMBER, RIGHT, SIGNED, curve, disagreement_table,
    page_header, report, report_chart, show_spec, show_table, verdict_box)
from workbench.ui.state import db_path, store
from workbench.ui.views.parts.trajectory import display_step, render_item
from workbench.ui.views.parts import probes as probes_part
from workbench.ui.views.parts.planning import render_plan

ROLES = auth.LEADS
TABS = ("Agreement", "Humans", "Self-preference", "Noise & drift", "Robustness", "Confidence", "Disagreements")
#: Each metric of the report in plain words (the glossary's label), with its glossary entry for the tooltip.
METRIC_TERMS = {"krippendorff_alpha_ordinal": "alpha", "cohen_kappa": "kappa", "cohen_kappa_linear": "kappa",
                "cohen_kappa_quadratic": "kappa", "gwet_ac2_linear": "ac2", "exact_agreement": "exact",
                "spearman": "spearman", "tpr": "tpr", "tnr": "tnr", "mean_signed_error": "mse"}
KAPPA_KIND = {"cohen_kappa": "", "cohen_kappa_linear": ", linear weights", "cohen_kappa_quadratic": ", quadratic weights"}


def metric_label(name: str) -> str:
    """'agreement beyond chance (Krippendorff's alpha)' for 'krippendorff_alpha_ordinal'; the name itself if unknown."""
    if name in KAPPA_KIND:
        return f"agreement beyond chance (Cohen's kappa{KAPPA_KIND[name]})"
    return glossary.label(METRIC_TERMS[name]) if name in METRIC_TERMS else name
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
    verdict_box(rep)  # the verdict first, before any table or chart
    st.caption(f"Golden set {code_span(golden_set)} v{rep.golden_set.version} · rubric "
               f"{code_span(rep.rubric.name)} v{rep.rubric.version} · {code_span(rep.judge.model)} "
               f"({rep.judge.mode}) · run {code_span(rep.run.name)} · {rep.n_items} items with "
               f"consensus and judge score, {rep.n_unresolved} unresolved, {rep.n_unscored} unscored")
    render_plan(store(), golden_set, rubric, judge, rep)  # labels to a decision, in words (ui/views/parts/planning.py)
    # on_change="rerun": only the open tab runs, so a lead does not wait for four tabs they are not reading
    sections = (_agreement, _humans, _self_preference, _noise_and_drift, probes_part.render, _confidence,
                _disagreements)
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
    show_table(pd.DataFrame([{"measure": metric_label(r.metric), "value": r.value, "95% low": r.ci_low,
                              "95% high": r.ci_high, "n": r.n, "interval": interval_method(rep, r.metric)}
                             for r in rows]),
               {"value": NUMBER, "95% low": NUMBER, "95% high": NUMBER, "n": "%d"}, key="cal-metrics",
               column_config={"95% low": st.column_config.NumberColumn(format=NUMBER, help=glossary.help("ci")),
                              "interval": st.column_config.TextColumn(help=glossary.help("bca"))})
    _notes({metric_label(r.metric): r.note for r in rows})
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
                              "weaker than the rest": "⚠️ yes, weaker" if c.weaker else "no"} for c in cats]),
               {"n": "%d", "exact agreement": NUMBER, "95% low": NUMBER, "95% high": NUMBER, "alpha": NUMBER,
                "mean signed error": SIGNED, "vs the rest": SIGNED}, key="cal-categories")
    _notes({c.category: c.reason for c in cats})  # a category too small for an interval says why
    weak = [c.category for c in cats if c.weaker]
    if weak:
        st.warning("Warning: the judge is significantly worse than on the rest in " + ", ".join(code_span(c) for c in weak)
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
    metric("How well the reviewers agree (alpha)", _fmt(hc.krippendorff_alpha_ordinal), term="alpha", container=a,
           help="Agreement among all reviewers, beyond chance.")
    metric("Reviewer with reviewer, same score", _fmt(hc.human_pairwise_agreement), term="human_ceiling",
           container=b, help="Share of pairs of reviewers who gave an item the same score.")
    metric("Judge with reviewer, same score", _fmt(hc.judge_human_pairwise_agreement), term="human_ceiling",
           container=c, help="Share of (judge, reviewer) pairs that gave an item the same score.")
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
        metric("Score changes between repeats (flip rate)", f"{noise.flip_rate:.0%}", term="flip_rate", container=a)
        metric("Agreement of the judge with itself (alpha)", _fmt(noise.krippendorff_alpha_ordinal), term="alpha",
               container=b, help="Alpha between the judge's repeated gradings of the same items.")
        metric(f"Always right over {noise.repeats} repeats (pass^k)", _fmt(noise.pass_hat_k), term="pass_k",
               container=c)
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


def _confidence(rep: CalibrationReport, picked: tuple[str, str, str]) -> None:
    """Selective judging: the coverage-agreement curve, the threshold ``calibrate --selective`` would choose and
    its guarantee in one sentence (docs/selective.md)."""
    golden_set, rubric, judge = picked
    wanted = rep.policy.selective
    a, b = st.columns(2)
    target = a.number_input("Agreement wanted on the items it keeps", 0.5, 0.99,
                            wanted.target_agreement if wanted else DEFAULT_TARGET, 0.01, key="sel-target",
                            help=glossary.help("coverage"))
    risk = b.number_input("Chance the guarantee may fail (risk)", 0.01, 0.5, wanted.risk if wanted else DEFAULT_RISK,
                          0.01, key="sel-risk", help=glossary.help("risk"))
    try:
        c = curve(golden_set, rubric, judge, float(target), float(risk))
    except WorkbenchError as e:
        st.info(prose(str(e)))
        return
    if not c.n_with_confidence:
        st.info(f"{code_span(judge)} gives no confidence with its grades (none stored, and no repeats to measure it "
                "by), so it cannot keep the items it is sure of and pass on the rest.")
        return
    if c.chosen is not None:
        (st.success if c.chosen.guaranteed else st.warning)(plain(c.chosen.sentence))
    elif c.why_not:
        st.warning(plain(c.why_not))
    show_spec(_curve_spec(c))
    st.caption(f"Confidence comes from {plain(c.source)} for {c.n_with_confidence} of the {c.n_items} labeled "
               "items; each point keeps the items at or above its confidence threshold (agreement as seen, without "
               "the bound the guarantee uses).")
    if wanted is not None and wanted.cascade and wanted.cascade[0] == judge:
        _cascade(golden_set, rubric, wanted.cascade, float(target), float(risk))


@st.cache_data(show_spinner="Choosing the cascade's thresholds…", max_entries=16)
def _cascade_result(db: str, version: tuple, golden_set: str, rubric: str, judges: tuple[str, ...], target: float,
                    risk: float):
    from workbench.features.selective.service import calibrate_selective

    return calibrate_selective(store(), golden_set, rubric, list(judges), target=target, risk=risk)


def _cascade(golden_set: str, rubric: str, judges: tuple[str, ...], target: float, risk: float) -> None:
    """The cascade the rubric's policy names, as ``calibrate --selective --cascade`` chooses it: its sentence, what
    each judge grades, the share abstained on, and each judge alone."""
    st.subheader("The cascade of the policy")
    try:
        r = _cascade_result(db_path(), store().data_version(), golden_set, rubric, tuple(judges), target, risk)
    except WorkbenchError as e:
        st.info(prose(str(e)))
        return
    (st.success if r.guaranteed else st.warning)(plain(r.sentence))
    if not r.guaranteed:
        return
    rows = [{"judge": s.judge, "threshold": "skipped" if s.threshold is None else f"{s.threshold:.3g}",
             "share of items": s.share_of_items, "agreement on them": s.agreement,
             "cost per item": s.cost_per_item,
             "alone, tested on its own": next((a.coverage for a in r.single_judges if a.judge == s.judge), None)}
            for s in r.cascade]
    rows.append({"judge": "abstained (to people)", "share of items": r.abstained_share})
    show_table(pd.DataFrame(rows), {"share of items": "%.3f", "agreement on them": NUMBER, "cost per item": "$%.4f",
                                    "threshold": RIGHT, "alone, tested on its own": "%.3f"}, key="cal-cascade")
    st.caption("Each item goes to the first judge whose confidence reaches its threshold; the thresholds are chosen "
               f"together, on {r.method.n_test} of the {r.n_calibration} labeled items after the other "
               f"{r.method.n_order} ordered them, so the guarantee holds for the cascade's verdicts as a whole. "
               "The last column is the share each judge would keep alone, tested on its own at the same target "
               "and risk.")


def _curve_spec(c) -> dict:
    import altair as alt  # only this tab pays for it

    points = pd.DataFrame([{"coverage": p.coverage, "agreement": p.agreement, "threshold": p.threshold,
                            "items kept": p.n_kept} for p in c.points])
    chosen = c.chosen
    low = min([p.agreement for p in c.points] + ([chosen.target] if chosen is not None else []))
    line = alt.Chart(points).mark_line(point=True).encode(
        x=alt.X("coverage:Q", title="share of items the judge keeps", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("agreement:Q", title="agreement with the humans on kept items",
                scale=alt.Scale(domain=[max(0.0, round(low - 0.05, 2)), 1])),
        tooltip=["threshold", "coverage", "agreement", "items kept"])
    layers = [line]
    if chosen is not None:
        layers.append(alt.Chart(pd.DataFrame([{"target": chosen.target}])).mark_rule(strokeDash=[4, 4]).encode(
            y="target:Q", tooltip=alt.Tooltip("target:Q", title="agreement wanted")))
        if chosen.guaranteed:
            layers.append(alt.Chart(pd.DataFrame([{"coverage": chosen.coverage, "agreement": chosen.agreement}]))
                          .mark_point(size=200, shape="diamond", filled=True, color="green")
                          .encode(x="coverage:Q", y="agreement:Q",
                                  tooltip=[alt.Tooltip("coverage:Q", title="chosen: share kept"), "agreement:Q"]))
    return alt.layer(*layers).properties(height=300, title=f"{c.judge}: coverage against agreement").to_dict(
        validate=False)


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
