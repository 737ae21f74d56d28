"""Are the plan's label counts honest? `workbench plan`'s prediction against campaigns over a real pool.

A *campaign* labels a random starting sample (every human label of each item), reads the plan through the product
(a temporary SQLite store, ``calibrate`` then ``plan``) and records each undecided gate check's
``more_labels_random`` (labels to a decision if they are drawn at random) and ``more_labels`` (in the order that
fits: the active queue's, shown, not simulated here); then it keeps drawing items at random from the rest of the
real pool, with their real human labels, re-reading the gate after every batch until the check is decided or the
pool runs out. A *case* is a judge x starting size (60, 120, 240 items); it runs ``--seeds`` campaigns (40), each
from its own random start with its own random order, the three judges sharing each start and order.

Why many starts: the prediction from one start rests on that start's estimate (TNR on 1 to 27 consensus fails
here), and the labels a check needs grow as 1 / (distance to the bound)^2; an estimate one standard error off the
truth moves them several-fold. One start per case measures that start's luck (on disjoint sets of 10 campaigns a
case the count of passing cases was 7, 5, 7 and 6 of 9), so each case takes the median over 40 campaigns, and the
share of single campaigns within 2x is reported beside it: 22% to 54%, which is what a lead should know
(benchmarks/plan_honesty.md).

The pool: SummEval (../shared/data/alttest/summeval), 6,400 items (100 news articles x 16 systems x 4 quality
dimensions), each rated 1-5 by all 3 expert raters; consensus is the workbench's (strict majority, 89% of items
reach one), items cluster by article, categories are the dimensions, pass = 3 or more, the golden set's overlap is
3. It is *held out*: nothing in the plan's model (``gate._more_to_clear`` / ``_more_for_proportion``,
``stats.planning``, the yields in ``services.planning``) was chosen or checked on it. Play Favorites chose the
interval methods (validation/interval_coverage.py) and, with mtbench, fed the label-order simulations
(validation/active_queue_simulation.py); SummEval had only reproduced the AltTest paper's figures. ``--pool
play-favorites`` is the development pool (its self-preference checks). The judges are the first of each family
whose judge is not degenerate (mistral-v03 passes 99.7% of all items): gpt-4o, llama-31, gemini_flash; they were
fixed before any prediction was looked at.

Re-reading the gate: each batch recomputes only the report sections the open checks read, with the calls and
arguments ``services.calibration.calibrate`` makes (``stats.agreement_with_intervals`` for agreement, TPR and TNR;
``human_ceiling`` and the alternative-annotator test for the comparison with the reviewers; ``self_preference``;
the noise floor), and the gate's own ``evaluate`` reads them (tests/planning/test_plan_honesty.py checks that a
full ``calibrate`` gives the same states). Batches: 5 items, or 5% of the items labeled so far when that is more.
The plan and the simulation both use 200 bootstrap resamples instead of calibrate's 2,000, for speed (a campaign
re-reads the gate up to 80 times).

Comparing: a campaign's ratio is predicted / simulated labels, each at least one batch (5 items' labels: the
simulation tells no finer). "This pool cannot decide it" (and "more labels will hardly decide it") reads as "at
least the labels left in the pool", and a campaign that ran out of pool as having needed at least those: so both
agree (ratio 1), and either against a number is that number's ratio to the labels left. A check of a case is
*within 2x* when the median of its campaigns' ratios lies in [0.5, 2], over the campaigns where it was undecided
at the start (a check undecided in fewer than a quarter of them is shown, not counted). A case *passes* when every
counted check is within 2x (the strict reading: a case is as good as its worst check).

    python validation/plan_honesty.py [--pool summeval] [--seeds 40] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT.parent / "shared" / "data"
SUMMEVAL = DATA / "alttest" / "summeval"
PLAY_FAVORITES = DATA / "play_favorites" / "Logical_correctness.csv"
MTBENCH = DATA / "alttest" / "mtbench"
JUDGES = ("gpt-4o", "llama-31", "gemini_flash")
SIZES = (60, 120, 240)
RESAMPLES = 200
SEEDS = 40  # campaigns a case
GOLDEN_SET, RUBRIC = "pool", "pool-rubric"
ALT_FAMILY = {"gemini_flash": "google", "gemini_pro": "google", "gpt-4o": "openai", "gpt-4o-mini": "openai",
              "llama-31": "meta", "mistral-v03": "mistral"}
#: The gate checks labels can decide (stability, drift, completeness and probes are decided by judge runs).
LABEL_CHECKS = ("evidence", "agreement", "pass_fail", "as_good_as_human", "self_preference")
MIN_SHARE = 0.25  # a check undecided in fewer of a case's campaigns is shown, not counted


@dataclass(frozen=True)
class RealPool:
    """Every item of a real data set with all its human labels and each judge's score."""

    name: str
    ids: tuple[str, ...]                       # in import order (calibrate reads items in this order)
    human: dict[str, dict[str, int]]           # item -> rater -> score
    judges: dict[str, dict[str, int]]          # judge -> item -> score
    task: dict[str, str]
    category: dict[str, str]
    scale: tuple[int, ...]
    pass_threshold: int
    judge_model: dict[str, str]                # judge -> model as a rubric declares it
    judge_family: dict[str, str]
    producer_model: dict[str, str] = field(default_factory=dict)   # item -> the model that produced it
    producer_family: dict[str, str] = field(default_factory=dict)
    policy: dict = field(default_factory=dict)  # gate overrides the data needs (rubrics/policy.yaml)
    checks: tuple[str, ...] = LABEL_CHECKS     # the checks this data can speak to

    def labels_of(self, items) -> int:
        return sum(len(self.human[i]) for i in items)

    @property
    def overlap(self) -> int:
        """Labels per item, as most items have them (the golden set's overlap)."""
        counts = [len(v) for v in self.human.values()]
        return max(set(counts), key=counts.count)


