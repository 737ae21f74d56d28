"""Refining a rubric: candidate wordings proposed and tested on held-out items, accepted only when they gain."""
