"""Hypothesis strategies for users and for jitcep's own tests (patterns, event streams)."""
