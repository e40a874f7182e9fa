"""Benchmarks for fabcorr: run them with ``python -m benchmarks`` (``make bench``)."""
