"""Issue 27 item 6: a refused or failed import leaves no file and no database change.

The issue's case: ``workbench import --from mlflow /tmp/nope/mlruns -g g -r r`` in an empty folder left a 300 KB
workbench.db behind. A command that may create the database (``creates_db``) now removes the one it created
when it fails, with its -wal and -shm files and any folder it made for it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import DEMO_RUBRIC, Cli, write
from workbench.cli import main
from workbench.features.interop.registry import adapter_names


def _run(*args: str):
    return CliRunner().invoke(main, list(map(str, args)), catch_exceptions=False)


def _everything(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def empty(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    monkeypatch.chdir(folder)
    systmp = tmp_path / "systmp"  # the staging files of an import go to the system's temporary folder
    systmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))
    return folder


@pytest.mark.parametrize("source", adapter_names())
def test_import_from_a_store_that_does_not_exist_leaves_an_empty_folder_empty(empty, source):
    r = _run("import", "--from", source, "/tmp/nope/mlruns", "-g", "g", "-r", "r")
    assert r.exit_code == 1 and r.stderr.startswith("Error: ") and "Traceback" not in r.output
    assert _everything(empty) == [] and _everything(empty.parent / "systmp") == []


@pytest.mark.parametrize("args,files", [
    (["rubric", "add", "bad.yaml"], {"bad.yaml": "name: r\ntitel: x\n"}),
    (["import", "items", "items.jsonl", "-g", "g"], {"items.jsonl": '{"id": "a", "input": "t"}\n'}),
    (["import", "items", "items.jsonl", "-g", "../g"], {"items.jsonl": '{"id": "a", "input": "t", "output": "o"}\n'}),
    (["import", "labels", "--new-raters", "labels.jsonl", "-g", "g", "-r", "r"], {"labels.jsonl": '{"item_id": "a"}\n'}),
    (["rater", "set", "a/b", "--role", "lead"], {}),
])
def test_refused_commands_that_may_create_the_database_leave_none(empty, args, files):
    inputs = empty.parent / "inputs"
    for name, text in files.items():
        write(inputs / name, text)
    r = _run("--db", empty / "sub" / "dir" / "workbench.db", *[str(inputs / a) if a in files else a for a in args])
    assert r.exit_code == 1 and r.stderr.startswith("Error: "), r.output
    assert _everything(empty) == []  # neither the database nor the folders made for it


def test_a_database_that_was_there_stays_after_a_refused_command(tmp_path):
    cli = Cli(tmp_path / "w.db")
    assert cli("rubric", "add", DEMO_RUBRIC).exit_code == 0
    before = (tmp_path / "w.db").stat().st_size
    bad = write(tmp_path / "in" / "bad.yaml", "name: x\njudges: [\n")
    assert cli("rubric", "add", bad).exit_code == 1
    assert (tmp_path / "w.db").exists() and (tmp_path / "w.db").stat().st_size == before
    assert "demo-patch-quality" in cli("rubric", "list").output


def test_a_command_that_succeeds_keeps_the_database_it_created(empty):
    f = write(empty.parent / "items.jsonl", '{"id": "a", "input": "t", "output": "o"}\n')
    assert _run("import", "items", f, "-g", "g").exit_code == 0
    assert "workbench.db" in _everything(empty)


def test_a_new_database_another_process_wrote_to_meanwhile_is_kept(empty, monkeypatch):
    from workbench.core.errors import InputError
    from workbench.features.importing import service as importing
    from workbench.calibration.rubric_versions import add_rubric
    from workbench.store import Store

    def another_writer_then_refused(store, path, golden_set, **kw):
        with Store(empty / "workbench.db") as other:
            add_rubric(other, DEMO_RUBRIC)  # a second process lands a rubric in the new database
        raise InputError("refused after the other process wrote", file="items.jsonl", line=1)

    monkeypatch.setattr(importing, "import_items", another_writer_then_refused)
    f = write(empty.parent / "items.jsonl", '{"id": "a", "input": "t", "output": "o"}\n')
    r = _run("import", "items", f, "-g", "g")
    assert r.exit_code == 1 and "refused after the other process wrote" in r.stderr
    assert (empty / "workbench.db").exists()
    assert "demo-patch-quality" in _run("rubric", "list").output
