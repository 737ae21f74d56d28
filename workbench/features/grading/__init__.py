"""Grading new items with an approved bundle, with the pass rate corrected for the judge's errors."""
