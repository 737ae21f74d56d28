"""Rubric versions: add a YAML file, look a version up, list them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..rubrics import load_rubric, rubric_from_dict
from ..models import Rubric
from ..names import check_name
from ..store import Store


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


def _from_row(row: dict, created: bool = False) -> RubricVersion:
    return RubricVersion(row["id"], row["name"], row["version"], row["hash"], rubric_from_dict(row["content"]), created)


def add_rubric(store: Store, path: str | Path) -> RubricVersion:
    """Store the file's rubric; unchanged content is the same version, changed content is version N+1."""
    return register_rubric(store, load_rubric(path))


def register_rubric(store: Store, rubric: Rubric) -> RubricVersion:
    """Store a parsed (or programmatically built) rubric; its names must pass the one name rule either way."""
    check_name(rubric.name, "rubric name")
    for j in rubric.judges:
        check_name(j.id, "judge id")
    return _from_row(*store.add_rubric_version(rubric))


def get_rubric(store: Store, name: str, version: int | None = None) -> RubricVersion:
    """The named version, or the latest."""
    return _from_row(store.rubric_row(name, version))


def get_rubric_by_id(store: Store, rubric_id: int) -> RubricVersion:
    return _from_row(store.rubric_row_by_id(rubric_id))


def list_rubrics(store: Store) -> list[dict]:
    return store.rubric_names()


def rubric_versions(store: Store, name: str) -> list[RubricVersion]:
    rows = store.rubric_versions(name)
    if not rows:
        store.rubric_row(name)  # raises NotFound with the fix
    return [_from_row(r) for r in rows]
