"""Campaigns over real pools: a start of labeled items, `workbench plan` read through the product, then real labels.

The machinery ``validation/plan_ranges.py`` measures the plan's predictive ranges with (benchmarks/plan_honesty.md).
A *campaign* labels a random starting sample (every human label of each item), reads the plan through the product
(a temporary SQLite store, ``calibrate`` then ``plan``) and records each undecided gate check's random-order range
of labels to a decision (median and 80% range over the plan's simulated futures); then it keeps drawing items at
random from the rest of the real pool, with their real human labels, re-reading the gate after every batch (the
plan's own batches: 5 items, or 5% of those labeled) until the check is decided or the pool runs out. A start can
have several random continuations (``orders``): the plan is the same, the labels really needed differ.

Pools: SummEval (../shared/data/alttest/summeval), 6,400 items (100 news articles x 16 systems x 4 quality
dimensions), each rated 1-5 by all 3 expert raters; consensus is the workbench's (strict majority, 89% of items reach
one), items cluster by article, categories are the dimensions, pass = 3 or more, the golden set's overlap is 3. It
is *held out*: nothing in the plan's model was chosen or checked on it. Play Favorites (logical correctness), the
development pool of the interval methods, whose judges are also producers (self-preference is measurable); and
mtbench, a pool of 120 items that runs out. SummEval's judges are the first of each family whose judge is not
degenerate (mistral-v03 passes 99.7% of all items): gpt-4o, llama-31, gemini_flash.

Re-reading the gate: each batch recomputes only the report sections the open checks read, with the calls and
arguments ``calibration.calibrate`` makes (``stats.agreement_with_intervals`` for agreement, TPR and TNR;
``human_ceiling`` and the alternative-annotator test for the comparison with the reviewers; ``self_preference``;
the noise floor), and the gate's own ``evaluate`` reads them (tests/planning/test_plan_honesty.py checks that a
full ``calibrate`` gives the same states). The campaigns use 200 bootstrap resamples instead of calibrate's 2,000,
for speed (a campaign re-reads the gate up to 100 times).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
import tempfile
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
SIZES = (50, 100, 200)
RESAMPLES = 200
SEEDS = 4  # starts a case (each with its own random continuations)
GOLDEN_SET, RUBRIC = "pool", "pool-rubric"
ALT_FAMILY = {"gemini_flash": "google", "gemini_pro": "google", "gpt-4o": "openai", "gpt-4o-mini": "openai",
              "llama-31": "meta", "mistral-v03": "mistral"}
#: The gate checks labels can decide (stability, drift, completeness and probes are decided by judge runs).
LABEL_CHECKS = ("evidence", "agreement", "pass_fail", "as_good_as_human", "self_preference")


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
    return RealPool("Play Favorites", ids,
                    {r.item_id: {"human-mean": int(round(r.gt)) - 1} for r in first.itertuples()}, judges,
                    dict(zip(first["item_id"], first["prompt_id"])), dict(zip(first["item_id"], first["dataset"])),
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
    """Items added by each look: the plan's own batches (``stats.plans.paths.looks``: 5 items, or 5% of the items
    labeled so far when that is more), so the campaigns read the gate when the plan's futures do."""
    from workbench.stats.plans.paths import looks as plan_looks

    return plan_looks(n_start, n_rest).tolist()


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


# -- campaigns --------------------------------------------------------------------------------------------------------

