"""Imported records, typed where they are read: a final label as the adjudications file gives it, and an item's
columns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ParsedAdjudication:
    """A lead's final label, parsed once (``formats.parse_adjudication``)."""

    item_id: str
    score: int
    note: str | None
    lead: str
    created_at: str | None

    def row(self, item_pk: int, rubric_name: str, rubric_id: int) -> dict:
        """The adjudications row ``Store.upsert_adjudications`` writes."""
        return {"item_pk": item_pk, "rubric_name": rubric_name, "rubric_id": rubric_id, "score": self.score,
                "note": self.note, "lead": self.lead, "created_at": self.created_at}


@dataclass(frozen=True, slots=True)
class ItemColumns:
    """An item's columns as the store writes them (``mapping.item_row``): its content as canonical JSON and its hash."""

    item_id: str
    task_id: str
    category: str
    producer_model: str | None
    producer_family: str | None
    content: str
    content_hash: str
