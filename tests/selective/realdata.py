"""Real labels for selective judging: Play Favorites' logical-correctness ratings (../shared/data), nine LLM judges
and the humans' mean rating of the same 5,305 answers.

The data carries no judge confidence, so one is derived honestly from real labels: a judge's confidence on an
answer is the share of the other eight judges that give the same rating (a panel's agreement, in the spirit of
Trust or Escalate's Simulated Annotators, which read confidence off several simulated annotators). It never sees
the human label. The human label is the humans' mean rating (0-2) rounded half up, on -1 / 0 / +1 as the
judges' 0 / 1 / 2. Tests skip when the data is absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "play_favorites" / "Logical_correctness.csv"


@dataclass(frozen=True)
class JudgeOnRealData:
    judge: str
    keys: np.ndarray  # "prompt_id|generator"
    verdict: np.ndarray  # -1 / 0 / +1
    human: np.ndarray  # -1 / 0 / +1
    confidence: np.ndarray  # share of the other judges with the same rating

    @property
    def agree(self) -> np.ndarray:
        return self.verdict == self.human


@lru_cache(maxsize=None)
def judge_on_real_data(judge: str) -> JudgeOnRealData:
    if not DATA.exists():
        pytest.skip(f"the real data is absent ({DATA})")
    import pandas as pd

    d = pd.read_csv(DATA)
    wide = d.pivot_table(index=["prompt_id", "model"], columns="judge", values="rating", aggfunc="first")
    gt = d.groupby(["prompt_id", "model"])["gt"].first().reindex(wide.index).to_numpy()
    rated = wide[judge].notna().to_numpy()
    verdict = wide[judge].to_numpy()[rated]
    others = wide.drop(columns=[judge]).to_numpy()[rated]
    confidence = np.nansum(others == verdict[:, None], axis=1) / np.sum(~np.isnan(others), axis=1)
    keys = np.array([f"{p}|{m}" for p, m in wide.index])[rated]
    return JudgeOnRealData(judge, keys, verdict.astype(int) - 1, np.floor(gt[rated] + 0.5).astype(int) - 1,
                           confidence)
