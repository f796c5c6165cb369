"""Benchmarks for tapegrad."""
