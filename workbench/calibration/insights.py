"""Read models for the lead pages: disagreements, item evidence, and agreement run after run."""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbench import stats
from workbench.store import Store
from workbench.core.workspace import Workspace
from workbench.core.errors import NotFound
from workbench.core.hashing import sha256_hex
from workbench.calibration import calibrate as calibration
from workbench.calibration.gate import drift_problems
from workbench.calibration.report import Drift
from workbench.calibration.calibrate import Options, judge_data, judge_run
from workbench.calibration.rubric_versions import get_rubric, rubric_versions
from workbench.core.consensus import consensus_label
from workbench.calibration.golden_sets import consensus, item_pk

# Bump when the timeline's rows change shape, so timelines cached in the old shape are not served.
TIMELINE_REVISION = 1


def disagreements(store: Store, golden_set: str, rubric: str, judge: str, *, run: str | None = None) -> pd.DataFrame:
    """Every item where the judge (repeat 0 of the run) and the consensus differ, largest gap first."""
    data = judge_data(store, golden_set, rubric, judge, run)
    gs = data.scope.golden_set
    cons = consensus(store, golden_set, data.rubric.name, gs=gs).resolved
    index = {r["item_id"]: r for r in store.item_index(gs.id)}
    frame = data.judgments
    sel = frame[(frame["run_id"] == data.run["id"]) & (frame["repeat"] == 0)]
    rows = []
    for r in sel.itertuples():
        c = cons.get(r.item_id)
        if c is None or r.score is None or pd.isna(r.score) or int(r.score) == c:
            continue
        rows.append({"item_id": r.item_id, "category": index[r.item_id]["category"], "consensus": c,
                     "judge": int(r.score), "gap": int(r.score) - c, "abs_gap": abs(int(r.score) - c),
                     "producer_family": index[r.item_id]["producer_family"]})
    df = pd.DataFrame(rows, columns=["item_id", "category", "consensus", "judge", "gap", "abs_gap",
                                     "producer_family"])
    return df.sort_values(["abs_gap", "category", "item_id"], ascending=[False, True, True], ignore_index=True)


def item_evidence(store: Store, golden_set: str, rubric: str, judge: str, item_id: str, *,
                  run: str | None = None) -> dict[str, Any]:
    """For a lead: the item, each human label with rationale, the adjudication, and the judge's verdicts."""
    rv, _, _, _, chosen = judge_run(store, golden_set, rubric, judge, run)
    gs = store.golden_set(golden_set)
    item = store.item(gs.id, item_id)
    pk = item_pk(store, gs, item_id)
    labels = store.item_labels(pk, rv.name)
    adjudication = store.item_adjudication(pk, rv.name)
    return {"item": item, "labels": labels, "adjudication": adjudication,
            "consensus": consensus_label([l["score"] for l in labels], adjudication and adjudication["score"]),
            "judgments": store.item_judgments(pk, chosen["id"])}


def drift_timeline(store: Store, golden_set: str, rubric: str, judge: str, options: Options = Options(), *,
                   workspace: Workspace | None = None, use_cache: bool = True) -> list[dict]:
    """Agreement of each run with its interval, its model versions, and whether it moved from the run before.

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
    for rv in rubric_versions(store, rubric):
        if list(rv.rubric.scale.values) != scale:
            continue
        try:
            row = store.judge_row(rv.id, judge)
        except NotFound:
            continue
        runs += [(rv.version, r, row["pk"]) for r in store.runs(gs.id, row["pk"]) if r["n_judgments"]]
    if not runs:
        judge_run(store, golden_set, rubric, judge)  # raises the NotFound that says how to get judgments
    runs.sort(key=lambda t: t[1]["id"])
    several_versions = len({v for v, _, _ in runs}) > 1
    cons = consensus(store, golden_set, latest.name, gs=gs).resolved
    index = pd.DataFrame(store.item_index(gs.id)).set_index("item_id")
    frames: dict[int, pd.DataFrame] = {}
    out, previous = [], None
    for version, run, judge_pk in runs:
        if judge_pk not in frames:
            frames[judge_pk] = pd.DataFrame(store.judgment_columns(gs.id, judge_pk))
        frame = frames[judge_pk]
        sel = frame[(frame["run_id"] == run["id"]) & (frame["repeat"] == 0)].dropna(subset=["score"])
        scores = sel.set_index("item_id")["score"].astype(int)
        ids = [i for i in index.index if i in cons and i in scores.index]
        rep = stats.agreement_with_intervals([cons[i] for i in ids], [scores[i] for i in ids],
                                             index.loc[ids, "task_id"].to_numpy(), scale=scale, pass_threshold=thr,
                                             resamples=options.resamples, seed=options.seed)
        a = rep["metrics"]["krippendorff_alpha_ordinal"]
        row = {"run": f"v{version} {run['name']}" if several_versions else run["name"], "rubric_version": version,
               "started_at": run["started_at"], "n_items": rep["n_items"], "alpha": a["value"],
               "low": a["ci_low"], "high": a["ci_high"],
               "model_version": ", ".join(sorted(sel["model_version"].dropna().unique())) or "unknown",
               "significant": False, "stuart_maxwell_p": None, "alpha_change": None, "drift": None}
        if previous is not None:
            base_run, base_frame = previous
            # the same computation and the same rule as the calibration report's drift and the gate's check
            d = calibration.drift_between(base_frame, base_run, run, cons, index, scale=scale, pass_threshold=thr,
                                          options=options, candidate=frame)
            if d is not None:
                problems = drift_problems(Drift.from_json(stats.jsonable(d)), policy)
                row.update(stuart_maxwell_p=d["stuart_maxwell"]["p_value"],
                           alpha_change=d["deltas"]["krippendorff_alpha_ordinal"]["value"],
                           significant=bool(problems), drift="; ".join(problems) or None)
        out.append(stats.jsonable(row))
        previous = (run, frame)
    store.save_report(key, gs.id, latest.id, None, "drift_timeline", out)
    return out
