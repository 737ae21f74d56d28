"""Rows and domain objects: the one mapping between the store's rows and ``Item`` / ``Judgment``, and the one
JSON codec of its JSON columns.

Every JSON column is written by ``to_json`` and read by ``from_json``. An item becomes a row with ``item_row``
(its content as canonical JSON, hashed once) and comes back with ``item_from_row``; a judgment's verdict
columns come from ``verdict_columns`` (shared by calibration judgments and board grades) and go back with
``judgment_from_row``.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from workbench.core.hashing import canonical_json, sha256_hex
from workbench.core.models import Item, Judgment, Producer

def to_json(obj: Any, *, sort_keys: bool = True, default: Callable[[Any], Any] | None = None) -> str | None:
    """JSON text of a column value (None stays NULL); non-ASCII text is kept as it is. A value JSON cannot hold
    raises ``TypeError`` unless ``default`` converts it."""
    return None if obj is None else json.dumps(obj, ensure_ascii=False, sort_keys=sort_keys, default=default)


def from_json(text: str | None, empty: Any = None) -> Any:
    """The value of a JSON column; ``empty`` for NULL or an empty string.

    >>> from_json('{"a": [1, 2]}'), from_json(None, []), from_json("")
    ({'a': [1, 2]}, [], None)
    """
    return empty if text is None or text == "" else json.loads(text)


# -- items ---------------------------------------------------------------------------

def item_row(item: Item) -> dict[str, Any]:
    """The item's columns: its content as canonical JSON text and that text's hash (serialised once: the same hash
    as ``item.content_hash``)."""
    text = canonical_json(item.content())
    return {"item_id": item.id, "task_id": item.cluster, "category": item.category,
            "producer_model": item.producer.model if item.producer else None,
            "producer_family": item.producer.family if item.producer else None,
            "content": text, "content_hash": sha256_hex(text)}


def item_from_row(row: dict) -> Item:
    """The ``Item`` of a row of ``items`` as read (``item_id`` and the ``content`` text)."""
    c = from_json(row["content"])
    producer = c.get("producer")
    return Item(id=row["item_id"], input=c["input"], task_id=c.get("task_id"), category=c.get("category", "default"),
                output=c.get("output"), trajectory=c.get("trajectory"),
                producer=Producer(**producer) if producer else None, reference=c.get("reference"),
                metadata=c.get("metadata") or {})


# -- judgments -------------------------------------------------------------------------

def verdict_columns(j: Judgment) -> dict[str, Any]:
    """The verdict's columns of a judgment (or board grade) row, JSON columns encoded."""
    return {"repeat": j.repeat, "score": j.score, "unscored_reason": j.unscored_reason, "rationale": j.rationale,
            "evidence_steps": to_json(list(j.evidence_steps) or None), "trace": to_json(j.trace),
            "tokens_in": j.tokens_in, "tokens_out": j.tokens_out, "tokens_cached": j.tokens_cached,
            "cost_usd": j.cost_usd, "latency_ms": j.latency_ms, "model_version": j.model_version,
            "created_at": j.created_at}


def decode_verdict(row: dict) -> dict:
    """Decode a judgment (or grade) row's JSON columns in place: evidence steps a list, the trace a list or None."""
    row["evidence_steps"] = from_json(row["evidence_steps"], [])
    if "trace" in row:
        row["trace"] = from_json(row["trace"])
    return row


def judgment_from_row(row: dict) -> Judgment:
    """The ``Judgment`` of a decoded judgment row (``decode_verdict``) read with its ``item_id``."""
    return Judgment(item_id=row["item_id"], score=row["score"], repeat=row["repeat"],
                    unscored_reason=row["unscored_reason"], rationale=row["rationale"],
                    evidence_steps=tuple(row["evidence_steps"]), trace=row["trace"],
                    tokens_in=row["tokens_in"], tokens_out=row["tokens_out"], tokens_cached=row["tokens_cached"],
                    cost_usd=row["cost_usd"], latency_ms=row["latency_ms"], model_version=row["model_version"],
                    created_at=row["created_at"], confidence=row.get("confidence"),
                    step=row.get("step"), agent=row.get("agent"))
