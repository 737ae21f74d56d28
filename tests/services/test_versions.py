"""Rubric versions on export (issue 26, item 7): `--rubric NAME@vN` exports exactly version N, a version the judge
never ran is refused in one sentence naming the version and the fix, and version N is never approved on another
version's judgments."""

from __future__ import annotations

import yaml
import pytest

from tests.conftest import DEMO_DIR, DEMO_RUBRIC, write
from workbench.core.errors import NotFound
from workbench.features.importing import service as importing
from workbench.features.export.bundle import VersionMismatch, export_bundle
from workbench.calibration.rubric_versions import add_rubric, rubric_ref, split_rubric_ref
from workbench.calibration.versions import VersionNotRun, resolve_ref

G, R, J = "demo", "demo-patch-quality", "careful-sonnet"
JUDGMENTS = DEMO_DIR / R / "judgments" / f"{J}.jsonl"


def add_version(store, tmp_path, instructions: str) -> int:
    """A new version of the demo rubric (the same judges, other instructions); returns its number."""
    content = yaml.safe_load(DEMO_RUBRIC.read_text())
    content["instructions"] = instructions
    return add_rubric(store, write(tmp_path / "rubrics" / f"{R}.yaml", yaml.safe_dump(content))).version


def test_a_version_is_read_from_name_at_v_n(demo_store):
    assert split_rubric_ref("demo-patch-quality@v12") == ("demo-patch-quality", 12)
    assert split_rubric_ref("demo-patch-quality@v0") == ("demo-patch-quality@v0", None)  # versions start at 1
    assert rubric_ref(demo_store, R) == (R, None)
    assert rubric_ref(demo_store, f"{R}@v1") == (R, 1)


def test_a_rubric_whose_own_name_ends_in_at_v_n_keeps_its_name(store, tmp_path):
    content = {**yaml.safe_load(DEMO_RUBRIC.read_text()), "name": "team@v2"}
    add_rubric(store, write(tmp_path / "odd.yaml", yaml.safe_dump(content)))
    assert rubric_ref(store, "team@v2") == ("team@v2", None)


def test_export_of_an_exact_version(demo_store, tmp_path):
    assert add_version(demo_store, tmp_path, "Read the final test run first.") == 2
    importing.import_judgments(demo_store, JUDGMENTS, G, R, J)  # the current version, v2, gets its own run
    out = tmp_path / "approved"
    v1 = export_bundle(demo_store, G, f"{R}@v1", J, out_dir=out)
    v2 = export_bundle(demo_store, G, f"{R}@v2", J, out_dir=out)
    newest = export_bundle(demo_store, G, R, J, out_dir=out)
    assert v1.path.name == f"{R}@v1--{J}.yaml" and v2.path.name == f"{R}@v2--{J}.yaml"
    assert newest.path == v2.path and newest.note is None
    b1, b2 = v1.bundle, v2.bundle
    assert (b1["rubric"]["version"], b2["rubric"]["version"]) == (1, 2)
    assert b1["rubric"]["hash"] != b2["rubric"]["hash"]
    assert b1["rubric"]["content"]["instructions"] != b2["rubric"]["content"]["instructions"]
    assert b2["rubric"]["content"]["instructions"] == "Read the final test run first."
    assert b1["judge"]["config_hash"] != b2["judge"]["config_hash"]  # each version's own judge config
    # each bundle's evidence is the run of its own version: its judgments were all made under that version's config
    runs = {r["rubric_version"]: r for r in demo_store.runs(demo_store.golden_set(G).id) if r["judge_id"] == J}
    for version, bundle in ((1, b1), (2, b2)):
        assert demo_store.run_config_hashes(runs[version]["id"]) == [bundle["judge"]["config_hash"]]
    exported = {(e["rubric_version"], e["judge_id"]) for e in demo_store.exports()}
    assert exported == {(1, J), (2, J)}


def test_a_version_the_judge_never_ran_is_refused_in_one_sentence(demo_store, tmp_path):
    add_version(demo_store, tmp_path, "Read the final test run first.")
    with pytest.raises(VersionNotRun) as e:
        export_bundle(demo_store, G, f"{R}@v2", J, out_dir=tmp_path / "approved")
    sentence = str(e.value)
    assert sentence == (
        f"judge '{J}' has no judgments of rubric '{R}' v2 on golden set '{G}' (it has judgments of v1), so v2 cannot "
        f"be approved on them; run it with 'workbench judge run -g {G} -r {R} -j {J}' or import its judgments, or "
        f"export a version it ran with '--rubric {R}@v1'.")
    assert sentence.count(". ") == 0 and sentence.endswith(".")  # one sentence
    assert not (tmp_path / "approved").exists() and demo_store.exports() == []
    assert demo_store.golden_set_versions(demo_store.golden_set(G).id) == []  # nothing frozen either


