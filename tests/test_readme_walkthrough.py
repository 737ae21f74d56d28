"""The README's walkthrough runs verbatim (issue 12, item 5), so the README cannot drift from the product again.

Every command of the fenced shell blocks of "From the demo to an approved
bundle and a graded file" runs in bash, in an empty workspace, with the
installed `workbench` on PATH. A command must exit 0 unless its comment says
`exit N`. The files the README says each command writes must be where it says.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SECTION = "From the demo to an approved bundle and a graded file"


def section(markdown: str, title: str) -> str:
    start = markdown.index(f"## {title}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start:end if end != -1 else None]


def shell_commands(text: str) -> list[str]:
    """The commands of the ```bash / ```sh / ```shell blocks, with backslash continuations joined."""
    commands: list[str] = []
    for block in re.findall(r"^```(?:bash|sh|shell)\n(.*?)^```", text, flags=re.S | re.M):
        pending = ""
        for line in block.splitlines():
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            command = (pending + line).strip()
            pending = ""
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def expected_exit(command: str) -> int:
    comment = command.partition(" #")[2]
    match = re.search(r"\bexit (\d+)", comment)
    return int(match.group(1)) if match else 0


def test_the_walkthrough_is_found():
    commands = shell_commands(section((ROOT / "README.md").read_text(encoding="utf-8"), SECTION))
    assert commands[0].startswith("workbench demo --no-ui") and commands[-1].startswith("workbench grade")
    assert [expected_exit(c) for c in commands].count(3) == 1  # the refused export


@pytest.mark.slow
def test_the_readme_walkthrough_runs_verbatim(tmp_path):
    commands = shell_commands(section((ROOT / "README.md").read_text(encoding="utf-8"), SECTION))
    workspace = tmp_path / "my-evals"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])  # the installed workbench
    outputs = {}
    for command in commands:
        proc = subprocess.run(["bash", "-c", command], cwd=workspace, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == expected_exit(command), (
            f"README command exited {proc.returncode}, expected {expected_exit(command)}:\n{command}\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        assert "Traceback" not in proc.stderr and "unexpected" not in proc.stderr, proc.stderr
        outputs[command.split(" #")[0].strip()] = proc.stdout

    # where the README says every output lands, and each command says so too
    card = "reports/calibration-demo-patch-quality-v1-gpt4o-self.html"
    bundle = "rubrics/approved/demo-patch-quality@v1--careful-sonnet.yaml"
    graded = "reports/new_items.graded.jsonl"
    for path in ("workbench.db", "golden_sets/demo/items.jsonl", "rubrics/demo-patch-quality.yaml", card, bundle,
                 graded):
        assert (workspace / path).is_file(), path
    printed = "\n".join(outputs.values())
    assert f"Wrote {card}" in printed and f"Exported {bundle}" in printed and f"Per-item results: {graded}" in printed

    # what the prose under the block claims about compare
    compare = next(out for cmd, out in outputs.items() if cmd.startswith("workbench compare"))
    rows = {line.split()[0]: line for line in compare.splitlines()[1:6]}
    assert set(rows) == {"careful-sonnet", "lenient-mini", "gpt4o-self", "noisy-llama", "test-results"}
    assert rows["careful-sonnet"].endswith("  calibrated") and rows["test-results"].endswith("  calibrated")
    assert "agreement" in rows["lenient-mini"] and "self-preference" in rows["gpt4o-self"]
    assert "stable" in rows["noisy-llama"] and "no drift" in rows["noisy-llama"]
    assert "40 of 40 items" in next(out for cmd, out in outputs.items() if cmd.startswith("workbench grade"))
