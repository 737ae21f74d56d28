"""Calibrating a judge against the humans: gather the data, call stats, apply the gate, cache the report.

A report is keyed by a hash of everything it is computed from (labels,
adjudications, judgments, item clusters and producers, options and policy),
so an unchanged report is read back instead of recomputed. The report is a
typed :class:`~workbench.calibration.report.CalibrationReport`; the cache holds its JSON.

Calibrating only reads: the golden-set version a report names is the one its
items and consensus have, or the number they would get when frozen (writers
such as ``export`` freeze them first).
"""

from __future__ import annotations

import gc
import hashlib
import math
import os
import sys
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from workbench.core.errors import InputError, NotFound, WorkbenchError
from workbench.calibration.gate import Policy, evaluate, load_policy
from workbench.core.hashing import sha256_hex
from workbench.core.models import GoldenSetRecord, JudgeSpec
from workbench.calibration.report import SCHEMA, CalibrationReport, Comparison, Difference, Ids
from workbench.stats.intervals import methods as interval_choices
from workbench.store import Store
from workbench.core.workspace import Workspace
from workbench.core.workspace import current as current_workspace
from workbench.calibration.golden_sets import Consensus, GoldenSetVersion, RunRow, consensus, runs_of
from workbench.calibration.snapshots import current_snapshot
from workbench.calibration.rubric_versions import JudgeRow, RubricVersion, get_rubric, judge_row

if TYPE_CHECKING:
    import pandas as pd

# numpy, pandas and the statistics are imported inside the functions that compute: a report read back from the
# cache needs none of them, and they take most of a second to import (`workbench calibrate` of a cached report).

# Bump when the report's content changes shape, so cached reports of the old shape are not reused.
REPORT_REVISION = 7
# How intervals are made is part of a report's inputs: changing a method must not serve an old report.
INTERVAL_METHODS = {"bootstrap": interval_choices.BOOTSTRAP_INTERVAL,
                    "self_preference": interval_choices.SELF_PREFERENCE_INTERVAL,
                    "proportion": interval_choices.PROPORTION_METHOD,
                    "per_category": interval_choices.CATEGORY_INTERVAL}


@dataclass(frozen=True)
class Options:
    resamples: int = 2000
    seed: int = 0
    epsilon: float = 0.2
    alt_metric: str = "accuracy"
    run: str | None = None  # default: the latest run
    target_width: float = 0.1  # noise floor: labels needed to bring the alpha interval to this width
    exclude_raters: tuple[str, ...] = ()  # raters (by name) whose labels are left out of the consensus

    def to_dict(self) -> dict[str, Any]:
        # no exclusion writes no key: the cache keys of reports from before the option stay what they were
        return {"resamples": self.resamples, "seed": self.seed, "epsilon": self.epsilon,
                "alt_metric": self.alt_metric, "run": self.run, "target_width": self.target_width,
                **({"exclude_raters": sorted(self.exclude_raters)} if self.exclude_raters else {})}


def policy_path(workspace: Workspace | None = None) -> Path:
    """The workspace's rubrics/policy.yaml (without a workspace: the one of WORKBENCH_PROJECT or the cwd)."""
    return (workspace or current_workspace()).policy_file


def policy_for(rv: RubricVersion, workspace: Workspace | None = None) -> Policy:
    return load_policy(policy_path(workspace), rv.rubric.gate)


@dataclass(frozen=True)
class Scope:
    """A golden set, rubric version, judge and run, each looked up once and then passed down, not their names.

    ``judge`` is the judge's row under the rubric version, ``history`` its runs with judgments on the golden set
    (oldest first) and ``chosen`` the one calibrated. ``judge_row``, ``runs`` and ``run`` are the same rows as the
    store's dicts, for callers that still read those.
    """

    golden_set: GoldenSetRecord
    rubric: RubricVersion
    spec: JudgeSpec
    judge: JudgeRow
    history: list[RunRow]
    chosen: RunRow

    def __post_init__(self) -> None:
        if isinstance(self.judge, dict):  # built from the store's dicts (``versions.resolve_ref``): parsed once here
            object.__setattr__(self, "judge", JudgeRow(**self.judge))
            object.__setattr__(self, "history", [RunRow(**r) for r in self.history])
            object.__setattr__(self, "chosen", RunRow(**self.chosen))

    @property
    def judge_row(self) -> dict:
        return asdict(self.judge)

    @property
    def runs(self) -> list[dict]:
        return [asdict(r) for r in self.history]

    @property
    def run(self) -> dict:
        return asdict(self.chosen)


