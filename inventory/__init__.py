"""What exists: facts learned from Kubernetes, switches and hosts, as plain typed records."""
