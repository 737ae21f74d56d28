"""The results board: several models' runs on the same tasks, graded with approved bundles, read per task and category.

A board holds run items (an item with ``task_id``, ``category``, ``producer``
and a repeat index) and the approved bundles that grade them: a bundle whose
judge is a ``python/`` grader is the mechanical tier, any other the judged
tier. Grading goes through the judge engine (``judges.runner.run_judge``)
with a sink that commits each grade as it arrives, keyed like every judgment
by (judge config hash, item content hash, repeat): a killed grading resumes
where it stopped, and no item is ever graded twice with the same bundle, on
this board or another. One grader of a bundle at a time holds its lease.

The report reads down each model's column and across each category: cells with
both tiers (mean@k, pass^k), outliers per task and per category with their
tests, corrected pass rates per model and category, where to look, and the
judge's self-preference carried into the comparison. There is no summed score.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from workbench import stats
from workbench.core.errors import ConfigError, Conflict, InputError
from workbench.core.formats import Record, parse_item, read_records
from workbench.core.hashing import canonical_json, sha256_hex
from workbench.judges.base import WorkKey
from workbench.judges.runner import RunEstimate, estimate_run, run_judge
from workbench.core.models import Item, JudgeSpec, Judgment, Rubric
from workbench.core.names import check_name
from workbench.judges.rubrics import rubric_from_dict
from workbench.features.board import stats as board_stats
from workbench.features.board.records import (
    ApprovedBundle,
    BoardComparison,
    BoardGrade,
    BoardItem,
    BoardLead,
    BoardReport,
    BoardSettings,
    BoardSummary,
    Cell,
    CategoryOutlier,
    CellTier,
    ColumnRow,
    FamilyCheck,
    FamilyComparisonRow,
    FamilyEffect,
    GradingSummary,
    ModelRow,
    OutlierStats,
    RateRow,
    SavedVerdict,
    ChangeRow,
    TaskRow,
    TierComparison,
    TierGrading,
    TierInfo,
    TierOutliers,
)
from workbench.store import Store, leases
from workbench.features.board import queries as q
from workbench.core.workspace import Workspace
from workbench.features.export.bundle import load_bundle

MECHANICAL, JUDGED = "mechanical", "judged"
REPEAT_FIELD = "repeat"


# -- tiers: the approved bundles that grade a board --------------------------------------------

@dataclass(frozen=True)
class Tier:
    """One approved bundle on the board: its tier, rubric and judge."""

    name: str           # shown as the tier's column: "mechanical", "judged", or "judged:<judge>" when several
    kind: str           # MECHANICAL or JUDGED
    sha256: str
    rubric: Rubric
    spec: JudgeSpec
    bundle: ApprovedBundle

    @property
    def config_hash(self) -> str:
        return self.spec.config_hash(self.rubric.content_hash)

    @property
    def top(self) -> int:
        return int(self.rubric.scale.values[-1])

    def describe(self) -> TierInfo:
        b, cal = self.bundle, self.bundle.calibration
        return TierInfo(self.name, self.kind, self.sha256, self.spec.id, self.spec.model, self.spec.family,
                        b.rubric_name, b.rubric_version, b.golden_set, self.rubric.pass_threshold,
                        list(self.rubric.scale.values), cal.tpr, cal.tnr, cal.same_family)


def _judge_of(b: ApprovedBundle) -> tuple[Rubric, JudgeSpec, str]:
    """The bundle's rubric, judge, and tier kind (a python/ grader is the mechanical tier)."""
    rubric = rubric_from_dict(b.rubric_content)
    spec = rubric.judge(b.judge_id)
    return rubric, spec, MECHANICAL if spec.provider == "python" else JUDGED


def _tiers_from(bundles: Sequence[ApprovedBundle]) -> list[Tier]:
    made = [(b, *_judge_of(b)) for b in bundles]
    counts = {k: sum(1 for m in made if m[3] == k) for k in (MECHANICAL, JUDGED)}
    return [Tier(kind if counts[kind] == 1 else f"{kind}:{spec.id}", kind, b.sha256, rubric, spec, b)
            for b, rubric, spec, kind in made]


