"""Ingesting production traces into a stream: idempotent by id, a Bernoulli-sampled share landing as items of the
golden set named after the stream (through the same import path as ``workbench import items``), unscored traces
graded by the bundle's judge.

Everything of one ingest lands in one transaction: the sampled items, the traces and the ingest's row with the
seed of its draws, or nothing.
"""

from __future__ import annotations

import json
import secrets
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from workbench.core.errors import InputError
from workbench.core.formats import Record, parse_item, read_records
from workbench.core.inputs import MAX_SEED
from workbench.core.models import Item, Judgment, JudgeSpec
from workbench.core.names import check_name
from workbench.features.importing.service import import_items
from workbench.features.monitoring import queries
from workbench.features.monitoring.otel import read_otlp
from workbench.features.monitoring.records import IngestResult, StreamBundle, Trace, parse_time, utc_text
from workbench.judges.rubrics import rubric_from_dict
from workbench.store import Store

SOURCES = ("jsonl", "otel")
TRACE_FIELDS = ("id", "timestamp", "category", "input", "output", "score", "metadata")
ItemJudge = Callable[[Sequence[Item], Any, JudgeSpec], list[Judgment]]


def read_jsonl_traces(path: str | Path) -> list[Trace]:
    """One trace per line: id, timestamp, category?, input, output, score?, metadata?."""
    return [_trace(rec) for rec in read_records(path)]


def _text(rec: Record, name: str, *, required: bool = True) -> str | None:
    v = rec.data.get(name)
    if v is None and not required:
        return None
    if not isinstance(v, str) or (name in ("id", "timestamp") and not v.strip()):
        raise rec.error(f"must be a non-empty string, got {json.dumps(v)[:40]}" if v is not None else "is missing",
                        field=name, fix=f"give each trace its '{name}'")
    return v


def _trace(rec: Record) -> Trace:
    unknown = sorted(set(rec.data) - set(TRACE_FIELDS))
    if unknown:
        raise rec.error(f"unknown field '{unknown[0]}'", field=unknown[0],
                        fix=f"a trace has only {', '.join(TRACE_FIELDS)}; put anything else under metadata")
    ts = _text(rec, "timestamp")
    try:
        when = utc_text(parse_time(ts))
    except ValueError:
        raise rec.error(f"must be an ISO 8601 time, got {json.dumps(ts)[:40]}", field="timestamp",
                        fix="write it like 2026-11-20T09:00:00Z") from None
    score = rec.data.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int)):
        raise rec.error(f"must be a whole number on the bundle's scale or null, got {json.dumps(score)[:40]}",
                        field="score", fix="write the judge's verdict, e.g. 1, or leave it out to have it graded")
    metadata = rec.data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise rec.error("must be an object", field="metadata", fix='write it like {"region": "eu"}')
    category = _text(rec, "category", required=False) or "default"
    return Trace(_text(rec, "id"), when, _text(rec, "input"), _text(rec, "output"), category, score, metadata,
                 rec.line)


