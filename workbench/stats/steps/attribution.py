"""Failure attribution's measures: does a judge find the step (and the agent) where a failing trajectory went
wrong, as people do? Pure functions over aligned arrays, one entry per item.

Definitions (docs/steps.md). For an item with a human consensus step ``h`` and a judge step ``j`` (0-based over
its ``n`` steps):

- ``exact`` = mean(j == h); ``within_1``, ``within_3`` = mean(|j - h| <= 1), mean(|j - h| <= 3);
- ``agent`` = mean(the judge's agent is the people's), names compared by :func:`agent_key` (case, spaces and a
  trailing parenthesis such as 'Orchestrator (thought)' ignored);
- ``offset`` = mean(j - h) in steps: below 0 the judge blames earlier steps than people, above 0 later ones.

Baselines on the same items: ``last_step`` (always blame the last step, and its agent) and ``random`` (a step
drawn uniformly from the item's steps: its expected hit, 1/n for ``exact``; the agent of that step, so ``agent``
is the share of the item's steps taken by the people's agent). The judge *beats* a baseline when the paired
difference's interval lies wholly above 0.

Intervals (95%) respect the clustering of items by task (runs of one question are not independent): the hit rates
are proportions, with the workbench's proportion interval (Wilson and modified Jeffreys on the count over the
cluster design effect, at Student's t over the clusters: ``stats.intervals.proportion``); the offset, the baselines
and the paired differences take a percentile cluster bootstrap (clusters drawn with replacement, fixed seed).
Everything is given for all items and split by trajectory length: ``short`` (at most ``long_after`` steps) and
``long``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Sequence

import numpy as np

from workbench.stats._common import check_bootstrap_options, cluster_codes
from workbench.stats.intervals.bootstrap import percentile_interval
from workbench.stats.intervals.proportion import cluster_level, design_effect, proportion_interval

HITS = ("exact", "within_1", "within_3")
WITHIN = {"exact": 0, "within_1": 1, "within_3": 3}
#: Runs of at most this many steps are short (Who&When's Algorithm-Generated runs have at most 10).
LONG_AFTER = 10
GROUPS = ("all", "short", "long")


def agent_key(name: Any) -> str | None:
    """An agent's name as compared: lower case, letters and digits only, without a trailing '(...)'.

    >>> agent_key("Orchestrator (thought)"), agent_key("Websurfer"), agent_key("Web_Surfer"), agent_key(None)
    ('orchestrator', 'websurfer', 'websurfer', None)
    """
    if name is None or (isinstance(name, float) and np.isnan(name)):
        return None
    key = re.sub(r"[^0-9a-z]", "", re.sub(r"\s*\(.*\)\s*$", "", str(name)).lower())
    return key or None


def consensus_step(steps: Sequence[int]) -> int | None:
    """The step a strict majority of reviewers marked, else None (unresolved: counted, left out of the measures).

    >>> consensus_step([4]), consensus_step([4, 4, 7]), consensus_step([4, 7])
    (4, 4, None)
    """
    if not steps:
        return None
    step, count = Counter(steps).most_common(1)[0]
    return int(step) if count * 2 > len(steps) else None


def consensus_agent(agents: Sequence[str | None]) -> str | None:
    """The agent (as written by the first who wrote it) a strict majority named, compared by :func:`agent_key`."""
    keys = [agent_key(a) for a in agents]
    named = [k for k in keys if k]
    if not named:
        return None
    key, count = Counter(named).most_common(1)[0]
    if count * 2 <= len(agents):
        return None
    return next(a for a, k in zip(agents, keys) if k == key)


# -- the per-item values ----------------------------------------------------------------------------------------------

def window_name(k: int) -> str:
    """'exact' for 0 steps, else 'within_k'."""
    return "exact" if k == 0 else f"within_{k}"


def _hits(judge: np.ndarray, human: np.ndarray, windows: dict[str, int] = WITHIN) -> dict[str, np.ndarray]:
    d = np.abs(judge - human)
    return {name: (d <= k).astype(float) for name, k in windows.items()}


def random_hits(human: np.ndarray, n_steps: np.ndarray, windows: dict[str, int] = WITHIN) -> dict[str, np.ndarray]:
    """Each item's expected hit of a uniformly random step, and its expected offset.

    >>> {k: v.tolist() for k, v in random_hits(np.array([0, 5]), np.array([4, 10])).items()}
    {'exact': [0.25, 0.1], 'within_1': [0.5, 0.3], 'within_3': [1.0, 0.7], 'offset': [1.5, -0.5]}
    """
    out = {name: (np.minimum(human + k, n_steps - 1) - np.maximum(human - k, 0) + 1) / n_steps
           for name, k in windows.items()}
    return {**out, "offset": (n_steps - 1) / 2 - human}


def _agent_share(agent: str | None, step_agents: Sequence[Any] | None) -> float:
    """The share of the item's steps whose agent is ``agent``: a random step's chance of naming it."""
    key = agent_key(agent)
    if key is None or not step_agents:
        return float("nan")
    return float(np.mean([agent_key(a) == key for a in step_agents]))


def _agent_match(a: Any, b: Any) -> float:
    ka, kb = agent_key(a), agent_key(b)
    return float("nan") if ka is None or kb is None else float(ka == kb)


# -- intervals --------------------------------------------------------------------------------------------------------

def _draws(n_clusters: int, resamples: int, seed: int) -> np.ndarray:
    """Cluster multiplicities of each resample: (resamples, G), each row Multinomial(G, uniform)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=resamples).astype(np.float64)


