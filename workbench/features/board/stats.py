"""Statistics of the results board: several models' runs on the same tasks, read per task and per category.

The board is not a leaderboard: nothing here sums a model into one number.
Its pieces:

* :func:`cell_summary`: each (task, model) cell over its repeats: mean score,
  mean@k (the pass rate over the k repeats) and pass^k (every repeat passes).
* :func:`cell_outliers`: per task, which model is an outlier in either
  direction. A cell is compared with the task's other models net of each
  model's usual level (the interaction contrast of a two-way layout,
  ``y_tm - y_t. - y_.m + y_..``), so a model that is weaker everywhere is read
  in its column and its category rows, not flagged on every task. Three
  repeats carry too little to estimate a cell's own variance, so the
  standard error uses the within-cell variance pooled over the whole board
  (the error term of a two-way analysis of variance with replication); the
  two-sided t-test p-values are adjusted over all cells of the tier
  (Benjamini-Hochberg by default, Holm on request).
* :func:`corrected_rates`: per model, per category and overall, the
  Rogan-Gladen corrected pass rate with the approved bundle's TPR and TNR
  (:func:`~workbench.stats.correction.corrected_pass_rate`), repeats clustered
  by task.
* :func:`where_to_look`: the cells most worth a human's time, ranked.
* :func:`family_adjusted_comparison`: a model of the judge's family against
  each other model, as measured and net of the self-preference effect
  measured at calibration, with an interval that carries both.
* :func:`paired_comparison`: two boards on the same tasks, per model and
  category: who gained or dropped, with paired intervals, and the tasks that
  moved most.

Inputs are long data frames, one row per graded item: ``task_id``,
``category``, ``model``, ``repeat`` and ``score`` (NaN when unscored), one
grading tier at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.features.board.records import (
    ChangeRow,
    MovedTask,
    FamilyComparisonRow,
    FamilyEffect,
    Interval,
    LookEntry,
    LookReason,
    OutlierTest,
)
from workbench.stats._common import check_frame, check_level
from workbench.stats.correction import corrected_pass_rate

SCORE_COLUMNS = ("task_id", "category", "model", "repeat", "score")
#: Adjustments of the outlier p-values, as named by ``statsmodels.stats.multitest.multipletests``.
ADJUSTMENTS = ("fdr_bh", "holm")
#: The rate of false discoveries (BH) or of any false flag (Holm) the outlier flags are held to.
OUTLIER_Q = 0.05
ALL = "(all)"


@dataclass(frozen=True)
class Outliers:
    """The cells of an outlier test (one row per cell, see :func:`cell_outliers`) and how they were tested."""

    cells: pd.DataFrame
    test: OutlierTest


@dataclass(frozen=True)
class PairedComparison:
    """Two boards' change per model and category (``rows``), the tasks that moved most, the models without a
    partner; ``value`` is "score" or "pass"."""

    rows: pd.DataFrame
    moved: list[MovedTask]  # largest change first
    unpaired: list[str]
    value: str
    level: float


def _scores(frame: Any, name: str = "scores") -> pd.DataFrame:
    df = check_frame(frame, name=name, columns=SCORE_COLUMNS)[list(SCORE_COLUMNS)].copy()
    df = df.assign(score=pd.to_numeric(df["score"], errors="coerce").astype(float))
    for col in ("task_id", "category", "model"):  # categorical: grouping on them is what the board does most
        df[col] = df[col].astype(str).astype("category")
    if df.duplicated(["task_id", "model", "repeat"]).any():
        row = next(df[df.duplicated(["task_id", "model", "repeat"])].itertuples())
        raise ValueError(f"{name} holds task {row.task_id!r}, model {row.model!r}, repeat {row.repeat!r} "
                         "twice; give each repeat once")
    categories = df.groupby("task_id")["category"].nunique()
    if (categories > 1).any():
        raise ValueError(f"task {categories[categories > 1].index[0]!r} is in more than one category in {name}; "
                         "a task belongs to one category")
    return df


def cell_summary(scores: Any, *, pass_threshold: float) -> pd.DataFrame:
    """Each (task, model) cell over its repeats.

    Returns
    -------
    pandas.DataFrame
        One row per cell: ``task_id``, ``category``, ``model``, ``n`` (scored
        repeats), ``n_unscored``, ``mean_score``, ``n_pass``, ``mean_at_k``
        (share of scored repeats that pass: mean@k), ``pass_hat_k`` (1 when
        every scored repeat passes, else 0: pass^k with k = the repeats,
        Yao et al. 2024), ``n_top`` (repeats at the highest score seen on the
        tier). NaN where no repeat is scored.

    Examples
    --------
    >>> df = pd.DataFrame({"task_id": ["t"] * 3, "category": "c", "model": "m", "repeat": [0, 1, 2],
    ...                    "score": [0, 1, -1]})
    >>> r = next(cell_summary(df, pass_threshold=0).itertuples())
    >>> round(float(r.mean_at_k), 3), float(r.pass_hat_k), float(r.mean_score)
    (0.667, 0.0, 0.0)
    """
    df = _scores(scores)
    score = df["score"]
    scored = score.notna()
    df = df.assign(_scored=scored, _pass=(score >= pass_threshold) & scored, _top=(score == score.max()) & scored)
    g = df.groupby(["task_id", "category", "model"], sort=True)
    out = g.agg(n=("_scored", "sum"), n_rows=("_scored", "size"), mean_score=("score", "mean"),
                n_pass=("_pass", "sum"), n_top=("_top", "sum")).reset_index()
    n, n_pass = out["n"], out["n_pass"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return out.drop(columns="n_rows").assign(n_unscored=out["n_rows"] - n,
                                                 mean_at_k=np.where(n > 0, n_pass / n, np.nan),
                                                 pass_hat_k=np.where(n > 0, (n_pass == n).astype(float), np.nan))


def cell_outliers(scores: Any, *, level: float = 0.95, q: float = OUTLIER_Q,
                  adjustment: str = "fdr_bh") -> Outliers:
    """Per task, the models that stand out in either direction, tested against the task's other models.

    For cell (t, m) with mean score ``y_tm`` over its repeats, the effect is
    its residual from the additive fit ``task + model`` of the cell means
    (weighted by repeats): how far the cell is from the task's other models
    beyond the model's usual distance from them. With every cell in the fit
    and equal repeats this is the interaction contrast
    ``y_tm - y_t. - y_.m + y_..``. Its standard error is
    ``s * sqrt(1/n_tm - h_tm)`` (``h`` the cell's leverage), with ``s^2`` the
    within-cell variance pooled over every cell (degrees of freedom: scored
    items minus cells). The test is a two-sided t-test. Where the variance of
    scores at the cell's fitted mean is larger than the pooled one (cells in
    the middle of a bounded scale), that variance takes the place of ``s^2``
    (:func:`_variance_curve`, read at the mean the other cells predict for
    it). The p-values of all cells are adjusted
    together with ``adjustment`` and a cell is flagged
    when its adjusted p-value is at most ``q``. Flagged cells leave the fit
    (while their task and model keep two other cells to predict them) and
    are tested against the fit of the others (``s * sqrt(1/n_tm + h_tm)``),
    round after round until no cell in the fit is flagged (in the spirit of
    the forward search of Hadi and Simonoff 1993): one far-off cell would
    otherwise pull its task's and its model's mean and make their other
    cells look off in the other direction; a cell flagged only through such
    a pull is tested again against the cleaner fit.

    Parameters
    ----------
    scores : pandas.DataFrame
        One tier's scores, columns ``task_id``, ``category``, ``model``,
        ``repeat``, ``score``.
    level : float
        Level of the intervals.
    q : float
        The false discovery rate (``fdr_bh``) or family-wise error rate
        (``holm``) of the flags.
    adjustment : {"fdr_bh", "holm"}

    Returns
    -------
    Outliers
        ``cells``: DataFrame, one row per cell with ``n``, ``mean_score``,
        ``mean_low``, ``mean_high`` (the cell's mean with its interval across
        repeats), ``vs_others`` (cell mean minus the mean of the task's other
        models), ``effect``, ``ci_low``, ``ci_high``, ``p_value``,
        ``p_adjusted``, ``flagged``, ``direction`` ("above", "below" or "");
        ``test``: ``df`` and ``sd`` (pooled within-cell; None when untested),
        ``q``, ``adjustment``, ``level``, ``reason`` (None, or why nothing
        could be tested).

    References
    ----------
    Hadi AS, Simonoff JS (1993). Procedures for the identification of
    multiple outliers in linear models. JASA 88(424), 1264-1272.
    Benjamini Y, Hochberg Y (1995). Controlling the false discovery rate.
    JRSS B 57(1), 289-300. Holm S (1979). A simple sequentially rejective
    multiple test procedure. Scand J Statist 6(2), 65-70.
    """
    df = _scores(scores)
    df = df.dropna(subset=["score"])
    return _interaction(df, row="task_id", level=level, q=q, adjustment=adjustment, unit="repeat")


def category_outliers(scores: Any, *, level: float = 0.95, q: float = OUTLIER_Q,
                      adjustment: str = "fdr_bh") -> Outliers:
    """Per category, the models that stand out in either direction against the category's other models.

    The same contrast as :func:`cell_outliers` on the category x model table,
    with each task's cell mean as one observation: repeats of a task are not
    independent, so the variation that counts is between the tasks of a
    category (pooled over every category and model). A model much worse on a
    whole category is found here even when no single task of it is
    conclusive with a few repeats.

    Returns
    -------
    Outliers
        As :func:`cell_outliers`, with ``category`` in place of ``task_id``
        and ``n`` counting tasks.
    """
    df = _scores(scores)
    cells = (df.dropna(subset=["score"]).groupby(["task_id", "category", "model"], sort=True)["score"].mean()
             .reset_index())
    return _interaction(cells, row="category", level=level, q=q, adjustment=adjustment, unit="task")


def _untestable(cells: pd.DataFrame, row: str, dof: int, ss: pd.Series, unit: str) -> str | None:
    """Why the cells cannot be tested (``ss``: each cell's sum of squares around its mean), or None."""
    if cells.empty:
        return "no item of this tier is scored"
    if cells[row].nunique() < 3 or cells["model"].nunique() < 3:
        return (f"outliers need at least three {'categories' if row == 'category' else 'tasks'} and three "
                "models: with two, a cell's departure is its neighbour's mirror image")
    if dof < 1 or not ss.sum() > 0:
        return (f"no cell has two {unit}s that differ, so there is no variation to test against; "
                f"grade more {unit}s")
    return None


def _interaction(df: pd.DataFrame, *, row: str, level: float, q: float, adjustment: str,
                 unit: str) -> Outliers:
    """Interaction contrast of every (row, model) cell of ``df`` (one observation per line), with tests."""
    check_level(level)
    if adjustment not in ADJUSTMENTS:
        raise ValueError(f"adjustment must be one of {', '.join(ADJUSTMENTS)}, got {adjustment!r}")
    if not 0 < q < 1:
        raise ValueError(f"q must be between 0 and 1, got {q!r}")
    keys = [row, "model"] if row == "category" else [row, "category", "model"]
    score = df["score"]
    df = df.assign(_dev2=(score - df.groupby(keys, sort=True)["score"].transform("mean")) ** 2)
    cells = df.groupby(keys, sort=True).agg(n=("score", "size"), mean_score=("score", "mean"),
                                            _ss=("_dev2", "sum")).reset_index()
    n, ss = cells["n"], cells["_ss"]
    dof = int(n.sum() - len(cells))
    cells = cells.assign(**dict.fromkeys(("mean_low", "mean_high", "vs_others", "effect", "ci_low", "ci_high",
                                          "p_value", "p_adjusted"), np.nan), flagged=False, direction="")
    reason = _untestable(cells, row, dof, ss, unit)
    if reason is not None:
        return Outliers(cells.drop(columns="_ss"), OutlierTest(dof, None, float(q), adjustment, float(level), reason))

    from scipy.stats import t as t_dist
    from statsmodels.stats.multitest import multipletests

    variance = ss.sum() / dof
    y, n = cells["mean_score"].to_numpy(), n.to_numpy(float)
    row_codes, rows = pd.factorize(cells[row])
    model_codes, models = pd.factorize(cells["model"])
    # the additive fit (row + model) on the cell means, weighted by their repeats
    x = np.column_stack([np.ones(len(cells)), np.eye(len(rows))[row_codes][:, 1:],
                         np.eye(len(models))[model_codes][:, 1:]])
    crit = float(t_dist.ppf(1 - (1 - level) / 2, dof))
    spread = _variance_curve(y, ss.to_numpy(), n, floor=variance, bounds=(float(score.min()), float(score.max())))
    kept = np.ones(len(cells), bool)
    for _ in range(len(cells) // 2 + 1):
        # Forward search (Hadi and Simonoff 1993): a flagged cell leaves the fit and is tested against the fit of
        # the rest, so one far-off cell neither hides another (masking) nor drags its row's and column's other
        # cells into false flags (swamping).
        xw = x[kept] * n[kept, None]
        inv = np.linalg.pinv(x[kept].T @ xw)
        fitted = x @ (inv @ (xw.T @ y[kept]))
        leverage = ((x @ inv) * x).sum(axis=1)
        effect = y - fitted
        # the null's variance is read at the cell's mean as the other cells predict it (a cell in the fit pulls
        # its own fitted value towards itself: the deletion formula takes that back out)
        with np.errstate(divide="ignore", invalid="ignore"):
            predicted = np.where(kept, y - effect / np.clip(1 - n * leverage, 1e-9, None), fitted)
        se = np.sqrt(np.clip(spread(predicted) / n + np.where(kept, -1, 1) * variance * leverage, 0, None))
        # a cell the fit reproduces whatever it holds (its row or its model has no other cell) cannot be tested
        testable = (se > 0) & ~(kept & (1 - n * leverage < 1e-9))
        with np.errstate(divide="ignore", invalid="ignore"):
            t_stat = np.where(testable, effect / se, 0.0)
        p = 2 * t_dist.sf(np.abs(t_stat), dof)
        reject, p_adj, _, _ = multipletests(p, alpha=q, method=adjustment)
        # Every flagged cell leaves the fit, the most significant first (between equals, the one farthest from the
        # typical cell), as long as its row and its model keep two other cells, which then predict it. A cell
        # flagged only through another's pull is tested again against the cleaner fit, and so unflagged.
        row_kept = np.bincount(row_codes, weights=kept, minlength=len(rows))
        model_kept = np.bincount(model_codes, weights=kept, minlength=len(models))
        left = False
        for i in np.lexsort((-np.abs(y - np.median(y)), p)):
            if reject[i] and kept[i] and row_kept[row_codes[i]] >= 3 and model_kept[model_codes[i]] >= 3:
                kept[i], left = False, True
                row_kept[row_codes[i]] -= 1
                model_kept[model_codes[i]] -= 1
        if not left:
            break
    by_row = cells.groupby(row)["mean_score"]
    m_r, row_sum = by_row.transform("size").to_numpy(float), by_row.transform("sum").to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        others = np.where(m_r > 1, (row_sum - y) / (m_r - 1), np.nan)
    mean_half = crit * np.sqrt(spread(y) / n)
    cells = cells.assign(mean_low=y - mean_half, mean_high=y + mean_half, vs_others=y - others, effect=effect,
                         ci_low=effect - crit * se, ci_high=effect + crit * se, p_value=p, p_adjusted=p_adj,
                         flagged=reject, direction=np.where(reject, np.where(effect > 0, "above", "below"), ""))
    return Outliers(cells.drop(columns="_ss"),
                    OutlierTest(dof, float(math.sqrt(variance)), float(q), adjustment, float(level), None))


def _variance_curve(means: np.ndarray, ss: np.ndarray, n: np.ndarray, *, floor: float,
                    bounds: tuple[float, float]):
    """Within-cell variance as a function of the cell mean, never below ``floor`` (the pooled variance).

    Scores on a bounded scale vary most in the middle (a cell passing half
    its repeats) and least near its ends; a quadratic in the mean, fitted to
    the cells' sample variances (weights: their degrees of freedom), gives a
    cell's variance under the null at its predicted mean. It is kept under
    the largest variance a mean allows between the scores' bounds
    ``(mu - low) * (high - mu)`` (Bhatia and Davis 2000), and never taken
    below the pooled variance: with a few repeats the normal approximation
    is poor near the ends of the scale, where the quadratic goes to 0. With
    fewer than ten cells of two or more repeats, or fewer than three
    distinct cell means, the curve cannot be fitted and the pooled variance
    is used.
    """
    many = n >= 2
    low, high = bounds
    if many.sum() < 10 or np.unique(np.round(means[many], 9)).size < 3:
        return lambda mu: np.full(np.shape(mu), floor)
    w = np.sqrt(n[many] - 1)
    design = np.column_stack([np.ones(many.sum()), means[many], means[many] ** 2])
    coef = np.linalg.lstsq(design * w[:, None], ss[many] / (n[many] - 1) * w, rcond=None)[0]

    def curve(mu: Any) -> np.ndarray:
        mu = np.clip(np.asarray(mu, dtype=float), low, high)
        return np.maximum(floor, np.minimum(coef[0] + coef[1] * mu + coef[2] * mu**2, (mu - low) * (high - mu)))

    return curve


def corrected_rates(passes: Any, *, golden_human_pass: Any, golden_judge_pass: Any,
                    design_effect: tuple[float, float] | None = None, resamples: int = 2000, seed: int = 0,
                    level: float = 0.95) -> pd.DataFrame:
    """Per model, per category and overall: raw and Rogan-Gladen corrected pass rates with intervals.

    Parameters
    ----------
    passes : pandas.DataFrame
        Columns ``task_id``, ``category``, ``model``, ``pass`` (bool); one
        row per scored item of the tier.
    golden_human_pass, golden_judge_pass, design_effect
        The bundle's golden-set evidence, as for
        :func:`~workbench.stats.correction.corrected_pass_rate`.

    Returns
    -------
    pandas.DataFrame
        One row per (model, category) and per model with category
        ``"(all)"``: ``n``, ``n_tasks``, ``raw``, ``raw_low``, ``raw_high``,
        ``corrected``, ``ci_low``, ``ci_high`` (NaN when refused),
        ``refused``, ``reason``. The repeats of a task are clustered.
    """
    df = check_frame(passes, name="passes", columns=("task_id", "category", "model", "pass"))
    rows = []
    groups = [(m, c, sub) for (m, c), sub in df.groupby(["model", "category"], sort=True)]
    groups += [(m, ALL, sub) for m, sub in df.groupby("model", sort=True)]
    for model, category, sub in groups:
        tasks = sub["task_id"]
        r = corrected_pass_rate(golden_human_pass, golden_judge_pass, sub["pass"].astype(bool).to_numpy(),
                                design_effect=design_effect, new_clusters=tasks.astype(str).to_numpy(),
                                resamples=resamples, seed=seed, level=level)
        raw, refused = Interval(**r["raw"]), r["refused"]
        c = Interval(np.nan, np.nan, np.nan) if refused else Interval(**r["corrected"])
        rows.append({"model": model, "category": category, "n": len(sub), "n_tasks": tasks.nunique(),
                     "raw": raw.value, "raw_low": raw.ci_low, "raw_high": raw.ci_high, "corrected": c.value,
                     "ci_low": c.ci_low, "ci_high": c.ci_high, "refused": refused, "reason": r["reason"]})
    return pd.DataFrame(rows)


#: Why a cell is on the "where to look" list, strongest kind first (the list is ranked by kind, then strength).
LOOK_REASONS = ("outlier", "top_on_mechanical_fail", "tiers_disagree", "unscored", "split_verdict")


def where_to_look(items: Any, outliers: dict[str, pd.DataFrame] | None = None,
                  category_flags: dict[str, pd.DataFrame] | None = None, *, limit: int = 50) -> list[LookEntry]:
    """The cells most worth a human's time, ranked.

    A cell earns a reason when: a tier's outlier test flags it, or flags its
    model on its category (strength: the size of the effect in scale points); the judged tier gave its top score to a
    repeat the mechanical tier failed; the tiers disagree on pass or fail
    (strength: the share of repeats); a repeat is unscored; or the judge's
    own repeats of an item split. Cells are ranked by their strongest kind
    of reason in the order of :data:`LOOK_REASONS` (a tested outlier is
    evidence over all repeats; one conflicting item is not), then by that
    reason's strength, then by how many reasons they have.

    Parameters
    ----------
    items : pandas.DataFrame
        One row per item (a repeat of a task by a model): ``task_id``,
        ``category``, ``model``, ``repeat``, ``item_id``, and any of
        ``mechanical_pass`` (bool or NaN), ``judged_pass`` (bool or NaN),
        ``judged_top`` (bool: the judged tier's highest scale value),
        ``unscored`` (bool: some tier could not score it), ``split`` (bool:
        the judge's repeats of it disagree).
    outliers : {tier: DataFrame}
        The ``cells`` of :func:`cell_outliers` for each tier.
    category_flags : {tier: DataFrame}
        The ``cells`` of :func:`category_outliers` for each tier.

    Returns
    -------
    list of LookEntry
        Ranked: ``rank``, ``task_id``, ``category``, ``model``, ``item_id``
        (the repeat to open first), ``reasons`` (strongest first), and the
        strongest reason's ``kind`` and ``strength``.
    """
    df = check_frame(items, name="items", columns=("task_id", "category", "model", "repeat", "item_id")).copy()
    for col in ("mechanical_pass", "judged_pass"):
        if col not in df:
            df[col] = np.nan
    for col in ("judged_top", "unscored", "split"):
        df[col] = df[col].fillna(False).astype(bool) if col in df else False
    mechanical, judged = df["mechanical_pass"], df["judged_pass"]
    both = mechanical.notna() & judged.notna()
    df = df.assign(_disagree=both & (mechanical.astype(float) != judged.astype(float)),
                   _top_fail=both & df["judged_top"] & (mechanical.astype(float) == 0),
                   task_id=df["task_id"].astype(str), model=df["model"].astype(str))
    keys = ["task_id", "model"]
    df = df.sort_values("repeat", kind="stable")
    kinds = (("_top_fail", "top_on_mechanical_fail",
              "the judge gave its top score to {k} of {n} repeats the mechanical tier failed"),
             ("_disagree", "tiers_disagree", "the tiers disagree on pass/fail in {k} of {n} repeats"),
             ("unscored", "unscored", "{k} of {n} repeats are unscored"),
             ("split", "split_verdict", "the judge's repeats split on {k} of {n} repeats"))
    counts = df.groupby(keys, sort=True)[[col for col, _, _ in kinds]].sum()
    sizes = df.groupby(keys, sort=True).size()
    first = df.groupby(keys, sort=True)["item_id"].first().astype(str).to_dict()
    # open the first repeat that shows the strongest item-level reason
    for col, _, _ in reversed(kinds):
        first.update(df[df[col]].groupby(keys, sort=True)["item_id"].first().astype(str).to_dict())
    categories = dict(zip(df["task_id"], df["category"].astype(str)))
    found: dict[tuple[str, str], list[LookReason]] = {}
    for key, row in counts.iterrows():
        n = int(sizes[key])
        found[key] = [LookReason(kind, int(row[col]) / n, text.format(k=int(row[col]), n=n))
                      for col, kind, text in kinds if row[col]]
    for tier, cells in (outliers or {}).items():
        for r in cells[cells["flagged"]].itertuples():
            key = (str(r.task_id), str(r.model))
            found.setdefault(key, []).append(LookReason(
                "outlier", float(abs(r.effect)),
                f"{tier}: {r.direction} the task's other models by {r.effect:+.2f} ({r.ci_low:+.2f} to "
                f"{r.ci_high:+.2f}; mean {r.mean_score:+.2f} over {r.n} repeats, {r.mean_low:+.2f} to "
                f"{r.mean_high:+.2f}; adjusted p {r.p_adjusted:.2g})", tier))
    for tier, cats in (category_flags or {}).items():
        for r in cats[cats["flagged"]].itertuples():
            for task, model in df.loc[(df["category"] == r.category) & (df["model"] == r.model),
                                      ["task_id", "model"]].drop_duplicates().itertuples(index=False):
                found.setdefault((str(task), str(model)), []).append(LookReason(
                    "outlier", float(abs(r.effect)),
                    f"{tier}: the model is {r.direction} the other models on category {r.category} by "
                    f"{r.effect:+.2f} ({r.ci_low:+.2f} to {r.ci_high:+.2f}; adjusted p {r.p_adjusted:.2g})", tier))
    order = {k: i for i, k in enumerate(LOOK_REASONS)}
    for reasons in found.values():
        reasons.sort(key=lambda r: (order[r.kind], -r.strength))
    # strongest kind first, then its strength, then the number of reasons
    ranked = sorted(((task, model, reasons) for (task, model), reasons in found.items() if reasons),
                    key=lambda e: (order[e[2][0].kind], -e[2][0].strength, -len(e[2]), e[0], e[1]))
    return [LookEntry(rank, task, categories.get(task, ""), model, first.get((task, model)), reasons)
            for rank, (task, model, reasons) in enumerate(ranked[:limit], 1)]


def _t_interval(values: np.ndarray, level: float) -> tuple[float, float, float]:
    """Mean of paired differences and its t-interval (NaN bounds below two values or with no spread)."""
    n = len(values)
    mean = float(values.mean()) if n else float("nan")
    if n < 2:
        return mean, float("nan"), float("nan")
    from scipy.stats import t as t_dist

    half = float(t_dist.ppf(1 - (1 - level) / 2, n - 1) * values.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half


def sign_flip_p(differences: np.ndarray, *, draws: int = 20000, seed: int = 0) -> float:
    """Two-sided p-value of paired differences by flipping their signs (exact up to 16 tasks, else sampled).

    Unlike the t-interval it needs no spread: three tasks that all moved by
    +1 give p = 0.25, not certainty.

    Examples
    --------
    >>> sign_flip_p(np.array([1.0, 1.0, 1.0]))
    0.25
    """
    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return 1.0
    if d.size <= 16:
        signs = 1 - 2 * ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1)
    else:
        signs = np.random.default_rng(seed).choice([-1, 1], size=(draws, d.size))
    observed = abs(d.sum())
    return float(np.mean(np.abs(signs @ d) >= observed - 1e-12))


def mover_difference(d: float, d_low: float, d_high: float, e: float, e_low: float, e_high: float) -> tuple[float, float, float]:
    """``d - e`` with an interval from the intervals of two independent estimates (MOVER, Zou and Donner 2008).

    Examples
    --------
    >>> tuple(round(x, 3) for x in mover_difference(0.5, 0.3, 0.7, 0.2, 0.1, 0.3))
    (0.3, 0.076, 0.524)
    """
    value = d - e
    low = value - math.sqrt((d - d_low) ** 2 + (e_high - e) ** 2)
    high = value + math.sqrt((d_high - d) ** 2 + (e - e_low) ** 2)
    return value, low, high


def family_adjusted_comparison(scores: Any, *, marked_models: Any, effect: FamilyEffect | None,
                               level: float = 0.95) -> pd.DataFrame:
    """Models of the judge's family against every other model, as measured and net of the judge's self-preference.

    The judged tier's score of a model of the judge's own family is
    expected to be inflated by the same-family effect measured at
    calibration (mean judge-minus-human residual on same-family items minus
    that on other families, in scale units). For each marked model A and
    each other model B, per category and overall, the difference of their
    mean scores is taken task by task (paired), with a t-interval over
    tasks; the adjusted difference subtracts the effect, and its interval
    combines both intervals (MOVER).

    Parameters
    ----------
    scores : pandas.DataFrame
        The judged tier's scores (columns of :data:`SCORE_COLUMNS`).
    marked_models : iterable of str
        Models whose family is the judge's.
    effect : FamilyEffect or None
        The bundle's same-family effect; None or a None (or not finite)
        value: not measurable (the adjusted columns stay NaN and ``reason``
        says so).

    Returns
    -------
    pandas.DataFrame
        ``model``, ``other``, ``category``, ``n_tasks``, ``difference``,
        ``ci_low``, ``ci_high``, ``adjusted``, ``adjusted_low``,
        ``adjusted_high``, ``reason``.
    """
    check_level(level)
    df = _scores(scores)
    cell = df.groupby(["task_id", "category", "model"])["score"].mean().unstack("model")
    marked = [m for m in dict.fromkeys(str(m) for m in marked_models) if m in cell.columns]
    ok = effect is not None and effect.known
    rows = []
    for a in marked:
        for b in (m for m in cell.columns if m != a):
            pair = (cell[a] - cell[b]).dropna()
            by_cat = [(c, s.to_numpy()) for c, s in pair.groupby(level="category")] + [(ALL, pair.to_numpy())]
            for category, diffs in by_cat:
                d, low, high = _t_interval(diffs, level)
                adjusted, reason = (np.nan, np.nan, np.nan), None
                if not ok:
                    reason = ("the bundle's same-family effect was not measurable at calibration, so the comparison "
                              "cannot be adjusted for it")
                elif not np.isfinite(low):
                    reason = "fewer than two tasks, so the difference has no interval"
                else:
                    adjusted = mover_difference(d, low, high, float(effect.value), float(effect.ci_low),
                                                float(effect.ci_high))
                rows.append(FamilyComparisonRow(a, b, category, len(diffs), d, low, high, *adjusted, reason))
    return pd.DataFrame(rows, columns=list(FamilyComparisonRow.__dataclass_fields__))


def paired_comparison(before: Any, after: Any, *, value: str = "score", pass_threshold: float | None = None,
                      pairs: dict[str, str] | None = None, level: float = 0.95, top: int = 10) -> PairedComparison:
    """Two boards on the same tasks: per model and category, the change with a paired interval over tasks.

    Parameters
    ----------
    before, after : pandas.DataFrame
        One tier's scores of each board (columns of :data:`SCORE_COLUMNS`).
    value : {"score", "pass"}
        Compare mean scores, or pass rates (``score >= pass_threshold``).
    pairs : {before model: after model}, optional
        Which column of ``after`` continues which of ``before`` (two model
        versions); by default models of the same name.
    top : int
        How many tasks that moved most to list.

    Returns
    -------
    PairedComparison
        ``rows``: DataFrame per (model, category) and per model over all
        (``"(all)"``): ``model``, ``after_model``, ``category``, ``n_tasks``,
        ``before``, ``after``, ``change``, ``ci_low``, ``ci_high`` (t-interval
        over tasks), ``p_value`` (sign-flip test, :func:`sign_flip_p`),
        ``verdict`` ("gained" or "dropped" when the interval excludes 0 and
        the sign-flip p-value is below 1 - level, else "no clear change", or
        "too few tasks"); ``moved``: the ``top`` task changes of largest size
        (:class:`MovedTask`); ``unpaired``: models with no partner.
    """
    check_level(level)
    if value not in ("score", "pass"):
        raise ValueError(f"value must be 'score' or 'pass', got {value!r}")
    if value == "pass" and pass_threshold is None:
        raise ValueError("comparing pass rates needs pass_threshold")

    def cells(frame: Any, name: str) -> pd.DataFrame:
        df = _scores(frame, name)
        df = df.dropna(subset=["score"])
        if value == "pass":
            df = df.assign(score=(df["score"] >= pass_threshold).astype(float))
        return df.groupby(["task_id", "category", "model"])["score"].mean().unstack("model")

    a, b = cells(before, "before"), cells(after, "after")
    mapping = dict(pairs) if pairs else {m: m for m in a.columns if m in b.columns}
    unpaired = sorted(set(a.columns) - set(mapping)) + sorted(set(b.columns) - set(mapping.values()))
    a_cat = {t: c for t, c in a.index}
    b_cat = {t: c for t, c in b.index}
    moved_category = sorted(t for t in set(a_cat) & set(b_cat) if a_cat[t] != b_cat[t])
    if moved_category:
        raise ValueError(f"task {moved_category[0]!r} is in category {a_cat[moved_category[0]]!r} on one board and "
                         f"{b_cat[moved_category[0]]!r} on the other; compare boards of the same tasks")
    rows, moved = [], []
    for m_before, m_after in mapping.items():
        if m_before not in a.columns or m_after not in b.columns:
            missing = m_before if m_before not in a.columns else m_after
            raise ValueError(f"pair {m_before!r} -> {m_after!r}: model {missing!r} is not on its board")
        joined = pd.concat([a[m_before].droplevel("category").rename("before"),
                            b[m_after].droplevel("category").rename("after")], axis=1).dropna()
        joined = joined.assign(category=[a_cat[t] for t in joined.index], change=joined["after"] - joined["before"])
        for category, sub in [*joined.groupby("category"), (ALL, joined)]:
            change = sub["change"].to_numpy()
            d, low, high = _t_interval(change, level)
            p = sign_flip_p(change)
            if not np.isfinite(low):
                verdict = "too few tasks"
            elif low > 0 and p < 1 - level:
                verdict = "gained"
            elif high < 0 and p < 1 - level:
                verdict = "dropped"
            else:
                verdict = "no clear change"
            rows.append(ChangeRow(m_before, m_after, category, len(sub), sub["before"].mean(), sub["after"].mean(), d,
                                  low, high, p, verdict))
        moved += [MovedTask(m_before, t, r.category, float(r.before), float(r.after), float(r.change))
                  for t, r in joined.iterrows()]
    moved = sorted((m for m in moved if m.change != 0), key=lambda m: -abs(m.change))[:top]
    return PairedComparison(pd.DataFrame(rows, columns=list(ChangeRow.__dataclass_fields__)), moved, unpaired, value,
                            float(level))
