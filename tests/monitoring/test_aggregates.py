"""The report from the per-day aggregates (what `monitor report` reads) against the full recomputation over every
trace (``windows_report``, the computation the replays validated): on replays of real rows (Play Favorites,
../shared/data) with drift, shift, several sampling rates, one category (the length test), unlabeled samples and
weekly windows; then through ingest into SQLite and Postgres, in pages, against the raw rows the store holds.

Alarms (kind, sentence, since), counts, raw and labeled pass rates, agreement and the validity e-value must be
equal exactly; the prediction-powered interval to 1e-12 (its float sums run in another order).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import yaml

from tests.monitoring import replay as rp
from tests.monitoring import streams
from tests.monitoring.conftest import approval_indices, build_approved
from tests.monitoring.helpers import label_sampled
from tests.pg import pg_url  # noqa: F401 - the fixture
from workbench.features.export.bundle import load_bundle
from workbench.features.monitoring import ingest as ingest_mod
from workbench.features.monitoring import queries
from workbench.features.monitoring.ingest import ingest
from workbench.features.monitoring.production import check_production
from workbench.features.monitoring.records import GoldenMix, StreamBundle, parse_time
from workbench.features.monitoring.report import (aggregate_days, aggregate_report, golden_mix, monitor_report,
                                                  stream_labels, windows_report)
from workbench.core.workspace import Workspace
from workbench.features.importing.service import import_labels
from workbench.store import Store

TOL = 1e-12


@pytest.fixture(scope="module")
def sb(approved_template) -> StreamBundle:
    return StreamBundle.from_bundle(yaml.safe_load(approved_template[1].read_text()), "b.yaml")


def assert_same(agg, full) -> None:
    assert len(agg) == len(full) and full
    for a, f in zip(agg, full):
        assert [(x.kind, x.sentence, x.since) for x in a.alarms] == [(x.kind, x.sentence, x.since) for x in f.alarms]
        assert (a.start, a.end, a.n_items, a.n_labeled, a.raw_pass_rate, a.labeled_pass_rate,
                a.labels_since_approval, a.validity_wealth, a.agreement) == \
               (f.start, f.end, f.n_items, f.n_labeled, f.raw_pass_rate, f.labeled_pass_rate,
                f.labels_since_approval, f.validity_wealth, f.agreement)
        ca, cf = a.corrected_pass_rate, f.corrected_pass_rate
        assert ca.reason == cf.reason
        for x, y in ((ca.value, cf.value), (ca.ci_low, cf.ci_low), (ca.ci_high, cf.ci_high)):
            assert (x is None) == (y is None) and (x is None or abs(x - y) <= TOL)


def both(traces, labels, sb, golden, **kw):
    days = aggregate_days(traces, sb)
    labeled = [t for t in traces if t.sampled and labels.get(t.trace_id) is not None]
    return aggregate_report(days, labeled, labels, sb, golden, **kw), windows_report(traces, labels, sb, golden, **kw)


REPLAYS = {
    "calm": dict(seed=101),
    "drift": dict(seed=3, drift_day=6, drift_share=0.4),
    "shift": dict(seed=5, shift_day=7, shift_category="mtbench"),
    "drift-weekly": dict(seed=8, days=28, per_day=120, drift_day=14, drift_share=0.3, window="week"),
}


@pytest.mark.parametrize("name", sorted(REPLAYS))
def test_the_aggregate_report_is_the_full_recomputation_on_replays(sb, name):
    r = rp.replay(sb, **REPLAYS[name])
    agg, full = both(r.traces, r.labels, sb, rp.golden(), window=REPLAYS[name].get("window", "day"))
    assert_same(agg, full)
    if name.startswith("drift"):  # the comparison covers a raised alarm, not only quiet windows
        assert any(a.kind == "validity" for w in full for a in w.alarms)
    if name == "shift":
        assert any(a.kind == "shift" for w in full for a in w.alarms)


def test_several_rates_unlabeled_samples_and_unscored_traces(sb):
    """Half the days sampled at 0.05 and the rest at 0.3 (two ingests' rates in one window: the weighted estimate),
    a third of the samples still unlabeled, every 17th trace without a verdict."""
    r = rp.replay(sb, seed=11, days=10, drift_day=5, drift_share=0.3)
    rng = np.random.default_rng(7)
    traces = []
    for k, t in enumerate(r.traces):
        rate = 0.05 if rng.random() < 0.5 else 0.3
        traces.append(dataclasses.replace(t, sampled=bool(rng.random() < rate), inclusion_prob=rate,
                                          score=None if k % 17 == 0 else t.score))
    labels = {t.trace_id: r.humans[t.trace_id] for t in traces if t.sampled and rng.random() < 0.67}
    agg, full = both(traces, labels, sb, rp.golden())
    assert_same(agg, full)
    assert any("several rates" in (w.corrected_pass_rate.reason or "") for w in full)


def test_one_category_runs_the_length_test_from_the_histograms(sb):
    """One category on both sides: the Kolmogorov-Smirnov test reads the days' input-length histograms; from day 6
    the inputs are three times as long, so it fires."""
    r = rp.replay(sb, seed=12, days=9)
    traces = [dataclasses.replace(t, category="default", input_chars=t.input_chars * (3 if t.ts >= "2026-12-07"
                                                                                       else 1)) for t in r.traces]
    g = rp.golden()
    golden = GoldenMix({"default": sum(g.categories.values())}, g.input_lengths)
    agg, full = both(traces, r.labels, sb, golden)
    assert_same(agg, full)
    assert any(a.kind == "shift" and "input length" in a.sentence for w in full for a in w.alarms)


def _through_the_store(db, root, monkeypatch, tmp_path):
    """Ingest a drifting stream in pages of 97 traces, in two overlapping files and the first again, label it; the
    store's report (aggregates) against windows_report over the raw rows it holds."""
    monkeypatch.setattr(ingest_mod, "BATCH", 97)
    traces, humans, _ = streams.stream_rows(days=6, per_day=300, seed=4, exclude=approval_indices(), drift_day=3,
                                            drift_share=0.5)
    first = streams.write_jsonl(tmp_path / "a.jsonl", traces[:1000])
    second = streams.write_jsonl(tmp_path / "b.jsonl", traces[700:])
    with Store(db) as s:
        bundle = load_bundle(s, root, Workspace.resolve(str(tmp_path), str(db)))
        added = [ingest(s, "prod", bundle, root.name, "jsonl", f, label_rate=rate, seed=9).added
                 for f, rate in ((first, 0.15), (second, 0.3), (first, 0.15))]
        assert added == [1000, 800, 0]
        gs = s.golden_set("prod")
        ids = [r["item_id"] for r in s.item_index(gs.id)][::2]  # half the samples labeled
        (tmp_path / "l.jsonl").write_text("".join(json.dumps({"item_id": i, "rater": "ana", "score": humans[i]}) + "\n"
                                                  for i in ids))
        import_labels(s, tmp_path / "l.jsonl", "prod", "logic")
        sid, epoch, esb = queries.current_epoch(s, "prod")
        raw = queries.traces(s, sid, epoch)
        assert len(raw) == 1800
        labels = stream_labels(s, "prod", esb.rubric_name)
        for window in ("day", "week"):
            agg = monitor_report(s, "prod", window=window).windows
            assert_same(agg, windows_report(raw, labels, esb, golden_mix(s, esb), window=window, stream="prod"))
        assert any(a.kind == "validity" for a in monitor_report(s, "prod").open_alarms)
        # check's clock cuts a day in two: the aggregates before it, that day's raw rows up to the cut
        now = parse_time("2026-12-04T12:00:00Z")
        res = check_production(bundle, root.name, s, now)
        cut = windows_report([t for t in raw if t.ts < "2026-12-04T12:00:00.000000Z"], labels, esb,
                             golden_mix(s, esb), stream="prod")
        assert any("open validity alarm" in p for p in res.problems) == \
            any(a.kind == "validity" for a in cut[-1].alarms)
        late = check_production(bundle, root.name, s, parse_time("2026-12-02T06:00:00Z"))  # before the drift
        early = [t for t in raw if t.ts < "2026-12-02T06:00:00.000000Z"]
        assert not late.problems and f"({len(early)} traces," in late.compared[-1]
        # the migration's backfill (streams ingested before the aggregates existed) computes the same days
        # (imported only now: importing a migration module registers it, and the history is loaded in order first)
        from workbench.store.migrations.m016_monitor_windows import backfill

        kept = queries.days(s, sid, epoch)
        assert kept == aggregate_days(raw, esb)
        with s.transaction():
            for table in ("monitor_day_categories", "monitor_day_lengths", "monitor_day_rates", "monitor_days"):
                s.conn.execute(f"DELETE FROM {table}")
            backfill(s.conn)
        assert queries.days(s, sid, epoch) == kept


def test_through_ingest_on_sqlite(approved, monkeypatch, tmp_path):
    approved.store.close()
    _through_the_store(approved.db, approved.bundle, monkeypatch, tmp_path)


def test_through_ingest_on_postgres(pg_url, monkeypatch, tmp_path):  # noqa: F811
    db, bundle = build_approved(tmp_path, pg_url)
    _through_the_store(db, bundle, monkeypatch, tmp_path)
