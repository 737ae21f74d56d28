"""Mapping a tool's values onto the rubric's scale, explicitly: nothing is guessed.

A map file (``--map FILE``, YAML or JSON) or the rubric's ``import_maps:`` holds
one map per score name (a scorer, metric, assessment or score name of the
source; ``"*"`` for any other name)::

    correctness:                      # Inspect's model_graded_qa letters
      categorical: {C: 1, P: 0, I: -1, N: null}    # null: unscored
    helpfulness:
      boolean: {true: 0, false: -1}   # the pass and the fail level
    Answer Relevancy:                 # a continuous score, cut into levels
      cut_points: [0.5, 0.9]          # below 0.5 -> -1, from 0.5 below 0.9 -> 0, from 0.9 -> 1
      levels: [-1, 0, 1]              # default: the scale's values, lowest first
      range: [0, 1]                   # optional: a value outside is refused

A value that its map does not cover (or a name without a map) is an error
naming the source record; a map level that is not on the rubric's scale is
refused before anything is read.
"""

from __future__ import annotations

import bisect
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.errors import InputError, SourceError
from workbench.core.formats import check_values
from workbench.core.inputs import unknown_key
from workbench.core.scale import Scale
from workbench.core.strict_yaml import load_yaml, read_utf8

KINDS = ("categorical", "boolean", "cut_points", "levels", "range")
UNSCORED = object()  # a value the map sends to "unscored" (null in a categorical table)


@dataclass(frozen=True)
class ValueMap:
    """One name's map: a categorical table, a boolean pair and/or cut points onto levels."""

    name: str
    categorical: dict[str, int | None]
    boolean: dict[bool, int]
    cut_points: tuple[float, ...] = ()
    levels: tuple[int, ...] = ()
    range: tuple[float, float] | None = None

    def apply(self, value: Any) -> int | None | object:
        """The scale value, UNSCORED, or None when the map does not cover the value."""
        if isinstance(value, bool):
            return self.boolean.get(value)
        for key in _keys(value):
            if key in self.categorical:
                level = self.categorical[key]
                return UNSCORED if level is None else level
        if isinstance(value, (int, float)) and self.cut_points and math.isfinite(value):
            if self.range is not None and not self.range[0] <= value <= self.range[1]:
                return None
            return self.levels[bisect.bisect_right(self.cut_points, value)]
        return None

    def describe(self) -> str:
        parts = []
        if self.categorical:
            parts.append("values " + ", ".join(map(str, self.categorical)))
        if self.boolean:
            parts.append("true/false")
        if self.cut_points:
            where = f" within {self.range[0]:g} to {self.range[1]:g}" if self.range else ""
            parts.append(f"numbers{where} cut at {', '.join(f'{c:g}' for c in self.cut_points)}")
        return " and ".join(parts) or "nothing"


def _keys(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value, value.strip()]
    if isinstance(value, float) and value.is_integer():
        return [str(int(value)), str(value)]
    if isinstance(value, (int, float)):
        return [str(value)]
    return []


class ImportMaps:
    """The maps of one import, checked against the rubric's scale; ``where`` names their origin in errors."""

    def __init__(self, maps: dict[str, ValueMap], where: str):
        self.maps, self.where = maps, where

    @classmethod
    def parse(cls, raw: Any, scale: Scale, where: str) -> "ImportMaps":
        if raw is None:
            return cls({}, where)
        if not isinstance(raw, dict):
            raise InputError("an import map must be a mapping of score names to maps", file=where,
                             fix="write e.g.  correctness: {categorical: {C: 1, I: -1}}")
        return cls({str(name): _value_map(str(name), spec, scale, where) for name, spec in raw.items()}, where)

    @classmethod
    def load(cls, path: str | Path, scale: Scale) -> "ImportMaps":
        path = Path(path)
        if not path.exists():
            raise InputError("file not found", file=str(path), fix="check the path given to --map")
        # the input edge: the size limit, UTF-8, then the strict YAML loader (no aliases, duplicate keys, .nan)
        text = read_utf8(path, kind="import map")
        if path.suffix.lower() == ".json":
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as e:
                raise InputError(f"malformed JSON at column {e.colno} ({e.msg})", file=path.name, line=e.lineno,
                                 fix="write the map as YAML or JSON") from None
            except RecursionError:
                raise InputError("the JSON nests too deeply", file=path.name, fix="flatten the map") from None
            check_values(raw, file=path.name, line=None)
        else:
            raw, _ = load_yaml(text, file=path.name)
        return cls.parse(raw, scale, path.name)

    def for_name(self, name: str) -> ValueMap | None:
        return self.maps.get(name) or self.maps.get("*")

    def score(self, source: str, record: int, field: str, name: str, value: Any) -> int | object:
        """The scale value of a source value (or UNSCORED); SourceError naming the record when not covered."""
        vm = self.for_name(name)
        shown = json.dumps(value, ensure_ascii=False, default=str)[:60]
        if vm is None:
            raise SourceError(source, record, f"no import map for '{name}' (value {shown})", field=field,
                              fix=f"add a map for '{name}' (or '*') to --map or the rubric's import_maps, e.g. "
                                  f"{_example(value, name)}")
        level = vm.apply(value)
        if level is None:
            raise SourceError(source, record, f"value {shown} of '{name}' is not covered by its map in "
                                              f"{self.where} (it covers {vm.describe()})", field=field,
                              fix="add the value to the map")
        return level


