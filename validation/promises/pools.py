"""Real pools of human and LLM-judge labels of the same items (../shared/data), as plain arrays, for measuring the
rates the workbench promises: each item's consensus label (as the workbench forms it), one judge's verdict, its
task cluster and its category.

A *planted* pool keeps real items, their real consensus and clusters, and changes what the measurement needs
known: the share of consensus fails (items dropped at random) and the judge's TNR (which consensus fails the
judge catches, chosen at random in the planted share), so that a coverage can be checked at the value a user had.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

from workbench.core.consensus import consensus_label

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
PLAY_FAVORITES = DATA / "play_favorites" / "Logical_correctness.csv"
SUMMEVAL = DATA / "alttest" / "summeval"


@dataclass(frozen=True)
class Pool:
    """Items with a consensus and a judge verdict; ``truth`` is every rate measured on all of them."""

    name: str
    consensus: np.ndarray
    judge: np.ndarray
    clusters: np.ndarray
    categories: np.ndarray
    scale: tuple[int, ...]
    pass_threshold: int

    def __len__(self) -> int:
        return int(self.consensus.size)

    @property
    def fail_share(self) -> float:
        return float(np.mean(self.consensus < self.pass_threshold))

    def rates(self) -> dict[str, float]:
        """Exact agreement, TPR and TNR of the whole pool: the values an interval from a subsample should hold."""
        human_pass = self.consensus >= self.pass_threshold
        judge_pass = self.judge >= self.pass_threshold
        return {"exact_agreement": float(np.mean(self.consensus == self.judge)),
                "tpr": float(np.mean(judge_pass[human_pass])), "tnr": float(np.mean(~judge_pass[~human_pass]))}

    def subset(self, keep: np.ndarray, name: str | None = None) -> Pool:
        return replace(self, name=name or self.name, consensus=self.consensus[keep], judge=self.judge[keep],
                       clusters=self.clusters[keep], categories=self.categories[keep])


def available() -> bool:
    return PLAY_FAVORITES.exists() and SUMMEVAL.exists()


@cache
def _play_favorites():
    import pandas as pd

    df = pd.read_csv(PLAY_FAVORITES)
    df["item_id"] = df["prompt_id"] + "__" + df["model"]
    items = df.drop_duplicates("item_id")
    items = items[(items["gt"] - items["gt"].round()).abs() != 0.5].set_index("item_id").sort_index()
    return df, items


def play_favorites(judge: str, pass_threshold: int = 0) -> Pool:
    """Play Favorites' logical correctness: consensus = the rounded mean human rating (means of exactly .5 left out),
    -1 / 0 / +1; clusters are prompts, categories the six source datasets. Pass threshold 0: 1% fails; 1: 6%."""
    df, items = _play_favorites()
    scores = df[df["judge"] == judge].drop_duplicates("item_id").set_index("item_id")["rating"]
    joined = items.join(scores.rename("score"), how="inner")
    return Pool(f"Play Favorites, {judge.split('.')[-1].split('-v')[0]}, pass >= {pass_threshold}",
                joined["gt"].round().astype(int).to_numpy() - 1, joined["score"].astype(int).to_numpy() - 1,
                joined["prompt_id"].to_numpy(), joined["dataset"].to_numpy(), (-1, 0, 1), pass_threshold)


@cache
def _summeval():
    humans = json.loads((SUMMEVAL / "human_annotations.json").read_text())
    llms = json.loads((SUMMEVAL / "llm_annotations.json").read_text())
    ids = sorted({i for anns in humans.values() for i in anns})
    consensus = {i: consensus_label([int(anns[i]) for anns in humans.values() if i in anns]) for i in ids}
    return [i for i in ids if consensus[i] is not None], consensus, llms


def summeval(judge: str, pass_threshold: int = 3) -> Pool:
    """SummEval: 1-5 ratings by 3 experts, consensus by strict majority (items without one left out, as the
    workbench leaves them); clusters are the 100 articles, categories the four quality dimensions."""
    ids, consensus, llms = _summeval()
    ids = [i for i in ids if i in llms[judge]]
    return Pool(f"SummEval, {judge}, pass >= {pass_threshold}", np.array([consensus[i] for i in ids]),
                np.array([int(llms[judge][i]) for i in ids]), np.array([i.split("__")[0] for i in ids]),
                np.array([i.split("__")[2] for i in ids]), (1, 2, 3, 4, 5), pass_threshold)


def planted(pool: Pool, *, fail_share: float | None = None, tnr: float | None = None, seed: int = 0) -> Pool:
    """The pool with consensus fails dropped at random down to ``fail_share``, and the judge catching exactly
    ``round(tnr * fails)`` of the fails left (chosen at random; a caught fail gets the scale's lowest value, a
    missed one its highest)."""
    rng = np.random.default_rng(seed)
    fails = np.flatnonzero(pool.consensus < pool.pass_threshold)
    keep = np.ones(len(pool), dtype=bool)
    parts = []
    if fail_share is not None:
        n_pass = len(pool) - fails.size
        want = round(fail_share * n_pass / (1 - fail_share))
        if want > fails.size:
            raise ValueError(f"{pool.name} has {fails.size} fails, fewer than the {want} a share of {fail_share} needs")
        keep[rng.choice(fails, size=fails.size - want, replace=False)] = False
        parts.append(f"{fail_share:.1%} fails")
    out = pool.subset(keep)
    if tnr is not None:
        fails = np.flatnonzero(out.consensus < out.pass_threshold)
        caught = np.zeros(fails.size, dtype=bool)
        caught[rng.choice(fails.size, size=round(tnr * fails.size), replace=False)] = True
        judge = out.judge.copy()
        judge[fails] = np.where(caught, min(pool.scale), max(pool.scale))
        out = replace(out, judge=judge)
        parts.append(f"TNR planted at {tnr:g}")
    return replace(out, name=f"{pool.name} ({', '.join(parts)})")
