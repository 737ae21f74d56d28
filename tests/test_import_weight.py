"""What a cached `workbench calibrate` imports: no numpy, pandas, scipy or statsmodels (issue 13: a cached repeat
in at most 0.5 s, of which importing pandas alone would take 0.4 s). Timings live in benchmarks/bench_cli.py; this
test keeps the structure that makes them possible from eroding (a module-level import in the wrong place)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT
from workbench.calibration.calibrate import calibrate

HEAVY = ("numpy", "pandas", "scipy", "statsmodels", "sklearn", "sqlite_utils", "altair", "streamlit")
PROBE = """
import json, sys
from workbench.cli import main
try:
    main({args!r}, standalone_mode=False)
finally:
    print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def run_cli(args: list[str], cwd, heavy: tuple[str, ...] = HEAVY) -> tuple[str, list[str]]:
    """The CLI in a fresh process: (its output, which of the ``heavy`` libraries it imported by then)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", PROBE.format(args=args, heavy=heavy)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)
    return proc.stdout, json.loads(proc.stderr.strip().splitlines()[-1])


def test_a_cached_calibrate_imports_no_numerical_library(demo_store, tmp_path):
    calibrate(demo_store, "demo", "demo-patch-quality", "careful-sonnet")  # computed and cached here
    demo_store.close()
    out, imported = run_cli(["--db", demo_store.path, "--project", str(tmp_path), "calibrate", "-g", "demo",
                             "-r", "demo-patch-quality", "-j", "careful-sonnet", "--json"], tmp_path)
    report = json.loads(out)
    assert report["judge"]["id"] == "careful-sonnet" and report["metrics"]["krippendorff_alpha_ordinal"]["value"]
    assert imported == []


# What a computed report must not import: scipy.stats and statsmodels' model classes (with the formula machinery
# they pull in) are 0.6 s, statsmodels' tools 0.08 s, and scipy.special's __init__ 0.15-0.3 s (its array-API layer
# loads numpy.f2py and numpy.testing); the statistics load scipy.special's compiled ufuncs alone and compute the
# pinv and cluster sandwich themselves (tests/stats/test_library_equivalents.py holds them to the library calls'
# floats).
SLOW_TO_IMPORT = ("scipy.stats", "statsmodels", "formulaic", "scipy.special", "numpy.f2py", "numpy.testing")


def test_a_computed_calibrate_imports_neither_scipy_stats_nor_statsmodels_nor_scipy_special_init(demo_store, tmp_path):
    demo_store.close()
    # gpt4o-self judges items of its own family: the cluster-robust OLS runs and gives the effect a p-value
    out, imported = run_cli(["--db", demo_store.path, "--project", str(tmp_path), "calibrate", "-g", "demo",
                             "-r", "demo-patch-quality", "-j", "gpt4o-self", "--json"], tmp_path, heavy=SLOW_TO_IMPORT)
    report = json.loads(out)
    assert 0 < report["self_preference"]["same_family"]["p_value"] < 1
    assert report["alt_test"]["raters"] and report["noise_floor"]["metrics"]  # the t-tests and the quantiles ran
    assert imported == []


def test_help_imports_no_numerical_library(tmp_path):
    out, imported = run_cli(["--help"], tmp_path)
    assert "calibrate" in out
    assert imported == []


def test_a_computed_report_leaves_the_garbage_collector_and_blas_as_they_were(demo_store):
    # numpy is loaded here (as in the UI): the collector is paused for the computation only, nothing is frozen,
    # and the BLAS thread limit is lifted afterwards
    import gc

    import numpy  # noqa: F401  (loaded, as the UI has it)
    from threadpoolctl import threadpool_info

    threads = {pool["filepath"]: pool["num_threads"] for pool in threadpool_info()}
    frozen = gc.get_freeze_count()
    calibrate(demo_store, "demo", "demo-patch-quality", "careful-sonnet", use_cache=False)
    assert gc.isenabled() and gc.get_freeze_count() <= frozen  # frozen objects may die, none are added
    after = {pool["filepath"]: pool["num_threads"] for pool in threadpool_info()}
    assert {path: after[path] for path in threads} == threads  # (scipy may load a BLAS of its own meanwhile)
