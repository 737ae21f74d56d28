"""Shared pieces of the lead pages: pickers and cached calls of the calibration services.

Results are cached by the database's data version (a cheap fingerprint of
labels, adjudications and judgments), so a page re-renders from memory until
the evidence changes.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import streamlit as st

from workbench.calibration.gate import PASSED, UNDECIDED
from workbench.core.errors import NotFound, WorkbenchError
from workbench.calibration.presentation import METRIC_WORDS, compare_rows, unavailable_sentence, use_sentence
from workbench.calibration.report import CalibrationReport, Comparison
from workbench.calibration import calibrate as calibration, insights
from workbench.features.judging import service as judging
from workbench.calibration.golden_sets import list_golden_sets
from workbench.calibration.versions import Context
from workbench.calibration.rubric_versions import get_rubric, list_rubrics
from workbench.features.lead.curve import SelectiveCurve, selective_curve
from workbench.features.people.report import RatersReport, raters_report
from workbench.features.selective.service import policy_guarantee
from workbench.ui.components import code_span, plain, status_mark
from workbench.ui.state import db_path, store, workspace


def _version() -> tuple:
    """What the cached results depend on: the data, and the gate policy file (its verdicts)."""
    policy = calibration.policy_path()
    return store().data_version() + ((policy.stat().st_mtime_ns if policy.exists() else 0),)


@st.cache_data(show_spinner="Computing the calibration report…", max_entries=64)
def _calibrate(db: str, version: tuple, golden_set: str, rubric: str, judge: str,
               run: str | None) -> CalibrationReport:
    rep = calibration.calibrate(store(), golden_set, rubric, judge, calibration.Options(run=run))
    return policy_guarantee(Context.of(store(), golden_set, rubric, run))(rep)  # a policy's selective check, as the CLI's


@st.cache_data(show_spinner="Comparing judges…", max_entries=16)
def _compare(db: str, version: tuple, golden_set: str, rubric: str) -> Comparison:
    return calibration.compare(store(), golden_set, rubric, judged=policy_guarantee(Context.of(store(), golden_set, rubric)))


@st.cache_data(show_spinner="Computing agreement per run…", max_entries=32)
def _drift(db: str, version: tuple, golden_set: str, rubric: str, judge: str) -> list[dict]:
    return insights.drift_timeline(store(), golden_set, rubric, judge)


@st.cache_data(max_entries=32)
def _disagreements(db: str, version: tuple, golden_set: str, rubric: str, judge: str, run: str | None):
    return insights.disagreements(store(), golden_set, rubric, judge, run=run)


@st.cache_data(max_entries=32)
def _run_counts(db: str, version: tuple, golden_set: str, rubric: str) -> dict[str, int]:
    counts = {}
    for judge in calibration.judges_of(store(), golden_set, rubric):
        try:
            counts[judge] = sum(1 for r in judging.run_status(store(), golden_set, rubric, judge)["runs"]
                                if r["judgments"])
        except NotFound:  # declared in the rubric, never run or imported
            counts[judge] = 0
    return counts


def run_counts(golden_set: str, rubric: str) -> dict[str, int]:
    """Runs with judgments of each judge of the rubric (its newest version), in the rubric's order."""
    return _run_counts(db_path(), _version(), golden_set, rubric)


def report(golden_set: str, rubric: str, judge: str, run: str | None = None) -> CalibrationReport:
    return _calibrate(db_path(), _version(), golden_set, rubric, judge, run)


@st.cache_data(show_spinner="Measuring each reviewer…", max_entries=16)
def _raters(db: str, version: tuple, golden_set: str, rubric: str) -> RatersReport:
    return raters_report(store(), golden_set, rubric, workspace=workspace())


def raters(golden_set: str, rubric: str) -> RatersReport:
    """The raters report (``workbench rater report``) of the golden set under the rubric, cached by data version."""
    return _raters(db_path(), _version(), golden_set, rubric)


def comparison(golden_set: str, rubric: str) -> Comparison:
    return _compare(db_path(), _version(), golden_set, rubric)


def timeline(golden_set: str, rubric: str, judge: str) -> list[dict]:
    return _drift(db_path(), _version(), golden_set, rubric, judge)


def disagreement_table(golden_set: str, rubric: str, judge: str, run: str | None = None):
    return _disagreements(db_path(), _version(), golden_set, rubric, judge, run)


def pick_golden_set_rubric(key: str) -> tuple[str | None, str | None]:
    sets = [g["name"] for g in list_golden_sets(store())]
    rubrics = [r["name"] for r in list_rubrics(store())]
    if not sets or not rubrics:
        st.info("No golden set or rubric yet: run `workbench demo` or import them on the Import page.")
        return None, None
    a, b = st.columns(2)
    gs = a.selectbox("Golden set", sets, key=f"{key}-gs")
    rubric = b.selectbox("Rubric", rubrics, key=f"{key}-rubric")
    return gs, rubric


