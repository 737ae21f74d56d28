"""`workbench calibrate`, `compare` and `plan`: a judge's report and verdict, judges side by side, and how many
more labels each undecided gate check needs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from workbench.calibration.gate import HEADLINE, STATUS_MARK
from workbench.cli.common import (
    Ctx,
    WorkbenchCommand,
    _calibration_options,
    _echo_json,
    _options,
    clean_errors,
    pass_ctx,
)


@click.command(cls=WorkbenchCommand)
@click.option("--golden-set", "-g", required=True)
@click.option("--rubric", "-r", required=True)
@click.option("--judge", "-j", default=None, help="Judge id declared in the rubric (or give --cascade).")
@click.option("--json", "as_json", is_flag=True, help="Print the report object (schema workbench.calibration/1).")
@click.option("--selective", is_flag=True, help="Also choose a confidence threshold with a guarantee (docs/selective.md).")
@click.option("--target-agreement", type=float, default=None, help="--selective: agreement wanted on kept items, e.g. 0.9.")
@click.option("--risk", type=float, default=None, help="--selective: chance the guarantee may fail, in (0, 0.5], e.g. 0.05.")
@click.option("--cascade", default=None, help="--selective: judges in order, J1,J2[,J3]: what one abstains on goes to the next; the thresholds are chosen together.")
@click.option("--exclude-rater", "exclude", multiple=True, metavar="NAME",
              help="Leave this rater's labels (by name or email) out of the consensus and the human comparisons; "
                   "repeat for more (see 'workbench rater report').")
@_calibration_options
@pass_ctx
@clean_errors
def calibrate(ctx: Ctx, golden_set: str, rubric: str, judge: str | None, as_json: bool, selective: bool,
              target_agreement: float | None, risk: float | None, cascade: str | None, exclude: tuple[str, ...],
              **opts: Any) -> None:
    """Score a judge against the humans: agreement with intervals, ceiling, alt-test, bias, noise, drift, verdict.

    --rubric NAME is the newest version the judge has judgments of; NAME@vN is version N. --selective adds the
    confidence threshold above which the judge agrees with the humans >= --target-agreement with probability
    >= 1 - --risk (fixed-sequence testing, exact bounds), and the gate's "selective guarantee" check (as a
    policy's selective section does). With --cascade the judges' thresholds are chosen together, so that the
    cascade's combined verdicts hold the guarantee (learn then test, docs/selective.md), and the output gives each
    judge's share, the share abstained on and the cost per 1,000 items.

    \b
    Example:
      workbench calibrate --golden-set demo --rubric demo-patch-quality --judge careful-sonnet
      workbench calibrate --golden-set demo --rubric demo-patch-quality@v1 --judge careful-sonnet
      workbench calibrate -g demo -r demo-patch-quality -j noisy-llama --json
      workbench calibrate -g demo -r demo-patch-quality -j careful-sonnet --selective --target-agreement 0.8 --risk 0.1
      workbench calibrate -g demo -r demo-patch-quality --selective --target-agreement 0.85 --risk 0.1 --cascade noisy-llama,careful-sonnet
      workbench calibrate -g demo -r demo-patch-quality -j careful-sonnet --exclude-rater ben
    """
    from workbench.calibration.versions import Context
    from workbench.features.selective.service import judges_of_cascade, selective_request, with_guarantee

    options = _options(**opts)
    if exclude:
        from workbench.features.people.raters import find_rater

        options = replace(options, exclude_raters=tuple(find_rater(ctx.store, who).name for who in exclude))
    judges = judges_of_cascade(judge, cascade, selective, target_agreement, risk)
    # NAME, or NAME@vN for that version: resolved once, and every part of the output read in one snapshot
    with Context.reading(ctx.store, golden_set, rubric, options.run) as names:
        report = names.report(judges[0], options, workspace=ctx.workspace)
        # the guarantee asked for (the flags, else the policy's selective section) joins the verdict as a gate check
        request = selective_request(report.policy, judges[0], selective=selective, target=target_agreement,
                                    risk=risk, cascade=cascade)
        chosen = None
        if request is not None:
            report, chosen = with_guarantee(names, report, request)
    if as_json:
        _echo_json({**report.to_json(), **({"selective": chosen.to_json()} if chosen else {})})
        return
    from workbench.calibration.presentation import report_text

    from workbench.features.steps.presentation import report_lines as step_lines

    lines = report_text(report)
    gate = next((n for n, line in enumerate(lines) if line.text == "\ngate:"), len(lines))
    for line in lines[:gate]:
        click.secho(line.text, fg=TONE_COLOURS.get(line.tone), bold=line.bold or None)
    for text in step_lines(report):  # failure attribution, before the gate (where labels mark steps)
        click.echo(text)
    for line in lines[gate:]:
        click.secho(line.text, fg=TONE_COLOURS.get(line.tone), bold=line.bold or None)
    if chosen:
        click.secho(chosen.sentence, fg="green" if chosen.guaranteed else "yellow")


TONE_COLOURS = {"pass": "green", "fail": "red", "warn": "yellow"}


@click.command(cls=WorkbenchCommand)
@click.option("--golden-set", "-g", required=True)
@click.option("--rubric", "-r", required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_calibration_options
@pass_ctx
@clean_errors
def compare(ctx: Ctx, golden_set: str, rubric: str, as_json: bool, **opts: Any) -> None:
    """All judges of a rubric side by side, with paired-bootstrap differences from the best.

    \b
    Example:
      workbench compare --golden-set demo --rubric demo-patch-quality
    """
    from workbench.calibration.calibrate import compare as run
    from workbench.calibration.versions import Context
    from workbench.features.selective.service import policy_guarantee

    with Context.reading(ctx.store, golden_set, rubric, opts.get("run")) as names:
        result = run(ctx.store, golden_set, rubric, _options(**opts), workspace=ctx.workspace,
                     judged=policy_guarantee(names))
    if as_json:
        _echo_json(result.to_json())
        return
    from workbench.calibration.presentation import compare_text

    for line in compare_text(result):
        click.echo(line)


@click.command("plan")
@click.option("--golden-set", "-g", required=True, help="Golden set the judge is calibrated on.")
@click.option("--rubric", "-r", required=True, help="Rubric the judge grades with.")
@click.option("--judge", "-j", required=True, help="Judge id declared in the rubric.")
@click.option("--target-width", type=float, default=None, help="Interval width wanted, e.g. 0.1: items needed for it.")
@click.option("--budget", type=click.IntRange(min=0), default=None, help="More labels you can pay for: the interval widths expected.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
@clean_errors
def plan_command(ctx: Ctx, golden_set: str, rubric: str, judge: str, target_width: float | None,
                 budget: int | None, as_json: bool) -> None:
    """Plan labels: for each gate check not yet decided, the labels it needs, with the assumptions.

    \b
    Example:
      workbench plan --golden-set demo --rubric demo-patch-quality --judge careful-sonnet --target-width 0.1
    """
    from workbench.features.planning.plan import plan

    p = plan(ctx.store, golden_set, rubric, judge, target_width=target_width, budget=budget,
             workspace=ctx.workspace)
    if as_json:
        _echo_json(p.to_dict())
        return
    click.echo(f"Label plan for judge '{judge}' on '{golden_set}' ({p.n_items} items, {p.n_unlabeled} unlabeled, "
               f"overlap {p.overlap}): the gate's verdict is {HEADLINE.get(p.verdict, p.verdict)}.")
    for c in p.checks:
        click.echo(f"  [{STATUS_MARK.get(c.state, c.state)}] {c.name}: {c.reason}")
        if c.state == "undecided":
            click.echo(f"      {c.sentence}")
    if p.overall:
        click.echo(p.overall.sentence)
    if p.decided_failures:
        click.echo(p.summary())
    if p.widths:
        click.echo(f"For intervals {p.target_width} wide:")
        for name, w in p.widths.items():
            now = "n/a" if w["now"] is None else f"{w['now']:.2f}"
            more = "n/a" if w["more_labels"] is None else str(w["more_labels"])
            click.echo(f"  {name:28s} now {now}; about {more} more labels")
    if p.budget is not None:
        click.echo(f"With {p.budget} more labels (random order), expected widths:")
        for name, w in p.budget_widths.items():
            click.echo(f"  {name:28s} {'n/a' if w is None else f'{w:.2f}'}")
    click.echo("Assumptions:")
    for a in p.assumptions:
        click.echo(f"  - {a}")
