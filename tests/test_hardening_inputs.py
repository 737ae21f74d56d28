"""Issue 11 (hardening): names that become paths, YAML bombs, and one located sentence for every bad input.

Every bad input here gets, through the CLI, one sentence naming the file and
line (or the option) and the fix, a non-zero exit and no traceback, and leaves
nothing behind: no row, no half-written folder, no .tmp file.
"""

from __future__ import annotations

import errno
import json
import pathlib
import time

import pytest

from tests.conftest import DEMO_DIR, DEMO_RUBRIC, Cli, write
from workbench.core.errors import InputError
from workbench.core.formats import write_jsonl
from workbench.core.models import Label, Rubric
from workbench.core.names import check_name, name_problem, safe_path
from workbench.features.export.bundle import BundleRefused, bundle_path, load_bundle, write_atomic
from workbench.features.people.raters import rater_for_email
from workbench.store import Store

RULE = "use at most 100 letters, digits and . _ - : @ +"


def refused(r, *needles: str) -> str:
    """The CLI said one sentence on stderr (with each needle), exited 1, and showed no traceback."""
    assert r.exit_code == 1, r.output
    lines = r.stderr.strip().splitlines()
    err = lines[-1]
    assert err.startswith("Error: ") and all(not l.startswith("Error") for l in lines[:-1]), r.stderr
    assert all(l.startswith("Importing") for l in lines[:-1]), r.stderr  # a progress label may come first
    assert "Traceback" not in r.output and "unexpected" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.fixture
def seeded(cli: Cli) -> Cli:
    """The demo rubric and items (no labels) in a fresh database."""
    assert cli("rubric", "add", DEMO_RUBRIC).exit_code == 0
    assert cli("import", "items", DEMO_DIR / "items.jsonl", "-g", "g").exit_code == 0
    return cli


@pytest.fixture
def demo_cli(demo_store, tmp_path) -> Cli:
    """The CLI over a private copy of the seeded demo database."""
    return Cli(tmp_path / "demo.db")


def leftovers(root: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.name.endswith((".tmp", ".partial")))


# -- 2. names become paths -------------------------------------------------------------

@pytest.mark.parametrize("name", ["alice", "alice.smith", "alice@example.com", "alice+eval@example.co.uk",
                                  "anthropic.claude-3-5-sonnet-20241022-v2:0", "meta.llama3-1-70b-instruct-v1:0",
                                  "gpt-4o", "gemini_flash", "_private", "run-2", "import-0123456789ab",
                                  "demo-patch-quality", "author_0"])
def test_realistic_names_pass(name):
    assert name_problem(name) is None and check_name(f" {name} ", "name") == name


@pytest.mark.parametrize("name,problem", [
    ("../../escaped", "contains '..'"), ("x/../../../escaped-judge", "contains '..'"), ("a/b", "contains '/'"),
    ("a\\b", "contains '\\'"), (".hidden", "starts with '.'"), ("-rf", "starts with '-'"), ("", "is empty"),
    ("   ", "is empty"), ("tab\there", "control character"), ("nul\x00", "control character"),
    ("two words", "a space"), ("x" * 101, "more than 100"),
])
def test_unsafe_names_refused(name, problem):
    with pytest.raises(InputError, match=RULE) as e:
        check_name(name, "judge id")
    assert problem in str(e.value)


def test_rubric_add_refuses_traversal_names_at_their_line(cli, tmp_path):
    f = write(tmp_path / "r.yaml", "name: ../../escaped\n")
    refused(cli("rubric", "add", f), "r.yaml line 1: field 'name': the rubric name '../../escaped' contains '..'",
            RULE)
    f = write(tmp_path / "j.yaml", "name: ok\njudges:\n  - id: x/../../../escaped-judge\n    model: openai/gpt-4o\n")
    refused(cli("rubric", "add", f), "j.yaml line 3: field 'judges[0].id': the judge id 'x/../../../escaped-judge'")
    assert not cli.db.exists()  # the refused command leaves no database behind (issue 27)


