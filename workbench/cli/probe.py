"""`workbench probe`: run a judge on perturbed golden items and show what moves it."""

from __future__ import annotations

import click

from workbench.cli.common import Ctx, ProgressBars, _echo_json, check_run_options, clean_errors, pass_ctx


def print_probe_report(report: dict | None) -> None:
    """One row per probe: shift, flip and robustness rates with intervals, the change against the humans."""
    from workbench.calibration.presentation import probe_text
    from workbench.calibration.report import Probes

    for line in probe_text(Probes.from_json(report) if report else None):
        click.echo(line)


def _not_applicable(names: list[str]) -> None:
    if names:
        click.echo(f"Not applicable to these items (nothing to perturb): {', '.join(names)}.")


def register(main: click.Group) -> None:
    @main.command("probe")
    @click.option("--golden-set", "-g", required=True, help="Golden set whose items are perturbed.")
    @click.option("--rubric", "-r", required=True, help="Rubric declaring the judge.")
    @click.option("--judge", "-j", "judge_id", required=True, help="Judge to stress.")
    @click.option("--probes", default=None, metavar="LIST",
                  help="Comma-separated probes or kinds (default: all): authorship-self, authorship-family, "
                       "authorship-other, verbosity, authority-approved, authority-rejected, injection, order, "
                       "pushback.")
    @click.option("--limit", type=int, default=None, help="Perturb only the first N judged items.")
    @click.option("--budget", type=float, default=None, help="Hard stop in USD over all probes.")
    @click.option("--concurrency", default=8, show_default=True, help="Requests in flight at most.")
    @click.option("--dry-run", is_flag=True, help="Print the token and cost estimate; send nothing.")
    @click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
    @pass_ctx
    @clean_errors
    def probe(ctx: Ctx, golden_set: str, rubric: str, judge_id: str, probes: str | None, limit: int | None,
              budget: float | None, concurrency: int, dry_run: bool, as_json: bool) -> None:
        """Re-run a judge on deterministic perturbations of golden items and compare with its verdicts.

        Each probe is its own run (resumable, costed, never a calibration run) on the items the judge's
        current run has scored; the report gives each probe's mean score shift, flip rate and robustness
        rate with paired cluster-bootstrap intervals.

        \b
        Example:
          workbench probe -g demo -r demo-patch-quality -j test-results --dry-run
          workbench probe -g demo -r demo-patch-quality -j noisy-llama --probes verbosity,injection --budget 2
        """
        from workbench.features.probes import service as probe_service

        check_run_options(concurrency=concurrency, limit=limit, budget=budget)
        names = [n for n in (probes or "").split(",") if n.strip()] or None
        if dry_run:
            e = probe_service.estimate(ctx.store, golden_set, rubric, judge_id, probes=names, limit=limit)
            if as_json:
                _echo_json(e.to_json())
                return
            for p in e.probes:
                r = p.estimate
                cost = "unknown" if r.cost_usd is None else f"${r.cost_usd:.2f}"
                click.echo(f"{p.probe:20s}{r.n_to_run:>5} of {r.n_planned:>5} judgments to run; "
                           f"estimated cost {cost}")
            total = ("unknown (no price for this model)" if e.cost_usd is None
                     else f"${e.cost_usd:.2f}, at most ${e.max_cost_usd:.2f}")
            click.echo(f"{e.model}: {e.n_to_run} judgments to run over {len(e.probes)} probes; "
                       f"estimated cost {total}.")
            _not_applicable(e.not_applicable)
            return
        with ProgressBars("Probe") as bars:
            result = probe_service.run(ctx.store, golden_set, rubric, judge_id, probes=names, limit=limit,
                                       budget_usd=budget, concurrency=concurrency, progress=bars.update_part)
        if as_json:
            _echo_json(result.to_json())
            return
        for run in result.runs:
            r = run.summary.report
            cost = ("unknown" if r.cost_unknown and not r.cost_usd else f"${r.cost_usd:.4f}")
            click.echo(f"Run {run.summary.run}: {r.n_recorded} judgments recorded ({r.n_unscored} unscored), "
                       f"{r.n_skipped} already done, {r.n_failed} failed; cost {cost}.")
        print_probe_report(result.report)
        _not_applicable(result.not_applicable)
        if result.stopped:
            click.echo(f"Stopped ({result.stopped}); run the same command again to resume.", err=True)
