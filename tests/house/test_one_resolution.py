"""One resolution per command (issue 47): a command resolves its golden set, rubric, judges and run once, into one
``Context``, and every part of its trip (the report, the selective threshold, the bundle's section, the frozen
version, the card) reads from it. Counted on the real command line over a copy of the seeded demo: the store's
methods are wrapped at the class, so every connection the command opens is counted."""

from __future__ import annotations

import shutil
from collections import Counter

import pytest

from tests.conftest import Cli
from workbench.calibration import versions
from workbench.store import Store

RUBRIC = "demo-patch-quality"
SELECTIVE = ("--selective", "--target-agreement", "0.85", "--risk", "0.1")
CASCADE = (*SELECTIVE, "--cascade", "noisy-llama,careful-sonnet")
COUNTED = ("export_recorded", "golden_set", "label_scores", "labels", "adjudications", "judgment_columns", "judge_row", "runs",
           "label_rubrics", "item_index", "items")


@pytest.fixture
def counted(demo_db_template, tmp_path, monkeypatch):
    """(the CLI on a copy of the demo, the calls counted by name: store methods and ``resolve_ref``)."""
    path = tmp_path / "demo.db"
    shutil.copy(demo_db_template, path)
    calls: Counter[str] = Counter()

    def counting(name, method):
        def wrapped(*args, **kwargs):
            calls[name] += 1
            return method(*args, **kwargs)
        return wrapped

    for name in COUNTED:
        monkeypatch.setattr(Store, name, counting(name, getattr(Store, name)))
    monkeypatch.setattr(versions, "resolve_ref", counting("resolve_ref", versions.resolve_ref))
    return Cli(path), calls


@pytest.mark.parametrize("args, judges", [
    (("export", "-j", "careful-sonnet"), 1),
    (("export", "-j", "careful-sonnet", *SELECTIVE), 1),
    (("export", "-j", "noisy-llama", *CASCADE), 2),
    (("calibrate", "-j", "careful-sonnet", *SELECTIVE), 1),
    (("calibrate", *CASCADE), 2),
    (("report", "-j", "careful-sonnet", "--format", "md", *SELECTIVE), 1),
    (("report", "-j", "careful-sonnet", "--format", "eee"), 1),
], ids=["export", "export-selective", "export-cascade", "calibrate-selective", "calibrate-cascade", "report-card",
        "report-eee"])
def test_a_command_resolves_once_and_reads_the_consensus_once(counted, args, judges):
    cli, calls = counted
    r = cli(args[0], "-g", "demo", "-r", RUBRIC, *args[1:], "--resamples", "200")
    assert r.exit_code in (0, 3), r.output  # 3: the gate refused; the trip up to the verdict is the same
    assert calls["golden_set"] == 1  # the golden set's row, looked up once
    assert calls["resolve_ref"] == judges  # each judge's scope once (a cascade has two)
    assert calls["judge_row"] == calls["runs"] == judges
    # the consensus (labels and adjudications of the rubric) once, whatever reads it: the report, the threshold,
    # the kept items' confusion, the frozen version
    assert calls["label_scores"] + calls["labels"] == 1 and calls["adjudications"] == 1
    assert calls["judgment_columns"] == judges  # each judge's judgments once
    assert calls["item_index"] == 1 and calls["label_rubrics"] <= 1


def test_the_counts_fall_where_a_trip_reads_twice(counted):
    """The check itself: resolving outside the context is counted (a second, name-based lookup is seen)."""
    cli, calls = counted
    assert cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--resamples", "200").exit_code == 0
    before = calls["golden_set"]
    with Store(cli.db) as s:
        versions.resolve_ref(s, "demo", RUBRIC, "careful-sonnet")
    assert calls["golden_set"] == before + 1 and calls["resolve_ref"] == 2


def test_grade_verifies_its_bundle_once_and_resolves_no_name(counted, tmp_path):
    """grade's one value is the bundle: read, verified and checked against the exports once; it names no golden
    set, rubric or judge to look up (the bundle carries them)."""
    from tests.selective.test_export_and_grade import _judgments

    cli, calls = counted
    assert cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", *SELECTIVE,
               "--resamples", "200").exit_code == 0
    calls.clear()
    items, judgments, _ = _judgments(tmp_path, lambda n: 0.0 if n % 4 == 0 else 1.0)
    r = cli("grade", "--bundle", cli.project / "rubrics/approved/demo-patch-quality@v1--careful-sonnet.yaml",
            "--items", items, "--judgments", judgments, "--resamples", "200")
    assert r.exit_code == 0, r.output
    assert calls["export_recorded"] == 1
    assert calls["golden_set"] == calls["resolve_ref"] == calls["label_scores"] == calls["judgment_columns"] == 0