def load_tiers(store: Store, bundle_files: Sequence[str | Path],
               workspace: Workspace | None = None) -> list[tuple[str, ApprovedBundle]]:
    """Verify each bundle (hash, signature, schema, recorded export) and return (file name, bundle), each once."""
    seen: dict[str, tuple[str, ApprovedBundle]] = {}
    for f in bundle_files:
        b = ApprovedBundle.from_json(load_bundle(store, f, workspace))
        seen.setdefault(b.sha256, (Path(f).name, b))
    return list(seen.values())


# -- run files ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunItem:
    item: Item
    repeat: int
    source: str  # "file line N"

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.item.cluster, self.item.producer.model, self.repeat)  # type: ignore[union-attr]

    def row(self) -> BoardItem:
        content = self.item.content()
        return BoardItem(self.item.id, self.item.cluster, self.item.category, self.item.producer.model,  # type: ignore
                         self.item.producer.family or None, self.repeat, content,  # type: ignore[union-attr]
                         sha256_hex(canonical_json(content)), self.source)


def _repeat_of(rec: Record) -> tuple[Record, int]:
    """Take the repeat index from the record's ``repeat`` (or ``metadata.repeat``) and keep it in the metadata."""
    data = dict(rec.data)
    metadata = data.get("metadata")
    top = data.pop(REPEAT_FIELD, None)
    inner = metadata.get(REPEAT_FIELD) if isinstance(metadata, dict) else None
    raw = top if top is not None else inner
    if raw is None or raw == "":
        raw = 0
    try:
        repeat = int(raw)
        ok = float(raw) == repeat and repeat >= 0 and not isinstance(raw, bool)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise rec.error(f"must be a whole number of 0 or more, got {raw!r}", field=REPEAT_FIELD,
                        fix="number each model's repeats of a task from 0")
    if top is not None:
        data["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), REPEAT_FIELD: repeat}
    return replace(rec, data=data), repeat


def read_runs(paths: Sequence[str | Path]) -> list[RunItem]:
    """Every item of the run files (.jsonl or .csv, the item format plus a repeat index), or an InputError."""
    out: list[RunItem] = []
    seen_keys: dict[tuple[str, str, int], str] = {}
    seen_ids: dict[str, str] = {}
    for path in paths:
        for rec in read_records(path):
            rec, repeat = _repeat_of(rec)
            if rec.data.get("task_id") in (None, ""):
                raise rec.error("is missing", field="task_id",
                                fix="give the task the item answers, so that models can be compared on it")
            if not rec.data.get("producer"):
                raise rec.error("is missing", field="producer",
                                fix='name the model that produced the run, like {"model": "gpt-4o", "family": "openai"}')
            item = parse_item(rec)
            run = RunItem(item, repeat, f"{rec.file} line {rec.line}")
            for seen, key, what in ((seen_keys, run.key, f"task '{item.cluster}', model '{item.producer.model}', "
                                                         f"repeat {repeat}"),
                                    (seen_ids, item.id, f"item id '{item.id}'")):
                if key in seen:
                    raise rec.error(f"{what} appears twice (also {seen[key]})",
                                    field="id" if seen is seen_ids else REPEAT_FIELD,
                                    fix="give each repeat of a task by a model its own repeat index and id")
                seen[key] = run.source
            out.append(run)
    categories: dict[str, tuple[str, str]] = {}
    for r in out:
        first = categories.setdefault(r.item.cluster, (r.item.category, r.source))
        if first[0] != r.item.category:
            raise InputError(f"task '{r.item.cluster}' is in category '{r.item.category}' here but in "
                             f"'{first[0]}' at {first[1]}", file=r.source.split(" line ")[0],
                             line=int(r.source.rsplit(" ", 1)[1]), field="category",
                             fix="give every item of a task the same category")
    return out


def _add_items(store: Store, board_id: int, runs: Sequence[RunItem]) -> int:
    """All of the runs land on the board or none; an item already there must not have changed."""
    existing = q.item_keys(store, board_id)
    rows = []
    for r in runs:
        row = r.row()
        prior = existing.get(r.key)
        if prior is not None:
            if prior[1] != row.content_hash:
                file, line = r.source.rsplit(" line ", 1)
                raise InputError(f"task '{r.key[0]}', model '{r.key[1]}', repeat {r.key[2]} is already on the board "
                                 "with other content", file=file, line=int(line), field=REPEAT_FIELD,
                                 fix="grade a changed run onto a new board, or give it a new repeat index")
            continue
        rows.append(row)
    return q.insert_items(store, board_id, rows)


# -- grading ------------------------------------------------------------------------------------

class BoardSink:
    """RunSink over board_grades: each grade is its own committed transaction, kept through a busy database."""

    def __init__(self, store: Store, config_hash: str):
        self.store, self.config_hash = store, config_hash
        self._lock = threading.Lock()

    def done_keys(self) -> set[WorkKey]:
        with self._lock:
            return {(self.config_hash, h, r) for h, r in q.done_keys(self.store, self.config_hash)}

    def record(self, key: WorkKey, judgment: Judgment) -> None:
        def write() -> None:
            with self.store.transaction():
                q.insert_grade(self.store, key[0], key[1], judgment)

        with self._lock:
            self.store.retrying(write, what=f"saving the grade of item '{judgment.item_id}'")

    async def arecord(self, key: WorkKey, judgment: Judgment) -> None:
        await asyncio.to_thread(self.record, key, judgment)

    def save_batch(self, provider: str, batch_id: str, keys: Sequence[WorkKey]) -> None:
        raise ConfigError("board grading has no batch mode; grade without --batch")

    def pending_batches(self) -> list:
        return []

    def mark_batch_done(self, batch_id: str) -> None:
        raise ConfigError("board grading has no batch mode; grade without --batch")


def grade_board(store: Store, name: str, run_files: Sequence[str | Path], bundle_files: Sequence[str | Path], *,
                judge_repeats: int = 1, concurrency: int = 8, budget_usd: float | None = None,
                env: Mapping[str, str] | None = None, provider_options: Mapping[str, dict[str, Any]] | None = None,
                progress: Callable[[str, int, int], None] | None = None,
                workspace: Workspace | None = None, like: str | None = None,
                should_stop: Callable[[], bool] | None = None) -> GradingSummary:
    """Put the runs on the board (created if new) and grade every item with every bundle not yet graded.

    ``run_files`` may be empty: the board's items are then graded with new
    bundles, or an interrupted grading resumes. ``provider_options`` maps a
    judge id to its provider's options (tests: the mock's verdicts);
    ``env`` holds the API keys of every provider. ``progress(tier, done,
    total)`` after each grade. ``like`` names a board whose bundles (verified when they were first attached)
    also grade this one: the Board page grades new runs with the bundles of the board on screen.
    ``should_stop()`` true stops the grading at the next item (what is graded stays).
    """
    name = check_name(name, "board name")
    if judge_repeats < 1:
        raise ConfigError(f"judge repeats must be at least 1, got {judge_repeats}")
    loaded = load_tiers(store, bundle_files, workspace)
    runs = read_runs(run_files)
    from workbench.features.judging.service import check_provider  # the missing SDK or key is said now, before anything is written

    copied = q.bundles(store, q.board(store, like).id) if like is not None else []
    for tier in _tiers_from([b for _, b in loaded] + [c.bundle for c in copied]):
        check_provider(tier.spec, {"env": env, **(provider_options or {}).get(tier.spec.id, {})})
    if not runs:
        q.board(store, name)  # resuming or adding bundles: the board must exist (NotFound names the known ones)
    with store.transaction():
        board_id = q.ensure_board(store, name)
        added = _add_items(store, board_id, runs)
        for path, b in loaded:
            rubric, spec, tier_kind = _judge_of(b)
            q.add_bundle(store, board_id, tier=tier_kind, config_hash=spec.config_hash(rubric.content_hash),
                         path=path, bundle=b)
        for c in copied:
            q.add_bundle(store, board_id, tier=c.tier, config_hash=c.config_hash, path=c.path, bundle=c.bundle)
    tiers = board_tiers(store, name)
    if not tiers:
        raise InputError(f"board '{name}' has no bundle to grade with", fix="give --bundle FILE (an approved bundle)")
    items = [r.to_item() for r in q.items(store, board_id)]
    if not items:
        raise InputError(f"board '{name}' has no items", fix="give the run files to grade")
    return GradingSummary(name, added, len(items), [
        _grade_tier(store, tier, items, judge_repeats=judge_repeats, concurrency=concurrency, budget_usd=budget_usd,
                    env=env, options=(provider_options or {}).get(tier.spec.id, {}), progress=progress,
                    should_stop=should_stop)
        for tier in tiers])


def grading_estimate(store: Store, board: str, run_files: Sequence[str | Path], *,
                     judge_repeats: int = 1) -> list[tuple[str, RunEstimate]]:
    """What grading ``run_files`` with the bundles of ``board`` would send, per tier: the grades not recorded yet
    (a run graded before with the same bundle is skipped, as ``grade_board`` skips it) and their cost, with its
    upper bound; a Python grader's tier is free. Writes nothing."""
    items = [r.row().to_item() for r in read_runs(run_files)]  # as the board stores and grades them
    out = []
    for tier in board_tiers(store, board):
        done = BoardSink(store, tier.config_hash).done_keys()
        out.append((tier.name, estimate_run(items, tier.rubric, tier.spec, done_keys=done, repeats=judge_repeats)))
    return out


def _grade_tier(store: Store, tier: Tier, items: list[Item], *, judge_repeats: int, concurrency: int,
                budget_usd: float | None, env: Mapping[str, str] | None, options: dict[str, Any],
                progress: Callable[[str, int, int], None] | None,
                should_stop: Callable[[], bool] | None = None) -> TierGrading:
    holder, ours = leases.acquire(store, f"board-grade:{tier.config_hash}")
    if not ours:
        raise Conflict(f"the {tier.name} bundle ({tier.spec.id}) is already grading board items ({holder.describe()});"
                       f" wait for it to finish, since a grader whose heartbeat stops for {leases.LEASE_STALE_S:.0f} s"
                       " is taken over")
    keeper = leases.LeaseKeeper(store.path, holder).start()
    try:
        report = asyncio.run(run_judge(
            items, tier.rubric, tier.spec, BoardSink(store, tier.config_hash), repeats=judge_repeats,
            concurrency=concurrency, budget_usd=budget_usd, should_stop=lambda: keeper.lost.is_set() or bool(should_stop and should_stop()),
            provider_options={"env": env, **options} if env is not None else options,
            progress=(lambda done, total, _cost: progress(tier.name, done, total)) if progress else None))
    finally:
        keeper.stop()
        store.retrying(lambda: leases.release(store, holder), what="releasing the grading lease")
    return TierGrading(tier.name, tier.spec.id, report.n_planned, report.n_recorded, report.n_skipped,
                       report.n_unscored, report.n_failed, report.n_requests, report.cost_usd, report.cost_unknown,
                       report.stopped, report.failures[:5])


def board_tiers(store: Store, name: str) -> list[Tier]:
    return _tiers_from([r.bundle for r in q.bundles(store, q.board(store, name).id)])


def list_boards(store: Store) -> list[BoardSummary]:
    return q.boards(store)


def board_fingerprint(store: Store, name: str) -> tuple:
    """What the board's report depends on (its items, bundles and grades): a page's cache key."""
    return q.fingerprint(store, q.board(store, name).id)


# -- the report -----------------------------------------------------------------------------------

def _frames(store: Store, name: str) -> tuple[list[Tier], pd.DataFrame, pd.DataFrame]:
    """The board's tiers, its items (one row each, without content) and its grades (item id, tier, score)."""
    board_id = q.board(store, name).id
    tiers = board_tiers(store, name)
    items = pd.DataFrame(q.items(store, board_id))
    if items.empty:
        raise InputError(f"board '{name}' has no items", fix="grade run files onto it with 'workbench board grade'")
    by_sha = {t.sha256: t.name for t in tiers}
    grades = pd.DataFrame([(g.item_id, by_sha[g.sha256], g.score) for g in q.grades(store, board_id)],
                          columns=["item_id", "tier", "score"])
    return tiers, items.drop(columns=["content"]), grades


def _tier_items(items: pd.DataFrame, grades: pd.DataFrame, tier: Tier) -> pd.DataFrame:
    """One row per board item for the tier: its score (the judge's repeats' median; NaN when unscored or
    ungraded), whether its judge repeats split, whether it is graded at all."""
    g = grades[grades["tier"] == tier.name]
    per = g.groupby("item_id")["score"].agg(score="median", n_scores="count", n_grades="size",
                                            spread=lambda s: s.max() - s.min())
    out = items.merge(per, left_on="item_id", right_index=True, how="left")
    graded = out["n_grades"].fillna(0) > 0
    # a median between two scale values (two repeats split) is read as the lower: the conservative verdict
    return out.assign(graded=graded, unscored=graded & (out["n_scores"].fillna(0) == 0),
                      split=out["spread"].fillna(0) > 0, score=np.floor(out["score"]))


def _graded_scores(ti: pd.DataFrame) -> pd.DataFrame:
    """The tier's graded items in the long form the board's statistics read (:data:`board_stats.SCORE_COLUMNS`)."""
    return ti.loc[ti["graded"], list(board_stats.SCORE_COLUMNS)]


def board_report(store: Store, name: str, *, q_value: float = board_stats.OUTLIER_Q, adjustment: str = "fdr_bh",
                 level: float = 0.95, resamples: int = 2000, seed: int = 0, look_limit: int = 50) -> BoardReport:
    """Compute the board: cells, outliers, corrected rates, where to look and the family-adjusted comparison."""
    tiers, items, grades = _frames(store, name)
    models = items.groupby("model", sort=True)["family"].first()
    tasks = items.groupby("task_id", sort=True)["category"].first()
    present = set(items[["task_id", "model"]].itertuples(index=False, name=None))
    cells = {(t, m): Cell(t, tasks[t], m, {}) for t, m in sorted(present)}
    columns, rates, category_rows, outlier_tests, family, n_ungraded = [], [], [], {}, [], {}
    look_items = items[["task_id", "category", "model", "repeat", "item_id"]].copy()
    look_outliers: dict[str, pd.DataFrame] = {}
    look_categories: dict[str, pd.DataFrame] = {}
    for tier in tiers:
        ti = _tier_items(items, grades, tier)
        scores = _graded_scores(ti)
        n_ungraded[tier.name] = len(ti) - len(scores)
        if scores.empty:
            continue
        summary = board_stats.cell_summary(scores, pass_threshold=tier.rubric.pass_threshold)
        out = board_stats.cell_outliers(scores, level=level, q=q_value, adjustment=adjustment)
        cat = board_stats.category_outliers(scores, level=level, q=q_value, adjustment=adjustment)
        outlier_tests[tier.name] = TierOutliers(out.test, cat.test)
        look_outliers[tier.name], look_categories[tier.name] = out.cells, cat.cells
        tests = {(r.task_id, r.model): _record(OutlierStats, r) for r in out.cells.itertuples(index=False)}
        for r in summary.itertuples(index=False):
            cells[(r.task_id, r.model)].tiers[tier.name] = _record(CellTier, r, test=tests.get((r.task_id, r.model)))
        category_rows += [CategoryOutlier(tier.name, r.category, r.model, int(r.n), stats.jsonable(r.mean_score),
                                          _record(OutlierStats, r)) for r in cat.cells.itertuples(index=False)]
        columns += _columns(tier, cells.values())
        rates += _rates(tier, scores, resamples=resamples, seed=seed, level=level)
        _mark_look_items(look_items, ti, tier)
        if tier.kind == JUDGED:
            family.append(_family(tier, scores, models, level=level))
    look = board_stats.where_to_look(look_items, look_outliers, look_categories, limit=look_limit)
    marked = {m: [f.tier for f in family if m in f.marked_models] for m in models.index}
    return BoardReport(
        board=name, tiers=[t.describe() for t in tiers],
        models=[ModelRow(m, stats.jsonable(models[m]), marked[m]) for m in models.index],
        categories=sorted(tasks.unique()), tasks=[TaskRow(t, c) for t, c in tasks.items()],
        cells=list(cells.values()), columns=columns, rates=rates, category_outliers=category_rows,
        where_to_look=look, family=family, outlier_tests=outlier_tests,
        settings=BoardSettings(q_value, adjustment, level, resamples, seed), n_items=len(items), n_ungraded=n_ungraded)


def _record(cls: type, row: Any, **more: Any) -> Any:
    """A report record from a data frame's row: the fields it names, JSON-ready (NaN as None, numpy as Python)."""
    fields = row._asdict()
    return cls(**stats.jsonable({k: fields[k] for k in cls.__dataclass_fields__ if k in fields}), **more)


def _columns(tier: Tier, cells: Iterable[Cell]) -> list[ColumnRow]:
    """Down each model's column: mean@k and pass^k over the tasks it has scored repeats of (cells in task order)."""
    by_model: dict[str, list[CellTier]] = {}
    for c in cells:
        if tier.name in c.tiers:
            by_model.setdefault(c.model, []).append(c.tiers[tier.name])
    out = []
    for m in sorted(by_model):
        scored = [t for t in by_model[m] if t.n > 0]
        k = min((t.n for t in scored), default=0)
        out.append(ColumnRow(tier.name, m, len(scored), k,
                             float(np.mean([t.mean_at_k for t in scored])) if k else None,
                             stats.pass_hat_k(np.array([t.n for t in scored]), np.array([t.n_pass for t in scored]), k)
                             if k else None,
                             float(np.mean([t.mean_score for t in scored])) if k else None))
    return out


def _mark_look_items(look_items: pd.DataFrame, ti: pd.DataFrame, tier: Tier) -> None:
    """Add the tier's verdicts on each item to the items "where to look" reads: pass, top score, split, unscored."""
    by_item, item = ti.set_index("item_id"), look_items["item_id"]
    score = item.map(by_item["score"])
    look_items[f"{tier.kind}_pass"] = (score >= tier.rubric.pass_threshold).where(score.notna())
    if tier.kind == JUDGED:
        look_items["judged_top"] = score == tier.top
        look_items["split"] = item.map(by_item["split"])
    look_items["unscored"] = look_items.get("unscored", False) | item.map(by_item["unscored"]).fillna(False)


def _rates(tier: Tier, scores: pd.DataFrame, *, resamples: int, seed: int, level: float) -> list[RateRow]:
    cal = tier.bundle.calibration
    human, judge = stats.golden_pass_arrays(cal.confusion_matrix, scale=list(tier.rubric.scale.values),
                                            pass_threshold=tier.rubric.pass_threshold)
    from workbench.features.grading.service import _bundle_design_effect

    passes = scores.dropna(subset=["score"]).assign(**{"pass": lambda d: d["score"] >= tier.rubric.pass_threshold})
    table = board_stats.corrected_rates(passes, golden_human_pass=human, golden_judge_pass=judge,
                                        design_effect=_bundle_design_effect(cal.document), resamples=resamples,
                                        seed=seed, level=level)
    return [_record(RateRow, r, tier=tier.name) for r in table.itertuples(index=False)]


def _family(tier: Tier, scores: pd.DataFrame, models: pd.Series, *, level: float) -> FamilyCheck:
    fam = (tier.spec.family or "").strip().casefold()
    marked = [m for m, f in models.items() if fam and isinstance(f, str) and f.strip().casefold() == fam]
    effect = FamilyEffect.from_json(tier.bundle.calibration.same_family)
    rows = board_stats.family_adjusted_comparison(scores, marked_models=marked, effect=effect, level=level)
    return FamilyCheck(tier.name, tier.spec.id, tier.spec.family, marked, effect,
                       [_record(FamilyComparisonRow, r) for r in rows.itertuples(index=False)])


def board_leads(store: Store, name: str, *, level: float = 0.95) -> list[BoardLead]:
    """Per tier: the model whose runs pass most often (mean over tasks of the share of its repeats that pass, as
    the column's mean@k; ties go to the higher mean score) and its lead over the next best, paired by task with
    a t-interval and a sign-flip test (the two-board comparison's statistics, applied to two models of this board).
    """
    tiers, items, grades = _frames(store, name)
    out = []
    for tier in tiers:
        scores = _graded_scores(_tier_items(items, grades, tier)).dropna(subset=["score"])
        if scores.empty:
            continue
        cells = board_stats.cell_summary(scores, pass_threshold=tier.rubric.pass_threshold)
        per = cells.groupby("model").agg(share=("mean_at_k", "mean"), score=("mean_score", "mean"))
        ranked = per.sort_values(["share", "score"], ascending=False, kind="stable")
        leader, share = ranked.index[0], float(ranked["share"].iloc[0])
        if len(ranked) < 2:
            out.append(BoardLead(tier.name, tier.spec.id, 1, leader, share, None, None, level=level))
            continue
        runner = ranked.index[1]
        row = board_stats.paired_comparison(scores, scores, value="pass", pass_threshold=tier.rubric.pass_threshold,
                                            pairs={runner: leader}, level=level, top=0).rows
        overall = row[row["category"] == board_stats.ALL].iloc[0]
        out.append(BoardLead(tier.name, tier.spec.id, len(ranked), leader, share, runner,
                             float(ranked["share"].iloc[1]), int(overall["n_tasks"]),
                             **stats.jsonable({k: overall[k] for k in ("ci_low", "ci_high", "p_value")}),
                             difference=stats.jsonable(overall["change"]), verdict=str(overall["verdict"]),
                             level=level))
    return out


# -- two boards -------------------------------------------------------------------------------------

def compare_boards(store: Store, before: str, after: str, *, pairs: Mapping[str, str] | None = None,
                   level: float = 0.95, top: int = 10) -> BoardComparison:
    """Per tier graded by the same bundle on both boards: per model and category, the paired change over tasks."""
    tiers_a, items_a, grades_a = _frames(store, before)
    tiers_b, items_b, grades_b = _frames(store, after)
    shared = [(ta, tb) for ta in tiers_a for tb in tiers_b if ta.sha256 == tb.sha256]
    if not shared:
        raise InputError(f"boards '{before}' and '{after}' share no bundle, so their grades cannot be compared",
                         fix="grade both boards with the same approved bundle")
    out = []
    for ta, tb in shared:
        a = _tier_items(items_a, grades_a, ta)
        b = _tier_items(items_b, grades_b, tb)
        for value in ("pass", "score"):
            r = board_stats.paired_comparison(_graded_scores(a), _graded_scores(b), value=value,
                                              pass_threshold=ta.rubric.pass_threshold, pairs=dict(pairs or {}) or None,
                                              level=level, top=top)
            out.append(TierComparison(ta.name, value, [_record(ChangeRow, c) for c in r.rows.itertuples(index=False)],
                                      r.moved, stats.jsonable(r.unpaired)))
    return BoardComparison(before, after, out)


# -- a cell in the viewer, and a reviewer's verdict on it -----------------------------------------------

@dataclass
class CellItem:
    """One repeat of a cell: the item and each tier's verdicts (rationale, cited steps, agentic trace)."""

    item: Item
    repeat: int
    grades: dict[str, list[BoardGrade]] = field(default_factory=dict)


def cell_items(store: Store, name: str, task_id: str, model: str) -> list[CellItem]:
    board_id = q.board(store, name).id
    rows = [r for r in q.items(store, board_id) if r.task_id == task_id and r.model == model]
    if not rows:
        raise InputError(f"board '{name}' has no run of model '{model}' on task '{task_id}'",
                         fix="pick a cell of the board")
    by_sha = {t.sha256: t.name for t in board_tiers(store, name)}
    grades = q.grades(store, board_id, with_trace=True, item_ids=[r.item_id for r in rows])
    out = []
    for r in rows:
        mine: dict[str, list[BoardGrade]] = {}
        for g in grades:
            if g.item_id == r.item_id:
                mine.setdefault(by_sha[g.sha256], []).append(g)
        out.append(CellItem(r.to_item(), r.repeat, mine))
    return sorted(out, key=lambda c: c.repeat)


def save_verdict(store: Store, name: str, item_id: str, rater: str, score: int, rationale: str | None = None, *,
                 tier: str | None = None, golden_set: str | None = None) -> SavedVerdict:
    """A reviewer's verdict on a board item, saved as a label: the item joins the golden set of the tier's bundle
    (or ``golden_set``) and the label goes through the labeling service, under the bundle's rubric."""
    from workbench.features.importing import service as importing
    from workbench.features.labeling import service as labeling

    board_id = q.board(store, name).id
    tiers = board_tiers(store, name)
    judged = [t for t in tiers if (tier is None and t.kind == JUDGED) or t.name == tier] or tiers[:1]
    if not judged:
        raise InputError(f"board '{name}' has no bundle, so a verdict has no rubric to be saved under",
                         fix="grade the board with an approved bundle first")
    chosen = judged[0].bundle
    target = golden_set or chosen.golden_set
    [row] = q.items(store, board_id, [item_id]) or [None]
    if row is None:
        raise InputError(f"board '{name}' has no item '{item_id}'", fix="pick an item of the board")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{item_id}.jsonl"
        path.write_text(canonical_json(row.to_item().to_dict()) + "\n", encoding="utf-8")
        importing.import_items(store, path, target)
    changed = labeling.submit_label(store, target, chosen.rubric_name, item_id, rater, score, rationale)
    return SavedVerdict(target, chosen.rubric_name, item_id, changed)
