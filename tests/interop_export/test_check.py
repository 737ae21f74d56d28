"""`workbench check`: accepts the judge as exported, refuses each kind of change with one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import DEMO_DIR, write
from tests.interop_export.conftest import JUDGE, export_to, run_check
from workbench.features.importing.service import import_items, import_labels






def edited(path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert text.count(old) >= 1, f"{old!r} not in {path.name}"
    out = path.with_name("edited-" + path.name)
    out.write_text(text.replace(old, new, 1))
    return out


@pytest.mark.parametrize("target", ["promptfoo", "inspect", "mlflow"])
def test_untouched_export_passes_and_says_what_it_compared(approved, target):
    config = export_to(approved, target)
    r, problems = run_check(approved, "--judge-config", config)
    assert r.exit_code == 0 and problems == []
    assert "golden set 'demo'" in r.stdout and "unchanged since approval" in r.stdout
    assert f"judge config {config.name} ({target})" in r.stdout and "claude-sonnet-4-5-20250929" in r.stdout


# (target, text in the exported file, its replacement, words of the one sentence expected)
EDITS = [
    ("promptfoo", "id: anthropic:messages:claude-sonnet-4-5-20250929", "id: openai:chat:gpt-4o",
     "grades with model openai:chat:gpt-4o, but the approved judge is anthropic/claude-sonnet-4-5"),
    ("promptfoo", "id: anthropic:messages:claude-sonnet-4-5-20250929",
     "id: anthropic:messages:claude-sonnet-4-5-20260101",
     "grades with model version anthropic:messages:claude-sonnet-4-5-20260101, but calibration saw only "
     "claude-sonnet-4-5-20250929"),
    ("promptfoo", "temperature: 0.0", "temperature: 0.7", "grades at temperature 0.7, but the approved judge used 0.0"),
    ("promptfoo", "Cite the steps that decide your score.", "Be generous.", "the grading prompt differs"),
    ("promptfoo", "hash: sha256:", "hash: sha256:0000", "names rubric hash 0000"),
    ("inspect", "MODEL = 'anthropic/claude-sonnet-4-5-20250929'", "MODEL = 'anthropic/claude-opus-4-1'",
     "grades with model anthropic/claude-opus-4-1"),
    ("inspect", "TEMPERATURE = 0.0", "TEMPERATURE = 1.0", "grades at temperature 1.0"),
    ("inspect", "Cite the steps that decide your score.", "Be generous.", "the grading prompt differs"),
    ("inspect", "return sum(v >= PASS_THRESHOLD", "return sum(v >= PASS_THRESHOLD - 1",
     "differs from what 'workbench export --to inspect' writes"),
    ("mlflow", '"temperature": 0.0', '"temperature": 0.3', "grades at temperature 0.3"),
    ("mlflow", '"model": "anthropic:/claude-sonnet-4-5-20250929"', '"model": "anthropic:/claude-sonnet-4-5"',
     "grades with model version anthropic:/claude-sonnet-4-5, but calibration saw only claude-sonnet-4-5-20250929"),
    ("mlflow", "Cite the steps that decide your score.", "Be generous.", "the grading prompt differs"),
]


@pytest.mark.parametrize("target,old,new,sentence", EDITS, ids=[f"{e[0]}-{i}" for i, e in enumerate(EDITS)])
def test_each_change_to_the_judge_is_one_sentence(approved, target, old, new, sentence):
    config = edited(export_to(approved, target), old, new)
    r, problems = run_check(approved, "--judge-config", config)
    assert r.exit_code == 3
    assert len(problems) == 1 and sentence in problems[0], problems


def test_config_from_another_bundle_is_refused(approved):
    config = export_to(approved, "promptfoo")
    data = yaml.safe_load(config.read_text())
    data["defaultTest"]["metadata"]["workbench"]["bundle_sha256"] = "sha256:" + "f" * 64
    other = write(config.with_name("other.promptfoo.yaml"), yaml.safe_dump(data, sort_keys=False))
    r, problems = run_check(approved, "--judge-config", other)
    assert r.exit_code == 3 and len(problems) == 1 and "was exported from another bundle" in problems[0]


def test_edited_bundle_is_refused(approved):
    text = approved.bundle.read_text()
    approved.bundle.write_text(text.replace("min_items: 50", "min_items: 5", 1))
    r, problems = run_check(approved)
    assert r.exit_code == 3 and len(problems) == 1
    assert "was edited after export: its content no longer matches its sha256" in problems[0]


def test_changed_golden_set_is_refused_with_what_changed(approved, tmp_path):
    new_item = json.loads((DEMO_DIR / "items.jsonl").read_text().splitlines()[0])
    new_item["id"] = "added-after-approval"
    import_items(approved.store, write(tmp_path / "more.jsonl", json.dumps(new_item) + "\n"), "demo")
    first = json.loads((DEMO_DIR / "items.jsonl").read_text().splitlines()[0])["id"]
    labels = write(tmp_path / "labels.jsonl", "".join(json.dumps({"item_id": first, "rater": f"late-{i}", "score": 1})
                                                      + "\n" for i in range(5)))
    import_labels(approved.store, labels, "demo", "demo-patch-quality")
    r, problems = run_check(approved)
    assert r.exit_code == 3 and len(problems) == 1
    assert "golden set 'demo' has changed since approval: 1 item added, 1 consensus label of rubric " \
           "'demo-patch-quality' changed (compared version 1" in problems[0]
    assert "workbench.db" in problems[0]


def test_without_a_database_check_refuses_unless_told_to_skip_the_golden_set(approved, tmp_path):
    nowhere = tmp_path / "nowhere" / "workbench.db"
    r, problems = run_check(approved, db=nowhere)
    assert r.exit_code == 1 and problems == []
    assert "there is no workbench database at" in r.stderr and "pass --no-golden-set-check" in r.stderr
    assert not nowhere.exists()  # check creates no database

    config = export_to(approved, "promptfoo")
    r, problems = run_check(approved, "--no-golden-set-check", "--judge-config", config, db=nowhere)
    assert r.exit_code == 0 and problems == []
    assert "golden set 'demo' not compared (--no-golden-set-check)" in r.stdout
    assert "skipped the signature check: the bundle is unsigned" in r.stdout  # an unsigned bundle, no key to ask
    assert f"judge config {config.name} (promptfoo)" in r.stdout


def test_a_bundle_from_another_database_is_refused(approved, demo_db_template, tmp_path):
    other = tmp_path / "other.db"
    other.write_bytes(demo_db_template.read_bytes())  # the same demo, where this bundle was never exported
    r, problems = run_check(approved, db=other)
    assert r.exit_code == 3 and len(problems) == 1 and "was not exported from" in problems[0]


def test_the_workbench_rubric_and_judge_yaml_are_accepted_as_judge_config(approved, tmp_path):
    rubric = yaml.safe_load(approved.bundle.read_text())["rubric"]["content"]
    same = write(tmp_path / "rubric.yaml", yaml.safe_dump(rubric, sort_keys=False))
    r, problems = run_check(approved, "--judge-config", same)
    assert r.exit_code == 0 and problems == [] and "and rubric content as approved" in r.stdout

    rubric["instructions"] += " Be generous."
    for judge in rubric["judges"]:
        if judge["id"] == JUDGE:
            judge["temperature"] = 0.5
    changed = write(tmp_path / "rubric-changed.yaml", yaml.safe_dump(rubric, sort_keys=False))
    r, problems = run_check(approved, "--judge-config", changed)
    assert r.exit_code == 3 and len(problems) == 2
    assert "the rubric changed since approval" in problems[0]
    assert f"judge '{JUDGE}' has temperature 0.5, but the approved judge has 0.0" in problems[1]

    entry = write(tmp_path / "judge.yaml", f"id: {JUDGE}\nmodel: anthropic/claude-opus-4-1\nmode: single\n"
                                           "temperature: 0.0\nmax_tokens: 800\n")
    r, problems = run_check(approved, "--judge-config", entry)
    assert r.exit_code == 3 and problems == [
        f"judge.yaml: judge '{JUDGE}' has model anthropic/claude-opus-4-1, but the approved judge has "
        "anthropic/claude-sonnet-4-5; set it back or calibrate the change."]


def test_a_bundle_and_judge_config_edited_together_fail_on_the_signature(approved, tmp_path):
    """The attack the sha256 alone let through: the grading config moved to temperature 0.7 and the bundle edited to
    match, its sha256 recomputed; the signature refuses it in CI, with no database."""
    from click.testing import CliRunner

    from workbench.cli import main
    from workbench.core.hashing import sha256_hex

    root = approved.db.parent
    for args in (["keys", "init"], ["export", "-g", "demo", "-r", "demo-patch-quality", "-j", JUDGE,
                                    "--resamples", "400"]):
        r = CliRunner().invoke(main, [*args, "--db", str(approved.db), "--project", str(root)],
                               catch_exceptions=False)
        assert r.exit_code == 0, r.output
    pub = root / "keys" / "workbench.pub"
    config = export_to(approved, "promptfoo")
    nowhere = tmp_path / "nowhere.db"
    r, problems = run_check(approved, "--trust", pub, "--no-golden-set-check", "--judge-config", config, db=nowhere)
    assert r.exit_code == 0 and problems == [] and "signature by key" in r.stdout

    data = yaml.safe_load(approved.bundle.read_text())
    data["judge"]["config"]["temperature"] = 0.7
    data["rubric"]["content"]["judges"] = [dict(j, temperature=0.7) if j["id"] == JUDGE else j
                                           for j in data["rubric"]["content"]["judges"]]
    data["sha256"] = sha256_hex({k: v for k, v in data.items() if k not in ("sha256", "signature")})
    approved.bundle.write_text(yaml.safe_dump(data, sort_keys=True))
    edited_config = edited(config, "temperature: 0.0", "temperature: 0.7")
    r, problems = run_check(approved, "--trust", pub, "--no-golden-set-check", "--judge-config", edited_config,
                            db=nowhere)
    assert r.exit_code == 3 and len(problems) == 1
    assert problems[0].startswith(f"the signature of {approved.bundle.name} (key ") and \
        "does not match its content" in problems[0]
