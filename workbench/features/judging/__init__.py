"""Running judges on a golden set: planned, resumable, within a budget, each judgment paid once."""
