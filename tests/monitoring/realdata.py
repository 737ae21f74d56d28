"""Real labeled data for the monitoring tests: Play Favorites' logical-correctness ratings (../shared/data), one
LLM judge's verdict and the humans' mean rating of the same answers, both on -1 / 0 / +1.

The humans' mean rating (0-2) rounded half up gives the human label; the judge's 0 / 1 / 2 gives its verdict; the
source dataset is the category and the answer's length the input length. Tests skip when the data is absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "play_favorites" / "Logical_correctness.csv"
JUDGE = "gpt-4o"


@dataclass(frozen=True)
class Rows:
    key: np.ndarray  # "prompt_id|generator"
    category: np.ndarray
    human: np.ndarray
    judge: np.ndarray
    length: np.ndarray
    gt: np.ndarray  # the humans' mean rating, 0-2

    def ratings(self, i: int) -> list[int]:
        """Individual ratings (-1 / 0 / +1) with the row's mean: three raters (two where the mean is a half), the
        most concentrated such ratings (the data carries only their mean)."""
        n = 2 if abs(self.gt[i] * 2 - round(self.gt[i] * 2)) < 1e-6 and abs(self.gt[i] * 3 - round(self.gt[i] * 3)) > 1e-3 \
            else 3
        total = int(round(self.gt[i] * n))
        base, extra = divmod(total, n)
        return [base + (1 if r < extra else 0) - 1 for r in range(n)]


@lru_cache(maxsize=None)
def load(judge: str = JUDGE) -> Rows:
    if not DATA.exists():
        pytest.skip(f"real data not present at {DATA}")
    import pandas as pd

    d = pd.read_csv(DATA)
    d = d[d["judge"] == judge].reset_index(drop=True)
    human = np.floor(d["gt"].to_numpy() + 0.5).astype(int) - 1
    return Rows((d["prompt_id"].astype(str) + "|" + d["model"].astype(str)).to_numpy(), d["dataset"].to_numpy(),
                human, d["rating"].to_numpy().astype(int) - 1, d["pred_length"].to_numpy().astype(int), d["gt"].to_numpy())
