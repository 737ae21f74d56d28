"""`workbench monitor ingest`: jsonl and OTLP JSON (made by the real OpenTelemetry SDK), idempotent by id, the
sampled share landing in the stream's golden set with its seed recorded, unscored traces graded by the judge."""

from __future__ import annotations

import base64
import json

import pytest

from tests.monitoring import streams
from tests.monitoring.conftest import approval_indices
from tests.monitoring.helpers import cli, mock_grader
from workbench.core.errors import InputError
from workbench.features.monitoring import queries
from workbench.features.monitoring.ingest import ingest


def _traces(tmp_path, days=3, per_day=200, seed=1, **kw):
    traces, humans, drifted = streams.stream_rows(days=days, per_day=per_day, seed=seed, exclude=approval_indices(),
                                                  **kw)
    return streams.write_jsonl(tmp_path / "traces.jsonl", traces), traces, humans


def test_ingest_is_idempotent_and_samples_into_the_streams_golden_set(approved, tmp_path):
    path, traces, _ = _traces(tmp_path)
    r = cli(approved, "monitor", "ingest", "--stream", "prod", "--bundle", approved.bundle, "--from", "jsonl", path,
            "--label-rate", "0.2", "--seed", "11")
    assert r.exit_code == 0, r.output
    assert "600 traces read, 600 new" in r.output and "seed 11" in r.output
    s = approved.store
    sid = queries.stream_id(s, "prod")
    stored = queries.traces(s, sid, queries.current_epoch(s, "prod")[1])
    sampled = {t.trace_id for t in stored if t.sampled}
    # Bernoulli(0.2) draws on 600 traces: 120 expected, sd 9.8; 4 sd either side
    assert 81 <= len(sampled) <= 159
    items = {r["item_id"] for r in s.item_index(s.golden_set("prod").id)}
    assert items == sampled  # the golden set named after the stream holds exactly the sampled traces
    assert all(t.inclusion_prob == 0.2 for t in stored)
    seeds = [r[0] for r in s.conn.execute("SELECT seed FROM monitor_ingests").fetchall()]
    assert seeds == [11]

    again = cli(approved, "monitor", "ingest", "--stream", "prod", "--bundle", approved.bundle, "--from", "jsonl",
                path, "--label-rate", "0.2")
    assert again.exit_code == 0 and "0 new (600 already in stream 'prod'); 0 sampled" in again.output
    assert len(queries.traces(s, sid, queries.current_epoch(s, "prod")[1])) == 600
    assert {r["item_id"] for r in s.item_index(s.golden_set("prod").id)} == sampled


def test_the_same_seed_draws_the_same_sample(approved, tmp_path):
    path, _, _ = _traces(tmp_path, days=1)
    bundle = approved.bundle_json()
    a = ingest(approved.store, "a", bundle, approved.bundle.name, "jsonl", path, label_rate=0.3, seed=5)
    b = ingest(approved.store, "b", bundle, approved.bundle.name, "jsonl", path, label_rate=0.3, seed=5)
    ids = lambda g: {r["item_id"] for r in approved.store.item_index(approved.store.golden_set(g).id)}  # noqa: E731
    assert a.sampled == b.sampled and ids("a") == ids("b")


def test_traces_without_a_score_are_graded_by_the_bundles_judge(approved, tmp_path):
    _, traces, _ = _traces(tmp_path, days=1, per_day=20)
    for t in traces[:8]:
        del t["score"]
    path = streams.write_jsonl(tmp_path / "t.jsonl", traces)
    res = ingest(approved.store, "prod", approved.bundle_json(), approved.bundle.name, "jsonl", path,
                 label_rate=0.0, seed=1, judge_items=mock_grader(lambda item: 0))
    assert res.graded == 8 and res.unscored == 0
    stored = {t.trace_id: t.score for t in queries.traces(approved.store, 1, 1)}
    assert [stored[t["id"]] for t in traces[:8]] == [0] * 8
    assert [stored[t["id"]] for t in traces[8:]] == [t["score"] for t in traces[8:]]


