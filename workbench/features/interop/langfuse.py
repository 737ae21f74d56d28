"""Langfuse scores, as the v3 Scores API returns them (``GET /api/public/v3/scores``), with their traces or
observations.

``FILE_OR_URI`` is a scores response saved as JSON (request it with ``fields=details,subject,annotation``),
or a folder of responses saved as they came: ``scores*.json`` (one file per page), and optionally
``traces*.json`` (``GET /api/public/traces``) and ``observations*.json`` (``GET /api/public/v2/observations``)
for what the scores are attached to; or the Langfuse host (``https://cloud.langfuse.com``), pulled with the
``langfuse`` SDK with the keys in ``LANGFUSE_PUBLIC_KEY`` and ``LANGFUSE_SECRET_KEY``: every score page, then the
observations of each scored trace (Observations API v2), the trace being its root observation's input and output.

- each trace and each observation is an item: its ``input`` and ``output`` (as text), its name as the category;
  an observation's trace is kept in the metadata;
- a score from the ``ANNOTATION`` source is a label by its ``authorUserId``; from ``EVAL`` a judgment of the judge
  named by the score (``<name>``), from ``API`` one of ``<name>-api``; its ``comment`` is the rationale;
- a score on a session or an experiment, and ``TEXT`` and ``CORRECTION`` scores, are skipped and counted.

A folder grows by pulls (the pages of one request; a page with ``meta.cursor`` set is followed by the next file):
each score belongs to the first pull holding it, and a pull's verdicts are a run of each judge of their own
(``_pulled_scores`` says why), so importing the grown folder again adds only what the new pull brought.

Records are numbered within each file (``langfuse scores-2.json record 7``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from workbench.core.errors import ConfigError

from workbench.features.interop.shapes import check
from workbench.features.interop.base import (SourceError, SourceItem, SourceJudgment, SourceLabel, SourceRecord,
    Skipped, export_files, read_json, require, response_rows, text_of)

SOURCE = "langfuse"
# A saved page of the Scores API (``GetScoresResponse``): its ``data`` and ``meta``, whose ``cursor`` (a string, or
# absent on the last page) says whether the next file continues the pull.
PAGE = {"type": "object", "properties": {
    "data": {"type": "array"},
    "meta": {"type": ["object", "null"], "properties": {"cursor": {"type": ["string", "null"]}}}}}
# A score (the v3 Scores API's ``data[]`` with ``fields=details,subject,annotation``): the fields read, with the
# types Langfuse writes; what is missing is said where it is read (a score without a subject, an annotation
# without its author).
_TEXT = {"type": ["string", "null"]}
SCORE = {"type": "object", "properties": {
    "id": {"type": "string"}, "name": {"type": "string"}, "value": {"type": ["number", "string", "boolean", "null"]},
    "dataType": {"type": "string"}, "source": {"type": "string"}, "timestamp": _TEXT, "comment": _TEXT,
    "authorUserId": _TEXT,
    "subject": {"type": ["object", "null"], "properties": {"kind": {"type": "string"}, "id": {"type": "string"},
                                                          "traceId": _TEXT}}}}
NOT_RATINGS = ("TEXT", "CORRECTION")


class LangfuseAdapter:
    source = SOURCE

    def __init__(self, *, http_client: Any = None, env: Mapping[str, str] | None = None):
        self.http_client, self.env = http_client, os.environ if env is None else env

    def read(self, uri: str, **_options: Any) -> Iterator[SourceRecord]:
        if uri.startswith(("https://", "http://")):
            yield from self._pull(uri)
            return
        folder, scores = export_files(SOURCE, uri, "scores*.json", fix="save each page of GET /api/public/v3/scores "
                                                                       "as scores-1.json, scores-2.json, ...")
        for pattern, observation in (("traces*.json", False), ("observations*.json", True)):
            for f in sorted(folder.glob(pattern), key=_pull_order) if folder else ():
                for n, entity in enumerate(response_rows(SOURCE, f), start=1):
                    yield SourceItem(n, _item(entity, f.name, n, observation=observation), origin=f.name)
        yield from _pulled_scores(sorted(scores, key=_pull_order), folder is not None)

    def _pull(self, host: str) -> Iterator[SourceRecord]:
        """Scores from the v3 API with the SDK (keys from the environment), then the traces they score."""
        public, secret = self.env.get("LANGFUSE_PUBLIC_KEY"), self.env.get("LANGFUSE_SECRET_KEY")
        if not public or not secret:
            raise ConfigError("pulling scores from Langfuse needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY in the "
                              "environment (or save the API responses and import the folder)")
        require("langfuse")
        from langfuse.api.client import LangfuseAPI  # the SDK's API client: `Langfuse()` is one shared client per key
        from langfuse.api.core.api_error import ApiError

        api = LangfuseAPI(base_url=host.rstrip("/"), username=public, password=secret, x_langfuse_public_key=public,
                          httpx_client=self.http_client)
        scores, cursor = [], None
        try:
            while True:
                page = api.scores.get_many(fields="details,subject,annotation", limit=100, cursor=cursor)
                scores += [_plain(s) for s in page.data]
                cursor = page.meta.cursor
                if not cursor:
                    break
            observations: dict[str, list[dict]] = {}
            for trace_id in dict.fromkeys(_trace_id(s) for s in scores if _trace_id(s)):
                observations[trace_id] = [_plain(o) for o in api.observations.get_many(
                    trace_id=trace_id, fields="core,basic,io,model", limit=1000).data]
        except ApiError as e:  # the status and body only: the SDK's own text could carry request details
            raise SourceError(SOURCE, None, f"{host} answered {e.status_code}: {str(e.body)[:200]}",
                              fix="check the host and the keys (LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY)") from None
        scored = {(s.get("subject") or {}).get("id") for s in scores}
        n = 0
        for trace_id, observed in observations.items():
            root = next((o for o in observed if o.get("isRootObservation") or not o.get("parentObservationId")), None)
            n += 1  # a trace is its root observation's input and output (Langfuse reads traces from observations)
            trace = {"id": trace_id, **{k: (root or {}).get(k) for k in ("name", "input", "output", "environment")}}
            yield SourceItem(n, _item(trace, "observations", n, observation=False), origin="observations")
            for o in observed:
                if o.get("id") in scored:
                    n += 1
                    yield SourceItem(n, _item(o, "observations", n, observation=True), origin="observations")
        yield from _numbered(None, [_score(n, score, "scores") for n, score in enumerate(scores, start=1)])


def _pull_order(f: Path) -> tuple:
    """Files in the order they were saved: ``scores-2.json`` before ``scores-10.json``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", f.name))


