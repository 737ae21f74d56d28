"""What every adapter shares: the registry, the explicit maps, and landing all or nothing, once.

A small adapter registered here (as a third party would, with @source_adapter) feeds the landing service
records chosen to hit each rule, so the rules are checked apart from any tool's format.
"""

from __future__ import annotations

import sys

import pytest

from tests.conftest import write, every_row
from tests.interop.conftest import add_qa_rubric
from workbench.core.errors import ConfigError, InputError
from workbench.features.interop import registry
from workbench.features.interop.base import SourceItem, SourceJudgment, SourceLabel, Skipped
from workbench.features.interop.registry import source_adapter
from workbench.core.import_maps import UNSCORED, ImportMaps
from workbench.core.scale import DEFAULT_SCALE
from workbench.features.interop.service import import_from

RECORDS: list = []


class ScriptedAdapter:
    source = "scripted"

    def read(self, uri, **_options):
        yield from RECORDS


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setattr(registry, "_ADAPTERS", dict(registry._ADAPTERS))  # registered for this test only
    source_adapter("scripted", title="a scripted tool")(lambda: ScriptedAdapter)
    RECORDS.clear()
    return RECORDS


def _items(n: int) -> list:
    return [SourceItem(i, {"id": f"i{i}", "input": f"q{i}", "output": f"a{i}"}) for i in range(1, n + 1)]


MAPS = "import_maps:\n  ok: {boolean: {true: 0, false: -1}, categorical: {skip: null}}\n"


