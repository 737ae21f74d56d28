"""Judge Workbench: decide which LLM judges an eval team may trust."""

__version__ = "0.1.0"
