"""A team's second run: real Inspect logs (mockllm, two scorers, epochs=2) of one task run twice, imported one
after the other: epochs are repeats, each scorer is chosen explicitly, the second log is a second run of the same
judge on the same items, and importing a file again changes no row and says "nothing new".

Offline, Inspect counts tokens with tiktoken's o200k_base encoding, which tiktoken would download; the log is made
in a child process that registers a byte-level stand-in under that name first (token counts are not imported).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import every_row

from tests.interop.conftest import add_qa_rubric
from workbench.core.errors import ConfigError

pytestmark = pytest.mark.slow  # the real tool runs here (seconds of set-up): in CI and `-m ""`

pytest.importorskip("inspect_ai", reason="pip install 'judge-workbench[inspect]'")

MAPS = """\
import_maps:
  model_graded_qa: {categorical: {C: 0, I: -1}}
  includes: {categorical: {C: 0, I: -1}}
"""
# The mock grader's letters by sample, one per call in turn: q5 is graded C, then I (its two epochs differ);
# the second run grades q1 I where the first graded it C (a flip between the runs).
RUN1 = {"q0": "I", "q1": "C", "q2": "C", "q3": "I", "q4": "C", "q5": "CI"}
RUN2 = {**RUN1, "q1": "I"}
JUDGE = "inspect.model_graded_qa@grader"

MAKE_LOGS = textwrap.dedent("""
    import sys
    import tiktoken.registry, tiktoken
    # offline stand-in for the encoding tiktoken would download (Inspect counts tokens with it)
    tiktoken.registry.ENCODINGS["o200k_base"] = tiktoken.Encoding(
        "o200k_base", pat_str=r"\\S+|\\s+", mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={})
    import json
    from collections import Counter
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import write_eval_log
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import includes, model_graded_qa
    from inspect_ai.solver import generate

    runs, out = json.loads(sys.argv[1]), sys.argv[2]
    for name, grades in runs.items():
        calls = Counter()

        def grader_outputs(input, tools, tool_choice, config, grades=grades, calls=calls):
            # the grading prompt quotes the task: answer by the sample's number, the letters in turn
            sample = next(s for s in grades if f"What is {s[1:]}+{s[1:]}?" in input[-1].text)
            letters = grades[sample]
            calls[sample] += 1
            return ModelOutput.from_content("mockllm/grader", f"GRADE: {letters[(calls[sample] - 1) % len(letters)]}")

        dataset = [Sample(id=s, input=f"What is {s[1:]}+{s[1:]}?", target=str(2 * int(s[1:]))) for s in grades]
        task = Task(dataset=dataset, solver=generate(), scorer=[model_graded_qa(), includes()], name="arith")
        grader = get_model("mockllm/grader", custom_outputs=grader_outputs)
        log = eval(task, model="mockllm/model", model_roles={"grader": grader}, log_dir=out, display="none",
                   epochs=2, max_samples=1)[0]
        assert log.status == "success", log.error
        write_eval_log(log, f"{out}/{name}.eval")
""")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("inspect-runs")
    subprocess.run([sys.executable, "-c", MAKE_LOGS, json.dumps({"run1": RUN1, "run2": RUN2}), str(out)],
                   check=True, timeout=300)
    return out


def _rows(store) -> dict:
    """Every row of the database: what an import changed."""
    return every_row(store)


def _epoch1(log: Path, scorer: str) -> dict[str, str]:
    """The scorer's value of each sample's first epoch, read from the log with Inspect's own API."""
    from inspect_ai.log import read_eval_log_samples

    return {str(s.id): s.scores[scorer].value for s in read_eval_log_samples(str(log)) if s.epoch == 1}


