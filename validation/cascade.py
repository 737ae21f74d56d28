"""Does a cascade of judges pay for itself? `--cascade`'s joint thresholds on real labels over random splits.

For each case (a dataset, two or three judges in cascade order, a target agreement A, a risk D and a number of
calibration items), over ``--splits`` random calibration/test splits of the dataset's items (seeded), the
thresholds are chosen on the calibration items as ``calibrate --selective --cascade`` chooses them
(``stats.selective.choose_cascade``: learn then test, the risk held over the whole choice) and applied to the test
items, which measure:

- *coverage*: the share of the test items the cascade grades;
- *the guarantee*: a split *fails* when the realised agreement on the test items the cascade keeps is below A. The
  guarantee holds when at most D of the splits fail, up to binomial noise: at most D x S + 2.33 sd of S splits
  (a one-sided 99% tolerance, the selective benchmarks' rule);
- against *the best single judge of the same procedure* (the single-judge configuration with the highest coverage
  that passed the same fixed sequence; the family holds every judge alone): the cascade's test coverage is at least
  its in every split, by construction (the configurations the sequence passes are nested, and the pick has the
  most coverage on the calibration items, so it keeps a superset of the single judge's items on any items);
- against *each judge tested on its own* (``calibrate -j J --selective``: fixed-sequence testing of its thresholds
  on all the calibration items at risk D): the splits where the cascade covers at least the best of them, and the
  mean coverages. This comparison is not guaranteed: no procedure that holds the risk at D over a choice between
  judges can always cover what each judge tested alone at D covers (if it certified whenever either did, it would
  err whenever either erred, up to 2 D);
- the former cascade for reference (each judge calibrated alone at risk D / k on what the ones before it left).

The data (``../shared/data``; the script exits when it is absent):

- Play Favorites' logical-correctness ratings, read as ``tests/selective/realdata.py`` reads them: 5,305 answers
  rated by nine LLM judges and by humans; a judge's confidence is the share of the eight other judges giving its
  rating, the human label the humans' mean rating rounded half up.
- SummEval (AltTest's copy): 6,400 summaries x dimensions rated 1-5 by three experts and six LLM judges. Each rating
  is put on the workbench's scale (1-2: -1, 3: 0, 4-5: +1); the human label is the experts' strict majority (items
  without one are left out, as the workbench's consensus leaves them); a judge's confidence is the share of the
  five other LLM judges giving its rating. SummEval was not used to choose anything of the method (the ordering
  share, 0.2, was chosen on Play Favorites): it is the held-out check.

    python validation/cascade.py [--splits 200] [--seed 0] [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.stats.selective import choose_cascade, choose_threshold, route

DATA = ROOT.parent / "shared" / "data"
PLAY_FAVORITES = DATA / "play_favorites" / "Logical_correctness.csv"
SUMMEVAL = DATA / "alttest" / "summeval"
LLAMA_8B, MISTRAL_7B = "meta.llama3-1-8b-instruct-v1:0", "mistral.mistral-7b-instruct-v0:2"
SONNET_35 = "anthropic.claude-3-5-sonnet-20241022-v2:0"


@dataclass(frozen=True)
class Case:
    dataset: str  # "play_favorites" or "summeval"
    judges: tuple[str, ...]  # in cascade order
    target: float
    risk: float
    n_calibration: int

    @property
    def name(self) -> str:
        short = {LLAMA_8B: "llama-3.1-8b", MISTRAL_7B: "mistral-7b", SONNET_35: "claude-3.5-sonnet"}
        return " -> ".join(short.get(j, j) for j in self.judges)


#: Fixed before any split was run: weak then strong judges, as the issue's cascades are, and a three-judge cascade
#: on each dataset.
CASES = (
    Case("play_favorites", (LLAMA_8B, "gpt-4o"), 0.9, 0.1, 500),
    Case("play_favorites", (LLAMA_8B, SONNET_35), 0.9, 0.1, 500),
    Case("play_favorites", (MISTRAL_7B, "gpt-4o"), 0.9, 0.1, 500),
    Case("play_favorites", (MISTRAL_7B, SONNET_35), 0.95, 0.1, 1000),
    Case("play_favorites", (LLAMA_8B, "gpt-4o"), 0.95, 0.05, 1000),
    Case("play_favorites", (LLAMA_8B, MISTRAL_7B, SONNET_35), 0.9, 0.1, 1000),
    Case("summeval", ("llama-31", "mistral-v03"), 0.8, 0.1, 1000),
    Case("summeval", ("gpt-4o-mini", "mistral-v03"), 0.8, 0.1, 1000),
    Case("summeval", ("gemini_flash", "gpt-4o"), 0.8, 0.1, 1000),
    Case("summeval", ("gpt-4o", "gpt-4o-mini", "mistral-v03"), 0.8, 0.1, 1000),
)


@dataclass(frozen=True)
class Pool:
    """Items by judges: each judge's confidence (NaN: it did not rate the item) and whether it agrees with the
    human label."""

    confidence: np.ndarray
    agree: np.ndarray


@cache
def pool(dataset: str, judges: tuple[str, ...]) -> Pool:
    if dataset == "play_favorites":
        from tests.selective.realdata import judge_on_real_data

        rows = [judge_on_real_data(j) for j in judges]
        keys = sorted(set.intersection(*(set(r.keys) for r in rows)))
        at = [{k: i for i, k in enumerate(r.keys)} for r in rows]
        conf = np.column_stack([r.confidence[[a[k] for k in keys]] for r, a in zip(rows, at)])
        agree = np.column_stack([r.agree[[a[k] for k in keys]] for r, a in zip(rows, at)])
        return Pool(conf, agree)
    human = json.loads((SUMMEVAL / "human_annotations.json").read_text())
    llm = json.loads((SUMMEVAL / "llm_annotations.json").read_text())
    ids = sorted(human[next(iter(human))])
    scale = np.vectorize(lambda r: -1 if r <= 2 else (0 if r == 3 else 1))
    experts = scale(np.array([[human[r][i] for r in human] for i in ids]))
    majority = np.array([next((v for v in (-1, 0, 1) if (row == v).sum() >= 2), 9) for row in experts])
    names = list(llm)
    rated = scale(np.array([[llm[m][i] for m in names] for i in ids]))
    keep = majority != 9
    conf, agree = [], []
    for j in judges:
        col = names.index(j)
        others = np.delete(rated, col, axis=1)
        conf.append((others == rated[:, col:col + 1]).mean(axis=1))
        agree.append(rated[:, col] == majority)
    return Pool(np.column_stack(conf)[keep], np.column_stack(agree)[keep])


@dataclass(frozen=True)
class Split:
    coverage: float  # the cascade's, on the test items
    failed: bool  # realised agreement on the kept test items below the target
    single_in_procedure: float  # test coverage of the best single-judge configuration that passed
    alone: tuple[float, ...]  # each judge tested on its own
    former: float  # the former cascade (each judge at risk / k on what the ones before it left)
    later_share: float  # share of the test items graded by the judges after the first
    seconds: float  # choose_cascade's time


def _coverage_alone(p: Pool, cal: np.ndarray, test: np.ndarray, j: int, case: Case, risk: float) -> tuple[
        float, float | None]:
    c = choose_threshold(p.confidence[cal, j], p.agree[cal, j], target=case.target, risk=risk)
    if not c.guaranteed:
        return 0.0, None
    return float(np.mean(p.confidence[test, j] >= c.threshold)), c.threshold


def _former(p: Pool, cal: np.ndarray, test: np.ndarray, case: Case) -> float:
    k = p.confidence.shape[1]
    left, thresholds = cal, []
    for j in range(k):
        c = choose_threshold(p.confidence[left, j], p.agree[left, j], target=case.target, risk=case.risk / k)
        thresholds.append(c.threshold)
        if c.threshold is not None:
            left = left[~(p.confidence[left, j] >= c.threshold)]
    return float(np.mean(route(p.confidence[test], tuple(thresholds)) >= 0))


def one_split(case: Case, p: Pool, rng: np.random.Generator) -> Split:
    order = rng.permutation(len(p.confidence))
    cal, test = order[:case.n_calibration], order[case.n_calibration:]
    start = time.perf_counter()
    chosen = choose_cascade(p.confidence[cal], p.agree[cal], target=case.target, risk=case.risk)
    seconds = time.perf_counter() - start
    coverage, failed, later = 0.0, False, 0.0
    if chosen.guaranteed:
        stage = route(p.confidence[test], chosen.thresholds)
        kept = np.flatnonzero(stage >= 0)
        coverage, later = len(kept) / len(test), float(np.mean(stage > 0))
        failed = bool(len(kept)) and p.agree[test][kept, stage[kept]].mean() < case.target
    single = 0.0
    if chosen.best_single is not None:
        j, t, _ = chosen.best_single
        single = float(np.mean(p.confidence[test, j] >= t))
    alone = tuple(_coverage_alone(p, cal, test, j, case, case.risk)[0] for j in range(len(case.judges)))
    return Split(coverage, failed, single, alone, _former(p, cal, test, case), later, seconds)


@dataclass(frozen=True)
class CaseResult:
    case: Case
    splits: tuple[Split, ...]

    @property
    def n(self) -> int:
        return len(self.splits)

    @property
    def failures(self) -> int:
        return sum(s.failed for s in self.splits)

    @property
    def allowed(self) -> int:
        """Failures the guarantee allows over these splits: D x S + 2.33 sd (one-sided 99%)."""
        d = self.case.risk
        return math.floor(d * self.n + 2.33 * math.sqrt(self.n * d * (1 - d)))

    @property
    def below_single_in_procedure(self) -> int:
        return sum(s.coverage < s.single_in_procedure - 1e-12 for s in self.splits)

    @property
    def at_least_alone(self) -> int:
        return sum(s.coverage >= max(s.alone) - 1e-12 for s in self.splits)

    @property
    def above_alone(self) -> int:
        return sum(s.coverage > max(s.alone) + 1e-12 and s.later_share > 0 for s in self.splits)

    def mean(self, what: str) -> float:
        values = {"cascade": [s.coverage for s in self.splits], "best alone": [max(s.alone) for s in self.splits],
                  "former": [s.former for s in self.splits],
                  "later share": [s.later_share for s in self.splits]}[what]
        return float(np.mean(values))


def run(case: Case, splits: int, seed: int) -> CaseResult:
    p = pool(case.dataset, case.judges)
    rng = np.random.default_rng(seed)
    return CaseResult(case, tuple(one_split(case, p, rng) for _ in range(splits)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not PLAY_FAVORITES.exists() or not SUMMEVAL.exists():
        print(f"the shared data is absent ({DATA})")
        return 1
    print("| data | cascade | A | D | calibration items | splits below A (allowed) | below the best single judge "
          "of the procedure | at least the best judge alone | above it, later judges grading | coverage: cascade, "
          "best judge alone, former cascade | later judges' share | time a choice |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for case in CASES:
        r = run(case, args.splits, args.seed)
        print(f"| {case.dataset.replace('_', ' ')} | {case.name} | {case.target} | {case.risk} | "
              f"{case.n_calibration:,} | {r.failures} of {r.n} ({r.allowed}) | {r.below_single_in_procedure} | "
              f"{r.at_least_alone} of {r.n} | {r.above_alone} | {r.mean('cascade'):.3f}, {r.mean('best alone'):.3f}, "
              f"{r.mean('former'):.3f} | {r.mean('later share'):.3f} | "
              f"{1000 * np.median([s.seconds for s in r.splits]):.0f} ms |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
