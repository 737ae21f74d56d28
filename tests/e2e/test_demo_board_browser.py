"""The Board page on the demo (issue 33 items 3 and 4) in headless Chromium, as a lead.

The database is seeded as `workbench demo` seeds it, boards included (the Python grader judged on the golden set
demo-board, exported, grading the two packaged weeks of runs). The page must open on the plain sentence the board's statistics give, then a heat map that
names each model, with each cell's colour following its value (the share of runs that pass, counted here from the
run file with the grader itself) and a legend; and a lead grades new runs from the page, offline, with progress, a
second grading of the same runs sending nothing. Screenshots are kept in a temporary folder (its path is printed).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import start_ui, stop_ui
from workbench.core.workspace import Workspace
from workbench.features.board import service as board
from workbench.features.board.demo import seed_demo_boards
from workbench.features.board.render import lead_sentence
from workbench.features.demo import graders
from workbench.features.demo.seed import board_run_files, seed_demo
from workbench.store import Store

pytestmark = pytest.mark.browser

WEEK = 49  # the newest board: the page opens on it
RGB = re.compile(r"rgba?\((\d+), (\d+), (\d+)")


def week_runs(week: int) -> str:
    return next(f for f in board_run_files() if f.name == f"week-{week}.jsonl").read_text()


def board_name(week: int) -> str:
    return f"demo-week-{week}"


def expected_shares(text: str, tmp) -> dict[tuple[str, str], float]:
    """Each (task, model) cell's share of runs that pass, by the demo's grader applied to the run file here."""
    path = tmp / "runs.jsonl"
    path.write_text(text)
    passes: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for run in board.read_runs([path]):
        item = run.item
        score, _ = graders.test_results(item, None)  # the grader reads the trajectory only
        passes[(item.cluster, item.producer.model)].append(score >= 0)
    return {k: sum(v) / len(v) for k, v in passes.items()}


@pytest.fixture(scope="module")
def board_server(tmp_path_factory, chromium_path):
    """A database seeded as `workbench demo` seeds it (its boards too), served by `workbench ui`."""
    tmp = tmp_path_factory.mktemp("board-e2e")
    db = tmp / "workbench.db"
    with Store(db) as s:
        summary = seed_demo(s, Workspace(tmp, db), precompute=True, boards=seed_demo_boards)
    assert [(b.name, b.graded) for b in summary.boards] == [(board_name(48), 48), (board_name(49), 48)]
    server = start_ui(db, tmp / "ui.log")
    try:
        yield server, tmp
    finally:
        stop_ui(server.proc)


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("board-screenshots")
    yield folder
    print(f"\nscreenshots of the Board page: {folder}")


def rgb(css: str) -> tuple[int, int, int]:
    m = RGB.match(css)
    assert m, css
    return tuple(int(x) for x in m.groups())


def open_board(page: Page, url: str) -> None:
    page.goto(f"{url}/?rater=lead")
    page.get_by_role("link", name="Board").first.click()
    expect(page.get_by_text("leads on the mechanical tier").first).to_be_visible(timeout=60_000)


def test_the_demo_board_reads_plainly_as_a_coloured_grid_and_grades_from_the_page(board_server, browser, shots,
                                                                                  tmp_path):
    server, _ = board_server
    with Store(server.db) as s:
        leads = board.board_leads(s, board_name(WEEK))
        models = [m.model for m in board.board_report(s, board_name(WEEK)).models]
    assert models == ["model-a", "model-b2", "model-c"]
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        open_board(page, server.url)
        expect(page.get_by_role("combobox", name="Board")).to_have_value(board_name(WEEK))
        # plain words first: the board's own sentence, above the heat map
        [lead] = leads
        sentence = page.get_by_text(lead_sentence(lead), exact=True)
        expect(sentence).to_be_visible()
        heat = page.locator("table.heatmap[data-tier=mechanical]")
        expect(heat).to_be_visible()
        assert sentence.bounding_box()["y"] < heat.bounding_box()["y"]
        expect(page.locator("[data-testid=stException]")).to_have_count(0)

        # the grid names each model; each cell's value is the share the grader gives, its colour follows its value
        assert heat.locator("th.model").all_inner_texts() == models
        cells = heat.locator("td.heat").evaluate_all(
            "tds => tds.map(td => [td.closest('tr').querySelector('td.task').textContent, td.dataset.model, "
            "td.dataset.value, getComputedStyle(td).backgroundColor])")
        want = expected_shares(week_runs(WEEK), tmp_path)
        grid = {(task, model): (float(value), rgb(colour)) for task, model, value, colour in cells
                if task != "all tasks"}
        assert set(grid) == set(want)
        for key, share in want.items():
            assert grid[key][0] == pytest.approx(share, abs=1e-4), key
        by_value = defaultdict(set)
        for value, colour in grid.values():
            by_value[round(value, 4)].add(colour)
        assert len(by_value) >= 3 and all(len(c) == 1 for c in by_value.values()), by_value  # one colour a value
        ordered = [next(iter(by_value[v])) for v in sorted(by_value)]
        assert len(set(ordered)) == len(ordered)  # distinct values, distinct colours
        greenness = [g - r for r, g, _ in ordered]
        assert greenness == sorted(greenness) and greenness[0] < 0 < greenness[-1]  # red for none, green for all
        # the last row: each model over all tasks, the mean of its cells
        totals = {model: float(value) for task, model, value, _ in cells if task == "all tasks"}
        for m in models:
            mine = [v for (t, mm), (v, _) in grid.items() if mm == m]
            assert totals[m] == pytest.approx(sum(mine) / len(mine), abs=1e-4)
        assert lead.leader == max(models, key=lambda m: totals[m])
        # a legend: swatches from red to green, and the words
        legend = page.locator("div.legend[data-tier=mechanical]")
        swatches = legend.locator(".swatch")
        assert swatches.all_inner_texts() == ["0%", "25%", "50%", "75%", "100%"]
        colours = [rgb(c) for c in swatches.evaluate_all("s => s.map(x => getComputedStyle(x).backgroundColor)")]
        assert len(set(colours)) == 5 and colours[0] == next(iter(by_value[0.0]))
        expect(legend).to_contain_text("share of the model's runs of the task that pass")
        # every statistical name in a heading or the sentence carries its explanation
        help_buttons = page.get_by_role("button", name=re.compile("^Help for")).count() \
            + page.locator("[data-testid=stTooltipIcon]").count()
        assert help_buttons >= 5
        page.screenshot(path=str(shots / "board.png"), full_page=True)

        # grading from the page: new repeats of week 49's runs onto a new board, with the bundles of this one
        runs = tmp_path / "more-runs.jsonl"
        rows = [json.loads(line) for line in week_runs(WEEK).splitlines()]
        runs.write_text("".join(json.dumps({**r, "id": r["id"] + "-more", "repeat": r["repeat"] + 2}) + "\n"
                                for r in rows))
        page.get_by_text("Grade runs onto a board").click()
        page.locator("input[type=file]").set_input_files(str(runs))
        expect(page.get_by_text("more-runs.jsonl")).to_be_visible()
        target = page.get_by_role("textbox", name="Board to grade onto")
        target.fill("week-49-more")
        target.press("Enter")
        # the estimate before Start: the Python grader's tier is free, so a click starts it (nothing to confirm)
        expect(page.get_by_text(f"Estimate: {len(rows)} grades, free.")).to_be_visible()
        page.get_by_role("button", name="Start grading").click()
        done = page.get_by_text(re.compile(r"Board week-49-more: \d+ new runs added"))
        expect(done).to_have_text(re.compile(f"{len(rows)} new runs added, {len(rows)} grades recorded"),
                                  timeout=60_000)
        expect(page.get_by_role("progressbar").or_(page.locator("[data-testid=stProgress]")).first).to_be_visible()
        expect(page.get_by_text(f"Grading board week-49-more, mechanical tier: {len(rows)} of {len(rows)} runs")
               ).to_be_visible()
        page.screenshot(path=str(shots / "board-graded.png"), full_page=True)
        with Store(server.db) as s:
            graded = {b.name: b for b in board.list_boards(s)}
        assert graded["week-49-more"].n_items == len(rows) and graded["week-49-more"].n_bundles == 1
        # the same runs again: already graded with this bundle, nothing is sent, as the estimate says
        expect(page.get_by_text("Estimate: 0 grades, free.")).to_be_visible()
        page.get_by_role("button", name="Start grading").click()
        expect(page.get_by_text("Board week-49-more: 0 new runs added, 0 grades recorded")).to_be_visible(
            timeout=60_000)
        expect(page.locator("[data-testid=stException]")).to_have_count(0)
    finally:
        context.close()
