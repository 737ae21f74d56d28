"""The judging service: its SQLite sink, the dry-run estimate, and runs that resume."""

from __future__ import annotations

from workbench.core.models import Judgment
from workbench.features.judging import service as judging


def test_sink_persists_judgments_and_batches_across_connections(demo_store):
    p = judging.prepare_run(demo_store, "demo", "demo-patch-quality", "lenient-mini", new_run=True)
    assert p.run_name == "run-2" and p.sink.done_keys() == set()  # a new run beside the imported run-1
    item = p.items[0]
    key = (p.sink.config_hash, item.content_hash, 0)
    p.sink.record(key, Judgment(item_id=item.id, score=1, rationale="ok", cost_usd=0.001, model_version="m-1"))
    p.sink.save_batch("openai", "batch_abc", [key])
    again = judging.prepare_run(demo_store, "demo", "demo-patch-quality", "lenient-mini")  # a restart resumes it
    assert again.run_name == "run-2" and again.sink.done_keys() == {key}
    [pending] = again.sink.pending_batches()
    assert (pending.provider, pending.batch_id, pending.keys) == ("openai", "batch_abc", (key,))
    again.sink.mark_batch_done("batch_abc")
    assert again.sink.pending_batches() == []


def test_estimate_counts_only_what_is_left(demo_store):
    e = judging.estimate(demo_store, "demo", "demo-patch-quality", "test-results")
    assert (e.n_planned, e.n_done, e.n_to_run, e.cost_usd) == (150, 0, 150, 0.0)
    judging.run(demo_store, "demo", "demo-patch-quality", "test-results", limit=40)
    e = judging.estimate(demo_store, "demo", "demo-patch-quality", "test-results")
    assert (e.n_done, e.n_to_run) == (40, 110)
    summary = judging.run(demo_store, "demo", "demo-patch-quality", "test-results")
    assert (summary["n_skipped"], summary["n_recorded"], summary["complete"]) == (40, 110, True)


def test_dry_run_cli_sends_nothing(cli):
    cli("demo", "--no-ui")
    r = cli("judge", "run", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet", "--dry-run")
    # the current run is the imported run-1, which holds every judgment: nothing to pay for twice (issue 12, item 7)
    assert r.exit_code == 0 and "0 of 300 judgments to run (300 already done)" in r.output
    r = cli("judge", "run", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet", "--dry-run", "--new-run")
    assert r.exit_code == 0 and "300 of 300 judgments to run" in r.output and "estimated cost $" in r.output
    assert "[run," not in cli("golden-set", "show", "demo").output  # a dry run creates no run (only imports exist)


def test_missing_key_is_reported_before_a_run_is_opened(cli, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cli("demo", "--no-ui")
    r = cli("judge", "run", "-g", "demo", "-r", "demo-patch-quality", "-j", "lenient-mini")
    assert r.exit_code == 1 and "OPENAI_API_KEY" in r.stderr
    assert "[run," not in cli("golden-set", "show", "demo").output
