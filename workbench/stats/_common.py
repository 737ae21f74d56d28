"""Input validation and small helpers shared by every statistics module.

Every public function in ``workbench.stats`` checks its inputs here first, so a
bad call fails with one plain sentence (a ``ValueError``) naming the argument,
what was expected and what came, before any number is computed.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

#: Shown for every metric when no pair of labels is left to compare.
NO_ITEMS = "there are no items with both a consensus label and a judge score"
#: Shown for every metric when a single pair of labels is left.
ONE_ITEM = "only one item has both a consensus label and a judge score; agreement needs at least two"


#: The package whose ``__init__`` :func:`special_functions` avoids, and its compiled ufuncs.
SPECIAL, SPECIAL_UFUNCS = "scipy.special", "scipy.special._ufuncs"


def special_functions() -> ModuleType:
    """scipy.special's compiled ufuncs (``ndtr``, ``ndtri``, ``stdtr``, ``stdtrit``: the same objects
    ``scipy.special`` exports), without running ``scipy.special``'s ``__init__``.

    That ``__init__`` wraps every function for the array API, which imports numpy.f2py and numpy.testing: 0.15 to
    0.3 s of each computed report, for four ufuncs that load in 5 ms. While the extension modules load, their
    package is a bare module (their relative imports need it), removed again at once, so a later
    ``import scipy.special`` runs the real ``__init__`` and finds them already loaded.
    """
    if SPECIAL in sys.modules:  # imported already (the UI preloads it): nothing to save
        return sys.modules[SPECIAL]
    if SPECIAL_UFUNCS not in sys.modules:
        sys.modules[SPECIAL] = importlib.util.module_from_spec(importlib.util.find_spec(SPECIAL))
        try:
            importlib.import_module(SPECIAL_UFUNCS)
        finally:
            del sys.modules[SPECIAL]
    return sys.modules[SPECIAL_UFUNCS]


def check_scale(scale: Any) -> np.ndarray:
    """Return the scale as a sorted int64 array, or raise if it is not a usable scale."""
    try:
        values = list(scale)
    except TypeError:
        raise ValueError(f"scale must be a sequence of integers such as (-1, 0, 1), got {scale!r}") from None
    ok = len(values) >= 2 and all(_is_integral(v) for v in values)
    if ok:
        arr = np.asarray([int(v) for v in values], dtype=np.int64)
        ok = bool(np.all(np.diff(arr) > 0))
    if not ok:
        raise ValueError(
            f"scale must list at least two distinct integer values, lowest first, such as (-1, 0, 1); got {values!r}"
        )
    return arr


def describe_scale(scale: np.ndarray) -> str:
    return "(" + ", ".join(str(int(v)) for v in scale) + ")"


def check_pass_threshold(pass_threshold: Any, scale: np.ndarray) -> int:
    """Return the position of the lowest passing value on the scale."""
    if not _is_integral(pass_threshold) or int(pass_threshold) not in set(scale.tolist()):
        raise ValueError(
            f"pass_threshold {pass_threshold!r} is not a value of the scale {describe_scale(scale)}; "
            "give the lowest passing value"
        )
    index = int(np.searchsorted(scale, int(pass_threshold)))
    if index == 0:
        raise ValueError(
            f"pass_threshold {pass_threshold} is the lowest value of the scale {describe_scale(scale)}, "
            "so no score could fail; give a higher value"
        )
    return index


def score_codes(values: Any, *, name: str, scale: np.ndarray) -> np.ndarray:
    """Positions of scores on the scale (0 = lowest), with -1 for a missing score.

    Missing scores (None, NaN, pandas NA) are allowed: they stand for unscored
    judgments or unresolved consensus labels, which callers exclude and count.
    Anything else that is not a value of the scale is refused.
    """
    arr = _as_1d(values, name=name)
    if arr.dtype == object:
        missing = np.asarray(pd.isna(arr), dtype=bool)
    elif arr.dtype.kind == "f":
        missing = np.isnan(arr)
    else:
        missing = np.zeros(len(arr), dtype=bool)
    present = arr[~missing]
    numeric = None
    if arr.dtype.kind in "iuf" or (
            arr.dtype == object and pd.api.types.infer_dtype(present, skipna=False)
            in ("integer", "floating", "mixed-integer-float", "empty")):
        numeric = present.astype(np.float64)
    if numeric is None:
        bad = next((v for v in present if not isinstance(v, (int, float, np.integer, np.floating))
                    or isinstance(v, (bool, np.bool_))), present[0] if len(present) else None)
        if isinstance(bad, np.generic):
            bad = bad.item()
        raise ValueError(f"{name} scores must be numbers on the scale {describe_scale(scale)}, got {bad!r}")
    codes = np.full(len(arr), -1, dtype=np.int64)
    pos = np.searchsorted(scale, numeric)
    pos_clipped = np.minimum(pos, len(scale) - 1)
    on_scale = scale[pos_clipped] == numeric
    if not on_scale.all():
        first = int(np.flatnonzero(~on_scale)[0])
        where = int(np.flatnonzero(~missing)[first])
        raise ValueError(
            f"{name} score {_show(present[first])} at position {where} is not on the scale {describe_scale(scale)}"
        )
    codes[~missing] = pos_clipped
    return codes


def check_same_length(**arrays: np.ndarray) -> int:
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"inputs must have one entry per item, aligned by position; {shown}")
    return next(iter(lengths.values()))


def cluster_codes(clusters: Any, n_items: int) -> tuple[np.ndarray, int]:
    """Integer codes 0..G-1 of the clusters (task ids); ``None`` makes every item its own cluster."""
    if clusters is None:
        return np.arange(n_items, dtype=np.int64), n_items
    arr = _as_1d(clusters, name="clusters")
    if len(arr) != n_items:
        raise ValueError(f"clusters has {len(arr)} entries but there are {n_items} items; give one task_id per item")
    codes, uniques = pd.factorize(pd.Series(arr, dtype=object), sort=False)
    if (codes < 0).any():
        where = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(f"clusters has a missing task_id at position {where}; use the item id when there is no task")
    return codes.astype(np.int64), len(uniques)


def check_bootstrap_options(resamples: Any, seed: Any, level: Any) -> None:
    if not _is_integral(resamples) or int(resamples) < 1:
        raise ValueError(f"resamples must be a positive integer such as 2000, got {resamples!r}")
    if not _is_integral(seed) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer so the report can be reproduced, got {seed!r}")
    check_level(level)


def check_level(level: Any) -> None:
    if not isinstance(level, (int, float)) or not 0 < float(level) < 1:
        raise ValueError(f"level must be a confidence level strictly between 0 and 1 such as 0.95, got {level!r}")


def check_frame(frame: Any, *, name: str, columns: Iterable[str]) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame with columns {list(columns)}, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks the column(s) {missing}; expected columns {list(columns)}")
    return frame


def as_score_map(scores: Any, *, name: str) -> pd.Series:
    """A mapping or Series item_id -> score as a Series, without missing scores."""
    if isinstance(scores, pd.Series):
        series = scores
    elif isinstance(scores, Mapping):
        series = pd.Series(dict(scores), dtype=object)
    else:
        raise ValueError(
            f"{name} must be a mapping or pandas Series from item_id to score, got {type(scores).__name__}")
    if series.index.has_duplicates:
        dup = series.index[series.index.duplicated()][0]
        raise ValueError(f"{name} has two scores for item {dup!r}; give one score per item")
    return series[~pd.isna(series)]


def jsonable(obj: Any) -> Any:
    """Copy of a report with NaN and infinities as None and numpy scalars as Python numbers.

    ``json.dumps`` writes NaN as a bare ``NaN``, which is not JSON; reports
    pass through here before they are printed with ``--json`` or stored.
    """
    if isinstance(obj, Mapping):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if obj is pd.NA or obj is pd.NaT:  # missing values of nullable and string columns (pandas 3)
        return None
    return obj


def _is_integral(v: Any) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, np.integer)):
        return True
    if isinstance(v, (float, np.floating)):
        return math.isfinite(v) and float(v).is_integer()
    return False


def _as_1d(values: Any, *, name: str) -> np.ndarray:
    if isinstance(values, (pd.Series, pd.Index)):
        arr = values.to_numpy(dtype=object if values.dtype.kind not in "iuf" else None)
    else:
        arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one entry per item), got shape {arr.shape}")
    if arr.dtype.kind in "US":
        arr = arr.astype(object)
    return arr


def _show(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return repr(v) if isinstance(v, str) else str(v)
