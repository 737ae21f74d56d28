"""Deterministic graders for the demo: judges that read a trajectory instead of asking a model.

Used as ``python/workbench.features.demo.graders:test_results`` in the demo rubric, so a
judge can be run end to end with no API key and no network.
"""

from __future__ import annotations

import re

from workbench.core.models import Item, Rubric

TEST_SUMMARY = re.compile(r"\b(\d+) (passed|failed)\b")


def test_results(item: Item, rubric: Rubric) -> tuple[int, str]:
    """Fail when the last test run has failures (or there is none); exceptional when it passes and a test was added."""
    steps = item.trajectory or []
    runs = [s for s in steps if s.get("role") == "tool" and TEST_SUMMARY.search(s.get("content") or "")]
    if not runs:
        return -1, "The trajectory has no test run."
    last = runs[-1]["content"]
    if re.search(r"\b[1-9]\d* failed\b", last):
        return -1, "The last test run has failures."
    added_test = any(call.get("name") == "edit_file"
                     and str((call.get("arguments") or {}).get("path", "")).startswith("tests/")
                     for s in steps for call in s.get("tool_calls") or [])
    if added_test:
        return 1, "The tests pass and the agent added a regression test."
    return 0, "The tests pass."