@dataclass
class JudgeData:
    """Everything the statistics need about one judge on one golden set: its scope and its judgments."""

    scope: Scope
    judgments: pd.DataFrame  # item_id, run_id, repeat, score, model_version, cost_usd, latency_ms, tokens

    @property
    def rubric(self) -> RubricVersion:
        return self.scope.rubric

    @property
    def spec(self) -> JudgeSpec:
        return self.scope.spec

    @property
    def judge(self) -> JudgeRow:
        return self.scope.judge

    @property
    def chosen(self) -> RunRow:
        return self.scope.chosen

    @property
    def judge_row(self) -> dict:
        return self.scope.judge_row

    @property
    def runs(self) -> list[dict]:
        return self.scope.runs

    @property
    def run(self) -> dict:
        return self.scope.run


def judge_run(store: Store, golden_set: str, rubric: str, judge: str,
              run: str | None = None) -> tuple[RubricVersion, JudgeSpec, dict, list[dict], dict]:
    """(rubric version, spec, judge row, runs, chosen run) as the store's dicts: see :func:`resolve`."""
    s = resolve(store, golden_set, rubric, judge, run)
    return s.rubric, s.spec, s.judge_row, s.runs, s.run


def resolve(store: Store, golden_set: str, rubric: str, judge: str, run: str | None = None, *,
            gs: GoldenSetRecord | None = None) -> Scope:
    """The judge on the newest rubric version that has runs of it (else the newest), and the run (default: latest).

    ``gs`` is the golden set's row when the caller has looked it up already (``compare``, for each judge).
    """
    gs = gs or store.golden_set(golden_set)
    rv = get_rubric(store, rubric)
    row = runs = None
    for version in range(rv.version, 0, -1):
        cand = rv if version == rv.version else get_rubric(store, rubric, version)
        try:
            cand_row = judge_row(store, cand.id, judge)
        except NotFound:
            continue
        cand_runs = [r for r in runs_of(store, gs.id, cand_row.pk) if r.n_judgments]
        if cand_runs or version == 1:
            rv, row, runs = cand, cand_row, cand_runs
            break
    spec = rv.rubric.judge(judge)
    if row is None:
        row = judge_row(store, rv.id, judge)
        runs = [r for r in runs_of(store, gs.id, row.pk) if r.n_judgments]
    if not runs:
        raise NotFound(f"judge '{judge}' has no judgments on golden set '{golden_set}'; run it with 'workbench judge "
                       f"run --golden-set {golden_set} --rubric {rubric} --judge {judge}' or import its judgments")
    if run is None:
        chosen = runs[-1]
    else:
        chosen = next((r for r in runs if r.name == run), None)
        if chosen is None:
            raise NotFound(f"judge '{judge}' has no run '{run}' (runs: {', '.join(r.name for r in runs)})")
    return Scope(gs, rv, spec, row, runs, chosen)


def judge_data(store: Store, golden_set: str, rubric: str, judge: str, run: str | None = None, *,
               scope: Scope | None = None) -> JudgeData:
    """The judge's runs on the golden set with all their judgments as a frame (``scope``: already resolved)."""
    import pandas as pd

    scope = scope or resolve(store, golden_set, rubric, judge, run)
    frame = pd.DataFrame(store.judgment_columns(scope.golden_set.id, scope.judge.pk))
    return JudgeData(scope, frame)


class Reads(Protocol):
    """What a command has read once and keeps (``versions.Context``): calibrating takes these from it instead of
    reading them from the store again."""

    def consensus(self, rubric: str) -> Consensus: ...

    def judge_data(self, scope: Scope) -> JudgeData: ...

    def item_index(self) -> list[dict]: ...

    def snapshot(self) -> tuple[str, dict]: ...


