"""Labels to a decision as predictive ranges: the gate's rules re-read on simulated futures of the golden set.

``plan`` asks, for every gate check not decided yet and for the verdict, how many more labels (and labeled items)
reach a decision. The answer depends on labels nobody has given yet, so it is a distribution, and this module
draws it:

1. *Futures.* Each path draws the human labels of every item not labeled yet (the unlabeled pool, then new items
   like the golden set's own, for when the pool runs out) from the posterior predictive of the labels so far
   (:func:`workbench.stats.plans.futures.draw_donors`: a Dirichlet process over task clusters, within the item's
   judge score, producer group and category).
2. *Orders.* The same futures are labeled in two orders: the one the plan recommends (the active queue designed for
   the checks now undecided, ``active_queue``: items by ``u / pi``, estimates weighted by ``1 / pi`` as
   ``calibrate`` weighs them) and a random one (a fresh permutation on each path). Items beyond the pool come after
   it, in either order.
3. *Looks.* After every batch (5 items, or 5% of those labeled), the report's measurements are computed on the
   path's labels (:mod:`workbench.stats.plans.measures`) and the gate's own rules decide each check:
   ``stats.planning.threshold_states`` and ``band_states`` (which ``gate._decide_lower_bound`` and
   ``gate._self_preference`` call), the policy's counts (``min_class_items``) and ``gate.evidence_needs``.
4. *Ranges.* A check is decided at the first look that decides it; the median and the 80% range over the paths of
   the labels (and items) at that look are the plan's numbers (:func:`workbench.stats.plans.paths.predictive_range`),
   with the share of paths that decide it before the pool runs out.

Checks already decided stay decided and are not simulated; checks that labels do not decide (stability, drift,
stress probes) keep their own sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.calibration.gate import (
    FAILED,
    UNDECIDED,
    Policy,
    Verdict,
    evidence_needs,
)
from workbench.calibration.report import CalibrationReport, Evidence, Metric
from workbench.features.planning.records import Forecast
from workbench.stats import planning as sp
from workbench.stats.plans import measures
from workbench.stats.plans.futures import Donors, draw_donors
from workbench.stats.plans.paths import (
    PATHS,
    LookSums,
    first_decided,
    looks,
    predictive_range,
    random_positions,
)
from workbench.stats.plans.selection import (
    selection_weights,
    undecided_band,
    undecided_below,
)

#: The gate checks labels decide, and the measurements (parts) behind each.
LABEL_CHECKS = {"evidence": ("evidence",), "agreement": ("agreement",), "pass_fail": ("tpr", "tnr"),
                "as_good_as_human": ("as_good_as_human",), "self_preference": ("same_family", "same_model")}
ORDERS = ("recommended", "random")
#: The check each part belongs to.
PART_CHECK = {part: check for check, parts in LABEL_CHECKS.items() for part in parts}
#: A part's state where it is not measured at a look (the same-model effect before any item of the judge's model):
#: the gate leaves it out of its check.
ABSENT = -2
#: New items simulated beyond the unlabeled pool: at least this many, and up to ten times the golden set.
MIN_BEYOND = 3000
#: At most this many future items a path (the paths' arrays stay a few tens of megabytes).
MAX_FUTURE = 12_000


@dataclass(frozen=True)
class ItemArrays:
    """Items as arrays, one entry each: the judge's score (scale position), task cluster, producer group, category,
    the active design's stratum; for labeled items also the consensus (position, -1 none) and the human labels."""

    judge: np.ndarray
    cluster: np.ndarray
    same_model: np.ndarray
    same_family: np.ndarray
    other: np.ndarray
    category: np.ndarray
    stratum: np.ndarray                      # design stratum code (0 .. strata - 1)
    consensus: np.ndarray | None = None      # labeled items only
    counts: np.ndarray | None = None         # (n, K): how many of its labels give each scale value

    def __len__(self) -> int:
        return len(self.judge)

    def take(self, at: np.ndarray) -> ItemArrays:
        return ItemArrays(*(None if x is None else x[at] for x in (
            self.judge, self.cluster, self.same_model, self.same_family, self.other, self.category, self.stratum,
            self.consensus, self.counts)))


@dataclass(frozen=True)
class ActiveOrder:
    """The active queue the plan recommends: each design stratum's judge score and inclusion rate, every pool
    item's priority ``u / pi`` (served lowest first), and the share of items labeled before it."""

    stratum_judge: np.ndarray   # (strata,) scale position
    rate: np.ndarray            # (strata,) the design's inclusion probability
    priority: np.ndarray        # (pool,)
    labeled_before: float


