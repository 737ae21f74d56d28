"""The rate intervals keep their promise on real pools (issue 51, items 1 and 4): coverage at least 95% within two
standard errors at n >= 100, where the issue found TNR at 87%.

The pools are real items, consensus and task clusters from ../shared/data; the issue's case is planted on them
(2.5% consensus fails, the judge catching 79.4% of them: ``validation.promises.pools.planted``). Two designs: items
drawn at random (as the issue drew them) and whole prompts drawn until n items (golden sets with several items a
task), where the old design effect, read off the cluster bootstrap, covered exact agreement and TPR 0.90-0.92.
The full table (more pools, n = 50, 100 and 200, 500 subsamples a cell) is the validation script's
(``python validation/promises/intervals.py``), in docs/validation.md.
"""

from __future__ import annotations

import pytest

from validation.promises import intervals, pass_rates, pools

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not pools.available(), reason="needs ../shared/data")]

SUBSAMPLES = 300  # two standard errors of a coverage of 0.95: 0.025


@pytest.fixture(scope="module")
def issue_pool():
    return pools.planted(pools.play_favorites("gpt-4o", 1), fail_share=0.025, tnr=0.794, seed=1)


def test_the_issue_pool_is_the_issues(issue_pool):
    rates = issue_pool.rates()
    assert issue_pool.fail_share == pytest.approx(0.025, abs=5e-4)
    assert rates["tnr"] == pytest.approx(0.794, abs=0.002)


@pytest.mark.parametrize("design", ["items", "clusters"])
def test_tnr_tpr_and_agreement_cover_at_100_items(issue_pool, design):
    rows = intervals.measure_pool(issue_pool, size=100, subsamples=SUBSAMPLES, resamples=500, design=design)
    print("\n" + intervals.table(rows))
    by_rate = {r.rate: r for r in rows}
    assert by_rate["tnr"].defined >= 0.8 * SUBSAMPLES  # most subsamples hold a fail (1 - 0.975**100 = 92%)
    for r in rows:
        assert r.holds, r


def test_a_five_point_pool_with_many_fails_covers_at_100_items():
    rows = intervals.measure_pool(pools.summeval("llama-31", 4), size=100, subsamples=SUBSAMPLES, resamples=500)
    print("\n" + intervals.table(rows))
    assert all(r.holds for r in rows), rows


@pytest.mark.parametrize("size", [100, 200])
def test_grades_corrected_pass_rate_covers_the_pools_at_100_and_200_golden_items(size):
    """``grade``'s Rogan-Gladen interval (stats.corrected_pass_rate) holds the pool's human pass rate."""
    rows = [pass_rates.measure_pool(pool, size=size, draws=SUBSAMPLES, resamples=500)
            for pool in pass_rates.default_pools()[:2]]
    print("\n" + pass_rates.table(rows))
    for r in rows:
        assert r.given >= SUBSAMPLES / 2, r  # refusals are the report saying it cannot correct, not most draws
        assert r.holds, r
