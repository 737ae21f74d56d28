"""The gate on real data (issue 10 item 5): self-preference in both directions on Play Favorites.

Through ``workbench calibrate`` on the public Play Favorites data (../shared/data): a judge harsh on its own
family fails like one that favours it; one whose interval crosses the threshold is undecided (it keeps the
pair from export, and says how many more labels would decide it); judges whose intervals lie within +/-0.1 pass. Skips where the data is absent.
"""

from __future__ import annotations

import pytest

from validation import validate_shared_data as v

DATA = v.Path(__file__).resolve().parents[2] / "shared" / "data"
EXPECTED = {
    "meta.llama3-1-8b-instruct-v1:0": "failed",                 # harsh on its own family
    "anthropic.claude-3-5-sonnet-20241022-v2:0": "undecided",   # +0.10, interval crossing +0.1
    "gpt-4o": "passed",
    "meta.llama3-1-70b-instruct-v1:0": "passed",
}

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (DATA / "play_favorites").is_dir(), reason="needs ../shared/data/play_favorites")]


def test_self_preference_states_on_play_favorites(tmp_path):
    rows = v.play_favorites(DATA, tmp_path, tmp_path / "pf.db", 2000, judges=list(EXPECTED))
    got = {r["judge"]: r["report"] for r in rows}
    assert {j: v.self_preference_status(rep) for j, rep in got.items()} == EXPECTED
    harsh = got["meta.llama3-1-8b-instruct-v1:0"]["self_preference"]["same_family"]
    assert harsh["ci_high"] < -0.1 and harsh["value"] == pytest.approx(-0.22, abs=0.02)
    check = next(c for c in got["meta.llama3-1-8b-instruct-v1:0"]["verdict"]["checks"] if c["id"] == "self_preference")
    assert "is harsh on its own family (meta)" in check["message"]
    sonnet = got["anthropic.claude-3-5-sonnet-20241022-v2:0"]["self_preference"]["same_family"]
    assert sonnet["ci_low"] < 0.1 < sonnet["ci_high"]
