"""Plain words for every statistical name a lead page shows, and the Glossary page that lists them.

For any page (yours too)::

    from workbench.ui import glossary
    glossary.label("tnr")        # 'fails caught (TNR)': the plain label to show instead of the bare name
    glossary.help("tnr")         # the tooltip: what it measures and when it is good (pass it as help=)
    glossary.term("tnr")         # the Term itself (key, label, names, meaning)
    components.metric("Fails caught", 0.91, term="tnr")  # an st.metric that always has its help

A page that shows a new statistical name adds one :class:`Term` to :data:`TERMS` (its ``names`` are the
spellings a page may show, e.g. "TNR"); the browser test checks that every name it finds on a lead page is here.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class Term:
    key: str
    label: str  # the plain label a page shows, with the statistical name in brackets
    names: tuple[str, ...]  # how pages spell it (abbreviations first); checked case-sensitively on word bounds
    meaning: str  # at least one full sentence: what it measures, and when it is good


TERMS: tuple[Term, ...] = (
    Term("alpha", "agreement beyond chance (Krippendorff's alpha)", ("Krippendorff", "alpha"),
         "How much the judge's scores agree with the humans' beyond what chance alone would give, taking the order of "
         "the scores into account. 1 is perfect agreement and 0 is chance; 0.8 or more is good, and below 0.667 the "
         "judge should not replace reviewers."),
    Term("kappa", "agreement beyond chance (Cohen's kappa)", ("kappa", "Cohen"),
         "Agreement between two raters corrected for chance; the weighted versions give partial credit to scores "
         "that are close. 1 is perfect and 0 is chance; above 0.6 is usually read as substantial."),
    Term("ac2", "agreement beyond chance (Gwet's AC2)", ("AC2", "Gwet"),
         "Gwet's AC2 measures agreement beyond chance like alpha, but stays stable when one score is much more "
         "common than the others (where alpha and kappa can drop for no real reason). 1 is perfect; above 0.8 is good."),
    Term("exact", "exact agreement", ("exact agreement",),
         "The share of items where the judge gives exactly the humans' consensus score. Higher is better, but it "
         "counts chance agreement too, so read it with alpha."),
    Term("spearman", "rank correlation (Spearman)", ("Spearman", "spearman"),
         "Whether the judge ranks items in the same order as the humans, ignoring its exact scores. 1 is the same "
         "order; above 0.7 is good."),
    Term("tpr", "passes caught (TPR)", ("TPR", "tpr"),
         "The true positive rate: of the answers the humans pass, the share the judge passes too. Close to 1 is "
         "good; a low value means the judge fails good work."),
    Term("tnr", "fails caught (TNR)", ("TNR", "tnr"),
         "The true negative rate: of the answers the humans fail, the share the judge fails too. Close to 1 is good; "
         "a low value means the judge lets bad work through."),
    Term("mse", "lean (mean signed error)", ("mean signed error", "mean_signed_error"),
         "The judge's score minus the humans' consensus, averaged over items. Near 0 is good; above 0 the judge is "
         "lenient, below 0 it is harsh."),
    Term("ci", "95% interval (confidence interval)", ("CI", "95%", "confidence interval"),
         "The range the true value lies in with 95% confidence, given the labels so far. Narrow is good: more labels "
         "make it narrower, and a check passes only when the whole interval clears its bound."),
    Term("bootstrap", "resampling interval (bootstrap)", ("bootstrap",),
         "A way to get an interval by recomputing the number on many random resamples of the items. It is good when "
         "there are enough items (dozens or more); with few items its intervals are rough."),
    Term("bca", "corrected resampling interval (BCa)", ("BCa",),
         "The bias-corrected and accelerated bootstrap: a resampling interval that corrects for a skewed or biased "
         "estimate. It is the most accurate of the bootstrap intervals when there are enough items."),
    Term("wilson", "interval for a share (Wilson and Jeffreys)", ("Wilson", "Jeffreys"),
         "The interval used for a share such as TPR or TNR: the smallest one holding both the Wilson score interval "
         "and the Jeffreys interval, so it stays sensible near 0 and 1 and with few items, where a simple "
         "plus-or-minus would not. With a handful of items it is wider than 95% needs, never narrower."),
    Term("p_value", "p-value", ("p-value", "p"),
         "How surprising the data would be if nothing had changed: a small p (below 0.01) means a real change. A "
         "large p does not prove that nothing changed."),
    Term("stuart_maxwell", "change in the score mix (Stuart-Maxwell test)", ("Stuart-Maxwell",),
         "A test of whether the judge's mix of scores changed between two runs on the same items. A p-value of 0.01 "
         "or more is good (no sign of drift)."),
    Term("pass_k", "all k repeats succeed (pass^k)", ("pass^k",),
         "The chance that all k repeats succeed, averaged over items: on the Calibration page, that every one of the "
         "judge's k repeated gradings of an item agrees with the consensus; on a results board, that all k runs of a "
         "model on a task pass. Close to 1 is good: right reliably, not by luck on one try."),
    Term("flip_rate", "score changes between repeats (flip rate)", ("flip rate",),
         "The share of items where the judge gives different scores when asked again the same thing. Low is good; "
         "the gate allows at most 10% by default."),
    Term("kish", "effective number of items (Kish)", ("Kish",),
         "When labels were drawn with unequal chances (the active queue), some items count more; Kish's effective "
         "number says how many equally weighted items the labels are worth. Closer to the real count is better."),
    Term("design_effect", "loss from unequal weights (design effect)", ("design effect",),
         "How much wider intervals are because items carry unequal weights, compared with a simple random sample. "
         "1 is no loss; larger means more labels are needed for the same precision."),
    Term("ppi", "corrected pass rate (PPI)", ("PPI",),
         "Prediction-powered inference combines many judge grades with a few human labels to estimate a pass rate "
         "without the judge's bias. It is good when the labeled items are a random sample of the graded ones."),
    Term("mde", "smallest difference the data can see (MDE)", ("MDE", "noise floor"),
         "The minimum detectable difference: with this many labels, differences smaller than this cannot be told "
         "apart from noise. Smaller is better; more labels lower it."),
    Term("icc", "consistency of scores (ICC)", ("ICC",),
         "The intraclass correlation: how much of the spread in scores comes from real differences between items "
         "rather than from who scored them. Above 0.75 is good."),
    Term("alt_test", "as good as a reviewer (alternative-annotator test)",
         ("alternative-annotator", "Alternative-annotator", "alt-test", "winning rate", "advantage probability"),
         "Tests, for each reviewer, whether the judge agrees with the other reviewers at least as well as that reviewer "
         "does. The winning rate is the share of reviewers it matches; 0.5 or more passes."),
    Term("epsilon", "allowance for the judge (epsilon)", ("epsilon",),
         "How much worse than a reviewer the judge may be and still count as as good, in the alternative-annotator "
         "test. Smaller is stricter: 0.2 for expert raters, 0.1 for crowd workers."),
    Term("by", "correction for many tests (Benjamini-Yekutieli)", ("Benjamini-Yekutieli",),
         "A correction that keeps the share of false discoveries low when many tests are made at once (one per "
         "reviewer). It makes each single test stricter, which is good when there are many."),
    Term("ols", "regression p-value (OLS)", ("OLS",),
         "Ordinary least squares: a straight-line fit used here to check the self-preference effect another way. A "
         "small p means the effect is unlikely to be noise."),
    Term("self_preference", "favouring its own kind (self-preference)",
         ("self-preference", "Self-preference", "same-family", "same_family", "same-model"),
         "How much higher the judge scores answers from its own model or model family than the humans do, compared "
         "with other families. Near 0 is good; the gate allows at most 0.1 either way."),
    Term("consensus", "the humans' agreed score (consensus)", ("consensus",),
         "The score most reviewers gave an item, or the lead's decision where they disagreed. The judge is measured "
         "against it, so more reviewers per item make it more trustworthy."),
    Term("human_ceiling", "how well humans agree (human ceiling)", ("human-human", "judge-human", "pairwise"),
         "How often two reviewers give the same score: the best a judge can be expected to match. A judge close to "
         "it, or above it, is as good as a reviewer."),
    Term("interim", "99.9% interval (interim boundary)", ("99.9%",),
         "A wider interval used to call a failure while labels are still coming in, so that looking after every "
         "batch does not fail a good judge by bad luck. A check fails only when even this interval misses the bound."),
    Term("coverage", "share of items kept (coverage)", ("coverage", "Coverage"),
         "In selective judging, the share of items the judge is confident enough to grade; the rest go to another "
         "judge or to people. Higher is better, as long as the agreement on the kept items meets its target."),
    Term("confidence", "how sure the judge is (confidence)", ("confidence",),
         "A number from 0 to 1 the judge gives with a grade, saying how sure it is. It is useful when grades given "
         "with high confidence agree with the humans more often than those given with low confidence."),
    Term("clopper_pearson", "exact interval for a share (Clopper-Pearson)", ("Clopper-Pearson",),
         "An interval for a share computed exactly from the binomial distribution, never too narrow. It backs the "
         "selective guarantee, which is good when its lower end is at or above the target."),
    Term("risk", "chance the guarantee fails (risk)", ("risk",),
         "In selective judging, the chance that the agreement on kept items is below the target even though the "
         "guarantee was given. Smaller is safer; 0.05 or 0.1 is usual."),
    Term("gate", "the verdict (gate)", ("gate", "calibrated"),
         "The rules a judge must pass before it may grade without people: enough labels, agreement, passes and fails "
         "caught, as good as a reviewer, no self-preference, stable, complete and no drift. A judge is calibrated "
         "when every deciding check passed."),
    # the results board's names (the Board page)
    Term("mean_k", "share of repeats that pass (mean@k)", ("mean@k",),
         "On a results board, the share of a model's k repeated runs of a task that pass, averaged over tasks. "
         "Higher is better; compare it with pass^k to see how steady the model is."),
    Term("rogan_gladen", "pass rate corrected for the judge's errors (Rogan-Gladen)", ("Rogan-Gladen",),
         "The raw pass rate adjusted for the judge's known rates of catching passes and fails (its TPR and TNR from "
         "calibration). It is good when the judge was calibrated on items like the board's."),
    Term("benjamini_hochberg", "adjusted for many comparisons (Benjamini-Hochberg)", ("Benjamini-Hochberg",),
         "A correction of p-values when many cells are tested at once, so that few of the differences called real "
         "are flukes. An adjusted p below 0.05 is a difference worth reading."),
    Term("sign_flip", "paired test over tasks (sign-flip test)", ("sign-flip",),
         "Tests whether one model beats another task by task more than chance would allow, by flipping the sign of "
         "each task's difference at random. A small p (below 0.05) means the lead is real."),
    Term("mover", "interval of a difference of rates (MOVER)", ("MOVER",),
         "The method of variance estimates recovery builds an interval for a difference from the intervals of its "
         "two parts. A difference whose interval excludes zero is real."),
)

#: The Glossary page's sections, each term in one (tests/test_ui_glossary.py checks that every term is in one).
TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Agreement with people", ("alpha", "kappa", "ac2", "exact", "spearman", "tpr", "tnr", "mse", "consensus",
                               "human_ceiling", "alt_test", "epsilon", "icc")),
    ("Intervals and tests", ("ci", "bootstrap", "bca", "wilson", "clopper_pearson", "mover", "p_value",
                             "stuart_maxwell", "sign_flip", "benjamini_hochberg", "by", "ols", "interim")),
    ("Repeats, drift and bias", ("pass_k", "flip_rate", "self_preference")),
    ("Planning labels and weights", ("mde", "kish", "design_effect", "ppi")),
    ("Selective judging", ("coverage", "confidence", "risk")),
    ("The verdict", ("gate",)),
    ("Results boards", ("mean_k", "rogan_gladen")),
)

_BY_KEY = {t.key: t for t in TERMS}


def matching(query: str) -> list[tuple[str, list[Term]]]:
    """The topics and their terms whose label, names or meaning hold ``query`` (any case); every one for ''."""
    q = query.strip().casefold()
    out = []
    for topic, keys in TOPICS:
        terms = [_BY_KEY[k] for k in keys
                 if not q or q in " ".join((_BY_KEY[k].label, *_BY_KEY[k].names, _BY_KEY[k].meaning)).casefold()]
        if terms:
            out.append((topic, terms))
    return out


def term(key: str) -> Term:
    """The glossary entry ``key`` (KeyError names the unknown key: a page's typo fails its first run)."""
    return _BY_KEY[key]


def label(key: str) -> str:
    """The plain label for a page: 'fails caught (TNR)'."""
    return _BY_KEY[key].label


def help(key: str) -> str:  # named after the help= it feeds
    """The tooltip for ``help=``: what the number measures and when it is good, ending with where to read more."""
    return f"{_BY_KEY[key].meaning} (Glossary page: {_BY_KEY[key].label}.)"


def render() -> None:
    """The Glossary page: the terms by topic, each with its plain label first, and a filter box (app.py checks the
    role first: this module imports nothing of the UI, so every page may import it)."""
    st.title("Glossary")
    st.caption("The statistical names the pages show, in plain words: what each measures and when it is good. "
               "Hover over a number's (?) on any page for the same text.")
    query = st.text_input("Filter", key="glossary-filter", placeholder="a word, e.g. interval, fails or TPR")
    found = matching(query)
    if not found:
        st.info(f"No entry mentions “{query.strip()}”; try a shorter word.")
    for topic, terms in found:
        st.subheader(topic)
        for t in terms:
            st.markdown(f"**{t.label}** — {t.meaning}")


if __name__ == "__main__":
    render()
