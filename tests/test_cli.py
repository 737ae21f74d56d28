"""The command line: the contract's invocations, help with examples, clean errors."""

from __future__ import annotations

import json
import re

import click
import pytest

from tests.conftest import DEMO_DIR, DEMO_RUBRIC, ROOT, write
from workbench.cli import main
from workbench.store import Store


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, cmd in group.commands.items():
        full = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            out += _commands(cmd, full + " ")
        else:
            out.append((full, cmd))
    return out


COMMANDS = _commands(main)


@pytest.mark.parametrize("name,cmd", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_command_has_help_with_an_example(name, cmd):
    assert cmd.help and "Example:" in cmd.help and f"workbench {name}" in cmd.help


@pytest.mark.parametrize("name", [c[0] for c in COMMANDS])
def test_every_command_is_in_the_readme(name):
    """Said in words somewhere in the guide: README.md or a page of docs/ (the CLI reference, generated from the
    click group, names every command anyway; this asks for prose that mentions `workbench <name>`)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    generated = "::: mkdocs-click"  # a page that only generates the reference does not count
    prose = [p.read_text(encoding="utf-8") for p in pages]
    assert any(f"workbench {name}" in text.split(generated)[0] for text in prose), (
        f"'workbench {name}' is not documented in README.md or any docs/*.md page")


def test_demo_no_ui_then_show(cli):
    r = cli("demo", "--no-ui")
    assert r.exit_code == 0 and "SYNTHETIC demo: 150 items" in r.output
    r = cli("golden-set", "show", "demo", "--json")
    info = json.loads(r.output)
    assert info["items"] == 150 and info["synthetic_demo"] is True
    assert {run["judge"] for run in info["runs"]} == {"careful-sonnet", "lenient-mini", "gpt4o-self", "noisy-llama"}
    assert cli("demo", "--no-ui").exit_code == 0  # seeding twice is harmless
    assert json.loads(cli("golden-set", "show", "demo", "--json").output)["items"] == 150


def test_import_commands_and_round_trip(cli, tmp_path):
    assert cli("rubric", "add", DEMO_RUBRIC).exit_code == 0
    r = cli("import", "items", DEMO_DIR / "items.jsonl", "--golden-set", "g")
    assert r.exit_code == 0 and "150 items read, 150 added" in r.output
    sub = DEMO_DIR / "demo-patch-quality"
    assert cli("import", "labels", "--new-raters", sub / "labels.jsonl", "-g", "g", "-r", "demo-patch-quality").exit_code == 0
    assert cli("import", "adjudications", sub / "adjudications.jsonl", "-g", "g", "-r",
               "demo-patch-quality").exit_code == 0
    r = cli("import", "judgments", sub / "judgments/lenient-mini.jsonl", "-g", "g", "-r", "demo-patch-quality",
            "-j", "lenient-mini")
    assert r.exit_code == 0 and "150 judgments read, 150 added" in r.output
    assert "version 1" in cli("golden-set", "freeze", "g").output
    assert cli("golden-set", "export", "g", "--out", tmp_path / "out").exit_code == 0
    exported = [json.loads(l) for l in (tmp_path / "out/items.jsonl").read_text().splitlines()]
    original = [json.loads(l) for l in (DEMO_DIR / "items.jsonl").read_text().splitlines()]
    assert exported == original
    assert "g\t150 items" in cli("golden-set", "list").output


def test_rubric_versions(cli, tmp_path):
    text = DEMO_RUBRIC.read_text()
    f = write(tmp_path / "r.yaml", text)
    assert "added as version 1" in cli("rubric", "add", f).output
    assert "unchanged: version 1" in cli("rubric", "add", f).output
    write(f, text.replace("Cite the steps", "Always cite the steps"))
    assert "added as version 2" in cli("rubric", "add", f).output
    assert "version 2" in cli("rubric", "show", "demo-patch-quality").output
    assert "v2" in cli("rubric", "list").output


@pytest.mark.parametrize("args,needle", [
    (["import", "items", "missing.jsonl", "-g", "g"], "missing.jsonl: file not found; check the path."),
    (["golden-set", "show", "nope"], "no golden set 'nope'"),
    (["rubric", "show", "nope"], "no rubric 'nope' (rubrics: none yet); add it with 'workbench rubric add rubrics/nope.yaml'"),
    (["rubric", "show", "../../x"], "no rubric '../../x'; 'workbench rubric list' shows the rubrics"),  # no path
    (["rubric", "show", "nope@v99999999999999999999"],  # too long for a version: a name
     "no rubric 'nope@v99999999999999999999'; 'workbench rubric list' shows the rubrics"),
    (["refine", "-g", "g", "-r", "r", "-j", "j", "--seed", "99999999999999999999", "--dry-run"],
     "option --seed must be a whole number from 0 to 2**63 - 1"),
])
def test_errors_are_one_sentence_without_traceback(cli, args, needle):
    Store(cli.db).close()  # an empty database: read-only commands refuse a missing one (tests/test_workspace.py)
    r = cli(*args)
    assert r.exit_code == 1
    assert needle in r.stderr and "Traceback" not in r.output
    assert r.stderr.strip().count("\n") == 0


def test_bad_rubric_names_line_and_field(cli, tmp_path):
    f = write(tmp_path / "bad.yaml", "name: x\njudges:\n  - id: j\n    model: gpt-4o\n")
    r = cli("rubric", "add", f)
    assert r.exit_code == 1
    assert re.search(r"bad.yaml line 4: field 'judges\[0\].model': model 'gpt-4o' has no known provider prefix",
                     r.stderr)


def test_unknown_rubric_key(cli, tmp_path):
    f = write(tmp_path / "bad.yaml", "name: x\ntreshold: 1\n")
    r = cli("rubric", "add", f)
    assert "bad.yaml line 2: field 'treshold': unknown key 'treshold'" in r.stderr


def test_bad_import_exits_nonzero_and_names_line(cli, tmp_path):
    cli("rubric", "add", DEMO_RUBRIC)
    f = write(tmp_path / "items.jsonl", '{"id": "a", "input": "t", "output": "o"}\n{"id": "b", "input": "t"\n')
    r = cli("import", "items", f, "-g", "g")
    assert r.exit_code == 1 and "items.jsonl line 2: malformed JSON" in r.stderr
    assert "No golden sets yet" in cli("golden-set", "list").output  # nothing landed, not even the set


def test_rater_roles(cli):
    r = cli("rater", "set", "maria", "--role", "lead", "--email", "maria@example.com")
    assert r.exit_code == 0 and "Rater 'maria' is a lead (maria@example.com)." in r.output
    assert "maria\tlead\tmaria@example.com" in cli("rater", "list").output
    assert cli("rater", "set", "x", "--role", "boss").exit_code == 2  # click refuses the choice
