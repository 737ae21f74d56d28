"""Raters: their names, roles (``models.Role``) and, for login deployments, the emails that identify them.

An admin adds a person by email (``add_rater``) and removes them (``remove_rater``): a removed rater keeps their
row and their labels, attributed to them, but no role: the role lookups the UI asks (``rater_role``,
``rater_for_email``, ``rater_names``) no longer know them, and their saves are refused. Adding the same email
again brings them back. Each change is written to the audit log in its own transaction.
"""

from __future__ import annotations

import re

from workbench.core.errors import InputError, NotFound
from workbench.core.models import Role
from workbench.core.names import check_name, name_problem
from workbench.store import Store
from workbench.store import audit
from workbench.features.labeling.records import RaterRow

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")


def check_rater(name: str) -> str:
    """The rater's name, checked by the one name rule (what labels and roles are stored under)."""
    return check_name(name or "", "rater name")


def check_email(email: str) -> str:
    """The address, lower-cased (st.login's addresses are matched without case), or one sentence saying what is
    wrong.

    >>> check_email(" Maria@Example.com ")
    'maria@example.com'
    """
    text = (email or "").strip()
    if not _EMAIL.fullmatch(text):
        raise InputError(f"'{text}' is not an email address", fix="give the address the person signs in with, "
                         "e.g. maria@example.com")
    return text.lower()


def _row(store: Store, name: str) -> RaterRow | None:
    row = audit.rater(store, name)
    return RaterRow(**row) if row else None


def _all(store: Store, *, include_removed: bool = False, counts: bool = False) -> list[RaterRow]:
    return [RaterRow(**r) for r in audit.raters(store, include_removed=include_removed, counts=counts)]


def rater_role(store: Store, name: str) -> str | None:
    """The role of an active rater; None for an unknown or removed one."""
    held = audit.standing(store, name.strip()) if name and name.strip() else None
    return held[0] if held and held[1] is None else None


def rater_for_email(store: Store, email: str) -> dict | None:
    """The active rater whose email (or, failing that, name) is this signed-in address: the roles table of a login
    deployment (a removed rater is nobody).

    The email a lead or admin was given with ``rater add`` or ``rater set --email`` wins over a rater merely
    *named* like that address: a labels import that names a rater by someone's email creates a reviewer row of
    that name, and must not demote them. A role changes only through ``add_rater``/``set_role``.
    """
    email = (email or "").strip().lower()
    if not email:
        return None
    raters = _all(store)
    found = (next((r for r in raters if (r.email or "").lower() == email), None)
             or next((r for r in raters if r.name.lower() == email), None))
    return None if found is None else {"name": found.name, "role": found.role, "email": found.email}


def rater_names(store: Store) -> list[str]:
    """The active raters' names (the local picker's list)."""
    return [r.name for r in _all(store)]


def local_role(store: Store, name: str) -> str | None:
    """The role of a name picked on a workbench without sign-in: an active rater's role, a reviewer for a new name,
    None for a removed rater (who has no access until an admin adds them again)."""
    held = audit.standing(store, name.strip()) if name and name.strip() else None
    if held is None:
        return Role.REVIEWER.value
    return held[0] if held[1] is None else None


def refuse_removed(store: Store, name: str) -> None:
    """A removed rater may not label or adjudicate: one sentence saying who can bring them back."""
    held = audit.standing(store, name)
    if held is not None and held[1] is not None:
        raise InputError(f"rater '{name}' was removed on {held[1][:10]} and has no access",
                         fix="ask an admin to add them again ('workbench rater add EMAIL --role reviewer')")


def _check_role(role: str) -> str:
    if role not in tuple(Role):
        raise InputError(f"unknown role '{role}'", fix=f"use one of {', '.join(Role)}")
    return role


