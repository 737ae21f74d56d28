"""The validity alarm's promises, measured on real data (issue 51, item 3): labels from a planted drop to the alarm
against the size of the drop and the scale, for the bet used up to issue 51 and the new one; false alarms over calm
replays of 30 and 90 days; the test's level at the edge of its null hypothesis.

The pools (../shared/data): each is a judge's verdicts and the humans' labels of the same items; an *approval
sample* of 400 of them plays the approval golden set (its confusion matrix gives the floor, as a bundle's does) and
the other items are the stream.

- binary: Play Favorites' logical correctness (gpt-4o's rows, 5,305 answers), pass (+1) or not, Cohen's kappa,
  bound 0.1 (gpt-4o's kappa is about 0.34 there);
- 3-point: the same rows on -1 / 0 / +1 with the monitoring replays' approval rows (tests/monitoring),
  Krippendorff's ordinal alpha, bound 0.1 (the replays' policy; gpt-4o's alpha is about 0.34);
- 5-point: SummEval (100 articles x 16 systems x 4 dimensions), the consensus of its 3 expert raters (strict
  majority: 5,680 of 6,400 items); the judge is *planted*, since no LLM judge there agrees well (ordinal alpha
  0.06 to 0.24): the consensus with 9% of its verdicts moved one point (inward at the ends), which is the user's
  high-agreement judge (ordinal alpha about 0.92 at approval); ordinal alpha, the gate's default bound 0.667.

A *drop replay* draws the labels of 15 days (300 traces a day, 10% labeled: Binomial(4,500, 0.1)) from the stream
items, then as many again with each verdict dropped with probability ``share``: *flipped* on the binary and
3-point pools as the monitoring replays flip (a pass becomes the lowest value, anything else the highest),
*mirrored* on the 5-point pool (v -> 6 - v). The delay is the count of labels from the first one after the drop up
to and including the one at which the wealth reached 1/alpha; an alarm before the drop is an early (false) alarm,
none by the end a miss. The old and the new bet run on the same replays, so they are compared replay by replay:
the difference of their median delays, with the bootstrap standard error of that difference over the replays.
The drop is given in the gate's metric: on the approval sample, and on every stream item with the drop applied
(its own chance term, as a re-calibration would find it).

A *calm replay* draws labels with replacement from the stream items (their mean agreement is the judge's real one,
above the floor on every pool, so H0 holds and any alarm is false), as many a day as Binomial(per_day, 0.1), for
90 days; its first 30 days are its 30-day replay (the test's alarm at label t depends on the first t labels only).
The promise, P(any false alarm) <= alpha = 5%, holds with 95% confidence when the one-sided 95% Clopper-Pearson
upper bound of the share of calm replays that alarmed is <= 5%.

*Edge of H0*: labels drawn from a mixture of the stream items as they are and with half their verdicts dropped,
weighted so that the mean agreement is exactly the floor; the test looked at after every one of ``n`` labels
rejects in at most alpha of the runs (Ville's inequality), up to the runs' binomial noise.

    python -m validation.promises.validity [--replays 200] [--calm 1000] [--seed 51]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from validation.promises.rows import PromiseRow, markdown
from workbench import stats
from workbench.core.consensus import consensus_label
from workbench.features.monitoring.report import ALPHA
from workbench.stats.monitoring.validity import (
    MEMORIES,
    AgreementScale,
    agreement_scale,
    bets,
    betting_test,
)
from workbench.stats.selective.fixed_sequence import clopper_pearson_upper

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
PLAY_FAVORITES = DATA / "play_favorites" / "Logical_correctness.csv"
SUMMEVAL = DATA / "alttest" / "summeval"
APPROVAL = 400  # items in the approval sample, as the monitoring tests' approval golden set
LABEL_RATE = 0.1
DAYS_BEFORE = 15  # a drop replay's days before the drop, and after it
DROP_PER_DAY = 300
SHARES = (0.1, 0.2, 0.3, 0.5)
HORIZONS = (30, 90)
RATES = (60, 300)  # traces a day: the user's traffic, and the monitoring replays' own
WITHIN = 150  # the delay target, in labels after the drop


def available() -> bool:
    return PLAY_FAVORITES.exists() and SUMMEVAL.exists()


@dataclass(frozen=True)
class Pool:
    """A judge's verdicts and the humans' labels on one scale: the approval sample's scale and the stream items."""

    name: str
    source: str
    scale: AgreementScale
    pass_threshold: int
    human: np.ndarray  # the stream items
    judge: np.ndarray
    drop_kind: str  # "flipped" or "mirrored"
    approved: float  # the gate's metric on the approval sample

    def dropped(self, verdicts: np.ndarray) -> np.ndarray:
        lo, hi = min(self.scale.values), max(self.scale.values)
        if self.drop_kind == "mirrored":
            return lo + hi - verdicts
        return np.where(verdicts >= self.pass_threshold, lo, hi)

    def metric_after(self, share: float, seed: int = 0) -> float:
        """The gate's metric on every stream item with the drop applied to a ``share`` of them at random."""
        hit = np.random.default_rng(seed).random(self.judge.size) < share
        return _metric(self.scale, self.pass_threshold, self.human,
                       np.where(hit, self.dropped(self.judge), self.judge))

    @property
    def stream_agreement(self) -> float:
        """The stream's mean per-trace agreement: the calm replays' true mean, to be compared with the floor."""
        return float(self.scale.agreement(self.judge, self.human).mean())