@dataclass
class Campaign:
    """One undecided check of one campaign: the plan's random-order range, and the labels one real random order of
    the rest of the pool then needed."""

    pool: str
    judge: str
    size: int
    seed: int                      # the start's
    order: int                     # which random continuation of that start
    check: str
    low: float | None              # the plan's 80% range and median of labels, random order (None: beyond its
    median: float | None           # simulated horizon)
    high: float | None
    pool_decides: float            # the plan's share of futures the pool decides
    pool_labels: int               # labels the rest of the pool holds
    needed: int | None = None      # labels the real order needed (None: the pool ran out first)
    recommended_median: float | None = None

    def _capped(self, x: float | None) -> float:
        """A count read as the old comparison read 'this pool cannot decide it': at most the labels left (None, or
        beyond the pool, is 'at least the labels left')."""
        return float(self.pool_labels) if x is None else min(float(x), float(self.pool_labels))

    @property
    def inside(self) -> bool:
        """The labels really needed lie in the 80% range (a pool that ran out: the range reaches past the pool)."""
        return self._capped(self.low) <= self._capped(self.needed) <= self._capped(self.high)

    @property
    def width(self) -> float:
        """high / low (infinite when the range goes past the simulated horizon)."""
        if self.high is None or not self.low:
            return float("inf")
        return float(self.high) / float(self.low)

    @property
    def ratio(self) -> float:
        """median / needed, both capped at the labels left and at least one batch."""
        batch = float(BATCH_LABELS.get(self.pool, 1))
        return max(self._capped(self.median), batch) / max(self._capped(self.needed), batch)

    @property
    def within_2x(self) -> bool:
        return 0.5 <= self.ratio <= 2.0


BATCH_LABELS: dict[str, int] = {}  # labels of the first batch by pool: the simulation tells no finer
_POOL: RealPool | None = None  # the pool of a worker process (inherited, not pickled a task)
_WORK: Path | None = None
KEEP_STORES = False  # keep each campaign's store (to read its plan again)


def campaign(size: int, seed: int, judges, orders: int = 1) -> list[Campaign]:
    """One start of ``size`` items: the plan of each judge through the product, then ``orders`` random
    continuations of the rest of the pool, each labeled until the gate decides every check the plan left open."""
    pool, work = _POOL, _WORK
    start = start_sample(pool, size, seed)
    folder = work / f"start-{size}-{seed}"
    store = copy_store(work / "base" / "workbench.db", folder)
    add_labels(store, pool, start, folder)
    rest = pool.labels_of(i for i in pool.ids if i not in set(start))
    out = []
    for judge in judges:
        _, p = product_plan(store, pool, judge, folder)
        checks = [c for c in p.undecided if c.check in pool.checks and c.random is not None]
        for k in range(orders):
            rows = [Campaign(pool.name, judge, size, seed, k, c.check, c.random.labels.low, c.random.labels.median,
                             c.random.labels.high, c.random.pool_decides, rest,
                             recommended_median=c.recommended.labels.median) for c in checks]
            if rows:
                got = simulate(pool, judge, start, [r.check for r in rows], seed * 1000 + k)
                for r in rows:
                    r.needed = got[r.check]
            out += rows
    store.close()
    if not KEEP_STORES:  # the copies add up: 3 sizes x seeds x 12 MB
        shutil.rmtree(folder)
    return out


def _campaign_task(args):
    return campaign(*args)


def run(pool: RealPool, *, judges=JUDGES, sizes=SIZES, seeds: int = SEEDS, orders: int = 1, jobs: int = 2,
        work: Path | None = None) -> list[Campaign]:
    """Every campaign of every case (a judge x starting size): ``seeds`` starts a size, ``orders`` continuations
    a start."""
    global _POOL, _WORK
    _POOL, _WORK = pool, work or Path(tempfile.mkdtemp(prefix="plan-honesty-"))
    BATCH_LABELS[pool.name] = FIRST_BATCH * pool.overlap
    if not (_WORK / "base" / "workbench.db").exists():
        build_store(pool, _WORK / "base", judges).close()
    tasks = [(size, seed, tuple(judges), orders) for size in sizes for seed in range(seeds)]
    from workbench.calibration import calibrate as calibration  # noqa: F401  imported once, before the workers fork
    from workbench.features.planning import plan as planning  # noqa: F401
    from workbench.stats.planning import z_value

    z_value(0.95)  # scipy.stats: seconds to import
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as workers:
            done = workers.map(_campaign_task, tasks, chunksize=1)
    else:
        done = [_campaign_task(t) for t in tasks]
    return [c for batch in done for c in batch]


POOLS = {"summeval": (summeval_pool, SUMMEVAL, JUDGES),
         "play-favorites": (play_favorites_pool, PLAY_FAVORITES,
                            ("gpt-4o", "anthropic.claude-3-5-sonnet-20241022-v2_0", "meta.llama3-1-70b-instruct-v1_0"))}
