"""Ingest in pages (issue 44): the same traces, sample and aggregates whatever the page size, an id twice across
pages refused with both lines, a refusal at the last page costing no judge call and writing nothing, the content
hash kept, and peak memory flat in the file's size (two whole processes, a file ten times the other)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.monitoring import streams
from tests.monitoring.conftest import approval_indices
from tests.monitoring.helpers import mock_grader
from workbench.core.errors import InputError
from workbench.features.monitoring import ingest as ingest_mod
from workbench.features.monitoring import queries
from workbench.features.monitoring.ingest import ingest

ROOT = Path(__file__).resolve().parents[2]


def _file(tmp_path, name="t.jsonl", days=2, per_day=300, seed=2):
    traces, _, _ = streams.stream_rows(days=days, per_day=per_day, seed=seed, exclude=approval_indices())
    return streams.write_jsonl(tmp_path / name, traces), traces


def _stored(store, stream):
    sid, epoch, _ = queries.current_epoch(store, stream)
    return queries.traces(store, sid, epoch), queries.days(store, sid, epoch)


def test_the_page_size_changes_nothing(approved, tmp_path, monkeypatch):
    path, _ = _file(tmp_path)
    bundle = approved.bundle_json()
    a = ingest(approved.store, "a", bundle, approved.bundle.name, "jsonl", path, label_rate=0.2, seed=3)
    monkeypatch.setattr(ingest_mod, "BATCH", 37)
    b = ingest(approved.store, "b", bundle, approved.bundle.name, "jsonl", path, label_rate=0.2, seed=3)
    assert (a.added, a.sampled) == (b.added, b.sampled) == (600, a.sampled) and a.sampled > 0
    assert _stored(approved.store, "a") == _stored(approved.store, "b")  # same draws, rows and aggregates


def test_an_id_twice_on_different_pages_is_refused_with_both_lines(approved, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_mod, "BATCH", 50)
    _, traces = _file(tmp_path, days=1, per_day=200)
    traces[170]["id"] = traces[20]["id"]
    path = streams.write_jsonl(tmp_path / "dup.jsonl", traces)
    with pytest.raises(InputError) as e:
        ingest(approved.store, "prod", approved.bundle_json(), approved.bundle.name, "jsonl", path, seed=1)
    assert "dup.jsonl line 171" in str(e.value) and "appears twice (also line 21)" in str(e.value)
    assert approved.store.conn.execute("SELECT count(*) FROM monitor_traces").fetchone()[0] == 0
    assert approved.store.conn.execute("SELECT count(*) FROM monitor_days").fetchone()[0] == 0


def test_a_refusal_on_the_last_page_writes_nothing_and_calls_no_judge(approved, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_mod, "BATCH", 40)
    _, traces = _file(tmp_path, days=1, per_day=200)
    for t in traces[:30]:
        del t["score"]  # the first page needs the judge
    traces[-1]["score"] = 7
    calls = []
    grader = mock_grader(lambda item: 1)
    path = streams.write_jsonl(tmp_path / "late.jsonl", traces)
    with pytest.raises(InputError, match="late.jsonl line 200.*score 7"):
        ingest(approved.store, "prod", approved.bundle_json(), approved.bundle.name, "jsonl", path, seed=1,
               label_rate=0.5, judge_items=lambda items, r, s: calls.append(len(items)) or grader(items, r, s))
    assert calls == []
    for table in ("monitor_traces", "monitor_days", "monitor_ingests", "monitor_streams"):
        assert approved.store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
    traces[-1]["score"] = 1
    res = ingest(approved.store, "prod", approved.bundle_json(), approved.bundle.name, "jsonl",
                 streams.write_jsonl(tmp_path / "ok.jsonl", traces), seed=1, label_rate=0.5,
                 judge_items=lambda items, r, s: calls.append(len(items)) or grader(items, r, s))
    assert calls == [30] and res.graded == 30
    rows, days = _stored(approved.store, "prod")
    assert sum(d.n_scored for d in days) == 200 and all(t.score is not None for t in rows)


def test_each_trace_keeps_a_hash_of_its_content_and_only_the_sampled_keep_the_text(approved, tmp_path):
    path, traces = _file(tmp_path, days=1, per_day=100)
    ingest(approved.store, "prod", approved.bundle_json(), approved.bundle.name, "jsonl", path, label_rate=0.1,
           seed=4)
    got = dict(approved.store.conn.execute("SELECT trace_id, content_sha256 FROM monitor_traces").fetchall())
    for t in traces:
        want = hashlib.sha256(f"{len(t['input'])}:{t['input']}{t['output']}".encode()).hexdigest()
        assert got[t["id"]] == want
    items = {r["item_id"] for r in approved.store.item_index(approved.store.golden_set("prod").id)}
    sampled = {r[0] for r in approved.store.conn.execute("SELECT trace_id FROM monitor_traces WHERE sampled = 1")}
    assert items == sampled and 0 < len(items) < 100


PEAK = """
import json, resource, sys
from tests.monitoring.conftest import Approved
from workbench.core.workspace import Workspace
from workbench.features.export.bundle import load_bundle
from workbench.features.monitoring.ingest import ingest
from workbench.store import Store
root, db, bundle, path = sys.argv[1:5]
with Store(db) as s:
    b = load_bundle(s, bundle, Workspace.resolve(root, db))
    r = ingest(s, "prod", b, "b.yaml", "jsonl", path, label_rate=0.01, seed=1)
