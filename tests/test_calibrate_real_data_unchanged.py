"""Golden output on real data: every number of `calibrate --json` stays what commit 1a7eec6 printed (issue 28 item 8).

The house is rebuilt (issue 28) without changing behaviour. The references in tests/data/calibrate_real_1a7eec6/ were
written by `python -m tests.real_data_golden_output` run in a clean checkout of commit 1a7eec6, on MT-Bench (120
pairwise items, 2-3 raters, 3-point scale) and SummEval coherence (1,600 summaries, 3 experts, 5-point scale) from
../shared/data: data nobody on this project made. This is an identity check of refactors against that commit, not
an oracle for the statistics (tests/stats/ checks those against published values). A deliberate change of a number
rewrites the references from the commit that makes it, and says so here.
Rewritten so: the proportions' intervals and design effects (exact agreement, TPR, TNR, overall and per category),
the per-category worse-than-the-rest intervals built on them, and the pass/fail check's bounds and label estimates
read from them (issue 51, item 1: a new interval for proportions, and design effects from the posterior over
clusters); every other number, and every verdict and check state, is 1a7eec6's.

Floats must agree to 1e-12 relative (the issue's bound; the same machine type and library builds give the same
sums); integers, flags and nulls exactly, and the verdict's headline and every check's state as text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import real_data_golden_output as real
from tests.conftest import Cli
from tests.test_calibrate_numbers_unchanged import lookup, numbers

REFERENCE = Path(__file__).parent / "data" / "calibrate_real_1a7eec6"
FLOAT_REL = 1e-12

pytestmark = pytest.mark.skipif(not (real.DATA / "alttest").is_dir(), reason="needs ../shared/data/alttest")


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dict]:
    work = tmp_path_factory.mktemp("real")
    cli = Cli(work / "real.db")

    def run(*args):
        result = cli(*args)
        assert result.exit_code == 0, result.output
        return result.output

    return {name: json.loads(run(*args)) for name, args in real.build(run, work)}


def test_every_case_has_a_reference(reports):
    assert sorted(reports) == sorted(p.stem for p in REFERENCE.glob("*.json"))


@pytest.mark.parametrize("case", sorted(p.stem for p in REFERENCE.glob("*.json")))
def test_every_number_is_unchanged(reports, case):
    reference = json.loads((REFERENCE / f"{case}.json").read_text())
    now = reports[case]
    expected = list(numbers(reference))
    assert len(expected) > 150, case  # the whole report: metrics, intervals, ceiling, alt-test, categories
    moved = []
    for path, value in expected:
        got = lookup(now, path)
        same = (got == pytest.approx(value, rel=FLOAT_REL, abs=0.0) if isinstance(value, float) and type(got) is float
                else got == value and type(got) is type(value))
        if not same:
            moved.append(f"{path}: {got!r}, was {value!r}")
    assert not moved, f"{case}: {len(moved)} numbers moved, e.g. " + "; ".join(moved[:5])
    assert now["verdict"]["headline"] == reference["verdict"]["headline"]
    assert ({c["id"]: c["state"] for c in now["verdict"]["checks"]}
            == {c["id"]: c["state"] for c in reference["verdict"]["checks"]})