def test_an_older_version_no_judge_ran_says_it_cannot_be_run_now(demo_store, tmp_path):
    add_version(demo_store, tmp_path, "Second wording.")
    add_version(demo_store, tmp_path, "Third wording.")
    with pytest.raises(VersionNotRun, match=r"v2 is not the current version \(v3\), so no judge can be run on it "
                                            rf"now, or export a version it ran with '--rubric {R}@v1'\.$"):
        export_bundle(demo_store, G, f"{R}@v2", J, out_dir=tmp_path / "approved")


def test_a_version_that_does_not_exist_names_those_that_do(demo_store, tmp_path):
    with pytest.raises(NotFound, match=rf"rubric '{R}' has no version 7 \(versions: v1\); name one of them"):
        export_bundle(demo_store, G, f"{R}@v7", J, out_dir=tmp_path)


def test_the_name_alone_exports_the_newest_version_the_judge_ran_and_says_so(demo_store, tmp_path):
    add_version(demo_store, tmp_path, "Read the final test run first.")  # v2: not run by anyone
    res = export_bundle(demo_store, G, R, J, out_dir=tmp_path / "approved")
    assert res.bundle["rubric"]["version"] == 1 and res.path.name == f"{R}@v1--{J}.yaml"
    assert res.note == (f"Note: this is v1 of rubric '{R}', the newest version judge '{J}' has judgments of; the "
                        f"current version is v2 (name a version with --rubric {R}@vN).")


def test_a_version_is_never_approved_on_another_versions_judgments(demo_store, tmp_path):
    """Judgments recorded under v1's judge config that end up in a v2 run are refused, never approved as v2."""
    add_version(demo_store, tmp_path, "Read the final test run first.")
    importing.import_judgments(demo_store, JUDGMENTS, G, R, J)
    scope = resolve_ref(demo_store, G, f"{R}@v2", J)
    v1_config = resolve_ref(demo_store, G, f"{R}@v1", J).judge_row["config_hash"]
    with demo_store.transaction():  # as if v1's verdicts had been written into v2's run
        demo_store.conn.execute("UPDATE judgments SET config_hash = ? WHERE run_id = ? AND item_pk % 2 = 0",
                                (v1_config, scope.run["id"]))
    with pytest.raises(VersionMismatch, match=rf"rubric '{R}' v2 was not exported for judge '{J}': run '.*' holds "
                                              r"judgments made under 1 other judge config\(s\)"):
        export_bundle(demo_store, G, f"{R}@v2", J, out_dir=tmp_path / "approved")
    assert not (tmp_path / "approved").exists()
    # v1 itself is untouched and still exports
    assert export_bundle(demo_store, G, f"{R}@v1", J, out_dir=tmp_path / "approved").bundle["rubric"]["version"] == 1


def test_a_v2_judgment_import_never_lands_in_v1_and_the_reverse(demo_store, tmp_path):
    add_version(demo_store, tmp_path, "Read the final test run first.")
    gs = demo_store.golden_set(G).id
    before = [r["id"] for r in demo_store.runs(gs) if r["judge_id"] == J]
    res = importing.import_judgments(demo_store, JUDGMENTS, G, f"{R}@v1", J)  # the demo's file, into v1 again
    assert res.added == 0 and [r["id"] for r in demo_store.runs(gs) if r["judge_id"] == J] == before


def test_cli_export_of_a_version_and_its_refusal(cli, tmp_path):
    assert cli("demo", "--no-ui").exit_code == 0
    content = yaml.safe_load(DEMO_RUBRIC.read_text())
    content["instructions"] = "Read the final test run first."
    assert cli("rubric", "add", write(tmp_path / "v2.yaml", yaml.safe_dump(content))).exit_code == 0
    r = cli("export", "-g", G, "-r", f"{R}@v2", "-j", J, "--out", tmp_path / "a")
    assert r.exit_code == 3 and not (tmp_path / "a").exists()
    assert r.stderr.startswith(f"Not exported: judge '{J}' has no judgments of rubric '{R}' v2")
    assert r.stderr.count("\n") == 1  # one sentence, one line
    r = cli("export", "-g", G, "-r", f"{R}@v1", "-j", J, "--out", tmp_path / "a")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a" / f"{R}@v1--{J}.yaml").exists() and "Note:" not in r.output
    r = cli("export", "-g", G, "-r", R, "-j", J, "--out", tmp_path / "b")
    assert r.exit_code == 0 and (tmp_path / "b" / f"{R}@v1--{J}.yaml").exists()
    assert "the current version is v2" in r.output
    r = cli("calibrate", "-g", G, "-r", f"{R}@v2", "-j", J)  # the same resolution for calibrate
    assert r.exit_code == 1 and f"has no judgments of rubric '{R}' v2" in r.stderr


def test_commands_that_work_on_the_current_version_say_so_for_name_at_v_n(cli):
    assert cli("demo", "--no-ui").exit_code == 0
    r = cli("compare", "-g", G, "-r", f"{R}@v1")
    assert r.exit_code == 1 and r.stderr.strip() == (
        f"Error: '{R}@v1' names version 1 of rubric '{R}', and this command works on the rubric's current version; "
        f"give --rubric {R} (export, calibrate, report and import judgments take NAME@vN).")
