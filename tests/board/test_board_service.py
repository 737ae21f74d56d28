"""The board service end to end: runs of several models graded with the mechanical and judged bundles, resumed,
never graded twice, read per task and category, and a reviewer's verdict saved as a golden-set label."""

from __future__ import annotations

import json

import pytest

from tests.board.conftest import run_item, write_runs
from workbench.core.errors import InputError
from workbench.features.board import service as svc
from workbench.features.board.records import SavedVerdict
from workbench.store import Store

MODELS = [("claude-a", "anthropic"), ("gpt-b", "openai"), ("gemini-c", "google")]


def small_runs(*, worse_model: str = "gpt-b") -> list[dict]:
    """3 models x 8 tasks in 3 categories x 2 repeats; gpt-b fails every task of category 'sql' (t1, t4, t7)."""
    rows = []
    for t in range(8):
        category = ("web", "sql", "ui")[t % 3]
        for model, family in MODELS:
            for r in range(2):
                fails = model == worse_model and category == "sql"
                rows.append(run_item(f"{model}-t{t}-r{r}", f"t{t}", category, model, family, r, passes=not fails,
                                     judged=-1 if fails else (1 if (t + r) % 4 == 0 else 0)))
    return rows


def test_grades_once_then_reads_the_board(workspace, loopback, tmp_path):
    files = write_runs(tmp_path / "runs", small_runs())
    with Store(workspace["db"]) as s:
        first = svc.grade_board(s, "b1", files, [workspace["mech"], workspace["loop"]], env=loopback.env())
        assert first.items_added == 48
        assert [(t.tier, t.n_recorded, t.n_skipped) for t in first.tiers] == [
            ("mechanical", 48, 0), ("judged", 48, 0)]
        again = svc.grade_board(s, "b1", files, [workspace["mech"], workspace["loop"]], env=loopback.env())
        assert again.items_added == 0
        assert [(t.n_recorded, t.n_skipped, t.n_requests) for t in again.tiers] == [(0, 48, 0), (0, 48, 0)]
        # another board with the same runs and bundle: nothing is graded twice
        other = svc.grade_board(s, "b2", files[:1], [workspace["loop"]], env=loopback.env())
        assert sum(loopback.answered.values()) == 48 and set(loopback.answered.values()) == {1}
        assert other.tiers[0].n_recorded == 0 and other.tiers[0].n_skipped == 16

        report = svc.board_report(s, "b1", resamples=300).to_dict()
    assert report["schema"] == "workbench.board/1"
    assert [t["name"] for t in report["tiers"]] == ["mechanical", "judged"]
    cell = next(c for c in report["cells"] if c["task_id"] == "t1" and c["model"] == "gpt-b")
    assert cell["tiers"]["mechanical"]["mean_at_k"] == 0 and cell["tiers"]["judged"]["mean_score"] == -1
    ok = next(c for c in report["cells"] if c["task_id"] == "t0" and c["model"] == "gpt-b")
    assert ok["tiers"]["mechanical"]["pass_hat_k"] == 1
    worse = [r for r in report["category_outliers"] if r["flagged"]]
    assert {(r["category"], r["model"], r["direction"]) for r in worse} >= {("sql", "gpt-b", "below")}
    rates = {(r["tier"], r["model"], r["category"]): r for r in report["rates"]}
    assert rates[("mechanical", "gpt-b", "sql")]["raw"] == 0 and rates[("mechanical", "gpt-b", "web")]["raw"] == 1
    assert "(all)" in {r["category"] for r in report["rates"]}
    # the judge (anthropic) shares the family of claude-a: marked, and compared with the bundle's effect
    [fam] = report["family"]
    assert fam["marked_models"] == ["claude-a"] and fam["effect"]["value"] is not None
    assert {m["model"]: m["marked_by"] for m in report["models"]}["claude-a"] == ["judged"]
    row = next(r for r in fam["comparison"] if r["other"] == "gpt-b" and r["category"] == "(all)")
    assert row["adjusted"] == pytest.approx(row["difference"] - fam["effect"]["value"])
    assert row["adjusted_low"] < row["adjusted"] < row["adjusted_high"]
    top = report["where_to_look"][0]
    assert top["model"] == "gpt-b" and top["category"] == "sql"


