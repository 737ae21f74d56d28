"""`workbench refine` and `workbench refine-decide` on the demo, with a `mock/` judge (no key, no network).

The mock judge answers every item with the rubric's pass threshold whatever the rubric says, so a few-shot
round cannot help it: the held-out check rejects the round, and a lead cannot accept it.
"""

from __future__ import annotations

import json

import yaml

from tests.conftest import DEMO_RUBRIC, write


def test_refine_cli_dry_run_round_json_and_a_leads_decision(cli, tmp_path, db_path):
    assert cli("demo", "--no-ui").exit_code == 0
    rubric = yaml.safe_load(DEMO_RUBRIC.read_text())
    rubric["judges"].append({"id": "echo", "model": "mock/echo"})
    assert cli("rubric", "add", write(tmp_path / "r.yaml", yaml.safe_dump(rubric))).exit_code == 0
    args = ["refine", "-g", "demo", "-r", "demo-patch-quality", "-j", "echo", "--rounds", "1", "--examples", "2"]

    dry = cli(*args, "--dry-run")
    assert dry.exit_code == 0 and "1 rounds to run on" in dry.output and "0 optimizer requests; at most $0.00" in dry.output

    r = cli(*args)
    assert r.exit_code == 0, r.output
    assert "Session 1: split of golden set version" in r.output
    assert "Round 1 (id 1): rejected. Held-out: krippendorff_alpha_ordinal changes by +0.000" in r.output

    out = json.loads(cli(*args, "--json").output)  # resumed: nothing left to do
    assert out["session"] == 1 and [x["status"] for x in out["rounds"]] == ["rejected"]
    assert len(out["rounds"][0]["edit"]["examples"]) == 2

    # The round's candidate is a rubric of its own: listed (and marked) by the CLI, left out of the pages' pickers.
    listed = cli("rubric", "list").output.splitlines()
    candidates = [line for line in listed if ".refine-1.r" in line]
    assert candidates and all("refinement candidate" in line for line in candidates)
    assert not any("refinement candidate" in line for line in listed if line.startswith("demo-patch-quality\t"))
    from workbench.features.labeling.service import rubric_names
    from workbench.store import Store
    with Store(db_path) as store:
        assert "demo-patch-quality" in rubric_names(store)
        assert not any(".refine-" in name for name in rubric_names(store))

    refused = cli("refine-decide", "1", "--accept", "--lead", "lead")
    assert refused.exit_code == 1 and "only a round its held-out check proposed can be accepted" in refused.output
    assert cli("refine-decide", "1", "--discard", "--lead", "alice").exit_code == 1  # not a lead
    ok = cli("refine-decide", "1", "--discard", "--lead", "lead")
    assert ok.exit_code == 0 and "Round 1 discarded." in ok.output

    bad = cli("refine", "-g", "demo", "-r", "demo-patch-quality", "-j", "echo", "--optimizer", "mock/x")
    assert bad.exit_code == 1 and "must be a chat model" in bad.output
