"""The audit log as people read it: who changed what, when (``workbench audit``).

The entries are written by the changes themselves (``store.audit.record`` in the change's transaction): a label
saved or changed, an adjudication, a rubric version, an approved export, a rater added, removed or given a role,
an import of labels or adjudications (one entry per file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from workbench.core.errors import InputError
from workbench.store import Store
from workbench.store import audit


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One change: when (UTC, ISO 8601), who, which action on what, and its particulars."""

    id: int
    at: str
    actor: str
    action: str
    target: str
    detail: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"at": self.at, "actor": self.actor, "action": self.action, "target": self.target,
                "detail": self.detail}


def parse_since(text: str) -> str:
    """A date or time (ISO 8601; no zone: UTC) as the stored timestamps' text, to compare with.

    >>> parse_since("2026-12-01")
    '2026-12-01T00:00:00.000+00:00'
    >>> parse_since("2026-12-01T10:30+02:00")
    '2026-12-01T08:30:00.000+00:00'
    """
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"--since '{text}' is not a date", fix="give one as YYYY-MM-DD or YYYY-MM-DDTHH:MM "
                         "(UTC unless it names a zone), e.g. --since 2026-12-01") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).isoformat(timespec="milliseconds")


def actor_names(store: Store, actor: str) -> list[str]:
    """Every name one person's entries may be recorded under: a rater's name, email and merged names (entries
    written before issue 45 may carry any of them), or the text itself for someone who is no rater (an OS
    account)."""
    person = audit.resolve(store, actor)
    if person is None:
        return [actor.strip()]
    return [person["name"], *([person["email"]] if person["email"] else []), *audit.aliases(store, person["name"])]


def audit_entries(store: Store, *, since: str | None = None, actor: str | None = None,
                  action: str | None = None) -> list[AuditEntry]:
    """Entries oldest first, from ``since`` on (a date or time), of one person (``actor``: their email or name)
    and/or one action (``label``: all ``label.*``)."""
    at = parse_since(since) if since is not None else None
    actors = actor_names(store, actor) if actor and actor.strip() else None
    return [AuditEntry(**e) for e in audit.entries(store, since=at, actors=actors, action=action or None)]
