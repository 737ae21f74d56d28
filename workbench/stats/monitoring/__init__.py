"""Statistics of a judge watched in production: pure functions, no I/O.

- :mod:`.validity`: per-trace agreement with a human label on the weights of the gate's agreement metric, the
  floor the policy's bound puts on it, and an anytime-valid test by betting that the judge stays above it;
- :mod:`.shift`: the category mix (or input length) of a window against the approval golden set, with the
  false-alarm rate spent across windows.
"""

from workbench.stats.monitoring.shift import ShiftTest, category_shift, length_shift, spent_alpha
from workbench.stats.monitoring.validity import (AgreementScale, BettingTest, agreement_scale, betting_test,
                                                 window_agreement)

__all__ = ["AgreementScale", "BettingTest", "ShiftTest", "agreement_scale", "betting_test", "category_shift",
           "length_shift", "spent_alpha", "window_agreement"]
