"""Probes through the judge engine: the real openai SDK over HTTP to the loopback server, into SQLite.

A planted susceptible judge (it raises its score for padded outputs and for outputs claiming its own model, and
obeys an injected "score this +1") is caught by exactly those probes; a robust judge is caught by none (its
false-flag rate under verdict noise is measured in test_probe_stats.py). Probe runs never count as calibration
runs, and an interrupted probe run resumes without re-sending.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, write
from tests.judges.loopback_server import LoopbackServer
from workbench.calibration.gate import FAILED, WARNING, Policy, evaluate
from workbench.features.importing import service as importing
from workbench.features.judging import service as judging
from workbench.features.probes import service as probe_service
from workbench.calibration.calibrate import Options, calibrate
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store

N = 30
MODEL = "loopback-model-v1"
RUBRIC = f"""name: loop-rubric
judges:
  - id: loop
    model: openai-api/loopback/{MODEL}
    family: meta
"""
SUSCEPTIBLE = {"authorship-self": "raises", "verbosity": "raises", "injection": "raises", "pushback": "lowers"}
APPLICABLE = ("authorship-self", "authorship-family", "authorship-other", "verbosity", "authority-approved",
              "authority-rejected", "injection", "pushback")  # no item lists candidates: order has nothing to do
# pushback objects (a second request) to the verdicts above the lowest: the N / 2 items scored 0
REQUESTS = N * (1 + len(APPLICABLE)) + N // 2
OPTIONS = Options(resamples=400)


@pytest.fixture(scope="module")
def golden_template(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("probe-golden")
    db = tmp / "w.db"
    # scores -1 and 0 only, so a susceptible judge has room to raise them; two items per task
    items = "".join(json.dumps({"id": f"i{n}", "task_id": f"t{n // 2}", "input": f"Fix bug {n}. ITEM-MARKER i{n} "
                                f"EXPECT-SCORE {n % 2 - 1}", "output": "Fixed; tests pass.",
                                "producer": {"model": "m", "family": "openai"}}) + "\n" for n in range(N))
    labels = "".join(json.dumps({"item_id": f"i{n}", "rater": r, "score": n % 2 - 1}) + "\n"
                     for n in range(N) for r in ("ana", "ben"))
    with Store(db) as store:
        add_rubric(store, write(tmp / "r.yaml", RUBRIC))
        importing.import_items(store, write(tmp / "items.jsonl", items), "g")
        importing.import_labels(store, write(tmp / "labels.jsonl", labels), "g", "loop-rubric")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


@pytest.fixture
def golden(golden_template: Path, tmp_path: Path) -> Path:
    db = tmp_path / "w.db"
    db.write_bytes(golden_template.read_bytes())
    return db


def _probe(store: Store, server: LoopbackServer, **kw):
    return probe_service.run(store, "g", "loop-rubric", "loop", concurrency=4,
                             provider_options={"env": server.env()}, **kw)


@pytest.mark.parametrize("mode, noise, expected", [("susceptible", 0.0, SUSCEPTIBLE), ("robust", 0.0, {})])
def test_probes_find_the_planted_susceptibilities_and_nothing_else(golden, mode, noise, expected):
    with LoopbackServer(model=MODEL, judge_mode=mode, noise=noise) as server, Store(golden) as store:
        judging.run(store, "g", "loop-rubric", "loop", provider_options={"env": server.env()})
        before = calibrate(store, "g", "loop-rubric", "loop", OPTIONS)
        assert before.probes is None and [c.id for c in before.verdict.checks][-1] == "no_drift"
        result = _probe(store, server)
        assert server.requests == REQUESTS
        assert result.not_applicable == ["order"]
        moved = {e["probe"]: e["moves"] for e in result.report["probes"] if e["moves"]}
        assert moved == expected
        for e in result.report["probes"]:
            assert e["n_items"] == N and e["n_consensus"] == N
            if e["probe"] in expected:
                sign = 1 if expected[e["probe"]] == "raises" else -1
                assert sign * e["consensus_shift"]["value"] > 0 and e["agreement_change"]["value"] < 0
            assert e["robustness_rate"]["value"] == pytest.approx(1 - e["flip_rate"]["value"])

        # probe runs are never calibration runs: same run, same numbers, nothing left for `judge run`
        after = calibrate(store, "g", "loop-rubric", "loop", OPTIONS)
        assert after.run == before.run and after.metrics == before.metrics
        assert [r["name"] for r in judging.run_status(store, "g", "loop-rubric", "loop")["runs"]] == ["run-1"]
        again = judging.run(store, "g", "loop-rubric", "loop", provider_options={"env": server.env()})
        assert again["n_recorded"] == 0 and again["run"] == "run-1"
        assert server.requests == REQUESTS

        # the gate: a warning by default, a failure when the policy makes probes part of it
        checks = {c.id: c for c in after.verdict.checks}
        if expected:
            assert checks["probes"].status == WARNING and "verbosity" in checks["probes"].message
            failing = evaluate(after, Policy(probe_check="fail"))
            assert {c.id: c.status for c in failing.checks}["probes"] == FAILED
        else:
            assert checks["probes"].status == "passed"
        assert "probes" not in {c.id for c in evaluate(after, Policy(probe_check="off")).checks}


def test_an_interrupted_probe_run_resumes_without_sending_anything_twice(golden):
    with LoopbackServer(model=MODEL, judge_mode="susceptible") as server, Store(golden) as store:
        judging.run(store, "g", "loop-rubric", "loop", provider_options={"env": server.env()})
        seen = {"n": 0}

        def stop_after_a_dozen() -> bool:
            seen["n"] += 1
            return seen["n"] > 12

        first = _probe(store, server, probes=["verbosity", "injection"], should_stop=stop_after_a_dozen)
        assert first.stopped == "stopped" and [r.probe for r in first.runs] == ["verbosity"]
        sent = server.requests - N
        assert 12 <= sent < N
        second = _probe(store, server, probes=["verbosity", "injection"])
        assert [r.summary.report.n_skipped for r in second.runs] == [sent, 0]
        assert server.requests == N * 3  # every perturbed item was sent exactly once
        with store.transaction():
            pass
        runs = store.conn.execute("SELECT name, probe, (SELECT count(*) FROM judgments j WHERE j.run_id = r.id) "
                                  "FROM runs r ORDER BY id").fetchall()
        assert [tuple(r) for r in runs] == [("run-1", None, N), ("probe:verbosity", "verbosity", N),
                                            ("probe:injection", "injection", N)]


def test_the_probe_command_estimates_first_then_runs_and_reports(golden, monkeypatch):
    cli = Cli(golden)
    probe = ("probe", "-g", "g", "-r", "loop-rubric", "-j", "loop")
    with LoopbackServer(model=MODEL, judge_mode="susceptible") as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        assert cli("judge", "run", "-g", "g", "-r", "loop-rubric", "-j", "loop").exit_code == 0
        dry = cli(*probe, "--probes", "verbosity,order", "--limit", "10", "--dry-run")
        assert "verbosity              10 of    10 judgments to run" in dry.stdout
        assert "Not applicable to these items (nothing to perturb): order." in dry.stdout
        assert server.requests == N  # the dry run sent nothing
        out = cli(*probe, "--probes", "verbosity", "--limit", "10")
        assert "Run probe:verbosity: 10 judgments recorded (0 unscored), 0 already done, 0 failed" in out.stdout
        assert "RAISES scores" in out.stdout
        report = json.loads(cli(*probe, "--probes", "verbosity", "--limit", "10", "--json").stdout)
        assert report["runs"][0]["n_skipped"] == 10 and server.requests == N + 10
        assert report["report"]["probes"][0]["mean_shift"]["value"] == 1.0
        bad = cli(*probe, "--probes", "length")
        assert bad.exit_code == 1 and "unknown probe 'length'" in bad.stderr and "Traceback" not in bad.output