def _metric(scale: AgreementScale, pass_threshold: int, human: np.ndarray, judge: np.ndarray) -> float:
    m = stats.agreement_metrics(human, judge, scale=scale.values, pass_threshold=pass_threshold)
    return float(m[scale.metric])


def _pool(name: str, source: str, human: np.ndarray, judge: np.ndarray, approval: np.ndarray, values, *,
          metric: str, bound: float, pass_threshold: int, drop_kind: str) -> Pool:
    rest = np.setdiff1d(np.arange(human.size), approval)
    cm = stats.confusion_matrix(human[approval], judge[approval], scale=values)
    scale = agreement_scale(cm, values, metric=metric, bound=bound)
    return Pool(name, source, scale, pass_threshold, human[rest], judge[rest], drop_kind,
                _metric(scale, pass_threshold, human[approval], judge[approval]))


@cache
def play_favorites(binary: bool = False) -> Pool:
    """gpt-4o's rows: the humans' mean rating rounded half up and the judge's rating, both on -1 / 0 / +1 (as
    tests/monitoring/realdata.py reads them); binary: pass (+1) or not."""
    import pandas as pd

    d = pd.read_csv(PLAY_FAVORITES, usecols=["judge", "gt", "rating"])
    d = d[d["judge"] == "gpt-4o"].reset_index(drop=True)
    human = np.floor(d["gt"].to_numpy() + 0.5).astype(int) - 1
    judge = d["rating"].to_numpy().astype(int) - 1
    approval = np.random.default_rng(2026).permutation(human.size)[:APPROVAL]  # the monitoring tests' approval
    if binary:
        return _pool("binary", "Play Favorites, gpt-4o, pass or not", (human == 1).astype(int),
                     (judge == 1).astype(int), approval, (0, 1), metric="cohen_kappa", bound=0.1,
                     pass_threshold=1, drop_kind="flipped")
    return _pool("3-point", "Play Favorites, gpt-4o, -1 / 0 / +1", human, judge, approval, (-1, 0, 1),
                 metric="krippendorff_alpha_ordinal", bound=0.1, pass_threshold=0, drop_kind="flipped")


@cache
def summeval(moved: float = 0.09, seed: int = 51) -> Pool:
    """The 3 experts' consensus on 1-5 and a planted judge: the consensus with a ``moved`` share of its verdicts
    one point off (up or down at random; inward at 1 and 5)."""
    humans = json.loads((SUMMEVAL / "human_annotations.json").read_text())
    ids = sorted({i for anns in humans.values() for i in anns})
    labels = [consensus_label([int(anns[i]) for anns in humans.values() if i in anns]) for i in ids]
    human = np.array([v for v in labels if v is not None])
    rng = np.random.default_rng(seed)
    step = np.where(rng.random(human.size) < 0.5, -1, 1)
    step = np.where(human == 1, 1, np.where(human == 5, -1, step))
    judge = np.where(rng.random(human.size) < moved, human + step, human)
    approval = rng.permutation(human.size)[:APPROVAL]
    return _pool("5-point", f"SummEval consensus, planted judge ({moved:.0%} of verdicts one point off)", human,
                 judge, approval, (1, 2, 3, 4, 5), metric="krippendorff_alpha_ordinal", bound=0.667,
                 pass_threshold=3, drop_kind="mirrored")