def _boot_means(values: np.ndarray, codes: np.ndarray, n_clusters: int, draws: np.ndarray) -> np.ndarray:
    """The mean of ``values`` (NaN entries left out) in each cluster resample."""
    ok = np.isfinite(values)
    sums = np.bincount(codes[ok], weights=values[ok], minlength=n_clusters)
    counts = np.bincount(codes[ok], minlength=n_clusters).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (draws @ sums) / (draws @ counts)


def _interval(values: np.ndarray, codes: np.ndarray, n_clusters: int, draws: np.ndarray, level: float, *,
              proportion: bool) -> dict[str, Any]:
    ok = np.isfinite(values)
    n = int(ok.sum())
    if n == 0:
        return {"value": None, "ci_low": None, "ci_high": None, "n": 0}
    value = float(values[ok].mean())
    samples = _boot_means(values, codes, n_clusters, draws)
    if proportion:
        g = len(np.unique(codes[ok]))
        clustered = g < n  # some task holds two or more of the items: its variance is estimated from g clusters
        var = float(np.nanvar(samples, ddof=1)) if samples.size > 1 else float("nan")
        deff = design_effect(value, n, var, g)
        low, high = proportion_interval(value, n, level=cluster_level(level, g) if clustered else level, deff=deff)
        return {"value": value, "ci_low": low, "ci_high": high, "n": n, "design_effect": deff}
    low, high, _ = percentile_interval(samples, level)
    return {"value": value, "ci_low": low, "ci_high": high, "n": n}


def _beats(diff: np.ndarray, codes: np.ndarray, n_clusters: int, draws: np.ndarray, level: float) -> dict[str, Any]:
    out = _interval(diff, codes, n_clusters, draws, level, proportion=False)
    low = out.get("ci_low")
    return {**out, "beats": low is not None and low > 0}


# -- the measurement --------------------------------------------------------------------------------------------------

def attribution(human_step: Any, judge_step: Any, n_steps: Any, clusters: Any = None, *,
                human_agent: Sequence[Any] | None = None, judge_agent: Sequence[Any] | None = None,
                step_agents: Sequence[Sequence[Any] | None] | None = None, long_after: int = LONG_AFTER,
                within: Sequence[int] = (), resamples: int = 2000, seed: int = 0,
                level: float = 0.95) -> dict[str, Any]:
    """Step and agent accuracy of a judge against the people's consensus, with the baselines, for all items and by
    length (see the module's docstring). ``step_agents[i]`` lists who took each step of item i (the agent of a
    step a judge or reviewer named without an agent, and the baselines' agents); None where unknown. ``within``
    adds step accuracies within other numbers of steps (``within_k``) to exact, within 1 and within 3."""
    check_bootstrap_options(resamples, seed, level)
    h = np.asarray(human_step, dtype=float)
    j = np.asarray(judge_step, dtype=float)
    n = np.asarray(n_steps, dtype=float)
    if not (len(h) == len(j) == len(n)):
        raise ValueError(f"human_step, judge_step and n_steps have {len(h)}, {len(j)} and {len(n)} entries: give one "
                         "per item")
    if len(n) and (n < 1).any():
        raise ValueError("every item needs at least one step")
    if ((h < 0) | (h >= n) | (j < 0) | (j >= n)).any():
        raise ValueError("a step lies outside its item's steps (0 to n_steps - 1)")
    m = len(h)
    agents = list(step_agents) if step_agents is not None else [None] * m
    ha = list(human_agent) if human_agent is not None else [None] * m
    ja = list(judge_agent) if judge_agent is not None else [None] * m

    def of_step(named: Any, steps: Sequence[Any] | None, s: float) -> Any:
        return named if agent_key(named) else (steps[int(s)] if steps and int(s) < len(steps) else None)

    ha = [of_step(a, s, x) for a, s, x in zip(ha, agents, h)]
    ja = [of_step(a, s, x) for a, s, x in zip(ja, agents, j)]
    windows = {**WITHIN, **{window_name(int(k)): int(k) for k in within}}
    judge = {**_hits(j, h, windows), "offset": j - h,
             "agent": np.array([_agent_match(a, b) for a, b in zip(ja, ha)], dtype=float)}
    last = n - 1
    baselines = {
        "last_step": {**_hits(last, h, windows), "offset": last - h,
                      "agent": np.array([_agent_match(s[-1] if s else None, a) for s, a in zip(agents, ha)],
                                        dtype=float)},
        "random": {**random_hits(h, n, windows),
                   "agent": np.array([_agent_share(a, s) for a, s in zip(ha, agents)], dtype=float)},
    }
    codes, _ = cluster_codes(clusters, m)
    long_ = n > long_after
    masks = {"all": np.ones(m, bool), "short": ~long_, "long": long_}
    return {"long_after": long_after, "resamples": resamples, "seed": seed, "level": level,
            "groups": {group: _group(mask, codes, judge, baselines, tuple(windows), resamples, seed, level)
                       for group, mask in masks.items()}}