def ingest(store: Store, stream: str, bundle: dict[str, Any], bundle_file: str, source: str, path: str | Path, *,
           label_rate: float = 0.05, seed: int | None = None, judge_items: ItemJudge | None = None,
           provider_options: dict[str, Any] | None = None) -> IngestResult:
    """Add the file's new traces to the stream (``bundle``: as ``export.bundle.load_bundle`` verified it).

    Each new trace goes to reviewers with probability ``label_rate`` (independent draws from a generator seeded
    with ``seed``, a fresh random one when None, recorded with the ingest)."""
    path = Path(path)
    stream = check_name(stream, "stream name")
    if source not in SOURCES:
        raise InputError(f"unknown source '{source}'", fix=f"use --from {' or --from '.join(SOURCES)}")
    if isinstance(label_rate, bool) or not 0 <= label_rate <= 1:
        raise InputError(f"the label rate must lie between 0 and 1, got {label_rate}", fix="write e.g. --label-rate 0.05")
    seed = secrets.randbits(63) if seed is None else seed
    if not 0 <= seed <= MAX_SEED:
        raise InputError(f"the seed must be a whole number from 0 to 2**63 - 1, got {seed}", fix="write e.g. --seed 7")
    sb = StreamBundle.from_bundle(bundle, bundle_file)
    traces = read_jsonl_traces(path) if source == "jsonl" else read_otlp(path)
    _check(traces, sb, path.name)
    sid = queries.stream_id(store, stream)
    known = queries.known_trace_ids(store, sid) if sid is not None else set()
    new = [t for t in traces if t.id not in known]
    draws = np.random.default_rng(seed).random(len(new)) < label_rate
    graded = _grade([t for t in new if t.score is None], sb, judge_items, provider_options)
    with store.transaction():
        sid = queries.ensure_stream(store, stream)
        epoch = queries.ensure_epoch(store, sid, bundle, bundle_file)
        sampled = [t for t, d in zip(new, draws) if d]
        if sampled:
            _land(store, stream, sampled)
        n_scored = sum(1 for t in new if t.score is None and graded.get(t.id, (None,))[0] is not None)
        ingest_id = queries.insert_ingest(store, stream=sid, epoch=epoch, source=source, file=path.name,
                                          label_rate=float(label_rate), seed=seed,
                                          counts=(len(traces), len(new), len(sampled), n_scored))
        rows = []
        for t, d in zip(new, draws):
            score, reason = (t.score, None) if t.score is not None else graded.get(t.id, (None, "not graded"))
            rows.append((t.id, t.timestamp, t.category, len(t.input), score, reason, int(d), float(label_rate)))
        queries.insert_traces(store, stream=sid, epoch=epoch, ingest=ingest_id, rows=rows)
    unscored = sum(1 for r in rows if r[4] is None)
    return IngestResult(stream, path.name, len(traces), len(new), len(sampled), n_scored, unscored, seed,
                        float(label_rate))


def _check(traces: list[Trace], sb: StreamBundle, file: str) -> None:
    seen: dict[str, int] = {}
    values = set(sb.values)
    for t in traces:
        # every trace as the item it becomes if sampled: a trace that could not land is refused at its own line,
        # whether or not the draw samples it (it was refused as line 1 of the staging file, when sampled)
        parse_item(Record(file, t.line, t.as_item()))
        if t.id in seen:
            raise InputError(f"trace id '{t.id}' appears twice (also line {seen[t.id]})", file=file, line=t.line,
                             field="id", fix="give each trace its own id")
        seen[t.id] = t.line
        if t.score is not None and t.score not in values:
            raise InputError(f"score {t.score} is not on the scale of rubric '{sb.rubric_name}' "
                             f"({', '.join(map(str, sb.values))})", file=file, line=t.line, field="score",
                             fix="write the approved judge's verdict on the bundle's scale")


def _grade(todo: list[Trace], sb: StreamBundle, judge_items: ItemJudge | None,
           provider_options: dict[str, Any] | None) -> dict[str, tuple[int | None, str | None]]:
    """trace id -> (score, unscored reason), from the bundle's judge."""
    if not todo:
        return {}
    rubric = rubric_from_dict(sb.rubric_content)
    spec = rubric.judge(sb.judge_id)
    items = [Item(id=t.id, input=t.input, task_id=t.id, category=t.category, output=t.output) for t in todo]
    if judge_items is None:
        from workbench.features.judging.service import judge_items as run  # the real provider

        judged = run(items, rubric, spec, provider_options=provider_options)
    else:
        judged = judge_items(items, rubric, spec)
    by_id = {j.item_id: j for j in judged}
    return {t.id: ((j.score, j.unscored_reason) if (j := by_id.get(t.id)) else (None, "no judgment came back"))
            for t in todo}


def _land(store: Store, golden_set: str, sampled: list[Trace]) -> None:
    """The sampled traces as items of the golden set, through ``import items``' own path."""
    with tempfile.TemporaryDirectory(prefix="workbench-monitor-") as tmp:
        file = Path(tmp) / "sampled.jsonl"
        with file.open("w", encoding="utf-8") as fh:
            for t in sampled:
                fh.write(json.dumps(t.as_item(), ensure_ascii=False) + "\n")
        import_items(store, file, golden_set)
