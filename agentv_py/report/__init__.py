"""Results: JSONL writer/reader, summary statistics, terminal rendering."""
