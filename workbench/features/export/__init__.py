"""Approved judges leave the workbench: signed bundles, the CI check, report cards, Every Eval Ever results and
the judge files for other eval tools."""
