"""A verdict and its checks: the states a gate check can be in, and how each is shown."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

PASSED, FAILED, UNDECIDED, WARNING, NOT_MEASURABLE, NOT_APPLICABLE = (
    "passed", "failed", "undecided", "warning", "not_measurable", "not_applicable")
#: The three states that decide a check; the other statuses are notes that never block.
DECIDING = (PASSED, FAILED, UNDECIDED)
#: How each status is marked in text (CLI, card) and in the UI.
STATUS_MARK = {PASSED: "PASS", FAILED: "FAIL", UNDECIDED: "UNDECIDED", WARNING: "WARN", NOT_MEASURABLE: "WARN",
               NOT_APPLICABLE: " -- "}
STATUS_ICON = {PASSED: "✅", FAILED: "❌", UNDECIDED: "⏳", WARNING: "⚠️", NOT_MEASURABLE: "⚠️", NOT_APPLICABLE: "➖"}
#: The verdict's headline, by its state.
HEADLINE = {PASSED: "CALIBRATED", FAILED: "NOT CALIBRATED", UNDECIDED: "NOT DECIDED YET"}



@dataclass(frozen=True)
class Check:
    """One gate check. ``reason`` is the sentence a lead decides from (the number, its interval and the bound);
    ``message`` adds what to do about it. ``more_items`` (undecided checks): items with a consensus label, of the
    kind the check needs, that would decide it by the interval model of :mod:`workbench.stats.planning`."""

    id: str
    name: str
    status: str
    value: Any
    threshold: Any
    message: str
    reason: str = ""
    more_items: int | None = None

    @property
    def state(self) -> str:
        """``passed``, ``failed`` or ``undecided`` for a check that decides; ``warning`` or ``not_applicable`` for a
        note that never blocks (a check this data cannot measure is a warning, said as such)."""
        if self.status in DECIDING or self.status == NOT_APPLICABLE:
            return self.status
        return WARNING

    @property
    def blocking(self) -> bool:
        """Whether this check keeps the pair from being exported (failed, or not decided yet)."""
        return self.status in (FAILED, UNDECIDED)

    @property
    def passed(self) -> bool:
        return not self.blocking

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "state": self.state, "blocking": self.blocking, "passed": self.passed}


@dataclass(frozen=True)
class Verdict:
    checks: tuple[Check, ...]

    @property
    def state(self) -> str:
        """``failed`` when a check failed, else ``undecided`` when one is not decided yet, else ``passed``."""
        statuses = {c.status for c in self.checks}
        return FAILED if FAILED in statuses else UNDECIDED if UNDECIDED in statuses else PASSED

    @property
    def calibrated(self) -> bool:
        return self.state == PASSED

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == FAILED]

    @property
    def undecided(self) -> list[Check]:
        return [c for c in self.checks if c.status == UNDECIDED]

    @property
    def headline(self) -> str:
        """'CALIBRATED', 'NOT CALIBRATED' or 'NOT DECIDED YET'."""
        return HEADLINE[self.state]

    def explanation(self) -> str:
        """What the headline rests on: the checks that keep the pair from 'calibrated', each with its reason."""
        if self.state == PASSED:
            notes = [c.name for c in self.checks if c.state == WARNING]
            return ("every deciding check passed" +
                    (f" ({len(notes)} warning{'s' * (len(notes) != 1)}, which "
                     f"{'does' if len(notes) == 1 else 'do'} not block: {', '.join(notes)})." if notes else "."))
        blocking = self.failed if self.state == FAILED else self.undecided
        return ("it fails " if self.state == FAILED else "") + "; ".join(
            f"{c.name} ({c.reason.rstrip('.')})" for c in blocking) + "."

    def summary(self) -> str:
        """One sentence: the verdict, and the checks that keep it from 'calibrated' with what they need."""
        return f"{self.headline.capitalize()}: {self.explanation()}"

    def to_dict(self) -> dict[str, Any]:
        return {"calibrated": self.calibrated, "state": self.state, "headline": self.headline,
                "summary": self.summary(), "checks": [c.to_dict() for c in self.checks]}
