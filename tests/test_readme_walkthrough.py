"""The README and the guide run as written (issue 12, item 5; issue 26, item 8; issue 28, item 7), so they cannot
drift from the product again.

The README is a front door; the guide it links to is the documentation site under docs/. Every ```bash, ```sh,
```shell and ```console block of the pages in PAGES (the README's 5-minute tour first, then the walkthrough and the
pages whose examples build on it, in that order) runs as written, page after page and in each page's order, one
bash process per block under `set -e`, all in one empty workspace folder (the tour's first line, `workbench demo
--no-ui`, seeds it), with the installed `workbench` on PATH, no WORKBENCH_* variable and no API key. Processes a
block leaves behind (a server it started in the background) are stopped when it ends. The files the walkthrough says it writes must be
where it says, and what its prose (and the tour's) claims about `compare` must be what `compare` prints. A page
of docs/ that is not in PAGES holds no shell block to run (a new page with one must be added to PAGES on purpose).

One block is not run, and only while it is exactly the README's set-up lines (every line a `pip install ...`):
the README's first, which installs the package and then starts `workbench demo` with its UI, which serves until
stopped, and installs the test extra and runs the whole suite; docs/index.md, the site's home page, repeats it
byte for byte and holds no other shell block. Installing is what tests/test_install.py does (into its own virtual
environment, offline) and .ci/run does before it runs that same suite command; the UI process is
tests/test_ui_process.py's; and running the suite from inside the suite would run this test again. Here the
package is installed already and the tour's first block seeds the folder with `workbench demo --no-ui`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port

README = ROOT / "README.md"
DOCS = ROOT / "docs"
# whose shell blocks run, in this order: the README's tour, the walkthrough, then the pages whose examples use what
# the pages before them wrote (the import needs the demo's files, the refine and probe examples the judges' runs,
# the signed bundle the single-call judge the export page declares, the board the approved grader)
PAGES = ("README.md", "docs/walkthrough.md", "docs/import.md", "docs/judges.md", "docs/refine.md", "docs/probes.md",
         "docs/export.md", "docs/board.md")
SHELL = ("bash", "sh", "shell", "console")
# every other info string a fence of the README may carry: none of them is run by a shell (a new one must be added
# here on purpose, so that a shell block cannot hide under a tag this test does not read)
NOT_SHELL = ("", "text", "yaml", "json", "python")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
TOUR = "A 5-minute tour"  # the README's section
WALKTHROUGH = "From the demo to an approved bundle and a graded file"  # docs/walkthrough.md's title


@dataclass(frozen=True)
class Block:
    page: str  # as in PAGES
    line: int  # of the opening fence, 1-based
    lang: str
    text: str

    def script(self) -> str:
        """What bash runs: the block itself; of a console block, its `$ ` lines (and `> ` continuations)."""
        if self.lang != "console":
            return self.text
        lines = []
        for line in self.text.splitlines():
            if line.startswith("$ "):
                lines.append(line[2:])
            elif line.startswith("> ") and lines:
                lines.append(line[2:])
        return "\n".join(lines) + "\n"

    @property
    def is_setup(self) -> bool:
        lines = [ln for ln in self.text.splitlines() if ln.strip()]
        return bool(lines) and all(ln.startswith("pip install ") for ln in lines)


def fences(markdown: str, page: str = "README.md") -> list[Block]:
    return [Block(page, markdown.count("\n", 0, m.start()) + 1, m.group(1).strip(), m.group(2))
            for m in FENCE.finditer(markdown)]


def read(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def shell_blocks(markdown: str, page: str = "README.md") -> list[Block]:
    """A page's shell blocks to run, in order: all of them but, in the README, the set-up block at its very top."""
    blocks = [b for b in fences(markdown, page) if b.lang in SHELL]
    if page == "README.md" and blocks and blocks[0].line == 1 and blocks[0].is_setup:
        blocks = blocks[1:]
    return blocks


def every_shell_block() -> list[Block]:
    """What the walkthrough runs: the shell blocks of PAGES, page after page."""
    return [b for page in PAGES for b in shell_blocks(read(page), page)]


