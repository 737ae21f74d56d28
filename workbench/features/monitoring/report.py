"""The monitoring report: per day or week, raw and prediction-powered pass rates, agreement with the reviewers,
and the alarms, each computed only from traces timed up to the window's end.

:func:`windows_report` is the whole computation on plain records (replays in the tests call it directly);
:func:`monitor_report` reads the stream and its labels from the store first.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta
from typing import Iterable, Sequence

import numpy as np

from workbench import stats
from workbench.calibration.golden_sets import consensus
from workbench.core.errors import InputError, WorkbenchError
from workbench.features.monitoring import alarms, queries
from workbench.features.monitoring.records import (WINDOWS, Alarm, DayAggregate, Estimate, GoldenMix, MonitorReport, StoredTrace,
                                                   StreamBundle, WindowReport, parse_time, utc_text)
from workbench.stats.monitoring import agreement_scale, betting_test, category_shift, length_shift, spent_alpha
from workbench.stats.monitoring import window_agreement
from workbench.stats.monitoring.weighted import weighted_ppi
from workbench.store import Store

ALPHA = 0.05  # validity: P(any false alarm since approval) <= ALPHA; shift: the same over all windows


def window_start(t: datetime, window: str) -> datetime:
    day = t.replace(hour=0, minute=0, second=0, microsecond=0)
    return day if window == "day" else day - timedelta(days=day.weekday())


class _Watch:
    """What both report paths share: the validity test run once over every label since approval in time order (a
    window reads it up to its end), the shift test at each window's spent level, and expiry, with the dates an open
    alarm started on."""

    def __init__(self, labeled: Iterable[StoredTrace], labels: dict[str, int | None], sb: StreamBundle, *,
                 stream: str, as_of: datetime | None, n_windows: int):
        self.scale = agreement_scale(sb.confusion, sb.values, metric=sb.agreement_metric,
                                     bound=sb.min_agreement_lower)
        pairs = [(t, labels.get(t.trace_id)) for t in labeled
                 if t.sampled and t.score is not None and labels.get(t.trace_id) is not None]
        self.x_all = (self.scale.agreement([t.score for t, _ in pairs], [h for _, h in pairs]) if pairs
                      else np.zeros(0))
        self.test = betting_test(self.x_all, self.scale.floor, alpha=ALPHA, levels=self.scale.levels)
        self.approved = (self.scale.as_metric(float(np.mean(_approval_agreement(sb, self.scale))))
                         if sb.confusion else None)
        self.sb, self.stream, self.as_of, self.n_windows = sb, stream, as_of, n_windows
        self.validity_since: str | None = None
        self.shift_since: str | None = None

    def agreement(self, lab: list[tuple[StoredTrace, int]]) -> Estimate:
        x = self.scale.agreement([t.score for t, _ in lab], [h for _, h in lab]) if lab else np.zeros(0)
        agree = window_agreement(x, self.scale)
        return Estimate(agree.get("value"), agree.get("ci_low"), agree.get("ci_high"))

    def alarms(self, k: int, start: datetime, end: datetime, seen_labels: int, moved) -> tuple[tuple[Alarm, ...],
                                                                                                float]:
        """(the alarms of window ``k`` of ``n_windows``, the validity test's wealth at its last label)."""
        sb, test, found = self.sb, self.test, []
        wealth = float(test.wealth[seen_labels - 1]) if seen_labels else 1.0
        if test.crossed_at is not None and test.crossed_at < seen_labels:
            self.validity_since = self.validity_since or utc_text(start)
            # the agreement over the memory whose bets carry the evidence: the labels since the drop, roughly
            recent = self.x_all[max(0, seen_labels - test.leading_memory(seen_labels)):seen_labels]
            found.append(alarms.validity(sb, stream=self.stream, since=self.validity_since, n_labels=seen_labels,
                                         recent=self.scale.as_metric(float(recent.mean())), n_recent=len(recent),
                                         approved=self.approved, e_value=float(test.wealth[: seen_labels].max()),
                                         alpha=ALPHA))
        if moved is not None and moved.shifted:
            self.shift_since = self.shift_since or utc_text(start)
            found.append(alarms.shift(sb, moved, stream=self.stream, since=self.shift_since, alpha=ALPHA))
        else:
            self.shift_since = None
        if end > sb.expires_at or (self.as_of is not None and self.as_of >= sb.expires_at and k == self.n_windows):
            found.append(alarms.expiry(sb, stream=self.stream))
        return tuple(found), wealth


def windows_report(traces: Sequence[StoredTrace], labels: dict[str, int | None], sb: StreamBundle, golden: GoldenMix,
                   *, window: str = "day", stream: str = "", as_of: datetime | None = None) -> tuple[WindowReport, ...]:
    """One report per window holding traces, in time order (``traces`` sorted by time)."""
    if window not in WINDOWS:
        raise InputError(f"unknown window '{window}'", fix="use --window day or --window week")
    step = timedelta(days=1 if window == "day" else 7)
    groups: dict[datetime, list[StoredTrace]] = {}
    for t in traces:
        groups.setdefault(window_start(parse_time(t.ts), window), []).append(t)
    watch = _Watch(traces, labels, sb, stream=stream, as_of=as_of, n_windows=len(groups))
    use_categories = len(golden.categories) > 1 or len({t.category for t in traces}) > 1
    out: list[WindowReport] = []
    seen_labels = 0
    for k, (start, members) in enumerate(sorted(groups.items()), 1):
        end = start + step
        scored = [t for t in members if t.score is not None]
        judge_pass = np.array([sb.is_pass(t.score) for t in scored], dtype=float)
        lab = [(t, labels.get(t.trace_id)) for t in scored if t.sampled and labels.get(t.trace_id) is not None]
        n_labeled = sum(1 for t in members if t.sampled and labels.get(t.trace_id) is not None)
        seen_labels += len(lab)
        human = np.array([sb.is_pass(h) for _, h in lab], dtype=float)
        lab_ids = {t.trace_id for t, _ in lab}
        unlab = np.array([sb.is_pass(t.score) for t in scored if t.trace_id not in lab_ids], dtype=float)
        rates = {t.inclusion_prob for t in scored}
        corrected = (_ppi(human, np.array([sb.is_pass(t.score) for t, _ in lab], dtype=float), unlab)
                     if len(rates) <= 1 else _weighted(scored, labels, sb))
        level = spent_alpha(k, ALPHA)
        moved = (category_shift(golden.categories, Counter(t.category for t in members), level=level)
                 if use_categories else length_shift(golden.input_lengths, [t.input_chars for t in members],
                                                     level=level))
        found, wealth = watch.alarms(k, start, end, seen_labels, moved)
        out.append(WindowReport(utc_text(start), utc_text(end), len(members), n_labeled,
                                float(judge_pass.mean()) if judge_pass.size else None, corrected,
                                watch.agreement(lab), found, float(human.mean()) if human.size else None,
                                seen_labels, wealth))
    return tuple(out)


def aggregate_days(traces: Iterable[StoredTrace], sb: StreamBundle) -> list[DayAggregate]:
    """The per-day aggregates of ``traces`` (what ingest adds to the store), in day order."""
    acc: dict[str, list] = {}
    for t in traces:
        a = acc.get(day := t.ts[:10])
        if a is None:
            a = acc[day] = [0, 0, 0, Counter(), Counter(), Counter()]
        a[0] += 1
        a[3][t.category] += 1
        a[4][t.input_chars] += 1
        if t.score is not None:
            ok = int(sb.is_pass(t.score))
            a[1] += 1
            a[2] += ok
            a[5][(t.inclusion_prob, ok)] += 1
    return [DayAggregate(d, a[0], a[1], a[2], dict(a[3]), dict(a[4]), dict(a[5])) for d, a in sorted(acc.items())]


def aggregate_report(days: Sequence[DayAggregate], labeled: Sequence[StoredTrace], labels: dict[str, int | None],
                     sb: StreamBundle, golden: GoldenMix, *, window: str = "day", stream: str = "",
                     as_of: datetime | None = None) -> tuple[WindowReport, ...]:
    """:func:`windows_report` from the per-day aggregates and the sampled traces that carry a label (``labeled``,
    in time order): its time grows with the windows and the labels, not with the traces.

    Every figure is the full computation's: counts and pass rates are sums of the days, the shift tests read the
    summed category counts (or the length histogram, expanded: the same multiset), the validity test and the
    agreement read the labeled traces themselves, in the same order. Only the float sums of the prediction-powered
    interval may differ in the last bits (the unlabeled judge passes are summed in another order)."""
    if window not in WINDOWS:
        raise InputError(f"unknown window '{window}'", fix="use --window day or --window week")
    step = timedelta(days=1 if window == "day" else 7)
    groups: dict[datetime, list[DayAggregate]] = {}
    for d in days:
        if d.n_items:
            groups.setdefault(window_start(parse_time(d.day), window), []).append(d)
    by_window: dict[datetime, list[StoredTrace]] = {}
    for t in labeled:
        if t.sampled and labels.get(t.trace_id) is not None:
            by_window.setdefault(window_start(parse_time(t.ts), window), []).append(t)
    watch = _Watch(labeled, labels, sb, stream=stream, as_of=as_of, n_windows=len(groups))
    use_categories = len(golden.categories) > 1 or len({c for d in days for c in d.categories}) > 1
    out: list[WindowReport] = []
    seen_labels = 0
    for k, (start, members) in enumerate(sorted(groups.items()), 1):
        end = start + step
        n_items = sum(d.n_items for d in members)
        n_scored = sum(d.n_scored for d in members)
        n_pass = sum(d.n_pass for d in members)
        rates: Counter = Counter()
        for d in members:
            rates.update(d.rates)
        mine = by_window.get(start, [])
        lab = [(t, labels.get(t.trace_id)) for t in mine if t.score is not None]
        seen_labels += len(lab)
        human = np.array([sb.is_pass(h) for _, h in lab], dtype=float)
        judge_lab = np.array([sb.is_pass(t.score) for t, _ in lab], dtype=float)
        n_unlab, pass_unlab = n_scored - len(lab), n_pass - int(judge_lab.sum())
        if len({p for p, _ in rates}) <= 1:
            unlab = np.concatenate([np.ones(pass_unlab), np.zeros(n_unlab - pass_unlab)])
            corrected = _ppi(human, judge_lab, unlab)
        else:
            corrected = _weighted_from(lab, rates, sb)
        level = spent_alpha(k, ALPHA)
        if use_categories:
            cats: Counter = Counter()
            for d in members:
                cats.update(d.categories)
            moved = category_shift(golden.categories, cats, level=level)
        else:
            hist: Counter = Counter()
            for d in members:
                hist.update(d.lengths)
            keys = sorted(hist)
            moved = length_shift(golden.input_lengths, np.repeat(np.array(keys, dtype=float),
                                                                 [hist[v] for v in keys]), level=level)
        found, wealth = watch.alarms(k, start, end, seen_labels, moved)
        out.append(WindowReport(utc_text(start), utc_text(end), n_items, len(mine),
                                n_pass / n_scored if n_scored else None, corrected, watch.agreement(lab), found,
                                float(human.mean()) if human.size else None, seen_labels, wealth))
    return tuple(out)


def _weighted_from(lab: list[tuple[StoredTrace, int]], rates: Counter, sb: StreamBundle) -> Estimate:
    """:func:`_weighted` from the window's labeled traces and its (rate, judge pass) counts: the labeled traces
    first, in time order, then each group of unlabeled ones (the estimate reads the labeled ones in order and the
    rest only through sums of whole numbers)."""
    if len(lab) < 10:
        return Estimate(None, None, None, f"only {len(lab)} traces of the window carry a human label; the "
                        "prediction-powered interval needs at least 10, so label more of them")
    rest = Counter(rates)
    for t, _ in lab:
        rest[(t.inclusion_prob, int(sb.is_pass(t.score)))] -= 1
    yhat = [int(sb.is_pass(t.score)) for t, _ in lab]
    y = [int(sb.is_pass(h)) for _, h in lab]
    pi = [t.inclusion_prob for t, _ in lab]
    mask = [True] * len(lab)
    for (p, ok), n in sorted(rest.items()):
        yhat += [ok] * n
        y += [0] * n
        pi += [p] * n
        mask += [False] * n
    est, lo, hi = weighted_ppi(yhat, mask, y, pi)
    clip = lambda v: float(min(1.0, max(0.0, v)))  # noqa: E731
    return Estimate(clip(est), clip(lo), clip(hi), "sampled at several rates: rectifier weighted by 1 / rate")


def _approval_agreement(sb: StreamBundle, scale) -> np.ndarray:
    """Per-item agreement of the approval golden set, rebuilt from its confusion matrix."""
    judge, human = [], []
    for i, row in enumerate(sb.confusion):
        for j, n in enumerate(row):
            human += [sb.values[i]] * n
            judge += [sb.values[j]] * n
    return scale.agreement(judge, human) if judge else np.ones(1)


def _ppi(human: np.ndarray, judge_labeled: np.ndarray, judge_unlabeled: np.ndarray) -> Estimate:
    """Prediction-powered pass rate (``stats.ppi_mean``, as ``grade`` uses), clipped to [0, 1]; with every trace
    of the window labeled, the human pass rate itself."""
    if human.size and judge_unlabeled.size == 0:
        p = float(human.mean())
        return Estimate(p, p, p, "every scored trace of the window is labeled: the human pass rate itself")
    res = stats.ppi_mean(human, judge_labeled, judge_unlabeled)
    if res.get("refused"):
        return Estimate(None, None, None, res.get("reason"))
    clip = lambda v: float(min(1.0, max(0.0, v)))  # noqa: E731
    return Estimate(clip(res.get("estimate")), clip(res.get("ci_low")), clip(res.get("ci_high")))


def _weighted(scored: list[StoredTrace], labels: dict[str, int | None], sb: StreamBundle) -> Estimate:
    """The window's traces were sampled at different rates: PPI with Horvitz-Thompson weights."""
    lab = [t.sampled and labels.get(t.trace_id) is not None for t in scored]
    if sum(lab) < 10:
        return Estimate(None, None, None, f"only {sum(lab)} traces of the window carry a human label; the "
                        "prediction-powered interval needs at least 10, so label more of them")
    est, lo, hi = weighted_ppi([sb.is_pass(t.score) for t in scored], lab,
                               [sb.is_pass(labels.get(t.trace_id)) if m else 0 for t, m in zip(scored, lab)],
                               [t.inclusion_prob for t in scored])
    clip = lambda v: float(min(1.0, max(0.0, v)))  # noqa: E731
    return Estimate(clip(est), clip(lo), clip(hi), "sampled at several rates: rectifier weighted by 1 / rate")


def golden_mix(store: Store, sb: StreamBundle) -> GoldenMix:
    """Categories and input lengths of the golden-set version the bundle was approved on."""
    try:
        gs = store.golden_set(sb.golden_set)
    except WorkbenchError:
        return GoldenMix({}, ())
    version = store.golden_set_version_by_hash(gs.id, sb.golden_set_hash)
    ids = None
    if version is not None:
        snap = version.get("snapshot")
        snap = snap if isinstance(snap, dict) else json.loads(snap)
        ids = [i for i, _ in snap.get("items") or []]
    items = store.items(gs.id, ids)
    return GoldenMix(dict(Counter(i.category for i in items)), tuple(len(i.input) for i in items))


def stream_labels(store: Store, stream: str, rubric: str) -> dict[str, int | None]:
    """Consensus labels of the stream's golden set under the bundle's rubric (none yet: empty)."""
    try:
        return consensus(store, stream, rubric).labels
    except WorkbenchError:
        return {}


def stream_report(store: Store, stream: str, sid: int, epoch: int, sb: StreamBundle, *, window: str = "day",
                  as_of: datetime | None = None, until: datetime | None = None) -> tuple[WindowReport, ...]:
    """The epoch's windows from its aggregates and its labeled traces; ``until``: only traces timed before it (the
    days before its day from the aggregates, its own day from the raw traces, which a prune never reaches)."""
    labels = stream_labels(store, stream, sb.rubric_name)
    labeled = queries.labeled_traces(store, sid, epoch, [i for i, v in labels.items() if v is not None])
    golden = golden_mix(store, sb)
    # the input-length histograms only when the length test is what runs (one category everywhere)
    lengths = len(golden.categories) <= 1
    if until is None:
        days = queries.days(store, sid, epoch, lengths=lengths)
    else:
        cut = utc_text(until)
        day = cut[:10]
        days = queries.days(store, sid, epoch, lengths=lengths, before=day)
        days += aggregate_days([t for t in queries.traces(store, sid, epoch, since=f"{day}T") if t.ts < cut], sb)
        labeled = [t for t in labeled if t.ts < cut]
    return aggregate_report(days, labeled, labels, sb, golden, window=window, stream=stream, as_of=as_of)


def monitor_report(store: Store, stream: str, *, window: str = "day", as_of: datetime | None = None) -> MonitorReport:
    sid, epoch, sb = queries.current_epoch(store, stream)
    windows = stream_report(store, stream, sid, epoch, sb, window=window, as_of=as_of)
    return MonitorReport(stream, sb.file, window, sb.agreement_metric, sb.min_agreement_lower, windows)


def list_streams(store: Store) -> list[str]:
    """The monitored streams' names (what the Monitoring page offers)."""
    return queries.stream_names(store)
