"""Issue 27 item 6: `board show --format md` escapes what the run files brought (category, task and model names).

Rendered as CommonMark (markdown-it-py, the parser GitHub's and MkDocs' renderers follow), the board holds no
element a name smuggled in, while each name's text is still there to read.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from tests.board.conftest import run_item, write_runs
from tests.conftest import Cli
from workbench.features.board import service as svc
from workbench.store import Store

markdown_it = pytest.importorskip("markdown_it")

CATEGORY = "<img src=x onerror=alert(1)>"
TASK = "<script>alert('task')</script>"
MODEL = "<b>bold</b>-model|pipe*star*"
FAMILY = "openai"


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_board_markdown_escapes_html_in_names(workspace, tmp_path):
    rows = []
    for t in range(4):
        for model, family in ((MODEL, FAMILY), ("plain-model", "google")):
            for r in range(2):
                rows.append(run_item(f"{'m1' if model == MODEL else 'm2'}-t{t}-r{r}", TASK if t == 0 else f"t{t}",
                                     CATEGORY if t % 2 == 0 else "web", model, family, r, passes=(t + r) % 2 == 0,
                                     judged=0))
    files = write_runs(tmp_path / "runs", rows)
    with Store(workspace["db"]) as s:
        svc.grade_board(s, "wk", files, [workspace["mech"]])
    r = Cli(workspace["db"])("board", "show", "wk", "--format", "md", "--resamples", "100")
    assert r.exit_code == 0, r.output
    page = markdown_it.MarkdownIt("commonmark").enable("table").render(r.stdout)
    found = Elements()
    found.feed(page)
    assert not {"img", "script", "b"} & set(found.tags), sorted(set(found.tags))
    text = "".join(found.text)
    for name in (CATEGORY, TASK, MODEL):
        assert name in text  # the name is shown as text, not dropped
    assert "table" in found.tags  # the pipe in the model's name did not break the grid