def test_a_bad_trace_is_refused_with_its_line_and_nothing_is_written(approved, tmp_path):
    _, traces, _ = _traces(tmp_path, days=1, per_day=10)
    traces[6]["score"] = 3
    path = streams.write_jsonl(tmp_path / "bad.jsonl", traces)
    r = cli(approved, "monitor", "ingest", "--stream", "prod", "--bundle", approved.bundle, "--from", "jsonl", path)
    assert r.exit_code == 1
    assert "bad.jsonl line 7" in r.output and "score 3 is not on the scale of rubric 'logic' (-1, 0, 1)" in r.output
    assert approved.store.conn.execute("SELECT count(*) FROM monitor_traces").fetchone()[0] == 0
    traces[6]["score"] = 1
    traces[3]["timestamp"] = "yesterday"
    with pytest.raises(InputError, match="line 4.*timestamp.*ISO 8601"):
        ingest(approved.store, "prod", approved.bundle_json(), "b", "jsonl",
               streams.write_jsonl(tmp_path / "bad2.jsonl", traces), seed=1)


def test_an_edited_bundle_is_refused(approved, tmp_path):
    path, _, _ = _traces(tmp_path, days=1, per_day=5)
    approved.bundle.write_text(approved.bundle.read_text().replace("min_agreement_lower: 0.1",
                                                                   "min_agreement_lower: 0.0"))
    r = cli(approved, "monitor", "ingest", "--stream", "prod", "--bundle", approved.bundle, "--from", "jsonl", path)
    assert r.exit_code == 1 and "sha256" in r.output


# -- OTLP JSON, made by the real SDK ----------------------------------------------------------------------------

def _otlp_file(tmp_path, *, old_events: bool = False):
    """Three chat spans recorded by opentelemetry-sdk, encoded as the OTLP exporter does, written with hex ids as the
    OTLP JSON encoding (and a collector's file exporter) requires."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "support-bot",
                                                        "workbench.category": "chatbotarena"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("app")
    for n, verdict in enumerate([1, -1, None]):
        with tracer.start_as_current_span("chat gpt-4o") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.request.model", "gpt-4o")
            question, answer = f"What is {n} + {n}?", f"It is {2 * n}."
            if old_events:
                span.add_event("gen_ai.user.message", {"content": question})
                span.add_event("gen_ai.choice", {"index": 0, "finish_reason": "stop",
                                                 "message": json.dumps({"content": answer})})
            else:
                span.set_attribute("gen_ai.input.messages", json.dumps(
                    [{"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
                     {"role": "user", "parts": [{"type": "text", "content": question}]}]))
                span.set_attribute("gen_ai.output.messages", json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]))
            if verdict is not None:
                span.add_event("gen_ai.evaluation.result", {"gen_ai.evaluation.name": "logic",
                                                            "gen_ai.evaluation.score.value": float(verdict),
                                                            "gen_ai.evaluation.score.label": "pass" if verdict > 0
                                                            else "fail"})
    spans = exporter.get_finished_spans()
    doc = MessageToDict(encode_spans(spans))  # protobuf's JSON mapping: bytes as base64
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in sp:
                        sp[key] = base64.b64decode(sp[key]).hex()  # OTLP JSON: hex ids
    path = tmp_path / "traces.otlp.json"
    path.write_text(json.dumps(doc))
    ids = [f"{format(s.context.trace_id, '032x')}-{format(s.context.span_id, '016x')}" for s in spans]
    return path, ids


@pytest.mark.parametrize("old_events", [False, True], ids=["messages", "older-events"])
def test_otlp_json_from_the_sdk(approved, tmp_path, old_events):
    path, ids = _otlp_file(tmp_path, old_events=old_events)
    res = ingest(approved.store, "otel", approved.bundle_json(), approved.bundle.name, "otel", path, label_rate=1.0,
                 seed=2, judge_items=mock_grader(lambda item: 0))
    assert (res.records, res.added, res.sampled, res.graded) == (3, 3, 3, 1)
    stored = {t.trace_id: t for t in queries.traces(approved.store, 1, 1)}
    assert set(stored) == set(ids)  # <traceId>-<spanId>, hex
    assert [stored[i].score for i in ids] == [1, -1, 0]
    assert {t.category for t in stored.values()} == {"chatbotarena"}
    item = approved.store.item(approved.store.golden_set("otel").id, ids[1])
    assert item.input == "What is 1 + 1?" and item.output == "It is 2."
    again = ingest(approved.store, "otel", approved.bundle_json(), approved.bundle.name, "otel", path, seed=3)
    assert again.added == 0


def test_an_otlp_file_without_chat_spans_is_refused(approved, tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [
        {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "db query", "attributes": []}]}]}]}))
    with pytest.raises(InputError, match="no GenAI chat span"):
        ingest(approved.store, "otel", approved.bundle_json(), "b", "otel", path, seed=1)