def _group(mask: np.ndarray, codes: np.ndarray, judge: dict, baselines: dict, hits: tuple[str, ...], resamples: int,
           seed: int, level: float) -> dict[str, Any]:
    n_items = int(mask.sum())
    if n_items == 0:
        return {"n_items": 0, "n_clusters": 0, "judge": None, "baselines": None, "beats": None}
    sub = np.unique(codes[mask], return_inverse=True)[1]  # the group's clusters, numbered 0..g-1
    g = int(sub.max()) + 1
    draws = _draws(g, resamples, seed)
    metric_names = (*hits, "agent", "offset")

    def measured(values: dict) -> dict[str, Any]:
        return {k: _interval(values[k][mask], sub, g, draws, level,
                             proportion=(k != "offset" and values is judge))
                for k in metric_names}

    return {
        "n_items": n_items, "n_clusters": g,
        "judge": measured(judge),
        "baselines": {name: measured(b) for name, b in baselines.items()},
        "beats": {name: {k: _beats((judge[k] - b[k])[mask], sub, g, draws, level) for k in (*hits, "agent")}
                  for name, b in baselines.items()},
    }


def human_vs_human(steps_by_item: Sequence[Sequence[int]], clusters: Any = None, *,
                   agents_by_item: Sequence[Sequence[Any]] | None = None, n_steps: Any = None,
                   long_after: int = LONG_AFTER, resamples: int = 2000, seed: int = 0,
                   level: float = 0.95) -> dict[str, Any]:
    """People against people on items two or more reviewers marked a step on: each item's share of reviewer pairs
    that agree (exactly, within 1 and 3 steps, on the agent), averaged over items, with a cluster bootstrap
    interval; by length when ``n_steps`` is given. Items with fewer than two steps are left out."""
    check_bootstrap_options(resamples, seed, level)
    keep = [i for i, s in enumerate(steps_by_item) if len(s) >= 2]
    codes_all, _ = cluster_codes(clusters, len(steps_by_item))
    values: dict[str, list[float]] = {k: [] for k in (*HITS, "agent")}
    for i in keep:
        s = list(steps_by_item[i])
        a = list(agents_by_item[i]) if agents_by_item is not None else [None] * len(s)
        pairs = [(x, y) for x in range(len(s)) for y in range(x + 1, len(s))]
        for name, k in WITHIN.items():
            values[name].append(float(np.mean([abs(s[x] - s[y]) <= k for x, y in pairs])))
        matches = [_agent_match(a[x], a[y]) for x, y in pairs]
        matches = [v for v in matches if np.isfinite(v)]
        values.setdefault("agent", []).append(float(np.mean(matches)) if matches else float("nan"))
    lengths = np.asarray(n_steps, dtype=float)[keep] if n_steps is not None else None
    groups: dict[str, Any] = {}
    for group in GROUPS:
        if group != "all" and lengths is None:
            continue
        mask = np.ones(len(keep), bool) if group == "all" else (lengths > long_after if group == "long"
                                                                 else lengths <= long_after)
        if not mask.any():
            groups[group] = {"n_items": 0, "n_clusters": 0, "metrics": None}
            continue
        sub = np.unique(codes_all[keep][mask], return_inverse=True)[1]
        g = int(sub.max()) + 1
        draws = _draws(g, resamples, seed)
        groups[group] = {"n_items": int(mask.sum()), "n_clusters": g, "metrics": {
            k: _interval(np.asarray(v, dtype=float)[mask], sub, g, draws, level, proportion=False)
            for k, v in values.items()}}
    return {"long_after": long_after, "groups": groups}

