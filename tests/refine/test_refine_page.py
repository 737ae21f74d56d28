"""The Refine page (AppTest): a lead sees the rounds with their diff and both parts' numbers, and accepts one.

The session is made beforehand through the service with the scripted OpenAI endpoints of scripted.py (a judge
whose scores follow the rubric's wording): round 1 fixes the lenient judge, round 2 memorises examples.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scripted import FIX_PHRASE, ScriptedJudge, ScriptedOptimizer, fix_leniency, in_turn, memorise  # noqa: E402

from tests.ui.conftest import demo_db, markdown, open_app  # noqa: E402,F401 (demo_db: a fixture)
from workbench.features.refine import service as svc  # noqa: E402
from workbench.calibration.golden_sets import consensus, load_items  # noqa: E402
from workbench.calibration.rubric_versions import get_rubric  # noqa: E402

GS, RUBRIC, JUDGE = "demo", "demo-patch-quality", "lenient-mini"


def refined(store):
    judge = ScriptedJudge(load_items(store, GS), consensus(store, GS, RUBRIC).resolved)
    optimizer = ScriptedOptimizer(in_turn(fix_leniency, memorise(6)))
    return svc.refine(store, GS, RUBRIC, JUDGE, optimizer="openai/gpt-4o", rounds=2, max_examples=6,
                      resamples=300, provider_options=judge.options(), optimizer_options=optimizer.options())


def refine_page(at):
    at.switch_page("views/refine.py").run(timeout=60)
    [box] = [s for s in at.selectbox if s.label == "Judge"]
    box.set_value(JUDGE).run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_page_lists_rounds_and_a_lead_accepts_the_proposed_one(demo_store, monkeypatch):
    summary = refined(demo_store)
    assert [r.status for r in summary.rounds] == ["proposed", "rejected"]
    monkeypatch.setenv("WORKBENCH_DB", demo_store.path)
    at = refine_page(open_app("lead"))
    labels = [e.label for e in at.expander]
    assert labels == ["Round 1: ✅ proposed for acceptance", "Round 2: ❌ rejected by the held-out check"]
    text = markdown(at)
    assert f"{len(summary.split.items.held_out)} held-out** items, which decide" in text
    assert "**Held-out**" in text and "the held-out part decides" in text
    assert any(FIX_PHRASE in c.value for c in at.code)  # the diff of round 1
    metrics = at.dataframe[0].value
    assert list(metrics.columns) == ["metric", "development parent", "development child", "held-out parent",
                                     "held-out child"]
    alpha = metrics[metrics["metric"] == "Krippendorff's alpha"].iloc[0]
    assert alpha["held-out child"] > alpha["held-out parent"]
    assert any("changed verdict" in m.value for m in at.markdown)

    [accept] = [b for b in at.button if b.label == "Accept as the rubric's next version"]
    accept.click().run(timeout=60)
    assert not at.exception
    assert any("version 2 added" in s.value for s in at.success)
    assert get_rubric(demo_store, RUBRIC).version == 2
    assert "Round 1: 🏁 accepted" in [e.label for e in at.expander]


def test_page_says_how_to_start_when_there_is_no_session(demo_db):
    at = refine_page(open_app("lead"))
    assert any("workbench refine -g demo" in i.value for i in at.info)


def test_only_leads_get_the_page():
    from workbench.ui import auth
    from workbench.ui.app import pages_for
    titles = {role: [p.title for p in pages_for(auth.User("someone", role))] for role in ("reviewer", "lead")}
    assert "Refine" in titles["lead"] and "Refine" not in titles["reviewer"]