def pools() -> tuple[Pool, ...]:
    return play_favorites(binary=True), play_favorites(), summeval()


@dataclass(frozen=True)
class Method:
    name: str
    memories: tuple[int, ...]
    bet: str

    def crossing(self, x: np.ndarray, pool: Pool) -> int | None:
        return betting_test(x, pool.scale.floor, alpha=ALPHA, memories=self.memories, bet=self.bet,
                            levels=pool.scale.levels).crossed_at


OLD = Method("old: aGRAPA on the last 50", (50,), "agrapa")
NEW = Method(f"new: GRAPA, mixture over {', '.join(map(str, MEMORIES))}", MEMORIES, "grapa")


# -- delays after a planted drop ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Delays:
    """One method's delays over the drop replays of one cell: labels after the drop up to the alarm (inf: missed
    by the replay's end; nan: the alarm came before the drop)."""

    pool: str
    share: float
    method: str
    labels: np.ndarray

    @property
    def n(self) -> int:
        return int(self.labels.size)

    @property
    def early(self) -> int:
        return int(np.isnan(self.labels).sum())

    @property
    def missed(self) -> int:
        return int(np.isinf(self.labels).sum())

    def quantile(self, q: float) -> float:
        """Over the replays without an early alarm, a miss counting as longer than any delay."""
        d = self.labels[~np.isnan(self.labels)]
        return float(np.quantile(d, q, method="inverted_cdf")) if d.size else float("nan")

    def within(self, labels: int) -> float:
        """The share of all replays alarmed after the drop and within ``labels`` of it."""
        return float(np.mean(self.labels <= labels))


