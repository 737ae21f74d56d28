"""The workspace and the command line's manners (issue 12, items 1 to 3).

A team's folder holds its database, rubrics/policy.yaml, approved bundles and
reports; it is --project, else WORKBENCH_PROJECT, else the working directory,
never the source tree. Global options go before or after the subcommand,
read-only commands refuse a missing database, and a closed pipe ends quietly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, write
from workbench.cli import EXIT_BROKEN_PIPE, main
from workbench.calibration.gate import Policy, load_policy
from workbench.calibration.calibrate import policy_path
from workbench.features.demo.seed import demo_files
from workbench.store import Store, default_db_path
from workbench.core.workspace import Workspace

G, R = "demo", "demo-patch-quality"
FAST = ("--resamples", "200")


@pytest.fixture(autouse=True)
def no_workspace_in_the_environment(monkeypatch):
    monkeypatch.delenv("WORKBENCH_DB", raising=False)
    monkeypatch.delenv("WORKBENCH_PROJECT", raising=False)
    monkeypatch.delenv("WORKBENCH_APPROVED_DIR", raising=False)


def run(*args, env: dict | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.fixture
def team(tmp_path: Path, demo_db_template: Path) -> Path:
    """A team's workspace: the seeded demo database, and a policy that asks for far more evidence."""
    ws = tmp_path / "team"
    ws.mkdir()
    shutil.copy(demo_db_template, ws / "workbench.db")
    write(ws / "rubrics" / "policy.yaml", "min_items: 5000\n")
    return ws


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch) -> Path:
    """The working directory of a user who is not in the workspace."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


# -- item 1: the workspace, resolved once ----------------------------------------------

def test_resolution_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert Workspace.resolve() == Workspace(tmp_path, tmp_path / "workbench.db")
    env = {"WORKBENCH_PROJECT": str(tmp_path / "p")}
    assert Workspace.resolve(environ=env) == Workspace(tmp_path / "p", tmp_path / "p" / "workbench.db")
    assert Workspace.resolve(tmp_path / "q", environ=env).root == tmp_path / "q"  # the option wins
    ws = Workspace.resolve(tmp_path / "q", "other.db", environ=env)
    assert ws.db == Path("other.db") and ws.policy_file == tmp_path / "q" / "rubrics" / "policy.yaml"
    assert ws.approved == tmp_path / "q" / "rubrics" / "approved" and ws.reports == tmp_path / "q" / "reports"
    assert Workspace.resolve(environ=ws.environ()) == Workspace(ws.root, (tmp_path / "other.db"))  # the UI's view


def test_library_callers_get_the_workspace_of_the_environment(tmp_path, monkeypatch):
    """The UI process resolves the workspace from WORKBENCH_PROJECT, which `workbench ui` sets; never the source tree."""
    monkeypatch.setenv("WORKBENCH_PROJECT", str(tmp_path))
    assert policy_path() == tmp_path / "rubrics" / "policy.yaml"
    assert default_db_path() == str(tmp_path / "workbench.db")
    monkeypatch.delenv("WORKBENCH_PROJECT")
    monkeypatch.chdir(tmp_path)
    assert policy_path() == tmp_path / "rubrics" / "policy.yaml"


@pytest.mark.parametrize("how", ["--project before", "--project after", "WORKBENCH_PROJECT", "working directory"])
def test_the_workspace_policy_is_honoured(team, elsewhere, monkeypatch, how):
    """A team's rubrics/policy.yaml asking for 5,000 items holds back a judge that passes the default policy."""
    args, env = ["calibrate", "-g", G, "-r", R, "-j", "careful-sonnet", *FAST], None
    if how == "--project before":
        args = ["--project", team, *args]
    elif how == "--project after":
        args = [*args, "--project", team]
    elif how == "WORKBENCH_PROJECT":
        env = {"WORKBENCH_PROJECT": str(team)}
    else:
        monkeypatch.chdir(team)
    r = run(*args, env=env)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("NOT DECIDED YET")
    assert "[UNDECIDED] enough evidence" in r.output and "5000" in r.output


def test_without_a_policy_file_the_defaults_apply(team, elsewhere):
    (team / "rubrics" / "policy.yaml").unlink()
    r = run("--project", team, "calibrate", "-g", G, "-r", R, "-j", "careful-sonnet", "--json", *FAST)
    assert json.loads(r.output)["policy"]["min_items"] == 50


def test_outputs_land_in_the_workspace_and_the_command_says_where(team, elsewhere):
    """export, report and grade write into the workspace from any folder, and print the file they wrote."""
    (team / "rubrics" / "policy.yaml").unlink()
    r = run("export", "-g", G, "-r", R, "-j", "careful-sonnet", "--project", team, *FAST)
    assert r.exit_code == 0, r.output
    bundle = team / "rubrics" / "approved" / "demo-patch-quality@v1--careful-sonnet.yaml"
    assert bundle.exists() and str(bundle) in r.output
    assert not (elsewhere / "rubrics").exists()

    r = run("report", "-g", G, "-r", R, "-j", "gpt4o-self", "--format", "md", "--project", team, *FAST)
    card = team / "reports" / "calibration-demo-patch-quality-v1-gpt4o-self.md"
    assert r.exit_code == 0 and card.exists() and str(card) in r.output, r.output

    items = write(elsewhere / "new.jsonl", "".join(
        line for line in (ROOT / "golden_sets/demo/items.jsonl").read_text().splitlines(keepends=True)[:20]))
    judgments = write(elsewhere / "j.jsonl", "".join(
        line for line in (ROOT / "golden_sets/demo/demo-patch-quality/judgments/careful-sonnet.jsonl")
        .read_text().splitlines(keepends=True)[:20]))
    r = run("grade", "--bundle", bundle, "--items", items, "--judgments", judgments, "--project", team, *FAST)
    graded = team / "reports" / "new.graded.jsonl"
    assert r.exit_code == 0 and graded.exists() and f"Per-item results: {graded}" in r.output, r.output
    r = run("grade", "--bundle", bundle, "--items", items, "--judgments", judgments, "--json", "--out", "mine.jsonl",
            "--project", team, *FAST)
    assert r.exit_code == 0 and json.loads(r.stdout)["results_file"] == "mine.jsonl"
    assert (elsewhere / "mine.jsonl").exists() and "Per-item results: mine.jsonl" in r.stderr


