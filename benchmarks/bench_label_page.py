"""Label page speed: server time to render a 500-step trajectory, and key press to next item in Chromium.

1. Server: the Label page (app shell included) run through Streamlit's AppTest
   on an item of 500 steps (assistant messages, tool calls with arguments, tool
   results with code, some long enough to fold); median of several runs, with
   the viewer's 50 steps per page as shipped and with all 500 steps at once.
2. Browser: a running `workbench ui` and headless Debian Chromium; a reviewer
   presses the key of a score and we time, inside the page, from the key press
   to the next item's id on screen, and to the page settling (no element of the
   previous run left); median and worst of several presses, for the demo
   trajectories (10-14 steps) and for 500-step ones. Skipped with a note when
   chromium is not installed.

Usage: python benchmarks/bench_label_page.py [--rows-only]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUBRIC = ROOT / "rubrics" / "demo-patch-quality.yaml"
DEMO_ITEMS = ROOT / "golden_sets" / "demo" / "items.jsonl"
TARGET_RENDER_MS, TARGET_KEY_MS = 300, 1000


def long_item(item_id: str, n_steps: int = 500) -> dict:
    """An agent trajectory of n_steps: reads, edits with multi-line arguments, test runs, long tool output."""
    code = "\n".join(f"    value_{i} = compute_{i}(items, limit={i})" for i in range(45))  # folds (> 30 lines)
    steps: list[dict] = [{"role": "system", "content": "You are a coding agent. Run the tests before you finish."},
                         {"role": "user", "content": f"Fix the failing test in src/app.py ({item_id})."}]
    k = 0
    while len(steps) < n_steps:
        k += 1
        if k % 3 == 0:
            steps += [{"role": "assistant", "content": f"Reading `src/mod_{k}.py`.",
                       "tool_calls": [{"name": "read_file", "arguments": {"path": f"src/mod_{k}.py"}}]},
                      {"role": "tool", "name": "read_file",
                       "content": f"def handler_{k}(items):\n" + (code if k % 9 == 0 else "    return items\n")}]
        elif k % 3 == 1:
            steps += [{"role": "assistant", "content": "Editing the handler; costs stay under $5.",
                       "tool_calls": [{"name": "edit_file", "arguments": {
                           "path": f"src/mod_{k}.py", "old": "    return items",
                           "new": "    if not items:\n        return []\n    return items"}}]},
                      {"role": "tool", "name": "edit_file", "content": f"Edited src/mod_{k}.py (+2 lines)."}]
        else:
            steps += [{"role": "assistant", "content": "Running the tests.",
                       "tool_calls": [{"name": "bash", "arguments": {"cmd": "pytest -q"}}]},
                      {"role": "tool", "name": "bash", "content": "." * 60 + f"\n{60 + k} passed in 0.{k % 10}s"}]
    return {"id": item_id, "input": f"Fix the failing test in src/app.py ({item_id}).", "output": "Fixed; tests pass.",
            "trajectory": steps[:n_steps], "producer": {"model": "bench-model", "family": "openai"}}


def make_db(folder: Path, *, n_long: int, n_demo: int) -> Path:
    from workbench.features.importing import service as importing
    from workbench.calibration.rubric_versions import add_rubric
    from workbench.store import Store

    db = folder / "bench.db"
    (folder / "long.jsonl").write_text("".join(json.dumps(long_item(f"long-{k}")) + "\n" for k in range(n_long)))
    with DEMO_ITEMS.open() as fh:
        (folder / "demo.jsonl").write_text("".join(line for _, line in zip(range(n_demo), fh)))
    with Store(db) as s:
        add_rubric(s, RUBRIC)
        importing.import_items(s, folder / "long.jsonl", "bench-long")
        importing.import_items(s, folder / "demo.jsonl", "bench-demo")
    return db


# -- 1. server render ------------------------------------------------------------

def server_render_ms(folder: Path, *, per_page: int | None = None, runs: int = 9) -> float:
    """Median ms of a Label page run on the 500-step item; per_page overrides the viewer's steps per page."""
    from streamlit.testing.v1 import AppTest

    from workbench.ui.views.parts import trajectory

    folder.mkdir()
    os.environ["WORKBENCH_DB"] = str(make_db(folder, n_long=1, n_demo=1))
    default = trajectory.STEPS_PER_PAGE
    trajectory.STEPS_PER_PAGE = per_page or default
    try:
        at = AppTest.from_file(str(ROOT / "workbench" / "ui" / "app.py"), default_timeout=60)
        at.query_params.update({"rater": "bench", "golden_set": "bench-long"})
        at.run()
        at.switch_page("views/label.py").run()
        last = min(trajectory.STEPS_PER_PAGE, 500)
        assert not at.exception and [m for m in at.markdown if m.value.startswith(f"**{last}** ")], \
            "the 500-step item did not render"
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            at.run()
            times.append((time.perf_counter() - t) * 1000)
    finally:
        trajectory.STEPS_PER_PAGE = default
    return statistics.median(times)


