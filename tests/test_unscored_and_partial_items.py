"""Unscored judgments and items without a producer are normal data: every report must still work.

Regression for issue 11 item 1: the report cache key hashed frames in which a
null score (or, under pandas 3, a missing producer) had become NaN, and
canonical JSON refused it, breaking calibrate, compare, report, export and
both lead pages. Runs under whichever pandas is installed; CI also runs this
file under the other major version (see .ci/run).
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import write
from tests.services.test_calibrate import strict_json

G, R = "demo", "demo-patch-quality"


def _unscored_second_run(cli, tmp_path, judge: str = "lenient-mini") -> None:
    """A full second run of the judge in which one reply was off the scale (stored as unscored)."""
    lines = []
    src = [json.loads(x) for x in (cli.root / "golden_sets" / G / R / "judgments" / f"{judge}.jsonl")
           .read_text().splitlines() if x.strip()]
    for row in src:
        if row.get("repeat", 0) == 0 and row.get("run") == src[0]["run"]:
            lines.append({"item_id": row["item_id"], "score": row["score"], "run": "r2"})
    lines[0] = {"item_id": lines[0]["item_id"], "score": None, "unscored_reason": "off_scale: 7", "run": "r2"}
    path = write(tmp_path / "r2.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    r = cli("import", "judgments", path, "-g", G, "-r", R, "-j", judge)
    assert r.exit_code == 0, r.output


@pytest.fixture
def seeded(cli, tmp_path):
    from tests.conftest import ROOT
    cli.root = ROOT
    r = cli("demo", "--no-ui")
    assert r.exit_code == 0, r.output
    return cli


def _every_report_works(cli, tmp_path, judge: str) -> dict:
    r = cli("calibrate", "-g", G, "-r", R, "-j", judge, "--json", "--resamples", "200")
    assert r.exit_code == 0, r.output
    rep = strict_json(r.output)
    r = cli("calibrate", "-g", G, "-r", R, "-j", judge)
    assert r.exit_code == 0 and "unexpected" not in r.output, r.output
    r = cli("compare", "-g", G, "-r", R, "--json")
    assert r.exit_code == 0, r.output
    assert judge in {row["judge"]["id"] for row in strict_json(r.output)["judges"]}
    r = cli("report", "-g", G, "-r", R, "-j", judge, "--format", "md", "--out", tmp_path / "card.md")
    assert r.exit_code == 0, r.output
    r = cli("export", "-g", G, "-r", R, "-j", judge, "--out", tmp_path / "approved")
    assert r.exit_code in (0, 3) and "unexpected" not in r.output, r.output
    return rep


def test_one_unscored_line_as_its_own_run(seeded, tmp_path):
    line = {"item_id": "demo-0000", "score": None, "unscored_reason": "refusal", "run": "r2"}
    path = write(tmp_path / "j.jsonl", json.dumps(line) + "\n")
    assert seeded("import", "judgments", path, "-g", G, "-r", R, "-j", "lenient-mini").exit_code == 0
    rep = _every_report_works(seeded, tmp_path, "lenient-mini")
    assert rep["n_unscored"] == 1 and rep["n_items"] == 0
    complete = next(c for c in rep["verdict"]["checks"] if c["id"] == "complete")
    assert complete["status"] == "failed"


def test_one_unscored_judgment_in_a_full_run(seeded, tmp_path):
    _unscored_second_run(seeded, tmp_path)
    rep = _every_report_works(seeded, tmp_path, "lenient-mini")
    assert rep["n_unscored"] == 1 and rep["n_scored"] == 149
    assert rep["drift"]["run"] == "r2"


def test_an_item_without_a_producer(seeded, tmp_path):
    item = {"id": "no-producer-1", "task_id": "t-np", "category": "bugfix", "input": "Fix it.", "output": "Done."}
    assert seeded("import", "items", write(tmp_path / "i.jsonl", json.dumps(item) + "\n"), "-g", G).exit_code == 0
    labels = [{"item_id": "no-producer-1", "rater": r, "score": 0} for r in ("ana", "ben")]
    path = write(tmp_path / "l.jsonl", "\n".join(map(json.dumps, labels)) + "\n")
    assert seeded("import", "labels", "--new-raters", path, "-g", G, "-r", R).exit_code == 0
    jpath = write(tmp_path / "j.jsonl", json.dumps({"item_id": "no-producer-1", "score": 0, "run": "run-np"}) + "\n")
    assert seeded("import", "judgments", jpath, "-g", G, "-r", R, "-j", "careful-sonnet").exit_code == 0
    for judge in ("careful-sonnet", "gpt4o-self"):
        _every_report_works(seeded, tmp_path, judge)


def test_lead_pages_with_an_unscored_judgment(seeded, tmp_path, monkeypatch):
    from tests.ui.test_lead_pages import choose_judge, lead_page
    _unscored_second_run(seeded, tmp_path)
    monkeypatch.setenv("WORKBENCH_DB", str(seeded.db))
    at = choose_judge(lead_page("calibration"), "lenient-mini")
    assert not at.exception
    at = lead_page("compare")
    assert not at.exception
    assert any("lenient-mini" in str(df.value) for df in at.dataframe)
