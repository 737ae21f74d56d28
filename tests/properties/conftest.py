"""Hypothesis profiles of the property tests: a quick default, and ``WORKBENCH_PROPERTIES=thorough`` for a long run
(the tests marked slow run it too)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("properties", max_examples=60, deadline=None, derandomize=False,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                 HealthCheck.data_too_large])
settings.register_profile("properties-thorough", parent=settings.get_profile("properties"), max_examples=1000)

#: examples per property: the thorough profile when asked for, else the quick one
PROFILE = "properties-thorough" if os.environ.get("WORKBENCH_PROPERTIES") == "thorough" else "properties"