@dataclass(frozen=True)
class GoldenSetArrays:
    scale: tuple[int, ...]
    pass_index: int
    overlap: int
    labeled: ItemArrays
    pool: ItemArrays
    active: ActiveOrder | None
    n_items: int                 # items of the golden set
    labeled_ids: tuple[str, ...] = ()  # the item of each labeled entry, and of each pool entry
    pool_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Simulation:
    """Each simulated check, part and the verdict: a forecast per order (``recommended``, ``random``)."""

    forecasts: dict[str, dict[str, Forecast]] = field(default_factory=dict)  # name -> order -> forecast
    paths: int = 0
    horizon_items: int = 0
    pool_items: int = 0
    labels_alone: bool = True   # the verdict waits only on checks labels decide


def simulate(arrays: GoldenSetArrays, report: CalibrationReport, verdict: Verdict, policy: Policy, *,
             paths: int = PATHS, seed: int = 0, keep: bool = False) -> Simulation:
    """Forecasts for every gate check the labels can decide and that is undecided now, its parts, and the verdict
    (the gate's ``verdict`` on ``report``).

    ``keep`` keeps each order's per-look states on the result (``.looks``), for tests that rebuild a path."""
    states = {c.id: c.status for c in verdict.checks}
    # the comparison with the reviewers is undecided only while the alternative-annotator test has not passed; the
    # simulation reads its paired interval (the test itself is not re-run on the paths: it could only decide sooner)
    open_checks = [c for c in LABEL_CHECKS if states.get(c) == UNDECIDED]
    if not open_checks or len(arrays.labeled) < 2:
        return Simulation()
    future, update, pool = _future_items(arrays, seed)
    donors = _donors(arrays, future, paths, seed)
    feats = _features(arrays, future, update, donors, policy)
    marks = looks(len(arrays.labeled), len(future))
    out: dict[str, dict[str, Forecast]] = {}
    kept = {}
    blocking_other = [c for c, s in states.items() if s == UNDECIDED and c not in LABEL_CHECKS]
    runs = {order: _run_order(order, arrays, report, policy, future, update, pool, donors, feats, marks,
                              open_checks, seed) for order in ORDERS}
    # the futures weighed for the selection (the plan reads a check because it is undecided), from each part's value
    # over the whole future in random order (unweighted): one weight per future and check, the same in both orders
    selected = _selection(report, policy, runs["random"].truths, _open_parts(verdict, open_checks))
    weight_of = {c: np.prod([np.ones(paths)] + [selected[p] for p in LABEL_CHECKS[c] if p in selected], axis=0)
                 for c in open_checks}
    weight_of["verdict"] = np.prod([np.ones(paths)] + [weight_of[c] for c in open_checks], axis=0)
    for order in ORDERS:
        run = runs[order]
        kept[order] = run
        labels, decided = run.labels, {}
        for name, state in run.states.items():
            look, result = first_decided(np.where(state == ABSENT, sp.OPEN, state))
            decided[name] = (look, result)
            w = weight_of.get(name, weight_of.get(PART_CHECK.get(name, ""), None))
            out.setdefault(name, {})[order] = _forecast(look, marks, labels, pool, len(future), _normal(w, paths))
            if name == "same_model" and (state == ABSENT).all():  # never measured: not part of the check
                del out[name]
        if FAILED not in states.values():  # a check failed: the verdict is decided already
            look = _verdict_look(decided, open_checks)
            out.setdefault("verdict", {})[order] = _forecast(look, marks, labels, pool, len(future),
                                                             _normal(weight_of["verdict"], paths))
    result = Simulation(out, paths, len(future), pool, not blocking_other)
    if keep:
        object.__setattr__(result, "looks", {"marks": marks, "future": future, "donors": donors,
                                              "runs": kept, "pool": pool})
    return result


# -- the futures ------------------------------------------------------------------------------------------------------

def _future_items(arrays: GoldenSetArrays, seed: int) -> tuple[ItemArrays, np.ndarray, int]:
    """What labeling meets next, in this order: the labeled items short of the golden set's overlap (their second
    opinions, which the Label page serves first), the unlabeled pool, then new items beyond it (copies of the golden
    set's scored items, drawn at random, in new task clusters of the golden set's mean size). Returns the items, for
    each the labeled item it completes (-1: not labeled yet), and where the pool ends (partial and pool items)."""
    lab, pool = arrays.labeled, arrays.pool
    partial = np.flatnonzero(lab.counts.sum(axis=1) < arrays.overlap) if arrays.overlap >= 2 else np.zeros(0, int)
    head = _concat(lab.take(partial), pool)
    known = len(lab) + len(pool)
    beyond = max(0, min(max(MIN_BEYOND, 10 * known), MAX_FUTURE - len(head)))
    update = np.concatenate([partial, np.full(len(pool) + beyond, -1)]).astype(np.int64)
    if not beyond:
        return head, update, len(head)
    every = _concat(lab, pool)
    pick = np.random.default_rng([seed, 17]).integers(0, len(every), size=beyond)
    size = max(1, round(known / max(1, len(np.unique(every.cluster)))))
    new = every.take(pick)
    new = ItemArrays(new.judge, np.array([f"new-cluster-{k // size}" for k in range(beyond)], dtype=object),
                     new.same_model, new.same_family, new.other, new.category, new.stratum)
    return _concat(head, new), update, len(head)


