"""Benchmarks (`make bench`): each module compares against a baseline in the same run and prints ratios."""
