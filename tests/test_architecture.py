"""Dependencies point one way (ui/cli -> services -> store, judges, stats): the import-linter contracts in
pyproject.toml, checked by import-linter itself; and the docstring examples of every module run."""

from __future__ import annotations

import doctest
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "workbench"
WITH_EXAMPLES = sorted(p for p in PKG.rglob("*.py") if ">>> " in p.read_text(encoding="utf-8"))


def test_import_linter_contracts_hold():
    # the CLI installed beside the running python (a venv need not be activated), else the one on PATH
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "import-linter is in the [test] extra: pip install -e '.[test]'"
    proc = subprocess.run([exe], cwd=PKG.parent, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    kept = re.search(r"Contracts: (\d+) kept, 0 broken", proc.stdout)
    assert kept and int(kept.group(1)) >= 6, proc.stdout[-1500:]


def test_the_ui_runs_no_sql():
    """No page or UI helper holds SQL text: queries live in workbench/store/ (import-linter sees imports, not strings)."""
    for f in PKG.joinpath("ui").rglob("*.py"):
        text = f.read_text(encoding="utf-8").upper()
        assert "SELECT " not in text and "INSERT INTO" not in text, f


def test_modules_with_examples_are_found():
    assert len(WITH_EXAMPLES) >= 10, WITH_EXAMPLES  # the search itself must not silently find nothing


@pytest.mark.parametrize("path", WITH_EXAMPLES, ids=lambda p: str(p.relative_to(PKG)))
def test_docstring_examples_run(path):
    """Every module that shows an example runs it, and an example doctest cannot collect (a missing blank line,
    an example in a comment) fails here instead of passing silently."""
    name = ".".join(path.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} shows '>>> ' examples but doctest collected none of them"
    assert result.failed == 0
