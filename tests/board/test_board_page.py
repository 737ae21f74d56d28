"""The Board page (AppTest): the grid, where to look, a cell opened in the trajectory viewer with the judge's
rationale and cited steps, and a reviewer's verdict saved as a label in the bundle's golden set."""

from __future__ import annotations

from tests.board.conftest import write_runs
from tests.board.test_board_service import small_runs
from tests.ui.conftest import open_app
from workbench.features.board import service as svc
from workbench.features.people import raters
from workbench.store import Store


def _page(workspace, loopback, tmp_path, monkeypatch):
    files = write_runs(tmp_path / "runs", small_runs())
    with Store(workspace["db"]) as s:
        svc.grade_board(s, "wk", files, [workspace["mech"], workspace["loop"]], env=loopback.env())
        raters.set_role(s, "lee", "lead")
    monkeypatch.setenv("WORKBENCH_DB", str(workspace["db"]))
    at = open_app("lee")
    at.switch_page("views/board.py").run(timeout=90)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_where_to_look_opens_the_cell_and_a_verdict_becomes_a_label(workspace, loopback, tmp_path, monkeypatch):
    at = _page(workspace, loopback, tmp_path, monkeypatch)
    text = "\n".join(m.value for m in at.markdown)
    assert "below the other models on category sql" in text
    grid = "\n".join(h.proto.body for h in at.get("html"))
    assert "<th class=marked>claude-a†</th>" in grid and "M: 0/2 pass" in grid
    at.button(key="look:t1:gpt-b").click().run(timeout=90)
    assert not at.exception, [e.value for e in at.exception]
    text = "\n".join(m.value for m in at.markdown)
    assert "**judged** (`loop`): **-1**" in text and "**mechanical** (`mech`): **-1**" in text
    assert "The last test run has failures." in text  # the mechanical grader's rationale
    assert "3 failed, 9 passed" in text  # the trajectory, in the Label page's viewer
    at.radio(key="board-score:gpt-b-t1-r0").set_value(-1)
    at.text_area(key="board-why:gpt-b-t1-r0").input("Three tests fail in step 3.")
    at.button(key="board-save:gpt-b-t1-r0").click().run(timeout=90)
    assert not at.exception, [e.value for e in at.exception]
    assert any("Saved" in s.value for s in at.success)
    with Store(workspace["db"]) as s:
        labels = [l for l in s.labels(s.golden_set("gold").id, "board-rubric") if l["item_id"] == "gpt-b-t1-r0"]
    assert [(l["rater"], l["score"], l["rationale"]) for l in labels] == [("lee", -1, "Three tests fail in step 3.")]


def test_a_verdict_without_its_required_rationale_is_refused_in_one_sentence(workspace, loopback, tmp_path,
                                                                             monkeypatch):
    at = _page(workspace, loopback, tmp_path, monkeypatch)
    at.button(key="look:t1:gpt-b").click().run(timeout=90)
    at.radio(key="board-score:gpt-b-t1-r0").set_value(-1)
    at.button(key="board-save:gpt-b-t1-r0").click().run(timeout=90)
    assert [e.value for e in at.error] == ["a rationale is required for 'fail' (-1); write why in the rationale box, "
                                          "then press the key again."]