def _example(value: Any, name: str) -> str:
    key = json.dumps(name) if not name.isidentifier() else name
    if isinstance(value, bool):
        return f"{key}: {{boolean: {{true: 0, false: -1}}}}"
    if isinstance(value, (int, float)):
        return f"{key}: {{cut_points: [0.5, 0.9]}}"
    return f"{key}: {{categorical: {{{value}: 0}}}}"


def _value_map(name: str, spec: Any, scale: Scale, where: str) -> ValueMap:
    def bad(problem: str, fix: str) -> InputError:
        return InputError(problem, file=where, field=name, fix=fix)

    if not isinstance(spec, dict) or not spec:
        raise bad("must be a mapping with categorical, boolean or cut_points",
                  "write e.g. {categorical: {C: 1, I: -1}}")
    for key in spec:
        if key not in KINDS:
            raise unknown_key(key, KINDS, file=where, field=name)

    def on_scale(level: Any, what: str) -> int:
        if isinstance(level, bool) or not isinstance(level, int) or level not in scale:
            raise bad(f"{what} maps to {level!r}, which is not on the rubric's scale {scale.describe()}",
                      "map onto the scale's values")
        return level

    table = spec.get("categorical") or {}
    if not isinstance(table, dict):
        raise bad("categorical must be a table of value: level", "write e.g. {C: 1, P: 0, I: -1}")
    categorical = {str(k): (None if v is None else on_scale(v, f"value {k!r}")) for k, v in table.items()}
    boolean_raw = spec.get("boolean") or {}
    if not isinstance(boolean_raw, dict) or not set(boolean_raw) <= {True, False, "true", "false", "pass", "fail"}:
        raise bad("boolean must give the levels of true and false", "write {true: 0, false: -1}")
    boolean = {str(k).lower() in ("true", "pass"): on_scale(v, f"{k}") for k, v in boolean_raw.items()}
    cuts = spec.get("cut_points") or []
    if not isinstance(cuts, list) or not all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in cuts) \
            or list(cuts) != sorted(set(cuts)):
        raise bad("cut_points must be increasing numbers", "write e.g. [0.5, 0.9]")
    levels: tuple[int, ...] = ()
    if cuts:
        raw_levels = spec.get("levels")
        if raw_levels is None:
            if len(scale.values) != len(cuts) + 1:
                raise bad(f"{len(cuts)} cut points make {len(cuts) + 1} levels but the scale has "
                          f"{len(scale.values)}", "give the levels, e.g. levels: [-1, 0, 1]")
            raw_levels = list(scale.values)
        if not isinstance(raw_levels, list) or len(raw_levels) != len(cuts) + 1:
            raise bad("levels must list one more level than there are cut points",
                      "write e.g. cut_points: [0.5, 0.9] with levels: [-1, 0, 1]")
        levels = tuple(on_scale(v, "a level") for v in raw_levels)
    elif "levels" in spec:
        raise bad("levels are given without cut_points", "add cut_points, or remove levels")
    rng = spec.get("range")
    if rng is not None and (not isinstance(rng, list) or len(rng) != 2 or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in rng) or rng[0] > rng[1]):
        raise bad("range must be [low, high]", "write e.g. range: [0, 1]")
    if not (categorical or boolean or cuts):
        raise bad("maps nothing", "give categorical, boolean or cut_points")
    return ValueMap(name, categorical, boolean, tuple(float(c) for c in cuts), levels,
                    (float(rng[0]), float(rng[1])) if rng else None)
