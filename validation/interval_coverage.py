"""Coverage of the calibration report's intervals on real data (Play Favorites, ../shared/data).

Draw many random subsamples of 100 items, compute every interval the report
carries on each, and count how often it contains the value computed on all
5,305 items: a 95% interval should contain it about 95% of the time. This is
how the interval methods were chosen (issue 10): proportions (exact
agreement, TPR, TNR, per category) by Wilson, Jeffreys, Clopper-Pearson or
(since issue 51) the smallest interval holding Wilson's and the modified
Jeffreys', on the effective number of items; the other metrics by the percentile or the
BCa bootstrap; the self-preference effects by those two or the studentized
(bootstrap-t) one, and since issue 26 by the Dirichlet-process posterior
(stats.posterior), which keeps its coverage on golden sets of 50 items too
(benchmarks/coverage_categories.py).

    python validation/interval_coverage.py [--subsamples 500] [--size 100] [--resamples 2000]

Consensus is the rounded mean human rating (means of exactly .5 are left
out), as in validate_shared_data.py; task clusters are prompts; categories
are the six source datasets.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from validation.validate_shared_data import family_of  # noqa: E402
from workbench import stats  # noqa: E402
from workbench.stats.intervals.proportion import METHOD as PROPORTION_METHOD  # noqa: E402
from workbench.stats.intervals.proportion import PROPORTION_DENOMINATORS, proportion_interval  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "play_favorites" / "Logical_correctness.csv"
SCALE = (-1, 0, 1)
BOOTSTRAPPED = ("krippendorff_alpha_ordinal", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
                "gwet_ac2_linear")
PROPORTION_METHODS = (PROPORTION_METHOD, "wilson", "jeffreys", "beta")  # the shipped one, then statsmodels names;
# "beta" is Clopper-Pearson
BOOTSTRAP_METHODS = ("percentile", "bca")
EFFECT_METHODS = ("posterior", "percentile", "expanded", "bca", "studentized")
JUDGES = ("gpt-4o", "anthropic.claude-3-5-sonnet-20241022-v2:0")


@dataclass
class Tally:
    """Per (interval, method): subsamples where the interval was defined, and where it covered."""

    defined: dict[tuple[str, str], int] = field(default_factory=dict)
    covered: dict[tuple[str, str], int] = field(default_factory=dict)
    undefined: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, name: str, method: str, truth: float, low: float | None, high: float | None) -> None:
        key = (name, method)
        if low is None or high is None or not np.isfinite(low) or not np.isfinite(high) or not np.isfinite(truth):
            self.undefined[key] = self.undefined.get(key, 0) + 1
            return
        self.defined[key] = self.defined.get(key, 0) + 1
        self.covered[key] = self.covered.get(key, 0) + int(low - 1e-12 <= truth <= high + 1e-12)

    def coverage(self, name: str, method: str) -> float:
        n = self.defined.get((name, method), 0)
        return self.covered.get((name, method), 0) / n if n else float("nan")


def load(path: Path = DATA) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(items with consensus, judge ratings) of Play Favorites' logical-correctness data."""
    df = pd.read_csv(path)
    df["item_id"] = df["prompt_id"] + "__" + df["model"]
    items = df.drop_duplicates("item_id")[["item_id", "prompt_id", "dataset", "model", "gt"]].copy()
    items = items[(items["gt"] - items["gt"].round()).abs() != 0.5]
    items["consensus"] = items["gt"].round().astype(int) - 1
    items["family"] = items["model"].map(family_of)
    ratings = df[["judge", "item_id", "rating"]].assign(score=lambda d: d["rating"].astype(int) - 1)
    return items.set_index("item_id"), ratings


def judge_frame(items: pd.DataFrame, ratings: pd.DataFrame, judge: str) -> pd.DataFrame:
    scores = ratings[ratings["judge"] == judge].drop_duplicates("item_id").set_index("item_id")["score"]
    return items.join(scores, how="inner")


def _bias(frame: pd.DataFrame, judge: str, *, resamples: int, seed: int, interval: str) -> dict:
    return stats.self_preference(frame["consensus"].to_numpy(), frame["score"].to_numpy(), scale=SCALE,
                                 producer_model=frame["model"].to_numpy(), producer_family=frame["family"].to_numpy(),
                                 judge_model=judge, judge_family=family_of(judge),
                                 category=frame["dataset"].to_numpy(), clusters=frame["prompt_id"].to_numpy(),
                                 resamples=resamples, seed=seed, interval=interval)


