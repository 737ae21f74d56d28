"""End to end in headless Chromium against a running `workbench ui`: two reviewers at once, then a lead."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import E2E_SET, seed, start_ui, stop_ui
from tests.e2e.reviewer import Lead, Reviewer
from workbench.calibration.golden_sets import consensus
from workbench.store import Store

RUBRIC = "demo-patch-quality"
pytestmark = pytest.mark.browser


@pytest.fixture(params=["sqlite", "postgres"])
def review_server(request, demo_db_template, tmp_path):
    """The UI on the demo workspace, in an SQLite file or (copied there) in a database on a real Postgres server."""
    if request.param == "sqlite":
        yield request.getfixturevalue("ui_server")
        return
    from pg import postgres_url

    from workbench.store.transfer import copy_workspace

    ids = seed(tmp_path / "e2e.db", demo_db_template, tmp_path)
    url = postgres_url()
    with Store(tmp_path / "e2e.db") as lite, Store(url) as pg:
        copy_workspace(lite, pg)
    server = start_ui(url, tmp_path / "ui.log")
    try:
        yield server, ids
    finally:
        stop_ui(server.proc)


def test_two_reviewers_label_the_same_items_and_a_lead_adjudicates(review_server, browser):
    server, ids = review_server
    plan = {"dora": {ids[0]: 0, ids[1]: -1, ids[2]: 0}, "eli": {i: 0 for i in ids}}
    why = {-1: "The final test run fails; the agent claims success.", 1: "Adds a regression test and checks callers."}
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(4)]
    try:
        dora = Reviewer(contexts[0].new_page(), server.url).open_and_type_name("dora", E2E_SET)
        eli = Reviewer(contexts[1].new_page(), server.url).open_with_url_name("eli", E2E_SET)
        shown: dict[str, list[str]] = {"dora": [], "eli": []}
        current = {"dora": dora.shown(), "eli": eli.shown()}
        # both at the same time: each round, each reviewer labels what they are shown, by keyboard only
        for _ in ids:
            for name, reviewer in (("dora", dora), ("eli", eli)):
                item = current[name]
                assert item is not None and item not in shown[name], f"{name} was shown {item} twice"
                shown[name].append(item)
                score = plan[name][item]
                current[name] = reviewer.label(score, why.get(score))
        assert current == {"dora": None, "eli": None}
        assert sorted(shown["dora"]) == sorted(shown["eli"]) == sorted(ids)

        dora.change(ids[0], 1, why[1])  # dora changes her mind on one item

        # a third reviewer finds no free slot: overlap 2 is reached on every item
        finn = Reviewer(contexts[2].new_page(), server.url).open_with_url_name("finn", E2E_SET)
        assert finn.shown() is None

        # a reviewer cannot open a lead page by URL: they land on their home page, told why
        eli.page.goto(f"{server.url}/adjudicate?rater=eli&golden_set={E2E_SET}")
        expect(eli.page.get_by_text("The Adjudicate page is for leads and admins")).to_be_visible()
        expect(eli.page.get_by_role("heading", name="Adjudicate")).to_have_count(0)
        expect(eli.page.get_by_text("Page not found")).to_have_count(0)

        # the lead settles the disagreement on ids[1] (dora -1, eli 0)
        Lead(contexts[3].new_page(), server.url).adjudicate(E2E_SET, ids[1], "-1 fail",
                                                            "Step 8 shows the tests were never run.")
    finally:
        for c in contexts:
            c.close()

    with Store(server.db) as s:
        g = s.golden_set(E2E_SET).id
        labels = {(l["item_id"], l["rater"], l["score"]) for l in s.labels(g, RUBRIC)}
        assert labels == {(ids[0], "dora", 1), (ids[1], "dora", -1), (ids[2], "dora", 0),
                          (ids[0], "eli", 0), (ids[1], "eli", 0), (ids[2], "eli", 0)}
        rationale = {(l["item_id"], l["rater"]): l["rationale"] for l in s.labels(g, RUBRIC)}
        assert rationale[(ids[1], "dora")] == why[-1] and rationale[(ids[0], "dora")] == why[1]
        events = sorted((e["item_pk"], e["rater"], e["event"], e["old_score"], e["new_score"])
                        for e in s.label_events(g))
        pk = s.item_pks(g)
        assert events == sorted([(pk[i], r, "insert", None, plan[r][i]) for r in plan for i in ids]
                                + [(pk[ids[0]], "dora", "update", 0, 1)])
        assert [(a["item_id"], a["score"], a["lead"]) for a in s.adjudications(g, RUBRIC)] == [(ids[1], -1, "lead")]
        c = consensus(s, E2E_SET, RUBRIC)
        assert c.labels == {ids[0]: None, ids[1]: -1, ids[2]: 0}
