"""The workbench's own files (items, labels and judgments jsonl) and ``monitor ingest`` jsonl, generated from their
formats and then mutated: each import lands whole or is refused naming the file and line, with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.properties.conftest import PROFILE
from tests.properties.harness import Workspace, damaged, dump, mutated, outcome
from workbench.calibration.rubric_versions import add_rubric
from workbench.features.importing.service import (
    import_adjudications,
    import_items,
    import_judgments,
    import_labels,
)
from workbench.store import Store

RUBRIC = """name: qa
judges:
  - id: j
    model: openai/gpt-4o
"""
ITEMS = [{"id": f"i{n}", "input": f"question {n}", "output": f"answer {n}"} for n in range(4)]

ids = st.text(st.characters(codec="utf-8", categories=("L", "N")), min_size=1, max_size=8)
texts = st.text(max_size=30)
producer = st.fixed_dictionaries({"model": st.sampled_from(["gpt-4o", "claude-sonnet-4-5"])},
                                 optional={"family": st.sampled_from(["openai", "anthropic"])})
item = st.fixed_dictionaries({"id": ids, "input": texts}, optional={
    "output": texts, "category": st.sampled_from(["web", "sql"]), "task_id": ids, "reference": texts,
    "producer": producer, "metadata": st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 9), max_size=2),
    "trajectory": st.lists(st.fixed_dictionaries({"role": st.sampled_from(["assistant", "tool"]),
                                                  "content": texts}), max_size=2)})
item_ids = st.sampled_from([i["id"] for i in ITEMS])
label = st.fixed_dictionaries({"item_id": item_ids, "rater": st.sampled_from(["ana", "ben", "cy"]),
                               "score": st.sampled_from([0, 1])},
                              optional={"rationale": texts, "created_at": st.just("2026-11-20T09:00:00Z")})
judgment = st.fixed_dictionaries({"item_id": item_ids, "score": st.sampled_from([0, 1])}, optional={
    "rationale": texts, "repeat": st.integers(0, 3), "tokens_in": st.integers(0, 10**6),
    "cost_usd": st.floats(0, 5), "latency_ms": st.integers(0, 10**5), "model_version": ids})


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("properties-own")
    (root / "qa.yaml").write_text(RUBRIC)
    (root / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in ITEMS))
    with Store(root / "template.db") as s:
        add_rubric(s, root / "qa.yaml")
        import_items(s, root / "items.jsonl", "qa")
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return Workspace(root / "template.db", root)


@st.composite
def jsonl_file(draw, records):
    """A jsonl file of ``records``, one record mutated (or none), then its bytes perhaps damaged; lines dropped or
    written twice sometimes."""
    rows = draw(st.lists(records, min_size=1, max_size=5))
    which = draw(st.integers(0, len(rows) - 1))
    rows[which], change = draw(mutated(rows[which]))
    if draw(st.booleans()):
        rows.append(rows[draw(st.integers(0, len(rows) - 1))])  # a record written twice
    text = "".join(dump(r) + "\n" for r in rows) + draw(st.sampled_from(["", "\n", "  \n"]))
    data, damage = draw(damaged(text))
    return data, f"{change}, {damage}"


def _run(workspace: Workspace, name: str, data: bytes, how: str, importer):
    db, inputs = workspace.fresh()
    path = inputs / name
    path.write_bytes(data)
    with Store(db) as s:
        return outcome(db, inputs, name, lambda: importer(s, path), what=f"{name} ({how}): {data[:300]!r}",
                       record_level=how.endswith(("whole", "bom")))


@settings(settings.get_profile(PROFILE))
@given(jsonl_file(item))
@example((b'{"id": "a", "input": "x"}\n{"id": "a", "input": "y"}\n', "same id, other content"))
def test_items_land_whole_or_are_refused_by_line(workspace, file):
    data, how = file
    res = _run(workspace, "items.jsonl", data, how, lambda s, p: import_items(s, p, "new-set"))
    if res is not None:  # whole: every distinct id of the file is in the golden set
        with Store(workspace.root / f"ex{workspace.n}" / "workbench.db") as s:
            n = s.conn.execute("SELECT count(*) FROM items i JOIN golden_sets g ON g.id = i.golden_set_id "
                               "WHERE g.name = 'new-set'").fetchone()[0]
        assert n == res.added >= 1
        rows = [json.loads(line) for line in data.decode("utf-8-sig").split("\n") if line.strip()]
        if all(isinstance(r.get("id"), str) for r in rows):
            assert n == len({r["id"] for r in rows}), how


@settings(settings.get_profile(PROFILE))
@given(jsonl_file(label))
@example((b'{"item_id": "i0", "rater": "ana", "score": 0, "rationale": "\xc2\x85\xe2\x80\xa8"}\n', "raw U+0085 and U+2028 in a string"))
def test_labels_land_whole_or_are_refused_by_line(workspace, file):
    data, how = file
    res = _run(workspace, "labels.jsonl", data, how, lambda s, p: import_labels(s, p, "qa", "qa"))
    if res is not None:  # whole: one label per item and rater of the file (the template holds none)
        rows = [json.loads(line) for line in data.decode("utf-8-sig").split("\n") if line.strip()]
        with Store(workspace.root / f"ex{workspace.n}" / "workbench.db") as s:
            n = s.conn.execute("SELECT count(*) FROM labels").fetchone()[0]
        assert n == len({(r["item_id"], r["rater"]) for r in rows}), how


@settings(settings.get_profile(PROFILE))
@given(jsonl_file(judgment))
def test_judgments_land_whole_or_are_refused_by_line(workspace, file):
    data, how = file
    res = _run(workspace, "judgments.jsonl", data, how, lambda s, p: import_judgments(s, p, "qa", "qa", "j"))
    if res is not None:  # whole: every record of the file is a judgment (the template holds none)
        with Store(workspace.root / f"ex{workspace.n}" / "workbench.db") as s:
            n = s.conn.execute("SELECT count(*) FROM judgments").fetchone()[0]
        assert n == res.added >= 1, how


adjudication = st.fixed_dictionaries({"item_id": item_ids, "score": st.sampled_from([0, 1]),
                                      "lead": st.sampled_from(["lee", "mo"])}, optional={"note": texts})


@settings(settings.get_profile(PROFILE))
@given(jsonl_file(adjudication))
def test_adjudications_land_whole_or_are_refused_by_line(workspace, file):
    data, how = file
    res = _run(workspace, "adjudications.jsonl", data, how, lambda s, p: import_adjudications(s, p, "qa", "qa"))
    if res is not None:  # whole: one final label per item of the file (the template holds none)
        rows = [json.loads(line) for line in data.decode("utf-8-sig").split("\n") if line.strip()]
        with Store(workspace.root / f"ex{workspace.n}" / "workbench.db") as s:
            n = s.conn.execute("SELECT count(*) FROM adjudications").fetchone()[0]
        assert n == len({r["item_id"] for r in rows}), how


# --------------------------------------------------------------------------- monitor ingest

trace = st.fixed_dictionaries({"id": ids, "timestamp": st.sampled_from(["2026-11-20T09:00:00Z",
                                                                        "2026-11-21T10:30:00+01:00"]),
                               "input": texts, "output": texts},
                              optional={"score": st.sampled_from([-1, 0, 1]), "category": st.sampled_from(["web", "sql"]),
                                        "metadata": st.dictionaries(st.sampled_from(["region"]), st.just("eu"))})


@pytest.fixture(scope="module")
def monitored(tmp_path_factory):
    """A workspace with an approved bundle (tests/monitoring's, on real data), its template and the bundle."""
    from tests.monitoring.conftest import build_approved
    from workbench.core.workspace import Workspace as Folder
    from workbench.features.export.bundle import load_bundle

    root = tmp_path_factory.mktemp("properties-monitor")
    db, bundle = build_approved(root)
    with Store(db) as s:
        loaded = load_bundle(s, bundle, Folder.resolve(str(root), str(db)))
    return Workspace(Path(db), root), loaded, bundle.name


@settings(settings.get_profile(PROFILE))
@given(jsonl_file(trace), st.floats(0, 1), st.integers(0, 2**63 - 1))
def test_monitor_ingest_lands_whole_or_is_refused_by_line(monitored, file, rate, seed):
    from tests.monitoring.helpers import mock_grader
    from workbench.features.monitoring.ingest import ingest

    workspace, bundle, bundle_name = monitored
    data, how = file
    res = _run(workspace, "traces.jsonl", data, how, lambda s, p: ingest(
        s, "prod", bundle, bundle_name, "jsonl", p, label_rate=rate, seed=seed, judge_items=mock_grader(lambda i: 0)))
    if res is not None:  # whole: every trace of the file is in the stream, once
        with Store(workspace.root / f"ex{workspace.n}" / "workbench.db") as s:
            n = s.conn.execute("SELECT count(*) FROM monitor_traces").fetchone()[0]
        assert n == res.added == res.records, how


def test_a_trace_that_cannot_become_an_item_is_refused_at_its_line_sampled_or_not(monitored):
    """Found: a trace with an empty input was taken when the draw left it out, and refused as 'sampled.jsonl line
    1' (the staging file, not the user's) when the draw sampled it."""
    from workbench.core.errors import InputError
    from workbench.features.monitoring.ingest import ingest

    workspace, bundle, bundle_name = monitored
    for rate in (0.0, 1.0):
        db, inputs = workspace.fresh()
        path = inputs / "traces.jsonl"
        path.write_text(json.dumps({"id": "t1", "timestamp": "2026-11-20T09:00:00Z", "input": "q", "output": "a",
                                    "score": 1}) + "\n" + json.dumps({"id": "t2", "timestamp": "2026-11-20T09:00:00Z",
                                                                      "input": "", "output": "a", "score": 0}) + "\n")
        with Store(db) as s:
            def run(s=s, path=path, rate=rate):
                return ingest(s, "prod", bundle, bundle_name, "jsonl", path, label_rate=rate, seed=1)

            assert outcome(db, inputs, "traces.jsonl", run, what="empty input") is None  # refused, nothing written
            with pytest.raises(InputError) as e:
                run()
        assert str(e.value).startswith("traces.jsonl line 2: field 'input': is empty"), str(e.value)
