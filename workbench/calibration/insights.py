"""Read models for the lead pages: disagreements, item evidence, and agreement run after run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import pandas as pd

from workbench import stats
from workbench.store import Store
from workbench.core.workspace import Workspace
from workbench.core.errors import NotFound
from workbench.core.hashing import sha256_hex
from workbench.calibration import calibrate as calibration
from workbench.calibration.gate import drift_problems
from workbench.calibration.report import Agreement, Drift
from workbench.calibration.calibrate import Options, judge_data, judge_run
from workbench.calibration.rubric_versions import get_rubric, judge_row, rubric_versions
from workbench.core.consensus import consensus_label
from workbench.calibration.golden_sets import (ItemAdjudication, ItemLabel, RunRow, consensus, item_index, item_pk,
                                               runs_of)

# Bump when the timeline's rows change shape, so timelines cached in the old shape are not served.
TIMELINE_REVISION = 1


def disagreements(store: Store, golden_set: str, rubric: str, judge: str, *, run: str | None = None) -> pd.DataFrame:
    """Every item where the judge (repeat 0 of the run) and the consensus differ, largest gap first."""
    data = judge_data(store, golden_set, rubric, judge, run)
    gs = data.scope.golden_set
    cons = consensus(store, golden_set, data.rubric.name, gs=gs).resolved
    index = {r.item_id: r for r in item_index(store, gs.id)}
    frame = data.judgments
    sel = frame[(frame["run_id"] == data.run["id"]) & (frame["repeat"] == 0)]
    rows = []
    for r in sel.itertuples():
        c = cons.get(r.item_id)
        if c is None or r.score is None or pd.isna(r.score) or int(r.score) == c:
            continue
        item = index[r.item_id]
        rows.append({"item_id": r.item_id, "category": item.category, "consensus": c,
                     "judge": int(r.score), "gap": int(r.score) - c, "abs_gap": abs(int(r.score) - c),
                     "producer_family": item.producer_family})
    df = pd.DataFrame(rows, columns=["item_id", "category", "consensus", "judge", "gap", "abs_gap",
                                     "producer_family"])
    return df.sort_values(["abs_gap", "category", "item_id"], ascending=[False, True, True], ignore_index=True)


def item_evidence(store: Store, golden_set: str, rubric: str, judge: str, item_id: str, *,
                  run: str | None = None) -> dict[str, Any]:
    """For a lead: the item, each human label (:class:`ItemLabel`) with rationale, the adjudication
    (:class:`ItemAdjudication` or None), the consensus, and the judge's verdicts (rows of ``Store.item_judgments``)."""
    rv, _, _, _, chosen = judge_run(store, golden_set, rubric, judge, run)
    gs = store.golden_set(golden_set)
    item = store.item(gs.id, item_id)
    pk = item_pk(store, gs, item_id)
    labels = [ItemLabel(**r) for r in store.item_labels(pk, rv.name)]
    row = store.item_adjudication(pk, rv.name)
    adjudication = ItemAdjudication(**row) if row else None
    return {"item": item, "labels": labels, "adjudication": adjudication,
            "consensus": consensus_label([l.score for l in labels], adjudication.score if adjudication else None),
            "judgments": store.item_judgments(pk, chosen["id"])}


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """A run on the drift timeline: agreement with its interval and model versions and, from the second run on,
    whether it moved from the run before by the gate's drift rule (``drift``: the gate's reasons)."""

    run: str
    rubric_version: int
    started_at: str | None
    n_items: int
    alpha: float | None
    low: float | None
    high: float | None
    model_version: str
    significant: bool = False
    stuart_maxwell_p: float | None = None
    alpha_change: float | None = None
    drift: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TimelineRow:
        return cls(**d)


