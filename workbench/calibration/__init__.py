"""The calibration core: a judge's measurements against the humans (the report), the gate that turns them into a
verdict, and what they are computed on (golden sets, rubric versions, frozen snapshots).

Below the features and above store, judges, core and stats: every feature reads a judge's standing from here."""