def test_everything_lands_once_and_again_adds_nothing(scripted, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    scripted += _items(3) + [
        SourceLabel(1, "i1", rater="ana", name="ok", value=True),
        SourceLabel(2, "i2", rater="ana", name="ok", value="skip"),  # mapped to unscored: a label is skipped
        SourceJudgment(1, "i1", judge="ok", name="ok", value=False, model="openai/gpt-4o"),
        SourceJudgment(2, "i2", judge="ok", name="ok", value="skip", model="openai/gpt-4o"),
        SourceJudgment(3, "i3", judge="ok", name="ok", value=None, model="openai/gpt-4o", unscored_reason="timeout"),
        Skipped(3, "a note")]
    first = import_from(store, "scripted", "x", "g", "qa")
    assert (first.items_added, first.labels_added) == (3, 1)
    assert first.skipped == {"label mapped to unscored": 1, "a note": 1}
    (j,) = first.judges
    assert (j.judge_id, j.model, j.read, j.unscored, j.added) == ("scripted.ok@gpt-4o", "imported/scripted/gpt-4o",
                                                                   3, 2, 3)
    rows = store.judgments(store.golden_set("g").id, store.judge_row(
        store.rubric_row("qa")["id"], "scripted.ok@gpt-4o")["pk"])
    assert [(r["item_id"], r["score"], r["unscored_reason"]) for r in rows] == [
        ("i1", -1, None), ("i2", None, "the import map sends 'skip' to unscored"), ("i3", None, "timeout")]
    before = every_row(store)
    again = import_from(store, "scripted", "x", "g", "qa")
    assert (again.items_added, again.labels_added, again.judges[0].added) == (0, 0, 0)
    assert again.rubric_version == first.rubric_version == 2  # the judge was declared once, by version 2
    assert every_row(store) == before  # not a row changed
    assert again.nothing_new and not first.nothing_new
    assert again.summary_lines()[-1] == ("nothing new: golden set 'g' already holds every item, label and judgment "
                                         "of this import")
    assert not any(line.startswith("nothing new") for line in first.summary_lines())


def test_graders_of_one_model_name_from_two_providers_stay_two_judges(scripted, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    scripted += _items(1) + [SourceJudgment(1, "i1", judge="ok", name="ok", value=True, model="openai/gpt-4o"),
                             SourceJudgment(1, "i1", judge="ok", name="ok", value=True, model="azure/gpt-4o")]
    res = import_from(store, "scripted", "x", "g", "qa")
    model = "imported/scripted/gpt-4o"
    assert sorted((j.judge_id, j.model) for j in res.judges) == [("scripted.ok@azure-gpt-4o", model),
                                                                  ("scripted.ok@openai-gpt-4o", model)]


def test_a_bad_record_after_the_items_leaves_nothing_behind(scripted, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    scripted += _items(2) + [SourceJudgment(7, "i9", judge="ok", name="ok", value=True)]
    with pytest.raises(InputError, match=r"^scripted record 7: field item_id: refers to item 'i9', which is neither "
                                         r"in this import nor in golden set 'g'"):
        import_from(store, "scripted", "x", "g", "qa")
    assert store.golden_sets() == [] and store.rubric_row("qa")["version"] == 1  # no items, no new judge


def test_an_item_already_there_with_other_content_names_its_record(scripted, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    scripted += _items(2)
    import_from(store, "scripted", "x", "g", "qa")
    scripted[1] = SourceItem(5, {"id": "i2", "input": "changed", "output": "a2"})
    with pytest.raises(InputError, match=r"^scripted record 5: field id: item id 'i2' is already in golden set 'g' "
                                         r"with different content"):
        import_from(store, "scripted", "x", "g", "qa")


def test_two_labels_of_one_rater_on_an_item_are_refused(scripted, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    scripted += _items(1) + [SourceLabel(1, "i1", rater="ana", name="ok", value=True),
                             SourceLabel(4, "i1", rater="ana", name="ok", value=False)]
    with pytest.raises(InputError, match=r"^scripted record 4: field rater: rater 'ana' labels item 'i1' twice "
                                         r"\(also record 1\); keep one label per item and rater\.$"):
        import_from(store, "scripted", "x", "g", "qa")


def test_a_name_without_a_map_says_how_to_write_one(scripted, store, tmp_path):
    add_qa_rubric(store, tmp_path)
    scripted += _items(1) + [SourceJudgment(1, "i1", judge="faithfulness", name="faithfulness", value=0.7,
                                            field="metrics[0].score")]
    with pytest.raises(InputError) as e:
        import_from(store, "scripted", "x", "g", "qa")
    assert str(e.value) == ("scripted record 1: field metrics[0].score: no import map for 'faithfulness' (value 0.7); "
                            "add a map for 'faithfulness' (or '*') to --map or the rubric's import_maps, e.g. "
                            "faithfulness: {cut_points: [0.5, 0.9]}.")


def test_a_scale_the_source_declares_maps_its_values_unless_a_map_is_given(scripted, store, tmp_path):
    """An exported judge's results carry its scale (promptfoo's 0..1 with the lowest level at 0, the highest at
    1): they come back without --map; the rubric's own map for the name still wins; a bad carried map is refused."""
    add_qa_rubric(store, tmp_path, "import_maps:\n  ours: {categorical: {good: 1}}\n")
    carried = {"cut_points": [0.25, 0.75], "range": [0, 1]}
    scripted += _items(3) + [
        SourceJudgment(1, "i1", judge="j", name="score", value=0.0, model="openai/m", carried_map=carried),
        SourceJudgment(2, "i2", judge="j", name="score", value=0.5, model="openai/m", carried_map=carried),
        SourceJudgment(3, "i3", judge="j", name="score", value=1.0, model="openai/m", carried_map=carried),
        SourceJudgment(4, "i1", judge="k", name="ours", value="good", model="openai/m", carried_map=carried)]
    result = import_from(store, "scripted", "x", "g", "qa")
    assert sorted((j.judge_id, j.added) for j in result.judges) == [("scripted.j@m", 3), ("scripted.k@m", 1)]
    gs, rubric_id = store.golden_set("g").id, store.rubric_row("qa")["id"]
    scores = {judge: [(r["item_id"], r["score"]) for r in store.judgments(gs, store.judge_row(rubric_id, judge)["pk"])]
              for judge in ("scripted.j@m", "scripted.k@m")}
    assert scores == {"scripted.j@m": [("i1", -1), ("i2", 0), ("i3", 1)],
                      "scripted.k@m": [("i1", 1)]}  # "ours" maps by the rubric, not by the carried 0..1 cuts
    scripted[:] = _items(1) + [SourceJudgment(1, "i1", judge="z", name="z", value=0.5, field="score",
                                              carried_map={"cut_points": [0.5]})]  # 1 cut: 2 levels, not 3
    with pytest.raises(InputError, match=r"^scripted record 1: field score: .*export the judge again"):
        import_from(store, "scripted", "x", "g2", "qa")


def test_verdicts_of_two_source_runs_land_as_two_runs_once(scripted, store, tmp_path):
    """Two experiments of one evaluator (``source_run``) are two runs of one judge, even with equal verdicts; the
    same repeat of an item in each is no conflict; importing them again adds nothing."""
    add_qa_rubric(store, tmp_path, MAPS)
    scripted += _items(2) + [SourceJudgment(n, f"i{1 + n % 2}", judge="ok", name="ok", value=True,
                                            model="openai/m", source_run=f"exp-{n // 2}") for n in range(4)]
    (j,) = import_from(store, "scripted", "x", "g", "qa").judges
    assert j.added == 4 and len(j.run.split(", ")) == 2, j
    runs = {r["run_name"] for r in store.judgments(store.golden_set("g").id,
                                                  store.judge_row(store.rubric_row("qa")["id"], j.judge_id)["pk"])}
    assert runs == set(j.run.split(", "))
    assert import_from(store, "scripted", "x", "g", "qa").judges[0].added == 0


def test_maps_cut_continuous_scores_and_keep_to_the_scale():
    maps = ImportMaps.parse({"s": {"cut_points": [0.5, 0.9], "range": [0, 1]}, "*": {"categorical": {"A": 1}}},
                            DEFAULT_SCALE, "m.yaml")
    assert [maps.score("t", 1, "f", "s", v) for v in (0, 0.49, 0.5, 0.89, 0.9, 1)] == [-1, -1, 0, 0, 1, 1]
    assert maps.score("t", 1, "f", "other", "A") == 1  # "*" covers any other name
    with pytest.raises(InputError, match=r"value 1\.5 of 's' is not covered by its map in m\.yaml \(it covers "
                                         r"numbers within 0 to 1 cut at 0\.5, 0\.9\)"):
        maps.score("t", 3, "f", "s", 1.5)
    with pytest.raises(InputError, match=r"^m\.yaml: field 's': value 'C' maps to 2, which is not on the rubric's "
                                         r"scale"):
        ImportMaps.parse({"s": {"categorical": {"C": 2}}}, DEFAULT_SCALE, "m.yaml")
    with pytest.raises(InputError, match="3 cut points make 4 levels but the scale has 3"):
        ImportMaps.parse({"s": {"cut_points": [0.2, 0.5, 0.8]}}, DEFAULT_SCALE, "m.yaml")
    assert ImportMaps.parse({"s": {"categorical": {"N": None}}}, DEFAULT_SCALE, "m").score("t", 1, "f", "s", "N") \
        is UNSCORED


def test_a_map_file_given_with_map_wins_over_the_rubric(scripted, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    scripted += _items(1) + [SourceJudgment(1, "i1", judge="ok", name="ok", value=True)]
    res = import_from(store, "scripted", "x", "g", "qa",
                      map_file=str(write(tmp_path / "m.json", '{"ok": {"boolean": {"true": 1, "false": -1}}}')))
    row = store.judgments(store.golden_set("g").id, store.judge_row(store.rubric_row("qa")["id"],
                                                                        res.judges[0].judge_id)["pk"])[0]
    assert row["score"] == 1


def test_a_missing_library_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as if inspect-ai were not installed
    with pytest.raises(ConfigError, match=r"importing from Inspect AI needs its Python package; run: pip install "
                                          r"'judge-workbench\[inspect\]'"):
        registry.get_adapter("inspect")


def test_an_imported_judge_is_calibrated_but_not_run_here(scripted, store, tmp_path):
    from workbench.features.judging import service as judging

    add_qa_rubric(store, tmp_path, MAPS)
    scripted += _items(1) + [SourceJudgment(1, "i1", judge="ok", name="ok", value=True, model="gpt-4o")]
    import_from(store, "scripted", "x", "g", "qa")
    with pytest.raises(ConfigError, match="stands for judgments made in scripted and imported; it cannot run here"):
        judging.run(store, "g", "qa", "scripted.ok@gpt-4o", new_run=True)


def test_the_command_shows_progress_and_a_summary(scripted, cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    scripted += _items(250) + [Skipped(1, "a note")]
    r = cli("import", "--from", "scripted", "x", "--golden-set", "g", "--rubric", "qa")
    assert r.exit_code == 0, r.output
    assert "Reading scripted records: 200" in r.output and "Reading scripted records: 251" in r.output
    assert "items: 250 read, 250 added" in r.output and "skipped: 1 (a note: 1)" in r.output
    r = cli("import", "--from", "nowhere", "x", "--golden-set", "g", "--rubric", "qa")
    assert r.exit_code == 1 and "there is no import adapter 'nowhere'; use one of: inspect, promptfoo" in r.output


def test_a_rubrics_import_maps_are_checked_when_the_rubric_is_added(store, tmp_path):
    with pytest.raises(InputError, match=r"^qa\.yaml line 6: field 'import_maps\.correctness': 3 cut points make 4 "
                                         r"levels but the scale has 3"):
        add_qa_rubric(store, tmp_path, "import_maps:\n  correctness:\n    cut_points: [0.2, 0.5, 0.8]\n")
