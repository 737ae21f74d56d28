"""`workbench plan` and `workbench golden-set queue` on a copy of the demo."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli

RUBRIC = "demo-patch-quality"


def test_plan_names_the_open_checks_with_assumptions_and_json(demo_store, tmp_path) -> None:
    cli = Cli(demo_store.path, tmp_path)
    # lenient-mini's same-family effect straddles +0.1 (careful-sonnet, the demo's clean judge, has no open check)
    out = cli("plan", "--golden-set", "demo", "--rubric", RUBRIC, "--judge", "lenient-mini", "--target-width",
              "0.1", "--budget", "100")
    assert out.exit_code == 0, out.output
    assert "[UNDECIDED] no material self-preference" in out.output and "Assumptions:" in out.output
    assert "For intervals 0.1 wide:" in out.output and "With 100 more labels" in out.output
    data = json.loads(cli("plan", "--golden-set", "demo", "--rubric", RUBRIC, "--judge", "gpt4o-self",
                          "--json").output)
    assert data["schema"] == "workbench.plan/3" and data["verdict"] == "failed"
    checks = {c["check"]: c for c in data["checks"]}
    parts = {c["check"]: c for c in data["parts"]}
    # gpt4o-self's agreement is undecided: its labels to a decision are ranges, in both orders, with the pool's odds
    agreement = checks["agreement"]
    assert agreement["state"] == "undecided" and data["paths"] == 400
    for order in ("", "_random"):
        for key in ("more_labels", "more_items", "add_items"):
            r = agreement[key + order]
            assert set(r) == {"median", "low", "high"} and r["low"] <= r["median"], (key, r)
            assert r["high"] is None or r["median"] <= r["high"]
        assert agreement["pool_decides" + order] == 0.0  # every demo item is labeled: only new items can decide it
    assert agreement["pool_cannot_decide"] and "This pool cannot decide agreement" in agreement["sentence"]
    assert "80% range" in agreement["sentence"] and data["overall"] is None  # the verdict is decided (failed)
    # gpt4o-self favours its family beyond doubt: decided against it, so the verdict is decided whatever comes
    assert checks["self_preference"]["state"] == "failed" and parts["same_family"]["failed"]
    assert checks["evidence"]["state"] == "passed" and checks["self_preference"]["parts"] == ["same_family",
                                                                                                "same_model"]
    text = cli("plan", "-g", "demo", "-r", RUBRIC, "-j", "gpt4o-self").output
    assert "[FAIL] no material self-preference" in text and "which more labels will not change" in text
    bad = cli("plan", "--golden-set", "demo", "--rubric", RUBRIC, "--judge", "careful-sonnet", "--target-width", "5")
    assert bad.exit_code != 0 and "target-width" in bad.output


def test_queue_switches_and_shows_the_design(demo_store, tmp_path) -> None:
    cli = Cli(demo_store.path, tmp_path)
    assert "queue order random" in cli("golden-set", "queue", "demo").output
    refused = cli("golden-set", "queue", "demo", "--order", "active")
    assert refused.exit_code != 0 and "--rubric R --judge J" in refused.output
    out = cli("golden-set", "queue", "demo", "--order", "active", "--rubric", RUBRIC, "--judge", "careful-sonnet")
    assert out.exit_code == 0 and "queue order active" in out.output and "inclusion" in out.output
    assert "queue order random" in cli("golden-set", "queue", "demo", "--order", "random").output
