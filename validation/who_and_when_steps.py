"""Failure attribution on Who&When's 155 shared runs (../shared/data/who_and_when): the baselines a judge must beat,
and the coverage of the intervals of judges with planted step accuracy (docs/steps.md#validation).

* Baselines: 'last step' (blame the last step and its agent) and 'random' (a uniformly drawn step: its expected
  hit) against the people's annotated decisive step and agent, for all runs and by length (short: at most 10
  steps), with the 95% intervals ``calibrate`` reports (task clusters: runs of the same question).
* Coverage: a planted judge whose exact accuracy varies by task (Beta(2, 5) per task: mean 0.29) and that otherwise
  names a uniformly drawn other step, its agent right with a per-task Beta(5, 3) probability; and an early-blaming
  judge (D = m_t * D0 steps early, D0 in {0, 1, 2, 3} with probabilities 1/2, 1/6, 1/6, 1/6, m_t in {1, 2} per task).
  The planted value of each measure is its expectation over the judge's draws on these runs; the coverage is the
  share of simulated judges whose interval holds it (nominal 95%).

    python -m validation.who_and_when_steps [--sims 500]

Used by ``tests/steps/test_attribution_stats.py`` (its planted judges) too.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from workbench.stats.steps import attribution

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "who_and_when"
MEASURES = ("exact", "within_1", "within_3", "agent", "offset")


def shared_runs(folder: Path = DATA):
    """(files, people's steps, lengths, task clusters, who took each step, people's agents), in file order."""
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json"))
    data = [json.loads((folder / f).read_text(encoding="utf-8")) for f in files]
    h = np.array([int(d["mistake_step"]) for d in data])
    n = np.array([len(d["history"]) for d in data])
    clusters = np.array([str(d["question_ID"]) for d in data])
    agents = [[s.get("name") or s["role"] for s in d["history"]] for d in data]
    return files, h, n, clusters, agents, [d["mistake_agent"] for d in data]


def planted(h, n, clusters, rng):
    """A judge exact with its task's probability a_t, else on a uniformly drawn other step, its agent right with the
    task's probability b_t: its steps, agent hits and the planted (expected) value of each measure per item."""
    tasks, codes = np.unique(clusters, return_inverse=True)
    a = rng.beta(2, 5, len(tasks))[codes]
    b = rng.beta(5, 3, len(tasks))[codes]
    hit = rng.random(len(h)) < a
    other = np.array([rng.choice([s for s in range(k) if s != x]) for x, k in zip(h, n)])
    j = np.where(hit, h, other)
    truth = {"exact": a, "agent": b}
    for name, k in (("within_1", 1), ("within_3", 3)):
        near = np.minimum(h + k, n - 1) - np.maximum(h - k, 0)  # steps within k of h, h itself left out
        truth[name] = a + (1 - a) * near / (n - 1)
    return j, rng.random(len(h)) < b, truth


def early_blamer(h, clusters, rng):
    """A judge that blames D = m_t * D0 steps too early (never before step 0): its steps and planted offsets."""
    tasks, codes = np.unique(clusters, return_inverse=True)
    m = rng.integers(1, 3, len(tasks))[codes]
    d0 = rng.choice([0, 1, 2, 3], size=len(h), p=[0.5, 1 / 6, 1 / 6, 1 / 6])
    j = np.maximum(h - m * d0, 0)
    expected = -sum(p * np.minimum(m * d, h) for d, p in ((1, 1 / 6), (2, 1 / 6), (3, 1 / 6)))
    return j, expected


def coverage(sims: int, *, resamples: int = 400, seed: int = 46) -> dict:
    """Coverage of each measure's interval per length group, and how often the early blamer's offset interval lies
    wholly below 0."""
    files, h, n, clusters, agents, people = shared_runs()
    rng = np.random.default_rng(seed)
    groups = {"all": np.ones(len(h), bool), "short": n <= 10, "long": n > 10}
    covered = {(g, m): 0 for g in groups for m in MEASURES}
    below = 0
    for sim in range(sims):
        j, agent_right, truth = planted(h, n, clusters, rng)
        judge_agent = [p if ok else "Someone_Else" for p, ok in zip(people, agent_right)]
        res = attribution(h, j, n, clusters, human_agent=people, judge_agent=judge_agent, step_agents=agents,
                          resamples=resamples, seed=sim)
        early, offset_truth = early_blamer(h, clusters, rng)
        off = attribution(h, early, n, clusters, resamples=resamples, seed=sim)
        for g, mask in groups.items():
            for m in MEASURES[:-1]:
                iv = res["groups"][g]["judge"][m]
                covered[(g, m)] += iv["ci_low"] <= truth[m][mask].mean() <= iv["ci_high"]
            iv = off["groups"][g]["judge"]["offset"]
            covered[(g, "offset")] += iv["ci_low"] <= offset_truth[mask].mean() <= iv["ci_high"]
        below += off["groups"]["all"]["judge"]["offset"]["ci_high"] < 0
    return {"rates": {k: v / sims for k, v in covered.items()}, "early_below_zero": below / sims, "sims": sims}


def baselines() -> dict:
    files, h, n, clusters, agents, people = shared_runs()
    return attribution(h, n - 1, n, clusters, human_agent=people, step_agents=agents, resamples=2000, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=500)
    args = parser.parse_args()
    b = baselines()
    print("| length | runs (tasks) | measure | last step | random |\n|---|---|---|---|---|")
    for g in ("all", "short", "long"):
        grp = b["groups"][g]
        for m in MEASURES:
            cells = []
            for base in ("last_step", "random"):
                iv = grp["baselines"][base][m]
                d = 1 if m == "offset" else 3
                cells.append(f"{iv['value']:.{d}f} ({iv['ci_low']:.{d}f} to {iv['ci_high']:.{d}f})")
            print(f"| {g} | {grp['n_items']} ({grp['n_clusters']}) | {m} | {cells[0]} | {cells[1]} |")
    c = coverage(args.sims)
    print(f"\ncoverage over {c['sims']} planted judges (nominal 0.95)\n| length | " + " | ".join(MEASURES)
          + " |\n|---|" + "---|" * len(MEASURES))
    for g in ("all", "short", "long"):
        print(f"| {g} | " + " | ".join(f"{c['rates'][(g, m)]:.3f}" for m in MEASURES) + " |")
    print(f"\nearly blamer's offset interval wholly below 0: {c['early_below_zero']:.3f}")


if __name__ == "__main__":
    main()
