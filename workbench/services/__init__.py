"""Use cases the CLI and the UI both call: importing, labeling, judging, calibrating, gating, exporting."""
