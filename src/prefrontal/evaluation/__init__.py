"""Evaluations of the assembled context (LoCoMo evidence recall within a token budget)."""
