"""Judges in production (issue 31): an approved bundle's verdicts on live traffic, a sampled share labeled by
reviewers, pass rates corrected for the judge's errors, and the alarms that say when the approval no longer holds.

- ``ingest``: traces from jsonl or OTLP JSON (``otel``), idempotent by id, Bernoulli-sampled into the golden set
  named after the stream, unscored ones graded by the bundle's judge;
- ``report``: per day or week, raw and prediction-powered pass rates, agreement, alarms (``alarms``);
- ``promote``: the labeled traces as a new version of a golden set;
- ``production``: what ``workbench check`` asks: is the approval expired, is a validity alarm open.
"""