def _pulled_scores(files: list[Path], in_folder: bool) -> Iterator[SourceRecord]:
    """The scores of saved pulls, each score once, in the run of the pull that first brought it.

    A pull is the pages of one request: a page whose ``meta.cursor`` is set is followed by the next file of the same
    pull, the last page has none. A pull is the import's watermark: a folder that grows by a new pull (everything
    again, or only what is new since the last) brings each score in the first pull that holds it (by score id), so
    the earlier pulls land as before (the same runs, nothing new) and a new pull becomes a new run of each judge
    holding only what it brought (``SourceJudgment.source_run``, the pull's first file). Joining the judge's earlier
    run instead would let the latest run cover every trace, but a run is named by the verdicts it holds so that the
    same verdicts land once; within a pull's run each (trace, repeat) is judged once, so calibrate counts no verdict
    twice in a run, and drift compares two pulls on the traces both judged. A label is not a run's: an annotation
    is taken as the newest pull holds it, so a reviewer's change reaches the golden set.
    """
    bodies = [(f, read_json(SOURCE, str(f)), response_rows(SOURCE, f)) for f in files]
    for f, body, _ in bodies:
        check(SOURCE, f.name, None, body, PAGE, fix="save the response body as it came")
    # a reviewer may change an annotation between pulls: a label is the newest version of its score (where it is)
    newest = {score["id"]: (f, n, score) for f, _, rows in bodies for n, score in enumerate(rows, start=1)
              if isinstance(score, dict) and isinstance(score.get("id"), str)}
    seen: set[str] = set()
    pull: str | None = None
    run: list[SourceRecord] = []
    for f, body, rows in bodies:
        pull = pull or f.stem
        for n, score in enumerate(rows, start=1):
            where, at = f, n
            if isinstance(score, dict) and isinstance(score_id := score.get("id"), str):
                if score_id in seen:
                    run.append(Skipped(n, "score of an earlier pull"))
                    continue
                seen.add(score_id)
                if str(score.get("source", "")).upper() == "ANNOTATION":
                    where, at, score = newest[score_id]
            run.append(_score(at, score, where.name if in_folder else None))
        if not ((body.get("meta") or {}).get("cursor") if isinstance(body, dict) else None):
            yield from _numbered(pull, run)  # the last page of this pull: the next file starts another
            pull, run = None, []
    yield from _numbered(pull, run)  # a pull whose last page was not saved