def truths(frame: pd.DataFrame, judge: str) -> dict[str, float]:
    c, j = frame["consensus"].to_numpy(), frame["score"].to_numpy()
    point = stats.agreement_metrics(c, j, scale=SCALE, pass_threshold=0)
    out = {name: point[name] for name in (*BOOTSTRAPPED, *PROPORTION_DENOMINATORS)}
    for cat, sub in frame.groupby("dataset"):
        out[f"category:{cat}"] = float((sub["consensus"] == sub["score"]).mean())
    out["same_family"] = _bias(frame, judge, resamples=10, seed=0, interval="percentile")["same_family"]["value"]
    return out


def run(judge: str, items: pd.DataFrame, ratings: pd.DataFrame, *, subsamples: int, size: int, resamples: int,
        seed: int = 0, shipped_only: bool = False) -> Tally:
    """Coverage of every method compared, or (``shipped_only``) of the methods the report uses."""
    bootstrap_methods = (stats.intervals.bootstrap.INTERVAL,) if shipped_only else BOOTSTRAP_METHODS
    effect_methods = (stats.bias.INTERVAL,) if shipped_only else EFFECT_METHODS
    proportion_methods = (PROPORTION_METHOD,) if shipped_only else PROPORTION_METHODS
    frame = judge_frame(items, ratings, judge)
    truth = truths(frame, judge)
    rng = np.random.default_rng(seed)
    tally = Tally()
    for s in range(subsamples):
        sub = frame.iloc[rng.choice(len(frame), size=size, replace=False)]
        c, j, clusters = sub["consensus"].to_numpy(), sub["score"].to_numpy(), sub["prompt_id"].to_numpy()
        for method in bootstrap_methods:
            r = stats.agreement_with_intervals(c, j, clusters, scale=SCALE, pass_threshold=0, resamples=resamples,
                                               seed=s, interval=method)
            for name in BOOTSTRAPPED:
                m = r["metrics"][name]
                tally.add(name, method, truth[name], m["ci_low"], m["ci_high"])
        for method in effect_methods:
            b = _bias(sub, judge, resamples=resamples, seed=s, interval=method)["same_family"]
            tally.add("same_family", method, truth["same_family"], b["ci_low"], b["ci_high"])
        for name in PROPORTION_DENOMINATORS:
            m = r["metrics"][name]
            for method in proportion_methods:
                # the shipped method is the report's own interval (its level may be widened for clusters)
                low, high = ((m["ci_low"], m["ci_high"]) if method == PROPORTION_METHOD else
                             proportion_interval(m["value"], m["n"], deff=m.get("design_effect", 1.0), method=method))
                tally.add(name, method, truth[name], low, high)
        cats = stats.per_category_agreement(c, j, sub["dataset"].to_numpy(), clusters, scale=SCALE,
                                            pass_threshold=0, resamples=resamples, seed=s)
        for cat, entry in cats.items():
            m = entry["exact_agreement"]
            tally.add("per-category exact agreement", PROPORTION_METHOD, truth[f"category:{cat}"], m["ci_low"], m["ci_high"])
    return tally


def table(tallies: dict[str, Tally], subsamples: int, size: int) -> str:
    rows = [(name, m) for name in BOOTSTRAPPED for m in BOOTSTRAP_METHODS]
    rows += [("same_family", m) for m in EFFECT_METHODS]
    rows += [(name, m) for name in PROPORTION_DENOMINATORS for m in PROPORTION_METHODS]
    rows += [("per-category exact agreement", PROPORTION_METHOD)]
    judges = list(tallies)
    lines = [f"| interval | method | " + " | ".join(f"coverage ({j})" for j in judges) + " |",
             "|---|---|" + "---|" * len(judges)]
    for name, method in rows:
        if not any(t.defined.get((name, method)) for t in tallies.values()):
            continue  # a method not run (shipped_only)
        cells = []
        for j in judges:
            t = tallies[j]
            n = t.defined.get((name, method), 0)
            cells.append(f"{t.coverage(name, method):.3f} (of {n})")
        lines.append(f"| {name} | {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + f"\n\n{subsamples} subsamples of {size} items per judge; nominal level 0.95."


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--subsamples", type=int, default=500)
    p.add_argument("--size", type=int, default=100)
    p.add_argument("--resamples", type=int, default=2000)
    p.add_argument("--judges", nargs="*", default=list(JUDGES))
    args = p.parse_args(argv)
    if not DATA.exists():
        print(f"{DATA} not found; this script needs ../shared/data", file=sys.stderr)
        return 2
    items, ratings = load()
    tallies = {j: run(j, items, ratings, subsamples=args.subsamples, size=args.size, resamples=args.resamples)
               for j in args.judges}
    print(table(tallies, args.subsamples, args.size))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
