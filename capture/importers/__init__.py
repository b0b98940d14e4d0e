"""Backfilling history from agent transcripts and git."""
