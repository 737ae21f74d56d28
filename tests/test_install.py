"""An installed package works on its own (issue 12, item 2; issue 26, item 1): it needs no file of the source
checkout and no package it does not declare.

The package is built as a wheel from a copy of the sources (``pyproject.toml``, ``README.md``, ``workbench/``)
with this environment's setuptools (the ``test`` extra asks for one that builds wheels by itself), and pip
installs that wheel, not editable, into a fresh venv made WITHOUT system site packages. The venv then holds
exactly the dependencies the wheel declares (its ``Requires-Dist``, extras left out) and theirs, nothing else:
each is linked in from this environment's installed copy (the files its RECORD lists), so nothing is
downloaded, and a module the package imports without declaring it fails here. ``pip check`` confirms the set
is consistent, a test-only package (pytest) is shown absent, and ``workbench demo --no-ui`` runs in an empty
folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

BIN = "Scripts" if os.name == "nt" else "bin"


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WORKBENCH_", "PIP_", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"))}
    return {**env, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}


def _requires_dist(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        text = zf.read(name).decode("utf-8")
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]


def _closure(requirements: list[str]) -> dict[str, metadata.Distribution]:
    """The installed distributions that ``requirements`` (without extras) need, with their own, by name."""
    dists: dict[str, metadata.Distribution] = {}
    done: set[tuple[str, str]] = set()
    todo = [(text, "") for text in requirements]
    while todo:
        text, extra = todo.pop()
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        if name not in dists:
            try:
                dists[name] = metadata.distribution(req.name)
            except metadata.PackageNotFoundError:
                pytest.fail(f"{req.name} (needed by the package: {text}) is not installed here")
        version = dists[name].version
        assert req.specifier.contains(version, prereleases=True), f"{req.name} {version} does not satisfy {text}"
        for e in ("", *sorted(req.extras)):
            if (name, e) not in done:
                done.add((name, e))
                todo += [(r, e) for r in dists[name].requires or []]
    return dists


def _link(dist: metadata.Distribution, site: Path) -> None:
    """Every top-level file and folder of an installed distribution (from its RECORD), linked into ``site``."""
    files = dist.files
    assert files, f"{dist.metadata['Name']} has no RECORD: its files cannot be found to link"
    root = Path(dist.locate_file(""))
    for top in sorted({f.parts[0] for f in files if f.parts and f.parts[0] not in ("..", "__pycache__")}):
        target = site / top
        if (root / top).exists() and not os.path.lexists(target):  # a namespace folder (google/) is linked once
            target.symlink_to(root / top)


@pytest.mark.slow
def test_a_non_editable_install_runs_the_demo_in_an_empty_folder(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "workbench", src / "workbench", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = _offline_env()

    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                           tmp_path / "wheels", src], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, "needs setuptools>=70.1 (pip install -e '.[test]')\n" + proc.stdout[-3000:] \
        + proc.stderr[-3000:]
    (wheel,) = (tmp_path / "wheels").glob("judge_workbench-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=300)
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    python = venv / BIN / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip())
    for dist in _closure(_requires_dist(wheel)).values():
        _link(dist, site)

    pip = [sys.executable, "-m", "pip", "--python", python]  # the venv has no pip of its own
    proc = subprocess.run([*pip, "install", "--no-deps", "--no-index", wheel], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    proc = subprocess.run([*pip, "check"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    empty = tmp_path / "empty"
    empty.mkdir()
    probe = "import importlib.util, workbench; print(workbench.__file__, importlib.util.find_spec('pytest'))"
    where, pytest_spec = subprocess.run([python, "-c", probe], cwd=empty, env=env, capture_output=True, text=True,
                                        check=True).stdout.split()
    assert Path(where).is_relative_to(venv), f"the demo would run from {where}, not from the installed package"
    assert pytest_spec == "None", "the venv sees a package the workbench does not declare (pytest)"

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