def summeval_pool(folder: Path = SUMMEVAL) -> RealPool:
    """SummEval: 6,400 items, each rated 1-5 by the same 3 expert raters (pass = 3 or more)."""
    humans = json.loads((folder / "human_annotations.json").read_text())
    llms = json.loads((folder / "llm_annotations.json").read_text())
    ids = tuple(sorted({i for anns in humans.values() for i in anns}))
    human: dict[str, dict[str, int]] = {i: {} for i in ids}
    for rater, anns in humans.items():
        for i, s in anns.items():
            human[i][rater] = int(s)
    return RealPool("SummEval", ids, human, {j: {i: int(s) for i, s in anns.items()} for j, anns in llms.items()},
                    {i: i.split("__")[0] for i in ids}, {i: i.split("__")[2] for i in ids}, (1, 2, 3, 4, 5), 3,
                    {j: f"openai-api/alttest/{j}" for j in llms}, {j: ALT_FAMILY[j] for j in llms})


def mtbench_pool(folder: Path = MTBENCH) -> RealPool:
    """mtbench (AltTest): 120 pairwise comparisons, model_a / tie / model_b as +1 / 0 / -1 (pass: a tie or better
    for model a), labeled by 2 of 3 human raters (6 items by all 3): a small pool, where checks run out of items."""
    humans = json.loads((folder / "human_annotations.json").read_text())
    llms = json.loads((folder / "llm_annotations.json").read_text())
    code = {"model_a": 1, "tie": 0, "model_b": -1}
    ids = tuple(sorted({i for anns in humans.values() for i in anns}))
    human: dict[str, dict[str, int]] = {i: {} for i in ids}
    for rater, anns in humans.items():
        for i, s in anns.items():
            human[i][rater] = code[s]
    return RealPool("mtbench", ids, human, {j: {i: code[s] for i, s in anns.items()} for j, anns in llms.items()},
                    {i: i.split("__")[0] for i in ids}, {i: f"turn {i.split('__')[-1]}" for i in ids}, (-1, 0, 1), 0,
                    {j: f"openai-api/alttest/{j}" for j in llms}, {j: ALT_FAMILY[j] for j in llms})