def _donors(arrays: GoldenSetArrays, future: ItemArrays, paths: int, seed: int) -> Donors:
    """Donors among the labeled items that have the golden set's overlap (when ten or more have: a future item is
    labeled to the overlap, as they were), else among all labeled items; indices into all labeled items."""
    lab = arrays.labeled
    complete = np.flatnonzero(lab.counts.sum(axis=1) >= arrays.overlap)
    among = complete if len(complete) >= 10 else np.arange(len(lab))
    d = draw_donors(*_strata(lab.take(among), future), lab.cluster[among], n_values=len(arrays.scale), paths=paths,
                    seed=seed)
    return Donors(np.where(d.index >= 0, among[np.maximum(d.index, 0)], -1).astype(np.int32), d.prior_value)


def _concat(a: ItemArrays, b: ItemArrays) -> ItemArrays:
    return ItemArrays(*(np.concatenate([x, y]) for x, y in (
        (a.judge, b.judge), (a.cluster.astype(object), b.cluster.astype(object)), (a.same_model, b.same_model),
        (a.same_family, b.same_family), (a.other, b.other), (a.category.astype(object), b.category.astype(object)),
        (a.stratum, b.stratum))))


def _group(x: ItemArrays) -> np.ndarray:
    return (x.same_model.astype(int) * 4 + x.same_family.astype(int) * 2 + x.other.astype(int)).astype(str)


def _strata(labeled: ItemArrays, future: ItemArrays) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Donor strata, finest first: judge score x producer group x category; score x group; score."""
    def levels(x: ItemArrays) -> list[np.ndarray]:
        score, group = x.judge.astype(str), _group(x)
        with_group = np.char.add(np.char.add(score, "|"), group)
        return [np.char.add(np.char.add(with_group, "|"), x.category.astype(str)), with_group, score]

    return levels(labeled), levels(future)


@dataclass(frozen=True)
class _Features:
    """What each future item adds to the report's sums on each path (``(paths, F)``): a new item its donor's
    labels; a labeled item short of the overlap its donor's labels in place of its own (the difference)."""

    consensus: np.ndarray    # the donor's consensus (scale position, -1 none)
    current: np.ndarray      # (F,) the consensus the item has now (-1: none, or not labeled yet)
    labels: np.ndarray       # labels it takes
    multi: np.ndarray        # change in consensus items with the policy's raters
    residual: np.ndarray     # change in the sum of judge minus consensus
    pair: np.ndarray         # change in items with two or more labels (the comparison with the reviewers)
    difference: np.ndarray   # change in the sum of judge-human minus human-human agreement on those items
    difference2: np.ndarray  # ... and of its square


