"""Rubric versions named on the command line: ``NAME`` or ``NAME@vN``, resolved to the judge's data of that version.

``--rubric NAME`` means the newest version the judge has judgments of (``calibration.resolve``);
``--rubric NAME@vN`` means version N exactly: its own judge row, its own runs, and a refusal in one sentence
when the judge never ran it, never another version's judgments in its place.
The name and version are read by ``rubrics.rubric_ref``.
"""

from __future__ import annotations

from dataclasses import asdict

from workbench.core.models import GoldenSetRecord
from workbench.core.errors import NotFound, WorkbenchError
from workbench.store import Store
from workbench.calibration.calibrate import Scope, resolve
from workbench.calibration.golden_sets import runs_of
from workbench.calibration.rubric_versions import RubricVersion, get_rubric, get_rubric_ref, judge_row, rubric_ref


class VersionNotRun(WorkbenchError):
    """The judge has no judgments of the rubric version asked for: there is nothing of that version to approve."""


def resolve_ref(store: Store, golden_set: str, ref: str, judge: str, run: str | None = None) -> Scope:
    """The judge's scope for ``--rubric NAME`` (newest version it ran) or ``--rubric NAME@vN`` (version N only)."""
    name, version = rubric_ref(store, ref)
    if version is None:
        return resolve(store, golden_set, name, judge, run)
    gs = store.golden_set(golden_set)
    rv = get_rubric_ref(store, ref)
    try:
        row = judge_row(store, rv.id, judge)
    except NotFound:
        declared = ", ".join(j.id for j in rv.rubric.judges) or "none"
        raise NotFound(f"rubric '{name}' v{version} declares no judge '{judge}' (declared: {declared}); name a "
                       f"judge of that version, or the version that declares it") from None
    runs = [r for r in runs_of(store, gs.id, row.pk) if r.n_judgments]
    if not runs:
        raise VersionNotRun(not_run_sentence(store, gs, rv, judge))
    if run is None:
        chosen = runs[-1]
    else:
        chosen = next((r for r in runs if r.name == run), None)
        if chosen is None:
            raise NotFound(f"judge '{judge}' has no run '{run}' of rubric '{name}' v{version} "
                           f"(runs: {', '.join(r.name for r in runs)})")
    # the scope holds the store's rows as dicts (``calibrate.Scope``)
    return Scope(gs, rv, rv.rubric.judge(judge), asdict(row), [asdict(r) for r in runs], asdict(chosen))


def versions_run(store: Store, golden_set_id: int, name: str, judge: str) -> list[int]:
    """The versions of the rubric under which the judge has judgments on the golden set, oldest first."""
    return sorted({r.rubric_version for r in runs_of(store, golden_set_id)
                   if r.rubric_name == name and r.judge_id == judge and r.n_judgments})


def not_run_sentence(store: Store, gs: GoldenSetRecord, rv: RubricVersion, judge: str) -> str:
    """Why version N of the rubric cannot be calibrated or exported for this judge, and what to do instead."""
    name, version, golden_set = rv.name, rv.version, gs.name
    ran = versions_run(store, gs.id, name, judge)
    latest = get_rubric(store, name).version
    head = (f"judge '{judge}' has no judgments of rubric '{name}' v{version} on golden set '{golden_set}'"
            + (f" (it has judgments of {', '.join(f'v{v}' for v in ran)})" if ran else "")
            + f", so v{version} cannot be approved on them")
    if version == latest:
        fix = f"run it with 'workbench judge run -g {golden_set} -r {name} -j {judge}' or import its judgments"
    else:
        fix = f"v{version} is not the current version (v{latest}), so no judge can be run on it now"
    if ran:
        fix += f", or export a version it ran with '--rubric {name}@v{ran[-1]}'"
    return f"{head}; {fix}."
