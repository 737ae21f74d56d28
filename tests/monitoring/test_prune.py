"""`monitor prune` (issue 44 item 5): raw unsampled traces older than N days go, the day aggregates and every
sampled trace stay, the report over the pruned days is unchanged (window for window, alarms included), check says
the same, and ingesting the pruned file again adds nothing (the retention horizon), on SQLite and Postgres."""

from __future__ import annotations

import json

import pytest

from tests.monitoring import streams
from tests.monitoring.conftest import approval_indices, build_approved
from tests.monitoring.helpers import cli, label_sampled
from tests.pg import pg_url  # noqa: F401 - the fixture
from workbench.core.errors import InputError
from workbench.core.workspace import Workspace
from workbench.features.export.bundle import load_bundle
from workbench.features.importing.service import import_labels
from workbench.features.monitoring import queries
from workbench.features.monitoring.ingest import ingest
from workbench.features.monitoring.production import check_production, clock
from workbench.features.monitoring.prune import prune
from workbench.features.monitoring.report import monitor_report
from workbench.store import Store


def _count(s, where=""):
    return s.conn.execute(f"SELECT count(*) FROM monitor_traces {where}").fetchone()[0]


def _prune_keeps_the_report(db, bundle_path, tmp_path):
    traces, humans, _ = streams.stream_rows(days=8, per_day=250, seed=6, exclude=approval_indices(), drift_day=4,
                                            drift_share=0.5)
    path = streams.write_jsonl(tmp_path / "prod.jsonl", traces)
    with Store(db) as s:
        bundle = load_bundle(s, bundle_path, Workspace.resolve(str(tmp_path), str(db)))
        ingest(s, "prod", bundle, bundle_path.name, "jsonl", path, label_rate=0.2, seed=3)
        ids = [r["item_id"] for r in s.item_index(s.golden_set("prod").id)][::3]  # a third labeled
        (tmp_path / "l.jsonl").write_text("".join(json.dumps({"item_id": i, "rater": "ana", "score": humans[i]})
                                                  + "\n" for i in ids))
        import_labels(s, tmp_path / "l.jsonl", "prod", "logic")
        before = {w: monitor_report(s, "prod", window=w).to_json() for w in ("day", "week")}
        now = clock("2026-12-08")  # the stream runs 1 to 8 Dec 2026; keep 3 days: 6, 7, 8 Dec
        check_before = check_production(bundle, bundle_path.name, s, now)
        sampled_before = {r[0] for r in s.conn.execute("SELECT trace_id FROM monitor_traces WHERE sampled = 1")}
        old = _count(s, "WHERE ts < '2026-12-06' AND sampled = 0")
        assert old > 800  # 5 days x 250, 80% unsampled
        res = prune(s, "prod", 3, now)
        assert res.removed == old and res.days == tuple(f"2026-12-0{d}" for d in range(1, 6))
        assert f"removed {old} raw traces timed before 2026-12-06 (2026-12-01 to 2026-12-05, 5 days)" in res.summary()
        assert _count(s, "WHERE ts < '2026-12-06' AND sampled = 0") == 0
        assert _count(s, "WHERE ts >= '2026-12-06'") == 750  # the kept days whole
        assert {r[0] for r in s.conn.execute("SELECT trace_id FROM monitor_traces WHERE sampled = 1")} \
            == sampled_before  # every sampled trace, labeled or not
        pruned = s.conn.execute("SELECT sum(n_pruned) FROM monitor_days").fetchone()[0]
        assert pruned == old
        after = {w: monitor_report(s, "prod", window=w).to_json() for w in ("day", "week")}
        assert after == before
        assert any(a["kind"] == "validity" for a in after["day"]["windows"][-1]["alarms"])
        check_after = check_production(bundle, bundle_path.name, s, now)
        assert (check_after.problems, check_after.compared) == (check_before.problems, check_before.compared)
        # the same file again: the known ids are gone for the pruned days, the horizon keeps them out
        again = ingest(s, "prod", bundle, bundle_path.name, "jsonl", path, label_rate=0.2, seed=3)
        assert again.added == 0 and again.too_old == old
        assert "timed before the stream's retention horizon and not taken" in again.summary()
        assert {w: monitor_report(s, "prod", window=w).to_json() for w in ("day", "week")} == before
        # pruning again removes nothing more
        assert prune(s, "prod", 3, now).removed == 0


def test_prune_on_sqlite(approved, tmp_path):
    approved.store.close()
    _prune_keeps_the_report(approved.db, approved.bundle, tmp_path)


def test_prune_on_postgres(pg_url, tmp_path):  # noqa: F811
    db, bundle = build_approved(tmp_path, pg_url)
    _prune_keeps_the_report(db, bundle, tmp_path)


def test_prune_from_the_cli_and_its_refusals(approved, tmp_path):
    traces, humans, _ = streams.stream_rows(days=3, per_day=50, seed=1, exclude=approval_indices())
    path = streams.write_jsonl(tmp_path / "t.jsonl", traces)
    cli(approved, "monitor", "ingest", "--stream", "prod", "--bundle", approved.bundle, "--from", "jsonl", path,
        "--seed", "1")
    label_sampled(approved, "prod", humans, tmp_path)
    r = cli(approved, "monitor", "prune", "--stream", "prod", "--keep-days", "1", "--as-of", "2026-12-03")
    assert r.exit_code == 0, r.output
    assert "removed" in r.output and "timed before 2026-12-03" in r.output
    assert _count(approved.store, "WHERE ts < '2026-12-03' AND sampled = 0") == 0
    bad = cli(approved, "monitor", "prune", "--stream", "prod", "--keep-days", "0")
    assert bad.exit_code == 1 and "--keep-days must be a whole number of days, at least 1" in bad.output
    missing = cli(approved, "monitor", "prune", "--stream", "nope", "--keep-days", "5")
    assert missing.exit_code == 1 and "no monitoring stream 'nope'" in missing.output
    with pytest.raises(InputError):
        prune(approved.store, "prod", True, clock("2026-12-03"))