def drift_timeline(store: Store, golden_set: str, rubric: str, judge: str, options: Options = Options(), *,
                   workspace: Workspace | None = None, use_cache: bool = True) -> list[dict]:
    """Agreement of each run with its interval, its model versions, and whether it moved from the run before:
    each a :class:`TimelineRow`'s JSON (the shape the report cache holds).

    Runs of the same judge under every version of the rubric are included, oldest first, so a changed rubric
    shows up on the timeline like a changed model (versions whose scale differs are left out: their scores do
    not compare). Kept in the report cache under the store's data version, like a calibration report: the Drift
    page opens without recomputing while no label, judgment or rubric changes.
    """
    gs = store.golden_set(golden_set)
    latest = get_rubric(store, rubric)
    scale, thr = list(latest.rubric.scale.values), latest.rubric.pass_threshold
    policy = calibration.policy_for(latest, workspace)
    key = sha256_hex({"drift_timeline": TIMELINE_REVISION, "data_version": list(store.data_version()),
                      "golden_set": gs.id, "rubric": latest.hash, "judge": judge, "options": options.to_dict(),
                      "policy": policy.to_dict(), "methods": calibration.INTERVAL_METHODS})
    if use_cache and (cached := store.report(key)) is not None:
        return cached
    runs: list[tuple[int, dict, int]] = []  # (rubric version, run, judge pk)
    runs: list[tuple[int, RunRow]] = []  # (rubric version, run)
    for rv in rubric_versions(store, rubric):
        if list(rv.rubric.scale.values) != scale:
            continue
        try:
            judge_pk = judge_row(store, rv.id, judge).pk
        except NotFound:
            continue
        runs += [(rv.version, r) for r in runs_of(store, gs.id, judge_pk) if r.n_judgments]
    if not runs:
        judge_run(store, golden_set, rubric, judge)  # raises the NotFound that says how to get judgments
    runs.sort(key=lambda t: t[1].id)
    several_versions = len({v for v, _ in runs}) > 1
    cons = consensus(store, golden_set, latest.name, gs=gs).resolved
    index = pd.DataFrame(store.item_index(gs.id)).set_index("item_id")
    frames: dict[int, pd.DataFrame] = {}
    out, previous = [], None
    for version, run in runs:
        if run.judge_pk not in frames:
            frames[run.judge_pk] = pd.DataFrame(store.judgment_columns(gs.id, run.judge_pk))
        frame = frames[run.judge_pk]
        sel = frame[(frame["run_id"] == run.id) & (frame["repeat"] == 0)].dropna(subset=["score"])
        scores = sel.set_index("item_id")["score"].astype(int)
        ids = [i for i in index.index if i in cons and i in scores.index]
        agreement = Agreement.from_json(stats.agreement_with_intervals(
            [cons[i] for i in ids], [scores[i] for i in ids], index.loc[ids, "task_id"].to_numpy(), scale=scale,
            pass_threshold=thr, resamples=options.resamples, seed=options.seed))
        a = agreement.metric("krippendorff_alpha_ordinal")
        row = TimelineRow(f"v{version} {run.name}" if several_versions else run.name, version, run.started_at,
                          agreement.n_items, a.value, a.ci_low, a.ci_high,
                          ", ".join(sorted(sel["model_version"].dropna().unique())) or "unknown")
        if previous is not None:
            base_run, base_frame = previous
            # the same computation and the same rule as the calibration report's drift and the gate's check
            d = calibration.drift_between(base_frame, asdict(base_run), asdict(run), cons, index, scale=scale,
                                          pass_threshold=thr, options=options, candidate=frame)
            if d is not None:
                drift = Drift.from_json(stats.jsonable(d))
                problems = drift_problems(drift, policy)
                row = replace(row, stuart_maxwell_p=drift.stuart_maxwell.p_value,
                              alpha_change=drift.delta("krippendorff_alpha_ordinal").value,
                              significant=bool(problems), drift="; ".join(problems) or None)
        out.append(stats.jsonable(row.to_json()))
        previous = (run, frame)
    store.save_report(key, gs.id, latest.id, None, "drift_timeline", out)
    return out
