"""Rubric versions named on the command line: ``NAME`` or ``NAME@vN``, resolved to the judge's data of that version.

``--rubric NAME`` means the newest version the judge has judgments of (``calibration.resolve``);
``--rubric NAME@vN`` means version N exactly: its own judge row, its own runs, and a refusal in one sentence
when the judge never ran it, never another version's judgments in its place.
The name and version are read by ``rubrics.rubric_ref``.

A command resolves its names once, into one :class:`Context` (the golden set's row, the rubric as given, the run),
and passes that down: the scopes, the consensus, the judges' data and the golden set's snapshot are read from the
store once each, when first asked for, and every service below takes them from the context.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Iterator

from workbench.core.models import GoldenSetRecord, Item
from workbench.core.errors import NotFound, WorkbenchError
from workbench.store import Store
from workbench.calibration.calibrate import JudgeData, Options, Scope, calibrate, judge_data, resolve
from workbench.calibration.golden_sets import Consensus, consensus, runs_of
from workbench.calibration.snapshots import current_snapshot
from workbench.calibration.rubric_versions import RubricVersion, get_rubric, get_rubric_ref, judge_row, rubric_ref


class VersionNotRun(WorkbenchError):
    """The judge has no judgments of the rubric version asked for: there is nothing of that version to approve."""


if TYPE_CHECKING:
    from workbench.calibration.report import CalibrationReport
    from workbench.core.workspace import Workspace


def resolve_ref(store: Store, golden_set: str, ref: str, judge: str, run: str | None = None, *,
                gs: GoldenSetRecord | None = None) -> Scope:
    """The judge's scope for ``--rubric NAME`` (newest version it ran) or ``--rubric NAME@vN`` (version N only);
    ``gs`` is the golden set's row when the caller has it."""
    name, version = rubric_ref(store, ref)
    if version is None:
        return resolve(store, golden_set, name, judge, run, gs=gs)
    gs = gs or store.golden_set(golden_set)
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


@dataclass
class Context:
    """One command's golden set, rubric (``NAME`` or ``NAME@vN``, as given) and run, resolved once, with what the
    command reads of them: each judge's scope, each rubric's consensus, each judge's data, the item index, the
    items and the golden set's snapshot, read from the store the first time they are asked for and then kept.

    ``run`` is the run asked for (``--run``): it names a run of the first judge only (a cascade's later judges are
    calibrated on their latest run), so :meth:`scope` takes the run explicitly.
    """

    store: Store
    golden_set: GoldenSetRecord
    rubric: str
    run: str | None = None
    _scopes: dict[tuple[str, str | None], Scope] = field(default_factory=dict, repr=False)
    _consensus: dict[str, Consensus] = field(default_factory=dict, repr=False)
    _data: dict[int, JudgeData] = field(default_factory=dict, repr=False)
    _index: list[dict] | None = field(default=None, repr=False)
    _items: list[Item] | None = field(default=None, repr=False)
    _snapshot: tuple[str, dict] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, store: Store, golden_set: str, rubric: str, run: str | None = None) -> Context:
        """The golden set looked up once; nothing else is read until it is asked for."""
        return cls(store, store.golden_set(golden_set), rubric, run)

    @classmethod
    @contextmanager
    def reading(cls, store: Store, golden_set: str, rubric: str, run: str | None = None) -> Iterator[Context]:
        """:meth:`of` inside one read snapshot of the database (``Store.read_snapshot``): every read of the block
        sees the same state, so a label written meanwhile cannot make two parts of one report disagree."""
        with store.read_snapshot():
            yield cls.of(store, golden_set, rubric, run)

    def scope(self, judge: str, run: str | None = None) -> Scope:
        """The judge's scope under the rubric as given (its version, its runs, the run chosen)."""
        key = (judge, run)
        if key not in self._scopes:
            self._scopes[key] = resolve_ref(self.store, self.golden_set.name, self.rubric, judge, run,
                                            gs=self.golden_set)
        return self._scopes[key]

    def consensus(self, rubric: str) -> Consensus:
        """The consensus of the golden set's labels under a rubric (by name, no version: labels have none)."""
        if rubric not in self._consensus:
            self._consensus[rubric] = consensus(self.store, self.golden_set.name, rubric, gs=self.golden_set)
        return self._consensus[rubric]

    def judge_data(self, scope: Scope) -> JudgeData:
        """Every judgment of the scope's judge on the golden set (all its runs), as a frame."""
        if scope.judge.pk not in self._data:
            self._data[scope.judge.pk] = judge_data(self.store, self.golden_set.name, scope.rubric.name,
                                                    scope.spec.id, scope=scope)
        data = self._data[scope.judge.pk]
        return data if data.scope is scope else JudgeData(scope, data.judgments)  # another run chosen

    def item_index(self) -> list[dict]:
        if self._index is None:
            self._index = self.store.item_index(self.golden_set.id)
        return self._index

    def items(self) -> list[Item]:
        if self._items is None:
            self._items = self.store.items(self.golden_set.id)
        return self._items

    def snapshot(self) -> tuple[str, dict]:
        """(hash, snapshot) of the golden set: what freezing it records, from the consensus read here."""
        if self._snapshot is None:
            rubrics = self.store.label_rubrics(self.golden_set.id)
            self._snapshot = current_snapshot(self.store, self.golden_set.name, gs=self.golden_set,
                                              known={r: self.consensus(r) for r in rubrics}, index=self.item_index(),
                                              rubrics=rubrics)
        return self._snapshot

    def report(self, judge: str, options: Options = Options(), *, workspace: Workspace | None = None,
               use_cache: bool = True) -> CalibrationReport:
        """The judge's calibration report on this context's reads (``options.run``: the run of ``judge``)."""
        return calibrate(self.store, self.golden_set.name, self.scope(judge, options.run).rubric.name, judge,
                         options, scope=self.scope(judge, options.run), workspace=workspace, use_cache=use_cache,
                         reads=self)
