"""Raters: one identity per person, their roles (``models.Role``) and the emails that identify them.

A rater is one row, keyed by their name (what labels are stored under); their email (lower-case, unique) and their
name both resolve to it (``resolve_rater``), emails in any case, and so do names merged into them (migration
m014). Sign-in, ``rater add``, ``rater remove``, a labels import and ``audit --actor`` all resolve the same way,
so a person is the same rater everywhere.

An admin adds a person by email (``add_rater``) and removes them (``remove_rater``): a removed rater keeps their
row and their labels, attributed to them, but no role: the role lookups the UI asks (``rater_role``,
``rater_for_email``, ``rater_names``) no longer know them, and their saves and imports are refused. Adding the
same email again brings them back. Each change is written to the audit log in its own transaction.
"""

from __future__ import annotations

from workbench.core.errors import InputError, NotFound
from workbench.core.models import Role
from workbench.core.names import EMAIL, check_name, is_email, name_problem
from workbench.store import Store
from workbench.store import audit
from workbench.features.people.records import RaterRow


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
    if not EMAIL.fullmatch(text):
        raise InputError(f"'{text}' is not an email address", fix="give the address the person signs in with, "
                         "e.g. maria@example.com")
    return text.lower()


def _row(store: Store, name: str) -> RaterRow | None:
    row = audit.rater(store, name)
    return RaterRow(**row) if row else None


def _all(store: Store, *, include_removed: bool = False, counts: bool = False) -> list[RaterRow]:
    return [RaterRow(**r) for r in audit.raters(store, include_removed=include_removed, counts=counts)]


def resolve_rater(store: Store, who: str) -> RaterRow | None:
    """The rater, removed or not, this email (any case), name or merged name is; None for nobody."""
    row = audit.resolve(store, who)
    return RaterRow(**row) if row else None


def known_raters(store: Store, *, limit: int = 12) -> str:
    """The active raters as a sentence's list (each by email, else name): what a refusal offers instead."""
    shown = [r.email or r.name for r in _all(store)]
    if not shown:
        return "none yet"
    more = len(shown) - limit
    return ", ".join(shown[:limit]) + (f" and {more} more" if more > 0 else "")


def rater_role(store: Store, name: str) -> str | None:
    """The role of an active rater (by name or email); None for an unknown or removed one."""
    r = resolve_rater(store, name)
    return r.role if r is not None and r.removed_at is None else None


def rater_for_email(store: Store, email: str) -> dict | None:
    """The active rater this signed-in address is (by email, any case; or by a name equal to it): the roles table
    of a login deployment (a removed rater is nobody). A role changes only through ``add_rater``/``set_role``."""
    r = resolve_rater(store, email) if is_email(email) else None
    return None if r is None or r.removed_at is not None else {"name": r.name, "role": r.role, "email": r.email}


def removed_for_email(store: Store, email: str) -> RaterRow | None:
    """The removed rater this signed-in address is, if it is one: whom the sign-in page refuses by name."""
    r = resolve_rater(store, email) if is_email(email) else None
    return r if r is not None and r.removed_at is not None else None


def rater_names(store: Store) -> list[str]:
    """The active raters' names (the local picker's list)."""
    return [r.name for r in _all(store)]


def local_role(store: Store, name: str) -> str | None:
    """The role of a name picked on a workbench without sign-in: an active rater's role, a reviewer for a new name,
    None for a removed rater (who has no access until an admin adds them again)."""
    r = resolve_rater(store, name) if name and name.strip() else None
    if r is None:
        return Role.REVIEWER.value
    return r.role if r.removed_at is None else None


def local_rater(store: Store, name: str) -> str:
    """The rater name a typed name or email is stored under: the known rater's name, else the name as typed."""
    r = resolve_rater(store, name)
    return r.name if r is not None else check_rater(name)


def refuse_removed(store: Store, name: str) -> None:
    """A removed rater may not label or adjudicate: one sentence saying who can bring them back."""
    r = resolve_rater(store, name)
    if r is not None and r.removed_at is not None:
        raise InputError(f"rater '{r.name}' was removed on {r.removed_at[:10]} and has no access",
                         fix=f"ask an admin to add them again ('workbench rater add {r.email or 'EMAIL'} "
                             "--role reviewer')")


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


def _free_name(store: Store, name: str) -> str:
    """``name`` checked by the name rule and held by nobody (as a name, an email or a merged name)."""
    name = check_rater(name)
    holder = resolve_rater(store, name)
    if holder is not None:
        raise InputError(f"the rater name '{name}' is taken by {holder.email or 'rater ' + repr(holder.name)}",
                         fix="choose another --name")
    return name


def _default_name(store: Store, email: str) -> str:
    """A new rater's name: the email's local part when it is a valid name nobody holds, else the email."""
    local = email.split("@", 1)[0]
    name = local if name_problem(local) is None and resolve_rater(store, local) is None else email
    if name_problem(name) is not None:
        raise InputError(f"{email} cannot be a rater name ({name_problem(name)})",
                         fix="give a name with --name (letters, digits and . _ - : @ +)")
    return name


def _by_email(store: Store, email: str) -> RaterRow | None:
    """The rater this (checked) email is: theirs, or the name of a rater who has no other email."""
    known = resolve_rater(store, email)
    if known is None or known.email == email:
        return known
    if known.email is None and known.name.lower() == email:
        return known
    raise InputError(f"{email} is the name of rater '{known.name}', whose email is {known.email}",
                     fix=f"use their email {known.email}, or give this person another address")


