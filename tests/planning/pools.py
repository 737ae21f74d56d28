"""Pools for the labeling simulations: the demo generator's model at chosen prevalences, and real public data."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np

from workbench.features.demo.generator import simulate_items, simulate_judge, with_effects
from validation.validate_shared_data import family_of as _family
from workbench.stats.label_simulation import Pool

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def demo_pool(*, n_items: int, fail_share: float, seed: int, error: float = 0.08, self_preference: float = 0.0,
              leniency: float = 0.0, judge_family: str = "openai") -> Pool:
    """A pool from the demo generator's model (true score, a planted judge), with a chosen share of fails.

    The consensus is the item's true score: the pool stands for a golden set whose every item was adjudicated.
    """
    rest = 1 - fail_share
    cfg = replace(with_effects(n_items=n_items, seed=seed, error=error, self_preference=self_preference,
                               leniency=leniency), true_distribution=(fail_share, rest * 0.7, rest * 0.3))
    rng = random.Random(seed)
    items = simulate_items(cfg, rng)
    judged = {r["item_id"]: r["score"] for r in simulate_judge(cfg.judges[0], items, rng)
              if r["run"] == 0 and r["repeat"] == 0}
    return Pool(consensus=np.array([it.truth for it in items]), judge=np.array([judged[it.id] for it in items]),
                clusters=np.array([it.task_id for it in items], dtype=object),
                category=np.array([it.category for it in items], dtype=object),
                family=np.array([it.producer_family for it in items]),
                model=np.array([it.producer_model for it in items]),
                judge_model="gpt-4o", judge_family=judge_family)


def play_favorites_pool(judge: str) -> Pool:
    """Play Favorites (logical correctness): one judge's 0/1/2 ratings against the rounded mean human rating."""
    import pandas as pd

    df = pd.read_csv(SHARED / "play_favorites" / "Logical_correctness.csv")
    df = df[df["judge"] == judge]
    df = df[(df["gt"] - df["gt"].round()).abs() != 0.5]  # a split human vote has no consensus
    return Pool(consensus=df["gt"].round().astype(int).to_numpy() - 1, judge=df["rating"].astype(int).to_numpy() - 1,
                clusters=df["prompt_id"].to_numpy(dtype=object), category=df["dataset"].to_numpy(dtype=object),
                family=np.array([_family(m) for m in df["model"]]), model=df["model"].to_numpy(dtype=object),
                judge_model=judge, judge_family=_family(judge))


def mtbench_pool(judge: str) -> Pool:
    """mtbench (AltTest): a judge's model_a / tie / model_b against the first human's label (+1 / 0 / -1)."""
    folder = SHARED / "alttest" / "mtbench"
    humans = json.loads((folder / "human_annotations.json").read_text())
    llm = json.loads((folder / "llm_annotations.json").read_text())[judge]
    code = {"model_a": 1, "tie": 0, "model_b": -1}
    first: dict[str, int] = {}
    for rater in sorted(humans):
        for item, label in humans[rater].items():
            first.setdefault(item, code[label])
    ids = [i for i in sorted(first) if i in llm]
    return Pool(consensus=np.array([first[i] for i in ids]), judge=np.array([code[llm[i]] for i in ids]),
                clusters=np.array([i.split("__")[0] for i in ids], dtype=object),
                category=np.array(["mtbench"] * len(ids), dtype=object),
                family=np.array(["unknown"] * len(ids)), model=np.array(["unknown"] * len(ids)),
                judge_model=judge, judge_family="none")
