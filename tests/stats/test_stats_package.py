"""The stats package stays pure (numpy/scipy/pandas/sklearn/krippendorff/statsmodels and stdlib only).

Its docstring examples run with every other module's in tests/test_architecture.py."""

import ast
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import workbench.stats as stats

ALLOWED = {"numpy", "scipy", "pandas", "sklearn", "krippendorff", "statsmodels"}
STATS_DIR = Path(stats.__file__).parent


@pytest.mark.parametrize("path", sorted(STATS_DIR.rglob("*.py")), ids=lambda p: p.relative_to(STATS_DIR).as_posix())
def test_imports_only_numeric_libraries_and_stdlib(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside workbench.stats
                continue
            names = [node.module]
        else:
            continue
        for name in names:
            if name == "workbench.stats" or name.startswith("workbench.stats."):
                continue  # inside the package itself
            top = name.split(".")[0]
            assert top in ALLOWED or top in sys.stdlib_module_names, f"{path.name} imports {name}"


def test_public_api_is_exported():
    for name in stats.__all__:
        assert hasattr(stats, name), name


def test_jsonable_turns_nan_into_null():
    report = stats.agreement_with_intervals([0] * 5, [0] * 5, None, scale=(-1, 0, 1), pass_threshold=0,
                                            resamples=50)
    text = json.dumps(stats.jsonable(report), allow_nan=False)
    assert json.loads(text)["metrics"]["cohen_kappa"]["value"] is None
    assert stats.jsonable({"a": np.float64(1.5), "b": np.int64(2), "c": (np.bool_(True),)}) == \
        {"a": 1.5, "b": 2, "c": [True]}
