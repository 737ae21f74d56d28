"""Plain words for leads: the verdict sentence (one per judge, from the gate), the glossary, the coverage-agreement
curve, and which addresses open the home page."""

from __future__ import annotations

import math

import pytest

from workbench.calibration.presentation import unavailable_sentence, use_sentence
from workbench.calibration.verdict import FAILED, NOT_APPLICABLE, PASSED, UNDECIDED, WARNING, Check, Verdict
from workbench.features.lead.curve import coverage_agreement
from workbench.ui import glossary


class _Named:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def report(*checks: Check, metric: str = "krippendorff_alpha_ordinal"):
    """The three attributes use_sentence reads, as the typed report has them."""
    return _Named(judge=_Named(id="j1"), rubric=_Named(name="r1"), policy=_Named(agreement_metric=metric),
                  verdict=Verdict(tuple(checks)))


def check(id_: str, status: str, value=None, threshold=None, reason="the gate's reason.", more=None) -> Check:
    return Check(id_, id_.replace("_", " "), status, value, threshold, reason, reason, more)


def test_the_verdict_sentence_has_the_gates_state_and_its_first_blocking_check():
    ok = check("evidence", PASSED)
    assert use_sentence(report(ok, check("no_drift", NOT_APPLICABLE), check("categories", WARNING))) == \
        "Use j1 to grade r1: yes."
    # failed: the first failed check in the gate's order, with its number, in plain words
    agreement = check("agreement", FAILED, {"value": 0.4608, "ci_low": 0.33, "ci_high": 0.58}, 0.667)
    stable = check("stable", FAILED, 0.7133, 0.1)
    assert use_sentence(report(ok, agreement, stable)) == (
        "Use j1 to grade r1: no — its agreement with the humans (Krippendorff's alpha) is 0.46, below the 0.667 needed.")
    assert use_sentence(report(ok, stable, check("agreement", UNDECIDED, more=40))) == (
        "Use j1 to grade r1: no — its score changes between repeats on 71% of items (at most 10% allowed).")
    tnr = {"tpr": {"value": 0.97, "state": PASSED}, "tnr": {"value": 0.30, "state": FAILED}}
    assert use_sentence(report(check("pass_fail", FAILED, tnr, {"min_tpr_lower": 0.5, "min_tnr_lower": 0.5}))) == \
        "Use j1 to grade r1: no — it fails only 30% of the answers the humans fail (at least 50% needed)."
    assert use_sentence(report(check("as_good_as_human", FAILED, {"judge_human": 0.59, "human_human": 0.8}))) == (
        "Use j1 to grade r1: no — it agrees with the reviewers less than they agree with each other (0.59 against "
        "0.80).")
    family = {"same_family": {"value": 0.59, "state": FAILED}, "same_model": {"value": None}}
    assert use_sentence(report(check("self_preference", FAILED, family, 0.1))) == (
        "Use j1 to grade r1: no — it favours its own model family by 0.59 points against the humans (at most 0.1 "
        "allowed).")
    # a check of a shape this sentence does not know keeps the gate's own reason, with its number
    probe = check("probes", FAILED, None, 0.2, reason="the typo probe moves it by +0.31 [+0.2, +0.4].")
    assert use_sentence(report(probe)) == "Use j1 to grade r1: no — probes: the typo probe moves it by +0.31 [+0.2, +0.4]."
    # not decided: the open check furthest from a decision, with the labels it needs
    assert use_sentence(report(ok, check("agreement", UNDECIDED, more=35), check("as_good_as_human", UNDECIDED,
                                                                                    more=133))) == \
        "Use j1 to grade r1: not decided yet — as good as human needs about 133 more labels."
    assert use_sentence(report(check("evidence", UNDECIDED, more=1))) == \
        "Use j1 to grade r1: not decided yet — evidence needs about 1 more label."
    on_bound = check("agreement", UNDECIDED, reason="alpha 0.67 [0.6, 0.74] sits on its bound.")
    assert use_sentence(report(on_bound)) == \
        "Use j1 to grade r1: not decided yet — agreement: alpha 0.67 [0.6, 0.74] sits on its bound."
    assert unavailable_sentence("j2", "r1", "judge 'j2' has no judgments on golden set 'g'; run it with '...'") == \
        "Use j2 to grade r1: not decided yet — judge 'j2' has no judgments on golden set 'g'."


def test_the_metric_name_follows_the_policy():
    agreement = check("agreement", FAILED, {"value": 0.5}, 0.6)
    assert "(Gwet's AC2) is 0.50" in use_sentence(report(agreement, metric="gwet_ac2_linear"))


def test_every_glossary_entry_says_what_it_measures_in_a_full_sentence():
    keys = [t.key for t in glossary.TERMS]
    assert len(keys) == len(set(keys)) >= 30
    names = [n for t in glossary.TERMS for n in t.names]
    assert len(names) == len(set(names)), "a name belongs to one term"
    for t in glossary.TERMS:
        assert t.meaning[0].isupper() and t.meaning.endswith(".") and len(t.meaning.split()) >= 12, t.key
        assert glossary.help(t.key).startswith(t.meaning) and t.label in glossary.help(t.key)
    for abbreviation in ("BCa", "AC2", "Gwet", "Krippendorff", "kappa", "pass^k", "TPR", "TNR", "Kish", "PPI", "MDE",
                         "ICC", "CI"):
        assert abbreviation in names, abbreviation
    assert glossary.label("tnr") == "fails caught (TNR)"
    with pytest.raises(KeyError):
        glossary.term("no-such-term")