def pick_judge(rubric: str, key: str, container: Any = st, *, default: str | None = None) -> str | None:
    judges = [j.id for j in get_rubric(store(), rubric).rubric.judges]
    if not judges:
        st.info(f"Rubric {code_span(rubric)} declares no judges.")
        return None
    index = judges.index(default) if default in judges else 0
    return container.selectbox("Judge", judges, index=index, key=f"{key}-judge")


NUMBER, SIGNED, MONEY = "%.3f", "%+.3f", "$%.2f"  # column formats of the lead pages' tables
EMPTY = "–"  # what an empty cell shows (never "None")
RIGHT = "right"  # a text column aligned like numbers


def show_table(df, formats: dict[str, str] | None = None, *, container: Any = st, **kwargs: Any):
    """A dataframe with its number columns formatted, empty cells as "–", and no index.

    Text columns (p-values from ``gate.fmt_p``, notes) are shown as they are; ``formats`` maps a column to a
    printf format ("%.3f", "%+.2f", "$%.2f", "%d"), or to RIGHT for text that reads as a number (a p-value).
    """
    config = {name: st.column_config.TextColumn(alignment="right") if f == RIGHT
              else st.column_config.NumberColumn(format=f) for name, f in (formats or {}).items()}
    config.update(kwargs.pop("column_config", {}))
    return container.dataframe(df, hide_index=True, column_config=config, placeholder=EMPTY, **kwargs)


def show_chart(chart, container=st) -> None:
    """An Altair chart (built on this run: prefer the cached :func:`report_chart` and friends)."""
    show_spec(chart.to_dict(validate=False), container)


def show_spec(spec: dict, container=st) -> None:
    """A Vega-Lite spec at its own height (Streamlit would otherwise squeeze a layered chart)."""
    height = spec.get("height")
    # the title sits above the plot: leave room for it and the axis labels
    container.vega_lite_chart(spec, width="stretch",
                              height=int(height) + 70 if isinstance(height, (int, float)) else "content")


# Charts are cached as Vega-Lite specs with the results they draw: building an Altair chart and checking it
# against the Vega-Lite schema costs about 0.1 s a chart, more than the rest of a page's run.
REPORT_CHARTS = ("metric_intervals", "confusion_heatmap", "per_category", "human_ceiling", "self_preference_forest")


#: What a chart calls a metric instead of its report name (the card keeps the names; the pages use words).
CHART_WORDS = {**METRIC_WORDS, "cohen_kappa_linear": "Cohen's kappa (linear)",
               "cohen_kappa_quadratic": "Cohen's kappa (quadratic)", "tpr": "passes caught (TPR)",
               "tnr": "fails caught (TNR)", "mean_signed_error": "lean (mean signed error)"}
WORDED_CHARTS = ("metric_intervals",)  # charts whose strings are metric names (data, sort order, axis titles)


