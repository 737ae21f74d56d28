"""Coverage of per-category, self-preference and TNR intervals on real data, the pool standing for the population.

A large real pool of items with human and judge labels is the population; its metric per category (or its
self-preference effect, its TNR) is the true value. Golden sets are drawn from it many times, the workbench's
intervals are computed on each, and the share that contains the true value is the coverage (nominal 95%).

Pools (../shared/data, see its README):

* ``summeval``: 6,400 SummEval items, the 4 dimensions as categories, 100 articles as task clusters; consensus =
  strict majority of the 3 expert raters (items without one left out, as the workbench does), the judge an
  AltTest LLM's 1-5 rating; pass threshold 3.
* ``play_favorites``: 5,305 Play Favorites items per judge, the 6 source datasets as categories, prompts as task
  clusters; consensus = rounded mean human rating (means of exactly .5 left out); ratings 0/1/2 as -1/0/+1;
  producer model and family of each answer (nine models both answer and judge).

Designs (how a golden set is drawn from the pool):

* ``items``: items at random;
* ``tasks``: tasks (articles, prompts) at random, ``per_task`` items of each (4 for SummEval, 3 for Play
  Favorites), so a category of 12 items has 3 or 4 task clusters;
* for self-preference also ``whole tasks``: every answer of each drawn prompt (up to 9).

Per-category sizes are uneven within each golden set: SummEval's 4 categories get 12, 30, 80 and 200 items, Play
Favorites' 6 get 8, 12, 20, 30, 80 and 200, rotated from one golden set to the next so that every category takes
every size. "Before" is the cluster bootstrap every category had until issue 26 (BCa for alpha and the mean signed
error, as :func:`workbench.stats.agreement_with_intervals` makes for the whole set), "after" is
:func:`workbench.stats.per_category_agreement` as shipped. Run by ``benchmarks/coverage_categories.py`` and
``tests/stats/test_category_interval_coverage.py``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from workbench import stats
from workbench.core.consensus import consensus_label

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CATEGORY_METRICS = ("exact_agreement", "krippendorff_alpha_ordinal", "mean_signed_error")
SUMMEVAL_JUDGES = ("gpt-4o", "llama-31", "mistral-v03", "gemini_pro")
PLAY_FAVORITES_JUDGES = ("gpt-4o", "anthropic.claude-3-5-sonnet-20241022-v2:0", "meta.llama3-1-8b-instruct-v1:0",
                         "mistral.mistral-large-2407-v1:0")
SIZES = {"summeval": (12, 30, 80, 200), "play_favorites": (8, 12, 20, 30, 80, 200)}
PER_TASK = {"summeval": 4, "play_favorites": 3}
FAMILIES = (("anthropic.", "anthropic"), ("meta.", "meta"), ("mistral.", "mistral"), ("gpt-", "openai"))


def available() -> bool:
    return (DATA / "alttest" / "summeval").is_dir() and (DATA / "play_favorites").is_dir()


def family_of(model: str) -> str:
    return next((fam for prefix, fam in FAMILIES if model.startswith(prefix)), "unknown")


@dataclass
class Pool:
    """A population: one row per item (consensus, judge, category, task, producer), its scale and threshold."""

    name: str
    judge: str
    frame: pd.DataFrame
    scale: tuple[int, ...]
    pass_threshold: int

    @property
    def judge_family(self) -> str:
        return family_of(self.judge)


def summeval(judge: str) -> Pool:
    folder = DATA / "alttest" / "summeval"
    humans = json.loads((folder / "human_annotations.json").read_text())
    llm = json.loads((folder / "llm_annotations.json").read_text())[judge]
    rows = []
    for item in sorted(humans[next(iter(humans))]):
        label = consensus_label([humans[r][item] for r in humans if item in humans[r]])
        if label is None or item not in llm:
            continue
        article, system, dimension = item.split("__")
        rows.append((item, article, dimension, label, int(llm[item]), system, "unknown"))
    frame = pd.DataFrame(rows, columns=["item", "task", "category", "consensus", "judge", "model", "family"])
    return Pool("summeval", judge, frame, (1, 2, 3, 4, 5), 3)


_PLAY_FAVORITES: pd.DataFrame | None = None


def play_favorites(judge: str) -> Pool:
    global _PLAY_FAVORITES
    if _PLAY_FAVORITES is None:
        _PLAY_FAVORITES = pd.read_csv(DATA / "play_favorites" / "Logical_correctness.csv")
    df = _PLAY_FAVORITES[_PLAY_FAVORITES["judge"] == judge]
    df = df[(df["gt"] - df["gt"].round()).abs() != 0.5].drop_duplicates(["prompt_id", "model"])
    frame = pd.DataFrame({"item": (df["prompt_id"] + "__" + df["model"]).to_numpy(),
                          "task": df["prompt_id"].to_numpy(), "category": df["dataset"].to_numpy(),
                          "consensus": df["gt"].round().astype(int).to_numpy() - 1,
                          "judge": df["rating"].astype(int).to_numpy() - 1, "model": df["model"].to_numpy(),
                          "family": [family_of(m) for m in df["model"]]})
    return Pool("play_favorites", judge, frame, (-1, 0, 1), 0)


def pool(name: str, judge: str) -> Pool:
    return {"summeval": summeval, "play_favorites": play_favorites}[name](judge)


def draw(rows: np.ndarray, tasks: np.ndarray, n: int, design: str, rng: np.random.Generator,
         per_task: int) -> np.ndarray:
    """Row positions of a sample of ``n`` of ``rows`` (positions), items at random or ``per_task`` per task."""
    if design == "items":
        return rng.choice(rows, size=min(n, len(rows)), replace=False)
    order = rng.permutation(np.unique(tasks[rows]))
    by_task = pd.Series(rows).groupby(tasks[rows]).indices
    chosen: list[int] = []
    for task in order:
        members = rows[by_task[task]]
        take = min(per_task, len(members), n - len(chosen))
        chosen.extend(rng.choice(members, size=take, replace=False))
        if len(chosen) >= n:
            break
    return np.asarray(chosen)


@dataclass
class Tally:
    """Per key (metric, method, size): intervals given, intervals that covered, zero-width ones, none given."""

    given: dict = field(default_factory=lambda: defaultdict(int))
    covered: dict = field(default_factory=lambda: defaultdict(int))
    zero_width: dict = field(default_factory=lambda: defaultdict(int))
    withheld: dict = field(default_factory=lambda: defaultdict(int))
    width: dict = field(default_factory=lambda: defaultdict(float))

    def add(self, key: tuple, truth: float, low, high) -> None:
        if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
            self.withheld[key] += 1
            return
        self.given[key] += 1
        self.covered[key] += int(low - 1e-9 <= truth <= high + 1e-9)
        self.zero_width[key] += int(high - low <= 1e-12)
        self.width[key] += high - low

    def coverage(self, key: tuple) -> float:
        return self.covered[key] / self.given[key] if self.given[key] else float("nan")

    def mean_width(self, key: tuple) -> float:
        return self.width[key] / self.given[key] if self.given[key] else float("nan")

    def merge(self, other: Tally) -> None:
        for name in ("given", "covered", "zero_width", "withheld", "width"):
            mine = getattr(self, name)
            for k, v in getattr(other, name).items():
                mine[k] += v


def category_truths(p: Pool) -> dict[str, dict[str, float]]:
    out = {}
    for cat, sub in p.frame.groupby("category"):
        m = stats.agreement_metrics(sub["consensus"].to_numpy(), sub["judge"].to_numpy(), scale=p.scale,
                                    pass_threshold=p.pass_threshold)
        out[cat] = {name: m[name] for name in CATEGORY_METRICS}
    return out


def category_coverage(p: Pool, *, design: str, samples: int, resamples: int = 1000, seed: int = 0,
                      before: bool = True, sizes: tuple[int, ...] | None = None,
                      min_category_items: int = 10) -> Tally:
    """Golden sets of uneven categories drawn from the pool; tally keyed (metric, "before" | "after", size)."""
    truth = category_truths(p)
    cats = sorted(truth)
    sizes = sizes or SIZES[p.name]
    sizes = tuple(sizes[i % len(sizes)] for i in range(len(cats)))  # one size per category
    frame = p.frame
    tasks = frame["task"].to_numpy(dtype=object)
    rows_of = {cat: np.flatnonzero(frame["category"].to_numpy() == cat) for cat in cats}
    c, j = frame["consensus"].to_numpy(), frame["judge"].to_numpy()
    rng = np.random.default_rng(seed)
    tally = Tally()
    for s in range(samples):
        shift = s % len(cats)
        size_of = {cat: sizes[(i + shift) % len(cats)] for i, cat in enumerate(cats)}
        picked = {cat: draw(rows_of[cat], tasks, size_of[cat], design, rng, PER_TASK[p.name]) for cat in cats}
        idx = np.concatenate([picked[cat] for cat in cats])
        after = stats.per_category_agreement(c[idx], j[idx], frame["category"].to_numpy()[idx], tasks[idx],
                                             scale=p.scale, pass_threshold=p.pass_threshold, resamples=resamples,
                                             seed=s, min_category_items=min_category_items)
        for cat in cats:
            n = size_of[cat]
            for m in CATEGORY_METRICS:
                e = after[cat][m]
                tally.add((m, "after", n), truth[cat][m], e["ci_low"], e["ci_high"])
            if before:
                sel = picked[cat]
                r = stats.agreement_with_intervals(c[sel], j[sel], tasks[sel], scale=p.scale,
                                                   pass_threshold=p.pass_threshold, resamples=resamples, seed=s)
                for m in CATEGORY_METRICS:
                    e = r["metrics"][m]
                    tally.add((m, "before", n), truth[cat][m], e["ci_low"], e["ci_high"])
    return tally


def _self_preference(frame: pd.DataFrame, p: Pool, *, interval: str, resamples: int, seed: int) -> dict:
    return stats.self_preference(frame["consensus"].to_numpy(), frame["judge"].to_numpy(), scale=p.scale,
                                 producer_model=frame["model"].to_numpy(), producer_family=frame["family"].to_numpy(),
                                 judge_model=p.judge, judge_family=p.judge_family,
                                 category=frame["category"].to_numpy(), clusters=frame["task"].to_numpy(),
                                 resamples=resamples, seed=seed, interval=interval)


def bias_coverage(p: Pool, *, design: str, sizes: tuple[int, ...], samples: int, resamples: int = 1000,
                  seed: int = 0, before: bool = True) -> Tally:
    """Self-preference effects (same model, same family) and TPR / TNR of golden sets drawn from one judge's pool.

    Tally keyed (effect or "tnr" / "tpr", "before" | "after" | "wilson", size): before = the expanded percentile
    interval, after = the shipped default; TPR and TNR by the report's own interval (unchanged by issue 26).
    """
    full = _self_preference(p.frame, p, interval="percentile", resamples=10, seed=0)
    truth = {k: full[k]["value"] for k in ("same_model", "same_family")}
    whole = stats.agreement_metrics(p.frame["consensus"], p.frame["judge"], scale=p.scale,
                                    pass_threshold=p.pass_threshold)
    truth.update(tnr=whole["tnr"], tpr=whole["tpr"])
    rows = np.arange(len(p.frame))
    tasks = p.frame["task"].to_numpy(dtype=object)
    per_task = 9 if design == "whole tasks" else PER_TASK[p.name]
    rng = np.random.default_rng(seed)
    tally = Tally()
    methods = {"after": stats.bias.INTERVAL, **({"before": "expanded"} if before else {})}
    for n in sizes:
        for s in range(samples):
            sub = p.frame.iloc[draw(rows, tasks, n, "items" if design == "items" else "tasks", rng, per_task)]
            for label, method in methods.items():
                r = _self_preference(sub, p, interval=method, resamples=resamples, seed=s)
                for k in ("same_model", "same_family"):
                    if truth[k] is not None:
                        tally.add((k, label, n), truth[k], r[k]["ci_low"], r[k]["ci_high"])
            a = stats.agreement_with_intervals(sub["consensus"].to_numpy(), sub["judge"].to_numpy(),
                                               sub["task"].to_numpy(), scale=p.scale,
                                               pass_threshold=p.pass_threshold, resamples=resamples, seed=s)
            for k in ("tnr", "tpr"):
                tally.add((k, "wilson", n), truth[k], a["metrics"][k]["ci_low"], a["metrics"][k]["ci_high"])
    return tally