def _item_stats(counts: np.ndarray, judge: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, two or more of them, judge-human minus human-human agreement) of items with these label counts
    (``(n, K)``) and judge scores, as ``stats.human_ceiling`` reads them (the difference 0 below two labels)."""
    m = counts.sum(axis=1)
    pair = m >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        per_human = (counts * (counts - 1)).sum(axis=1) / (m * (m - 1))
        per_judge = counts[np.arange(len(counts)), judge] / m
    return m, pair, np.where(pair, per_judge - per_human, 0.0)


def _features(arrays: GoldenSetArrays, future: ItemArrays, update: np.ndarray, donors: Donors,
              policy: Policy) -> _Features:
    lab = arrays.labeled
    values = np.asarray(arrays.scale, dtype=np.float64)
    k = len(values)
    overlap = max(arrays.overlap, 1)
    prior = donors.index < 0
    index = np.maximum(donors.index, 0)
    judge = future.judge[None, :]
    # a donor's labels, read per labeled item once; a prior draw: every one of the overlap's raters gives its value
    m_l, pair_l, _ = _item_stats(lab.counts, lab.judge)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_human_l = np.where(pair_l, (lab.counts * (lab.counts - 1)).sum(axis=1) / (m_l * (m_l - 1)), 0.0)
        # the donor's labels equal to this item's score (the donor shares its score, but for a coarser fallback)
        per_judge = lab.counts.ravel()[index * k + judge] / m_l[index]
    m = np.where(prior, overlap, m_l[index])
    pair = np.where(prior, overlap >= 2, pair_l[index])
    per_judge = np.where(prior, donors.prior_value == judge, per_judge)
    d = np.where(pair, per_judge - np.where(prior, 1.0, per_human_l[index]), 0.0)
    consensus = np.where(prior, donors.prior_value, lab.consensus[index]).astype(np.int64)
    labels = np.maximum(m, arrays.overlap)  # labeled to the overlap, or as the donor was
    resolved = consensus >= 0
    multi = (resolved & (labels >= policy.min_raters_per_item)).astype(float)
    residual = np.where(resolved, values[judge] - values[np.maximum(consensus, 0)], 0.0)
    # a labeled item short of the overlap: its own labels leave the sums as the donor's come in
    now = update >= 0
    at = np.maximum(update, 0)
    own_m, own_pair, own_d = _item_stats(lab.counts[at], lab.judge[at])
    current = np.where(now, lab.consensus[at], -1)
    own_resolved = now & (current >= 0)
    own_multi = own_resolved & (own_m >= policy.min_raters_per_item)
    own_residual = np.where(own_resolved, values[lab.judge[at]] - values[np.maximum(current, 0)], 0.0)
    own_pair = now & own_pair
    own_d = np.where(own_pair, own_d, 0.0)
    return _Features(consensus, current, labels - np.where(now, own_m, 0), multi - own_multi,
                     residual - own_residual, pair.astype(float) - own_pair, d - own_d, d**2 - own_d**2)


# -- one order ----------------------------------------------------------------------------------------------------

@dataclass
class _Run:
    states: dict[str, np.ndarray]   # check or part -> (paths, looks) state
    labels: np.ndarray              # (paths, looks) labels given by each look
    truths: dict[str, np.ndarray] = field(default_factory=dict)  # part -> (paths,) its value over the whole future
    position: np.ndarray | None = None  # (paths, F) each future item's place in the order


def _run_order(order: str, arrays: GoldenSetArrays, report: CalibrationReport, policy: Policy, future: ItemArrays,
               update: np.ndarray, pool: int, donors: Donors, f: _Features, marks: np.ndarray,
               open_checks: list[str], seed: int) -> _Run:
    paths, n_future = donors.index.shape
    k = len(arrays.scale)
    lab = arrays.labeled
    active = arrays.active if order == "recommended" and arrays.active is not None and pool else None
    partial = int((update >= 0).sum())  # second opinions first, in either order
    if active is not None:  # one order for every path: the pool by priority, then the items beyond it
        rank = np.argsort(np.argsort(active.priority, kind="stable")) + partial
        position = np.broadcast_to(np.concatenate([np.arange(partial), rank, np.arange(pool, n_future)]),
                                   (paths, n_future))
        stratum_f, stratum_l = future.stratum, lab.stratum
        stratum_judge = active.stratum_judge
    else:  # a fresh random order of the second opinions and of the pool on each path
        rng = np.random.default_rng([seed, 29])
        position = np.concatenate([random_positions(paths, partial, rng),
                                   random_positions(paths, pool - partial, rng) + partial,
                                   np.broadcast_to(np.arange(pool, n_future), (paths, n_future - pool))], axis=1)
        stratum_f, stratum_l, stratum_judge = future.judge, lab.judge, np.arange(k)
    strata = len(stratum_judge)
    sums = LookSums(position, marks, stratum_f, strata)
    n_looks = sums.looks
    weights = _weights(active, np.clip(marks - partial, 0, pool - partial)) if active is not None else None

    def total(values_f: Any, values_l: Any) -> np.ndarray:
        """(paths, looks, strata): the labeled items' sum (now) plus the future's by each look."""
        base = np.bincount(stratum_l, weights=np.broadcast_to(np.asarray(values_l, float), len(lab)),
                           minlength=strata)
        return sums.add(values_f) + base[None, None, :]

    def weighted(per_stratum: np.ndarray, power: int = 1) -> np.ndarray:
        w = None if weights is None else weights**power
        return LookSums.weighted(per_stratum, w)

    # the human label of every consensus item, by stratum: the confusion matrix, weighted
    code_l = lab.consensus
    human = np.stack([total((f.consensus == c).astype(float) - (f.current == c)[None, :], code_l == c)
                      for c in range(k)], axis=-1)                                         # (paths, looks, strata, K)
    w = np.ones((n_looks, strata)) if weights is None else weights
    judge_of = np.eye(k)[stratum_judge]                                                   # (strata, K)
    confusion = np.einsum("ptsc,ts,sj->ptcj", human, w, judge_of)
    n_resolved = human.sum(axis=(2, 3))
    resolved_by_stratum = human.sum(axis=3)
    sum_w, sum_w2 = weighted(resolved_by_stratum), weighted(resolved_by_stratum, 2)
    n_eff = measures.kish(sum_w, sum_w2)
    labels = np.broadcast_to(sums.add(f.labels).sum(axis=2), (paths, n_looks)) + float(lab.counts.sum())

    states: dict[str, np.ndarray] = {}
    truths: dict[str, np.ndarray] = {}
    parts = {p for c in open_checks for p in LABEL_CHECKS[c]}
    if "evidence" in parts:
        multi = sums.add(f.multi).sum(axis=2) + float(((lab.consensus >= 0)
                                                        & (lab.counts.sum(axis=1) >= policy.min_raters_per_item)).sum())
        states["evidence"] = _evidence_states(n_resolved, multi, policy)
    if "agreement" in parts:
        name = policy.agreement_metric
        value = measures.confusion_metric(confusion, arrays.scale, arrays.pass_index, name)
        m = report.metric(name)
        scale = measures.standard_error_ratio(n_eff, n_eff[0, 0])
        if m.has_interval and m.value is not None:
            low, high = measures.scaled_interval(value, (m.value, m.ci_low, m.ci_high), scale)
        else:
            low = high = np.full_like(value, np.nan)
        states["agreement"] = sp.threshold_states(value, low, high, policy.min_agreement_lower)
        truths["agreement"] = value[:, -1]
    for part, passing, bound in (("tpr", True, policy.min_tpr_lower), ("tnr", False, policy.min_tnr_lower)):
        if part not in parts:
            continue
        cls = (np.arange(k) >= arrays.pass_index) == passing
        in_class = human[..., cls].sum(axis=3)                              # (paths, looks, strata)
        right = judge_of[:, cls].sum(axis=1) > 0  # the stratum's judge score is of the class: the judge is right
        hits = weighted(in_class * right[None, None, :])
        all_w, all_w2 = weighted(in_class), weighted(in_class, 2)
        n = in_class.sum(axis=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = hits / all_w
            weighting = np.where(all_w2 > 0, n / measures.kish(all_w, all_w2), 1.0)
        deff = float(report.metric(part).design_effect or 1.0)
        low, high = _proportion_bounds(value, n, deff * weighting)
        state = sp.threshold_states(value, low, high, bound)
        states[part] = np.where(n < policy.min_class_items, sp.OPEN, state).astype(np.int8)
        truths[part] = value[:, -1]
    if "as_good_as_human" in parts:
        states["as_good_as_human"], truths["as_good_as_human"] = _as_good_states(total, weighted, f, arrays, policy)
    for part in ("same_family", "same_model"):
        if part in parts:
            states[part], truths[part] = _effect_states(part, total, weighted, f, future, arrays, report, policy)
    for check in open_checks:
        names = [p for p in LABEL_CHECKS[check] if p in states]
        if check == "self_preference":
            states[check] = _worst([states["same_family"]] + ([states["same_model"]] if "same_model" in states
                                                               else []))
        elif len(names) > 1 or names != [check]:
            states[check] = _worst([states[p] for p in names])
    return _Run(states, labels, truths, position)


def _weights(active: ActiveOrder, served: np.ndarray) -> np.ndarray:
    """(looks, strata): ``1 / pi`` of each stratum's items at each look, as ``calibrate`` weighs them: ``pi = 1 -
    (1 - f0) (1 - min(1, s rate))`` (``stats.label_simulation.phased_inclusion``), ``s`` the last priority served
    (items beyond the pool come after it: ``s`` stays at the pool's last)."""
    from workbench.stats.label_simulation import phased_inclusion

    ordered = np.sort(active.priority)
    served = np.concatenate([[0], served])  # pool items served by each look
    s = np.where(served > 0, ordered[np.maximum(served - 1, 0)], 0.0)
    f0 = min(max(active.labeled_before, 1e-9), 1.0)
    pi = np.stack([phased_inclusion(f0, [(active.rate, float(x))]) for x in s])
    return 1.0 / pi


def _proportion_bounds(value: np.ndarray, n: np.ndarray, deff: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The report's interval of a proportion (the very function it calls) on every path and look at once."""
    from workbench.stats.intervals.proportion import proportion_intervals

    return proportion_intervals(value, n, deff=np.maximum(deff, 1.0))

def _evidence_states(n: np.ndarray, multi: np.ndarray, policy: Policy) -> np.ndarray:
    """The evidence check on each path and look, by the gate's own ``evidence_needs`` (once per distinct count)."""
    pairs = np.stack([n.ravel(), multi.ravel()], axis=1).astype(np.int64)
    distinct, inverse = np.unique(pairs, axis=0, return_inverse=True)
    state = np.array([sp.PASS if evidence_needs(CalibrationReport(n_items=int(a), evidence=Evidence(int(a), int(b))),
                                                 policy)[1:3] == (0, 0) else sp.OPEN for a, b in distinct],
                     dtype=np.int8)
    return state[inverse.ravel()].reshape(n.shape)


def _as_good_states(total, weighted, f: _Features, arrays: GoldenSetArrays,
                    policy: Policy) -> tuple[np.ndarray, np.ndarray]:
    """Judge-human minus human-human agreement plus the margin against 0, by the paired interval the gate reads
    (``gate._as_good_as_human``: the difference +/- 1.96 standard errors, decided by ``threshold_states``)."""
    lab = arrays.labeled
    m = lab.counts.sum(axis=1)
    pair_l = m >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        per_human = np.where(pair_l, (lab.counts * (lab.counts - 1)).sum(axis=1) / (m * (m - 1)), 0.0)
        per_judge = np.where(pair_l, lab.counts[np.arange(len(lab)), lab.judge] / m, 0.0)
    d_l = np.where(pair_l, per_judge - per_human, 0.0)
    n_s = total(f.pair, pair_l)
    s1, s2 = total(f.difference, d_l), total(f.difference2, d_l**2)
    n = n_s.sum(axis=2)
    mean, se = measures.paired_difference(n, weighted(n_s), weighted(s1), weighted(n_s, 2), weighted(s1, 2),
                                          weighted(s2, 2))
    gap = mean + policy.human_margin
    z = sp.z_value(0.95)
    state = sp.threshold_states(gap, gap - z * se, gap + z * se, 0.0)
    return np.where(np.isfinite(se) & (se > 0), state, sp.OPEN).astype(np.int8), gap[:, -1]


def _effect_states(part: str, total, weighted, f: _Features, future: ItemArrays, arrays: GoldenSetArrays,
                   report: CalibrationReport, policy: Policy) -> tuple[np.ndarray, np.ndarray]:
    """A self-preference effect (mean residual of the judge's own model or family minus the other families'),
    decided by ``band_states``; the current interval's half-widths scaled by the two groups' effective counts."""
    lab = arrays.labeled
    values = np.asarray(arrays.scale, dtype=np.float64)
    resolved_l = lab.consensus >= 0
    r_l = np.where(resolved_l, values[lab.judge] - values[np.maximum(lab.consensus, 0)], 0.0)
    mine_f = future.same_model if part == "same_model" else future.same_family
    mine_l = lab.same_model if part == "same_model" else lab.same_family
    resolved_f = (f.consensus >= 0).astype(float) - (f.current >= 0)[None, :]  # change in consensus items
    groups = []
    for f_mask, l_mask in ((mine_f, mine_l), (future.other, lab.other)):
        count = total(resolved_f * f_mask[None, :], resolved_l & l_mask)
        sums = total(f.residual * f_mask[None, :], r_l * l_mask)
        groups.append((weighted(sums), weighted(count), measures.kish(weighted(count), weighted(count, 2))))
    (s_a, w_a, n_a), (s_b, w_b, n_b) = groups
    with np.errstate(divide="ignore", invalid="ignore"):
        value = s_a / w_a - s_b / w_b
        variance = 1 / n_a + 1 / n_b
    effect = getattr(report.self_preference, part)
    deff = float(report.metric("exact_agreement").design_effect or 1.0)  # the clustering, as it is now
    if effect is not None and effect.value is not None and effect.ci_low is not None and effect.ci_high is not None:
        scale = np.sqrt(variance / variance[0, 0])
        low, high = measures.scaled_interval(value, (effect.value, effect.ci_low, effect.ci_high), scale)
    else:  # no interval yet: the normal interval of a difference of means, the residuals' spread as now
        spread = float(np.std(r_l[resolved_l], ddof=1)) if resolved_l.sum() > 1 else 1.0
        half = sp.z_value(0.95) * max(spread, 1e-3) * np.sqrt(variance * deff)
        low, high = value - half, value + half
    state = sp.band_states(value, low, high, policy.max_self_preference)
    defined = np.isfinite(value) & (n_a > 0) & (n_b > 0)
    # an effect not measurable yet: undecided (same family) or not part of the check (same model, as the gate)
    return np.where(defined, state, sp.OPEN if part == "same_family" else ABSENT).astype(np.int8), value[:, -1]


def _worst(states: list[np.ndarray]) -> np.ndarray:
    """A check's state from its parts', as the gate combines them: failed if any part failed, else undecided if any
    is, else passed (``ABSENT``: a part not measured at that look, left out)."""
    stack = np.stack(states)
    out = np.where((stack == sp.FAIL).any(axis=0), sp.FAIL,
                   np.where((stack == sp.OPEN).any(axis=0), sp.OPEN, sp.PASS))
    return out.astype(np.int8)


def _verdict_look(decided: dict[str, tuple[np.ndarray, np.ndarray]], open_checks: list[str]) -> np.ndarray:
    """The look at which the verdict is decided on each path: the first failing check's, else the last check's
    (each check counts as decided from its first deciding look on)."""
    looks_, results = zip(*(decided[c] for c in open_checks))
    looks_, results = np.stack(looks_), np.stack(results)
    never = looks_.max(axis=0)
    fail = np.where(results == sp.FAIL, looks_, np.iinfo(np.int64).max).min(axis=0)
    all_done = np.where((results == sp.OPEN).any(axis=0), np.iinfo(np.int64).max, never)
    out = np.minimum(fail, all_done)
    return np.where(out == np.iinfo(np.int64).max, never, out)


def _normal(w: Any, paths: int) -> np.ndarray:
    """Weights of the futures (all ones where no check selects them), as given (each is 1 / probability)."""
    return np.ones(paths) if w is None or np.ndim(w) == 0 else np.asarray(w, dtype=np.float64)


def _open_parts(verdict: Verdict, open_checks: list[str]) -> set[str]:
    """The parts of the open checks that are undecided now, by the gate's own states (a part decided now, such as a
    TPR that passed beside an open TNR, was not selected by its interval)."""
    out = set()
    for check in verdict.checks:
        if check.id not in open_checks:
            continue
        values = check.value if isinstance(check.value, dict) else {}
        for part in LABEL_CHECKS[check.id]:
            state = (values.get(part) or {}).get("state") if len(LABEL_CHECKS[check.id]) > 1 else check.status
            if state in (None, UNDECIDED):
                out.add(part)
    return out


def _selection(report: CalibrationReport, policy: Policy, truths: dict[str, np.ndarray],
               open_parts: set[str]) -> dict[str, np.ndarray]:
    """Per part undecided now by its interval, the weight of every future: ``1 / P(undecided | its truth)`` with the
    current standard error (``stats.plans.selection``). A part undecided for a count (fewer consensus items of a
    class than the policy's minimum) or without an interval yet was not selected by it: no weight."""
    truths = {p: t for p, t in truths.items() if p in open_parts}
    z_pass, z_fail = sp.z_value(0.95), sp.z_value(sp.INTERIM_LEVEL)
    out: dict[str, np.ndarray] = {}

    def facing(m: Metric, bound: float) -> float | None:
        if m.value is None or not m.has_interval:
            return None
        half = (m.value - m.ci_low) if m.value >= bound else (m.ci_high - m.value)
        return half / z_pass if half > 0 else None

    bounds = {"agreement": (policy.agreement_metric, policy.min_agreement_lower), "tpr": ("tpr", policy.min_tpr_lower),
              "tnr": ("tnr", policy.min_tnr_lower)}
    for part, (name, bound) in bounds.items():
        m = report.metric(name)
        se = facing(m, bound)
        counted = part == "agreement" or int(m.n or 0) >= policy.min_class_items
        if part in truths and se and counted:
            out[part] = selection_weights(undecided_below(np.nan_to_num(truths[part], nan=bound), bound, se,
                                                          z_pass, z_fail))
    hc = report.human_ceiling
    if "as_good_as_human" in truths and hc.judge_minus_human_se:
        out["as_good_as_human"] = selection_weights(undecided_below(
            np.nan_to_num(truths["as_good_as_human"], nan=0.0), 0.0, float(hc.judge_minus_human_se), z_pass, z_fail))
    for part in ("same_family", "same_model"):
        e = getattr(report.self_preference, part)
        if part in truths and e is not None and e.ci_low is not None and e.ci_high is not None and e.ci_high > e.ci_low:
            se = (e.ci_high - e.ci_low) / (2 * z_pass)
            out[part] = selection_weights(undecided_band(np.nan_to_num(truths[part], nan=0.0),
                                                         policy.max_self_preference, se, z_pass, z_fail))
    return out


def _forecast(look: np.ndarray, marks: np.ndarray, labels: np.ndarray, pool: int, horizon: int,
              weights: np.ndarray) -> Forecast:
    """The range of labels and items at the decided look over the paths (weighted); paths never decided count as
    beyond."""
    n_looks = len(marks) + 1
    beyond = look >= n_looks
    at = np.minimum(look, n_looks - 1)
    items = np.concatenate([[0], marks])[at]
    spent = labels[np.arange(len(look)), at] - labels[:, 0]
    within = ~beyond & (items <= pool)
    extra = np.maximum(items - pool, 0)
    horizon_labels = float(np.median(labels[:, -1] - labels[:, 0])) if look.size else None
    return Forecast(predictive_range(spent, beyond=beyond, horizon=horizon_labels, weights=weights),
                    predictive_range(items, beyond=beyond, horizon=float(horizon), weights=weights),
                    float(np.average(within, weights=weights)) if look.size else 0.0,
                    predictive_range(extra, beyond=beyond, horizon=float(horizon - pool), weights=weights))


# -- the golden set as arrays -------------------------------------------------------------------------------------

def arrays_from(*, scale: list[int], pass_threshold: int, overlap: int, index: dict[str, Any],
                scores: dict[str, int], human: dict[str, dict[str, int]], consensus: dict[str, int | None],
                judge_model: str | None, judge_family: str | None, order: Any = None) -> GoldenSetArrays:
    """The golden set as the simulation reads it: the labeled items the judge scored (their human labels and
    consensus), the unlabeled ones it scored (the pool), and the recommended order (``active_queue.DesignedOrder``,
    or None). ``index`` maps item ids to ``ItemIndexRow``; ``human`` item -> rater -> score; ``consensus`` item ->
    the consensus score (None: none) of every labeled item."""
    values = list(scale)
    pos = {v: i for i, v in enumerate(values)}
    labeled_ids = [i for i in index if i in consensus and i in scores]
    pool_ids = [i for i in index if i not in consensus and i in scores]
    family = (judge_family or "").strip().casefold()
    model = (judge_model or "").strip().casefold()
    strata = {s: k for k, s in enumerate(dict.fromkeys(order.stratum))} if order is not None else {}
    stratum_of = dict(zip(order.item_ids, order.stratum)) if order is not None else {}

    def items(ids: list[str]) -> ItemArrays:
        rows = [index[i] for i in ids]
        fam = np.array([(r.producer_family or "").strip().casefold() for r in rows], dtype=object)
        known = fam != ""
        same_family = known & (fam == family) if family else np.zeros(len(ids), bool)
        other = known & (fam != family) if family else np.zeros(len(ids), bool)
        same_model = (np.array([(r.producer_model or "").strip().casefold() == model for r in rows], dtype=bool)
                      & ~other) if family and model else np.zeros(len(ids), bool)
        return ItemArrays(np.array([pos[scores[i]] for i in ids], dtype=np.int64),
                          np.array([r.task_id or r.item_id for r in rows], dtype=object), same_model, same_family,
                          other, np.array([r.category for r in rows], dtype=object),
                          np.array([strata.get(stratum_of.get(i), 0) for i in ids], dtype=np.int64))

    labeled = items(labeled_ids)
    counts = np.zeros((len(labeled_ids), len(values)))
    for k, i in enumerate(labeled_ids):
        for score in human.get(i, {}).values():
            counts[k, pos[score]] += 1
    codes = np.array([-1 if consensus[i] is None else pos[consensus[i]] for i in labeled_ids], dtype=np.int64)
    labeled = ItemArrays(labeled.judge, labeled.cluster, labeled.same_model, labeled.same_family, labeled.other,
                         labeled.category, labeled.stratum, codes, counts)
    active = None
    if order is not None and pool_ids:
        probability = dict(zip(order.item_ids, order.probability))
        priority = dict(zip(order.item_ids, order.priority))
        judge_of = {s: pos[scores[i]] for i, s in zip(order.item_ids, order.stratum) if i in scores}
        rate = np.zeros(len(strata))
        stratum_judge = np.zeros(len(strata), dtype=np.int64)
        for i, s in zip(order.item_ids, order.stratum):
            rate[strata[s]] = probability[i]
            stratum_judge[strata[s]] = judge_of.get(s, len(values) // 2)
        active = ActiveOrder(stratum_judge, rate, np.array([priority[i] for i in pool_ids]),
                             float(order.labeled_before))
    return GoldenSetArrays(tuple(values), values.index(pass_threshold) if pass_threshold in values else
                           int(np.searchsorted(values, pass_threshold)), overlap, labeled, items(pool_ids), active,
                           len(index), tuple(labeled_ids), tuple(pool_ids))
