"""End-to-end time of the command line, from process start to exit (issue 13's targets).

`workbench --help`, and `workbench calibrate --json` on 10,000 items x 3 raters x 2,000 resamples, first
computed and then read back from the report cache. Each is the median of several runs of a fresh process.

The command runs as the console script pip installed next to this interpreter. A version manager's shim in front
of it (pyenv's ``~/.pyenv/shims/workbench``, a bash script) adds about 0.1 s here before Python starts; that is
the shell's, not the command's, so it is not counted.

``--baseline DIR`` times another checkout too (``git worktree add DIR <commit>``), run by the same interpreter,
alternating run by run with this one so that both see the same load (the machine is shared); its rows are
printed beside this checkout's. CPU time (user + system) is printed as well: it moves less with the load.

For scale, the naive way to get the same intervals: one library call per bootstrap resample (krippendorff.alpha
and cohen_kappa_score, two of the ten metrics, on a 10,000-item set: ``bench_stats.library_loop``), timed on
``--loop-resamples`` resamples after each computed run of this checkout (so under the same load) and extrapolated
to 2,000; the ratio is that loop's median time over the whole command's, in wall and in CPU time. It moves with
the load: a busy machine slows the command's start (imports) more than the loop's arithmetic.

Usage: python benchmarks/bench_cli.py [--runs 5] [--loop-resamples 20] [--baseline DIR]
"""

from __future__ import annotations

import compileall
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_lead_pages import N_ITEMS, build  # noqa: E402  (the same 10,000-item database)
from benchmarks.bench_stats import library_loop, synthetic_golden_set  # noqa: E402

RESAMPLES = 2000
# The console script's body, for a checkout given by PYTHONPATH (the installed script imports this checkout).
LAUNCH = "import sys; from workbench.cli import main; sys.exit(main())"


def command(tree: Path | None) -> tuple[list[str], dict[str, str]]:
    """The `workbench` command of this checkout (its console script), or of another checkout ``tree``."""
    if tree is None:
        script = Path(sys.executable).with_name("workbench")
        exe = str(script) if script.exists() else shutil.which("workbench")
        if exe is None:
            sys.exit("workbench is not on PATH: pip install -e .")
        return [exe], dict(os.environ)
    return [sys.executable, "-c", LAUNCH], {**os.environ, "PYTHONPATH": str(tree)}


def timed(variants: dict[str, tuple[list[str], dict[str, str]]], args: list[str], runs: int, cwd: Path,
          before=None, alongside=None) -> dict[str, tuple[float, float]]:
    """{variant: (median wall seconds, median CPU seconds)} of ``runs`` fresh processes, variants alternating.

    ``alongside`` (a function of no arguments) runs in this process after each round and is timed as the
    variant "alongside", so that it sees the load the commands saw.
    """
    wall: dict[str, list[float]] = {v: [] for v in [*variants, *(["alongside"] if alongside else [])]}
    cpu: dict[str, list[float]] = {v: [] for v in wall}
    for _ in range(runs):
        for name, (cmd, env) in variants.items():
            if before:
                before()
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd + args, check=True, capture_output=True, env=env, cwd=cwd)
            wall[name].append(time.perf_counter() - start)
            now = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime)
        if alongside:
            start, start_cpu = time.perf_counter(), time.process_time()
            alongside()
            wall["alongside"].append(time.perf_counter() - start)
            cpu["alongside"].append(time.process_time() - start_cpu)
    return {v: (statistics.median(wall[v]), statistics.median(cpu[v])) for v in wall}


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per computed report (default 5)")
    parser.add_argument("--loop-resamples", type=int, default=20, help="resamples of the naive loop (default 20)")
    parser.add_argument("--baseline", type=Path, help="another checkout to time alternately with this one")
    args = parser.parse_args()
    variants = {"this": command(None)}
    # each checkout's modules compiled once, as an installed package's are (PYTHONDONTWRITEBYTECODE may be set, and
    # an edited module's stale bytecode would be compiled again in every timed process)
    compileall.compile_dir(ROOT / "workbench", quiet=1)
    if args.baseline:
        compileall.compile_dir(args.baseline / "workbench", quiet=1)
        variants["baseline"] = command(args.baseline.resolve())
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as d:
        # the workspace (rubrics/policy.yaml) is the temporary folder, never a source tree, and `python -c` puts
        # the working directory first on sys.path: a checkout there would shadow the one being timed
        cwd = Path(d)
        help_s = timed(variants, ["--help"], 7, cwd)
        db = build(cwd)
        cal = ["--db", str(db), "calibrate", "-g", "g", "-r", "bench", "-j", "j-mid", "--json"]

        def drop_cache() -> None:
            with sqlite3.connect(db) as c:
                c.execute("DELETE FROM reports")

        golden = synthetic_golden_set(N_ITEMS)
        first = timed(variants, cal, args.runs, cwd, before=drop_cache,
                      alongside=lambda: library_loop(golden, args.loop_resamples))
        cached = timed(variants, cal, 5, cwd)
    load = f"load {load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    loop, loop_cpu = (t * RESAMPLES / args.loop_resamples for t in first.pop("alongside"))

    def cell(result: dict[str, tuple[float, float]]) -> str:
        out = f"{result['this'][0]:.2f} s (CPU {result['this'][1]:.2f} s)"
        if "baseline" in result:
            out += f"; baseline {result['baseline'][0]:.2f} s (CPU {result['baseline'][1]:.2f} s)"
        return out

    print(f"| benchmark ({load}) | result | target |\n|---|---|---|")
    print(f"| `workbench --help`, process start to exit (median of 7) | {cell(help_s)} | <= 0.4 s |")
    print(f"| `workbench calibrate --json`, 10,000 items x 3 raters, 2,000 resamples, computed (median of "
          f"{args.runs}) | {cell(first)} | <= 1.2 s |")
    print(f"| the same, read back from the report cache (median of 5) | {cell(cached)} | <= 0.5 s |")
    print(f"| naive loop, one krippendorff.alpha + cohen_kappa_score call per resample, 2,000 resamples "
          f"(extrapolated from {args.loop_resamples}, timed after each computed run) against the whole computed "
          f"command | {loop:.1f} s (CPU {loop_cpu:.1f} s): {loop / first['this'][0]:.1f}x the command's time "
          f"(CPU: {loop_cpu / first['this'][1]:.1f}x) | >= 20x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
