"""The Calibration page's Confidence tab (AppTest) with a policy that names a cascade starting with the judge shown:
the cascade's sentence as `calibrate --selective --cascade` says it, and each judge's share, the share abstained on
and each judge alone in a table; without a cascade in the policy, no such section."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write
from tests.ui.conftest import choose_judge, lead_page, open_tab
from workbench.features.selective.service import calibrate_selective
from workbench.ui.components import plain

RUBRIC = "demo-patch-quality"


@pytest.fixture
def demo_db(demo_store, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", demo_store.path)
    yield demo_store


def _tab(tmp_path: Path, monkeypatch, policy: str):
    monkeypatch.setenv("WORKBENCH_PROJECT", str(tmp_path))
    write(tmp_path / "rubrics" / "policy.yaml", policy)
    at = choose_judge(lead_page("calibration"), "careful-sonnet")
    return open_tab(at, "Confidence")


def test_the_confidence_tab_shows_the_policys_cascade(demo_db, tmp_path, monkeypatch):
    at = _tab(tmp_path, monkeypatch, "selective: {target_agreement: 0.85, risk: 0.1, "
                                     "cascade: [careful-sonnet, noisy-llama]}\n")
    expected = calibrate_selective(demo_db, "demo", RUBRIC, ["careful-sonnet", "noisy-llama"], target=0.85,
                                   risk=0.1)
    assert expected.guaranteed and expected.recommended_judge == "careful-sonnet"  # no cascade beats it here
    from tests.conftest import ROOT
    assert expected.sentence in (ROOT / "docs" / "selective.md").read_text()  # the page's example is real
    assert plain(expected.sentence) in [m.value for m in at.success]
    assert "The cascade of the policy" in [h.value for h in at.subheader]
    [table] = [d.value for d in at.dataframe if "share of items" in d.value.columns]
    assert table["judge"].tolist() == ["careful-sonnet", "noisy-llama", "abstained (to people)"]
    assert table["share of items"].tolist() == pytest.approx(
        [s.share_of_items for s in expected.cascade] + [expected.abstained_share])
    assert table["threshold"].tolist()[:2] == [f"{expected.cascade[0].threshold:.3g}", "skipped"]
    assert table["alone, tested on its own"].tolist()[:2] == pytest.approx(
        [a.coverage for a in expected.single_judges])


def test_no_cascade_no_section(demo_db, tmp_path, monkeypatch):
    at = _tab(tmp_path, monkeypatch, "selective: {target_agreement: 0.85, risk: 0.1}\n")
    assert "The cascade of the policy" not in [h.value for h in at.subheader]
    assert at.success  # the judge's own guarantee is still shown
