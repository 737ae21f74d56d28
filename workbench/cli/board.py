"""`workbench board`: grade several models' runs with approved bundles, show the board, compare two boards."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from workbench.cli.common import (
    MAX_REPEATS,
    MAX_RESAMPLES,
    MAX_SEED,
    Ctx,
    WorkbenchGroup,
    _echo_json,
    _require,
    _shown,
    clean_errors,
    pass_ctx,
)


def register(main: click.Group) -> None:
    main.add_command(board)


@click.group(cls=WorkbenchGroup)
def board() -> None:
    """The results board: several models' runs on the same tasks, read per task and category."""


@board.command("grade")
@click.argument("run_files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--bundle", "-b", "bundles", multiple=True, required=True,
              help="An approved bundle (repeat: a python/ grader bundle is the mechanical tier, any other the judged "
                   "tier).")
@click.option("--name", "-n", required=True, help="The board to put the runs on (created if new).")
@click.option("--judge-repeats", type=int, default=1, show_default=True,
              help="Verdicts per item from each bundle's judge (2 or more shows where its verdicts split).")
@click.option("--concurrency", type=int, default=8, show_default=True, help="Requests in flight at most.")
@click.option("--budget", type=float, default=None, help="Hard stop in USD per bundle.")
@pass_ctx
@clean_errors
def board_grade(ctx: Ctx, run_files: tuple[str, ...], bundles: tuple[str, ...], name: str, judge_repeats: int,
                concurrency: int, budget: float | None) -> None:
    """Grade runs of several models (items with task_id, category, producer and repeat) with approved bundles.

    A killed grading resumes where it stopped; no item is graded twice with the same bundle.

    \b
    Example:
      workbench board grade runs/model-a.jsonl runs/model-b.jsonl \\
          --bundle rubrics/approved/patch@v1--tests.yaml --bundle rubrics/approved/patch@v1--sonnet.yaml --name week-49
    """
    from workbench.features.board import service as svc

    _require(1 <= judge_repeats <= MAX_REPEATS, "--judge-repeats", judge_repeats,
             f"a whole number from 1 to {MAX_REPEATS}", "1")
    _require(concurrency >= 1, "--concurrency", concurrency, "a whole number of at least 1", "8")
    _require(budget is None or budget > 0, "--budget", budget, "a positive amount in USD", "5")
    bars: dict[str, Any] = {}

    def progress(tier: str, done: int, total: int) -> None:
        bar = bars.get(tier)
        if bar is None:
            bar = bars[tier] = click.progressbar(length=total, label=f"Grading ({tier})", file=sys.stderr)
            bar.__enter__()
            bar.update(done - 1)
            bars[tier + ":at"] = done - 1
        bar.update(done - bars[tier + ":at"])
        bars[tier + ":at"] = done

    try:
        summary = svc.grade_board(ctx.store, name, list(run_files), list(bundles), judge_repeats=judge_repeats,
                                  concurrency=concurrency, budget_usd=budget, progress=progress,
                                  workspace=ctx.workspace)
    finally:
        for key, bar in bars.items():
            if not key.endswith(":at"):
                bar.__exit__(None, None, None)
    click.echo(f"Board {name}: {summary.items_added} runs added, {summary.n_items} on the board.")
    stopped = False
    for t in summary.tiers:
        cost = "unknown" if t.cost_unknown and not t.cost_usd else f"${t.cost_usd:.4f}"
        click.echo(f"  {t.tier} ({t.judge}): {t.n_recorded} graded ({t.n_unscored} unscored), "
                   f"{t.n_skipped} already graded, {t.n_failed} failed; {t.n_requests} requests; cost {cost}.")
        for f in t.failures:
            click.echo(f"    failure: {f}", err=True)
        stopped = stopped or bool(t.stopped) or t.n_failed > 0
    if stopped:
        click.echo("Not everything was graded; run the same command again to resume.", err=True)
    click.echo(f"Show it with: workbench board show {name}")


@board.command("show")
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(["html", "md", "json"]), default="md", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to this file instead of stdout.")
@click.option("--q", "q_value", type=float, default=0.05, show_default=True,
              help="False discovery rate of the outlier flags.")
@click.option("--holm", is_flag=True, help="Hold the outlier flags to a family-wise error rate (Holm) instead.")
@click.option("--resamples", type=int, default=2000, show_default=True, help="Draws for the corrected intervals.")
@click.option("--seed", type=int, default=0, show_default=True)
@pass_ctx
@clean_errors
def board_show(ctx: Ctx, name: str, fmt: str, out: str | None, q_value: float, holm: bool, resamples: int,
               seed: int) -> None:
    """Show the board: per task and category, each model's tiers, outliers, corrected rates, where to look.

    \b
    Example:
      workbench board show week-49 --format html --out week-49.html
    """
    from workbench.features.board import service as svc
    from workbench.features.board.render import render

    _require(0 < q_value < 1, "--q", q_value, "a number between 0 and 1", "0.05")
    _require(100 <= resamples <= MAX_RESAMPLES, "--resamples", resamples,
             f"a whole number from 100 to {MAX_RESAMPLES:,}", "2000")
    _require(0 <= seed <= MAX_SEED, "--seed", seed, "a whole number from 0 to 2**63 - 1", "0")
    report = svc.board_report(ctx.store, name, q_value=q_value, adjustment="holm" if holm else "fdr_bh",
                              resamples=resamples, seed=seed)
    text = render(report, fmt)
    if out is None:
        click.echo(text, nl=False)
        return
    from workbench.features.export.bundle import write_atomic

    write_atomic(Path(out), text)
    click.echo(f"Wrote {_shown(Path(out))}")


@board.command("compare")
@click.argument("before")
@click.argument("after")
@click.option("--pair", "pairs", multiple=True, metavar="OLD=NEW",
              help="Which model of AFTER continues which of BEFORE (default: models of the same name).")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
@clean_errors
def board_compare(ctx: Ctx, before: str, after: str, pairs: tuple[str, ...], as_json: bool) -> None:
    """Two boards on the same tasks: per category, who gained or dropped, with paired intervals.

    \b
    Example:
      workbench board compare week-48 week-49 --pair model-v1=model-v2
    """
    from workbench.features.board import service as svc
    from workbench.features.board.render import render_compare_md

    mapping = {}
    for p in pairs:
        old, sep, new = p.partition("=")
        _require(bool(sep and old and new), "--pair", p, "OLD=NEW, two model names", "model-v1=model-v2")
        mapping[old] = new
    result = svc.compare_boards(ctx.store, before, after, pairs=mapping or None)
    if as_json:
        _echo_json(result.to_json())
    else:
        click.echo(render_compare_md(result), nl=False)


@board.command("list")
@pass_ctx
@clean_errors
def board_list(ctx: Ctx) -> None:
    """The boards of this database.

    \b
    Example:
      workbench board list
    """
    from workbench.features.board import service as svc

    rows = svc.list_boards(ctx.store)
    if not rows:
        click.echo("No board yet; grade runs onto one with 'workbench board grade RUN_FILES... --bundle B --name N'.")
    for r in rows:
        click.echo(f"{r.name}: {r.n_models} models, {r.n_tasks} tasks, {r.n_items} runs, {r.n_bundles} bundles")
