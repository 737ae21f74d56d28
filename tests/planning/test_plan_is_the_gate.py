"""The plan is the gate: `plan --json` gives every gate check the state `calibrate --json` gives it, for every demo
pair, under the default policy and under a policy that changes a key; `plan` takes -g -r -j like the others."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write

JUDGES = ("careful-sonnet", "lenient-mini", "gpt4o-self", "noisy-llama", "test-results")
SCOPE = ("-g", "demo", "-r", "demo-patch-quality")


@pytest.fixture(scope="module")
def demo_cli(tmp_path_factory):
    """One seeded demo workspace for the module, with the free Python grader run too (every demo pair)."""
    from click.testing import CliRunner

    from workbench.cli import main

    folder = tmp_path_factory.mktemp("plan-gate")
    runner = CliRunner()

    def cli(*args: str):
        return runner.invoke(main, ["--db", str(folder / "workbench.db"), "--project", str(folder), *args],
                             catch_exceptions=False)

    assert cli("demo", "--no-ui").exit_code == 0
    assert cli("judge", "run", *SCOPE, "-j", "test-results").exit_code == 0
    cli.folder = folder
    return cli


def _states(demo_cli, judge: str) -> tuple[dict[str, str], dict[str, str], dict, dict]:
    cal = demo_cli("calibrate", *SCOPE, "-j", judge, "--json")
    assert cal.exit_code == 0, cal.output
    plan = demo_cli("plan", *SCOPE, "-j", judge, "--json")
    assert plan.exit_code == 0, plan.output
    report, p = json.loads(cal.output), json.loads(plan.output)
    return ({c["id"]: c["state"] for c in report["verdict"]["checks"]}, {c["check"]: c["state"] for c in p["checks"]},
            report, p)


@pytest.mark.parametrize("judge", JUDGES)
def test_plan_and_gate_give_every_check_the_same_state(demo_cli, judge):
    gate, plan, report, p = _states(demo_cli, judge)
    assert plan == gate and len(gate) >= 9
    assert p["verdict"] == report["verdict"]["state"]
    for c in report["verdict"]["checks"]:
        assert c["state"] in ("passed", "failed", "undecided", "warning", "not_applicable")
        assert c["reason"], c
        if c["state"] in ("failed", "undecided") and c["id"] not in ("evidence", "complete", "no_drift"):
            # the number, its interval and the bound: '0.64 [0.53, 0.73] ... 0.667'
            assert "[" in c["reason"] and "]" in c["reason"], c["reason"]
    for c in p["checks"]:
        if c["state"] == "undecided":
            assert c["pool_cannot_decide"] or c["more_labels"] is not None or "will not decide" in c["sentence"]
    # the headline never says calibrated while a check is undecided
    undecided = [k for k, v in gate.items() if v == "undecided"]
    failed = [k for k, v in gate.items() if v == "failed"]
    assert report["verdict"]["calibrated"] is (not undecided and not failed)
    text = demo_cli("calibrate", *SCOPE, "-j", judge).output.splitlines()[0]
    assert text.startswith("NOT CALIBRATED" if failed else "NOT DECIDED YET" if undecided else "CALIBRATED")


def test_a_policy_key_moves_the_gate_and_the_plan_together(demo_cli):
    """min_raters_per_item: 3 asks for three reviewers on 30% of the items; the demo has three reviewers but few
    items with three labels, so the evidence check is no longer passed, in the gate and in the plan alike."""
    policy = write(demo_cli.folder / "rubrics" / "policy.yaml", "min_raters_per_item: 3\n")
    try:
        gate, plan, report, _ = _states(demo_cli, "careful-sonnet")
        assert gate == plan and gate["evidence"] == "undecided"
        ev = next(c for c in report["verdict"]["checks"] if c["id"] == "evidence")
        assert "with 3+ raters (30% needed)" in ev["reason"]
        r = demo_cli("export", *SCOPE, "-j", "careful-sonnet")
        assert r.exit_code == 3 and "not decided yet" in r.output
    finally:
        policy.unlink()


@pytest.mark.parametrize("text,key", [("min_raters_per_item: 5\n", "min_raters_per_item"),
                                      ("min_raters_per_item: 0\n", "min_raters_per_item")])
def test_a_policy_the_raters_cannot_meet_is_refused(demo_cli, text, key):
    policy = write(demo_cli.folder / "rubrics" / "policy.yaml", text)
    try:
        for command in ("calibrate", "plan"):
            r = demo_cli(command, *SCOPE, "-j", "careful-sonnet")
            assert r.exit_code != 0 and "Traceback" not in r.output
            assert "policy.yaml" in r.output and key in r.output, r.output
    finally:
        policy.unlink()


def test_export_refuses_a_pair_not_decided_yet_and_says_why(demo_cli):
    """Undecided blocks export like a failure (exit 3), with the sentence that says which check and why."""
    policy = write(demo_cli.folder / "rubrics" / "policy.yaml", "min_items: 200\n")  # more than the 141 there
    try:
        r = demo_cli("export", *SCOPE, "-j", "careful-sonnet")
        assert r.exit_code == 3
        assert "is not decided yet" in r.output and "[UNDECIDED] enough evidence" in r.output
        assert "141 items have a consensus label and a judge score (200 needed)" in r.output
        assert not list((demo_cli.folder / "rubrics" / "approved").glob("*careful-sonnet*"))
    finally:
        policy.unlink()