def test_two_scorers_without_a_choice_are_refused_by_name_and_nothing_is_written(logs, cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    before = _rows(store)
    r = cli("import", "--from", "inspect", logs / "run1.eval", "--golden-set", "qa", "--rubric", "qa")
    assert r.exit_code != 0
    assert ("inspect run1.eval: the log has 2 scorers ('model_graded_qa', 'includes'); import one with --scorer "
            "NAME (e.g. --scorer model_graded_qa), or each as its own judge with --judge-per-scorer.") in r.output
    assert _rows(store) == before  # no golden set, the rubric still at version 1
    assert store.golden_sets() == [] and store.rubric_row("qa")["version"] == 1

    r = cli("import", "--from", "inspect", logs / "run1.eval", "-g", "qa", "-r", "qa", "--scorer", "match")
    assert r.exit_code != 0 and "the log has no scorer 'match' (its scorers: 'model_graded_qa', 'includes')" \
        in r.output
    r = cli("import", "--from", "inspect", logs / "run1.eval", "-g", "qa", "-r", "qa", "--scorer", "includes",
            "--judge-per-scorer")
    assert r.exit_code != 0 and "give one of the two" in r.output
    assert _rows(store) == before


def test_scorer_imports_one_scorer_with_its_epochs_as_repeats(logs, cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    r = cli("import", "--from", "inspect", logs / "run1.eval", "-g", "qa", "-r", "qa", "--scorer", "model_graded_qa")
    assert r.exit_code == 0, r.output
    assert "items: 6 read, 6 added" in r.output
    assert f"judgments of {JUDGE} (imported/inspect/grader, added to the rubric): 12 read (0 unscored), 12 added" \
        in r.output
    assert "includes" not in r.output  # the other scorer is not imported
    gs, rubric = store.golden_set("qa").id, store.rubric_row("qa")
    rows = store.judgments(gs, store.judge_row(rubric["id"], JUDGE)["pk"])
    assert sorted((row["item_id"], row["repeat"]) for row in rows) == [(f"q{i}", k) for i in range(6) for k in (0, 1)]
    assert {row["run_name"] for row in rows} == {r.output.split(", run ")[1].split()[0]}  # one run

    r = cli("calibrate", "-g", "qa", "-r", "qa", "-j", JUDGE, "--json")
    assert r.exit_code == 0, r.output
    noise = json.loads(r.output)["noise"]
    assert noise["repeats"] == 2 and noise["n_items"] == 6
    assert noise["flip_rate"] == pytest.approx(1 / 6)  # q5's two epochs were graded C and I


def test_judge_per_scorer_imports_each_scorer_as_its_own_judge(logs, store, tmp_path):
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path, MAPS)
    res = import_from(store, "inspect", str(logs / "run1.eval"), "qa", "qa", judge_per_scorer=True)
    assert sorted((j.judge_id, j.read) for j in res.judges) == [("inspect.includes@grader", 12), (JUDGE, 12)]
    rubric = store.rubric_row("qa")
    gs = store.golden_set("qa").id
    # includes() looks for the target in "Default output from mockllm/model": never there
    assert {row["score"] for row in store.judgments(gs, store.judge_row(rubric["id"],
                                                                        "inspect.includes@grader")["pk"])} == {-1}


def test_a_second_log_is_a_second_run_of_the_judge_with_drift_from_the_first(logs, cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    first = cli("import", "--from", "inspect", logs / "run1.eval", "-g", "qa", "-r", "qa", "--scorer",
                "model_graded_qa")
    assert first.exit_code == 0, first.output
    second = cli("import", "--from", "inspect", logs / "run2.eval", "-g", "qa", "-r", "qa", "--scorer",
                 "model_graded_qa")
    assert second.exit_code == 0, second.output
    assert "items: 6 read, 0 added, 6 already present" in second.output  # the same items, not "different content"
    assert f"judgments of {JUDGE} (imported/inspect/grader): 12 read (0 unscored), 12 added" in second.output
    assert "nothing new" not in second.output
    run1, run2 = (out.output.split(", run ")[1].split()[0] for out in (first, second))
    assert run1 != run2

    shown = cli("golden-set", "show", "qa", "--json")
    runs = [(r["judge"], r["run"], r["judgments"]) for r in json.loads(shown.output)["runs"]]
    assert runs == [(JUDGE, run1, 12), (JUDGE, run2, 12)]

    reports = {}
    for run in (run1, run2):
        r = cli("calibrate", "-g", "qa", "-r", "qa", "-j", JUDGE, "--run", run, "--json")
        assert r.exit_code == 0, r.output
        reports[run] = json.loads(r.output)
        assert reports[run]["run"]["name"] == run and reports[run]["noise"]["repeats"] == 2
    assert reports[run1]["drift"] is None  # nothing before the first run
    drift = reports[run2]["drift"]
    a, b = _epoch1(logs / "run1.eval", "model_graded_qa"), _epoch1(logs / "run2.eval", "model_graded_qa")
    flips = sum(a[i] != b[i] for i in a)
    assert flips >= 1 and a["q1"] == "C" and b["q1"] == "I"  # the planted flip is in the logs
    assert drift["baseline_run"] == run1 and drift["run"] == run2
    assert drift["n_items"] == 6 and drift["flip_rate"] == pytest.approx(flips / 6)
    latest = json.loads(cli("calibrate", "-g", "qa", "-r", "qa", "-j", JUDGE, "--json").output)
    assert latest["run"]["name"] == run2 and latest["drift"]["baseline_run"] == run1


def test_importing_the_same_log_again_changes_no_row_and_says_nothing_new(logs, cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    for log in ("run1.eval", "run2.eval"):
        assert cli("import", "--from", "inspect", logs / log, "-g", "qa", "-r", "qa",
                   "--judge-per-scorer").exit_code == 0
    before = _rows(store)
    for log in ("run1.eval", "run2.eval"):
        again = cli("import", "--from", "inspect", logs / log, "-g", "qa", "-r", "qa", "--judge-per-scorer")
        assert again.exit_code == 0, again.output
        assert "nothing new: golden set 'qa' already holds every item, label and judgment" in again.output
        assert _rows(store) == before


def test_a_log_imported_before_its_run_was_kept_apart_is_not_imported_twice(logs, store, tmp_path, monkeypatch):
    """Imports before this change kept the eval's task_id in each item's metadata and named the run by the
    verdicts alone: that golden set takes the same log again as nothing new, and the next log as a second run."""
    from workbench.calibration.golden_sets import load_items
    from workbench.features.interop import inspect_ai
    from workbench.features.interop.base import SourceItem, SourceJudgment
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path, MAPS)
    read = inspect_ai.InspectAdapter.read

    def as_before(self, uri, **options):  # the records in the form the adapter gave them before
        for rec in read(self, uri, **options):
            if isinstance(rec, SourceItem):
                meta = {"inspect": {**rec.data["metadata"]["inspect"], **rec.run_metadata["inspect"]}}
                rec = SourceItem(rec.record, {**rec.data, "metadata": meta})
            elif isinstance(rec, SourceJudgment):
                rec = dataclasses.replace(rec, source_run=None)
            yield rec

    with monkeypatch.context() as m:
        m.setattr(inspect_ai.InspectAdapter, "read", as_before)
        import_from(store, "inspect", str(logs / "run1.eval"), "qa", "qa", scorer="model_graded_qa")
    assert "task_id" in load_items(store, "qa")[0].metadata["inspect"]
    before = _rows(store)
    again = import_from(store, "inspect", str(logs / "run1.eval"), "qa", "qa", scorer="model_graded_qa")
    assert again.nothing_new and _rows(store) == before
    second = import_from(store, "inspect", str(logs / "run2.eval"), "qa", "qa", scorer="model_graded_qa")
    assert second.items_added == 0 and second.judges[0].added == 12


def test_the_scorer_options_belong_to_inspect(store, tmp_path):
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path, MAPS)
    with pytest.raises(ConfigError, match=r"^--scorer is not an option of importing from promptfoo"):
        import_from(store, "promptfoo", str(tmp_path / "results.json"), "qa", "qa", scorer="llm-rubric")
    assert store.golden_sets() == []


def _export(source: str, work: Path, monkeypatch) -> tuple[str, str, str | None]:
    """(file or URI, the rubric's import_maps, a --map file's text) of a real export of the source: made here by the
    tool as its own test module makes it, or its documented API responses where the tool cannot run here."""
    import importlib

    m = importlib.import_module(f"tests.interop.test_{source}")  # a tool that is not installed skips the case
    if source == "mlflow":
        monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        uri = (work / "mlruns").as_uri()
        subprocess.run([sys.executable, "-c", m.LOG, uri, json.dumps(m.TRUTH)], check=True, timeout=300,
                       env={**os.environ, "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false"})
        return f"{uri}#experiment=qa", m.MAPS, None
    if source == "promptfoo":
        if not m.PROMPTFOO.exists():
            pytest.skip(f"promptfoo is not installed at {m.PROMPTFOO} (.ci/run installs it)")
        for f in ("promptfooconfig.yaml", "provider.py", "grader.py"):
            shutil.copy(m.HERE / f, work / f)
        env = {**os.environ, "HOME": str(work), "PROMPTFOO_PYTHON": sys.executable,
               "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1"}
        subprocess.run([str(m.PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "-o", "results.json", "--no-cache",
                        "--no-progress-bar"], cwd=work, env=env, timeout=300, capture_output=True)
        return str(work / "results.json"), "", m.MAP
    if source == "deepeval":
        return str(m._deepeval_run(work)[0]), "", m.MAP
    return str(m.FIXTURES), m.MAPS, None  # langfuse and phoenix: their documented API responses


@pytest.mark.parametrize("source", ["promptfoo", "deepeval", "mlflow", "langfuse", "phoenix"])
def test_every_source_imported_again_changes_no_row_and_says_nothing_new(source, cli, store, tmp_path, monkeypatch):
    work = tmp_path / "export"
    work.mkdir()
    uri, maps, map_text = _export(source, work, monkeypatch)
    add_qa_rubric(store, tmp_path, maps)
    args = ["import", "--from", source, uri, "-g", "qa", "-r", "qa"]
    if map_text is not None:
        args += ["--map", str(tmp_path / "map.yaml")]
        (tmp_path / "map.yaml").write_text(map_text, encoding="utf-8")
    first = cli(*args)
    assert first.exit_code == 0, first.output
    assert "nothing new" not in first.output
    before = _rows(store)
    again = cli(*args)
    assert again.exit_code == 0, again.output
    assert "nothing new: golden set 'qa' already holds every item, label and judgment" in again.output
    assert _rows(store) == before
