"""The same properties over a thousand examples each (``-m slow``, or ``WORKBENCH_PROPERTIES=thorough`` on any run
of tests/properties): about a minute and a half on 2 cores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.slow
def test_the_properties_hold_over_a_thousand_examples_each():
    # a child run: its own Hypothesis profile, and the default marker filter keeps this test out of it
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", str(HERE)],
                       env={**os.environ, "WORKBENCH_PROPERTIES": "thorough"}, capture_output=True, text=True,
                       timeout=1200, cwd=HERE.parents[1], check=False)  # its output is shown below
    assert r.returncode == 0, r.stdout[-4000:]
