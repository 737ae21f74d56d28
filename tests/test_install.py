"""An installed package works on its own (issue 12, item 2): no file of the source checkout is needed.

The package is built from a copy of the sources (``pyproject.toml``,
``README.md``, ``workbench/``) and installed, not editable, into a fresh venv
that sees this environment's dependencies; ``workbench demo --no-ui`` then
runs in an empty folder. Nothing is downloaded: the build uses this
environment's setuptools (the ``test`` extra asks for one that builds wheels by
itself) and the install takes no dependencies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

BIN = "Scripts" if os.name == "nt" else "bin"


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_", "PIP_", "PYTHONPATH"))}
    return {**env, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}


@pytest.mark.slow
def test_a_non_editable_install_runs_the_demo_in_an_empty_folder(tmp_path):
    pytest.importorskip("setuptools.command.bdist_wheel", reason="needs setuptools>=70.1 (pip install -e '.[test]')")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "workbench", src / "workbench", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))

    venv = tmp_path / "venv"
    env = _offline_env()
    # --without-pip: the venv would otherwise get an old setuptools of its own that cannot build a wheel
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], check=True,
                   timeout=300)
    python = venv / BIN / "python"
    proc = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", str(src)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    empty = tmp_path / "empty"
    empty.mkdir()
    where = subprocess.run([python, "-c", "import workbench; print(workbench.__file__)"], cwd=empty, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(venv), f"the demo would run from {where}, not from the installed package"

    proc = subprocess.run([venv / BIN / "workbench", "demo", "--no-ui"], cwd=empty, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SYNTHETIC demo: 150 items" in proc.stdout
    for path in ("workbench.db", "golden_sets/demo/items.jsonl", "golden_sets/demo/demo-patch-quality/labels.jsonl",
                 "rubrics/demo-patch-quality.yaml"):
        assert (empty / path).is_file(), path
    proc = subprocess.run([venv / BIN / "workbench", "golden-set", "list"], cwd=empty, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and "demo\t150 items" in proc.stdout, proc.stdout + proc.stderr
