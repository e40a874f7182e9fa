"""Kubernetes as a source of facts: pods, fixed IPs, VFs, AI jobs and tenants."""
