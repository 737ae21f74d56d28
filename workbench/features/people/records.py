"""The people of a workspace as the store holds them, typed where they are read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RaterRow:
    """A rater with their role and, in a login deployment, the email that identifies them (``Store.raters``)."""

    name: str
    role: str
    email: str | None
    created_at: str
    removed_at: str | None = None  # a removed rater keeps their row (their labels stay theirs) but no role
    n_labels: int = 0

    def to_json(self) -> dict:
        return {"name": self.name, "role": self.role, "email": self.email, "created_at": self.created_at,
                "removed_at": self.removed_at, "n_labels": self.n_labels}
