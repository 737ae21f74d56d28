"""AppTest fixtures: the app against a private database, opened as a given rater on a given page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import DEMO_RUBRIC, ROOT, write
from workbench.features.importing import service as importing
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store

APP = ROOT / "workbench" / "ui" / "app.py"
RUBRIC = "demo-patch-quality"
PAGE_FILES = {"label": "views/label.py", "adjudicate": "views/adjudicate.py", "import": "views/import_page.py",
              "blind-review": "views/blind_review.py"}


def open_app(rater: str | None = None, page: str | None = None, **query: str) -> AppTest:
    """The app as a fresh browser session would see it (WORKBENCH_DB must be set)."""
    at = AppTest.from_file(str(APP), default_timeout=30)
    if rater:
        at.query_params["rater"] = rater
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(PAGE_FILES[page]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rendered_text(at: AppTest) -> str:
    """Everything the server sent for this run, as text: what a blind-review test searches."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def items_jsonl(n: int, *, prefix: str = "it", steps: int = 4, producer: str = "secret-model-x") -> str:
    lines = []
    for k in range(n):
        traj = [{"role": "user", "content": f"Task {k}: fix the bug."}]
        for s in range(steps - 1):
            traj.append({"role": "assistant", "content": f"Step {s} of item {k}.",
                         "tool_calls": [{"name": "bash", "arguments": {"cmd": f"pytest -k case{s}"}}]}
                        if s % 2 == 0 else {"role": "tool", "name": "bash", "content": f"{s} passed"})
        lines.append(json.dumps({"id": f"{prefix}{k:02d}", "input": f"Task {k}: fix the bug.", "output": f"Done {k}.",
                                 "trajectory": traj, "producer": {"model": producer, "family": "openai"},
                                 "metadata": {"secret": "meta-value"}}))
    return "\n".join(lines) + "\n"


@pytest.fixture
def fresh_db(tmp_path: Path, monkeypatch) -> Iterator[Path]:
    """The demo rubric and golden set 'g' of 6 unlabeled items (overlap 2); WORKBENCH_DB points at it."""
    path = tmp_path / "ui.db"
    with Store(path) as s:
        add_rubric(s, DEMO_RUBRIC)
        importing.import_items(s, write(tmp_path / "items.jsonl", items_jsonl(6)), "g")
        s.set_rater_role("lead", "lead")
        s.set_rater_role("root", "admin")
    monkeypatch.setenv("WORKBENCH_DB", str(path))
    yield path


@pytest.fixture
def demo_db(demo_store, monkeypatch) -> Iterator[Path]:
    """A private copy of the seeded demo; WORKBENCH_DB points at it."""
    monkeypatch.setenv("WORKBENCH_DB", demo_store.path)
    yield Path(demo_store.path) if demo_store.dialect == "sqlite" else demo_store.path


# -- lead pages ------------------------------------------------------------------------------------------

LEAD_PAGES = {"calibration": "views/calibration.py", "compare": "views/compare.py", "drift": "views/drift.py",
              "export": "views/export_page.py", "judges": "views/judges.py"}


def lead_page(page: str) -> AppTest:
    at = open_app("lead")
    at.switch_page(LEAD_PAGES[page]).run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    return at


def choose_judge(at: AppTest, judge: str) -> AppTest:
    [box] = [s for s in at.selectbox if s.label == "Judge"]
    box.set_value(judge).run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def open_tab(at: AppTest, tab: str) -> AppTest:
    """Open a tab of the Calibration page (only the open tab is computed and sent)."""
    at.session_state["cal-tab"] = tab
    at.run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    return at
