"""`workbench rater add|remove|list|set`: who labels, with which role; `workbench rater report` (also `workbench
raters report`): how each reviewer agrees with the others; `workbench audit`: who changed what, when."""

from __future__ import annotations

import json

import click

from workbench.cli.common import (
    MAX_RESAMPLES,
    MAX_SEED,
    Ctx,
    WorkbenchGroup,
    _echo_json,
    clean_errors,
    pass_ctx,
)
from workbench.core.models import Role

ROLES = click.Choice([r.value for r in Role])


@click.group(cls=WorkbenchGroup)
def rater() -> None:
    """Raters and their roles (reviewer, lead, admin)."""


def _shown(r) -> str:
    return f"'{r.name}'" + (f" ({r.email})" if r.email and r.email != r.name else "")


def _a(role: str) -> str:
    return f"an {role}" if role[0] in "aeiou" else f"a {role}"


@rater.command("add", creates_db=True)
@click.argument("email")
@click.option("--role", type=ROLES, required=True, help="reviewer labels; lead also adjudicates and exports; "
              "admin also manages.")
@click.option("--name", default=None, help="The name their labels are stored under (default: the email's local "
              "part if no other rater has it, else the email).")
@pass_ctx
@clean_errors
def rater_add(ctx: Ctx, email: str, role: str, name: str | None) -> None:
    """Give the person who signs in with EMAIL a role (also brings a removed rater back).

    \b
    Example:
      workbench rater add maria@example.com --role lead
    """
    from workbench.features.people.raters import add_rater

    r = add_rater(ctx.store, email, role, name=name)
    click.echo(f"Rater {_shown(r)} is {_a(r.role)}.")


@rater.command("remove")
@click.argument("email")
@pass_ctx
@clean_errors
def rater_remove(ctx: Ctx, email: str) -> None:
    """Take a rater's role and access away (by email or name); their labels stay, attributed to them.

    \b
    Example:
      workbench rater remove maria@example.com
    """
    from workbench.features.people.raters import remove_rater

    r, removed = remove_rater(ctx.store, email)
    kept = f"; their {r.n_labels} label{'s' if r.n_labels != 1 else ''} stay, attributed to them"
    click.echo(f"Rater {_shown(r)} " + ("is removed" + kept if removed else f"was already removed on "
                                                                              f"{r.removed_at[:10]}") + ".")


@rater.command("set", creates_db=True)
@click.argument("name")
@click.option("--role", type=ROLES, required=True)
@click.option("--email", default=None, help="The address st.login reports, for deployments with [auth].")
@pass_ctx
@clean_errors
def rater_set(ctx: Ctx, name: str, role: str, email: str | None) -> None:
    """Give a rater (by name) a role; with login, the email decides who they are.

    \b
    Example:
      workbench rater set maria --role lead --email maria@example.com
    """
    from workbench.features.people.raters import set_role

    r = set_role(ctx.store, name, role, email)
    click.echo(f"Rater '{r.name}' is {_a(r.role)}" + (f" ({r.email})." if r.email else "."))


@rater.command("list")
@click.option("--all", "everyone", is_flag=True, help="Also removed raters (with the date they were removed).")
@click.option("--json", "as_json", is_flag=True, help="Print the raters as JSON.")
@pass_ctx
@clean_errors
def rater_list(ctx: Ctx, everyone: bool, as_json: bool) -> None:
    """List raters with their roles, emails and label counts.

    \b
    Example:
      workbench rater list --all
    """
    from workbench.features.people.raters import count_removed, list_raters

    raters = list_raters(ctx.store, include_removed=everyone)
    if as_json:
        _echo_json([r.to_json() for r in raters])
        return
    for r in raters:
        removed = f"\tremoved {r.removed_at[:10]}" if r.removed_at else ""
        click.echo(f"{r.name}\t{r.role}\t{r.email or ''}\t{r.n_labels} labels{removed}")
    hidden = 0 if everyone else count_removed(ctx.store)
    if hidden:
        some = "1 removed rater is" if hidden == 1 else f"{hidden} removed raters are"
        click.echo(("No active raters; " if not raters else "") + f"{some} not shown ('workbench rater list --all' "
                   "lists them).")
    elif not raters:
        click.echo("No raters yet; add one with 'workbench rater add EMAIL --role reviewer'.")


@rater.command("report")
@click.option("--golden-set", "-g", required=True)
@click.option("--rubric", "-r", required=True, help="Rubric the labels are given under (NAME or NAME@vN).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--resamples", type=click.IntRange(1, MAX_RESAMPLES), default=2000, show_default=True,
              help="Bootstrap resamples of the intervals.")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=0, show_default=True)
@pass_ctx
@clean_errors
def rater_report(ctx: Ctx, golden_set: str, rubric: str, as_json: bool, resamples: int, seed: int) -> None:
    """Each reviewer against the consensus of the others: agreement, fails, skips and flags, with 95% intervals.

    \b
    Example:
      workbench rater report -g support -r patch-quality
      workbench raters report -g support -r patch-quality --json
    """
    from workbench.features.people.report import raters_report, render_text

    report = raters_report(ctx.store, golden_set, rubric, workspace=ctx.workspace, resamples=resamples, seed=seed)
    if as_json:
        _echo_json(report.to_json())
        return
    click.echo(render_text(report))


@click.command("audit", cls=WorkbenchGroup.command_class)
@click.option("--since", default=None, metavar="DATE", help="Entries at or after this date or time "
              "(YYYY-MM-DD or ISO 8601; UTC unless it names a zone).")
@click.option("--actor", default=None, help="Only this person's changes.")
@click.option("--action", default=None, help="Only this action (e.g. label.saved; 'label' for every label.*).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {at, actor, action, target, detail}.")
@pass_ctx
@clean_errors
def audit(ctx: Ctx, since: str | None, actor: str | None, action: str | None, as_json: bool) -> None:
    """Who changed what, when: labels, adjudications, rubric versions, exports, raters.

    \b
    Example:
      workbench audit --since 2026-12-01 --action rater
    """
    from workbench.features.people.audit import audit_entries

    entries = audit_entries(ctx.store, since=since, actor=actor, action=action)
    if as_json:
        _echo_json([e.to_json() for e in entries])
        return
    for e in entries:
        detail = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                           for k, v in e.detail.items() if v is not None)
        click.echo(f"{e.at}\t{e.actor}\t{e.action}\t{e.target}" + (f"\t{detail}" if detail else ""))
    if not entries:
        click.echo("No audit entries" + (" match." if since or actor or action else " yet."))


@click.group(cls=WorkbenchGroup, hidden=True)
def raters() -> None:
    """The raters report as the issue spells it: 'workbench raters report' is 'workbench rater report'.

    \b
    Example:
      workbench raters report -g support -r patch-quality
    """


raters.add_command(rater_report)