def add_rater(store: Store, email: str, role: str, *, name: str | None = None,
              actor: str | None = None) -> RaterRow:
    """Give the person with this email a role: a new rater, a role change, or a removed rater brought back.

    The rater's name (what their labels are stored under) is ``name``, else the email's local part when no other
    rater holds it, else the email itself; a person already known by this email (or named by it) keeps their name.
    """
    email, role = check_email(email), _check_role(role)
    known = _by_email(store, email)
    if known is not None:
        if name is not None and check_rater(name) != known.name:
            raise InputError(f"{email} is already rater '{known.name}' (their labels are stored under that name)",
                             fix=f"leave out --name, or remove --name {name}")
        return _put(store, known.name, role, email, actor, how="rater add")
    name = _free_name(store, name) if name is not None else _default_name(store, email)
    return _put(store, name, role, email, actor, how="rater add")


def find_rater(store: Store, who: str) -> RaterRow:
    """The rater this email or name names, removed or not; NotFound listing the active raters."""
    text = (who or "").strip()
    found = resolve_rater(store, text)
    if found is None:
        raise NotFound(f"no rater '{text}' (raters: {known_raters(store)}); 'workbench rater list' shows them")
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
    """Give a rater (by name or email) a role and, for login deployments, the email that identifies them."""
    role = _check_role(role)
    email = check_email(email) if email and email.strip() else None
    known = resolve_rater(store, name)
    if known is not None:
        name = known.name
    else:
        name = check_rater(name)
        email = email or (name.lower() if is_email(name) else None)  # a name that is an email identifies them
    if email is not None:
        holder = _by_email(store, email)
        if holder is not None and holder.name != name:
            raise InputError(f"{email} is already rater '{holder.name}'",
                             fix=f"set their role by that name ('workbench rater set {holder.name} --role {role}')")
    return _put(store, name, role, email, actor, how="rater set")


def list_raters(store: Store, *, include_removed: bool = False) -> list[RaterRow]:
    """Raters by name with the labels each holds; removed ones only with ``include_removed``."""
    return _all(store, include_removed=include_removed, counts=True)


def count_removed(store: Store) -> int:
    """How many raters are removed (what ``rater list`` says it leaves out)."""
    return sum(1 for r in _all(store, include_removed=True) if r.removed_at is not None)


# -- the raters a labels import names -------------------------------------------------------------------------

def raters_of_import(store: Store, first_lines: dict[str, int], *, file: str,
                     new_raters: bool) -> dict[str, str | None]:
    """Map each ``rater`` value of a labels file (with the line it first appears on) to the rater it names: a known
    email (any case) or name gives that rater's name; a removed rater is refused; any other value is refused naming
    the value and the known raters, unless ``new_raters``, when it maps to None (a new reviewer, made by
    ``add_new_raters`` in the import's transaction)."""
    out: dict[str, str | None] = {}
    for value, line in first_lines.items():
        r = resolve_rater(store, value)
        if r is not None and r.removed_at is not None:
            raise InputError(f"'{value}' is rater '{r.name}', removed on {r.removed_at[:10]}: a removed rater's "
                             "labels are not imported", file=file, line=line, field="rater",
                             fix=f"add them again first ('workbench rater add {r.email or 'EMAIL'} --role reviewer') "
                                 "or leave their labels out")
        if r is None and not new_raters:
            raise InputError(f"'{value}' is not a known rater's email or name (raters: {known_raters(store)})",
                             file=file, line=line, field="rater",
                             fix="correct it, or pass --new-raters (on the Import page: tick 'Add new raters') to add "
                                 "the file's new raters as reviewers")
        out[value] = r.name if r is not None else None
    return out


def add_new_raters(store: Store, values: list[str]) -> dict[str, str]:
    """Add each value as a new reviewer (an email: with that email, named as ``rater add`` names them), in the
    caller's transaction, whose one audit entry names them (an import is one entry). Returns value -> rater name."""
    out: dict[str, str] = {}
    with store.transaction():
        for value in values:
            email = check_email(value) if is_email(value) else None
            known = _by_email(store, email) if email else None  # an earlier value of this file in another case
            name = known.name if known else _default_name(store, email) if email else check_rater(value)
            if known is None:
                audit.put_rater(store, name, Role.REVIEWER.value, email)
            out[value] = name
    return out


# -- what the identity migration merged ---------------------------------------------------------------------------

def merge_notes(store: Store) -> list[str]:
    """One sentence per pair of raters the identity migration (m014) merged, when this opening of the store ran it;
    nothing otherwise (the ``rater.merged`` audit entries keep them for later)."""
    from workbench.store.migrations.m014_one_identity import MIGRATION_ACTOR, m014_one_identity

    if m014_one_identity.__name__ not in getattr(store, "migrated", []):
        return []
    notes = []
    for e in audit.entries(store, actors=[MIGRATION_ACTOR], action="rater.merged"):
        d = e["detail"]
        notes.append(f"Merged rater '{d['merged']}' into '{e['target']}' (the same person): "
                     f"{d['labels_moved']} label{'s' if d['labels_moved'] != 1 else ''} moved"
                     + (f", {d['older_labels_dropped']} older duplicate{'s' if d['older_labels_dropped'] != 1 else ''}"
                        " dropped" if d["older_labels_dropped"] else "") + f"; '{d['merged']}' now names them.")
    return notes


def acting_as(store: Store, actor: str | None) -> None:
    """Record this command line's changes under ``--as EMAIL`` (None: ``WORKBENCH_USER``, else the OS account).
    The address is checked; a removed rater may not act."""
    if actor is None or not actor.strip():
        audit.act_as(None)
        return
    email = check_email(actor)
    r = resolve_rater(store, email)
    if r is not None and r.removed_at is not None:
        raise InputError(f"--as {email}: rater '{r.name}' was removed on {r.removed_at[:10]} and may not make changes",
                         fix=f"ask an admin to add them again ('workbench rater add {email} --role reviewer')")
    audit.act_as(email)
