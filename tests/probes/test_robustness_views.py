"""What a lead sees of the probes: the Robustness tab of the Calibration page, the card's section, the bundle."""

from __future__ import annotations


import pytest

from tests.ui.conftest import choose_judge, lead_page, markdown, open_tab
from workbench.calibration.presentation import card_sections
from workbench.features.judging import service as judging
from workbench.features.probes import service as probe_service
from workbench.calibration.calibrate import Options, calibrate, resolve
from workbench.features.export.bundle import build_bundle, validate_bundle

G, R, J = "demo", "demo-patch-quality", "test-results"


@pytest.fixture
def probed_demo(demo_store, monkeypatch):
    """The demo with its deterministic grader run, then stressed by three probes (no key, no network)."""
    judging.run(demo_store, G, R, J)
    probe_service.run(demo_store, G, R, J, probes=["verbosity", "injection", "authorship-self"])
    monkeypatch.setenv("WORKBENCH_DB", demo_store.path)
    return demo_store


def test_the_robustness_tab_shows_each_probe_and_the_gate(probed_demo):
    at = open_tab(choose_judge(lead_page("calibration"), J), "Robustness")
    [table] = [df for df in at.dataframe if "probe" in df.value.columns]
    assert list(table.value["probe"]) == ["authorship-self", "verbosity", "injection"]
    assert set(table.value["moves the judge"]) == {"no"}  # the grader reads test runs, not the padding
    assert (table.value["robustness"] == 1.0).all() and (table.value["n"] == 150).all()
    assert "compared with its verdicts in run" in markdown(at)
    assert any("Gate (passed)" in c.value for c in at.caption)


def test_the_tab_says_how_to_run_the_probes_when_none_was_run(demo_store, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", demo_store.path)
    at = open_tab(choose_judge(lead_page("calibration"), "careful-sonnet"), "Robustness")
    assert any("workbench probe --golden-set demo --rubric demo-patch-quality --judge careful-sonnet --dry-run"
               in i.value for i in at.info)


def test_the_card_and_the_bundle_carry_the_probes(probed_demo):
    report = calibrate(probed_demo, G, R, J, Options(resamples=200))
    sections = dict(card_sections(report))
    [row] = [line for line in sections["Stress probes"] if line.startswith("| verbosity")]
    # no verdict moved: 0 of 150 flips, whose Wilson bound counts each task cluster once (no variance to read)
    clusters = len({i["task_id"] for i in probed_demo.item_index(probed_demo.golden_set(G).id)})
    high = 1.96 ** 2 / (clusters + 1.96 ** 2)
    assert row == (f"| verbosity | 150 | 0.000 (0.000 to 0.000) | 0.000 (0.000 to {high:.3f}) | 1.000 ({1 - high:.3f} "
                   "to 1.000) | 0.000 (0.000 to 0.000) | no |")
    bundle = build_bundle(report, resolve(probed_demo, G, R, J))
    validate_bundle(bundle)
    assert [p["probe"] for p in bundle["calibration"]["probes"]] == ["authorship-self", "verbosity", "injection"]
    assert "Stress probes" not in dict(card_sections(calibrate(probed_demo, G, R, "careful-sonnet",
                                                               Options(resamples=200))))