def _numbered(pull: str | None, records: list[SourceRecord]) -> Iterator[SourceRecord]:
    """A pull's records with its judgments numbered: a judge's scores of one subject are repeats 0, 1, ... by
    timestamp (then as saved), all in the pull's run (None: the judge's one run, for a pull from the host)."""
    order = sorted((r for r in records if isinstance(r, SourceJudgment)), key=lambda r: r.created_at or "")
    repeats: dict[tuple[str, str], int] = defaultdict(int)
    numbered = {}
    for r in order:
        numbered[id(r)] = dataclasses.replace(r, repeat=repeats[(r.judge, r.item_id)], source_run=pull)
        repeats[(r.judge, r.item_id)] += 1
    for r in records:
        yield numbered.get(id(r), r)


def _plain(model: Any) -> dict:
    """An SDK model as the API's JSON (camelCase keys)."""
    return json.loads(model.json(by_alias=True)) if hasattr(model, "json") else dict(model)


def _trace_id(score: dict) -> str | None:
    subject = score.get("subject") or {}
    return subject.get("id") if subject.get("kind") == "trace" else subject.get("traceId")


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(messages := value.get("messages"), list):  # chat inputs
        return "\n".join(text_of(m.get("content")) for m in messages if isinstance(m, dict))
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _item(entity: Any, file: str, n: int, *, observation: bool) -> dict:
    if not isinstance(entity, dict) or not isinstance(entity_id := entity.get("id"), str):
        raise SourceError(f"{SOURCE} {file}", n, "needs an 'id'", field="id", fix="save the response as it came")
    meta = {k: entity[k] for k in ("traceId", "sessionId", "type", "model", "tags", "environment")
            if entity.get(k) not in (None, [], "")}
    item = {"id": entity_id, "input": _text(entity.get("input")) or "", "output": _text(entity.get("output")) or "",
            "category": entity.get("name") or "default", "metadata": {"langfuse": meta} if meta else None}
    return {k: v for k, v in item.items() if v is not None}


def _score(n: int, score: Any, origin: str | None) -> SourceRecord:
    where = f"{SOURCE} {origin}" if origin else SOURCE
    check(SOURCE, origin, n, score, SCORE, fix="save the response as it came")
    if not isinstance(score, dict) or not isinstance(name := score.get("name"), str):
        raise SourceError(where, n, "a score needs a 'name'", field="name", fix="save the response as it came")
    source, data_type = str(score.get("source", "")).upper(), str(score.get("dataType", ""))
    subject = score.get("subject")
    if not isinstance(subject, dict):
        raise SourceError(where, n, "the score has no subject", field="subject",
                          fix="request the scores with fields=details,subject,annotation")
    kind = subject.get("kind")
    if kind not in ("trace", "observation"):
        return Skipped(n, f"score on a{'n' if str(kind)[:1] in 'aeiou' else ''} {kind}")
    if data_type.upper() in NOT_RATINGS:
        return Skipped(n, f"{data_type.upper()} score (not a rating)")
    item_id = subject.get("id")
    value = score.get("value")
    comment = score.get("comment")
    at = score.get("timestamp")
    if source == "ANNOTATION":
        author = score.get("authorUserId")
        if not author:
            raise SourceError(where, n, "an annotation has no authorUserId", field="authorUserId",
                              fix="request the scores with fields=details,subject,annotation")
        return SourceLabel(n, item_id, rater=author, name=name, value=value, rationale=comment, created_at=at,
                           origin=origin)
    if source in ("EVAL", "API"):
        judge = name if source == "EVAL" else f"{name}-api"
        return SourceJudgment(n, item_id, judge=judge, name=name, value=value, rationale=comment, created_at=at,
                              unscored_reason="the score has no value" if value is None else None, origin=origin,
                              source_id=score.get("id") if isinstance(score.get("id"), str) else None)
    raise SourceError(where, n, f"unknown score source {score.get('source')!r}", field="source",
                      fix="save the response as it came (sources are ANNOTATION, EVAL and API)")