def play_favorites_pool(path: Path = PLAY_FAVORITES) -> RealPool:
    """Play Favorites (logical correctness): the development pool, never the held-out one.

    5,305 answers of nine models to 596 prompts; the humans' rating is given as one mean per item, whose rounding
    is the consensus (a mean of exactly .5 has none, and such items are left out); each model also judges, so
    self-preference is measurable. One rating per item means no item has two raters: the gate's share of
    multi-rated items is set to 0, and the comparison with the reviewers (human-human agreement) is not a check
    this data can speak to.
    """
    import pandas as pd

    from validation.validate_shared_data import family_of, judge_model

    df = pd.read_csv(path)
    df["item_id"] = df["prompt_id"] + "__" + df["model"]
    first = df.drop_duplicates("item_id")
    first = first[(first["gt"] - first["gt"].round()).abs() != 0.5].sort_values("item_id")
    ids = tuple(first["item_id"])
    keep = set(ids)
    judges: dict[str, dict[str, int]] = {}
    for r in df.itertuples():
        if r.item_id in keep:
            judges.setdefault(r.judge.replace(":", "_"), {})[r.item_id] = int(r.rating) - 1
    return RealPool("Play Favorites", ids, {r.item_id: {"human-mean": int(round(r.gt)) - 1} for r in first.itertuples()},
                    judges, dict(zip(first["item_id"], first["prompt_id"])), dict(zip(first["item_id"], first["dataset"])),
                    (-1, 0, 1), 0, {j.replace(":", "_"): judge_model(j) for j in df["judge"].unique()},
                    {j.replace(":", "_"): family_of(j) for j in df["judge"].unique()},
                    dict(zip(first["item_id"], first["model"])),
                    {i: family_of(m) for i, m in zip(first["item_id"], first["model"])},
                    {"min_multi_rated_share": 0.0}, ("evidence", "agreement", "pass_fail", "self_preference"))


def start_sample(pool: RealPool, size: int, seed: int) -> list[str]:
    return np.random.default_rng([size, seed]).choice(np.array(pool.ids, dtype=object), size=size,
                                                      replace=False).tolist()


# -- the product: a store holding the pool, the starting labels, the plan ---------------------------------------

def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def build_store(pool: RealPool, folder: Path, judges, *, items=None):
    """A SQLite store with the pool's items (all, or ``items``) and the judges' scores, no labels yet."""
    import yaml

    from workbench.features.importing import service as importing
    from workbench.calibration.rubric_versions import add_rubric
    from workbench.store import Store

    folder.mkdir(parents=True, exist_ok=True)
    store = Store(folder / "workbench.db")
    (folder / "rubric.yaml").write_text(yaml.safe_dump({
        "name": RUBRIC, "title": pool.name, "pass_threshold": pool.pass_threshold,
        "scale": [{"value": v, "label": str(v)} for v in pool.scale],
        "judges": [{"id": j, "model": pool.judge_model[j], "family": pool.judge_family[j]} for j in judges]},
        sort_keys=False))
    add_rubric(store, folder / "rubric.yaml")
    store.ensure_golden_set(GOLDEN_SET, overlap=pool.overlap)  # every item is labeled by all its raters
    keep = pool.ids if items is None else tuple(i for i in pool.ids if i in set(items))
    importing.import_items(store, _jsonl(folder / "items.jsonl", [
        {"id": i, "task_id": pool.task[i], "category": pool.category[i], "input": f"task {pool.task[i]}",
         "output": f"output {i}",
         **({"producer": {"model": pool.producer_model[i], "family": pool.producer_family[i]}}
            if i in pool.producer_model else {})} for i in keep]), GOLDEN_SET)
    for j in judges:
        importing.import_judgments(store, _jsonl(folder / f"{j}.jsonl", [
            {"item_id": i, "score": pool.judges[j][i]} for i in keep if i in pool.judges[j]]), GOLDEN_SET, RUBRIC, j)
    return store