def plain_names(spec: Any) -> Any:
    """A Vega-Lite spec with every string that is exactly a metric's report name replaced by its words."""
    if isinstance(spec, dict):
        return {k: plain_names(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [plain_names(v) for v in spec]
    return CHART_WORDS.get(spec, spec) if isinstance(spec, str) else spec


# report names that hold an underscore, longest first, as whole words (so 'tpr' in prose is left alone)
_NAME = re.compile(r"\b(" + "|".join(sorted((k for k in CHART_WORDS if "_" in k), key=len, reverse=True)) + r")\b")


def in_words(text: str) -> str:
    """A gate sentence with each metric's report name ('krippendorff_alpha_ordinal') said in words; the rest as is."""
    return _NAME.sub(lambda m: CHART_WORDS[m.group(1)], text)


@st.cache_data(max_entries=256, show_spinner=False)
def _report_chart(db: str, version: tuple, golden_set: str, rubric: str, judge: str, run: str | None, kind: str,
                  threshold: float | None) -> dict:
    from workbench.features.export import charts  # Altair costs half a second to import: only pages that draw pay for it

    rep = _calibrate(db, version, golden_set, rubric, judge, run)
    build = getattr(charts, kind)
    chart = build(rep) if threshold is None else build(rep, threshold=threshold)
    spec = chart.to_dict(validate=False)
    return plain_names(spec) if kind in WORDED_CHARTS else spec


def report_chart(kind: str, golden_set: str, rubric: str, judge: str, *, threshold: float | None = None,
                 run: str | None = None, container: Any = st) -> None:
    """One of the calibration report's charts (``charts.<kind>``), from the cache while the evidence is unchanged."""
    if kind not in REPORT_CHARTS:
        raise ValueError(f"unknown report chart {kind!r}")
    show_spec(_report_chart(db_path(), _version(), golden_set, rubric, judge, run, kind, threshold), container)


@st.cache_data(max_entries=32, show_spinner=False)
def _drift_chart(db: str, version: tuple, golden_set: str, rubric: str, judge: str) -> dict:
    from workbench.features.export import charts

    rows = _drift(db, version, golden_set, rubric, judge)
    return plain_names(charts.drift_timeline(rows).properties(title=f"{judge}: agreement per run").to_dict(validate=False))


def drift_chart(golden_set: str, rubric: str, judge: str) -> None:
    show_spec(_drift_chart(db_path(), _version(), golden_set, rubric, judge))


@st.cache_data(max_entries=16, show_spinner=False)
def _cost_chart(db: str, version: tuple, golden_set: str, rubric: str) -> dict | None:
    result = _compare(db, version, golden_set, rubric)
    points = [{"judge": r["judge"], "alpha": r["alpha"], "cost per 100 items (USD)": r["cost_per_100_usd"],
               "verdict": "calibrated" if r["calibrated"] else "not calibrated"} for r in compare_rows(result)]
    if all(p["cost per 100 items (USD)"] is None for p in points):
        return None
    from workbench.features.export import charts

    return charts.cost_vs_agreement(points).to_dict(validate=False)


def cost_chart(golden_set: str, rubric: str) -> bool:
    """Cost against agreement for the judges whose cost is known; False when no judge has a known cost."""
    spec = _cost_chart(db_path(), _version(), golden_set, rubric)
    if spec is None:
        return False
    show_spec(spec)
    return True


def page_header(title: str, key: str, roles: tuple[str, ...], *, with_judge: bool = True,
                default_judge: Callable[[str, str], str | None] | None = None) -> tuple[str, str, str | None] | None:
    """The role check, title and pickers every lead page starts with; None when there is nothing to show.

    ``default_judge(golden_set, rubric)`` chooses the judge a page opens on (else the rubric's first).
    """
    from workbench.ui import auth

    auth.require(roles)
    st.title(title)
    golden_set, rubric = pick_golden_set_rubric(key)
    if not golden_set:
        return None
    default = default_judge(golden_set, rubric) if with_judge and default_judge else None
    judge = pick_judge(rubric, key, default=default) if with_judge else None
    if with_judge and not judge:
        return None
    return golden_set, rubric, judge


@st.cache_data(max_entries=32, show_spinner="Reading each judge's verdict…")
def _sentences(db: str, version: tuple, golden_set: str, rubric: str) -> list[tuple[str, str, str]]:
    out = []
    for spec in get_rubric(store(), rubric).rubric.judges:
        try:
            rep = _calibrate(db, version, golden_set, rubric, spec.id, None)
        except WorkbenchError as e:  # never run, or nothing to compare with: not decided, and why
            out.append((spec.id, UNDECIDED, unavailable_sentence(spec.id, rubric, str(e))))
            continue
        out.append((spec.id, rep.verdict.state if rep.verdict else UNDECIDED, use_sentence(rep)))
    return out


def verdict_sentences(golden_set: str, rubric: str, judges: list[str] | None = None) -> None:
    """The verdict first: 'Use J to grade R: yes.' (or no, with the reason; or not decided yet, with the labels it
    needs) for each judge of the rubric (or only ``judges``), the gate's words; a page shows it before anything."""
    rows = [r for r in _sentences(db_path(), _version(), golden_set, rubric) if judges is None or r[0] in judges]
    colour = {PASSED: "green", UNDECIDED: "orange"}
    st.markdown("\n".join(f"- :{colour.get(state, 'red')}[**{plain(sentence)}**]" for _, state, sentence in rows))


def verdict_box(rep: CalibrationReport) -> None:
    """The judge's verdict sentence in the gate's colour, what it rests on, then every check with its word."""
    v = rep.verdict
    said = f"**{plain(use_sentence(rep))}**  \n"
    if v.state == PASSED:
        st.success(f"{said}Calibrated: {plain(in_words(v.explanation()))}")
    elif v.state == UNDECIDED:
        st.warning(f"{said}Not decided yet: {plain(in_words(v.explanation()))} Export waits for these checks, as it would "
                   "for a failure.")
    else:
        st.error(f"{said}Not calibrated: {plain(in_words(v.explanation()))}")
    # one list, not one element a check; the messages name categories and model versions, which come from items
    # and provider replies
    with st.expander("The gate's checks, one by one", expanded=v.state != PASSED):
        st.markdown("\n".join(f"- {status_mark(c.status)} — **{c.name}**: {plain(in_words(c.message))}"
                               for c in v.checks))


#: Confidence target and risk the Calibration page starts from when the rubric's policy names none.
DEFAULT_TARGET, DEFAULT_RISK = 0.9, 0.1


@st.cache_data(max_entries=32, show_spinner="Choosing the confidence threshold…")
def _curve(db: str, version: tuple, golden_set: str, rubric: str, judge: str, target: float,
           risk: float) -> SelectiveCurve:
    return selective_curve(store(), golden_set, rubric, judge, target=target, risk=risk)


def curve(golden_set: str, rubric: str, judge: str, target: float, risk: float) -> SelectiveCurve:
    """The judge's coverage-agreement curve and its guaranteed threshold, from the cache while the data is unchanged."""
    return _curve(db_path(), _version(), golden_set, rubric, judge, target, risk)