# -- 2. browser: key press to next item ----------------------------------------------

# Started in the page just before the key press; polls (rather than observing every mutation, which would
# itself load a page of hundreds of elements) until the next item's id is on screen, then until the run is over.
WATCH = """(old) => { window.__benchDone = new Promise((resolve, reject) => {
  const t0 = performance.now();
  let shownAt = null;
  const line = () => [...document.querySelectorAll('[data-testid=stMarkdownContainer] p')]
      .map(p => p.innerText).find(t => /^Item \\S+$/.test(t));
  const timer = setInterval(() => {
    const now = line();
    if (shownAt === null && now && now !== old) shownAt = performance.now();
    if (shownAt !== null && document.querySelectorAll('[data-stale="true"]').length === 0) {
      clearInterval(timer);
      resolve({shown: shownAt - t0, done: performance.now() - t0});
    }
  }, 10);
  setTimeout(() => reject(new Error('no next item within 30 s')), 30000);
}); }"""


def browser_key_to_next(folder: Path, chromium: str) -> dict[str, tuple[float, float, float]]:
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM_ARGS, start_ui, stop_ui
    from tests.e2e.reviewer import Reviewer

    (folder / "browser").mkdir()
    db = make_db(folder / "browser", n_long=8, n_demo=12)
    server = start_ui(db, folder / "browser" / "ui.log")
    out = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            for golden_set, presses in (("bench-demo", 10), ("bench-long", 6)):
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                r = Reviewer(page, server.url).open_with_url_name("bench", golden_set)
                shown, done = [], []
                for _ in range(presses):
                    old = f"Item {r.shown()}"
                    page.evaluate(WATCH, old)  # starts the clock in the page; then the key is pressed
                    page.keyboard.press("2")
                    result = page.evaluate("window.__benchDone")
                    shown.append(result["shown"])
                    done.append(result["done"])
                    r.wait_ready()
                out[golden_set] = (statistics.median(shown), max(shown), statistics.median(done))
            browser.close()
    finally:
        stop_ui(server.proc)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows-only", action="store_true", help="print only the table rows (for benchmarks/run.py)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        from workbench.ui.views.parts.trajectory import STEPS_PER_PAGE

        paged = server_render_ms(folder / "paged")
        whole = server_render_ms(folder / "whole", per_page=1000)
        rows.append((f"Label page server render, 500-step trajectory, {STEPS_PER_PAGE} steps per page as shipped "
                     "(AppTest run, median of 9)", f"{paged:.0f} ms", f"< {TARGET_RENDER_MS} ms"))
        rows.append(("Label page server render, all 500 steps on one page (AppTest run, median of 9)",
                     f"{whole:.0f} ms", f"< {TARGET_RENDER_MS} ms"))
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium:
            res = browser_key_to_next(folder, chromium)
            for golden_set, what in (("bench-demo", "demo items, 10-14 steps"), ("bench-long", "500-step items")):
                med, worst, done = res[golden_set]
                rows.append((f"Key press to next item shown in Chromium ({what})",
                             f"{med:.0f} ms median, {worst:.0f} ms worst; page settled (run over) {done:.0f} ms median",
                             f"< {TARGET_KEY_MS} ms"))
        else:
            rows.append(("Key press to next item shown in Chromium", "not run: chromium not installed",
                         f"< {TARGET_KEY_MS} ms"))
    if not args.rows_only:
        print("| benchmark | result | target |\n|---|---|---|")
    for r in rows:
        print(f"| {' | '.join(r)} |")


if __name__ == "__main__":
    main()
