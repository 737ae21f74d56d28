"""Shared by the import-adapter tests: a rubric with import maps, and calibrating what was imported."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write
from workbench.calibration.calibrate import Options, calibrate
from workbench.calibration.rubric_versions import add_rubric

RUBRIC = """\
name: qa
title: Answers are correct
instructions: Grade the answer against the reference.
"""


def add_qa_rubric(store, tmp_path: Path, import_maps: str = "") -> None:
    add_rubric(store, write(tmp_path / "rubrics" / "qa.yaml", RUBRIC + import_maps))


def calibrated(store, golden_set: str, judge: str, tmp_path: Path) -> dict:
    """The calibration report of an imported judge as its JSON (few resamples: the report's arithmetic is what is
    checked)."""
    from workbench.core.workspace import Workspace

    return calibrate(store, golden_set, "qa", judge, Options(resamples=200), workspace=Workspace.resolve(
        str(tmp_path), None)).to_json()
