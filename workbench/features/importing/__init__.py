"""Items, labels, adjudications and judgments from JSONL files, landed whole or not at all."""
