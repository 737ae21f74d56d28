"""The monitoring tables and queries on a real Postgres server (tests/pg.py): ingest (idempotent), report with a
validity alarm, check's production part, promote: the same results as on SQLite."""

from __future__ import annotations

from tests.monitoring import streams
from tests.monitoring.conftest import approval_indices, build_approved
from tests.pg import pg_url  # noqa: F401 - the fixture
from workbench.features.export.bundle import load_bundle
from workbench.features.monitoring.ingest import ingest
from workbench.features.monitoring.production import check_production
from workbench.features.monitoring.promote import promote
from workbench.features.monitoring.records import parse_time
from workbench.features.monitoring.report import monitor_report
from workbench.core.workspace import Workspace
from workbench.features.importing.service import import_labels
from workbench.store import Store


def test_monitoring_on_postgres(pg_url, tmp_path):  # noqa: F811
    db, bundle_path = build_approved(tmp_path, pg_url)
    traces, humans, _ = streams.stream_rows(days=6, per_day=300, seed=4, exclude=approval_indices(), drift_day=3,
                                            drift_share=0.5)
    path = streams.write_jsonl(tmp_path / "prod.jsonl", traces)
    with Store(pg_url) as s:
        bundle = load_bundle(s, bundle_path, Workspace.resolve(str(tmp_path), pg_url))
        first = ingest(s, "prod", bundle, bundle_path.name, "jsonl", path, label_rate=0.15, seed=9)
        again = ingest(s, "prod", bundle, bundle_path.name, "jsonl", path, label_rate=0.15, seed=9)
        assert first.added == 1800 and again.added == 0 and 180 <= first.sampled <= 360
        ids = [r["item_id"] for r in s.item_index(s.golden_set("prod").id)]
        assert len(ids) == first.sampled
        (tmp_path / "l.jsonl").write_text("".join(f'{{"item_id": "{i}", "rater": "ana", "score": {humans[i]}}}\n'
                                                  for i in ids))
        import_labels(s, tmp_path / "l.jsonl", "prod", "logic")
        report = monitor_report(s, "prod")
        assert [w.n_items for w in report.windows] == [300] * 6
        assert any(a.kind == "validity" for a in report.open_alarms)
        now = parse_time("2026-12-07")
        res = check_production(bundle, bundle_path.name, s, now)
        assert any("open validity alarm" in p for p in res.problems)
        promoted = promote(s, "prod", "approval")
        assert promoted.items == first.sampled and promoted.version == 2
