"""Store calls of one command: how many times each command looks up the golden set and reads the labels,
adjudications, judgments and the judge's rows, on a fresh copy of the seeded demo (issue 47).

    PYTHONPATH=. python benchmarks/store_calls.py

Prints a Markdown table (docs/architecture.md has it for the code before and after one resolution per command).
The store's methods are wrapped at the class, so every connection a command opens is counted; the commands run
in-process through the Click runner, on SQLite, with 200 resamples.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from workbench.cli import main
from workbench.features.demo.seed import seed_demo
from workbench.store import Store

COUNTED = ("golden_set", "label_scores", "adjudications", "judgment_columns", "judge_row", "runs", "rubric_row")
SELECTIVE = ["--selective", "--target-agreement", "0.85", "--risk", "0.1"]
CASCADE = [*SELECTIVE, "--cascade", "noisy-llama,careful-sonnet"]
COMMANDS = {"export": ["export", "-j", "careful-sonnet"],
            "export --selective": ["export", "-j", "careful-sonnet", *SELECTIVE],
            "export --selective --cascade": ["export", "-j", "noisy-llama", *CASCADE],
            "calibrate --selective": ["calibrate", "-j", "careful-sonnet", *SELECTIVE],
            "calibrate --selective --cascade": ["calibrate", *CASCADE],
            "report --selective": ["report", "-j", "careful-sonnet", "--format", "md", *SELECTIVE]}


def main_() -> None:
    template = Path(tempfile.mkdtemp()) / "demo.db"
    with Store(template) as s:
        seed_demo(s)
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    calls: Counter[str] = Counter()

    def counted(name, method):
        def wrapped(*args, **kwargs):
            calls[name] += 1
            return method(*args, **kwargs)
        return wrapped

    for name in COUNTED:
        setattr(Store, name, counted(name, getattr(Store, name)))
    print("| command | " + " | ".join(f"`{n}`" for n in COUNTED) + " |")
    print("|---|" + "---:|" * len(COUNTED))
    for shown, args in COMMANDS.items():
        folder = Path(tempfile.mkdtemp())
        shutil.copy(template, folder / "workbench.db")
        calls.clear()
        r = CliRunner().invoke(main, ["--db", str(folder / "workbench.db"), "--project", str(folder), args[0],
                                      "-g", "demo", "-r", "demo-patch-quality", *args[1:], "--resamples", "200"])
        assert r.exit_code in (0, 3), r.output  # 3: the gate refused, after the same reads
        print(f"| `{shown}` | " + " | ".join(str(calls[n]) for n in COUNTED) + " |")


if __name__ == "__main__":
    main_()
