"""`workbench check`: the CI gate in front of grading: is the judge about to grade the approved one?"""

from __future__ import annotations

import sys

import click

from workbench.cli import EXIT_GATE_FAILED, Ctx, _shown, clean_errors, pass_ctx


def register(main: click.Group) -> None:
    @main.command("check")
    @click.argument("bundle", type=click.Path(dir_okay=False))
    @click.option("--judge-config", "judge_config", type=click.Path(dir_okay=False), default=None,
                  help="The judge about to grade: a file written by 'export --to promptfoo|inspect|mlflow', a rubric "
                       "YAML, or a judge entry (id, model, temperature, ...).")
    @pass_ctx
    @clean_errors
    def check(ctx: Ctx, bundle: str, judge_config: str | None) -> None:
        """Fail (exit 3) when the judge differs from the approved one, the bundle was edited or its golden set changed.

        \b
        Prints one sentence per problem. The golden set is compared with the
        workspace database when there is one (--db); without one it says so.
        Example:
          workbench check rubrics/approved/demo-patch-quality@v2--careful-single.yaml \\
              --judge-config rubrics/approved/demo-patch-quality@v2--careful-single.promptfoo.yaml
        """
        from workbench.services.judge_check import check_bundle

        db = ctx.workspace.db
        store = ctx.store if str(db) == ":memory:" or db.exists() else None
        result = check_bundle(bundle, judge_config=judge_config, store=store, db_name=_shown(db))
        for line in result.compared:
            click.echo(f"ok: {line}")
        for line in result.problems:
            click.secho(f"FAIL: {line}", fg="red", err=True)
        if not result.ok:
            sys.exit(EXIT_GATE_FAILED)
        click.echo(f"The judge is the approved one ({len(result.compared)} comparisons).")
