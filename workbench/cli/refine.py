"""`workbench refine`: rounds of rubric edits judged on a held-out split; `workbench refine-decide`: a lead's call."""

from __future__ import annotations

import sys

import click

from workbench.cli.common import MAX_SEED, Ctx, WorkbenchCommand, _echo_json, _finite, _require, clean_errors, pass_ctx


@click.command("refine", cls=WorkbenchCommand)
@click.option("--golden-set", "-g", required=True)
@click.option("--rubric", "-r", required=True)
@click.option("--judge", "-j", "judge_id", required=True, help="Judge id declared in the rubric.")
@click.option("--optimizer", default=None, metavar="MODEL",
              help="The model that proposes edits, e.g. openai/gpt-4o (any registered chat provider).")
@click.option("--strategy", type=click.Choice(["optimizer", "few-shot"]), default=None,
              help="optimizer (needs --optimizer) or few-shot (examples from development items); "
                   "default: optimizer when --optimizer is given.")
@click.option("--rounds", type=int, default=3, show_default=True, help="Finished rounds the session should have.")
@click.option("--budget", type=float, default=None,
              help="Hard stop in USD for the whole session (optimizer and judge), across resumes.")
@click.option("--dry-run", is_flag=True, help="Print the requests and cost estimate; send nothing.")
@click.option("--held-out", "held_out", type=float, default=0.5, show_default=True,
              help="Share of the labeled items held out to decide (used when a session starts).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the split and the bootstrap.")
@click.option("--examples", type=int, default=4, show_default=True, help="Examples an edit may add at most.")
@click.option("--new-session", is_flag=True, help="Start a new session instead of resuming the open one.")
@click.option("--json", "as_json", is_flag=True, help="Print the session as JSON.")
@pass_ctx
@clean_errors
def refine(ctx: Ctx, golden_set: str, rubric: str, judge_id: str, optimizer: str | None, strategy: str | None,
           rounds: int, budget: float | None, dry_run: bool, held_out: float, seed: int, examples: int,
           new_session: bool, as_json: bool) -> None:
    """Propose rubric edits from development disagreements; accept only what held-out items confirm.

    An interrupted session resumes where it stopped (run the same command again); nothing is exported.

    \b
    Example:
      workbench refine -g demo -r demo-patch-quality -j lenient-mini --optimizer openai/gpt-4o --budget 2
      workbench refine -g demo -r demo-patch-quality -j lenient-mini --strategy few-shot --dry-run
    """
    from workbench.features.refine import service as svc

    _require(rounds >= 1, "--rounds", rounds, "a whole number of at least 1", "3")
    _require(0 <= seed <= MAX_SEED, "--seed", seed, "a whole number from 0 to 2**63 - 1", "0")
    _require(budget is None or (_finite(budget) and budget > 0), "--budget", budget, "a positive amount in USD", "2")
    strategy = strategy or ("optimizer" if optimizer else "few-shot")
    args = dict(strategy=strategy, optimizer=optimizer, rounds=rounds, held_out_fraction=held_out, seed=seed,
                max_examples=examples)
    if dry_run:
        e = svc.estimate(ctx.store, golden_set, rubric, judge_id, **args)
        worst = "unknown (a model is not in the price table)" if e.max_cost_usd is None \
            else f"${e.max_cost_usd:.2f}"
        click.echo(f"{e.rounds} rounds to run on {e.n_development} development and "
                   f"{e.n_held_out} held-out items: {e.judge_requests} judge requests and "
                   f"{e.optimizer_requests} optimizer requests; at most {worst}.")
        return
    say = (lambda m: None) if as_json else (lambda m: click.echo(m, err=True))
    summary = svc.refine(ctx.store, golden_set, rubric, judge_id, budget_usd=budget, new_session=new_session,
                         workspace=ctx.workspace, progress=say, **args)
    if as_json:
        _echo_json(svc.jsonable_summary(summary))
        return
    s = summary.split
    click.echo(f"Session {summary.session_id}: split of golden set version {s.golden_set_version} (seed "
               f"{s.seed}, stratified by {s.strata}): {len(s.items.development)} development, "
               f"{len(s.items.held_out)} held-out items. Spent ${summary.spent_usd:.4f}"
               + (f" of ${summary.budget_usd:.2f}." if summary.budget_usd else "."))
    for r in summary.rounds:
        click.echo(f"Round {r.number} (id {r.id}): {r.status}. {r.reason or ''}")
    proposed = [r for r in summary.rounds if r.status == "proposed"]
    if proposed:
        click.echo(f"A lead accepts on the Refine page, or: workbench refine-decide {proposed[-1].id} --accept "
                   "--lead NAME")
    if summary.stopped:
        sys.exit(1)


@click.command("refine-decide", cls=WorkbenchCommand)
@click.argument("round_id", type=int)
@click.option("--accept/--discard", required=True, help="Accept the round's rubric, or discard the round.")
@click.option("--lead", required=True, help="The lead who decides (a rater with the lead role).")
@pass_ctx
@clean_errors
def refine_decide(ctx: Ctx, round_id: int, accept: bool, lead: str) -> None:
    """Accept a proposed round's rubric as the rubric's next version (then judge and calibrate it), or discard it.

    \b
    Example:
      workbench refine-decide 3 --accept --lead lead
    """
    from workbench.features.refine import service as svc

    if not accept:
        svc.discard_round(ctx.store, round_id, lead=lead)
        click.echo(f"Round {round_id} discarded.")
        return
    rv = svc.accept_round(ctx.store, round_id, lead=lead)
    click.echo(f"Rubric '{rv.name}' version {rv.version} added from round {round_id}. Judge and calibrate it on the "
               f"whole golden set: workbench judge run -r {rv.name} -j JUDGE -g GOLDEN_SET, then workbench calibrate.")


def register(main: click.Group) -> None:
    main.add_command(refine)
    main.add_command(refine_decide)
