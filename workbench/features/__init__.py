"""One package per feature, each with its service functions (what the CLI and the UI call), its queries and its
rendering: labeling, judging, importing, grading, export, planning, probes, refine, board, interop, demo."""