def test_a_metric_needs_its_meaning():
    from workbench.ui.components import metric

    shown = []

    class Container:
        def metric(self, label, value, **kw):
            shown.append((label, value, kw["help"]))

    metric("Fails caught", 0.9, term="tnr", container=Container())
    metric("Items", 3, help="Items with a consensus.", container=Container())
    assert shown[0][2] == glossary.help("tnr") and shown[1][2] == "Items with a consensus."
    with pytest.raises(ValueError, match="needs term= .* or help="):
        metric("Bare", 1, container=Container())


def test_coverage_agreement_curve_by_hand():
    nan = math.nan
    conf = [0.9, 0.9, 0.8, 0.5, nan, 0.2]
    agree = [True, False, True, True, True, False]
    points = coverage_agreement(conf, agree)
    # keep >= 0.9: 2 of 6 items, 1 agrees; >= 0.8: 3, 2 agree; >= 0.5: 4, 3; >= 0.2: 5, 3 (the NaN item never kept)
    assert [(p.threshold, p.n_kept) for p in points] == [(0.9, 2), (0.8, 3), (0.5, 4), (0.2, 5)]
    assert [p.coverage for p in points] == pytest.approx([2 / 6, 3 / 6, 4 / 6, 5 / 6])
    assert [p.agreement for p in points] == pytest.approx([1 / 2, 2 / 3, 3 / 4, 3 / 5])
    assert coverage_agreement([nan, nan], [True, False]) == []
    with pytest.raises(ValueError):
        coverage_agreement([0.5], [True, False])


def test_unknown_addresses_and_the_home_pages_name_go_home_but_another_roles_page_does_not():
    from workbench.ui import app

    lead = [p for p in app.PAGES if "lead" in p.roles]
    reviewer = [p for p in app.PAGES if "reviewer" in p.roles]
    assert app.goes_home("no-such-page", lead) and app.goes_home("/overview/", lead)
    assert app.goes_home("overview", reviewer)  # a reviewer has a home page too
    assert not app.goes_home("", lead) and not app.goes_home("calibration", lead)
    assert not app.goes_home("calibration", reviewer)  # not theirs: sent home with a sentence instead
    assert app.page_of_another_role("/calibration/", reviewer).title == "Calibration"
    assert app.page_of_another_role("calibration", lead) is None and app.page_of_another_role("label", reviewer) is None
    before = app.page_of_another_role("calibration", [app.ACCESS])  # before signing in: the sign-in page, told why
    assert app.sent_away_sentence(before, None).startswith("The Calibration page is for leads and admins: sign in")
    label = app.page_of_another_role("label", [app.ACCESS])  # signed in with an email that has no role yet
    assert app.sent_away_sentence(label, None, signed_in=True) == (
        "The Label page is for reviewers, leads and admins, and your email has no role in this workbench yet.")
    sentence = app.sent_away_sentence(app.page_of_another_role("adjudicate", reviewer),
                                      app.auth.User("eli", "reviewer"))
    assert sentence.startswith("The Adjudicate page is for leads and admins, and you are signed in as reviewer 'eli'")
    assert not app.goes_home("overview", [app.ACCESS])  # no home page to land on before signing in
    assert any(p.title == "Glossary" and p.roles == app.auth.LEADS for p in app.PAGES)


def test_every_metric_of_every_page_has_help():
    """Issue 33: every st.metric has a tooltip. Read from the source, so a page no browser test opens is held too:
    a ``.metric(label, value)`` call without ``help=`` (or ``term=``, which ``components.metric`` turns into help)."""
    import ast
    from pathlib import Path

    import workbench.ui

    bare = []
    for path in Path(workbench.ui.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "metric"
                    and len(node.args) >= 2 and not {k.arg for k in node.keywords} & {"help", "term"}):
                bare.append(f"{path.name}:{node.lineno}")
    assert not bare, f"st.metric without help at {bare}"


def test_the_glossary_is_grouped_by_topic_with_every_term_once_and_a_filter():
    grouped = [k for _, keys in glossary.TOPICS for k in keys]
    assert sorted(grouped) == sorted(t.key for t in glossary.TERMS) and len(grouped) == len(set(grouped))
    everything = glossary.matching("")
    assert [topic for topic, _ in everything] == [topic for topic, _ in glossary.TOPICS]
    tpr = glossary.matching("tpr")  # a name, any case: its term, in its topic, and the terms that mention it
    assert ("Agreement with people", glossary.term("tpr")) in [(topic, t) for topic, ts in tpr for t in ts]
    assert all("tpr" in " ".join((t.label, *t.names, t.meaning)).casefold() for _, ts in tpr for t in ts)
    assert glossary.matching("no such word anywhere") == []


def test_the_boards_pass_k_is_the_glossarys():
    from workbench.ui.views import board

    text = " ".join(board.HELP.values())
    meaning = glossary.term("pass_k").meaning
    assert "all k runs of a model on a task pass" in meaning and "all k repeats of a task pass" in text
    assert "results board" in glossary.term("mean_k").meaning
