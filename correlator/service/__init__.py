"""The long-running service: ``fabcorr run`` wires inventory, discovery, telemetry, sFlow
and attribution, and serves what it knows as Prometheus metrics and an HTTP JSON API."""
