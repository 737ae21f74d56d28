"""`import items --from who-and-when`: all 155 shared runs land as trajectory items with their human annotation as
a failing label carrying step and agent, counted against the files; re-importing changes nothing; a bad run file is
refused by one sentence and nothing lands."""

from __future__ import annotations

import shutil
from collections import Counter

import pytest

from tests.conftest import Cli, every_row
from tests.steps.shared import WHO_AND_WHEN, needs_data, runs
from workbench.calibration import golden_sets as gs
from workbench.core.errors import InputError
from workbench.features.steps.who_and_when import RATER, RUBRIC, import_who_and_when

pytestmark = needs_data


def test_every_shared_run_lands_with_its_annotation_and_again_changes_nothing(store):
    files = runs()
    res = import_who_and_when(store, WHO_AND_WHEN, "ww")
    assert (res.runs, res.items_added, res.labels_added) == (len(files), 155, 155) and len(files) == 155
    items = {i.metadata["file"]: i for i in gs.load_items(store, "ww")}
    assert set(items) == set(files)
    assert Counter(i.category for i in items.values()) == Counter(
        f.split("/")[0].lower() for f in files)  # 126 algorithm-generated, 29 hand-crafted
    assert len({i.task_id for i in items.values()}) == len({d["question_ID"] for d in files.values()})  # clusters
    labels = {r.item_id: r for r in gs.label_rows(store, store.golden_set("ww").id, RUBRIC)}
    assert len(labels) == 155
    for f, d in files.items():
        item = items[f]
        assert item.input == d["question"] and len(item.trajectory) == len(d["history"])
        assert [s["content"] for s in item.trajectory] == [s["content"] for s in d["history"]]
        assert item.reference == str(d["ground_truth"])
        lab = labels[item.id]
        assert (lab.score, lab.step, lab.agent, lab.rater) == (-1, int(d["mistake_step"]), d["mistake_agent"], RATER)
        assert lab.rationale == d["mistake_reason"]
    before = every_row(store)
    again = import_who_and_when(store, WHO_AND_WHEN, "ww")
    assert (again.items_added, again.labels_added) == (0, 0)
    assert every_row(store) == before


def test_the_command_line_imports_a_subfolder(tmp_path):
    cli = Cli(tmp_path / "w.db")
    done = cli("import", "items", "--from", "who-and-when", str(WHO_AND_WHEN / "Hand-Crafted"), "-g", "hc")
    assert done.exit_code == 0, done.output
    assert "29 Who&When runs read, 29 items and 29 labels" in done.output
    again = cli("import", "items", "--from", "who-and-when", str(WHO_AND_WHEN / "Hand-Crafted"), "-g", "hc")
    assert "nothing new" in again.output


@pytest.mark.parametrize("edit, said", [
    (lambda d: d.update(mistake_step="40"), "who-and-when Algorithm-Generated/2.json: field mistake_step: "
                                            "mistake_step 40 is not a step of the run, which has steps 0 to"),
    (lambda d: d.pop("mistake_agent"), "who-and-when Algorithm-Generated/2.json: "),
    (lambda d: d.update(mistake_step="step five"), "who-and-when Algorithm-Generated/2.json: field mistake_step"),
])
def test_a_bad_run_is_refused_by_one_sentence_and_nothing_lands(store, tmp_path, edit, said):
    import json
    folder = tmp_path / "ww" / "Algorithm-Generated"
    folder.mkdir(parents=True)
    for n in (1, 2, 3):
        shutil.copy(WHO_AND_WHEN / "Algorithm-Generated" / f"{n}.json", folder / f"{n}.json")
    data = json.loads((folder / "2.json").read_text())
    edit(data)
    (folder / "2.json").write_text(json.dumps(data))
    before = every_row(store)
    with pytest.raises(InputError) as e:
        import_who_and_when(store, tmp_path / "ww", "ww")
    assert str(e.value).startswith(said) and "\n" not in str(e.value), str(e.value)
    assert every_row(store) == before