def _check_raters_present(policy: Policy, cons: Consensus, rv: RubricVersion, workspace: Workspace | None,
                          registered: list[str]) -> None:
    """Refuse a policy that sets more raters per item than there are raters (who labeled this golden set, or are
    registered): its evidence check could never pass, and the lead should hear why, not 'not decided yet' forever."""
    if policy.min_raters_per_item == Policy().min_raters_per_item:  # the default waits for a second reviewer
        return
    present = len({rater for by_rater in cons.human.values() for rater in by_rater} | set(registered))
    if present and policy.min_raters_per_item > present:
        in_rubric = "min_raters_per_item" in (rv.rubric.gate or {})
        raise InputError(f"min_raters_per_item is {policy.min_raters_per_item} but there {'are' if present != 1 else 'is'}"
                         f" only {present} rater{'s' * (present != 1)} (registered, or labeling this golden set for "
                         f"rubric '{rv.name}')",
                         file=f"rubric {rv.name}'s gate:" if in_rubric else str(policy_path(workspace)),
                         field="min_raters_per_item",
                         fix=f"set min_raters_per_item to at most {present}, or have more reviewers label the items")


def _family_in_pool(index: pd.DataFrame, judged: set, family: str | None) -> bool:
    """Whether the judge scored items of its own family and of others: then labels can measure self-preference,
    even where none of them is labeled yet."""
    if not family:
        return False
    own = family.casefold()
    fams = {str(f or "").casefold() == own
            for i, f in zip(index.index.tolist(), index["producer_family"].tolist()) if i in judged}
    return fams == {True, False}


def _excluded(cons: Consensus, raters: tuple[str, ...], golden_set: str, rubric: str) -> dict[str, int]:
    """{rater: labels left out} for ``--exclude-rater``; a rater without labels here is refused by sentence (a typo
    must not pass for an exclusion)."""
    counts = cons.label_counts()
    for rater in raters:
        if rater not in counts:
            raise InputError(f"rater '{rater}' has no labels of golden set '{golden_set}' under rubric '{rubric}', so "
                             "there is nothing to leave out",
                             fix=f"name one of: {', '.join(sorted(counts)) or 'no rater has labels yet'}")
    return {r: counts[r] for r in sorted(set(raters))}


def _scores(frame: pd.DataFrame, run_id: int, repeat: int | None = 0) -> pd.Series:
    sel = frame[frame["run_id"] == run_id]
    if repeat is not None:
        sel = sel[sel["repeat"] == repeat]
    return sel.set_index("item_id")["score"]


def calibrate(store: Store, golden_set: str, rubric: str, judge: str, options: Options = Options(), *,
              use_cache: bool = True, data: JudgeData | None = None, scope: Scope | None = None,
              workspace: Workspace | None = None, labels_of: str | None = None,
              reads: Reads | None = None) -> CalibrationReport:
    """The calibration report of DESIGN section 8 (``calibrate --json`` is its ``to_json()``), with the verdict.

    ``data`` is the judge's data when the caller has already loaded it (``compare`` needs it too), ``scope`` the
    names already resolved, ``reads`` the command's context (``versions.Context``: its consensus, judge data, item
    index and snapshot); either way each is read once.
    ``workspace`` holds the gate policy (rubrics/policy.yaml); ``labels_of`` names the rubric whose human labels
    the judge is compared with (default its own: a refinement candidate is compared with its base rubric's).
    """
    scope = data.scope if data is not None else scope or resolve(store, golden_set, rubric, judge, options.run)
    rv, gs = scope.rubric, scope.golden_set
    policy = policy_for(rv, workspace)
    from workbench.store.active_queue import cache_key as active_design_key  # SQL only: the cached path stays light
    # First a cheap key from the store's data version, checked before anything is loaded; then the key from the
    # data itself, which survives changes elsewhere in the database (another golden set's labels).
    quick_key = sha256_hex({"quick": REPORT_REVISION, "data_version": list(store.data_version()),
                            "golden_set": gs.id, "rubric": rv.hash, "judge": scope.judge.config_hash,
                            "run": scope.chosen.id, "options": options.to_dict(), "policy": policy.to_dict(),
                            **({"labels_of": labels_of} if labels_of else {}),
                            **active_design_key(store, gs.id),  # {} unless the set has an active design
                            "methods": INTERVAL_METHODS})
    if use_cache and (cached := store.report(quick_key)) is not None:
        return _current(store, CalibrationReport.from_json(cached), scope)
    # A process that has not loaded numpy yet is a command line's (the UI and the tests load it before): it loads
    # numpy and pandas for this report and exits soon after
    fresh = "numpy" not in sys.modules
    with _cycle_collection_paused(freeze=fresh), _one_blas_thread(fresh):
        return _computed(store, golden_set, rubric, judge, options, scope, policy, quick_key, use_cache=use_cache,
                         data=data, workspace=workspace, labels_of=labels_of, reads=reads)


