"""`workbench golden-set list|show|freeze|queue|gold|assign|export`."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.cli.common import Ctx, WorkbenchGroup, _echo_json, _require, clean_errors, pass_ctx


@click.group("golden-set", cls=WorkbenchGroup)
def golden_set() -> None:
    """List, show, freeze and export golden sets."""


@golden_set.command("list")
@pass_ctx
@clean_errors
def golden_set_list(ctx: Ctx) -> None:
    """List golden sets with counts.

    \b
    Example:
      workbench golden-set list
    """
    from workbench.calibration.golden_sets import golden_set_summaries

    rows = golden_set_summaries(ctx.store)
    if not rows:
        click.echo("No golden sets yet; run 'workbench demo --no-ui' or 'workbench import items FILE --golden-set G'.")
    for r in rows:
        demo = "  [synthetic demo]" if r.is_demo else ""
        click.echo(f"{r.name}\t{r.n_items} items\t{r.n_labels} labels by {r.n_raters} raters\t"
                   f"{r.n_judgments} judgments\tversion {r.latest_version or '-'}{demo}")


@golden_set.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
@clean_errors
def golden_set_show(ctx: Ctx, name: str, as_json: bool) -> None:
    """Show a golden set: categories, producers, labels, consensus, runs.

    \b
    Example:
      workbench golden-set show demo
    """
    from workbench.calibration.golden_sets import golden_set_overview

    info = golden_set_overview(ctx.store, name)
    if as_json:
        _echo_json(info.to_json())
        return
    click.echo(f"Golden set '{info.name}': {info.items} items" +
               (" (SYNTHETIC demo data)" if info.synthetic_demo else ""))
    click.echo("  categories: " + ", ".join(f"{k} {v}" for k, v in sorted(info.categories.items())))
    click.echo("  producer families: " + ", ".join(f"{k} {v}" for k, v in sorted(info.producer_families.items())))
    for rubric, r in info.rubrics.items():
        click.echo(f"  rubric {rubric}: {r.labels} labels by {r.raters} raters on {r.labeled_items} items, "
                   f"{r.with_2_or_more} with 2+ labels; {r.resolved} with consensus, {r.unresolved} "
                   f"unresolved, {r.adjudicated} adjudicated")
    for run in info.runs:
        click.echo(f"  judge {run.judge} (rubric {run.rubric} v{run.rubric_version}), run {run.run}: "
                   f"{run.judgments} judgments [{run.source}, {run.status}]")
    for v in info.versions:
        click.echo(f"  frozen version {v.version}: {v.hash[:16]} at {v.created_at}")


@golden_set.command("freeze")
@click.argument("name")
@pass_ctx
@clean_errors
def golden_set_freeze(ctx: Ctx, name: str) -> None:
    """Freeze a version: item ids, content hashes and consensus labels, named by their hash.

    \b
    Example:
      workbench golden-set freeze demo
    """
    from workbench.calibration.snapshots import FrozenVersion, freeze

    v = FrozenVersion.from_json(freeze(ctx.store, name))
    click.echo(f"Golden set '{name}' version {v.version}: {v.hash} ({v.n_items} items).")


@golden_set.command("queue")
@click.argument("name")
@click.option("--order", type=click.Choice(["active", "random"]), default=None,
              help="Switch the labeling queue's order (without it: show the current one).")
@click.option("--rubric", default=None, help="With --order active: the rubric whose gate checks it serves.")
@click.option("--judge", default=None, help="With --order active: the judge whose scores stratify the items.")
@click.option("--expected-labels", type=int, default=None, help="Items the design expects to label (default N/4).")
@pass_ctx
@clean_errors
def golden_set_queue(ctx: Ctx, name: str, order: str | None, rubric: str | None, judge: str | None,
                     expected_labels: int | None) -> None:
    """Show or set the labeling queue's order: random (default) or active (Neyman-stratified by the judge).

    \b
    Example:
      workbench golden-set queue demo --order active --rubric demo-patch-quality --judge careful-sonnet
    """
    from workbench.features.planning.active_queue import queue_setting, set_queue_order

    _require(expected_labels is None or expected_labels >= 1, "--expected-labels", expected_labels,
             "a whole number of at least 1", "200")
    q = (set_queue_order(ctx.store, name, order, rubric=rubric, judge=judge, expected_labels=expected_labels,
                         workspace=ctx.workspace) if order else queue_setting(ctx.store, name))
    click.echo(f"Golden set '{name}': queue order {q.order}.")
    if q.order == "active" and q.design:
        d = q.design
        click.echo(f"  design for judge '{d['judge_id']}' (rubric {d['rubric_name']}), serving the checks "
                   f"{', '.join(d['checks'])}; {len(q.strata)} strata:")
        for r in q.strata:
            click.echo(f"  {r['stratum']:50s}{r['n_items']:>7} items  inclusion {r['probability']:.3f}  "
                       f"labeled {r['n_labeled']}")


@golden_set.command("gold")
@click.argument("name")
@click.option("-r", "--rubric", required=True, help="The rubric whose adjudications are the gold answers.")
@click.option("--item", "items", multiple=True, help="An adjudicated item to mark gold (repeat for more).")
@click.option("--all-adjudicated", is_flag=True, help="Mark every adjudicated item gold.")
@click.option("--remove", is_flag=True, help="Unmark the items named with --item instead.")
@click.option("--rate", type=float, default=None,
              help="Share of each reviewer's turns that serve a gold item (0 stops mixing them in).")
@pass_ctx
@clean_errors
def golden_set_gold(ctx: Ctx, name: str, rubric: str, items: tuple[str, ...], all_adjudicated: bool, remove: bool,
                    rate: float | None) -> None:
    """Mark adjudicated items gold and mix them into reviewers' queues, unannounced; without options, show them.

    A reviewer's labels on gold items given after the marking are their accuracy on gold in 'workbench rater
    report'.

    \b
    Example:
      workbench golden-set gold demo -r demo-patch-quality --all-adjudicated --rate 0.1
    """
    from workbench.features.labeling.gold import set_gold, status

    _require(not (remove and all_adjudicated), "--remove", "with --all-adjudicated", "name the items with --item",
             "--remove --item ITEM")
    if items or all_adjudicated or rate is not None:
        s = set_gold(ctx.store, name, rubric, items=items, all_adjudicated=all_adjudicated, remove=remove, rate=rate)
    else:
        s = status(ctx.store, name, rubric)
    click.echo(s.summary())


@golden_set.command("assign")
@click.argument("name")
@click.option("-r", "--rubric", required=True, help="The rubric the reviewers label the items under.")
@click.option("--to", "raters", multiple=True, help="A reviewer, by email or name (repeat for more).")
@click.option("--share", type=float, default=1.0, show_default=True,
              help="The share of the golden set's items each named reviewer labels.")
@click.option("--remove", is_flag=True, help="Unassign the reviewers named with --to.")
@click.option("--clear", is_flag=True, help="Drop every assignment: every reviewer is served the golden set again.")
@pass_ctx
@clean_errors
def golden_set_assign(ctx: Ctx, name: str, rubric: str, raters: tuple[str, ...], share: float, remove: bool,
                      clear: bool) -> None:
    """Assign the golden set (or a share of it) to named reviewers; without options, show who has what left.

    Each item still reaches its overlap in distinct reviewers when the shares add up to the overlap.

    \b
    Example:
      workbench golden-set assign demo -r demo-patch-quality --to ana@example.com --to ben@example.com --share 1
    """
    from workbench.features.labeling.assignment import assign, assignment_status

    _require(not (clear and (raters or remove)), "--clear", "given alone", "on its own", "--clear")
    _require(not remove or raters, "--remove", "given with the reviewers to unassign", "--to EMAIL", "--remove --to EMAIL")
    if raters or clear:
        s = assign(ctx.store, name, rubric, raters, share=share, remove=remove, clear=clear)
    else:
        s = assignment_status(ctx.store, name, rubric)
    click.echo(s.summary())


@golden_set.command("export")
@click.argument("name")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder to write.")
@pass_ctx
@clean_errors
def golden_set_export(ctx: Ctx, name: str, out: str) -> None:
    """Write items, labels, adjudications and judgments back to files (lossless).

    \b
    Example:
      workbench golden-set export demo --out /tmp/demo-export
    """
    from workbench.calibration.snapshots import export_golden_set
    from workbench.core.names import staged_folder

    with staged_folder(out) as stage:  # all files land in --out, or none do
        counts = export_golden_set(ctx.store, name, stage)
    for f, n in counts.items():
        click.echo(f"{Path(out) / f}\t{n} records")

