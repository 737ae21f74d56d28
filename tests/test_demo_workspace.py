"""`workbench demo` in a workspace (issue 26, items 7 and 8): a second run after the rubric gained a version changes
no table; it copies every file the README's blocks read (the eval-awareness rubric included); its last line counts
the files it wrote; and in a fresh clone of the repository it leaves `git status` clean."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from workbench.features.demo.seed import demo_files

R = "demo-patch-quality"
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's companions of an open database, not files the demo wrote


def workbench(cwd: Path, *args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    """The CLI in its own process, in ``cwd`` as the workspace (no WORKBENCH_* variable from outside)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    if pythonpath is not None:  # that checkout's own code
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def tables(db: Path) -> dict[str, list[tuple]]:
    """Every row of every table, in a stable order."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: sorted(con.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr) for n in names}
    finally:
        con.close()


def files_in(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and not p.name.endswith(SIDE_FILES) and ".git" not in p.relative_to(folder).parts)


def wrote(stdout: str) -> int:
    last = stdout.strip().splitlines()[-1]
    m = re.match(r"Wrote (\d+) files?\b", last)
    assert m, f"the demo's last line does not count the files it wrote: {last!r}"
    return int(m.group(1))


def test_the_demo_counts_the_files_it_wrote_and_copies_what_the_readme_reads(tmp_path):
    r = workbench(tmp_path, "demo", "--no-ui")
    assert r.returncode == 0, r.stderr
    on_disk = files_in(tmp_path)
    # the demo's files, the database, and the demo board's approved bundle (in the workspace, issue 50 item 2)
    assert wrote(r.stdout) == len(on_disk) == len(list(demo_files())) + 2
    assert "rubrics/approved/demo-board/demo-patch-quality@v1--test-results.yaml" in on_disk
    assert r.stdout.strip().splitlines()[-1].startswith(f"Wrote {len(on_disk)} files: workbench.db (the database), ")
    # the eval-awareness audit's rubric and golden set, where the README's block reads them
    for path in ("rubrics/examples/eval-awareness-audit.yaml", "golden_sets/eval-awareness/items.jsonl",
                 "golden_sets/eval-awareness/eval-awareness-audit/labels.jsonl", f"rubrics/{R}.yaml"):
        assert path in on_disk, path
    assert (tmp_path / "rubrics/examples/eval-awareness-audit.yaml").read_bytes() == \
        (ROOT / "rubrics/examples/eval-awareness-audit.yaml").read_bytes()
    again = workbench(tmp_path, "demo", "--no-ui")
    assert again.returncode == 0 and wrote(again.stdout) == 0 and files_in(tmp_path) == on_disk


@pytest.mark.slow
def test_a_second_demo_after_a_rubric_v2_changes_no_table(tmp_path):
    """After the README's own steps that add version 2 (a declared judge, its judgments, an export), the demo again
    adds nothing anywhere: its recorded judgments stay in its own version, and nothing is recomputed."""
    assert workbench(tmp_path, "demo", "--no-ui").returncode == 0
    rubric = tmp_path / "rubrics" / f"{R}.yaml"
    rubric.write_text(rubric.read_text() + "- {id: careful-single, model: anthropic/claude-sonnet-4-5, mode: single, "
                                           "temperature: 0, max_tokens: 800}\n")
    steps = [("rubric", "add", f"rubrics/{R}.yaml"),
             ("import", "judgments", f"golden_sets/demo/{R}/judgments/careful-sonnet.jsonl", "-g", "demo", "-r", R,
              "-j", "careful-single"),
             ("judge", "run", "-g", "demo", "-r", R, "-j", "test-results"),  # a v2 run of the Python grader
             ("export", "-g", "demo", "-r", R, "-j", "careful-single"),
             ("compare", "-g", "demo", "-r", R)]
    for step in steps:
        r = workbench(tmp_path, *step)
        assert r.returncode == 0, (step, r.stdout, r.stderr)
    db = tmp_path / "workbench.db"
    before, files_before = tables(db), {p: (tmp_path / p).read_bytes() for p in files_in(tmp_path)}
    assert {r[0] for r in before["rubrics"]} and len(before["rubrics"]) == 2

    r = workbench(tmp_path, "demo", "--no-ui")
    assert r.returncode == 0, r.stderr
    after = tables(db)
    changed = {t for t in before.keys() | after.keys() if before.get(t) != after.get(t)}
    assert not changed, f"a second demo changed {sorted(changed)}"
    assert {p: (tmp_path / p).read_bytes() for p in files_in(tmp_path)} == files_before
    assert wrote(r.stdout) == 0 and "nothing added" in r.stdout
    assert f"Kept rubrics/{R}.yaml" in r.stderr  # the workspace's edited rubric is left as it is


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and a checkout")
def test_the_demo_in_a_fresh_clone_leaves_git_status_clean(tmp_path):
    """The repository is itself a workspace: its demo files are links to the package data, so the demo writes only
    its outputs there (the database and the board's signed bundle), which .gitignore covers."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300)
    r = workbench(clone, "demo", "--no-ui", pythonpath=clone)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == (
        "Wrote 2 files: workbench.db (the database), "
        "rubrics/approved/demo-board/demo-patch-quality@v1--test-results.yaml.")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", f"the demo left files git does not cover:\n{status}"
    ignored = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=clone, capture_output=True,
                             text=True, check=True).stdout
    assert "!! workbench.db" in ignored and "!! rubrics/approved/" in ignored


def test_every_demo_file_is_at_its_workspace_path_in_the_repository_as_a_link_to_the_package_data():
    """Why the demo writes nothing but the database in a clone: the repository holds each demo file where a
    workspace has it, as a link to the package data (so the two can never differ)."""
    for rel, packaged in demo_files():
        in_repo = ROOT.joinpath(*rel.parts)
        assert in_repo.resolve() == Path(str(packaged)).resolve(), f"{rel} is not a link to the package data"