@dataclass(frozen=True)
class Cell:
    """A drop of one size on one pool, the old and the new bet on the same replays."""

    pool: str
    drop_kind: str
    share: float
    approved: float
    after: float
    old: Delays
    new: Delays

    def median_gain(self, resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
        """(old median - new median, its bootstrap standard error over the replays, resampled in pairs); replays
        with an early alarm under either bet are left out, a miss counts as longer than any delay."""
        keep = ~(np.isnan(self.old.labels) | np.isnan(self.new.labels))
        old, new = np.minimum(self.old.labels[keep], 1e9), np.minimum(self.new.labels[keep], 1e9)
        gain = float(np.median(old) - np.median(new))
        idx = np.random.default_rng(seed).integers(0, old.size, (resamples, old.size))
        boot = np.median(old[idx], axis=1) - np.median(new[idx], axis=1)
        return gain, float(boot.std(ddof=1))


def drop_replay(pool: Pool, share: float, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """(per-trace agreement of one drop replay, labels before the drop)."""
    before, after = rng.binomial(DAYS_BEFORE * DROP_PER_DAY, LABEL_RATE, size=2)
    pick = rng.choice(pool.human.size, before + after, replace=False)
    judge = pool.judge[pick]
    hit = (np.arange(before + after) >= before) & (rng.random(before + after) < share)
    judge = np.where(hit, pool.dropped(judge), judge)
    return pool.scale.agreement(judge, pool.human[pick]), int(before)


def delay_cell(pool: Pool, share: float, *, replays: int, seed: int) -> Cell:
    old, new = np.empty(replays), np.empty(replays)
    for r in range(replays):
        x, before = drop_replay(pool, share, np.random.default_rng([seed, int(share * 1000), r]))
        for method, out in ((OLD, old), (NEW, new)):
            t = method.crossing(x, pool)
            out[r] = np.inf if t is None else (np.nan if t < before else t - before + 1)
    return Cell(pool.name, pool.drop_kind, share, pool.approved, pool.metric_after(share),
                Delays(pool.name, share, OLD.name, old), Delays(pool.name, share, NEW.name, new))


def bet_sizes(pool: Pool, share: float, seed: int = 0) -> tuple[float, float, float]:
    """(the log-optimal constant bet, aGRAPA's, the cap), each times (1 - floor), on all the stream's items with
    the drop applied to a ``share`` of them: how far the old approximation bet from the bet it approximates."""
    hit = np.random.default_rng(seed).random(pool.judge.size) < share
    x = np.append(pool.scale.agreement(np.where(hit, pool.dropped(pool.judge), pool.judge), pool.human), 1.0)
    floor, n = pool.scale.floor, x.size - 1  # the bet on the appended label is fitted on all the others
    exact = bets(x, floor, memories=(n,), prior=0, max_bet=0.999, levels=pool.scale.levels)[0, -1]
    approx = bets(x, floor, memories=(n,), bet="agrapa", max_bet=0.999)[0, -1]
    return float(exact * (1 - floor)), float(approx * (1 - floor)), 0.5


# -- calm replays and the edge of H0 ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Calm:
    """Calm replays at one traffic: how many alarmed within each horizon, per method."""

    pool: str
    per_day: int
    replays: int
    alarmed: tuple[tuple[str, int, int], ...]  # (method, horizon in days, replays alarmed within it)

    def count(self, method: str, days: int) -> int:
        return next(k for m, d, k in self.alarmed if m == method and d == days)

    def upper(self, method: str, days: int) -> float:
        return clopper_pearson_upper(self.count(method, days), self.replays, 0.05)


def calm(pool: Pool, per_day: int, *, replays: int, seed: int, methods: tuple[Method, ...] = (OLD, NEW)) -> Calm:
    x_all = pool.scale.agreement(pool.judge, pool.human)
    first = {m.name: [] for m in methods}
    ends = []
    for r in range(replays):
        rng = np.random.default_rng([seed, per_day, r])
        per = rng.binomial(per_day, LABEL_RATE, size=max(HORIZONS))
        x = x_all[rng.integers(0, x_all.size, int(per.sum()))]
        ends.append({h: int(per[:h].sum()) for h in HORIZONS})
        for m in methods:
            first[m.name].append(m.crossing(x, pool))
    alarmed = tuple((m.name, h, sum(1 for t, e in zip(first[m.name], ends) if t is not None and t < e[h]))
                    for m in methods for h in HORIZONS)
    return Calm(pool.name, per_day, replays, alarmed)


@dataclass(frozen=True)
class Edge:
    pool: str
    labels: int
    runs: int
    rejected: int

    @property
    def rate(self) -> float:
        return self.rejected / self.runs

    @property
    def allowed(self) -> float:
        """alpha plus 2.5 binomial standard deviations of the runs."""
        return ALPHA + 2.5 * np.sqrt(ALPHA * (1 - ALPHA) / self.runs)


def edge(pool: Pool, *, labels: int, runs: int, seed: int, method: Method = NEW) -> Edge:
    """Labels from the stream as it is (mean above the floor) and with half its verdicts dropped (below), mixed so
    that the mean agreement is exactly the floor."""
    good = pool.scale.agreement(pool.judge, pool.human)
    hit = np.random.default_rng(seed).random(pool.judge.size) < 0.5
    bad = pool.scale.agreement(np.where(hit, pool.dropped(pool.judge), pool.judge), pool.human)
    w = (pool.scale.floor - bad.mean()) / (good.mean() - bad.mean())  # P(a label comes from the good half)
    rejected = 0
    for r in range(runs):
        rng = np.random.default_rng([seed, r])
        from_good = rng.random(labels) < w
        x = np.where(from_good, good[rng.integers(0, good.size, labels)], bad[rng.integers(0, bad.size, labels)])
        rejected += method.crossing(x, pool) is not None
    return Edge(pool.name, labels, runs, rejected)


# -- the promise table --------------------------------------------------------------------------------------------


#: The delay each scale's alarm promises after a drop of the named size: (pool, share, labels, share of replays).
DELAY_TARGETS = (("5-point", 0.5, WITHIN, 0.95), ("5-point", 0.5, 50, 0.95), ("5-point", 0.3, 100, 0.95),
                 ("3-point", 0.3, WITHIN, 0.95), ("binary", 0.3, WITHIN, 0.95))


def delay_rows(cells: list[Cell]) -> list[PromiseRow]:
    out = []
    for name, share, labels, need in DELAY_TARGETS:
        c = next(c for c in cells if c.pool == name and c.share == share)
        got = c.new.within(labels)
        out.append(PromiseRow(f"validity: alarm after a drop on the {name} scale, {share:.0%} of verdicts "
                              f"{c.drop_kind} ({c.pool} metric {c.approved:.2f} -> {c.after:.2f})",
                              f"within {labels} labels in >= {need:.0%} of replays",
                              f"{got:.1%} (median {c.new.quantile(0.5):.0f}, 90th percentile "
                              f"{c.new.quantile(0.9):.0f})", c.new.n, got >= need))
    early = sum(c.new.early for c in cells)
    n = sum(c.new.n for c in cells)
    upper = clopper_pearson_upper(early, n, 0.05)
    out.append(PromiseRow("validity: no alarm before the drop (all drop replays, 15 days of 300 traces before it)",
                          f"<= {ALPHA:.0%} (95% upper bound)", f"{early} of {n}; upper bound {upper:.2%}", n,
                          upper <= ALPHA))
    slower = [c for c in cells if c.median_gain()[0] < -2 * c.median_gain()[1]]
    out.append(PromiseRow("validity: the new bet is not slower than the old in any cell (median delay, same "
                          "replays)", "no cell slower by more than 2 bootstrap SE",
                          f"{len(slower)} of {len(cells)} cells slower" +
                          (f" ({', '.join(f'{c.pool} {c.share:.0%}' for c in slower)})" if slower else ""),
                          sum(c.new.n for c in cells), not slower))
    return out


def calm_rows(rates: list[Calm]) -> list[PromiseRow]:
    return [PromiseRow(f"validity: false alarms over {h} days, {c.per_day} traces a day ({LABEL_RATE:.0%} labeled), "
                       f"{c.pool}, no drop", f"<= {ALPHA:.0%} (95% upper bound)",
                       f"{c.count(NEW.name, h) / c.replays:.2%} ({c.count(NEW.name, h)} of {c.replays}); upper "
                       f"bound {c.upper(NEW.name, h):.2%}", c.replays, c.upper(NEW.name, h) <= ALPHA)
            for c in rates for h in HORIZONS]


def edge_rows(edges: list[Edge]) -> list[PromiseRow]:
    return [PromiseRow(f"validity: rejections at the edge of H0 (mean agreement = the floor), {e.pool}, looked at "
                       f"after each of {e.labels:,} labels", f"<= {ALPHA:.0%} + 2.5 sd ({e.allowed:.2%})",
                       f"{e.rate:.2%} ({e.rejected} of {e.runs})", e.runs, e.rate <= e.allowed) for e in edges]


@dataclass(frozen=True)
class Measured:
    cells: list[Cell]
    calm: list[Calm]
    edges: list[Edge]

    def rows(self) -> list[PromiseRow]:
        return delay_rows(self.cells) + calm_rows(self.calm) + edge_rows(self.edges)


def run(*, replays: int = 200, calm_replays: int = 1000, edge_runs: int = 1000, seed: int = 51) -> Measured:
    ps = pools()
    cells = [delay_cell(p, s, replays=replays, seed=seed) for p in ps for s in SHARES]
    rates = [calm(p, per_day, replays=calm_replays, seed=seed) for p in ps for per_day in RATES]
    edges = [edge(p, labels=1000, runs=edge_runs, seed=seed) for p in ps]
    return Measured(cells, rates, edges)


def measure(*, replays: int = 200, calm_replays: int = 1000, edge_runs: int = 1000, seed: int = 51) -> list[PromiseRow]:
    """The promise rows (delays by scale, no early alarm, not slower than the old bet, calm false alarms, the
    edge of H0)."""
    return run(replays=replays, calm_replays=calm_replays, edge_runs=edge_runs, seed=seed).rows()


def speed(labels: int = 100_000, repeats: int = 3) -> list[tuple[str, float]]:
    """Seconds (best of ``repeats``) of the new test over ``labels`` labels: a calm 5-point stream, and labels drawn
    uniformly over the 5-point agreement values (every window below the floor: every bet solved)."""
    pool = summeval()
    rng = np.random.default_rng(0)
    calm_x = pool.scale.agreement(pool.judge, pool.human)[rng.integers(0, pool.judge.size, labels)]
    worst = rng.choice(pool.scale.levels, labels)
    out = []
    for name, x in (("calm 5-point stream", calm_x), ("every bet solved", worst)):
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            betting_test(x, pool.scale.floor, levels=pool.scale.levels)
            times.append(time.perf_counter() - t)
        out.append((name, min(times)))
    return out


# -- printing -----------------------------------------------------------------------------------------------------

def _q(d: Delays, q: float) -> str:
    v = d.quantile(q)
    return f"> {DAYS_BEFORE}d" if np.isinf(v) else f"{v:.0f}"


def delay_table(cells: list[Cell]) -> str:
    lines = [("| scale | drop | metric: approval -> after | old: median / 90th pct / missed | new: median / 90th "
              "pct / missed | median gain (SE) | early alarms old / new |"), "|---|---|---|---|---|---|---|"]
    for c in cells:
        gain, se = c.median_gain()
        shown = f"{gain:+.0f} ({se:.0f})" if np.isfinite(c.old.quantile(.5) + c.new.quantile(.5)) else "-"
        lines.append(f"| {c.pool} | {c.share:.0%} {c.drop_kind} | {c.approved:.2f} -> {c.after:.2f} | "
                     f"{_q(c.old, .5)} / {_q(c.old, .9)} / {c.old.missed} | {_q(c.new, .5)} / {_q(c.new, .9)} / "
                     f"{c.new.missed} | {shown} | {c.old.early} / {c.new.early} |")
    return "\n".join(lines)


def calm_table(rates: list[Calm]) -> str:
    lines = ["| scale | traces a day | days | replays | old: alarmed | new: alarmed | new: 95% upper bound |",
             "|---|---|---|---|---|---|---|"]
    for c in rates:
        for h in HORIZONS:
            lines.append(f"| {c.pool} | {c.per_day} | {h} | {c.replays:,} | {c.count(OLD.name, h)} | "
                         f"{c.count(NEW.name, h)} | {c.upper(NEW.name, h):.2%} |")
    return "\n".join(lines)




def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replays", type=int, default=200, help="drop replays per cell (default 200)")
    ap.add_argument("--calm", type=int, default=1000, help="calm replays per pool and traffic (default 1,000)")
    ap.add_argument("--edge", type=int, default=1000, help="runs at the edge of H0 per pool (default 1,000)")
    ap.add_argument("--seed", type=int, default=51)
    args = ap.parse_args(argv)
    if not available():
        print(f"real data not present at {DATA}")
        return 1
    t = time.perf_counter()
    m = run(replays=args.replays, calm_replays=args.calm, edge_runs=args.edge, seed=args.seed)
    for p in pools():
        print(f"{p.name}: {p.source}; {p.scale.metric} {p.approved:.2f} at approval, bound {p.scale.bound:g}, floor "
              f"{p.scale.floor:.4f} on the mean agreement, stream's mean {p.stream_agreement:.4f} "
              f"({p.judge.size:,} stream items)")
    print(f"\nLabels after the drop until the alarm ({args.replays} replays a cell: 15 days of 300 traces, 10% "
          "labeled, before the drop and after it):\n")
    print(delay_table(m.cells))
    print("\nBets on each pool's whole stream after the drop, times (1 - floor) (the cap is 0.5):\n")
    print("| scale | drop | log-optimal (GRAPA) | aGRAPA |\n|---|---|---|---|")
    for p in pools():
        for share in SHARES:
            exact, approx, _ = bet_sizes(p, share)
            print(f"| {p.name} | {share:.0%} {p.drop_kind} | {exact:.3f} | {approx:.3f} |")
    print("\nFalse alarms over calm replays (no drop):\n")
    print(calm_table(m.calm))
    print("\nThe promises:\n")
    rows = m.rows()
    print(markdown(rows))
    print(f"\n({time.perf_counter() - t:.0f} s)\n")
    for name, seconds in speed():
        print(f"betting_test over 100,000 labels, {name}: {seconds:.2f} s")
    return 0 if all(r.holds for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
