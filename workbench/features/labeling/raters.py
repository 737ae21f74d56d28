"""Raters: their names, roles (``models.Role``) and, for login deployments, the emails that identify them."""

from __future__ import annotations

from workbench.core.errors import InputError
from workbench.core.models import Role
from workbench.core.names import check_name
from workbench.store import Store
from workbench.features.labeling.records import RaterRow


def check_rater(name: str) -> str:
    """The rater's name, checked by the one name rule (what labels and roles are stored under)."""
    return check_name(name or "", "rater name")


def rater_role(store: Store, name: str) -> str | None:
    row = store.rater(name.strip()) if name and name.strip() else None
    return RaterRow(**row).role if row else None


def rater_for_email(store: Store, email: str) -> dict | None:
    """The rater whose email (or, failing that, name) is this signed-in address: the roles table of a login deployment.

    The email a lead or admin was given with ``rater set --email`` wins over a
    rater merely *named* like that address: a labels import that names a rater by
    someone's email creates a reviewer row of that name, and must not demote
    them. A role changes only through ``set_role``.
    """
    email = (email or "").strip().lower()
    if not email:
        return None
    raters = [(RaterRow(**row), row) for row in store.raters()]
    by_email = [row for r, row in raters if (r.email or "").lower() == email]
    if by_email:
        return by_email[0]
    return next((row for r, row in raters if r.name.lower() == email), None)


def rater_names(store: Store) -> list[str]:
    return [RaterRow(**r).name for r in store.raters()]


def set_role(store: Store, name: str, role: str, email: str | None = None) -> dict:
    """Give a rater a role (and, for login deployments, the email that identifies them)."""
    name = check_rater(name)
    if role not in tuple(Role):
        raise InputError(f"unknown role '{role}'", fix=f"use one of {', '.join(Role)}")
    store.set_rater_role(name, role, (email or "").strip() or None)
    return store.rater(name)


def list_raters(store: Store) -> list[dict]:
    return store.raters()
