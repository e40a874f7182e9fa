"""Telemetry, attribution and every output: CLI, Prometheus metrics, HTTP API."""