def test_register_rubric_checks_names_of_a_built_rubric(store):
    from workbench.core.models import JudgeSpec, Rubric
    from workbench.calibration.rubric_versions import register_rubric

    with pytest.raises(InputError, match="the rubric name '../../escaped' contains '..'"):
        register_rubric(store, Rubric(name="../../escaped"))
    with pytest.raises(InputError, match="the judge id 'x/y' contains '/'"):
        register_rubric(store, Rubric(name="ok", judges=(JudgeSpec(id="x/y", model="openai/gpt-4o"),)))
    assert store.rubric_names() == []


def test_model_ids_as_judge_ids_are_accepted(cli, tmp_path):
    f = write(tmp_path / "pf.yaml", "name: play-favorites\njudges:\n"
              "  - id: anthropic.claude-3-5-sonnet-20241022-v2:0\n"
              "    model: openai-api/bedrock/anthropic.claude-3-5-sonnet-20241022-v2:0\n    family: anthropic\n")
    r = cli("rubric", "add", f)
    assert r.exit_code == 0 and "anthropic.claude-3-5-sonnet-20241022-v2:0" in r.output


@pytest.mark.parametrize("name,needle", [("", "the golden set name is empty"), ("   ", "the golden set name is empty"),
                                         ("../../escaped", "the golden set name '../../escaped' contains '..'")])
def test_blank_or_traversal_golden_set_refused(cli, tmp_path, name, needle):
    f = write(tmp_path / "items.jsonl", '{"id": "a", "input": "t", "output": "o"}\n')
    refused(cli("import", "items", f, "-g", name), needle, RULE)
    assert not cli.db.exists()  # the refused command leaves no database behind (issue 27)


@pytest.mark.parametrize("rater,needle", [("../x", "the rater name '../x' contains '..'"),
                                          ("a/b", "contains '/'"), ("   ", "is empty")])
def test_label_rater_names_refused_at_their_line(seeded, tmp_path, rater, needle):
    f = write(tmp_path / "labels.jsonl", json.dumps({"item_id": "demo-0000", "rater": "ana", "score": 0}) + "\n"
              + json.dumps({"item_id": "demo-0001", "rater": rater, "score": 0}) + "\n")
    refused(seeded("import", "labels", "--new-raters", f, "-g", "g", "-r", "demo-patch-quality"), "labels.jsonl line 2: field 'rater'",
            needle)


def test_rater_names_like_emails_are_accepted(seeded, tmp_path):
    f = write(tmp_path / "labels.jsonl", "".join(
        json.dumps({"item_id": "demo-0000", "rater": r, "score": 0}) + "\n"
        for r in ("alice", "alice.smith", "alice@example.com")))
    assert seeded("import", "labels", "--new-raters", f, "-g", "g", "-r", "demo-patch-quality").exit_code == 0
    refused(seeded("rater", "set", "x/../y", "--role", "lead"), "the rater name 'x/../y' contains '..'")


def test_run_names_in_judgments_refused(seeded, tmp_path):
    f = write(tmp_path / "j.jsonl", '{"item_id": "demo-0000", "score": 0, "run": "../../run"}\n')
    refused(seeded("import", "judgments", f, "-g", "g", "-r", "demo-patch-quality", "-j", "lenient-mini"),
            "j.jsonl line 1: field 'run': the run name '../../run' contains '..'")


