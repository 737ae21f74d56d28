"""The CSV form of the workbench's own files (items, labels, judgments), generated and then mutated like the jsonl
ones (tests/properties/test_workbench_files.py): a cell changed, dropped or given a value of another type, a column
written twice, a row written twice, the bytes cut or re-encoded. Each import lands whole or is refused naming the
file and line, with nothing written; a whole landing holds every row of the file."""

from __future__ import annotations

import csv
import io
import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.properties.conftest import PROFILE
from tests.properties.harness import damaged, mutated, outcome
from tests.properties.test_workbench_files import ids, item_ids, texts, workspace  # noqa: F401 - fixture
from workbench.features.importing.service import import_items, import_judgments, import_labels
from workbench.store import Store

item = st.fixed_dictionaries({"id": ids, "input": texts}, optional={
    "output": texts, "category": st.sampled_from(["web", "sql"]), "task_id": ids, "reference": texts})
label = st.fixed_dictionaries({"item_id": item_ids, "rater": st.sampled_from(["ana", "ben", "cy"]),
                               "score": st.sampled_from([0, 1])}, optional={"rationale": texts})
judgment = st.fixed_dictionaries({"item_id": item_ids, "score": st.sampled_from([0, 1])}, optional={
    "rationale": texts, "repeat": st.integers(0, 3), "cost_usd": st.floats(0, 5), "model_version": ids})


def _cell(value) -> str:
    """What a spreadsheet holds for a value: text as it is, numbers as written, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value)


@st.composite
def csv_file(draw, records):
    """A CSV file of ``records`` under one header, one record changed (or none), perhaps a column or a row written
    twice, then its bytes perhaps damaged."""
    rows = draw(st.lists(records, min_size=1, max_size=5))
    which = draw(st.integers(0, len(rows) - 1))
    rows[which], change = draw(mutated(rows[which], kinds=("swap", "drop", "range", "extra", "none")))
    header = sorted({k for r in rows for k in r})
    extra = ""
    if draw(st.booleans()) and header:
        header.append(draw(st.sampled_from(header)))  # a column named twice
        extra = ", a column twice"
    if draw(st.booleans()):
        rows.append(rows[draw(st.integers(0, len(rows) - 1))])
        extra += ", a row twice"
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([_cell(r.get(k)) for k in header])
    data, damage = draw(damaged(buf.getvalue()))
    return data, f"{change}{extra}, {damage}"


def _rows(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def _run(workspace, name: str, data: bytes, how: str, importer):
    """test_workbench_files' run, except that a file whose rows under the header are all blank may be refused as a
    whole ('the file has no records'): there is no record to name."""
    db, inputs = workspace.fresh()
    path = inputs / name
    path.write_bytes(data)
    try:
        below = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))[1:]
        blank = not any(cell.strip() for row in below for cell in row)
    except (UnicodeDecodeError, csv.Error):
        blank = False
    with Store(db) as s:
        return outcome(db, inputs, name, lambda: importer(s, path), what=f"{name} ({how}): {data[:300]!r}",
                       record_level=how.endswith(("whole", "bom")) and not blank)


@settings(settings.get_profile(PROFILE))
@given(csv_file(item))
def test_items_csv_lands_whole_or_is_refused_by_line(workspace, file):  # noqa: F811 - the fixture
    data, how = file
    res = _run(workspace, "items.csv", data, how, lambda s, p: import_items(s, p, "new-set"))
    if res is not None:
        with Store(workspace.root / f"ex{workspace.n}" / "workbench.db") as s:
            n = s.conn.execute("SELECT count(*) FROM items i JOIN golden_sets g ON g.id = i.golden_set_id "
                               "WHERE g.name = 'new-set'").fetchone()[0]
        rows = _rows(data)
        if all("id" in r for r in rows):  # without an id column each item's id is derived from its content
            assert n == res.added == len({r["id"] for r in rows}), how
        assert n == res.added >= 1, how


@settings(settings.get_profile(PROFILE))
@given(csv_file(label))
@example((b"item_id,rater,score,score\ni0,ana,0,1\n", "a column twice, whole"))
def test_labels_csv_lands_whole_or_is_refused_by_line(workspace, file):  # noqa: F811
    data, how = file
    res = _run(workspace, "labels.csv", data, how, lambda s, p: import_labels(s, p, "qa", "qa"))
    if res is not None:
        with Store(workspace.root / f"ex{workspace.n}" / "workbench.db") as s:
            n = s.conn.execute("SELECT count(*) FROM labels").fetchone()[0]
        assert n == len({(r["item_id"], r["rater"]) for r in _rows(data)}), how


@settings(settings.get_profile(PROFILE))
@given(csv_file(judgment))
def test_judgments_csv_land_whole_or_are_refused_by_line(workspace, file):  # noqa: F811
    data, how = file
    res = _run(workspace, "judgments.csv", data, how, lambda s, p: import_judgments(s, p, "qa", "qa", "j"))
    if res is not None:
        assert res.records == len(_rows(data)), how
