"""The issue's synthetic board: models x tasks in categories x repeats, graded by a mechanical and a judged tier.

Each (task, model) has a latent quality ``1.2 + ability - difficulty``
(ability ~ N(0, 0.2) per model, difficulty ~ N(0, 0.3) per task); each
repeat adds run noise N(0, 0.8). The mechanical tier passes (0) when quality
plus noise is above 0, else fails (-1): about 92% pass. The judged tier sees
the same run through its own noise N(0, 0.4): -1 below 0, +1 (exceptional)
above 3.2, else 0. Planted:

* ``worse``: model m1 is much worse on every task of category c2 (quality - 3.5: it passes about 1%);
* ``exceptional``: model m2 is exceptional on three tasks outside c2 (quality + 3.5: +1 about 95%, else 2%);
* ``favoured``: the judge (family ``anthropic``) scores model m0 (family ``anthropic``) higher (judged noise + bias).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

FAMILIES = ("anthropic", "openai", "google", "meta", "mistral", "human")
JUDGE_FAMILY = "anthropic"


@dataclass
class Synthetic:
    items: pd.DataFrame   # task_id, category, model, family, repeat, mechanical, judged
    worse: set[tuple[str, str]]
    exceptional: set[tuple[str, str]]
    favoured: str
    bias: float

    def tier(self, name: str) -> pd.DataFrame:
        return self.items[["task_id", "category", "model", "repeat", name]].rename(columns={name: "score"})

    @property
    def planted(self) -> set[tuple[str, str]]:
        return self.worse | self.exceptional


def synthetic_board(seed: int, *, n_models: int = 4, n_tasks: int = 30, n_categories: int = 4, repeats: int = 3,
                    bias: float = 0.6, plant: bool = True) -> Synthetic:
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(n_models)]
    tasks = [f"t{i:02d}" for i in range(n_tasks)]
    category = {t: f"c{i % n_categories}" for i, t in enumerate(tasks)}
    ability = dict(zip(models, rng.normal(0, 0.2, n_models)))
    difficulty = dict(zip(tasks, rng.normal(0, 0.3, n_tasks)))
    worse = {(t, "m1") for t in tasks if category[t] == "c2"} if plant else set()
    outside = [t for t in tasks if category[t] != "c2"]
    exceptional = {(t, "m2") for t in rng.choice(outside, 3, replace=False)} if plant else set()
    rows = []
    for t in tasks:
        for m in models:
            q = 1.2 + ability[m] - difficulty[t] - 3.5 * ((t, m) in worse) + 3.5 * ((t, m) in exceptional)
            for r in range(repeats):
                run = q + rng.normal(0, 0.8)
                judged = run + rng.normal(0, 0.4) + (bias if m == "m0" and plant else 0.0)
                rows.append({"task_id": t, "category": category[t], "model": m,
                             "family": FAMILIES[models.index(m) % len(FAMILIES)], "repeat": r,
                             "mechanical": 0 if run > 0 else -1,
                             "judged": -1 if judged < 0 else (1 if judged > 3.2 else 0)})
    return Synthetic(pd.DataFrame(rows), worse, exceptional, "m0", bias)