def copy_store(base: Path, folder: Path):
    """A copy of the store at ``base`` (SQLite's backup, which carries the write-ahead log) in ``folder``."""
    from workbench.store import Store

    folder.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(base), sqlite3.connect(folder / "workbench.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    return Store(folder / "workbench.db")


def add_labels(store, pool: RealPool, items, folder: Path) -> None:
    from workbench.features.importing import service as importing

    rows = [{"item_id": i, "rater": r, "score": s} for i in items for r, s in pool.human[i].items()]
    if rows:
        importing.import_labels(store, _jsonl(folder / "labels.jsonl", rows), GOLDEN_SET, RUBRIC)


def workspace(pool: RealPool, folder: Path):
    """The campaign's workspace: its policy file holds the overrides the data needs (none for SummEval)."""
    import yaml

    from workbench.core.workspace import Workspace

    ws = Workspace(folder, folder / "workbench.db")
    if pool.policy:
        ws.rubrics.mkdir(parents=True, exist_ok=True)
        ws.policy_file.write_text(yaml.safe_dump(pool.policy))
    return ws


def product_plan(store, pool: RealPool, judge: str, folder: Path):
    """(report, plan) as `workbench calibrate` and `workbench plan` compute them, with 400 resamples."""
    from workbench.calibration.calibrate import Options, calibrate
    from workbench.features.planning.plan import plan

    ws = workspace(pool, folder)
    report = calibrate(store, GOLDEN_SET, RUBRIC, judge, Options(resamples=RESAMPLES), workspace=ws)
    return report, plan(store, GOLDEN_SET, RUBRIC, judge, report=report, workspace=ws)


# -- the simulation: the gate re-read on the labeled items, batch by batch ----------------------------------------

_ARRAYS: dict[tuple[int, str], dict] = {}


def _arrays(pool: RealPool, judge: str) -> dict:
    """The pool as arrays in its import order, once per pool and judge: consensus (None as -9999), judge score,
    task, and each item's position."""
    from workbench.core.consensus import consensus_label

    key = (id(pool), judge)
    if key not in _ARRAYS:
        scores = pool.judges[judge]
        cons = [consensus_label(pool.human[i].values()) for i in pool.ids]
        _ARRAYS[key] = {
            "pos": {i: k for k, i in enumerate(pool.ids)},
            "consensus": np.array([-9999 if x is None else x for x in cons], dtype=int),
            "judge": np.array([scores.get(i, -9999) for i in pool.ids], dtype=int),
            "usable": np.array([x is not None and i in scores for x, i in zip(cons, pool.ids)], dtype=bool),
            "task": np.array([pool.task[i] for i in pool.ids], dtype=object),
            "raters": np.array([len(pool.human[i]) for i in pool.ids], dtype=int)}
    return _ARRAYS[key]


def light_report(pool: RealPool, judge: str, labeled, checks, *, resamples: int | None = None, seed: int = 0):
    """The report sections ``checks`` read, computed as ``calibrate`` computes them, on the items ``labeled``."""
    import pandas as pd

    from workbench import stats
    from workbench.calibration.gate import Policy, policy_from_dict
    from workbench.core.models import parse_model
    from workbench.calibration.report import CalibrationReport

    resamples = resamples or RESAMPLES
    policy = policy_from_dict(pool.policy, base=Policy())
    arr = _arrays(pool, judge)
    mask = np.zeros(len(pool.ids), dtype=bool)
    mask[[arr["pos"][i] for i in labeled]] = True
    at = np.flatnonzero(mask & arr["usable"])  # calibrate's order: the golden set's items as imported
    c, j, clusters = arr["consensus"][at], arr["judge"][at], arr["task"][at]
    scale = list(pool.scale)
    report: dict = {"n_items": len(at), "policy": policy.to_dict(),
                    "evidence": {"n_items": len(at), "unresolved_items": [],
                                 "n_multi_rated": int((arr["raters"][at] >= policy.min_raters_per_item).sum())}}
    if {"agreement", "pass_fail"} & set(checks):
        a = stats.agreement_with_intervals(c, j, clusters, scale=scale, pass_threshold=pool.pass_threshold,
                                           resamples=resamples, seed=seed)
        report.update(metrics=a["metrics"], denominators=a["denominators"], metric_reasons=a["reasons"],
                      noise_floor=stats.noise_floor(a, target_width=0.1))
    if "as_good_as_human" in checks:
        scores = pool.judges[judge]
        labels = pd.DataFrame([(i, r, s) for i in (pool.ids[k] for k in np.flatnonzero(mask))
                               for r, s in pool.human[i].items()], columns=["item_id", "rater", "score"])
        scored = pd.Series({i: scores[i] for i in pool.ids if i in scores}, dtype=int)
        report["human_ceiling"] = stats.human_ceiling(labels, scored, scale=scale)
        alt = stats.alternative_annotator_test(labels, scored, scale=scale, epsilon=0.2, metric="accuracy")
        report["alt_test"] = alt if alt.get("winning_rate") is not None else None
    if "self_preference" in checks:
        family, scores = pool.judge_family[judge], pool.judges[judge]
        ids = [pool.ids[k] for k in at]
        fams = {pool.producer_family.get(i, "").casefold() == family.casefold() for i in pool.ids if i in scores}
        bias = stats.self_preference(
            c, j, scale=scale, producer_model=np.array([pool.producer_model.get(i) for i in ids], dtype=object),
            producer_family=np.array([pool.producer_family.get(i) for i in ids], dtype=object),
            judge_model=parse_model(pool.judge_model[judge]).model, judge_family=family,
            category=np.array([pool.category[i] for i in ids], dtype=object), clusters=clusters,
            resamples=resamples, seed=seed)
        report["self_preference"] = {"same_model": bias["same_model"], "same_family": bias["same_family"],
                                     "measurable_in_pool": fams == {True, False}}
    return CalibrationReport.from_json(stats.jsonable(report))


def gate_states(pool: RealPool, judge: str, labeled, checks) -> dict[str, str]:
    from workbench.calibration.gate import Policy, evaluate, policy_from_dict

    verdict = evaluate(light_report(pool, judge, labeled, checks), policy_from_dict(pool.policy, base=Policy()))
    return {c.id: c.status for c in verdict.checks if c.id in checks}


FIRST_BATCH = 5  # items; or 5% of the items labeled so far when that is more


def looks(n_start: int, n_rest: int) -> list[int]:
    """Items added by each look: batches of 5 items, or 5% of the items labeled so far when that is more."""
    out, k = [], 0
    while k < n_rest:
        k = min(n_rest, k + max(FIRST_BATCH, math.ceil(0.05 * (n_start + k))))
        out.append(k)
    return out


def simulate(pool: RealPool, judge: str, start, checks, seed: int) -> dict[str, int | None]:
    """Labels drawn at random after ``start`` until each of ``checks`` is decided (None: the pool ran out).

    The gate is read after every batch, as the lead reads the plan, and a check counts as decided at the first
    look that decides it (a pass read at one look can be undecided again a few batches later: the lead has
    stopped by then).
    """
    from workbench.calibration.gate import UNDECIDED

    taken = set(start)
    order = np.random.default_rng(seed).permutation(np.array([i for i in pool.ids if i not in taken], dtype=object))
    open_checks, out = list(checks), {c: None for c in checks}
    for k in looks(len(start), len(order)):
        states = gate_states(pool, judge, list(start) + order[:k].tolist(), open_checks)
        for check in [c for c in open_checks if states[c] != UNDECIDED]:
            out[check] = pool.labels_of(order[:k])
            open_checks.remove(check)
        if not open_checks:
            break
    return out


# -- campaigns and cases --------------------------------------------------------------------------------------------

@dataclass
class Campaign:
    """One undecided check of one campaign: the plan's numbers and the labels the campaign then needed."""

    judge: str
    size: int
    seed: int
    check: str
    reason: str
    predicted_random: int | None
    predicted_active: int | None
    pool_cannot_decide: bool
    pool_labels: int              # labels the rest of the pool holds
    batch_labels: int = 1         # labels of the first batch: the simulation tells no finer
    simulated: int | None = None  # None: the pool ran out first

    @property
    def predicted(self) -> float:
        """The random-order prediction; 'cannot decide' (or 'will hardly decide') as the labels left."""
        if self.pool_cannot_decide or self.predicted_random is None:
            return float(self.pool_labels)
        return float(self.predicted_random)

    @property
    def needed(self) -> float:
        return float(self.pool_labels if self.simulated is None else self.simulated)

    @property
    def ratio(self) -> float:
        """predicted / needed, each at least one batch (a check decided at the first look needed up to a batch)."""
        return max(self.predicted, self.batch_labels) / max(self.needed, self.batch_labels)


_POOL: RealPool | None = None  # the pool of a worker process (inherited, not pickled a task)
_WORK: Path | None = None
KEEP_STORES = False  # keep each campaign's store (to read its plan again)


def campaign(size: int, seed: int, judges) -> list[Campaign]:
    """One start of ``size`` items: the plan of each judge through the product, then the random continuation."""
    pool, work = _POOL, _WORK
    start = start_sample(pool, size, seed)
    folder = work / f"start-{size}-{seed}"
    store = copy_store(work / "base" / "workbench.db", folder)
    add_labels(store, pool, start, folder)
    rest = pool.labels_of(i for i in pool.ids if i not in set(start))
    out = []
    for judge in judges:
        _, p = product_plan(store, pool, judge, folder)
        rows = [Campaign(judge, size, seed, c.check, c.reason, c.more_labels_random, c.more_labels,
                         c.pool_cannot_decide, rest, FIRST_BATCH * pool.overlap)
                for c in p.undecided if c.check in pool.checks]
        if rows:
            got = simulate(pool, judge, start, [r.check for r in rows], seed)
            for r in rows:
                r.simulated = got[r.check]
        out += rows
    store.close()
    if not KEEP_STORES:  # the copies add up: 3 sizes x seeds x 12 MB
        shutil.rmtree(folder)
    return out


def _campaign_task(args):
    return campaign(*args)


def run(pool: RealPool, *, judges=JUDGES, sizes=SIZES, seeds: int = SEEDS, jobs: int = 2,
        work: Path | None = None) -> list[Campaign]:
    """Every campaign of every case (a judge x starting size), ``seeds`` campaigns a starting size."""
    global _POOL, _WORK
    _POOL, _WORK = pool, work or Path(tempfile.mkdtemp(prefix="plan-honesty-"))
    if not (_WORK / "base" / "workbench.db").exists():
        build_store(pool, _WORK / "base", judges).close()
    tasks = [(size, seed, tuple(judges)) for size in sizes for seed in range(seeds)]
    from workbench.calibration import calibrate as calibration
    from workbench.features.planning import plan as planning  # noqa: F401  imported once, before the workers fork
    from workbench.stats.planning import z_value

    z_value(0.95)  # scipy.stats: seconds to import
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as workers:
            done = workers.map(_campaign_task, tasks, chunksize=1)
    else:
        done = [_campaign_task(t) for t in tasks]
    return [c for batch in done for c in batch]


@dataclass
class CheckSummary:
    judge: str
    size: int
    check: str
    campaigns: list[Campaign]
    seeds: int

    @property
    def counted(self) -> bool:
        return len(self.campaigns) >= MIN_SHARE * self.seeds

    @property
    def ratio(self) -> float:
        return float(np.median([c.ratio for c in self.campaigns]))

    @property
    def within_2x(self) -> bool:
        return 0.5 <= self.ratio <= 2.0

    @property
    def share_within(self) -> float:
        return float(np.mean([0.5 <= c.ratio <= 2.0 for c in self.campaigns]))


def summarise(campaigns: list[Campaign], judges=JUDGES, sizes=SIZES, seeds: int = SEEDS):
    """[(judge, size, [CheckSummary])] for every case, checks in the gate's order."""
    cases = []
    for judge in judges:
        for size in sizes:
            mine = [c for c in campaigns if c.judge == judge and c.size == size]
            checks = [k for k in LABEL_CHECKS if any(c.check == k for c in mine)]
            cases.append((judge, size, [CheckSummary(judge, size, k, [c for c in mine if c.check == k], seeds)
                                        for k in checks]))
    return cases


def case_passes(checks: list[CheckSummary]) -> bool | None:
    """Every counted check within 2x (None: no check undecided often enough to count)."""
    counted = [s for s in checks if s.counted]
    return None if not counted else all(s.within_2x for s in counted)


def _n(x: float) -> str:
    return f"{x:,.0f}"


def _quartiles(values) -> str:
    q1, q2, q3 = np.quantile(np.asarray(values, dtype=float), [0.25, 0.5, 0.75])
    return f"{_n(q2)} [{_n(q1)}, {_n(q3)}]"


def table(cases, seeds: int) -> str:
    lines = ["| judge | starting items | undecided check (campaigns) | predicted labels, random order: median [IQR] "
             "(cannot decide) | active order | simulated labels: median [IQR] (pool ran out) | median ratio "
             "| campaigns within 2x | within 2x |", "|---|---|---|---|---|---|---|---|---|"]
    for judge, size, checks in cases:
        if not checks:
            lines.append(f"| {judge} | {size} | none undecided | | | | | | (nothing to predict) |")
        for s in checks:
            cs = s.campaigns
            active = [c.predicted_active for c in cs if c.predicted_active is not None and not c.pool_cannot_decide]
            lines.append(
                f"| {judge} | {size} | {s.check} ({len(cs)} of {seeds}) | {_quartiles([c.predicted for c in cs])} "
                f"({sum(c.pool_cannot_decide for c in cs)}) | {_n(np.median(active)) if active else '-'} | "
                f"{_quartiles([c.needed for c in cs])} ({sum(c.simulated is None for c in cs)}) | {s.ratio:.2f} | "
                f"{s.share_within:.0%} | {('yes' if s.within_2x else 'NO') if s.counted else '(not counted)'} |")
    verdicts = [case_passes(checks) for _, _, checks in cases]
    lines += ["", f"Cases passing (every counted check within 2x): {sum(v is True for v in verdicts)} of "
                  f"{sum(v is not None for v in verdicts)} with a counted check ({len(cases)} cases)."]
    return "\n".join(lines)


POOLS = {"summeval": (summeval_pool, SUMMEVAL, JUDGES),
         "play-favorites": (play_favorites_pool, PLAY_FAVORITES,
                            ("gpt-4o", "anthropic.claude-3-5-sonnet-20241022-v2_0", "meta.llama3-1-70b-instruct-v1_0"))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", choices=sorted(POOLS), default="summeval",
                    help="summeval: the held-out pool; play-favorites: the development pool")
    ap.add_argument("--seeds", type=int, default=SEEDS, help="campaigns a case (each its own start and order)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args()
    make, path, judges = POOLS[args.pool]
    if not path.exists():
        print(f"skipped: {path} is not present")
        return 0
    t0 = time.time()
    campaigns = run(make(), judges=judges, seeds=args.seeds, jobs=args.jobs)
    print(table(summarise(campaigns, judges=judges, seeds=args.seeds), args.seeds))
    print(f"\n({time.time() - t0:.0f} s, {args.seeds} campaigns a case, {RESAMPLES} resamples)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
