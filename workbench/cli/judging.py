"""`workbench judge run`: a judge on a golden set, resumable and within a budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from workbench.cli.common import Ctx, ProgressBars, WorkbenchGroup, check_run_options, clean_errors, pass_ctx
from workbench.core.scale import fmt_usd

if TYPE_CHECKING:
    from workbench.features.judging.records import RunSummary


@click.group(cls=WorkbenchGroup)
def judge() -> None:
    """Run a rubric's judges on a golden set."""


@judge.command("run")
@click.option("--golden-set", "-g", required=True)
@click.option("--rubric", "-r", required=True)
@click.option("--judge", "-j", "judge_id", required=True, help="Judge id declared in the rubric.")
@click.option("--repeats", type=int, default=None, help="Judgments per item (default: the judge's repeats).")
@click.option("--concurrency", type=int, default=8, show_default=True, help="Requests in flight at most.")
@click.option("--limit", type=int, default=None, help="Only the first N items.")
@click.option("--batch", is_flag=True, help="Use the provider's batch API (half price, results within 24 h).")
@click.option("--dry-run", is_flag=True, help="Print the token and cost estimate; send nothing.")
@click.option("--budget", type=float, default=None, help="Hard stop in USD: never send a request that could pass it.")
@click.option("--new-run", is_flag=True, help="Start a fresh run of the same config (to measure drift).")
@click.option("--rpm", type=float, default=None, help="Client-side limit of requests per minute.")
@click.option("--tpm", type=float, default=None, help="Client-side limit of tokens per minute.")
@pass_ctx
@clean_errors
def judge_run(ctx: Ctx, golden_set: str, rubric: str, judge_id: str, repeats: int | None, concurrency: int,
              limit: int | None, batch: bool, dry_run: bool, budget: float | None, new_run: bool, rpm: float | None,
              tpm: float | None) -> None:
    """Run a judge on the golden set; an interrupted run resumes without paying twice.

    The same command on several machines (one --db) shares the run: each judgment is requested once.

    \b
    Example:
      workbench judge run -g demo -r demo-patch-quality -j lenient-mini --dry-run
      workbench judge run -g demo -r demo-patch-quality -j lenient-mini --repeats 2 --budget 5
    """
    from workbench.features.judging import service as judging

    check_run_options(concurrency=concurrency, limit=limit, budget=budget, repeats=repeats, rpm=rpm, tpm=tpm)
    if dry_run:
        e = judging.estimate(ctx.store, golden_set, rubric, judge_id, repeats=repeats, limit=limit, batch=batch,
                             new_run=new_run)
        from workbench.calibration.presentation import estimate_sentence

        click.echo(f"{e.model}: {estimate_sentence(e)} (price table {e.price_table_version}).")
        return
    with ProgressBars("Judging", show_cost=True) as bars:
        summary = judging.run_summary(ctx.store, golden_set, rubric, judge_id, repeats=repeats, limit=limit,
                                      concurrency=concurrency, budget_usd=budget, new_run=new_run, batch=batch,
                                      requests_per_minute=rpm, tokens_per_minute=tpm, progress=bars.update)
    _print_run(summary, judge_id, batch=batch)


def _print_run(summary: RunSummary, judge_id: str, *, batch: bool) -> None:
    if batch:
        click.echo(f"Run {summary.run}: batch mode; " + ", ".join(f"{k} {v}" for k, v in summary.to_json().items()
                                                                  if k not in ("run", "judge", "model")))
        return
    r = summary.report
    if r.cost_unknown and not r.cost_usd:
        cost = "unknown (the model is not in the price table)"
    else:
        cost = fmt_usd(r.cost_usd, 4) + (" (some costs unknown)" if r.cost_unknown else "")
    shared = f", {r.n_elsewhere} stored by other runners of the run" if r.n_elsewhere or r.n_dropped else ""
    click.echo(f"Run {summary.run} of {judge_id}: {r.n_recorded} judgments recorded ({r.n_unscored} unscored), "
               f"{r.n_skipped} already done, {r.n_failed} failed{shared}; cost {cost}; {r.n_requests} requests in "
               f"{r.wall_s:.1f} s.")
    for f in r.failures[:5]:
        click.echo(f"  failure: {f}", err=True)
    if r.stopped:
        click.echo(f"Stopped ({r.stopped}); run the same command again to resume.", err=True)
    elif not summary.complete:
        click.echo("Some judgments failed; run the same command again to retry them.", err=True)
