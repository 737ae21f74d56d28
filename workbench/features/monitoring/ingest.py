"""Ingesting production traces into a stream: idempotent by id, a Bernoulli-sampled share landing as items of the
golden set named after the stream (through the same import path as ``workbench import items``), unscored traces
graded by the bundle's judge.

Everything of one ingest lands in one transaction: the sampled items, the traces, their day aggregates and the
ingest's row with the seed of its draws, or nothing. A trace keeps its full text only if sampled (as an item of the
golden set, for the reviewers); otherwise the stream holds its id, time, category, input length, verdict and a
content hash (docs/storage.md).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import tempfile
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from workbench.core.errors import InputError
from workbench.core.formats import Record, parse_item, read_records
from workbench.core.inputs import MAX_SEED
from workbench.core.models import Item, Judgment, JudgeSpec
from workbench.core.names import check_name
from workbench.features.importing.service import import_items
from workbench.features.monitoring import queries
from workbench.features.monitoring.otel import iter_otlp
from workbench.features.monitoring.records import (IngestResult, StoredTrace, StreamBundle, Trace, parse_time,
                                                   utc_text)
from workbench.features.monitoring.report import aggregate_days
from workbench.judges.rubrics import rubric_from_dict
from workbench.store import Store

SOURCES = ("jsonl", "otel")
TRACE_FIELDS = ("id", "timestamp", "category", "input", "output", "score", "metadata")
BATCH = 5000  # traces a page: read, checked, looked up and landed together
ItemJudge = Callable[[Sequence[Item], Any, JudgeSpec], list[Judgment]]


def read_jsonl_traces(path: str | Path) -> list[Trace]:
    """One trace per line: id, timestamp, category?, input, output, score?, metadata?."""
    return list(iter_jsonl_traces(path))


def iter_jsonl_traces(path: str | Path) -> Iterator[Trace]:
    """:func:`read_jsonl_traces` a line at a time (memory flat in the file's size)."""
    return (_trace(rec) for rec in read_records(path))


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
    with ``seed``, a fresh random one when None, recorded with the ingest).

    The file is read a page of :data:`BATCH` traces at a time (an OTLP file in two passes, its scores first): each page is
    checked, looked up, drawn for and landed with its day aggregates; the sampled traces' texts and the unscored
    ones wait in temporary files, so memory stays flat in the file's size. Traces without a verdict are graded
    once the whole file has been read and checked (a file refused at its last line costs no judge call), then the
    sampled ones land as items. All of it is one transaction."""
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
    traces = iter_jsonl_traces(path) if source == "jsonl" else iter_otlp(path)
    # the draws are taken a page at a time: numpy's generator gives the same sequence as one call for all of them
    rng = np.random.default_rng(seed)
    rate = float(label_rate)
    n_read = n_added = n_sampled = n_old = 0
    with tempfile.TemporaryDirectory(prefix="workbench-monitor-") as tmp, store.transaction():
        sampled_file, unscored_file = Path(tmp) / "sampled.jsonl", Path(tmp) / "unscored.jsonl"
        sid = queries.ensure_stream(store, stream)
        epoch = queries.ensure_epoch(store, sid, bundle, bundle_file)
        # days before a prune's horizon are closed: their ids are gone, their aggregates final
        horizon = queries.pruned_before(store, sid)
        ingest_id = queries.insert_ingest(store, stream=sid, epoch=epoch, source=source, file=path.name,
                                          label_rate=rate, seed=seed, counts=(0, 0, 0, 0))
        with sampled_file.open("w", encoding="utf-8") as sampled_out, \
                unscored_file.open("w", encoding="utf-8") as unscored_out:
            for page in _pages(traces):
                n_read += len(page)
                _check(page, sb, path.name)
                known = queries.existing_ids(store, sid, [t.id for t in page])
                for t in page:
                    if known.get(t.id) == ingest_id:  # landed from an earlier page of this very file
                        raise _twice(t, path, source)
                new = [t for t in page if t.id not in known and not (horizon and t.timestamp < horizon)]
                n_old += sum(1 for t in page if t.id not in known and horizon and t.timestamp < horizon)
                draws = (rng.random(len(new)) < label_rate).tolist()
                rows, stored = [], []
                for t, d in zip(new, draws):
                    rows.append((t.id, t.timestamp, t.category, len(t.input), t.score,
                                 None if t.score is not None else "not graded", int(d), rate, content_hash(t)))
                    if d:
                        sampled_out.write(json.dumps(t.as_item(), ensure_ascii=False) + "\n")
                    if t.score is None:
                        unscored_out.write(json.dumps([t.id, t.timestamp, t.category, t.input, t.output, int(d)],
                                                      ensure_ascii=False) + "\n")
                    else:
                        stored.append(StoredTrace(t.id, t.timestamp, t.category, len(t.input), t.score, d, rate))
                queries.insert_traces(store, stream=sid, epoch=epoch, ingest=ingest_id, rows=rows)
                queries.add_days(store, sid, epoch, aggregate_days(stored, sb))
                n_added += len(new)
                n_sampled += sum(draws)
        n_scored, unscored = _grade_landed(store, sid, epoch, unscored_file, sb, rate, judge_items, provider_options)
        if n_sampled:
            import_items(store, sampled_file, stream)
        queries.finish_ingest(store, ingest_id, (n_read, n_added, n_sampled, n_scored))
    return IngestResult(stream, path.name, n_read, n_added, n_sampled, n_scored, unscored, seed, rate, n_old)


def content_hash(t: Trace) -> str:
    """SHA-256 of the trace's input and output (the input's length first, so no two pairs share a text)."""
    return hashlib.sha256(f"{len(t.input)}:{t.input}{t.output}".encode("utf-8", "surrogatepass")).hexdigest()


def _pages(traces: Iterator[Trace]) -> Iterator[list[Trace]]:
    while page := list(islice(traces, BATCH)):
        yield page


def _twice(t: Trace, path: Path, source: str) -> InputError:
    """The refusal of an id the file holds twice, naming the earlier line (read again: this is the error path)."""
    earlier = next((u.line for u in (iter_jsonl_traces(path) if source == "jsonl" else iter_otlp(path))
                    if u.id == t.id), 0)
    return InputError(f"trace id '{t.id}' appears twice (also line {earlier})", file=path.name, line=t.line,
                      field="id", fix="give each trace its own id")


def _grade_landed(store: Store, sid: int, epoch: int, unscored_file: Path, sb: StreamBundle, rate: float,
                  judge_items: ItemJudge | None, provider_options: dict[str, Any] | None) -> tuple[int, int]:
    """Grade the landed traces that came without a verdict, a page at a time; (graded, left unscored)."""
    graded = left = 0
    with unscored_file.open(encoding="utf-8") as fh:
        while lines := list(islice(fh, BATCH)):
            todo = [json.loads(line) for line in lines]
            got = _grade([Trace(r[0], r[1], r[3], r[4], r[2]) for r in todo], sb, judge_items, provider_options)
            scores = [(r[0], *got.get(r[0], (None, "not graded"))) for r in todo]
            queries.set_scores(store, sid, scores)
            stored = [StoredTrace(r[0], r[1], r[2], len(r[3]), score, bool(r[5]), rate)
                      for r, (_, score, _) in zip(todo, scores)]
            queries.add_days(store, sid, epoch, aggregate_days(stored, sb))
            graded += sum(1 for _, score, _ in scores if score is not None)
            left += sum(1 for _, score, _ in scores if score is None)
    return graded, left


def _check(traces: list[Trace], sb: StreamBundle, file: str) -> None:
    """Each trace of a page as the item it becomes, ids unique within the page and verdicts on the scale (ids
    of earlier pages are the store's lookup)."""
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
