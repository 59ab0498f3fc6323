"""Figures drawn from the result store (never recomputing results)."""