def test_safe_path_stays_inside_its_base(tmp_path):
    assert safe_path(tmp_path, "rubric", "judgments", "gpt-4o.jsonl") == tmp_path / "rubric/judgments/gpt-4o.jsonl"
    for parts in (("..", "x"), ("a/../../x",), ("x/../../../escaped-judge.jsonl",), ("/etc",), ("",), (".",)):
        with pytest.raises(InputError):
            safe_path(tmp_path, *parts)
    (tmp_path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(InputError, match="would leave the folder"):
        safe_path(tmp_path, "link", "escaped")


def test_bundle_path_refuses_names_that_leave_the_folder(tmp_path):
    assert bundle_path(tmp_path, "r", 1, "anthropic.claude-v2:1") == tmp_path / "r@v1--anthropic.claude-v2:1.yaml"
    with pytest.raises(InputError):
        bundle_path(tmp_path / "out", "../../escaped", 1, "j")
    with pytest.raises(InputError):
        bundle_path(tmp_path / "out", "r", 1, "x/../../../escaped-judge")


def _legacy_rubric(db: pathlib.Path, name: str) -> None:
    """A rubric row (and labels under it) named before names were checked: written straight to the store."""
    with Store(db) as s:
        row, _ = s.add_rubric_version(Rubric(name=name))
        pks = s.item_pks(s.golden_set("g").id)
        s.upsert_labels(name, row["id"], [Label("demo-0000", "ana", 0)], pks)


def test_golden_set_export_refuses_a_stored_traversal_name_and_writes_nothing(seeded, tmp_path):
    _legacy_rubric(seeded.db, "../../../../escaped")
    out = tmp_path / "a" / "b" / "c" / "out"
    refused(seeded("golden-set", "export", "g", "--out", out), "contains '..'")
    assert not out.exists() and not (tmp_path / "escaped").exists()
    assert not any(tmp_path.parent.glob("escaped*")) and leftovers(tmp_path) == []


def test_report_refuses_a_traversal_name_in_its_default_file_name(demo_store, tmp_path, monkeypatch):
    from workbench.features.export import card as report_card
    from workbench.calibration.calibrate import Options, calibrate

    report = calibrate(demo_store, "demo", "demo-patch-quality", "careful-sonnet", Options(resamples=50))
    report = report.but(rubric=report.rubric.but(name="../../../escaped"))
    from workbench.calibration.versions import Context

    monkeypatch.setattr(Context, "report", lambda *a, **k: report)  # the card's one report, named to escape
    work = tmp_path / "work" / "dir"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    with pytest.raises(InputError, match="contains '..'"):
        report_card.write_card(demo_store, "demo", "demo-patch-quality", "careful-sonnet", fmt="md")
    with pytest.raises(InputError, match="contains '..'"):
        report_card.write_card(demo_store, "demo", "demo-patch-quality", "x/../../../escaped-judge", fmt="html")
    assert [p.name for p in tmp_path.rglob("*") if "escaped" in p.name] == []


def test_export_and_report_refuse_a_traversal_judge(demo_cli, tmp_path):
    out = tmp_path / "approved"
    r = demo_cli("export", "-g", "demo", "-r", "demo-patch-quality", "-j", "x/../../../escaped-judge", "--out", out)
    assert r.exit_code == 1 and not out.exists()
    r = demo_cli("report", "-g", "demo", "-r", "demo-patch-quality", "-j", "x/../../../escaped-judge")
    assert r.exit_code == 1 and not any(tmp_path.parent.glob("*escaped*"))


# -- 7. YAML aliases, duplicate keys ----------------------------------------------------

def alias_bomb() -> str:
    levels = "abcdefg"
    lines = ["name: bomb", "gate:", '  a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, cur in zip(levels, levels[1:]):
        lines.append(f"  {cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_rubric_refused_in_under_a_second(cli, tmp_path):
    text = alias_bomb()
    assert len(text.encode()) < 400  # 9**7 (4.8 million) strings once expanded
    f = write(tmp_path / "bomb.yaml", text)
    t0 = time.process_time()  # CPU, not wall time: expanding the aliases would burn many seconds of it
    r = cli("rubric", "add", f)
    assert time.process_time() - t0 < 1.0
    refused(r, "bomb.yaml line 3: anchors and aliases ('&a', '*a') are not allowed", "write the repeated value out")


def test_duplicate_keys_refused_with_both_lines(cli, tmp_path):
    f = write(tmp_path / "dup.yaml", "name: first\ntitle: t\nname: second\n")
    refused(cli("rubric", "add", f), "dup.yaml line 3: the key 'name' appears twice (first on line 1); keep one")
    f = write(tmp_path / "dup2.yaml", "name: ok\njudges:\n  - id: j\n    model: openai/gpt-4o\n    id: k\n")
    refused(cli("rubric", "add", f), "dup2.yaml line 5: the key 'id' appears twice (first on line 3)")


@pytest.fixture(scope="module")
def bundle_text(tmp_path_factory) -> str:
    """A real exported bundle's text (exported once for the module)."""
    from workbench.calibration.calibrate import Options
    from workbench.features.demo.seed import seed_demo
    from workbench.features.export.bundle import export_bundle

    folder = tmp_path_factory.mktemp("bundle")
    with Store(folder / "d.db") as s:
        seed_demo(s)
        res = export_bundle(s, "demo", "demo-patch-quality", "careful-sonnet", out_dir=folder,
                            options=Options(resamples=200))
    return res.path.read_text()


@pytest.mark.parametrize("edit,needle", [
    (lambda t: t.replace("schema: workbench.bundle/1", "schema: workbench.bundle/1\nextra: !!binary aGVsbG8="),
     "the tag '!!binary' is not allowed"),
    (lambda t: t.replace("schema: workbench.bundle/1", "schema: &s workbench.bundle/1\nx: *s"),
     "anchors and aliases"),
    (lambda t: t.replace("schema: workbench.bundle/1", "schema: workbench.bundle/1\nschema: x"),
     "the key 'schema' appears twice"),
])
def test_bundle_yaml_refused_with_its_line(bundle_text, demo_cli, tmp_path, edit, needle):
    text = edit(bundle_text)
    line = next(n for n, l in enumerate(text.splitlines(), 1) if "!!binary" in l or "&s" in l or l == "schema: x")
    f = write(tmp_path / "b.yaml", text)
    items = write(tmp_path / "items.jsonl", '{"id": "a", "input": "t", "output": "o"}\n')
    refused(demo_cli("grade", "--bundle", f, "--items", items), f"b.yaml line {line}: {needle}",
            "re-export the bundle with 'workbench export'")


def test_exported_bundle_loads_with_the_strict_loader(bundle_text, tmp_path):
    f = write(tmp_path / "b.yaml", bundle_text)
    with Store(tmp_path / "other.db") as s, pytest.raises(BundleRefused, match="among the recorded exports"):
        load_bundle(s, f)  # parsed, hash checked and schema valid: only the database differs


# -- 8. every bad input: a located sentence ---------------------------------------------

def test_json_nested_100000_levels(seeded, tmp_path):
    f = write(tmp_path / "items.jsonl", '{"id": "a", "input": "t", "output": "o"}\n'
              '{"id": "b", "input": "t", "output": "o", "metadata": ' + "[" * 100_000 + "\n")
    refused(seeded("import", "items", f, "-g", "h"), "items.jsonl line 2: the JSON nests deeper than 64 levels")


def test_yaml_nested_100000_levels(cli, tmp_path):
    f = write(tmp_path / "deep.yaml", "name: deep\ngate:\n  x: " + "[" * 100_000 + "\n")
    refused(cli("rubric", "add", f), "deep.yaml line 3: the document nests deeper than 64 levels")


@pytest.mark.parametrize("body,needle", [
    ('{"id": "a", "input": "t", "output": "o", "metadata": {"x": NaN}}', "field 'metadata.x': NaN is not a finite"),
    ('{"id": "a", "input": "t", "output": "o", "metadata": {"x": [1, -Infinity]}}',
     "field 'metadata.x[1]': -Infinity is not a finite"),
    ('{"id": "a", "input": "t", "output": "o", "metadata": {"x": 1e999}}', "field 'metadata.x': Infinity"),
    ('{"id": "a", "input": "t\\ud800", "output": "o"}', "field 'input': the text holds a lone surrogate"),
    ('{"id": "a", "input": "t", "trajectory": [{"role": "tool", "content": "\\udfff"}]}',
     "field 'trajectory[0].content': the text holds a lone surrogate"),
])
def test_non_finite_numbers_and_lone_surrogates_in_items(seeded, tmp_path, body, needle):
    f = write(tmp_path / "items.jsonl", '{"id": "ok", "input": "t", "output": "o"}\n' + body + "\n")
    refused(seeded("import", "items", f, "-g", "h"), f"items.jsonl line 2: {needle}")
    assert "\th\t" not in seeded("golden-set", "list").output


def test_valid_surrogate_pair_is_kept(seeded, tmp_path):
    f = write(tmp_path / "items.jsonl", '{"id": "e", "input": "smile \\ud83d\\ude00", "output": "o"}\n')
    assert seeded("import", "items", f, "-g", "h").exit_code == 0


@pytest.mark.parametrize("yaml_text,line,needle", [
    ("name: r\ngate:\n  min_items: .nan\n", 3, "'.nan' is not a finite number"),
    ("name: r\njudges:\n  - id: j\n    model: openai/gpt-4o\n    temperature: .inf\n", 5, "'.inf' is not a finite"),
    ('name: r\ndescription: "bad \\ud800"\n', 2, "the text holds a lone surrogate"),
    ("name: r\ndescription: !!binary aGVsbG8=\n", 2, "the tag '!!binary' is not allowed"),
    ("name: r\ngate: !!set {a, b}\n", 2, "the tag '!!set' is not allowed"),
])
def test_rubric_values_that_are_not_plain_data(cli, tmp_path, yaml_text, line, needle):
    f = write(tmp_path / "r.yaml", yaml_text)
    refused(cli("rubric", "add", f), f"r.yaml line {line}: {needle}")


def test_policy_yaml_read_by_the_strict_loader(tmp_path):
    from workbench.calibration.gate import load_policy

    f = write(tmp_path / "policy.yaml", "min_items: &n 10\nmin_raters_per_item: *n\n")
    with pytest.raises(InputError, match="policy.yaml line 1: anchors and aliases"):
        load_policy(f)
    f = write(tmp_path / "policy.yaml", "min_items: 10\nmin_items: 20\n")
    with pytest.raises(InputError, match="policy.yaml line 2: the key 'min_items' appears twice"):
        load_policy(f)
    assert load_policy(write(tmp_path / "policy.yaml", "min_items: 80\n")).min_items == 80


def test_rubric_dates_stay_text(cli, tmp_path):
    f = write(tmp_path / "r.yaml", "name: r\nexamples:\n  - item: 2026-11-20\n    score: 0\n")
    assert cli("rubric", "add", f).exit_code == 0
    assert "item: '2026-11-20'" in cli("rubric", "show", "r").output


def test_rubric_not_utf8(cli, tmp_path):
    f = write(tmp_path / "latin1.yaml", "name: r\ntitle: ok\ndescription: café\n".encode("latin-1"))
    refused(cli("rubric", "add", f), "latin1.yaml line 3: not valid UTF-8 (byte 0xe9); save the file as UTF-8")


@pytest.mark.parametrize("args,needle", [
    (["calibrate", "--resamples", "0"], "option --resamples must be a whole number from 1 to 100,000, got 0"),
    (["calibrate", "--epsilon", "nan"], "option --epsilon must be a number from 0 to 1, got nan"),
    (["calibrate", "--seed", "-1"], "option --seed must be a whole number from 0 to 2**63 - 1, got -1"),
    (["calibrate", "--target-width", "inf"], "option --target-width must be a positive number, got inf"),
    (["export", "--resamples", "0", "--out", "never"], "option --resamples"),
    (["report", "--resamples", "0"], "option --resamples"),
])
def test_bad_calibration_options_refused_before_any_write(demo_cli, args, needle):
    def versions() -> int:
        with Store(demo_cli.db) as s:
            return s.conn.execute("SELECT count(*) FROM golden_set_versions").fetchone()[0]

    before = versions()
    refused(demo_cli(*args[:1], "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet", *args[1:]), needle,
            "write e.g.")
    assert versions() == before


def test_compare_and_grade_options(demo_cli, tmp_path):
    refused(demo_cli("compare", "-g", "demo", "-r", "demo-patch-quality", "--epsilon", "1.5"), "option --epsilon")
    refused(demo_cli("grade", "--bundle", tmp_path / "b.yaml", "--items", tmp_path / "i.jsonl", "--resamples", "0"),
            "option --resamples")


@pytest.mark.parametrize("option,value", [("--repeats", "0"), ("--concurrency", "0"), ("--limit", "-1"),
                                          ("--budget", "nan"), ("--budget", "-5"), ("--rpm", "0"), ("--tpm", "inf")])
def test_judge_run_refusing_its_options_leaves_no_run(demo_cli, option, value):
    def runs() -> int:
        with Store(demo_cli.db) as s:
            return s.conn.execute("SELECT count(*) FROM runs").fetchone()[0]

    before = runs()
    refused(demo_cli("judge", "run", "-g", "demo", "-r", "demo-patch-quality", "-j", "test-results", option, value),
            f"option {option} must be")
    assert runs() == before


def test_judge_run_refused_for_batch_leaves_no_run(demo_cli):
    with Store(demo_cli.db) as s:
        before = s.conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    refused(demo_cli("judge", "run", "-g", "demo", "-r", "demo-patch-quality", "-j", "test-results", "--batch"),
            "judge 'test-results'", "has no batch mode; run it without --batch")
    with Store(demo_cli.db) as s:
        assert s.conn.execute("SELECT count(*) FROM runs").fetchone()[0] == before


def test_non_ascii_api_key_named_not_echoed(demo_cli, monkeypatch):
    secret = "sk-ant-canary-sécret-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    with Store(demo_cli.db) as s:
        before = s.conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    r = demo_cli("judge", "run", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet", "--limit", "1")
    err = refused(r, "the environment variable ANTHROPIC_API_KEY contains a non-ASCII character (the value is not "
                     "shown)")
    assert "canary" not in r.output and "é" not in err
    with Store(demo_cli.db) as s:
        assert s.conn.execute("SELECT count(*) FROM runs").fetchone()[0] == before


def _flaky_after(n: int, path: pathlib.Path, records):
    for k, r in enumerate(records):
        if k == n:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        yield r


def test_full_disk_during_golden_set_export_leaves_nothing(demo_cli, tmp_path, monkeypatch):
    from workbench.calibration import snapshots

    real = snapshots.write_jsonl
    calls = []

    def full_on_second_file(path, records):
        calls.append(path)
        return real(path, _flaky_after(5, path, records) if len(calls) == 2 else records)

    monkeypatch.setattr(snapshots, "write_jsonl", full_on_second_file)
    out = tmp_path / "export"
    refused(demo_cli("golden-set", "export", "demo", "--out", out), "No space left on device",
            "free some disk space")
    assert len(calls) == 2 and not out.exists() and leftovers(tmp_path) == []


def test_full_disk_keeps_an_earlier_export_whole(demo_cli, tmp_path, monkeypatch):
    from workbench.calibration import snapshots

    out = tmp_path / "export"
    assert demo_cli("golden-set", "export", "demo", "--out", out).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    real = snapshots.write_jsonl
    monkeypatch.setattr(snapshots, "write_jsonl", lambda path, records: real(path, _flaky_after(3, path, records)))
    refused(demo_cli("golden-set", "export", "demo", "--out", out), "No space left on device")
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before and leftovers(tmp_path) == []


def test_read_only_folder_is_one_sentence(demo_cli, tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    real_mkdir = pathlib.Path.mkdir

    def mkdir(self, *a, **k):
        if str(self).startswith(str(ro)):
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_mkdir(self, *a, **k)

    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    refused(demo_cli("golden-set", "export", "demo", "--out", ro / "out"), "Read-only file system",
            "choose a folder you can write to")
    assert not ro.exists()


def test_atomic_writes_leave_no_tmp_on_a_full_disk(tmp_path, monkeypatch):
    target = write(tmp_path / "bundle.yaml", "old\n")
    real = pathlib.Path.write_text

    def half_then_full(self, text, *a, **k):
        real(self, text[:3], *a, **k)
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(pathlib.Path, "write_text", half_then_full)
    with pytest.raises(OSError):
        write_atomic(target, "new content\n")
    monkeypatch.undo()
    with pytest.raises(OSError):
        write_jsonl(tmp_path / "x.jsonl", _flaky_after(2, tmp_path, [{"a": 1}] * 5))
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["bundle.yaml"]


def test_read_only_database_is_one_sentence(demo_cli, monkeypatch):
    import sqlite3

    from workbench.calibration import snapshots

    def readonly(*a, **k):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(snapshots, "freeze", readonly)
    refused(demo_cli("golden-set", "freeze", "demo"), f"the database {demo_cli.db} is read-only")


# CSV ---------------------------------------------------------------------------------

def test_csv_bad_byte_on_line_3(seeded, tmp_path):
    f = write(tmp_path / "items.csv", b"id,input,output\na,t,o\nb,t\xff,o\n")
    refused(seeded("import", "items", f, "-g", "h"), "items.csv line 3: not valid UTF-8")


def test_csv_huge_cell_on_line_2(seeded, tmp_path):
    f = tmp_path / "items.csv"
    with f.open("wb") as fh:
        fh.write(b"id,input,output\na,")
        fh.write(b"x" * (17 * 2**20))
        fh.write(b",o\nb,t,o\n")
    refused(seeded("import", "items", f, "-g", "h"), "items.csv line 2: the line is longer than the 16 MiB limit")


def test_csv_duplicate_header_column(seeded, tmp_path):
    f = write(tmp_path / "items.csv", "id,input,output,input\na,t,o,u\n")
    refused(seeded("import", "items", f, "-g", "h"),
            "items.csv line 1: field 'input': the column 'input' appears twice in the header (columns 2 and 4)")


def test_csv_unterminated_quote_names_its_line_and_column(seeded, tmp_path):
    f = write(tmp_path / "items.csv", 'id,input,output,category\na,t,o,c\nb,"unclosed,o,c\nc,t,o,c\n')
    refused(seeded("import", "items", f, "-g", "h"),
            "items.csv line 3: field 'input': a quoted cell is not closed on this line: it runs to the end of the file")
    f = write(tmp_path / "items2.csv", 'id,input,trajectory\na,t,"[1, 2]\nb,"t",x\n')
    refused(seeded("import", "items", f, "-g", "h"), "items2.csv line 2: field 'trajectory': a quoted cell is not "
                                                     "closed on this line: it runs on to line 3")


def test_csv_multiline_and_escaped_quotes_still_import(seeded, tmp_path):
    f = write(tmp_path / "items.csv", 'id,input,output\na,"two\nlines",o\nb,"say ""hi""",o\n\nc,t,o\n')
    r = seeded("import", "items", f, "-g", "h")
    assert r.exit_code == 0 and "3 items read" in r.output
    g = json.loads(seeded("golden-set", "show", "h", "--json").output)
    assert g["items"] == 3


def test_csv_error_after_a_multiline_cell_names_the_right_line(seeded, tmp_path):
    f = write(tmp_path / "items.csv", 'id,input,output\na,"two\nlines",o\nb,t,o\nc,"bad"x,o\n')
    refused(seeded("import", "items", f, "-g", "h"), "items.csv line 5: malformed CSV")


def test_csv_nan_cost(seeded, tmp_path):
    f = write(tmp_path / "j.csv", "item_id,score,cost_usd\ndemo-0000,0,0.01\ndemo-0001,0,nan\n")
    refused(seeded("import", "judgments", f, "-g", "g", "-r", "demo-patch-quality", "-j", "lenient-mini"),
            "j.csv line 3: field 'cost_usd': must be a finite number, got nan")


# Adjudications, judgments, labels -------------------------------------------------------------

def test_adjudications_with_the_same_item_twice(seeded, tmp_path):
    f = write(tmp_path / "adj.jsonl", '{"item_id": "demo-0000", "score": 0}\n{"item_id": "demo-0001", "score": 1}\n'
                                      '{"item_id": "demo-0000", "score": 1}\n')
    refused(seeded("import", "adjudications", f, "-g", "g", "-r", "demo-patch-quality"),
            "adj.jsonl line 3: field 'item_id': item 'demo-0000' is adjudicated twice (also line 1)")


@pytest.mark.parametrize("extra,needle", [
    ({"cost_usd": -5}, "field 'cost_usd': must be 0 or more, got -5"),
    ({"latency_ms": -1}, "field 'latency_ms': must be 0 or more"),
    ({"tokens_in": -10}, "field 'tokens_in': must be 0 or more, got -10"),
    ({"evidence_steps": [-3]}, "field 'evidence_steps': step -3 is not a step: steps are numbered from 0"),
    ({"evidence_steps": [1, 999]}, "field 'evidence_steps': step 999 is not a step of item 'demo-0000', which has "
                                   "steps 0 to 7"),
])
def test_judgment_numbers_range_checked(seeded, tmp_path, extra, needle):
    good = {"item_id": "demo-0001", "score": 0, "cost_usd": 0.002, "evidence_steps": [0, 3]}
    f = write(tmp_path / "j.jsonl", json.dumps(good) + "\n"
              + json.dumps({"item_id": "demo-0000", "score": 0, **extra}) + "\n")
    refused(seeded("import", "judgments", f, "-g", "g", "-r", "demo-patch-quality", "-j", "lenient-mini"),
            f"j.jsonl line 2: {needle}")


def test_judgment_infinity_never_reaches_an_export(seeded, tmp_path):
    f = write(tmp_path / "j.jsonl", '{"item_id": "demo-0000", "score": 0, "cost_usd": Infinity}\n')
    refused(seeded("import", "judgments", f, "-g", "g", "-r", "demo-patch-quality", "-j", "lenient-mini"),
            "j.jsonl line 1: field 'cost_usd': Infinity is not a finite number")


def test_label_created_at_must_be_iso_8601(seeded, tmp_path):
    f = write(tmp_path / "labels.jsonl",
              '{"item_id": "demo-0000", "rater": "ana", "score": 0, "created_at": "2026-11-20T09:00:00Z"}\n'
              '{"item_id": "demo-0001", "rater": "ana", "score": 0, "created_at": "last tuesday"}\n')
    refused(seeded("import", "labels", "--new-raters", f, "-g", "g", "-r", "demo-patch-quality"),
            "labels.jsonl line 2: field 'created_at': must be an ISO 8601 time, got \"last tuesday\"")
    f = write(tmp_path / "ok.jsonl",
              '{"item_id": "demo-0000", "rater": "ana", "score": 0, "created_at": "2026-11-20T09:00:00+00:00"}\n'
              '{"item_id": "demo-0001", "rater": "ana", "score": 0, "created_at": "2026-11-20"}\n')
    assert seeded("import", "labels", "--new-raters", f, "-g", "g", "-r", "demo-patch-quality").exit_code == 0


def test_the_demo_files_still_import(cli):
    """The shipped demo (raters, leads, runs, timestamps, evidence steps) passes every new check."""
    r = cli("demo", "--no-ui")
    assert r.exit_code == 0 and "150 items" in r.output


# -- 9. identity -----------------------------------------------------------------------------

def test_labels_naming_a_lead_by_email_do_not_demote_the_lead(seeded, tmp_path):
    assert seeded("rater", "set", "zoe", "--role", "lead", "--email", "boss@example.com").exit_code == 0
    f = write(tmp_path / "labels.jsonl", '{"item_id": "demo-0000", "rater": "boss@example.com", "score": 0}\n')
    assert seeded("import", "labels", "--new-raters", f, "-g", "g", "-r", "demo-patch-quality").exit_code == 0
    with Store(seeded.db) as s:
        who = rater_for_email(s, "Boss@Example.com")
        assert (who["name"], who["role"]) == ("zoe", "lead")
        assert s.rater("zoe")["role"] == "lead"
    # a signed-in user whose only row is a rater *named* by their address keeps that row's role
    with Store(seeded.db) as s:
        s.ensure_raters(["carl@example.com"])
        assert rater_for_email(s, "carl@example.com")["role"] == "reviewer"