@contextmanager
def _cycle_collection_paused(*, freeze: bool):
    """A context without Python's cyclic garbage collector: computing a report (with numpy and pandas imported
    for it) allocates a few hundred thousand containers, none in a cycle worth collecting, and the collector's
    passes over them were 5% of the command's CPU time. It runs again afterwards if it ran before.

    ``freeze`` (a command line's process) then moves every object alive into the collector's permanent
    generation (``gc.freeze``): the interpreter's exit no longer walks numpy's, pandas' and pyarrow's objects in
    its final collections, 0.06 s of each computed ``calibrate``.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()


def _one_blas_thread(fresh: bool):
    """A context in which numpy's BLAS runs on one thread: the report's matrices (resamples x clusters) are too
    small for threads to pay, and on a busy 2-core machine a second thread costs more wall time than it saves.

    A ``fresh`` process, which has not loaded numpy yet, starts OpenBLAS with one thread: an idle second thread
    spins for a while after each call, 0.08 s of CPU in one computed report. Where numpy is loaded already (the
    UI, tests), threadpoolctl limits it for the computation only.
    """
    if fresh:  # OpenBLAS reads the variable when numpy loads it, in _computed
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        return nullcontext()
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency

    return threadpool_limits(1, user_api="blas")


def _computed(store: Store, golden_set: str, rubric: str, judge: str, options: Options, scope: Scope,
              policy: Policy, quick_key: str, *, use_cache: bool, data: JudgeData | None, workspace: Workspace | None,
              labels_of: str | None, reads: Reads | None = None) -> CalibrationReport:
    """The report computed from the data (or found under the key of the data itself), saved under both keys."""
    import numpy as np
    import pandas as pd

    from workbench import stats
    from workbench.calibration import design_weights

    rv, gs = scope.rubric, scope.golden_set
    data = data or (reads.judge_data(scope) if reads else judge_data(store, golden_set, rubric, judge, options.run,
                                                                      scope=scope))
    spec = data.spec
    scale = list(rv.rubric.scale.values)
    stored = cons = (reads.consensus(labels_of or rv.name) if reads else
                     consensus(store, golden_set, labels_of or rv.name, gs=gs))
    excluded = _excluded(cons, options.exclude_raters, golden_set, labels_of or rv.name)
    if excluded:
        cons = cons.without(tuple(excluded))
    from workbench.stats.humans import labels_frame  # numpy and pandas: not on the cached path
    labels = labels_frame(cons.human)
    _check_raters_present(policy, cons, rv, workspace, [r["name"] for r in store.raters()])
    # labels from the active queue carry inclusion probabilities: then estimates are weighted (design_weights.py)
    inclusion = design_weights.item_inclusion(store, gs, rv.name)
    index_rows = reads.item_index() if reads else store.item_index(gs.id)
    index = pd.DataFrame(index_rows).set_index("item_id")
    from workbench.calibration.probes import probe_frame, probe_section  # probe runs: never calibration runs
    probes = probe_frame(store, gs.id, data.judge.pk)
    steps = store.step_marks(gs.id, labels_of or rv.name, data.chosen.id)  # failure attribution (features/steps)

    # frames enter the key as digests of their row hashes, so missing values (NaN/NA) never reach the JSON
    key = sha256_hex({
        "schema": SCHEMA, "revision": REPORT_REVISION, "adjudicated": cons.adjudicated,
        "labels": _digest(labels), "judgments": _digest(data.judgments[["item_id", "run_id", "repeat", "score"]]),
        "items": _digest(index[["task_id", "category", "producer_model", "producer_family", "content_hash"]],
                         with_index=True),
        "rubric": rv.hash, "judge": data.judge.config_hash, "run": data.chosen.id,
        "options": options.to_dict(), "policy": policy.to_dict(), "methods": INTERVAL_METHODS,
        "probes": _digest(probes[["probe", "item_id", "repeat", "score"]]),
        **({"inclusion": sorted(inclusion.items())} if inclusion else {}), **steps.key})
    if use_cache:
        cached = store.report(key)
        if cached is not None:
            store.save_report(quick_key, gs.id, rv.id, data.judge.pk, "calibration", cached)
            return _current(store, CalibrationReport.from_json(cached), scope)
    version_hash, snapshot = reads.snapshot() if reads else current_snapshot(
        store, golden_set, known={labels_of or rv.name: stored}, gs=gs, index=index_rows)
    _remember(version_hash, snapshot)
    version_id, version = golden_set_version(store, gs.id, version_hash)

    primary = _scores(data.judgments, data.chosen.id)
    unscored = int(primary.isna().sum())
    scored = primary.dropna().astype(int)
    resolved = cons.resolved
    # a set: one membership test an item, not a pandas lookup; tolist() converts the ids at once, where iterating
    # an index of (Arrow-backed) strings converts them one at a time
    judged = set(scored.index.tolist())
    ids = [i for i in index.index.tolist() if i in resolved and i in judged]
    judged_unresolved = [i for i in cons.unresolved if i in judged]
    c = np.array([resolved[i] for i in ids], dtype=int)
    j = scored.reindex(ids).to_numpy(dtype=int)
    sub = index.loc[ids] if ids else index.iloc[:0]
    clusters = sub["task_id"].to_numpy()

    agreement = stats.agreement_with_intervals(c, j, clusters, scale=scale, pass_threshold=rv.rubric.pass_threshold,
                                               resamples=options.resamples, seed=options.seed)
    # under the active design the pairwise agreements are weighted like the metrics: the design oversamples the
    # items where the judge is likely wrong, so unweighted they would understate the judge against the humans
    ceiling = stats.human_ceiling(labels, scored, scale=scale,
                                  weights={i: 1.0 / p for i, p in inclusion.items()} if inclusion else None)
    alt = stats.alternative_annotator_test(labels, scored, scale=scale, epsilon=options.epsilon,
                                           metric=options.alt_metric)
    alt_reason = alt.get("reason")
    if alt.get("winning_rate") is None:  # no rater qualifies: DESIGN reports the test as null, with why
        alt = None
    bias = stats.self_preference(c, j, scale=scale, producer_model=sub["producer_model"].to_numpy(),
                                 producer_family=sub["producer_family"].to_numpy(), judge_model=spec.model_name,
                                 judge_family=spec.family, category=sub["category"].to_numpy(), clusters=clusters,
                                 resamples=options.resamples, seed=options.seed)
    sampling = None
    if inclusion:  # the whole golden set, not the sample the active queue chose
        agreement, bias, alt, sampling = design_weights.weighted_estimates(
            ids, c, j, sub, inclusion, spec=spec, scale=scale, pass_threshold=rv.rubric.pass_threshold,
            resamples=options.resamples, seed=options.seed, labels=labels, scored=scored,
            epsilon=options.epsilon, alt_metric=options.alt_metric)
        alt_reason = alt.get("reason")
        alt = alt if alt.get("winning_rate") is not None else None
    run_frame = data.judgments[data.judgments["run_id"] == data.chosen.id]
    noise = None
    if run_frame["repeat"].nunique() >= 2:
        noise = stats.repeat_noise(run_frame[["item_id", "repeat", "score"]], scale=scale,
                                   consensus=pd.Series(resolved, dtype="Int64"))
    drift = _drift(data, resolved, index, scale, rv, options)
    n_multi = int(sum(len(cons.human.get(i, {})) >= policy.min_raters_per_item for i in ids))
    per_category = stats.per_category_agreement(c, j, sub["category"].to_numpy(), clusters, scale=scale,
                                                pass_threshold=rv.rubric.pass_threshold,
                                                resamples=options.resamples, seed=options.seed,
                                                min_category_items=policy.min_category_items)
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "golden_set": {"name": golden_set, "version": version, "version_hash": version_hash},
        "rubric": {"name": rv.name, "version": rv.version, "hash": rv.hash},
        "judge": {"id": spec.id, "model": spec.model, "family": spec.family, "mode": spec.mode,
                  "config_hash": data.judge.config_hash},
        "run": {"name": data.chosen.name, "source": data.chosen.source,
                "model_versions": sorted({v for v in run_frame["model_version"].dropna()})},
        "n_items": agreement["n_items"],
        "n_unresolved": len(judged_unresolved),
        "n_unscored": unscored,
        "n_scored": int(len(scored)),
        "bootstrap": {**agreement["bootstrap"], "intervals": agreement["intervals"]},
        "metrics": agreement["metrics"],
        "denominators": agreement["denominators"],
        "undefined_resamples": agreement["undefined_resamples"],
        "metric_reasons": agreement["reasons"],
        "confusion": agreement["confusion"],
        "human_ceiling": ceiling,
        "alt_test": alt,
        "alt_test_reason": alt_reason,
        "self_preference": {"same_model": bias["same_model"], "same_family": bias["same_family"],
                            "measurable_in_pool": _family_in_pool(index, judged, spec.family)},
        "per_category": per_category,
        "noise": noise.to_json() if noise else None,
        "drift": drift,
        "noise_floor": stats.noise_floor(agreement, target_width=options.target_width),
        "evidence": {"n_items": agreement["n_items"], "n_multi_rated": n_multi,
                     "unresolved_items": judged_unresolved, **({"excluded_raters": excluded} if excluded else {})},
        "cost": _cost(run_frame),
        "probes": probe_section(probes, scored, resolved, index, scale=scale, baseline_run=data.chosen.name,
                                resamples=options.resamples, seed=options.seed),
        "policy": policy.to_dict(),
        "computed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if sampling:
        report["sampling_design"] = sampling
    if steps.labels:
        from workbench.stats.steps import step_section
        report["steps"] = step_section(steps.labels, steps.judged, steps.step_agents, resolved=resolved,
                                       pass_threshold=rv.rubric.pass_threshold,
                                       task_of={i: t if isinstance(t, str) else i for i, t in index["task_id"].items()},
                                       within=(policy.locates_failures.within,) if policy.locates_failures else (),
                                       resamples=options.resamples, seed=options.seed)
    # the statistics return plain dicts with numpy numbers and NaN: they become the typed report here, once
    typed = CalibrationReport.from_json(stats.jsonable(report))
    typed = typed.but(verdict=evaluate(typed, policy), ids=_ids(scope, version_id))
    saved = typed.to_json()
    store.save_report(key, gs.id, rv.id, data.judge.pk, "calibration", saved)
    store.save_report(quick_key, gs.id, rv.id, data.judge.pk, "calibration", saved)
    return typed


# Snapshots this process computed, by their hash (content-addressed, so never stale): a writer that freezes the
# version a report was computed on records it without reading the labels a second time.
_SNAPSHOTS: dict[str, dict] = {}


def _remember(version_hash: str, snapshot: dict) -> None:
    _SNAPSHOTS[version_hash] = snapshot
    while len(_SNAPSHOTS) > 8:  # oldest first out: a process calibrates a few golden sets at most
        _SNAPSHOTS.pop(next(iter(_SNAPSHOTS)))


def snapshot_needed(report: CalibrationReport) -> bool:
    """Whether freezing the report's golden-set version needs its snapshot read (not frozen yet, and not computed by
    this process): a writer reads it inside its read snapshot, with the report."""
    frozen = report.ids is not None and report.ids.golden_set_version_id is not None
    return not frozen and report.golden_set.version_hash not in _SNAPSHOTS


def freeze_version(store: Store, report: CalibrationReport, scope: Scope, *,
                   snapshot: tuple[str, dict] | None = None) -> CalibrationReport:
    """Freeze the golden-set version the report was computed on (a writer's explicit step: ``export``); the report
    with that version's number and id. ``snapshot`` is the (hash, snapshot) the command read (``Context``)."""
    if report.ids is not None and report.ids.golden_set_version_id is not None:
        return report
    version_hash = report.golden_set.version_hash
    snapshot = snapshot[1] if snapshot is not None and snapshot[0] == version_hash else _SNAPSHOTS.get(version_hash)
    if snapshot is None:
        now, snapshot = current_snapshot(store, scope.golden_set.name, gs=scope.golden_set)
        if now != version_hash:
            raise WorkbenchError(f"golden set '{scope.golden_set.name}' changed while the report was read (its items or "
                           "consensus labels are not those the report was computed on); run the command again")
    frozen = GoldenSetVersion.from_row(store.insert_golden_set_version(scope.golden_set.id, version_hash, snapshot))
    return report.but(golden_set=report.golden_set.but(version=frozen.version),
                      ids=(report.ids or _ids(scope, None)).but(golden_set_version_id=frozen.id))


def golden_set_version(store: Store, golden_set_id: int, version_hash: str) -> tuple[int | None, int]:
    """(id, number) of the golden set's version with this hash; (None, the number freezing it would give) when its
    state has not been frozen. Reads only: calibrating must not write."""
    row = store.golden_set_version_by_hash(golden_set_id, version_hash)
    if row is not None:
        frozen = GoldenSetVersion.from_row(row)
        return frozen.id, frozen.version
    versions = [GoldenSetVersion.from_row(v) for v in store.golden_set_versions(golden_set_id)]
    return None, max((v.version for v in versions), default=0) + 1


def _ids(scope: Scope, golden_set_version_id: int | None) -> Ids:
    return Ids(golden_set_id=scope.golden_set.id, golden_set_version_id=golden_set_version_id,
               rubric_version_id=scope.rubric.id, judge_pk=scope.judge.pk, run_id=scope.chosen.id)


def _current(store: Store, report: CalibrationReport, scope: Scope) -> CalibrationReport:
    """A report read back from the cache, with the golden-set version its hash has now (it may have been frozen,
    or another state frozen under the number it expected, since) and the ids of the scope just resolved."""
    version_id, version = golden_set_version(store, scope.golden_set.id, report.golden_set.version_hash)
    return report.but(golden_set=report.golden_set.but(version=version), ids=_ids(scope, version_id))


def _digest(frame: pd.DataFrame, *, with_index: bool = False) -> str:
    """A fingerprint of a frame's values for the report cache key, without turning rows into Python objects.

    pandas' row hashes treat None and NaN alike, so unscored judgments and missing producers hash fine; the
    digest is stable within an installation, which is all a cache key needs (an upgrade recomputes once).
    """
    import pandas as pd

    hashes = pd.util.hash_pandas_object(frame, index=with_index).to_numpy()
    return f"{list(frame.columns)}:{len(frame)}:" + hashlib.sha256(hashes.tobytes()).hexdigest()


def _drift(data: JudgeData, resolved: dict[str, int], index: pd.DataFrame, scale: list[int], rv: RubricVersion,
           options: Options) -> dict | None:
    """Against the run just before the calibrated one, if there is one."""
    earlier = [r for r in data.scope.history if r.id < data.chosen.id]
    if not earlier:
        return None
    return drift_between(data.judgments, asdict(earlier[-1]), data.run, resolved, index, scale=scale,
                         pass_threshold=rv.rubric.pass_threshold, options=options)


def drift_between(judgments: pd.DataFrame, base_run: dict, run: dict, resolved: dict[str, int], index: pd.DataFrame,
                  *, scale: list[int], pass_threshold: int, options: Options,
                  candidate: pd.DataFrame | None = None) -> dict | None:
    """Drift from one run to another on the items scored in both (repeat 0): the one computation of it.

    Stuart-Maxwell and the flip rate use every item scored in both runs; the change of each agreement metric
    uses those with a consensus. ``candidate`` holds the later run's judgments when they live in another frame
    (a run under another rubric version, on the drift timeline).
    """
    from workbench import stats

    base = _scores(judgments, base_run["id"]).dropna().astype(int)
    cand_frame = judgments if candidate is None else candidate
    cand = _scores(cand_frame, run["id"]).dropna().astype(int)
    ids = [i for i in index.index if i in base.index and i in cand.index]
    if not ids:
        return None
    d = stats.drift([resolved.get(i) for i in ids], [base[i] for i in ids], [cand[i] for i in ids],
                    index.loc[ids, "task_id"].to_numpy(), scale=scale, pass_threshold=pass_threshold,
                    baseline_versions=judgments[judgments["run_id"] == base_run["id"]]["model_version"].dropna(),
                    candidate_versions=cand_frame[cand_frame["run_id"] == run["id"]]["model_version"].dropna(),
                    resamples=options.resamples, seed=options.seed)
    return {**d.to_json(), "baseline_run": base_run["name"], "run": run["name"]}


def _cost(frame: pd.DataFrame) -> dict[str, Any]:
    first = frame[frame["repeat"] == 0]
    cost = first["cost_usd"].dropna()
    lat = first["latency_ms"].dropna()
    return {"per_100_items_usd": float(cost.mean() * 100) if len(cost) else None,
            "total_usd": float(frame["cost_usd"].dropna().sum()) if frame["cost_usd"].notna().any() else None,
            "median_latency_ms": float(lat.median()) if len(lat) else None}


def judges_of(store: Store, golden_set: str, rubric: str) -> list[str]:
    """Judge ids declared in the rubric's newest version."""
    return [j.id for j in get_rubric(store, rubric).rubric.judges]


def compare(store: Store, golden_set: str, rubric: str, options: Options = Options(), *,
            workspace: Workspace | None = None,
            judged: Callable[[CalibrationReport], CalibrationReport] | None = None) -> Comparison:
    """Every judge of the rubric side by side, with paired-bootstrap differences from the best one.

    ``judged`` completes each judge's verdict with checks this layer cannot compute (a policy's selective
    guarantee: ``features.selective``'s ``policy_guarantee``), so the table says what ``calibrate`` says."""
    import pandas as pd

    from workbench import stats

    gs = store.golden_set(golden_set)
    rv = get_rubric(store, rubric)
    rows, scores = [], {}
    for judge in (j.id for j in rv.rubric.judges):
        try:
            data = judge_data(store, golden_set, rubric, judge, scope=resolve(store, golden_set, rubric, judge,
                                                                              options.run, gs=gs))
        except NotFound:
            continue
        report = calibrate(store, golden_set, rubric, judge, options, data=data, workspace=workspace)
        rows.append(judged(report) if judged else report)
        scores[judge] = _scores(data.judgments, data.chosen.id).dropna().astype(int)
    if not rows:
        raise NotFound(f"no judge of rubric '{rubric}' has judgments on golden set '{golden_set}'")
    cons = consensus(store, golden_set, rv.name, gs=gs).resolved
    index = pd.DataFrame(store.item_index(gs.id)).set_index("item_id")
    metric = "krippendorff_alpha_ordinal"
    best = max(rows, key=lambda r: _val(r.metric(metric).value))
    best_id = best.judge.id
    differences = []
    for r in rows:
        jid = r.judge.id
        if jid == best_id:
            continue
        ids = [i for i in index.index if i in cons and i in scores[jid].index and i in scores[best_id].index]
        d = stats.paired_bootstrap_delta([cons[i] for i in ids], [scores[best_id][i] for i in ids],
                                         [scores[jid][i] for i in ids], index.loc[ids, "task_id"].to_numpy(),
                                         scale=list(rv.rubric.scale.values), pass_threshold=rv.rubric.pass_threshold,
                                         resamples=options.resamples, seed=options.seed)
        diff = Difference.from_json({"judge": jid, "baseline": best_id, "metric": metric, "n_items": d["n_items"],
                                     **stats.jsonable(d["metrics"][metric]), "significant": False})
        significant = diff.ci_high is not None and diff.ci_low is not None and (diff.ci_high < 0 or diff.ci_low > 0)
        differences.append(diff.but(significant=bool(significant)))
    return Comparison(golden_set=golden_set, rubric=rubric, best=best_id, judges=tuple(rows),
                      differences=tuple(differences))


def _val(x: Any) -> float:
    return -math.inf if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)
