"""Calibration (leads): the verdict, every measurement with its interval, charts, and the disagreement browser."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from workbench import charts
from workbench.errors import WorkbenchError
from workbench.scale import fmt as _fmt
from workbench.services.calibration import noise_floor_sentence
from workbench.services.insights import item_evidence
from workbench.ui import auth
from workbench.ui.components import code_span, plain, prose
from workbench.ui.lead import disagreement_table, page_header, report, show_chart, verdict_box
from workbench.ui.state import store

ROLES = auth.LEADS


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
    st.caption(f"Golden set {code_span(golden_set)} v{rep['golden_set']['version']} · rubric "
               f"{code_span(rep['rubric']['name'])} v{rep['rubric']['version']} · {code_span(rep['judge']['model'])} "
               f"({rep['judge']['mode']}) · run {code_span(rep['run']['name'])} · {rep['n_items']} items with consensus and judge score, "
               f"{rep['n_unresolved']} unresolved, {rep['n_unscored']} unscored · "
               f"{rep['bootstrap']['resamples']} bootstrap resamples of task clusters, seed {rep['bootstrap']['seed']}")
    verdict_box(rep)

    tabs = st.tabs(["Agreement", "Humans", "Self-preference", "Noise & drift", "Disagreements"])
    with tabs[0]:
        left, right = st.columns([3, 2])
        show_chart(container=left, chart=charts.metric_intervals(rep, threshold=rep["policy"]["min_agreement_lower"]))
        show_chart(container=right, chart=charts.confusion_heatmap(rep))
        st.dataframe(pd.DataFrame([{"metric": k, "value": m["value"], "95% low": m["ci_low"], "95% high": m["ci_high"]}
                                   for k, m in rep["metrics"].items()]), hide_index=True)
        mse = rep["metrics"]["mean_signed_error"]
        st.markdown(f"Mean signed error **{_fmt(mse['value'], 2)}** ({_fmt(mse['ci_low'], 2)} to "
                    f"{_fmt(mse['ci_high'], 2)}): " + ("the judge is **lenient**." if (mse["ci_low"] or 0) > 0 else
                                                        "the judge is **harsh**." if (mse["ci_high"] or 0) < 0 else
                                                        "no systematic lean."))
        show_chart(charts.per_category(rep))
        if floor := noise_floor_sentence(rep):
            st.info(f"Noise floor: {floor}")
    with tabs[1]:
        hc = rep["human_ceiling"]
        a, b, c = st.columns(3)
        a.metric("Humans' alpha (all raters)", _fmt(hc["krippendorff_alpha_ordinal"]))
        b.metric("Human-human pairwise agreement", _fmt(hc["human_pairwise_agreement"]))
        c.metric("Judge-human pairwise agreement", _fmt(hc["judge_human_pairwise_agreement"]))
        show_chart(charts.human_ceiling(rep))
        alt = rep.get("alt_test")
        if alt:
            st.markdown(f"**Alternative-annotator test** (epsilon {alt['epsilon']}, {alt['metric']}, "
                        f"Benjamini-Yekutieli q = {alt['q']}): winning rate **{_fmt(alt['winning_rate'], 2)}**, "
                        f"advantage probability **{_fmt(alt['advantage_probability'], 2)}**: "
                        + ("passed." if alt["passed"] else "not passed."))
            st.dataframe(pd.DataFrame(alt["raters"]), hide_index=True)
        else:
            st.info(f"Alternative-annotator test not run: {rep.get('alt_test_reason')}")
    with tabs[2]:
        show_chart(charts.self_preference_forest(rep, threshold=rep["policy"]["max_self_preference"]))
        rows = []
        for name, e in rep["self_preference"].items():
            rows.append({"effect": name, "value": e.get("value"), "95% low": e.get("ci_low"),
                         "95% high": e.get("ci_high"), "items": e.get("n"), "OLS p": e.get("p_value"),
                         "note": e.get("reason") or ""})
        st.dataframe(pd.DataFrame(rows), hide_index=True)
    with tabs[3]:
        noise = rep.get("noise")
        if noise:
            a, b, c = st.columns(3)
            a.metric("Flip rate between repeats", f"{noise['flip_rate']:.0%}")
            b.metric("Alpha across repeats", _fmt(noise["krippendorff_alpha_ordinal"]))
            c.metric("pass^k", _fmt(noise.get("pass_hat_k")))
        else:
            st.info("No repeats recorded: run the judge with `--repeats 2` or more to measure its noise.")
        d = rep.get("drift")
        if d:
            st.markdown(f"**Drift** from run `{d['baseline_run']}` to `{d['run']}`: flip rate "
                        f"{_fmt(d['flip_rate'], 2)}, Stuart-Maxwell p = {_fmt(d['stuart_maxwell']['p_value'], 4)}; "
                        f"model versions {plain(', '.join(d['model_versions']['baseline']) or 'unknown')} → "
                        f"{plain(', '.join(d['model_versions']['candidate']) or 'unknown')}.")
            st.dataframe(pd.DataFrame([{"metric": k, "change": m["value"], "95% low": m["ci_low"],
                                        "95% high": m["ci_high"]} for k, m in d["deltas"].items()]), hide_index=True)
        else:
            st.info("No earlier run of this judge to compare with.")
    with tabs[4]:
        _disagreements(golden_set, rubric, judge)


def _disagreements(golden_set: str, rubric: str, judge: str) -> None:
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
                          selection_mode="single-row", key="dis-table")
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
    with right:
        st.markdown(f"**Consensus**: {ev['consensus']}")
        for l in ev["labels"]:
            st.markdown(f"- **{plain(l['rater'])}**: {l['score']}" + (f" — {plain(l['rationale'])}" if l["rationale"] else ""))
        if ev["adjudication"]:
            a = ev["adjudication"]
            st.markdown(f"- **adjudicated by {plain(a['lead'])}**: {a['score']}" + (f" — {plain(a['note'])}" if a["note"] else ""))
        evidence_steps: set[int] = set()
        for j in ev["judgments"]:
            st.markdown(f"**Judge, repeat {j['repeat']}**: "
                        + (str(j["score"]) if j["score"] is not None else f"unscored ({plain(j['unscored_reason'])})")
                        + (f" — {plain(j['rationale'])}" if j["rationale"] else ""))
            evidence_steps |= set(j["evidence_steps"] or [])
            if j["trace"]:
                with st.expander(f"Agentic judge's tool transcript (repeat {j['repeat']})"):
                    for t in j["trace"]:
                        st.code(json.dumps(t, indent=1, ensure_ascii=False)[:2000], language="json")
        if evidence_steps:
            st.markdown("Evidence steps cited: " + ", ".join(f"**{s}**" for s in sorted(evidence_steps)))
    with left:
        st.markdown(f"**Task**: {prose(item.input)}")
        for n, step in enumerate(item.trajectory or []):
            cited = n in evidence_steps
            label = f"{'🔶 ' if cited else ''}step {n} · {plain(step.get('role'))}" + (" · cited by the judge" if cited else "")
            with st.expander(label, expanded=cited):
                if step.get("content"):
                    st.text(step["content"][:4000])
                for call in step.get("tool_calls") or []:
                    st.code(json.dumps(call, indent=2, ensure_ascii=False)[:2000], language="json")
        if item.output:
            st.markdown(f"**Output**: {prose(item.output)}")


if __name__ == "__main__":
    render()
