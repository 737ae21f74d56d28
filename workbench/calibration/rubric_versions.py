"""Rubric versions: add a YAML file, look a version up, list them."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path

from workbench.core.errors import InputError, NotFound
from workbench.judges.rubrics import load_rubric, rubric_from_dict
from workbench.core.models import Rubric
from workbench.core.names import check_name
from workbench.store import Store, audit


@dataclass(frozen=True)
class RubricVersion:
    id: int
    name: str
    version: int
    hash: str
    rubric: Rubric
    created: bool = False

    def off_scale(self, score: int) -> str | None:
        """The sentence for a score that is not on this rubric's scale, or None when it is."""
        if score in self.rubric.scale:
            return None
        return f"score {score} is not on the scale of rubric '{self.name}' {self.rubric.scale.describe()}"

    def require_on_scale(self, score: int) -> None:
        if (problem := self.off_scale(score)) is not None:
            raise InputError(problem, fix="use one of the scale's values")


@dataclass(frozen=True, slots=True)
class RubricRow:
    """A row of the rubrics table, its content parsed from JSON by the store."""

    id: int
    name: str
    version: int
    hash: str
    content: dict
    created_at: str


@dataclass(frozen=True, slots=True)
class RubricSummary:
    """A rubric's name, latest version and number of versions (``Store.rubric_names``)."""

    name: str
    latest_version: int
    n_versions: int


@dataclass(frozen=True, slots=True)
class JudgeRow:
    """A judge a rubric version declares, as stored (``Store.judge_row``): ``pk`` is what its runs point to."""

    pk: int
    rubric_id: int
    judge_id: str
    model: str
    family: str | None
    config: dict
    config_hash: str


def judge_row(store: Store, rubric_id: int, judge_id: str) -> JudgeRow:
    """The judge's row under the rubric version (NotFound naming the judges it declares)."""
    return JudgeRow(**store.judge_row(rubric_id, judge_id))


def _from_row(row: dict, created: bool = False) -> RubricVersion:
    r = RubricRow(**row)
    return RubricVersion(r.id, r.name, r.version, r.hash, rubric_from_dict(r.content), created)


def add_rubric(store: Store, path: str | Path, *, actor: str | None = None) -> RubricVersion:
    """Store the file's rubric; unchanged content is the same version, changed content is version N+1."""
    return register_rubric(store, load_rubric(path), actor=actor)


def register_rubric(store: Store, rubric: Rubric, *, actor: str | None = None) -> RubricVersion:
    """Store a parsed (or programmatically built) rubric; its names must pass the one name rule either way.

    A new version is written to the audit log in the same transaction, under ``actor`` (the lead, in the UI;
    else the command line's user: ``store.audit.who``).
    """
    check_name(rubric.name, "rubric name")
    for j in rubric.judges:
        check_name(j.id, "judge id")
    with store.transaction():
        rv = _from_row(*store.add_rubric_version(rubric))
        if rv.created:
            audit.record(store, actor=actor, action="rubric.version_added", target=f"{rv.name}@v{rv.version}",
                         detail={"hash": rv.hash, "judges": [j.id for j in rv.rubric.judges]})
        return rv


def get_rubric(store: Store, name: str, version: int | None = None) -> RubricVersion:
    """The named version, or the latest."""
    try:
        return _from_row(store.rubric_row(name, version))
    except NotFound:
        base, pinned = split_rubric_ref(name)
        if version is None and pinned is not None and store.rubric_versions(base):
            raise NotFound(f"'{name}' names version {pinned} of rubric '{base}', and this command works on the "
                           f"rubric's current version; give --rubric {base} (export, calibrate, report and import "
                           "judgments take NAME@vN).") from None
        raise


def get_rubric_by_id(store: Store, rubric_id: int) -> RubricVersion:
    return _from_row(store.rubric_row_by_id(rubric_id))


# ``--rubric NAME@vN`` names version N of rubric NAME (``NAME`` alone: a command's own default version)
_REF = re.compile(r"(?P<name>.+)@v(?P<version>[1-9][0-9]{0,17})")  # up to 18 digits: an SQLite integer


def split_rubric_ref(ref: str) -> tuple[str, int | None]:
    """``NAME@vN`` -> (NAME, N); anything else -> (ref, None). Reads no store: see :func:`rubric_ref`.

    >>> split_rubric_ref("demo-patch-quality@v2")
    ('demo-patch-quality', 2)
    >>> split_rubric_ref("demo-patch-quality")
    ('demo-patch-quality', None)
    >>> split_rubric_ref("demo@v99999999999999999999")  # no version: too long for one, so a name (not found)
    ('demo@v99999999999999999999', None)
    >>> split_rubric_ref("team@example.com")
    ('team@example.com', None)
    """
    m = _REF.fullmatch(ref)
    return (m["name"], int(m["version"])) if m else (ref, None)


def rubric_ref(store: Store, ref: str) -> tuple[str, int | None]:
    """The rubric's name and the version asked for (None: not pinned).

    A rubric whose own name ends in ``@vN`` (names may contain '@') keeps meaning itself.
    """
    name, version = split_rubric_ref(ref)
    if version is not None and store.rubric_versions(ref):
        return ref, None
    return name, version


def get_rubric_ref(store: Store, ref: str) -> RubricVersion:
    """``NAME`` -> the newest version; ``NAME@vN`` -> version N (NotFound naming the versions there are)."""
    name, version = rubric_ref(store, ref)
    if version is None:
        return get_rubric(store, name)
    try:
        return get_rubric(store, name, version)
    except NotFound:
        versions = [RubricRow(**r).version for r in store.rubric_versions(name)]
        if not versions:
            raise
        raise NotFound(f"rubric '{name}' has no version {version} (versions: "
                       f"{', '.join(f'v{v}' for v in versions)}); name one of them, e.g. --rubric "
                       f"{name}@v{versions[-1]}") from None


# A refinement candidate is registered as a rubric of its own (so its judge runs and reports stay apart from the
# rubric it refines) under this name, until a lead accepts it as the base rubric's next version.
CANDIDATE_NAME = re.compile(r"\.refine-\d+\.r\d+$")


def candidate_name(rubric: str, session_id: int, number: int) -> str:
    return f"{rubric}.refine-{session_id}.r{number}"


def is_refine_candidate(name: str) -> bool:
    return CANDIDATE_NAME.search(name) is not None


def rubric_summaries(store: Store, *, candidates: bool = True) -> list[RubricSummary]:
    """Each rubric's name, latest version and count; ``candidates=False`` leaves out refinement candidates."""
    rows = [RubricSummary(**r) for r in store.rubric_names()]
    return rows if candidates else [r for r in rows if not is_refine_candidate(r.name)]


def list_rubrics(store: Store, *, candidates: bool = True) -> list[dict]:
    """:func:`rubric_summaries` as dicts (name, latest_version, n_versions), for the pages."""
    return [asdict(r) for r in rubric_summaries(store, candidates=candidates)]


def rubric_versions(store: Store, name: str) -> list[RubricVersion]:
    rows = store.rubric_versions(name)
    if not rows:
        store.rubric_row(name)  # raises NotFound with the fix
    return [_from_row(r) for r in rows]