def test_demo_writes_its_files_into_an_empty_workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("demo", "--no-ui")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "workbench.db").exists() and "pick the rater 'lead'" in r.output
    for rel, packaged in demo_files():
        assert (tmp_path / rel).read_bytes() == packaged.read_bytes()
    edited = write(tmp_path / "rubrics" / "demo-patch-quality.yaml", "# mine\n")
    r = run("demo", "--no-ui")
    assert r.exit_code == 0 and edited.read_text() == "# mine\n"  # never overwritten
    assert "Kept rubrics/demo-patch-quality.yaml" in r.stderr


def test_init_makes_an_empty_workspace_and_says_what_next(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("init", "--project", "new")
    assert r.exit_code == 0, r.output
    ws = tmp_path / "new"
    for path in ("workbench.db", "rubrics/example.yaml", "rubrics/policy.yaml"):
        assert (ws / path).is_file(), path
    for folder in ("golden_sets", "rubrics/approved", "reports"):
        assert (ws / folder).is_dir(), folder
    assert "workbench rubric add rubrics/example.yaml" in r.output and "workbench import items" in r.output
    assert load_policy(ws / "rubrics" / "policy.yaml") == Policy()  # every key present, commented out
    assert "added as version 1" in run("--project", ws, "rubric", "add", ws / "rubrics" / "example.yaml").output
    assert "No golden sets yet" in run("golden-set", "list", "--project", ws).output
    (ws / "rubrics" / "policy.yaml").write_text("min_items: 80\n")
    r = run("init", "--project", ws)
    assert "kept  new/rubrics/policy.yaml" in r.output and (ws / "rubrics/policy.yaml").read_text() == "min_items: 80\n"


# -- item 3: the command line behaves like its peers ---------------------------------------

def test_global_options_after_the_subcommand(team, elsewhere):
    db = team / "workbench.db"
    r = run("calibrate", "-g", G, "-r", R, "-j", "careful-sonnet", "--json", *FAST, "--db", db)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["judge"]["id"] == "careful-sonnet"
    assert "demo\t150 items" in run("golden-set", "list", "--db", db).output
    assert "demo-patch-quality" in run("rubric", "list", "--project", team).output  # a subgroup's command
    assert "demo\t150 items" in run("--db", "missing.db", "golden-set", "list", "--db", db).output  # after wins
    assert "--db PATH" in run("golden-set", "list", "--help").output


@pytest.mark.parametrize("args", [
    ["golden-set", "list"], ["golden-set", "show", G], ["rubric", "list"], ["rater", "list"],
    ["calibrate", "-g", G, "-r", R, "-j", "careful-sonnet"], ["compare", "-g", G, "-r", R],
    ["export", "-g", G, "-r", R, "-j", "careful-sonnet"], ["golden-set", "freeze", G], ["ui"],
], ids=lambda a: " ".join(a[:2]))
def test_commands_that_only_read_refuse_a_missing_database(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    r = run(*args, "--db", "typo.db")
    assert r.exit_code == 1
    assert r.stderr.strip() == ("Error: there is no workbench database at typo.db; run 'workbench demo' to try the "
                                "demo or 'workbench import items FILE --golden-set G' to start your own, or point "
                                "--db at an existing one.")
    assert not (tmp_path / "typo.db").exists()


def test_commands_that_add_data_create_the_database(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    item = {"id": "a", "task_id": "t", "category": "c", "input": "i", "output": "o"}
    r = run("import", "items", write(tmp_path / "i.jsonl", json.dumps(item) + "\n"), "-g", "g")
    assert r.exit_code == 0 and (tmp_path / "workbench.db").exists(), r.output


def test_a_missing_project_folder_is_refused(tmp_path):
    r = run("--project", tmp_path / "nope", "golden-set", "list")
    assert r.exit_code == 1 and "the project folder" in r.stderr and "workbench init --project" in r.stderr
    assert not (tmp_path / "nope").exists()


def test_output_cut_short_by_its_reader_ends_quietly(demo_db_template, tmp_path):
    """`workbench ... | head`: the reader is gone; exit 141 as `cat` would, and not a word on stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "workbench.cli", "--db", demo_db_template, "golden-set", "show",
                               G], stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=tmp_path, timeout=120)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (EXIT_BROKEN_PIPE, "")


def test_a_store_opened_without_a_path_is_the_workspace_database(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_PROJECT", str(tmp_path))
    with Store() as s:
        assert Path(s.path) == tmp_path / "workbench.db"
