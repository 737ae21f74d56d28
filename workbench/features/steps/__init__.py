"""Where did it go wrong: step-level labels and judgments of agent trajectories (the decisive error step and the
agent that took it), the import of Who&When runs, and the measurement of a judge's failure attribution against
people (statistics in ``workbench/stats/steps.py``)."""