def _put(store: Store, name: str, role: str, email: str | None, actor: str | None, *, how: str) -> RaterRow:
    """Write the rater's role (bringing a removed one back) and its audit entry in one transaction."""
    with store.transaction():
        before = _row(store, name)
        audit.put_rater(store, name, role, email)
        after = _row(store, name)
        if before is None or before.removed_at is not None:
            action, detail = "rater.added", {"role": role, "email": after.email, "returned": before is not None}
        elif before.role != role:
            action, detail = "rater.role_changed", {"old_role": before.role, "role": role, "email": after.email}
        elif before.email != after.email:
            action, detail = "rater.email_changed", {"old_email": before.email, "email": after.email}
        else:
            return after  # nothing changed: nothing to record
        audit.record(store, actor=actor, action=action, target=name, detail={**detail, "via": how})
        return after


def add_rater(store: Store, email: str, role: str, *, name: str | None = None,
              actor: str | None = None) -> RaterRow:
    """Give the person with this email a role: a new rater, a role change, or a removed rater brought back.

    The rater's name (what their labels are stored under) is ``name``, else the email's local part when no other
    rater holds it, else the email itself; a person already known by this email keeps their name.
    """
    email, role = check_email(email), _check_role(role)
    known = next((r for r in _all(store, include_removed=True) if (r.email or "").lower() == email), None)
    if known is not None:
        if name is not None and check_rater(name) != known.name:
            raise InputError(f"{email} is already rater '{known.name}' (their labels are stored under that name)",
                             fix=f"leave out --name, or remove --name {name}")
        return _put(store, known.name, role, email, actor, how="rater add")
    if name is not None:
        name = check_rater(name)
        holder = _row(store, name)
        if holder is not None and holder.email is not None:
            raise InputError(f"the rater name '{name}' is taken by {holder.email}", fix="choose another --name")
        return _put(store, name, role, email, actor, how="rater add")
    local = email.split("@", 1)[0]
    name = local if name_problem(local) is None and _row(store, local) is None else email
    if name_problem(name) is not None:
        raise InputError(f"{email} cannot be a rater name ({name_problem(name)})",
                         fix="give a name with --name (letters, digits and . _ - : @ +)")
    return _put(store, name, role, email, actor, how="rater add")


def find_rater(store: Store, who: str) -> RaterRow:
    """The rater this email or name names, removed or not; NotFound listing the active raters."""
    text = (who or "").strip()
    raters = _all(store, include_removed=True)
    found = (next((r for r in raters if (r.email or "").lower() == text.lower()), None)
             or next((r for r in raters if r.name == text), None))
    if found is None:
        known = ", ".join(r.email or r.name for r in raters if r.removed_at is None) or "none yet"
        raise NotFound(f"no rater '{text}' (raters: {known}); 'workbench rater list' shows them")
    return _row(store, found.name)  # with the labels they hold


def remove_rater(store: Store, who: str, *, actor: str | None = None) -> tuple[RaterRow, bool]:
    """Take the rater's role and access away; their labels stay, attributed to them. Returns the rater and whether
    this call removed them (False: they were already removed)."""
    with store.transaction():
        r = find_rater(store, who)
        if r.removed_at is not None:
            return r, False
        audit.remove_rater(store, r.name)
        audit.record(store, actor=actor, action="rater.removed", target=r.name,
                     detail={"role": r.role, "email": r.email, "labels_kept": r.n_labels})
        return _row(store, r.name), True


def set_role(store: Store, name: str, role: str, email: str | None = None, *, actor: str | None = None) -> RaterRow:
    """Give a rater (by name) a role and, for login deployments, the email that identifies them."""
    name, role = check_rater(name), _check_role(role)
    email = check_email(email) if email and email.strip() else None
    return _put(store, name, role, email, actor, how="rater set")


def list_raters(store: Store, *, include_removed: bool = False) -> list[RaterRow]:
    """Raters by name with the labels each holds; removed ones only with ``include_removed``."""
    return _all(store, include_removed=include_removed, counts=True)
