"""Labels for Langfuse: a batch of ``score-create`` events for the ingestion API (``POST /api/public/ingestion``).

The shape follows Langfuse's own API definition, from which its API reference and SDKs are generated (repository
langfuse/langfuse, ``fern/apis/server/definition/ingestion.yml``: ``IngestionRequest`` is ``{"batch":
[IngestionEvent]}``; an event ``{"id", "timestamp", "type": "score-create", "body": ScoreBody}``; a ``ScoreBody``
has ``id``, ``traceId``, ``observationId``, ``name``, ``value``, ``dataType``, ``comment``, ``metadata``), and the
server's validation of it (``packages/shared/src/server/ingestion/types.ts``: ``source`` one of ``API``, ``EVAL``,
``ANNOTATION``; a ``NUMERIC`` value is a number, a ``CATEGORICAL`` one a string; exactly one of ``traceId``,
``sessionId``, ``datasetRunId``). Each label is one event:

- ``name`` the rubric, ``source`` ``ANNOTATION``, ``comment`` the rationale;
- ``dataType`` ``NUMERIC`` with the score as ``value`` (the default), or ``CATEGORICAL`` with the level's label as
  ``value`` (Langfuse returns it as the score's ``stringValue``);
- ``traceId`` the item's trace: for an item imported from a Langfuse observation, the observation's trace (and
  ``observationId`` the item); otherwise the item id (an item imported from a Langfuse trace has the trace's id);
- ``authorUserId`` the rater, as Langfuse names an annotation's author when it returns scores. The ingestion schema
  has no such field (the server drops it), so the rater, the item id, the golden set and the rubric version are also
  in ``metadata``, which the server keeps.

The score's ``id`` is derived from (golden set, item, rater, rubric): Langfuse upserts a score on its id, so sending
the file again, or a newer export after a label changed, updates the score instead of adding one. The event's id
changes with the label's content and its timestamp is the label's last change, so exporting twice writes the same
file.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from workbench.core.errors import InputError
from workbench.features.interop.writeback import HumanLabel, LabelsExport

DATA_TYPES = ("NUMERIC", "CATEGORICAL")
# a fixed namespace: the same label always gets the same score id, on every machine
NAMESPACE = uuid.UUID("6f1d7a52-3c0e-5b7e-9a51-2d6c8e0f4b13")


def score_id(label: HumanLabel) -> str:
    key = f"{label.golden_set}\x1f{label.item_id}\x1f{label.rater}\x1f{label.rubric}"  # a separator no name holds
    return str(uuid.uuid5(NAMESPACE, key))


def event(label: HumanLabel, data_type: str = "NUMERIC") -> dict:
    sid = score_id(label)
    body: dict = {"id": sid, "traceId": label.source.langfuse_trace_id or label.item_id}
    if label.source.langfuse_trace_id:
        body["observationId"] = label.item_id
    body.update({"name": label.rubric, "dataType": data_type,
                 "value": label.level if data_type == "CATEGORICAL" else label.score,
                 "source": "ANNOTATION", "authorUserId": label.rater})
    if label.rationale:
        body["comment"] = label.rationale
    body["metadata"] = {"item_id": label.item_id, "rater": label.rater, "golden_set": label.golden_set,
                        "rubric_version": label.rubric_version, "score": label.score, "level": label.level}
    content = json.dumps(body, sort_keys=True, ensure_ascii=False) + label.updated_at
    return {"id": str(uuid.uuid5(NAMESPACE, content)), "timestamp": label.updated_at, "type": "score-create",
            "body": body}


def write(labels: list[HumanLabel], dest: str, result: LabelsExport, *, data_type: str = "NUMERIC",
          **_options: object) -> None:
    data_type = data_type.upper()
    if data_type not in DATA_TYPES:
        raise InputError(f"Langfuse scores cannot be of data type '{data_type}'",
                         fix=f"use one of: {', '.join(t.lower() for t in DATA_TYPES)}")
    path = Path(dest)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"batch": [event(label, data_type) for label in labels]}, ensure_ascii=False, indent=1) + "\n"
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    result.added = len(labels)