print(json.dumps({"added": r.added, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def test_peak_memory_is_flat_in_the_files_size(approved, tmp_path):
    """5,000 and 60,000 traces of 4,000-character inputs (20 MB and 250 MB): holding the file's traces adds about
    250 MB (the ingest before issue 44 peaked 174 MB higher); streamed, the peak may grow by the 1% sample's share only
    (< 40 MB)."""
    approved.store.close()
    _, rows = _file(tmp_path, days=1, per_day=1000)
    peaks = {}
    for n in (5_000, 60_000):
        db = tmp_path / f"w{n}.db"
        db.write_bytes(approved.db.read_bytes())
        path = tmp_path / f"big{n}.jsonl"
        with path.open("w") as fh:
            for k in range(n):
                t = rows[k % len(rows)]
                fh.write(json.dumps({**t, "id": f"{t['id']}-{k}", "input": t["input"].ljust(4000, "y")}) + "\n")
        out = subprocess.run([sys.executable, "-c", PEAK, str(approved.root), str(db), str(approved.bundle),
                              str(path)], capture_output=True, text=True, cwd=ROOT, check=True)
        doc = json.loads(out.stdout.strip().splitlines()[-1])
        assert doc["added"] == n
        peaks[n] = doc["peak_kb"] / 1024
    assert peaks[60_000] - peaks[5_000] < 40, peaks


def _span(n: int, *, chat: bool, parent: int | None = None, score: int | None = None) -> dict:
    attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat" if chat else "evaluate"}}]
    if chat:
        attrs += [{"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                      [{"role": "user", "parts": [{"type": "text", "content": f"question {n}"}]}])}},
                  {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
                      [{"role": "assistant", "parts": [{"type": "text", "content": f"answer {n}"}]}])}}]
    span = {"traceId": f"{n:032x}", "spanId": f"{n:016x}", "name": "chat" if chat else "eval",
            "startTimeUnixNano": str(1_796_000_000_000_000_000 + n * 1_000_000_000), "attributes": attrs}
    if parent is not None:
        span["parentSpanId"] = f"{parent:016x}"
    if score is not None:
        span["events"] = [{"name": "gen_ai.evaluation.result", "attributes": [
            {"key": "gen_ai.evaluation.score.value", "value": {"intValue": str(score)}}]}]
    return span


def test_otlp_lines_are_read_one_at_a_time_and_a_childs_score_on_a_later_line_counts(approved, tmp_path, monkeypatch):
    """A collector's file exporter: one request a line. Chat span 1's verdict sits on an evaluation child span two
    lines later; span 2 carries its own; span 3 none (graded by the judge)."""
    lines = [[_span(1, chat=True)], [_span(2, chat=True, score=-1)], [_span(9, chat=False, parent=1, score=1),
                                                                       _span(3, chat=True)]]
    path = tmp_path / "spans.otlp.jsonl"
    path.write_text("".join(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": s}]}]}) + "\n" for s in lines))
    read = []
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: read.append(self) or real(self, *a, **k))
    res = ingest(approved.store, "otel", approved.bundle_json(), approved.bundle.name, "otel", path, label_rate=0.0,
                 seed=1, judge_items=mock_grader(lambda item: 0))
    assert path not in read  # never read whole
    assert (res.added, res.graded) == (3, 1)
    got = dict(approved.store.conn.execute("SELECT trace_id, score FROM monitor_traces").fetchall())
    assert got == {f"{1:032x}-{1:016x}": 1, f"{2:032x}-{2:016x}": -1, f"{3:032x}-{3:016x}": 0}