def test_a_reviewer_verdict_lands_in_the_golden_set(workspace, loopback, tmp_path):
    files = write_runs(tmp_path / "runs", small_runs())
    with Store(workspace["db"]) as s:
        svc.grade_board(s, "b1", files, [workspace["mech"], workspace["loop"]], env=loopback.env())
        [first, second] = svc.cell_items(s, "b1", "t1", "gpt-b")
        assert first.grades["mechanical"][0].score == -1 and first.grades["judged"][0].rationale is not None
        saved = svc.save_verdict(s, "b1", first.item.id, "rita", -1, "The tests fail at step 3.")
        assert saved == SavedVerdict(golden_set="gold", rubric="board-rubric", item_id=first.item.id, changed=True)
        gs = s.golden_set("gold")
        [label] = [l for l in s.labels(gs.id, "board-rubric") if l["item_id"] == first.item.id]
        assert label["rater"] == "rita" and label["score"] == -1


def test_bad_run_files_name_the_line_and_field(workspace, tmp_path):
    rows = small_runs()[:3]
    rows[1] = {**rows[1], "repeat": "two"}
    files = write_runs(tmp_path / "bad", rows)
    with Store(workspace["db"]) as s, pytest.raises(InputError) as e:
        svc.grade_board(s, "b1", files, [workspace["mech"]])
    assert str(e.value).startswith("run-claude-a.jsonl line 2: field 'repeat': must be a whole number")
    no_task = {k: v for k, v in small_runs()[0].items() if k != "task_id"}
    path = tmp_path / "nt" / "run.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps(no_task) + "\n")
    with Store(workspace["db"]) as s, pytest.raises(InputError, match="run.jsonl line 1: field 'task_id': is missing"):
        svc.grade_board(s, "b1", [path], [workspace["mech"]])
        assert s.conn.execute("SELECT count(*) FROM board_items").fetchone()[0] == 0


def test_two_boards_compared_per_category(workspace, loopback, tmp_path):
    before = write_runs(tmp_path / "before", small_runs())
    after = write_runs(tmp_path / "after", small_runs(worse_model="nobody"))  # gpt-b now passes its sql tasks
    with Store(workspace["db"]) as s:
        svc.grade_board(s, "wk48", before, [workspace["mech"], workspace["loop"]], env=loopback.env())
        svc.grade_board(s, "wk49", after, [workspace["mech"], workspace["loop"]], env=loopback.env())
        assert sum(loopback.answered.values()) == 48 + 6  # only gpt-b's changed sql runs were graded again
        result = svc.compare_boards(s, "wk48", "wk49")
    mech = next(t for t in result.tiers if t.tier == "mechanical" and t.value == "pass")
    rows = {(r.model, r.category): r for r in mech.rows}
    assert rows[("gpt-b", "sql")].change == 1 and rows[("gpt-b", "sql")].p_value == 0.25
    assert rows[("gpt-b", "sql")].verdict == "no clear change"  # three tasks cannot show it, however they moved
    assert {r.verdict for k, r in rows.items() if k[0] != "gpt-b"} == {"no clear change"}
    assert {m.task_id for m in mech.moved} == {"t1", "t4", "t7"}


def test_unscored_and_conflicting_items_are_on_where_to_look(workspace, loopback, tmp_path):
    rows = small_runs()
    odd = next(r for r in rows if r["id"] == "gemini-c-t2-r1")
    odd.update(input=odd["input"].replace("EXPECT-SCORE 0", "EXPECT-SCORE 5"))  # the judge answers off the scale
    flip = next(r for r in rows if r["id"] == "claude-a-t4-r0")
    flip["trajectory"][2]["content"] = "1 failed, 11 passed"  # the tests fail, yet the judge gives it +1
    flip.update(input=flip["input"].replace("EXPECT-SCORE 0", "EXPECT-SCORE 1"))
    with Store(workspace["db"]) as s:
        svc.grade_board(s, "b1", write_runs(tmp_path / "runs", rows), [workspace["mech"], workspace["loop"]],
                        env=loopback.env())
        look = {(w["task_id"], w["model"]): w for w in svc.board_report(s, "b1", resamples=200).to_dict()
                ["where_to_look"]}
    assert [r["kind"] for r in look[("t2", "gemini-c")]["reasons"]] == ["unscored"], look[("t2", "gemini-c")]["reasons"]
    assert look[("t2", "gemini-c")]["item_id"] == "gemini-c-t2-r1"
    assert [r["kind"] for r in look[("t4", "claude-a")]["reasons"]][:2] == ["top_on_mechanical_fail", "tiers_disagree"]
    assert look[("t4", "claude-a")]["item_id"] == "claude-a-t4-r0"
