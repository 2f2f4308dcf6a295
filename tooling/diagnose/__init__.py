"""Diagnosis on a live machine: stacks of training ranks (and, later, the diagnostic ladders)."""
