"""Counter telemetry: readings from switches turned into per-second rates."""
