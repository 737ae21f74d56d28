"""Names are resolved once and each kind of data is read once per use case (issue 13: one calibrate looked up the
golden set 7 times and read the labels 3 times; export read the judgments 3 times; compare with cached reports
looked up the golden set 23 times).

The store is wrapped in a proxy that counts the calls of its methods; the services run unchanged on it.
"""

from __future__ import annotations

import inspect
from collections import Counter

import pytest

from workbench.calibration import calibrate as calibration
from workbench.features.export import bundle as export
from workbench.features.demo.seed import DEMO_GOLDEN_SET

RUBRIC = "demo-patch-quality"
JUDGES_WITH_JUDGMENTS = ("careful-sonnet", "lenient-mini", "gpt4o-self", "noisy-llama")
# what counts as one read of each kind of data: every store method that returns it
LABEL_READS = ("labels", "label_scores")
JUDGMENT_READS = ("judgments", "judgment_columns")


class CountingStore:
    """The store with every method call counted by name."""

    def __init__(self, store):
        self._store = store
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name):
        value = getattr(self._store, name)
        if not inspect.ismethod(value):  # attributes such as the connection pass through
            return value

        def counted(*args, **kwargs):
            self.calls[name] += 1
            return value(*args, **kwargs)
        return counted

    def reads(self, names: tuple[str, ...]) -> int:
        return sum(self.calls[n] for n in names)


@pytest.fixture
def counting(demo_store) -> CountingStore:
    return CountingStore(demo_store)


def test_calibrate_looks_up_the_golden_set_once_and_reads_each_kind_of_data_once(counting, tmp_path):
    report = calibration.calibrate(counting, DEMO_GOLDEN_SET, RUBRIC, "noisy-llama", use_cache=False)
    assert report.drift is not None and report.noise is not None  # every section computed, from one read
    assert counting.calls["golden_set"] == 1
    assert counting.reads(LABEL_READS) == 1
    assert counting.calls["adjudications"] == 1
    assert counting.reads(JUDGMENT_READS) == 1
    assert counting.calls["item_index"] == 1


def test_a_cached_calibrate_reads_no_data(counting):
    calibration.calibrate(counting._store, DEMO_GOLDEN_SET, RUBRIC, "careful-sonnet")
    calibration.calibrate(counting, DEMO_GOLDEN_SET, RUBRIC, "careful-sonnet")
    assert counting.calls["golden_set"] == 1
    assert counting.calls["report"] == 1
    assert counting.reads(LABEL_READS) == counting.reads(JUDGMENT_READS) == counting.calls["item_index"] == 0


@pytest.mark.parametrize("cached", [False, True], ids=["computed", "cached"])
def test_export_reads_the_judgments_at_most_once(counting, tmp_path, cached):
    if cached:
        calibration.calibrate(counting._store, DEMO_GOLDEN_SET, RUBRIC, "careful-sonnet")
    result = export.export_bundle(counting, DEMO_GOLDEN_SET, RUBRIC, "careful-sonnet", out_dir=tmp_path)
    assert result.path.exists()
    assert counting.calls["golden_set"] == 1
    assert counting.reads(JUDGMENT_READS) == (0 if cached else 1)
    # the golden-set version is frozen from the snapshot the report was computed with: no second label read
    assert counting.reads(LABEL_READS) == (0 if cached else 1)
    assert counting.calls["insert_golden_set_version"] == 1
    # the export is recorded against the ids the report carries: nothing is looked up again by name or hash
    assert counting.calls["golden_set_version_by_hash"] <= 1 and counting.calls["judge_row"] == 1


def test_export_of_a_report_cached_by_another_process_reads_the_labels_once_to_freeze(counting, tmp_path,
                                                                                     monkeypatch):
    calibration.calibrate(counting._store, DEMO_GOLDEN_SET, RUBRIC, "careful-sonnet")
    monkeypatch.setattr(calibration, "_SNAPSHOTS", {})  # a new process: the snapshot is not in memory
    result = export.export_bundle(counting, DEMO_GOLDEN_SET, RUBRIC, "careful-sonnet", out_dir=tmp_path)
    assert counting.reads(JUDGMENT_READS) == 0
    assert counting.reads(LABEL_READS) == 1  # the consensus the frozen version records
    version = counting._store.golden_set_version_by_hash(1, result.bundle["golden_set"]["version_hash"])
    assert version["version"] == result.bundle["golden_set"]["version"] == 1


def test_calibrate_writes_no_golden_set_version(counting):
    report = calibration.calibrate(counting, DEMO_GOLDEN_SET, RUBRIC, "careful-sonnet", use_cache=False)
    assert counting.calls["insert_golden_set_version"] == 0
    assert counting._store.golden_set_versions(report.ids.golden_set_id) == []
    # the version it names is the one freezing this state would record
    assert (report.golden_set.version, report.ids.golden_set_version_id) == (1, None)


def test_compare_with_cached_reports_looks_up_the_golden_set_once(counting):
    calibration.compare(counting._store, DEMO_GOLDEN_SET, RUBRIC)  # computes and caches every report
    result = calibration.compare(counting, DEMO_GOLDEN_SET, RUBRIC)
    assert [r.judge.id for r in result.judges] == list(JUDGES_WITH_JUDGMENTS)
    assert counting.calls["golden_set"] == 1
    assert counting.reads(LABEL_READS) == 1  # the consensus for the paired differences
    assert counting.reads(JUDGMENT_READS) == len(JUDGES_WITH_JUDGMENTS)  # one read a judge, for the differences
    assert counting.calls["item_index"] == 1


def test_after_the_demo_precomputes_the_lead_pages_read_no_data(counting):
    """`workbench demo` computes what the lead pages open on, so their first load reads reports back."""
    from workbench.features.demo.seed import precompute_reports
    from workbench.calibration.insights import drift_timeline

    precompute_reports(counting._store)
    for judge in JUDGES_WITH_JUDGMENTS:
        calibration.calibrate(counting, DEMO_GOLDEN_SET, RUBRIC, judge)
        rows = drift_timeline(counting, DEMO_GOLDEN_SET, RUBRIC, judge)
        assert len(rows) == (2 if judge == "noisy-llama" else 1)
    assert counting.reads(LABEL_READS) == counting.reads(JUDGMENT_READS) == counting.calls["item_index"] == 0
    assert counting.calls["report"] == 2 * len(JUDGES_WITH_JUDGMENTS)