def section(markdown: str, title: str) -> str:
    """The section under the heading `title` (at any level), up to the next heading of its level or above."""
    m = re.search(rf"^(#+) {re.escape(title)}\n", markdown, re.MULTILINE)
    assert m, f"no section {title!r}"
    level = len(m.group(1))
    end = re.search(rf"^#{{1,{level}}} ", markdown[m.end():], re.MULTILINE)
    return markdown[m.start():m.end() + end.start() if end else None]


def test_every_shell_block_is_found_and_none_hides_under_another_tag():
    pages = ["README.md"] + sorted(str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md"))
    assert set(PAGES) <= set(pages), set(PAGES) - set(pages)
    for page in pages:
        markdown = read(page)
        every = fences(markdown, page)
        assert markdown.count("\n```") + markdown.startswith("```") == 2 * len(every), f"{page}: an odd fence"
        assert {b.lang for b in every} <= set(SHELL) | set(NOT_SHELL), (page, {b.lang for b in every})

    markdown = read("README.md")
    shells = [b for b in fences(markdown) if b.lang in SHELL]
    blocks = shell_blocks(markdown)
    assert len(blocks) == len(shells) - 1 and shells[0].line == 1 and shells[0].is_setup  # only the set-up block
    setup = shells[0].text
    assert len(setup.strip().splitlines()) == 2
    # a page outside PAGES runs nothing: no shell block there but the set-up block repeated byte for byte
    for page in pages:
        if page not in PAGES:
            assert all(b.text == setup for b in fences(read(page), page) if b.lang in SHELL), page

    # the README's tour comes first, then the walkthrough, the block its prose (and the tour's) describes
    assert blocks[0].text in section(markdown, TOUR) and blocks[0].text.startswith("workbench demo --no-ui")
    assert "`compare` shows the five judges side by side" in section(markdown, TOUR)
    walkthrough_page = read("docs/walkthrough.md")
    walkthrough = section(walkthrough_page, WALKTHROUGH)
    first = shell_blocks(walkthrough_page, "docs/walkthrough.md")[0]
    assert first.text in walkthrough and first.text.startswith("workbench demo --no-ui")
    assert "\n```\n\n`compare` shows the five judges side by side" in walkthrough  # the prose right under the block
    every = every_shell_block()
    assert every[len(blocks)] == first and len(every) >= 9
    for page in PAGES[1:]:
        assert shell_blocks(read(page), page), f"{page} is in PAGES but has no shell block"
    for b in every:  # written to run: no placeholder left for the reader to fill in
        assert not re.search(r"\b(ROUND_ID|BOARD_[AB]|RUN_FILES|FILE_OR_URI)\b| -[grj] [GRJ]\b", b.text), b


def run_block(block: Block, cwd: Path, env: dict[str, str], log: Path) -> subprocess.CompletedProcess:
    """One bash under `set -e` for the block, in its own process group; whatever it leaves running is stopped."""
    out, err = log.with_suffix(".out"), log.with_suffix(".err")
    with out.open("w") as o, err.open("w") as e:  # files, not pipes: a server left running cannot hold them open
        proc = subprocess.Popen(["bash", "-c", "set -e\n" + block.script()], cwd=cwd, env=env, stdout=o, stderr=e,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=900)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    return subprocess.CompletedProcess(block.text, code, out.read_text(), err.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_every_shell_block_of_the_readme_runs_as_written(tmp_path, engine):
    """Every documented command, as written; on Postgres too (WORKBENCH_DB names a fresh database on a real
    server), where every command must work the same (issue 30)."""
    blocks = every_shell_block()
    workspace = tmp_path / "my-evals"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WORKBENCH_") and not k.endswith("_API_KEY") and not k.endswith("_BASE_URL")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])  # the installed workbench
    if engine == "postgres":
        from pg import postgres_url

        env["WORKBENCH_DB"] = postgres_url()
    assert blocks[0].text.startswith("workbench demo --no-ui")  # the tour seeds the empty folder itself
    # the docs start their loopback model server on port 8799; the two engines run at once under xdist, so each
    # run serves it on a free port of its own (the only change made to what is written)
    port = str(free_port())
    results = []
    for n, block in enumerate(blocks):
        block = replace(block, text=block.text.replace("8799", port))
        r = run_block(block, workspace, env, tmp_path / f"block-{n}")
        assert r.returncode == 0, (f"{block.page} block at line {block.line} exited {r.returncode}:\n{block.text}\n"
                                   f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        assert "Traceback" not in r.stderr and "unexpected" not in r.stderr, (block.page, block.line,
                                                                              r.stderr[-3000:])
        results.append(r)

    if engine == "postgres":  # it all happened on the server: no SQLite file was made on the side
        import psycopg

        assert not (workspace / "workbench.db").exists()
        with psycopg.connect(env["WORKBENCH_DB"]) as conn:
            assert conn.execute("SELECT count(*) FROM judgments").fetchone()[0] > 1500  # the demo's and the tour's

    # the README's tour: the approved bundle and the graded file it promises, and why gpt4o-self fails
    tour = results[0].stdout
    card = "reports/calibration-demo-patch-quality-v1-gpt4o-self.html"
    bundle = "rubrics/approved/demo-patch-quality@v1--careful-sonnet.yaml"
    graded = "reports/new_items.graded.jsonl"
    assert f"Exported {bundle}" in tour and f"Per-item results: {graded}" in tour and "40 of 40 items" in tour
    assert "The judge scores its own family (openai) 0.59 higher than humans do" in tour

    # the walkthrough: where docs/walkthrough.md says every output lands, and each command says so too
    walkthrough = results[blocks.index(shell_blocks(read("docs/walkthrough.md"), "docs/walkthrough.md")[0])].stdout
    for path in ("workbench.db" if engine == "sqlite" else "golden_sets/demo/golden_set.yaml", "golden_sets/demo/items.jsonl", "rubrics/demo-patch-quality.yaml", card, bundle,
                 graded):
        assert (workspace / path).is_file(), path
    assert f"Wrote {card}" in walkthrough and f"Exported {bundle}" in walkthrough
    assert f"Per-item results: {graded}" in walkthrough and "40 of 40 items" in walkthrough
    # the demo again in the same folder: nothing written, nothing added
    assert "Wrote 0 files: the database and the demo files were there already." in walkthrough
    # the refused export: exit 3, nothing written
    assert "refused: exit 3" in walkthrough
    assert not list((workspace / "rubrics" / "approved").glob("*lenient-mini*"))
    # what the prose under the walkthrough's block (and the tour's) claims about compare
    for printed_by in (walkthrough, tour):
        lines = printed_by.splitlines()
        header = next(i for i, line in enumerate(lines) if line.startswith("judge ") and line.endswith("verdict"))
        rows = {line.split()[0]: line for line in lines[header + 1:header + 6]}
        assert set(rows) == {"careful-sonnet", "lenient-mini", "gpt4o-self", "noisy-llama", "test-results"}
        assert rows["careful-sonnet"].endswith("  calibrated") and rows["test-results"].endswith("  calibrated")
        assert "as good as a human" in rows["lenient-mini"] and "self-preference" in rows["gpt4o-self"]
        assert "stable" in rows["noisy-llama"] and "no drift" in rows["noisy-llama"]

    # the versions of the interop example: v2's refusal of careful-sonnet in one sentence, then careful-single's files
    printed = "\n".join(r.stdout + r.stderr for r in results)
    assert "refused: exit 3" in printed.split("careful-single", 1)[1]
    assert ("Not exported: judge 'careful-sonnet' has no judgments of rubric 'demo-patch-quality' v2 on golden set "
            "'demo' (it has judgments of v1)") in printed
    for path in ("rubrics/approved/demo-patch-quality@v2--careful-single.yaml", "evals/"
                 "demo-patch-quality@v2--careful-single.promptfoo.yaml", "week-49.html",
                 "rubrics/approved/demo-patch-quality@v1--test-results.yaml"):
        assert (workspace / path).exists(), path
