"""Rows of the store the labeling pages read, typed where they are read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MaskingSetting:
    """A golden set's blind-review setting as stored: on or off, and the lead's own patterns."""

    enabled: bool
    patterns: list[str]


@dataclass(frozen=True, slots=True)
class HeldItem:
    """The item a reviewer holds or is about to hold (a reservation, or the first free candidate)."""

    pk: int
    item_id: str
    expires_at: str | None = None


@dataclass(frozen=True, slots=True)
class StoredBlindItem:
    """An item's content without producer, metadata or judgments (``LabelingQueries.blind_item``)."""

    pk: int
    item_id: str
    input: str | None
    output: str | None
    trajectory: list[dict] | None
    reference: str | None


@dataclass(frozen=True, slots=True)
class ItemFlag:
    """A reviewer's flag on an item ('broken item', 'unsure', ...) with their note."""

    item_id: str
    rater: str
    kind: str
    note: str | None
    created_at: str
